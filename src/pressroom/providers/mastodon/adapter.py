"""The Mastodon adapter: any instance, an account's access token, the Mastodon REST API.

Credentials: `{"baseUrl": "https://mastodon.social", "accessToken": "..."}` (a token from the
account's Preferences > Development, scopes `read write`, or an OAuth token); `accountId` and
`username` are added by `verify_credentials` at connect time. Tokens do not expire.

- Media (https://docs.joinmastodon.org/methods/media/): `POST /api/v2/media` (multipart `file`,
  `description` = alt text) answers 200 with the attachment when it was processed at once
  (images), or 202 with `url: null` while the instance processes it (video, GIF); the adapter then
  polls `GET /api/v1/media/:id` (206 while processing, 200 with `url` when done), with growing
  pauses and a bounded total wait. 422 is a refused file: `media_rejected`, with the instance's
  reason.
- Statuses (https://docs.joinmastodon.org/methods/statuses/): `POST /api/v1/statuses` with the
  `Idempotency-Key` header set to the publish's idempotency key: the instance keeps the key for an
  hour and answers a repeat with the status it already made, so a retried publish (the
  publisher's retries fall within that hour) cannot post twice. `options.thread` posts replies
  (`in_reply_to_id`), each with its own derived key. `options.visibility`, `options.sensitive`,
  `options.spoilerText` and `options.language` are passed through, to every status.
- First comment (`options.firstComment`): one more status once the post and its thread are out,
  replying to the post (not to the thread's last reply), key `{idempotency key}:comment`. A
  refusal leaves the post published, the reason on the target (`PublishResult.comment_error`).
- Delete: `DELETE /api/v1/statuses/:id` (a status already gone counts as deleted).
- Metrics: `GET /api/v1/statuses/:id`: favourites_count -> likes, reblogs_count -> shares,
  replies_count -> comments.
- Health: `GET /api/v1/accounts/verify_credentials`.
- Revoke (on disconnect; https://docs.joinmastodon.org/methods/oauth/#revoke):
  `POST /oauth/revoke` with `client_id`, `client_secret` and `token` (a form). Only a token of
  Pressroom's own app can be revoked that way: channels connected through OAuth keep the app's
  `clientId` and `clientSecret` in their credentials; a token pasted on the command line was
  made by the account's owner, who alone can revoke it (`unsupported`).
- Limits: `instance_limits()` reads the instance's own `GET /api/v2/instance` configuration
  (statuses.max_characters, characters_reserved_per_url, max_media_attachments, media size
  limits), falling back to `/api/v1/instance` on servers older than 4.0; `read_limits()` is what
  the channel keeps of it (read at connect and at each health check), so that its targets are
  validated against the instance they will be published to (`declaration.for_instance`).
- Errors (https://docs.joinmastodon.org/api/rate-limits/, entities/Error): `{"error": "..."}`;
  401 is a revoked token (`auth_expired`); 429 carries `X-RateLimit-Reset`, an ISO 8601 time.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from pressroom.kit.clock import utcnow
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.adapter import counter_metrics
from pressroom.providers.adapter import probed_health
from pressroom.providers.adapter import refused_part
from pressroom.providers.http import FilePart
from pressroom.providers.http import HttpAdapter
from pressroom.providers.http import MediaReader
from pressroom.providers.http import Sleep
from pressroom.providers.http import given_or_own_client
from pressroom.providers.http import media_filename
from pressroom.providers.http import multipart_body
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.http import status_failure
from pressroom.providers.options import alt_texts
from pressroom.providers.options import comment_refusal
from pressroom.providers.options import first_comment
from pressroom.providers.options import thread_texts
from pressroom.providers.session import BearerSession

PROVIDER = "Mastodon"
STATUSES = "/api/v1/statuses"
# Pauses between polls of a processing attachment: short at first (most finish in seconds),
# then every 5 s until `media_poll_timeout` seconds have been waited in total (`MediaWait`).
POLL_DELAYS = (1.0, 2.0, 3.0)
POLL_MAX_DELAY = 5.0
DEFAULT_MEDIA_POLL_TIMEOUT = 300.0
_VISIBILITIES = frozenset({"public", "unlisted", "private", "direct"})
# What a refused status (422) names, by the words of its message (the text first).
_REFUSED_PARTS = (
    ("text_rejected", "the text", ("character limit", "text")),
    ("media_rejected", "the media", ("media", "attachment")),
)
METRICS = {
    "likes": ("favourites_count",),
    "shares": ("reblogs_count",),
    "comments": ("replies_count",),
}


@dataclass(frozen=True)
class InstanceLimits:
    """What one instance accepts (its `configuration`); the defaults are a stock server's."""

    max_characters: int = 500
    characters_reserved_per_url: int = 23
    max_media_attachments: int = 4
    supported_mime_types: tuple[str, ...] = ()
    image_size_limit: int | None = None
    video_size_limit: int | None = None

    def stored(self) -> dict[str, int]:
        """What the channel keeps (`declaration.for_instance` reads it back)."""
        kept = {
            "maxCharacters": self.max_characters,
            "charactersReservedPerUrl": self.characters_reserved_per_url,
            "maxMediaAttachments": self.max_media_attachments,
            "imageSizeLimit": self.image_size_limit,
            "videoSizeLimit": self.video_size_limit,
        }
        return {name: value for name, value in kept.items() if value is not None}


def normalize_base_url(base_url: str) -> str:
    parts = urlsplit(base_url.strip())
    if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment:
        raise ValueError(f"the Mastodon instance must be an https:// URL, not {base_url!r}")
    return f"https://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def credentials_from_cli_options(base_url: str, access_token: str) -> dict[str, Any]:
    """The credentials dict of a channel connected from the command line
    (`--base-url https://mastodon.social --access-token ...`)."""
    if not access_token.strip():
        raise ValueError("a Mastodon access token is needed")
    return {"baseUrl": normalize_base_url(base_url), "accessToken": access_token.strip()}


async def verify_credentials(
    base_url: str, access_token: str, *, http: httpx.AsyncClient | None = None
) -> tuple[dict[str, Any], str]:
    """Check the token now; return the complete credentials dict and the account's handle
    (`@user@instance`) for the channel. Raises ProviderError (`auth_expired` for a bad token)."""
    credentials = credentials_from_cli_options(base_url, access_token)
    async with given_or_own_client(http) as client:
        api = _Api(client, credentials)
        account = await api.call("GET", "/api/v1/accounts/verify_credentials", "checking the token")
    username = str(account.get("acct") or account.get("username") or "")
    host = urlsplit(credentials["baseUrl"]).hostname
    credentials.update(accountId=str(account.get("id", "")), username=username)
    return credentials, f"@{username}@{host}"


class _Api(BearerSession):
    """Authenticated requests to one instance, and the reading of its errors."""

    provider = PROVIDER

    def __init__(self, http: httpx.AsyncClient, credentials: Mapping[str, Any]) -> None:
        base_url, token = credentials.get("baseUrl"), credentials.get("accessToken")
        if not isinstance(base_url, str) or not isinstance(token, str) or not token:
            raise ProviderError(
                "auth_expired",
                "The Mastodon channel has no instance URL or access token; reconnect it.",
            )
        super().__init__(http)
        self._base = base_url.rstrip("/")
        self._token = token

    def url(self, path: str) -> str:
        return self._base + path

    def access_token(self) -> str:
        return self._token

    def detail(self, response: httpx.Response) -> str:
        body = response_json(response)
        return safe_detail(body.get("error") or "", (self._token,))

    def classify(self, response: httpx.Response, action: str) -> ProviderError:
        detail = self.detail(response)
        if response.status_code == 401:
            return ProviderError(
                "auth_expired",
                f"The Mastodon instance rejected the access token while {action} "
                f"({detail or 'unauthorized'}). Create a new token and reconnect the channel.",
            )
        return status_failure(response, PROVIDER, action, detail)


@dataclass(frozen=True)
class MediaWait:
    """How a publish waits for the instance to process an attachment: `sleep` the pauses
    between polls (`POLL_DELAYS`, then `POLL_MAX_DELAY`), `timeout` seconds in all."""

    sleep: Sleep
    timeout: float

    def pauses(self) -> Iterator[float]:
        """The pauses before each poll, as many as fit in the timeout."""
        waited, attempt = 0.0, 0
        while True:
            delay = POLL_DELAYS[attempt] if attempt < len(POLL_DELAYS) else POLL_MAX_DELAY
            if waited + delay > self.timeout:
                return
            yield delay
            waited += delay
            attempt += 1


class MastodonAdapter(HttpAdapter):
    """Publishes to the instance and account named by the channel's credentials."""

    provider = "mastodon"

    def __init__(
        self,
        *,
        read_media: MediaReader,
        http: httpx.AsyncClient | None = None,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], datetime] = utcnow,
        media_poll_timeout: float = DEFAULT_MEDIA_POLL_TIMEOUT,
    ) -> None:
        super().__init__(http)
        self._read_media = read_media
        self._clock = clock
        self._media_wait = MediaWait(sleep, media_poll_timeout)

    def _api(self, channel: ChannelContext) -> _Api:
        return _Api(self._http, channel.credentials)

    async def read_limits(self, channel: ChannelContext) -> dict[str, Any]:
        """The instance's limits as the channel keeps them (at connect and health checks)."""
        return (await self.instance_limits(channel)).stored()

    async def instance_limits(self, channel: ChannelContext) -> InstanceLimits:
        """The channel's instance's own limits (cache them: they change with its settings)."""
        api = self._api(channel)
        action = "reading the instance configuration"
        response = await api.request("GET", "/api/v2/instance", action)
        if response.status_code == 404:  # Mastodon before 4.0
            response = await api.request("GET", "/api/v1/instance", action)
        if not response.is_success:
            raise api.classify(response, action)
        return _limits(response_json(response))

    async def publish(self, request: PublishRequest) -> PublishResult:
        api = self._api(request.channel)
        texts = [request.text, *thread_texts(request.options)]
        comment = first_comment(request.options)
        alts = alt_texts(request.options, request.media)
        media_ids = [
            await self._upload(api, item, alt, position)
            for position, (item, alt) in enumerate(zip(request.media, alts, strict=True))
        ]
        common = _status_options(request.options)
        first: dict[str, Any] | None = None
        reply_to: str | None = None
        for position, text in enumerate(texts):
            body: dict[str, Any] = {"status": text, **common}
            if position == 0 and media_ids:
                body["media_ids"] = media_ids
            if reply_to is not None:
                body["in_reply_to_id"] = reply_to
            if position == 0:
                key, action = request.idempotency_key, "posting the status"
            else:
                key = f"{request.idempotency_key}:thread:{position}"
                action = f"posting thread reply {position}"
            status = await self._post_status(api, body, key, action)
            first = first or status
            reply_to = str(status["id"])
        assert first is not None
        refusal = None
        if comment is not None:
            reply = {"status": comment, **common, "in_reply_to_id": str(first["id"])}
            refusal = await comment_refusal(
                self.provider,
                request.target_id,
                lambda: self._post_status(
                    api, reply, f"{request.idempotency_key}:comment", "posting the first comment"
                ),
            )
        return PublishResult(
            provider_post_id=str(first["id"]),
            url=str(first.get("url") or first.get("uri") or "") or None,
            published_at=_parse_time(first.get("created_at")) or self._clock(),
            comment_error=refusal,
        )

    async def _post_status(
        self, api: _Api, body: dict[str, Any], key: str, action: str
    ) -> dict[str, Any]:
        response = await api.request(
            "POST", STATUSES, action, json=body, headers={"Idempotency-Key": key}
        )
        if response.is_success:
            status = response_json(response)
            if "id" not in status:
                raise ProviderError(
                    "provider_unavailable", f"Mastodon answered {action} without a status id."
                )
            return status
        raise _status_failure(api, response, action)

    async def _upload(self, api: _Api, item: MediaItem, alt: str | None, position: int) -> str:
        label = f"media {position + 1} ({item.id})"
        action = f"uploading {label}"
        upload = multipart_body(
            [("description", alt)] if alt else [],
            FilePart(
                "file",
                media_filename(item),
                item.mime_type,
                item.size_bytes,
                lambda: self._read_media(item),
            ),
        )
        response = await api.request(
            "POST", "/api/v2/media", action, headers=upload.headers, body=upload.open
        )
        if response.status_code in (413, 422) or (
            response.status_code == 500 and "processing" in api.detail(response).lower()
        ):
            raise _media_refused(api, response, f"refused {label}", f"HTTP {response.status_code}")
        if not response.is_success:
            raise api.classify(response, action)
        attachment = response_json(response)
        media_id = str(attachment.get("id", ""))
        if not media_id:
            raise ProviderError(
                "provider_unavailable", f"Mastodon answered {action} without an id."
            )
        if response.status_code == 200 and attachment.get("url"):
            return media_id
        await self._wait_processed(api, media_id, label)
        return media_id

    async def _wait_processed(self, api: _Api, media_id: str, label: str) -> None:
        action = f"checking the processing of {label}"
        waited = 0.0
        for delay in self._media_wait.pauses():
            await self._media_wait.sleep(delay)
            waited += delay
            response = await api.request("GET", f"/api/v1/media/{media_id}", action)
            if response.status_code == 206:
                continue
            if response.status_code == 422:
                raise _media_refused(
                    api, response, f"could not process {label}", "processing failed"
                )
            if not response.is_success:
                raise api.classify(response, action)
            if response_json(response).get("url"):
                return
        raise ProviderError(
            "provider_unavailable",
            f"Mastodon was still processing {label} after "
            f"{math.ceil(waited)} s; the publish will be retried.",
        )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        await self._api(channel).delete(f"{STATUSES}/{provider_post_id}", "deleting the status")

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        path = f"{STATUSES}/{provider_post_id}"
        status = await self._api(channel).call("GET", path, "reading the status's counts")
        return counter_metrics(status, METRICS)

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        return await probed_health(
            lambda: self._api(channel).call(
                "GET", "/api/v1/accounts/verify_credentials", "checking the token"
            )
        )

    async def revoke(self, channel: ChannelContext) -> Revocation:
        """Revoke the access token with the app that obtained it (`POST /oauth/revoke`); the
        instance answers 200 for a token already revoked (RFC 7009)."""
        credentials = channel.credentials
        base_url, token = credentials.get("baseUrl"), credentials.get("accessToken")
        client_id, client_secret = credentials.get("clientId"), credentials.get("clientSecret")
        if not isinstance(base_url, str) or not isinstance(token, str) or not token:
            return "nothing_to_revoke"
        if not isinstance(client_id, str) or not isinstance(client_secret, str):
            return "unsupported"
        if not client_id or not client_secret:
            return "unsupported"
        action = "revoking the access token"
        response = await provider_request(
            self._http,
            "POST",
            f"{base_url.rstrip('/')}/oauth/revoke",
            provider=PROVIDER,
            action=action,
            data={"client_id": client_id, "client_secret": client_secret, "token": token},
        )
        if response.is_success:
            return "revoked"
        body = response_json(response)
        described = body.get("error_description") or body.get("error") or ""
        raise status_failure(
            response, PROVIDER, action, safe_detail(described, (token, client_secret))
        )


def _status_failure(api: _Api, response: httpx.Response, action: str) -> ProviderError:
    """A refused status: 422 names the invalid part ("Validation failed: Text character limit
    of 500 exceeded", "... Media attachments ...")."""
    if response.status_code == 422:
        refused = refused_part(PROVIDER, api.detail(response), _REFUSED_PARTS)
        if refused is not None:
            return refused
    return api.classify(response, action)


def _media_refused(
    api: _Api, response: httpx.Response, what: str, unexplained: str
) -> ProviderError:
    """A media file the instance refused, with its reason (`unexplained` when it gave none)."""
    return ProviderError(
        "media_rejected", f"Mastodon {what}: {api.detail(response) or unexplained}"
    )


def _status_options(options: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    visibility = options.get("visibility")
    if visibility is not None:
        if visibility not in _VISIBILITIES:
            raise ProviderError(
                "invalid_request", f"options.visibility must be one of {sorted(_VISIBILITIES)}."
            )
        body["visibility"] = visibility
    if options.get("sensitive") is not None:
        body["sensitive"] = bool(options["sensitive"])
    for option, field in (("spoilerText", "spoiler_text"), ("language", "language")):
        value = options.get(option)
        if isinstance(value, str) and value:
            body[field] = value
    return body


def _limits(instance: dict[str, Any]) -> InstanceLimits:
    configuration = instance.get("configuration")
    configuration = configuration if isinstance(configuration, dict) else {}
    statuses = configuration.get("statuses") if isinstance(configuration, dict) else None
    statuses = statuses if isinstance(statuses, dict) else {}
    media = configuration.get("media_attachments")
    media = media if isinstance(media, dict) else {}
    defaults = InstanceLimits()
    # Pre-3.4 servers and some forks state only the legacy `max_toot_chars`.
    max_characters = _positive(statuses.get("max_characters")) or _positive(
        instance.get("max_toot_chars")
    )
    mime_types = media.get("supported_mime_types")
    return InstanceLimits(
        max_characters=max_characters or defaults.max_characters,
        characters_reserved_per_url=_positive(statuses.get("characters_reserved_per_url"))
        or defaults.characters_reserved_per_url,
        max_media_attachments=_positive(statuses.get("max_media_attachments"))
        or defaults.max_media_attachments,
        supported_mime_types=tuple(m for m in mime_types if isinstance(m, str))
        if isinstance(mime_types, list)
        else (),
        image_size_limit=_positive(media.get("image_size_limit")),
        video_size_limit=_positive(media.get("video_size_limit")),
    )


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None
