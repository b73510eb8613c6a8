"""LinkedIn's error answers, classified.

LinkedIn answers an error with `{"status", "code", "serviceErrorCode", "message"}`
(https://learn.microsoft.com/en-us/linkedin/shared/api-guide/concepts/error-handling); a 422 of
the Posts API adds per-field lines to `message`. The classes Pressroom acts on:

- 401 (`EXPIRED_ACCESS_TOKEN`, `REVOKED_ACCESS_TOKEN`, `INVALID_ACCESS_TOKEN`): reconnect.
- 403 (`ACCESS_DENIED`, a missing scope or role on the organization): permission.
- 426 `NONEXISTENT_VERSION` ("Requested version 202401 is not active"): the `LinkedIn-Version`
  this deployment sends is retired (https://learn.microsoft.com/en-us/linkedin/marketing/versioning).
  Nothing but a setting change helps: a permanent error naming `PRESSROOM_LINKEDIN_VERSION`, and
  remembered for the process so that the health check of every channel reports it.
- 429: the member's or the application's daily quota; LinkedIn sends no reset header, and its
  quotas reset at midnight UTC (.../shared/api-guide/concepts/rate-limits).
- 422 "Content is a duplicate of urn:li:share:..." : the same post made again.
"""

from __future__ import annotations

import re
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import duplicate_refused
from pressroom.providers.adapter import refused_part
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.http import token_rejected

PROVIDER = "LinkedIn"
VERSION_SETTING = "PRESSROOM_LINKEDIN_VERSION"
# Versions this process has seen LinkedIn refuse as retired (see module docstring).
RETIRED_VERSIONS: set[str] = set()

_DUPLICATE = re.compile(r"duplicate of (urn:li:(?:share|ugcPost):\d+)", re.IGNORECASE)
# What a 400 or 422 refused, by the words of its message (the media first).
_REFUSED_PARTS = (
    (
        "media_rejected",
        "the media",
        ("image", "video", "media", "document", "multiimage", "upload"),
    ),
    ("text_rejected", "the text", ("commentary", "text", "little")),
)


def error_detail(response: httpx.Response, secrets: tuple[str | None, ...]) -> str:
    """LinkedIn's own words: its code and message."""
    body = response_json(response)
    parts = [str(body[key]) for key in ("code", "message") if isinstance(body.get(key), str)]
    return safe_detail(": ".join(parts), secrets)


def duplicate_of(response: httpx.Response) -> str | None:
    """The URN of the post an identical one duplicates, from a 422 duplicate answer."""
    if response.status_code != 422:
        return None
    match = _DUPLICATE.search(str(response_json(response).get("message", "")))
    return match.group(1) if match else None


def retired_version_error(version: str, detail: str) -> ProviderError:
    return ProviderError(
        "invalid_request",
        f"LinkedIn no longer serves API version {version} ({detail or 'NONEXISTENT_VERSION'}). "
        f"Set {VERSION_SETTING} to a current LinkedIn-Version (YYYYMM, listed at "
        "https://learn.microsoft.com/en-us/linkedin/marketing/versioning) and restart.",
    )


def seconds_to_utc_midnight(now: datetime) -> float:
    midnight = (now + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight - now).total_seconds()


def classify(
    response: httpx.Response,
    action: str,
    *,
    version: str,
    secrets: tuple[str | None, ...] = (),
    now: datetime | None = None,
) -> ProviderError:
    """The ProviderError for one of LinkedIn's error answers."""
    detail = error_detail(response, secrets)
    status = response.status_code
    code = str(response_json(response).get("code", ""))
    if status == 426 or code == "NONEXISTENT_VERSION":
        RETIRED_VERSIONS.add(version)
        return retired_version_error(version, detail)
    if status == 429:
        headers = response.headers
        if "retry-after" not in headers:
            moment = now or datetime.now(UTC)
            headers = httpx.Headers({"retry-after": str(int(seconds_to_utc_midnight(moment)))})
        return rate_limited(
            PROVIDER, f"{action} (daily quota, reset at midnight UTC)", headers, detail
        )
    if status == 401:
        return token_rejected(PROVIDER, action, detail)
    if status == 422 and "duplicate" in detail.lower():
        return duplicate_refused(PROVIDER, detail, "one already published")
    refused = refused_part(PROVIDER, detail, _REFUSED_PARTS) if status in (400, 422) else None
    return refused or status_failure(response, PROVIDER, action, detail)
