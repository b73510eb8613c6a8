"""Instagram's Graph errors as `ProviderError`s.

What every Graph network shares (the token codes, reading the usage headers, reading a code)
comes from `providers/graph.py`; what is Instagram's own (the content-publishing subcodes, the
legacy api.instagram.com shape, its wording) stays here. Nothing here knows about containers
or tokens, only about the error bodies Meta sends.

Shapes (Graph API, Handling Errors, and Instagram Platform, Error Codes,
https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes):
`{"error": {"message", "type", "code", "error_subcode", "is_transient", "error_user_title",
"error_user_msg", "fbtrace_id"}}`. api.instagram.com's token endpoint still answers in the older
shape `{"error_type", "code", "error_message"}`.

Classification, first match wins:
- code 190 or 102 (and the session subcodes 458-467, 492): the token is expired or revoked ->
  `auth_expired`;
- code 9 / subcode 2207042, the content-publishing limit -> `rate_limited` until the 24-hour
  window has moved on;
- codes 4, 17, 32, 613, 80002 (app, user, page, custom and Instagram business-use-case rate
  limits) -> `rate_limited` at `Retry-After` or the usage headers' `estimated_time_to_regain_access`
  (minutes); subcode 2207051 under code 4 is not a rate limit but a spam restriction;
- code 10 or 200-299 (permissions), 368 (blocked for a policy), subcodes 2207050 (account
  inactive, checkpointed or restricted) and 2207051 -> `permission_denied`;
- `is_transient`, codes 1, 2 and -1/-2, and the subcodes Meta says to "try again" on -> retryable
  `provider_unavailable`;
- a caption error -> `text_rejected`; any other content-publishing subcode (2207xxx) ->
  `media_rejected`; code 100 subcode 33 (no such object) -> `not_found`;
- anything else: the HTTP status's reading (`status_failure`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.graph import AUTH_CODES
from pressroom.providers.graph import AUTH_SUBCODES
from pressroom.providers.graph import graph_int
from pressroom.providers.graph import with_usage_retry_after
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import retry_after_seconds
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure

PROVIDER = "Instagram"
DAY = 24 * 3600.0

# Instagram's usage header (the app- and Page-level ones are Facebook's).
_USAGE_HEADERS = ("x-business-use-case-usage",)
_RATE_CODES = frozenset({4, 17, 32, 613, 80002})
_PUBLISHING_LIMIT = 2207042
_SPAM = 2207051
_ACCOUNT_RESTRICTED = 2207050
_SERVER_CODES = frozenset({-2, -1, 1, 2})
# "Try again" / "generate a new container and try again": a retry builds new containers anyway.
TRANSIENT_SUBCODES = frozenset({2207001, 2207003, 2207008, 2207020, 2207032, 2207053})
_SUBCODE = re.compile(r"\b(22070\d\d)\b")


@dataclass(frozen=True)
class GraphError:
    code: int | None
    subcode: int | None
    message: str
    transient: bool


def graph_error(response: httpx.Response) -> GraphError:
    """The error a Graph (or api.instagram.com) response carries; empty when it carries none."""
    body = response_json(response)
    error = body.get("error")
    if isinstance(error, dict):
        said = [error.get("error_user_msg"), error.get("message")]
        return GraphError(
            code=graph_int(error.get("code")),
            subcode=graph_int(error.get("error_subcode")),
            message=_join(said),
            transient=error.get("is_transient") is True,
        )
    legacy = body.get("error_message") or body.get("error_description")
    return GraphError(
        code=graph_int(body.get("code")) if legacy else None,
        subcode=None,
        message=_join([legacy]),
        transient=False,
    )


def classify(
    response: httpx.Response, action: str, secrets: Iterable[str | None] = ()
) -> ProviderError:
    """What went wrong, with Instagram's own words (scrubbed of `secrets`)."""
    error = graph_error(response)
    detail = safe_detail(_described(error), secrets)
    code, subcode = error.code, error.subcode
    said = f": {detail}" if detail else ""
    if code in AUTH_CODES or subcode in AUTH_SUBCODES:
        return ProviderError(
            "auth_expired",
            f"Instagram refused the channel's token while {action}{said}. Reconnect the channel.",
        )
    if subcode == _PUBLISHING_LIMIT:
        return publishing_limit_reached(action, DAY, detail)
    if code in _RATE_CODES and subcode != _SPAM:
        headers = with_usage_retry_after(response.headers, _USAGE_HEADERS)
        return rate_limited(PROVIDER, action, headers, detail)
    if code == 10 or (code is not None and 200 <= code <= 299) or code == 368:
        return _permission_denied(action, said)
    if subcode in (_SPAM, _ACCOUNT_RESTRICTED):
        return _permission_denied(action, said)
    if error.transient or code in _SERVER_CODES or subcode in TRANSIENT_SUBCODES:
        return ProviderError(
            "provider_unavailable",
            f"Instagram failed while {action}{said}; it will be retried.",
            retry_after=retry_after_seconds(response.headers),
        )
    rejected = content_rejection(subcode, detail)
    if rejected is not None:
        return rejected
    if code == 100 and subcode == 33:
        return ProviderError("not_found", f"Instagram found nothing while {action}{said}")
    return status_failure(response, PROVIDER, action, detail)


def content_rejection(subcode: int | None, detail: str) -> ProviderError | None:
    """A caption or media refusal (permanent), from a subcode or a container's status."""
    if "caption" in detail.lower():
        return ProviderError("text_rejected", f"Instagram refused the caption: {detail}")
    if subcode is not None and 2207000 <= subcode <= 2207999:
        return ProviderError("media_rejected", f"Instagram refused the media: {detail}")
    return None


def status_subcode(status: str) -> int | None:
    """The error subcode a container's `status` names when its status_code is ERROR."""
    found = _SUBCODE.search(status)
    return int(found.group(1)) if found else None


def publishing_limit_reached(action: str, wait: float, detail: str = "") -> ProviderError:
    """The account's content-publishing quota is spent: retry once the window has moved on."""
    said = f" ({detail})" if detail else ""
    return ProviderError(
        "rate_limited",
        f"Instagram's content-publishing limit for this account is reached while {action}"
        f"{said}; retry in {math.ceil(wait)} s, when the 24-hour window has moved on.",
        retry_after=wait,
    )


def _permission_denied(action: str, said: str) -> ProviderError:
    return ProviderError(
        "permission_denied",
        f"Instagram refused {action} for this account{said}. Check the account in the "
        "Instagram app and the permissions granted to the app.",
    )


def _described(error: GraphError) -> str:
    codes = [str(c) for c in (error.code, error.subcode) if c is not None]
    return f"{error.message} (code {'/'.join(codes)})" if codes else error.message


def _join(parts: Iterable[object]) -> str:
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str) and part.strip() and part.strip() not in texts:
            texts.append(part.strip())
    return " — ".join(texts)
