"""Meta's Graph API as the networks Meta serves through it share it: Facebook Pages
(graph.facebook.com), Instagram (graph.facebook.com with Facebook Login, graph.instagram.com with
Instagram Login) and Threads (graph.threads.net) answer in one shape, fail in one shape and
report their rate limits in the same headers. Nothing here knows a network: the caller names
its host, its API version and how to call itself in messages ("Facebook").

- `GraphClient.call`: one request. The version goes in the path (`/v24.0/...`); the access token
  goes in an `Authorization` header rather than the documented `access_token` parameter, so it is
  never part of a URL (proxies and access logs record URLs); `appsecret_proof` is added when the
  app secret is known (see `appsecret_proof`). Answers are JSON objects; a refusal raises
  `GraphFailure`, a `ProviderError` classified by `graph_failure`.
- `graph_failure`: Meta's error object
  (https://developers.facebook.com/docs/graph-api/guides/error-handling)
  `{"error": {"message", "type", "code", "error_subcode", "error_user_title", "error_user_msg",
  "is_transient", "fbtrace_id"}}` to a `ProviderError` code, with the network's own words.
- `usage_retry_after`: when a throttled caller may come back, from the usage headers
  (https://developers.facebook.com/docs/graph-api/overview/rate-limiting).
- `insight_values` and `canonical_metrics`: an `/insights` answer to Pressroom's metric keys.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import httpx

from pressroom.config import Settings
from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import CodeFlowConnector
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import api_version
from pressroom.providers.http import rate_limited
from pressroom.providers.http import response_json
from pressroom.providers.http import retry_after_seconds
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.http import transport_failure

FACEBOOK_GRAPH = "https://graph.facebook.com"

# Error codes of the error-handling guide and the rate-limiting page.
AUTH_CODES = frozenset({102, 190})  # the session or access token is expired, revoked or invalid
# 4 app, 17 user, 32 Page, 341 application limit, 613 "calls to this api have exceeded the rate
# limit", 80000-80014 the Business Use Case throttles (80001 Pages, 80002 Instagram, ...).
_RATE_CODES = frozenset({4, 17, 32, 341, 613, *range(80000, 80015)})
# Instagram's content publishing limit (its error-codes reference: code 9, subcode 2207042).
_RATE_SUBCODES = frozenset({2207042})
_PERMISSION_CODES = frozenset({3, 10, *range(200, 300)})
_TRANSIENT_CODES = frozenset({1, 2})  # "API Unknown", "API Service": temporary, retry
_DUPLICATE_CODES = frozenset({506})  # "Duplicate Post"
# 324 missing or invalid image file, 352 unsupported video format, 381/382 video problems;
# the Video API's session errors (6000 "problem uploading your video file", 1363022 too small,
# 1363023 too large, 1363024 format, 1363026 duration) and its retryable upload errors
# (https://developers.facebook.com/docs/video-api/reference/error-codes).
_MEDIA_CODES = frozenset({324, 352, 381, 382, 6000})
_MEDIA_SUBCODES = frozenset({6000, 1363022, 1363023, 1363024, 1363026})
_RETRY_UPLOAD_SUBCODES = frozenset({1363019, 1363030, 1363037})
_PERMISSION_SUBCODES = frozenset({1363042})  # "No Permission to Upload Video"
# The authentication subcodes, said plainly.
AUTH_SUBCODES = {
    458: "the app is no longer installed for the account",
    459: "the account is checkpointed: log in at facebook.com to clear it",
    460: "the password changed",
    463: "the token expired",
    464: "the account is not confirmed",
    467: "the token is invalid (the person logged out or the app was removed)",
    492: "the session is invalid",
}
# Headers whose JSON carries `estimated_time_to_regain_access` (minutes) when throttled.
USAGE_HEADERS = ("x-business-use-case-usage", "x-app-usage", "x-page-usage")

# The Graph API version a connector or adapter calls when the deployment names none.
DEFAULT_GRAPH_VERSION: str = Settings.model_fields["meta_graph_version"].default


class GraphFailure(ProviderError):
    """A classified Graph refusal that still carries Meta's `code` and `error_subcode`, for a
    caller that must tell two refusals of one class apart."""

    graph_code: int | None = None
    graph_subcode: int | None = None


def appsecret_proof(token: str, app_secret: str) -> str:
    """The HMAC-SHA256 of the access token keyed with the app secret, in hex
    (https://developers.facebook.com/docs/graph-api/securing-requests). Sent with every call
    when the app secret is known: apps with "Require App Secret" on refuse calls without it, and
    with it a token copied out of Pressroom is useless to anyone without the secret."""
    return hmac.new(app_secret.encode(), token.encode(), hashlib.sha256).hexdigest()


class GraphClient:
    """Calls one Graph host at one API version. `provider` names the network in messages."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        provider: str,
        version: str,
        host: str = FACEBOOK_GRAPH,
        app_secret: str | None = None,
    ) -> None:
        self.http = http
        self.provider = provider
        self.version = version
        self.host = host.rstrip("/")
        self._app_secret = app_secret

    def url(self, path: str) -> str:
        """`path` under the host and version; an absolute https URL is kept as given (Meta's
        upload hosts, such as rupload.facebook.com, answer in the Graph shape too)."""
        if path.startswith("https://"):
            return path
        return f"{self.host}/{self.version}/{path.lstrip('/')}"

    async def call(
        self,
        method: str,
        path: str,
        action: str,
        *,
        token: str | None = None,
        params: Mapping[str, str] | None = None,
        form: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        auth_scheme: str = "Bearer",
        secrets: Iterable[str | None] = (),
    ) -> dict[str, Any]:
        """Send one request and return its JSON object. `action` says what the call does, for
        messages ("publishing the post"); `token` is sent as `Authorization: {auth_scheme}
        {token}`; `form` is sent urlencoded. `secrets` (codes, client secrets in `params`) are
        kept out of error messages, as the token and app secret always are. Raises GraphFailure
        for a refusal, ProviderError when Meta could not be reached."""
        url = self.url(path)
        query = dict(params or {})
        request_headers = dict(headers or {})
        hidden = [*secrets, self._app_secret]
        if token is not None:
            request_headers["Authorization"] = f"{auth_scheme} {token}"
            hidden.append(token)
            if self._app_secret and url.startswith(self.host + "/"):
                query["appsecret_proof"] = appsecret_proof(token, self._app_secret)
                hidden.append(query["appsecret_proof"])
        try:
            response = await self.http.request(
                method, url, params=query or None, data=form, headers=request_headers
            )
        except httpx.HTTPError as exc:
            raise transport_failure(exc, self.provider, action) from None
        if response.is_success:
            return response_json(response)
        raise graph_failure(response, self.provider, action, hidden)


def graph_failure(
    response: httpx.Response, provider: str, action: str, secrets: Iterable[str | None] = ()
) -> ProviderError:
    """Classify a refused Graph call by Meta's `code` and `error_subcode`, falling back on the
    HTTP status. The message quotes the network (`error_user_title`, `error_user_msg`,
    `message`, the codes and `fbtrace_id`), scrubbed of `secrets`."""
    body = response_json(response)
    error = body.get("error")
    if not isinstance(error, dict):
        return _upload_failure(response, body, provider, action, secrets)
    code = graph_int(error.get("code"))
    subcode = graph_int(error.get("error_subcode"))
    detail = safe_detail(_words(error, code, subcode), secrets)
    kind, message, retryable = _classify(code, subcode, error, provider, action, detail)
    if kind is None:
        fallback = status_failure(response, provider, action, detail)
        kind, message, retryable = fallback.code, fallback.message, fallback.retryable
    wait = None
    if kind == "rate_limited":
        wait = usage_retry_after(response.headers)
        message = rate_limited(provider, action, _delay_headers(wait), detail).message
    elif retryable:
        wait = retry_after_seconds(response.headers)
    failure = GraphFailure(kind, message, retryable=retryable, retry_after=wait)
    failure.graph_code, failure.graph_subcode = code, subcode
    return failure


def _classify(
    code: int | None,
    subcode: int | None,
    error: Mapping[str, Any],
    provider: str,
    action: str,
    detail: str,
) -> tuple[str | None, str, bool | None]:
    """(Pressroom code, message, retryable) for the codes Meta documents; (None, "", None) for
    the others, which the HTTP status decides."""
    if code in AUTH_CODES:
        why = AUTH_SUBCODES.get(subcode or 0, "the token is expired, revoked or invalid")
        return (
            "auth_expired",
            f"{provider} rejected the channel's token while {action} ({why}): {detail}. "
            "Reconnect the channel.",
            None,
        )
    if code in _RATE_CODES or subcode in _RATE_SUBCODES:
        return "rate_limited", "", None
    if code == 368:
        return (
            "permission_denied",
            f"{provider} has temporarily blocked the account from {action} for a policy "
            f"reason: {detail}. Try again later, after reviewing the account's standing.",
            None,
        )
    if code in _PERMISSION_CODES or subcode in _PERMISSION_SUBCODES:
        return (
            "permission_denied",
            f"{provider} refused {action} for lack of permission: {detail}. Reconnect the "
            "channel, granting every permission Pressroom asks for, as a person allowed to "
            "publish on the account.",
            None,
        )
    if code in _DUPLICATE_CODES:
        return (
            "duplicate_content",
            f"{provider} refused the post as a duplicate of a recent one: {detail}. Change the "
            "text to post it again.",
            None,
        )
    if code == 803 or (code == 100 and subcode == 33):
        return "not_found", f"{provider} found nothing while {action}: {detail}", None
    if subcode in _RETRY_UPLOAD_SUBCODES:
        return (
            "provider_unavailable",
            f"{provider} failed to take the media while {action}: {detail}; it will be retried.",
            True,
        )
    if code in _MEDIA_CODES or subcode in _MEDIA_SUBCODES:
        return "media_rejected", f"{provider} refused the media while {action}: {detail}", None
    if code in _TRANSIENT_CODES or error.get("is_transient") is True:
        return (
            "provider_unavailable",
            f"{provider} failed while {action}: {detail}; it will be retried.",
            True,
        )
    if code == 100 and "too long" in detail.lower():
        return "text_rejected", f"{provider} refused the text while {action}: {detail}", None
    return None, "", None


def _upload_failure(
    response: httpx.Response,
    body: Mapping[str, Any],
    provider: str,
    action: str,
    secrets: Iterable[str | None],
) -> ProviderError:
    """Meta's upload hosts answer a refused upload with `{"debug_info": {"retriable", "type",
    "message"}}` instead of an error object."""
    info = body.get("debug_info")
    if not isinstance(info, dict):
        return status_failure(response, provider, action, "")
    detail = safe_detail(str(info.get("message") or info.get("type") or ""), secrets)
    if info.get("retriable") is True or response.status_code >= 500:
        wait = retry_after_seconds(response.headers)
        code, said = "provider_unavailable", f"failed to take the media while {action}: {detail}"
        return ProviderError(code, f"{provider} {said}; it will be retried.", retry_after=wait)
    return ProviderError(
        "media_rejected", f"{provider} could not take the media while {action}: {detail}"
    )


def _words(error: Mapping[str, Any], code: int | None, subcode: int | None) -> str:
    """The network's own account of the error, most specific first, with its codes."""
    parts: list[str] = []
    for key in ("error_user_title", "error_user_msg", "message"):
        value = error.get(key)
        if isinstance(value, str) and value.strip() and value.strip() not in parts:
            parts.append(value.strip())
    said = "; ".join(parts) or "no explanation given"
    codes = f"code {code}" if code is not None else "no code"
    if subcode is not None:
        codes += f", subcode {subcode}"
    trace = error.get("fbtrace_id")
    if isinstance(trace, str) and trace:
        codes += f", fbtrace_id {trace}"
    return f"{said} ({codes})"


def graph_int(value: object) -> int | None:
    """A code Meta sent as a number or a string of digits; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _delay_headers(seconds: float | None) -> httpx.Headers:
    return httpx.Headers({} if seconds is None else {"retry-after": f"{seconds:g}"})


def usage_retry_after(headers: httpx.Headers, names: Sequence[str] = USAGE_HEADERS) -> float | None:
    """Seconds before a throttled caller may call again: `Retry-After` when sent, else the
    longest `estimated_time_to_regain_access` (minutes) in the usage headers
    (`X-Business-Use-Case-Usage` is `{business-id: [{type, call_count, total_cputime,
    total_time, estimated_time_to_regain_access}]}`; `X-App-Usage` and `X-Page-Usage` are flat
    objects). `names` are the usage headers the network sends. None when no header says (or
    says 0)."""
    explicit = retry_after_seconds(headers)
    if explicit is not None:
        return explicit
    minutes = [
        value
        for name in names
        for value in _regain_estimates(_json(headers.get(name)))
        if value > 0
    ]
    return max(minutes) * 60.0 if minutes else None


def with_usage_retry_after(
    headers: httpx.Headers, names: Sequence[str] = USAGE_HEADERS
) -> httpx.Headers:
    """`headers` with a `Retry-After` (whole seconds) taken from the usage headers `names`
    when none was sent, for `rate_limited` to read."""
    if retry_after_seconds(headers) is not None:
        return headers
    wait = usage_retry_after(headers, names)
    if wait is None:
        return headers
    updated = httpx.Headers(headers)
    updated["retry-after"] = str(math.ceil(wait))
    return updated


def _json(value: str | None) -> object:
    if not value:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def _regain_estimates(value: object) -> Iterator[float]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "estimated_time_to_regain_access":
                if isinstance(item, int | float) and not isinstance(item, bool):
                    yield float(item)
            else:
                yield from _regain_estimates(item)
    elif isinstance(value, list):
        for item in value:
            yield from _regain_estimates(item)


def insight_values(body: Mapping[str, Any]) -> dict[str, int]:
    """`{metric name: value}` from an `/insights` answer: `data` lists `{"name", "period",
    "values": [{"value", "end_time"}]}` (the latest value last) or, for the metrics Meta
    totals, `{"name", "total_value": {"value"}}`. A value broken down by type (an object, such
    as reactions by kind) counts as its sum; anything not a count is left out."""
    values: dict[str, int] = {}
    data = body.get("data")
    for entry in data if isinstance(data, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        total = entry.get("total_value")
        series = entry.get("values")
        if isinstance(total, dict):
            raw = total.get("value")
        elif isinstance(series, list) and series and isinstance(series[-1], dict):
            raw = series[-1].get("value")
        else:
            continue
        count = _count(raw)
        if count is not None:
            values[entry["name"]] = count
    return values


def _count(raw: object) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return max(0, int(raw))
    if isinstance(raw, dict):
        parts = [_count(item) for item in raw.values()]
        return sum(part for part in parts if part is not None)
    return None


def canonical_metrics(
    values: Mapping[str, int], sources: Mapping[str, Sequence[str]]
) -> dict[str, int]:
    """Pressroom's metric keys from a network's metric names: each key is the sum of the
    `sources` named for it that the network reported; a key with none of them is left out
    (not reported is not zero)."""
    return {
        key: sum(values[name] for name in names if name in values)
        for key, names in sources.items()
        if any(name in values for name in names)
    }


def graph_time(value: object) -> datetime | None:
    """A Graph API time, such as `2026-11-22T09:30:00+0000` (ISO 8601 without the offset's
    colon; one with it is read too), or None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None


class GraphConnector(CodeFlowConnector):
    """The connector of a Meta network (Facebook Pages, Instagram) whose Graph API version the
    deployment pins (`meta_graph_version`; `graph_version` when no app carries it)."""

    def __init__(
        self,
        *,
        graph_version: str = DEFAULT_GRAPH_VERSION,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(clock=clock)
        self.graph_version = graph_version

    def version(self, app: OAuthApp | None) -> str:
        """The Graph API version to call."""
        return api_version(app, self.graph_version)
