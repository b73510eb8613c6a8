"""TikTok's errors, classified.

Every answer of the v2 API carries `error: {"code", "message", "log_id"}`; `code` is "ok" on
success (https://developers.tiktok.com/doc/tiktok-api-v2-error-handling). The Content Posting API
reference lists the codes of each endpoint (Direct Post, Photo Post, Get Post Status); a post
that failed after its init is reported by the status endpoint as `status: FAILED` with a
`fail_reason` (https://developers.tiktok.com/doc/content-posting-api-reference-get-video-status).
"""

from __future__ import annotations

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure

PROVIDER = "TikTok"
# TikTok's limits are per minute and per access token (6 inits, 20 creator_info, 30 status
# fetches); without a reset header, a minute is the documented window.
RATE_WINDOW_SECONDS = 60.0

_PRIVACY = "options.privacyLevel"
# error.code -> (our code, what to do about it). Codes absent here fall back to the status.
_CODES: dict[str, tuple[str, str]] = {
    "access_token_invalid": ("auth_expired", "Reconnect the channel."),
    "scope_not_authorized": (
        "permission_denied",
        "The account did not grant the video.publish scope; reconnect it and allow posting.",
    ),
    "scope_permission_missed": (
        "permission_denied",
        "The token lacks a scope this call needs; reconnect the channel and allow every scope.",
    ),
    "spam_risk_user_banned_from_posting": (
        "permission_denied",
        "TikTok bars this account from posting; see the account's notices in the TikTok app.",
    ),
    "spam_risk_text": ("text_rejected", "Rewrite the caption."),
    "privacy_level_option_mismatch": (
        "invalid_request",
        f"{_PRIVACY}: choose one of the levels the account's creator info allows.",
    ),
    "unaudited_client_can_only_post_to_private_accounts": (
        "invalid_request",
        f"{_PRIVACY}: this deployment's TikTok app is not audited, so it may post only with "
        "SELF_ONLY (set PRESSROOM_TIKTOK_AUDITED once TikTok has audited the app).",
    ),
    "url_ownership_unverified": (
        "invalid_request",
        "TikTok pulls media only from domains verified in its developer portal: verify the "
        "domain of the deployment's media links, or turn PRESSROOM_TIKTOK_PULL_FROM_URL off.",
    ),
    "invalid_file_upload": ("media_rejected", "Check the file's format, size and duration."),
    "file_format_check_failed": ("media_rejected", "Use an MP4, WebM or MOV file."),
    "duration_check_failed": ("media_rejected", "The video is too short or too long."),
    "frame_rate_check_failed": ("media_rejected", "Use a video of 23 to 60 frames a second."),
    "picture_size_check_failed": ("media_rejected", "Check the picture's dimensions."),
    "video_pull_failed": ("media_rejected", "TikTok could not download the video."),
    "photo_pull_failed": ("media_rejected", "TikTok could not download a photo."),
    "auth_removed": ("auth_expired", "The account removed the app's access; reconnect it."),
    "publish_cancelled": ("invalid_request", "The post was cancelled at TikTok."),
    "internal": ("provider_unavailable", "It will be retried."),
    "internal_error": ("provider_unavailable", "It will be retried."),
}
# Volume limits: the account's daily cap of API posts, its pending uploads, the app's daily cap
# of posting users, and the per-minute request limits.
_RATE_CODES = frozenset(
    {
        "rate_limit_exceeded",
        "spam_risk_too_many_posts",
        "spam_risk_too_many_pending_share",
        "spam_risk",
        "reached_active_user_cap",
    }
)


def tiktok_error(response: httpx.Response) -> tuple[str, str]:
    """The answer's `error.code` and `error.message` ("" when absent)."""
    error = response_json(response).get("error")
    if not isinstance(error, dict):
        return "", ""
    code, message = error.get("code"), error.get("message")
    return (
        code if isinstance(code, str) else "",
        message if isinstance(message, str) else "",
    )


def is_failure(response: httpx.Response) -> bool:
    """Whether an answer failed: an error status, or a 200 whose `error.code` is not "ok"."""
    if not response.is_success:
        return True
    code, _ = tiktok_error(response)
    return code not in ("", "ok")


def classify_code(
    code: str, said: str, action: str, headers: httpx.Headers | None = None
) -> ProviderError | None:
    """The ProviderError of a TikTok error or fail_reason code, None for an unknown one.
    `said` must already be safe."""
    detail = f"{code}: {said}" if said else code
    if code in _RATE_CODES:
        error = rate_limited(PROVIDER, action, headers or httpx.Headers(), detail)
        if error.retry_after is None and code == "rate_limit_exceeded":
            error.retry_after = RATE_WINDOW_SECONDS
        return error
    known = _CODES.get(code)
    if known is None:
        return None
    ours, advice = known
    return ProviderError(ours, f"TikTok refused {action} ({detail}). {advice}")


def classify(
    response: httpx.Response, action: str, secrets: tuple[str | None, ...] = ()
) -> ProviderError:
    """The ProviderError of a failed answer, in TikTok's own words."""
    code, message = tiktok_error(response)
    said = safe_detail(message, secrets)
    known = classify_code(code, said, action, response.headers)
    if known is not None:
        return known
    detail = f"{code}: {said}" if code and said else code or said
    if response.is_success:
        # A 200 carrying an unknown error code: TikTok refused the request itself.
        return ProviderError("invalid_request", f"TikTok refused {action}: {detail}")
    return status_failure(response, PROVIDER, action, detail)
