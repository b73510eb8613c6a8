"""The X adapter: posts, threads, deletion, public metrics and health over the X API v2.

- Post (https://docs.x.com/x-api/posts/create-post): `POST /2/tweets` with `text`, `media.media_ids`
  (uploaded first, see media.py), `reply.in_reply_to_tweet_id` for the replies of a thread
  (`options.thread`), and `reply_settings` from `options.replySettings` -> 201
  `{"data": {"id", "text"}}`.
- First comment (`options.firstComment`): one more `POST /2/tweets` once the post and its thread
  are out, replying to the post (not to the thread's last reply), with the same
  `reply_settings`. A refusal leaves the post published, the reason on the target
  (`PublishResult.comment_error`); a retry after a lost outcome finds a comment already made
  by the duplicate recovery below, like any reply.
- Delete: `DELETE /2/tweets/:id` (a post already gone counts as deleted).
- Metrics: `GET /2/tweets/:id?tweet.fields=public_metrics`: impression_count -> impressions,
  like_count -> likes, reply_count -> comments, retweet_count + quote_count -> shares,
  bookmark_count -> saves (https://docs.x.com/x-api/fundamentals/metrics). Link clicks are a
  non-public metric X only gives for 30 days; they are not read.
- Health: `GET /2/users/me`.
- Revoke (on disconnect): `POST /2/oauth2/revoke` of the refresh token, then of the access token
  (oauth.py `revoke_token`).

Duplicates. X has no idempotency key. What it has is a duplicate-content check: the same account
posting the same text again soon after is refused with 403 "You are not allowed to create a Tweet
with duplicate content". Pressroom relies on that check, and recovers from it: when a retried
publish (`attempt > 1`, so an earlier attempt may have posted before failing or timing out) is
refused as a duplicate, the adapter looks through the account's recent posts
(`GET /2/users/:id/tweets`) for the one with the same text (and, in a thread, replying to the same
post) and returns it as the publish's result. The first attempt never does this: a duplicate
then is a real duplicate of something posted by other means, and fails as `duplicate_content`
(permanent). If the recent posts cannot be read, the retry fails as `duplicate_content` too,
rather than risk posting twice.
"""

from __future__ import annotations

import asyncio
import functools
import html
import re
import time
from collections.abc import Callable
from typing import Any
from typing import Unpack

import httpx

from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.adapter import SessionMetrics
from pressroom.providers.adapter import probed_health
from pressroom.providers.adapter import shown_metrics
from pressroom.providers.credentials import CredentialCache
from pressroom.providers.credentials import CredentialStore
from pressroom.providers.http import MediaReader
from pressroom.providers.http import Sleep
from pressroom.providers.http import given_or_own_client
from pressroom.providers.http import response_json
from pressroom.providers.options import alt_texts
from pressroom.providers.options import comment_refusal
from pressroom.providers.options import first_comment
from pressroom.providers.options import thread_texts
from pressroom.providers.session import OAuthAdapter
from pressroom.providers.session import RefreshingOptions
from pressroom.providers.token_endpoint import TokenSet
from pressroom.providers.x.media import DEFAULT_PROCESSING_TIMEOUT
from pressroom.providers.x.media import DEFAULT_SEGMENT_BYTES
from pressroom.providers.x.media import MediaUploader
from pressroom.providers.x.oauth import XApp
from pressroom.providers.x.oauth import revoke_token
from pressroom.providers.x.session import XSession

# How many of the account's latest posts a duplicate recovery looks through.
RECENT_POSTS = 20
_URL = re.compile(r"https?://\S+")
_REPLY_SETTINGS = frozenset({"following", "mentionedUsers", "subscribers", "verified"})


def credentials_from_cli_options(
    access_token: str,
    refresh_token: str | None = None,
    *,
    expires_in: int | None = None,
    user_id: str | None = None,
    username: str | None = None,
    clock: Callable[[], float] = time.time,
) -> dict[str, Any]:
    """Credentials of a channel connected with tokens obtained elsewhere (`--access-token`,
    `--refresh-token`, `--expires-in`); the OAuth callback uses `oauth.exchange_code` instead."""
    if not access_token.strip():
        raise ValueError("an X OAuth 2.0 user access token is needed")
    credentials = TokenSet(
        access_token=access_token.strip(),
        refresh_token=refresh_token.strip() if refresh_token else None,
        expires_at=int(clock()) + expires_in if expires_in else None,
        scope=None,
    ).as_credentials()
    if user_id:
        credentials["userId"] = user_id
    if username:
        credentials["username"] = username.removeprefix("@")
    return credentials


async def verify_credentials(
    credentials: dict[str, Any], *, app: XApp | None, http: httpx.AsyncClient | None = None
) -> tuple[dict[str, Any], str | None]:
    """Check a channel's tokens now (`GET /2/users/me`; a refused access token is refreshed once
    when there is a refresh token and an app) and return the complete credentials, with the
    account's `userId` and `username`, and its handle (`@username`). Raises ProviderError
    (`auth_expired` for a token X refuses), so a connect fails early and stores nothing."""
    channel = ChannelContext.unsaved("x", credentials)
    async with given_or_own_client(http) as client:
        session = XSession(client, app, channel, CredentialStore(CredentialCache()))
        body = await session.call("GET", "/2/users/me", "reading the account")
    data = body.get("data")
    user_id = data.get("id") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(user_id, str) or not user_id:
        raise ProviderError("provider_unavailable", "X answered /2/users/me without an id.")
    verified = {**session.credentials, "userId": user_id}
    username = data.get("username")
    if isinstance(username, str) and username:
        verified["username"] = username
        return verified, f"@{username}"
    return verified, None


def normalized_text(text: str) -> str:
    """Text as compared for duplicate recovery: X answers with `&amp;`-style entities, URLs
    rewritten to t.co links and a media link appended, so entities are decoded, URLs dropped
    and whitespace collapsed on both sides."""
    return " ".join(_URL.sub(" ", html.unescape(text)).split())


METRICS = {
    "impressions": ("impression_count",),
    "likes": ("like_count",),
    "comments": ("reply_count",),
    "shares": ("retweet_count", "quote_count"),
    "saves": ("bookmark_count",),
}


async def public_metrics(session: XSession, post_id: str) -> dict[str, int]:
    """The canonical metrics of a post from its public metrics."""
    body = await session.call(
        "GET",
        f"/2/tweets/{post_id}",
        "reading the post's public metrics",
        params={"tweet.fields": "public_metrics"},
    )
    # A deleted or hidden post answers 200 with only `errors` (resource-not-found).
    data = body.get("data")
    metrics = data.get("public_metrics") if isinstance(data, dict) else None
    return shown_metrics(metrics, METRICS, "X", f"post {post_id}")


class XAdapter(OAuthAdapter[XApp, XSession], SessionMetrics):
    """Publishes as the account that authorised the channel's OAuth 2.0 user token."""

    provider = "x"
    read_metrics = staticmethod(public_metrics)

    def __init__(
        self,
        *,
        app: XApp | None,
        read_media: MediaReader,
        sleep: Sleep = asyncio.sleep,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        processing_timeout: float = DEFAULT_PROCESSING_TIMEOUT,
        **options: Unpack[RefreshingOptions],
    ) -> None:
        """`app` refreshes expired tokens (without it, an expired token is `auth_expired`)."""
        super().__init__(app, XSession, **options)
        # Everything an upload needs but the channel's session, which each publish brings.
        self._uploader = functools.partial(
            MediaUploader,
            read_media=read_media,
            sleep=sleep,
            segment_bytes=segment_bytes,
            processing_timeout=processing_timeout,
        )

    async def publish(self, request: PublishRequest) -> PublishResult:
        session = self._session(request.channel)
        texts = [request.text, *thread_texts(request.options)]
        comment = first_comment(request.options)
        alts = alt_texts(request.options, request.media)
        common: dict[str, Any] = {}
        reply_settings = request.options.get("replySettings")
        if reply_settings is not None:
            if reply_settings not in _REPLY_SETTINGS:
                raise ProviderError(
                    "invalid_request",
                    f"options.replySettings must be one of {sorted(_REPLY_SETTINGS)}.",
                )
            common["reply_settings"] = reply_settings

        uploader = self._uploader(session)
        first_id: str | None = None
        previous: str | None = None
        for position, text in enumerate(texts):
            body: dict[str, Any] = {"text": text, **common}
            if position == 0 and request.media:
                media_ids = [
                    await uploader.upload(item, alt, index)
                    for index, (item, alt) in enumerate(zip(request.media, alts, strict=True))
                ]
                body["media"] = {"media_ids": media_ids}
            if previous is not None:
                body["reply"] = {"in_reply_to_tweet_id": previous}
            action = (
                "creating the post" if position == 0 else f"creating thread post {position + 1}"
            )
            previous = await self._post(session, body, action, request.attempt)
            first_id = first_id or previous
        assert first_id is not None
        refusal = None
        if comment is not None:
            reply = {"text": comment, **common, "reply": {"in_reply_to_tweet_id": first_id}}
            refusal = await comment_refusal(
                self.provider,
                request.target_id,
                lambda: self._post(session, reply, "posting the first comment", request.attempt),
            )
        return PublishResult(
            provider_post_id=first_id,
            url=self._post_url(session, request.channel, first_id),
            published_at=self._clock(),
            comment_error=refusal,
        )

    async def _post(
        self, session: XSession, body: dict[str, Any], action: str, attempt: int
    ) -> str:
        response = await session.request("POST", "/2/tweets", action, json=body)
        if response.is_success:
            data = response_json(response).get("data")
            post_id = data.get("id") if isinstance(data, dict) else None
            if not isinstance(post_id, str):
                raise ProviderError(
                    "provider_unavailable", f"X answered {action} without a post id."
                )
            return post_id
        error = session.classify(response, action)
        if error.code == "duplicate_content" and attempt > 1:
            reply = body.get("reply")
            found = await self._find_recent(
                session, body["text"], reply["in_reply_to_tweet_id"] if reply else None
            )
            if found is not None:
                return found
        raise error

    async def _find_recent(
        self, session: XSession, text: str, in_reply_to: str | None
    ) -> str | None:
        """The account's recent post with this text (replying to `in_reply_to`), if any."""
        action = "looking for the post an earlier attempt made"
        try:
            user_id = await self._user_id(session)
            response = await session.request(
                "GET",
                f"/2/users/{user_id}/tweets",
                action,
                params={
                    "max_results": str(RECENT_POSTS),
                    "tweet.fields": "created_at,referenced_tweets",
                    "exclude": "retweets",
                },
            )
        except ProviderError:
            return None
        if not response.is_success:
            return None
        posts = response_json(response).get("data")
        wanted = normalized_text(text)
        for post in posts if isinstance(posts, list) else []:
            if not isinstance(post, dict) or normalized_text(str(post.get("text", ""))) != wanted:
                continue
            replied_to = next(
                (
                    ref.get("id")
                    for ref in post.get("referenced_tweets") or []
                    if isinstance(ref, dict) and ref.get("type") == "replied_to"
                ),
                None,
            )
            if replied_to == in_reply_to and isinstance(post.get("id"), str):
                found: str = post["id"]
                return found
        return None

    async def _user_id(self, session: XSession) -> str:
        user_id = session.credentials.get("userId")
        if isinstance(user_id, str) and user_id:
            return user_id
        me = await session.call("GET", "/2/users/me", "reading the account")
        data = me.get("data")
        found = data.get("id") if isinstance(data, dict) else None
        if not isinstance(found, str):
            raise ProviderError("provider_unavailable", "X answered /2/users/me without an id.")
        return found

    def _post_url(self, session: XSession, channel: ChannelContext, post_id: str) -> str:
        username = session.credentials.get("username") or (channel.handle or "").lstrip("@")
        if username:
            return f"https://x.com/{username}/status/{post_id}"
        return f"https://x.com/i/web/status/{post_id}"

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        await self._session(channel).delete(f"/2/tweets/{provider_post_id}", "deleting the post")

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        return await probed_health(
            lambda: self._session(channel).call("GET", "/2/users/me", "checking the token")
        )

    async def revoke(self, channel: ChannelContext) -> Revocation:
        """Revoke the refresh token, then the access token: the refresh token first, so a
        failure halfway never leaves behind a token that can mint new access tokens. Revoking
        needs the deployment's X app (its client id): without it, `unsupported`."""
        credentials = self._credential_store.current(channel, "refreshToken")
        tokens = [
            (token, hint)
            for token, hint in (
                (credentials.get("refreshToken"), "refresh_token"),
                (credentials.get("accessToken"), "access_token"),
            )
            if isinstance(token, str) and token
        ]
        if not tokens:
            return "nothing_to_revoke"
        if self._app is None:
            return "unsupported"
        for token, hint in tokens:
            await revoke_token(self._app, token, token_type_hint=hint, http=self._http)
        return "revoked"
