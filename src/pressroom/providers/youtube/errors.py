"""Reading the YouTube Data API's errors (https://developers.google.com/youtube/v3/docs/errors).

Every error answer is Google's JSON error: `{"error": {"code", "message", "errors": [{"domain",
"reason", "message"}], "status"}}`. The `reason` of `errors[]` says what happened; the status
alone does not (quotas and plain refusals are both 403).

Quotas. A Google Cloud project gets a daily quota of units (10,000 by default; `videos.insert`
costs 1,600 of them) that "resets at midnight Pacific Time"
(https://developers.google.com/youtube/v3/getting-started#quota): `quotaExceeded` and
`dailyLimitExceeded` are retried at that instant. `uploadLimitExceeded` is the channel's own cap
on uploads through the API, which YouTube says to "try again in 24 hours" (YouTube API
developer news, 2021): it is retried 24 hours later. `rateLimitExceeded` and
`userRateLimitExceeded` are short-term rates (too many requests in a short time): retried after
the `Retry-After` Google sends, else after a minute.
"""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import time
from datetime import timedelta
from datetime import timezone
from datetime import tzinfo
from zoneinfo import ZoneInfo
from zoneinfo import ZoneInfoNotFoundError

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import response_json
from pressroom.providers.http import retry_after_seconds
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure

PROVIDER = "YouTube"

DAILY_QUOTA_REASONS = frozenset({"quotaExceeded", "dailyLimitExceeded"})
UPLOAD_LIMIT_REASON = "uploadLimitExceeded"
SHORT_RATE_REASONS = frozenset({"rateLimitExceeded", "userRateLimitExceeded"})
UPLOAD_LIMIT_WAIT = timedelta(hours=24)
SHORT_RATE_WAIT = 60.0
# Reasons that refuse the video's title, description or tags (videos.insert errors).
TEXT_REASONS = frozenset({"invalidTitle", "invalidDescription", "invalidTags"})
# Reasons that refuse the uploaded file itself.
MEDIA_REASONS = frozenset({"mediaBodyRequired", "invalidFilename"})
AUTH_REASONS = frozenset({"authError", "invalidCredentials", "expired"})
PERMISSION_REASONS = frozenset(
    {
        "forbidden",
        "insufficientPermissions",
        "forbiddenPrivacySetting",
        "forbiddenLicenseSetting",
        "youtubeSignupRequired",
        "authenticatedUserAccountClosed",
        "authenticatedUserAccountSuspended",
    }
)


def _pacific() -> tzinfo:
    try:
        return ZoneInfo("America/Los_Angeles")
    except ZoneInfoNotFoundError:
        # No time zone database on this host: standard time is the later of the two midnights
        # in UTC, so a retry is at worst an hour late, never early.
        return timezone(timedelta(hours=-8), "PST")


PACIFIC = _pacific()


def next_quota_reset(now: datetime) -> datetime:
    """The next midnight in Pacific Time after `now`, in UTC."""
    local = now.astimezone(PACIFIC)
    midnight = datetime.combine(local.date() + timedelta(days=1), time(0), tzinfo=PACIFIC)
    return midnight.astimezone(UTC)


def iso_z(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def error_reasons(body: dict[str, object]) -> list[str]:
    error = body.get("error")
    details = error.get("errors") if isinstance(error, dict) else None
    if not isinstance(details, list):
        return []
    reasons = [d.get("reason") for d in details if isinstance(d, dict)]
    return [reason for reason in reasons if isinstance(reason, str)]


def error_detail(body: dict[str, object], secrets: tuple[str | None, ...] = ()) -> str:
    """Google's own words: the first reason and the error's message."""
    error = body.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    if not isinstance(message, str):
        # The token endpoint answers {"error": "invalid_grant", "error_description": "..."}.
        message = body.get("error_description")
    reasons = error_reasons(body)
    parts = [f"{reasons[0]}: " if reasons else "", message if isinstance(message, str) else ""]
    return safe_detail("".join(parts).strip(), secrets)


def classify(
    response: httpx.Response, action: str, now: datetime, secrets: tuple[str | None, ...] = ()
) -> ProviderError:
    """The ProviderError of a YouTube Data API error answer."""
    body = response_json(response)
    reasons = set(error_reasons(body))
    detail = error_detail(body, secrets)
    said = f" ({detail})" if detail else ""
    quota = _quota_error(reasons, response, action, now, said)
    if quota is not None:
        return quota
    unauthorized = response.status_code == 401 and "youtubeSignupRequired" not in reasons
    if unauthorized or reasons & AUTH_REASONS:
        return ProviderError(
            "auth_expired",
            f"YouTube rejected the channel's token while {action}{said}. Reconnect the channel.",
        )
    if reasons & TEXT_REASONS:
        return ProviderError("text_rejected", f"YouTube refused the video's text{said}")
    if reasons & MEDIA_REASONS:
        return ProviderError("media_rejected", f"YouTube refused the video file{said}")
    if reasons & PERMISSION_REASONS:
        return ProviderError(
            "permission_denied",
            f"YouTube refused {action} for this channel{said}. Check that the account has a "
            "YouTube channel and granted Pressroom every scope it asked for.",
        )
    return status_failure(response, PROVIDER, action, detail)


def _quota_error(
    reasons: set[str], response: httpx.Response, action: str, now: datetime, said: str
) -> ProviderError | None:
    if reasons & DAILY_QUOTA_REASONS:
        reset = next_quota_reset(now)
        return ProviderError(
            "rate_limited",
            f"The YouTube API quota of this deployment's Google project is spent while {action}"
            f"{said}; retried after {iso_z(reset)} (midnight Pacific Time, when it resets).",
            retry_after=(reset - now).total_seconds(),
        )
    if UPLOAD_LIMIT_REASON in reasons:
        reset = now + UPLOAD_LIMIT_WAIT
        return ProviderError(
            "rate_limited",
            f"The channel reached YouTube's limit of uploads through the API{said}; retried "
            f"after {iso_z(reset)}.",
            retry_after=UPLOAD_LIMIT_WAIT.total_seconds(),
        )
    if reasons & SHORT_RATE_REASONS or response.status_code == 429:
        wait = retry_after_seconds(response.headers) or SHORT_RATE_WAIT
        return ProviderError(
            "rate_limited",
            f"YouTube rate limit reached while {action}{said}; retried after "
            f"{iso_z(now + timedelta(seconds=wait))}.",
            retry_after=wait,
        )
    return None
