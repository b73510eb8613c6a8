"""Graph API errors as the Threads API returns them, classified into `ProviderError`.

The token codes and the reading of the usage headers are the Graph API's, shared with the
other Meta networks (`providers/graph.py`); Threads' own codes and wording stay here.

Shape (https://developers.facebook.com/docs/graph-api/guides/error-handling, which the Threads
API follows): `{"error": {"message", "type", "code", "error_subcode", "error_user_title",
"error_user_msg", "is_transient", "fbtrace_id"}}`. Recovery tactics, from that page's tables:

- 102 and 190 (and the session subcodes 458-467 and 492): the token expired, was revoked, the
  person changed their password or removed the app -> `auth_expired` (reconnect).
- 10 and 200-299: a permission not granted or removed; 3: a capability the app lacks; 368:
  blocked for a policy violation -> `permission_denied`.
- 4, 17, 32, 341 and 613: app, user, page or custom rate limits -> `rate_limited`, retryable at
  `Retry-After` or the usage headers' `estimated_time_to_regain_access` (minutes).
- 1 and 2, or `is_transient: true`: a temporary problem -> `provider_unavailable`, retryable.
- 506: a duplicate post -> `duplicate_content`; 100 with subcode 33, and 24 with subcode
  4279009 ("Media Not Found"): the object does not exist (yet) -> `not_found`.
- Anything else that names the text or the media (most often 100, "Invalid parameter") is
  `text_rejected` or `media_rejected`; the rest falls back to the HTTP status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import refused_part
from pressroom.providers.graph import AUTH_CODES
from pressroom.providers.graph import AUTH_SUBCODES
from pressroom.providers.graph import with_usage_retry_after
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import retry_after_seconds
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure

PROVIDER = "Threads"

_PERMISSION_CODES = frozenset({3, 10, 368})
_RATE_CODES = frozenset({4, 17, 32, 341, 613})
_TRANSIENT_CODES = frozenset({1, 2})
_DUPLICATE_CODE = 506
_MISSING_OBJECTS = frozenset({(100, 33), (24, 4279009)})
# What a 400 refused, by the words of its message (they are English; the text first).
_REFUSED_PARTS = (
    ("text_rejected", "the text", ("text", "character", "link", "caption")),
    (
        "media_rejected",
        "the media",
        ("media", "image", "video", "photo", "url", "aspect", "download", "carousel"),
    ),
)
_USAGE_HEADERS = ("x-business-use-case-usage", "x-app-usage")


@dataclass(frozen=True)
class GraphError:
    """The `error` object of a Graph API answer; `detail` is Threads' own words, scrubbed."""

    code: int | None
    subcode: int | None
    detail: str
    transient: bool


def graph_error(response: httpx.Response, secrets: tuple[str | None, ...] = ()) -> GraphError:
    error = response_json(response).get("error")
    body: dict[str, Any] = error if isinstance(error, dict) else {}
    words: list[str] = []
    for key in ("message", "error_user_title", "error_user_msg"):
        value = body.get(key)
        if isinstance(value, str) and value.strip() and value not in words:
            words.append(value)
    code, subcode = body.get("code"), body.get("error_subcode")
    return GraphError(
        code=code if isinstance(code, int) else None,
        subcode=subcode if isinstance(subcode, int) else None,
        detail=safe_detail(" - ".join(words), secrets),
        transient=body.get("is_transient") is True,
    )


def classify(
    response: httpx.Response, action: str, secrets: tuple[str | None, ...] = ()
) -> ProviderError:
    """What a failed Threads API answer means for the caller, in Threads' own words."""
    error = graph_error(response, secrets)
    code, detail = error.code, error.detail
    said = f": {detail}" if detail else ""
    if code in AUTH_CODES or error.subcode in AUTH_SUBCODES:
        return ProviderError(
            "auth_expired",
            f"Threads refused the channel's token while {action}{said}. Reconnect the channel.",
        )
    if code in _PERMISSION_CODES or (code is not None and 200 <= code <= 299):
        return ProviderError(
            "permission_denied",
            f"Threads refused {action} for this account{said}. Reconnect the channel to grant "
            "the permissions Pressroom asks for.",
        )
    if code in _RATE_CODES:
        headers = with_usage_retry_after(response.headers, _USAGE_HEADERS)
        return rate_limited(PROVIDER, action, headers, detail)
    if code in _TRANSIENT_CODES or error.transient or response.status_code >= 500:
        return ProviderError(
            "provider_unavailable",
            f"Threads failed while {action}{said}; it will be retried.",
            retry_after=retry_after_seconds(response.headers),
        )
    if code == _DUPLICATE_CODE:
        return ProviderError("duplicate_content", f"Threads refused a duplicate post{said}")
    if (code, error.subcode) in _MISSING_OBJECTS:
        return ProviderError("not_found", f"Threads found nothing while {action}{said}")
    refused = (
        refused_part(PROVIDER, detail, _REFUSED_PARTS) if response.status_code == 400 else None
    )
    return refused or status_failure(response, PROVIDER, action, detail)
