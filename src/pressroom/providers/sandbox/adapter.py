"""The sandbox: a simulated social network for demos, staging and tests (contract section 7).

It behaves like a real network seen from outside: each call takes a configurable round trip
(`PRESSROOM_SANDBOX_LATENCY_MS`), a publish re-sent with the same idempotency key returns the
post it already made (its posts are rows of `sandbox_publications`, shared by every process),
posts get an id and a URL `https://sandbox.invalid/p/{providerPostId}`, and their metrics grow
with the time since publishing, deterministically. The first comment (`options.firstComment`)
is kept with the post. A target's `options.simulate` makes it fail on purpose: `text_rejected`
(permanent), `provider_unavailable` (retryable; fails `options.failTimes` times, default
forever), `auth_expired` (the channel must reconnect), `comment_rejected` (the post is
published, its first comment refused and not kept).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import math
import uuid
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.asyncio import AsyncEngine

from pressroom.kit.clock import utcnow
from pressroom.kit.schema import as_utc
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import HealthResult
from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.adapter import PublishResult
from pressroom.providers.adapter import Revocation
from pressroom.providers.options import first_comment
from pressroom.providers.sandbox.models import SandboxPublication

URL_TEMPLATE = "https://sandbox.invalid/p/{provider_post_id}"
ALL_METRICS = ("impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks")

# Share of impressions each metric reaches, so that every value is consistent with the others
# (reach never exceeds impressions, engagements stay a few percent, as on real networks).
_RATIOS = {
    "impressions": 1.0,
    "reach": 0.72,
    "views": 0.55,
    "likes": 0.042,
    "comments": 0.007,
    "shares": 0.005,
    "saves": 0.004,
    "clicks": 0.013,
}
# Impressions level off around this many (times a per-post factor of 0.5 to 1.5) ...
_EVENTUAL_IMPRESSIONS = 5000
# ... approaching it with this time constant: about 63% of the eventual reach after a day.
_GROWTH_HOURS = 24.0


def simulated_metrics(
    provider_post_id: str,
    published_at: datetime,
    at: datetime,
    keys: Sequence[str] = ALL_METRICS,
) -> dict[str, int]:
    """The sandbox's metrics of one post at time `at`: a function of the post id and the
    time since publishing only, never decreasing as time passes."""
    seed = int.from_bytes(hashlib.sha256(provider_post_id.encode()).digest()[:4], "big")
    factor = 0.5 + (seed % 1001) / 1000
    hours = max(0.0, (as_utc(at) - as_utc(published_at)).total_seconds() / 3600)
    impressions = _EVENTUAL_IMPRESSIONS * factor * (1 - math.exp(-hours / _GROWTH_HOURS))
    return {key: math.floor(impressions * _RATIOS[key]) for key in keys if key in _RATIOS}


def sandbox_url(provider_post_id: str) -> str:
    return URL_TEMPLATE.format(provider_post_id=provider_post_id)


_PUBLISH_COLUMNS = (
    "id",
    "idempotency_key",
    "provider_post_id",
    "organization_id",
    "channel_id",
    "target_id",
    "provider",
    "content_kind",
    "text",
    "first_comment",
    "media_count",
    "published_at",
)


@functools.cache
def _publish_statement(dialect: str) -> Any:
    """INSERT the post, or on a known key count the call and return the existing post.
    Built once per dialect (it runs for every simulated publish)."""
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    return (
        insert(SandboxPublication)
        .values({name: bindparam(name) for name in _PUBLISH_COLUMNS} | {"calls": 1})
        # The network's own idempotency: the same key returns the same post.
        .on_conflict_do_update(
            index_elements=["idempotency_key"],
            set_={"calls": SandboxPublication.calls + 1},
        )
        .returning(SandboxPublication.provider_post_id, SandboxPublication.published_at)
    )


class SandboxAdapter:
    """The simulator, for the `sandbox` provider and for channels connected with --simulated
    (which report only the metrics their real provider declares)."""

    provider = "sandbox"

    def __init__(
        self,
        engine: AsyncEngine | None,
        *,
        autocommit: AsyncEngine | None = None,
        latency_seconds: float = 0.0,
        metrics: Sequence[str] = ALL_METRICS,
    ) -> None:
        self._engine = engine
        # The same engine in autocommit mode (Runtime.reader), used on PostgreSQL to write in
        # one round trip. Not on SQLite, whose engine opens BEGIN IMMEDIATE on every use.
        self._autocommit = autocommit if engine and engine.dialect.name == "postgresql" else None
        self._latency = latency_seconds
        self._metrics = tuple(metrics)

    def _connect(self) -> AbstractAsyncContextManager[AsyncConnection]:
        if self._autocommit is not None:
            return self._autocommit.connect()
        assert self._engine is not None
        return self._engine.begin()

    async def _travel(self, share: float = 1.0) -> None:
        """One leg of the simulated network round trip."""
        if self._latency > 0:
            await asyncio.sleep(self._latency * share)

    async def publish(self, request: PublishRequest) -> PublishResult:
        # Half the round trip before the network acts and half after: a caller that dies
        # in between has published without hearing back, as with a real network.
        await self._travel(0.5)
        _raise_simulated_failure(request)
        comment = first_comment(request.options)
        refusal = _simulated_comment_refusal(request, comment)
        if self._engine is None:
            raise RuntimeError("the sandbox needs a database to publish: adapter_for(ch, runtime)")
        values = {
            "id": uuid.uuid4(),
            "idempotency_key": request.idempotency_key,
            "provider_post_id": uuid.uuid4().hex,
            "organization_id": request.channel.organization_id,
            "channel_id": request.channel.id,
            "target_id": request.target_id,
            "provider": request.channel.provider,
            "content_kind": request.content_kind,
            "text": request.text,
            "first_comment": comment if refusal is None else None,
            "media_count": len(request.media),
            "published_at": utcnow(),
        }
        # One statement committed on its own: the network's write is its own business, never
        # part of a transaction of ours.
        statement = _publish_statement(self._engine.dialect.name)
        async with self._connect() as connection:
            provider_post_id, published_at = (await connection.execute(statement, values)).one()
        await self._travel(0.5)
        return PublishResult(
            provider_post_id=provider_post_id,
            url=sandbox_url(provider_post_id),
            published_at=as_utc(published_at),
            comment_error=refusal,
        )

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None:
        await self._travel()
        if self._engine is None:
            raise RuntimeError("the sandbox needs a database to delete: adapter_for(ch, runtime)")
        async with self._connect() as connection:
            result = await connection.execute(
                update(SandboxPublication)
                .where(
                    SandboxPublication.provider_post_id == provider_post_id,
                    SandboxPublication.channel_id == channel.id,
                    SandboxPublication.deleted_at.is_(None),
                )
                .values(deleted_at=utcnow())
            )
        if result.rowcount == 0:
            raise ProviderError("not_found", f"The sandbox has no post {provider_post_id}.")

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        await self._travel()
        return simulated_metrics(provider_post_id, published_at, utcnow(), self._metrics)

    async def check_health(self, channel: ChannelContext) -> HealthResult:
        await self._travel()
        return HealthResult(state="healthy")

    async def revoke(self, channel: ChannelContext) -> Revocation:
        """The simulator issues no tokens: a disconnected channel leaves nothing behind."""
        return "nothing_to_revoke"


def _simulated_comment_refusal(
    request: PublishRequest, comment: str | None
) -> ProviderError | None:
    """`options.simulate=comment_rejected`: the post is published, its first comment is not."""
    if comment is None or request.options.get("simulate") != "comment_rejected":
        return None
    return ProviderError(
        "text_rejected",
        "The post was published but its first comment was not: the sandbox rejected it "
        "(options.simulate=comment_rejected).",
    )


def _raise_simulated_failure(request: PublishRequest) -> None:
    simulate = request.options.get("simulate")
    if simulate == "text_rejected":
        raise ProviderError(
            "text_rejected",
            "The sandbox rejected the text (options.simulate=text_rejected). Change the text "
            "or remove the option.",
        )
    if simulate == "auth_expired":
        raise ProviderError(
            "auth_expired",
            "The sandbox no longer accepts this channel's credentials "
            "(options.simulate=auth_expired). Reconnect the channel.",
        )
    if simulate == "provider_unavailable":
        fail_times = request.options.get("failTimes")
        if fail_times is None or request.attempt <= int(fail_times):
            raise ProviderError(
                "provider_unavailable",
                "The sandbox is unavailable (options.simulate=provider_unavailable); the "
                "publish will be retried.",
            )
