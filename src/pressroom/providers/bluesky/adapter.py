"""The Bluesky adapter: publish, delete, metrics and health over XRPC.

Publishing (https://docs.bsky.app/docs/advanced-guides/posts): the post is an app.bsky.feed.post
record written with `com.atproto.repo.createRecord` to the account's repository. A thread
(`options.thread`, a list of follow-up texts) is a chain of replies, each naming the first post
as `root` and the one before as `parent` (strong refs: AT URI + CID). The first comment
(`options.firstComment`) is one more reply once the thread is out, its root and parent the post
itself; a refusal leaves the post published, the reason on the target
(`PublishResult.comment_error`).

Idempotency: every post of a publish gets a record key derived from the idempotency key (see
records.py), so sending the same publish again names the same records. If a record is already
there, createRecord fails: the PDS answers a conflict (older ones a 500), and the adapter then
reads the record with `com.atproto.repo.getRecord` and returns it as already published. A retry
(`attempt > 1`) looks each post up first, so a thread broken halfway resumes where it stopped and
media of a post that exists are not uploaded again.

Delete: `com.atproto.repo.deleteRecord` of the main post (replies of a thread stay; a missing
record deletes as a success). Metrics: `app.bsky.feed.getPosts`, through the PDS, which proxies it
to the AppView: likeCount -> likes, replyCount -> comments, repostCount + quoteCount -> shares
(a quote spreads the post like a repost does). Health: `com.atproto.server.getSession`.

Revoke (on disconnect): `com.atproto.server.deleteSession`, authorised by the refresh JWT
(https://docs.bsky.app/docs/api/com-atproto-server-delete-session), ends the session Pressroom
holds. The app password itself can only be revoked by the account's owner, in Bluesky's
settings (Privacy and security > App passwords).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from typing import Unpack

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.adapter import shown_metrics
from pressroom.providers.bluesky.facets import build_facets
from pressroom.providers.bluesky.media import MediaDimensions
from pressroom.providers.bluesky.media import build_embed
from pressroom.providers.bluesky.records import POST_COLLECTION
from pressroom.providers.bluesky.records import AtUri
from pressroom.providers.bluesky.records import StrongRef
from pressroom.providers.bluesky.records import comment_record_key
from pressroom.providers.bluesky.records import post_record
from pressroom.providers.bluesky.records import post_url
from pressroom.providers.bluesky.records import thread_record_key
from pressroom.providers.bluesky.session import AUTH_ERRORS
from pressroom.providers.bluesky.session import DEFAULT_SERVICE
from pressroom.providers.bluesky.session import EXPIRED
from pressroom.providers.bluesky.session import PROVIDER
from pressroom.providers.bluesky.session import BlueskyCredentials
from pressroom.providers.bluesky.session import BlueskySession
from pressroom.providers.bluesky.session import classify
from pressroom.providers.bluesky.session import xrpc_error
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import MediaReader
from pressroom.providers.http import given_or_own_client
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.http import safe_detail
from pressroom.providers.options import alt_texts
from pressroom.providers.options import comment_refusal
from pressroom.providers.options import first_comment
from pressroom.providers.options import thread_texts
from pressroom.providers.session import RefreshingAdapter
from pressroom.providers.session import RefreshingOptions

# XRPC error names meaning "there is already a record with this key" (createRecord) ...
_EXISTS_ERRORS = frozenset({"RecordAlreadyExists", "RecordExists"})
# ... and "there is no such record" (getRecord).
_MISSING_ERRORS = frozenset({"RecordNotFound", "NotFound"})


def credentials_from_cli_options(
    identifier: str, app_password: str, service: str = DEFAULT_SERVICE
) -> dict[str, Any]:
    """The credentials dict of a channel connected from the command line
    (`--identifier`, `--app-password`, `--service`); the first call logs in and fills
    `did`, `handle`, `accessJwt`, `refreshJwt` and `pds` (reported through
    `on_credentials_changed`). Prefer `create_session_credentials`, which checks them now."""
    identifier = identifier.strip().removeprefix("@")
    if not identifier or not app_password.strip():
        raise ValueError("a Bluesky identifier (handle, DID or email) and app password are needed")
    if not service.startswith("https://"):
        raise ValueError("the Bluesky service must be an https:// URL")
    return BlueskyCredentials(
        identifier=identifier, app_password=app_password.strip(), service=service.rstrip("/")
    ).to_dict()


async def create_session_credentials(
    identifier: str,
    app_password: str,
    service: str = DEFAULT_SERVICE,
    *,
    http: httpx.AsyncClient | None = None,
) -> dict[str, Any]:
    """Log in now (com.atproto.server.createSession) and return the complete credentials dict;
    raises ProviderError (`auth_expired` for a wrong app password) so a connect fails early."""
    credentials = credentials_from_cli_options(identifier, app_password, service)
    channel = ChannelContext.unsaved("bluesky", credentials)
    async with given_or_own_client(http) as client:
        session = BlueskySession(client, channel, CredentialStore(CredentialCache()))
        await session.ensure()
        return session.credentials.to_dict()


METRICS = {
    "likes": ("likeCount",),
    "comments": ("replyCount",),
    "shares": ("repostCount", "quoteCount"),
}


class BlueskyAdapter(RefreshingAdapter):
    """Publishes as the account of the channel's app-password session."""

    provider = "bluesky"

    def __init__(
        self,
        *,
        read_media: MediaReader,
        media_dimensions: MediaDimensions | None = None,
        **options: Unpack[RefreshingOptions],
    ) -> None:
        super().__init__(**options)
        self._read_media = read_media
        self._media_dimensions = media_dimensions

    def _session(self, channel: ChannelContext) -> BlueskySession:
        return BlueskySession(self._http, channel, self._credential_store)

    async def publish(self, request: PublishRequest) -> PublishResult:
        session = self._session(request.channel)
        texts = [request.text, *thread_texts(request.options)]
        comment = first_comment(request.options)
        alts = alt_texts(request.options, request.media)
        await session.ensure()
        root: StrongRef | None = None
        parent: StrongRef | None = None
        for position, text in enumerate(texts):
            rkey = thread_record_key(request.idempotency_key, position)
            ref = await self._find(session, rkey) if request.attempt > 1 else None
            if ref is None:
                media = request.media if position == 0 else ()
                action = (
                    "creating the post" if position == 0 else f"creating thread post {position + 1}"
                )
                record = await self._record(session, text, media, alts, root, parent)
                ref = await self._create(session, rkey, record, action)
            root = root or ref
            parent = ref
        assert root is not None
        refusal = None
        if comment is not None:
            refusal = await comment_refusal(
                self.provider,
                request.target_id,
                lambda: self._comment(session, request, comment, root),
            )
        return PublishResult(
            provider_post_id=root.uri,
            url=post_url(session.actor, AtUri.parse(root.uri).rkey),
            published_at=self._clock(),
            comment_error=refusal,
        )

    async def _comment(
        self, session: BlueskySession, request: PublishRequest, text: str, post: StrongRef
    ) -> StrongRef:
        """The first comment: a reply whose root and parent are the post, under its own derived
        record key (looked up first on a retry, like every post of the publish)."""
        rkey = comment_record_key(request.idempotency_key)
        found = await self._find(session, rkey) if request.attempt > 1 else None
        if found is not None:
            return found
        record = await self._record(session, text, (), [], post, post)
        return await self._create(session, rkey, record, "posting the first comment")

    async def _record(
        self,
        session: BlueskySession,
        text: str,
        media: tuple[MediaItem, ...],
        alts: list[str | None],
        root: StrongRef | None,
        parent: StrongRef | None,
    ) -> dict[str, Any]:
        embed = await build_embed(session, media, alts, self._read_media, self._media_dimensions)
        facets = await build_facets(text, lambda handle: self._resolve(session, handle))
        return post_record(
            text,
            created_at=self._clock(),
            facets=facets,
            embed=embed,
            reply=(root, parent) if root is not None and parent is not None else None,
        )

    async def _create(
        self, session: BlueskySession, rkey: str, record: dict[str, Any], action: str
    ) -> StrongRef:
        response = await session.request(
            "POST",
            "com.atproto.repo.createRecord",
            action=action,
            json={
                "repo": session.did,
                "collection": POST_COLLECTION,
                "rkey": rkey,
                "record": record,
            },
        )
        if response.is_success:
            return _strong_ref(response_json(response), action)
        if _may_already_exist(response):
            existing = await self._find(session, rkey)
            if existing is not None:
                return existing
        raise _create_failure(session, response, action)

    async def _find(self, session: BlueskySession, rkey: str) -> StrongRef | None:
        """The post with this record key, if the account's repository has it."""
        action = "looking for an already published post"
        response = await session.request(
            "GET",
            "com.atproto.repo.getRecord",
            action=action,
            params={"repo": session.did, "collection": POST_COLLECTION, "rkey": rkey},
        )
        if response.is_success:
            return _strong_ref(response_json(response), action)
        name, _ = xrpc_error(response)
        if response.status_code == 404 or name in _MISSING_ERRORS:
            return None
        raise session.classify(response, action)

    async def _resolve(self, session: BlueskySession, handle: str) -> str | None:
        """The DID of `handle`, or None if it names no account."""
        action = f"resolving the mention @{handle}"
        response = await session.request(
            "GET", "com.atproto.identity.resolveHandle", action=action, params={"handle": handle}
        )
        if response.is_success:
            did = response_json(response).get("did")
            return did if isinstance(did, str) else None
        if response.status_code in (400, 404):
            return None
        raise session.classify(response, action)

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        uri = _parse_post_uri(provider_post_id)
        session = self._session(channel)
        await session.ensure()
        if uri.repo != session.did:
            raise ProviderError(
                "permission_denied",
                f"{provider_post_id} belongs to another Bluesky account than this channel's.",
            )
        await session.call(
            "POST",
            "com.atproto.repo.deleteRecord",
            action="deleting the post",
            json={"repo": uri.repo, "collection": uri.collection, "rkey": uri.rkey},
        )

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        _parse_post_uri(provider_post_id)
        session = self._session(channel)
        body = await session.call(
            "GET",
            "app.bsky.feed.getPosts",
            action="reading the post's counts",
            params={"uris": provider_post_id},
        )
        posts = body.get("posts")
        view = posts[0] if isinstance(posts, list) and posts else None
        return shown_metrics(view, METRICS, "Bluesky", provider_post_id)

    async def revoke(self, channel: ChannelContext) -> Revocation:
        """End the channel's session (`com.atproto.server.deleteSession` with the refresh JWT,
        at the PDS that refreshes it). A session the server already refuses is over."""
        credentials = BlueskyCredentials.from_dict(
            self._credential_store.current(channel, "refreshJwt")
        )
        if not credentials.refresh_jwt:
            return "nothing_to_revoke"
        action = "ending the session"
        base = (credentials.pds or credentials.service).rstrip("/")
        response = await provider_request(
            self._http,
            "POST",
            f"{base}/xrpc/com.atproto.server.deleteSession",
            provider=PROVIDER,
            action=action,
            bearer=credentials.refresh_jwt,
        )
        if response.is_success:
            return "revoked"
        name, _ = xrpc_error(response)
        if response.status_code == 401 or name in {EXPIRED, "InvalidToken", *AUTH_ERRORS}:
            return "revoked"
        raise classify(response, action, credentials.secrets())

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        session = self._session(channel)
        try:
            body = await session.call(
                "GET", "com.atproto.server.getSession", action="checking the session"
            )
        except ProviderError as error:
            return HealthResult.failed(error)
        if body.get("active") is False:
            return HealthResult(
                "reconnect_required",
                f"The Bluesky account is {body.get('status') or 'inactive'}.",
            )
        return HealthResult("healthy")


def _may_already_exist(response: httpx.Response) -> bool:
    """Whether a failed createRecord may mean the record is already there: PDS versions
    answer an explicit conflict error, or (older ones) an internal server error."""
    name, message = xrpc_error(response)
    return (
        response.status_code == 409
        or response.status_code >= 500
        or name in _EXISTS_ERRORS
        or "already exists" in (message or "").lower()
    )


def _create_failure(
    session: BlueskySession, response: httpx.Response, action: str
) -> ProviderError:
    error = session.classify(response, action)
    if error.code != "invalid_request":
        return error
    # The PDS validates the record against the lexicon: "Invalid app.bsky.feed.post record:
    # Record/text must not be longer than 300 graphemes", "... Record/embed/images/0 ...".
    _, message = xrpc_error(response)
    lowered = (message or "").lower()
    detail = safe_detail(message or "", session.credentials.secrets())
    if "record/text" in lowered or "graphemes" in lowered or "too long" in lowered:
        return ProviderError("text_rejected", f"Bluesky refused the text: {detail}")
    if "embed" in lowered or "blob" in lowered or "image" in lowered or "video" in lowered:
        return ProviderError("media_rejected", f"Bluesky refused the media: {detail}")
    return error


def _strong_ref(body: dict[str, Any], action: str) -> StrongRef:
    uri, cid = body.get("uri"), body.get("cid")
    if not isinstance(uri, str) or not isinstance(cid, str):
        raise ProviderError(
            "provider_unavailable", f"Bluesky answered {action} without the record's uri and cid."
        )
    return StrongRef(uri, cid)


def _parse_post_uri(provider_post_id: str) -> AtUri:
    try:
        uri = AtUri.parse(provider_post_id)
    except ValueError:
        raise ProviderError(
            "invalid_request", f"{provider_post_id!r} is not a Bluesky post AT URI."
        ) from None
    if uri.collection != POST_COLLECTION:
        raise ProviderError("invalid_request", f"{provider_post_id!r} is not a Bluesky post.")
    return uri
