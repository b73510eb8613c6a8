"""Pinterest's error answers read as ProviderError.

Errors (https://developers.pinterest.com/docs/api/v5/#tag/Response-codes): the body is
`{"code": <int>, "message": "<text>"}`. 401 (code 2, "Authentication failed") -> `auth_expired`;
403 -> `permission_denied`; 429 (code 29 and kin) -> `rate_limited` at the `X-RateLimit-Reset`
/ `Retry-After` the answer carries; 400 naming the media (an image Pinterest could not fetch or
read) -> `media_rejected`, naming the title, description, alt text or link -> `text_rejected`.
"""

from __future__ import annotations

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import refused_part
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.http import token_rejected

PROVIDER = "Pinterest"
# Pinterest's error code for "Authentication failed" (also sent with other statuses).
AUTH_FAILED = 2
# What a 400 refused, by the words of its message (the media first).
_REFUSED_PARTS = (
    ("media_rejected", "the media", ("media", "image", "video", "url")),
    (
        "text_rejected",
        "the pin's text",
        ("title", "description", "alt_text", "alt text", "link", "note"),
    ),
)


def error_message(response: httpx.Response, secrets: tuple[str | None, ...] = ()) -> str:
    """Pinterest's own words from an error answer, made safe to show."""
    body = response_json(response)
    message = body.get("message")
    return safe_detail(message if isinstance(message, str) else "", secrets)


def classify(
    response: httpx.Response, action: str, secrets: tuple[str | None, ...] = ()
) -> ProviderError:
    """The ProviderError for a Pinterest error answer."""
    detail = error_message(response, secrets)
    status = response.status_code
    code = response_json(response).get("code")
    if status == 429:
        return rate_limited(PROVIDER, action, response.headers, detail)
    if status == 401 or code == AUTH_FAILED:
        return token_rejected(PROVIDER, action, detail, unsaid="authentication failed")
    refused = refused_part(PROVIDER, detail, _REFUSED_PARTS) if status == 400 else None
    return refused or status_failure(response, PROVIDER, action, detail)
