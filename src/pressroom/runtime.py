"""What one process holds: settings, the database engine, counters, the server key.

A use case takes `(session, runtime, ...)`, never loose pieces of it (README: Architecture)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import httpx
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.asyncio import async_sessionmaker

from pressroom.auth.service import CREDENTIALS_CHANNEL
from pressroom.auth.service import PostgresKeyLookup
from pressroom.auth.service import Principal
from pressroom.auth.service import PrincipalCache
from pressroom.auth.service import SQLitePrincipalCache
from pressroom.auth.service import authenticate
from pressroom.auth.service import looks_like_key
from pressroom.auth.service import lookup
from pressroom.config import Settings
from pressroom.db import create_engine
from pressroom.db import create_read_engine
from pressroom.db import make_sessionmaker
from pressroom.db import sqlite_file
from pressroom.kit.crypto import SecretBox
from pressroom.kit.crypto import digest_api_key
from pressroom.kit.crypto import load_or_create_server_key
from pressroom.kit.crypto import server_key_file
from pressroom.kit.data_version import DataVersion
from pressroom.kit.data_version import VersionedCache
from pressroom.kit.notify import Notifier
from pressroom.kit.outbound.api import build_api_client
from pressroom.kit.plain_reads import PlainReads
from pressroom.kit.ratelimit import RateLimiter
from pressroom.server_key import verify_server_key

# A channel was disconnected: (session, runtime, channel id, reason), in the disconnect's
# transaction.
ChannelGone = Callable[[AsyncSession, "Runtime", uuid.UUID, str], Awaitable[object]]


@dataclass
class Hooks:
    """Use cases a domain triggers in a domain above it, which it cannot import: the composition
    root (`pressroom.wiring`) hands them in."""

    # The channels domain calls these when a channel is disconnected (posts fail its targets).
    channel_gone: list[ChannelGone] = field(default_factory=list)


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    limiter: RateLimiter
    box: SecretBox
    notifier: Notifier = field(default_factory=Notifier)
    hooks: Hooks = field(default_factory=Hooks)
    # Requests that only read (and the hot-path reads) use this engine: on a SQLite file, its
    # own read-only connections beside the one writer; None: `engine` itself.
    read_engine: AsyncEngine | None = None

    async def authenticate(self, raw_key: str) -> Principal | None:
        """The principal for an API key (the per-request lookup of every API call)."""
        if self.engine.dialect.name != "postgresql":
            return await self._authenticate_sqlite(raw_key)
        if self._key_lookup is None:
            self._key_lookup = PostgresKeyLookup(self._plain_reads_pool())
            self.notifier.subscribe(CREDENTIALS_CHANNEL, self._principals.clear)
        if not looks_like_key(raw_key):
            return None
        digest = digest_api_key(raw_key)
        now = time.monotonic()
        listening = self.notifier.is_listening(CREDENTIALS_CHANNEL)
        if listening:
            cached = self._principals.get(digest, now)
            if cached is not None:
                return cached
        else:
            self._principals.clear()
            await self.notifier.listen(CREDENTIALS_CHANNEL)
            listening = self.notifier.is_listening(CREDENTIALS_CHANNEL)
        generation = self._principals.generation
        principal = await self._key_lookup.lookup(digest)
        if principal is not None and listening:
            self._principals.put(digest, principal, now, generation)
        return principal

    async def _authenticate_sqlite(self, raw_key: str) -> Principal | None:
        cache = self._sqlite_principals
        if cache is None:
            async with self.reader.connect() as connection:
                return await authenticate(connection, raw_key)
        if not looks_like_key(raw_key):
            return None
        digest = digest_api_key(raw_key)
        now = time.monotonic()
        version = cache.version()
        if version is not None:
            cached = cache.get(digest, version, now)
            if cached is not None:
                return cached
        async with self.reader.connect() as connection:
            principal = await lookup(connection, digest)
        if principal is not None and version is not None:
            cache.put(digest, principal, version, now)
        return principal

    @property
    def _sqlite_principals(self) -> SQLitePrincipalCache | None:
        """The principal cache of a SQLite file (None for an in-memory database)."""
        if self._sqlite_cache is None:
            versions = self.data_version
            if versions is None:
                return None
            self._sqlite_cache = SQLitePrincipalCache(versions)
        return self._sqlite_cache

    @property
    def plain_reads(self) -> PlainReads | None:
        """Plain asyncpg connections for the hottest reads (None on SQLite)."""
        if self.engine.dialect.name != "postgresql":
            return None
        return self._plain_reads_pool()

    def _plain_reads_pool(self) -> PlainReads:
        """The plain read connections, made on first use (the key lookup uses them too)."""
        if self._plain_reads is None:
            self._plain_reads = PlainReads(self.settings.effective_database_url)
        return self._plain_reads

    @property
    def data_version(self) -> DataVersion | None:
        """The change counter of a SQLite file (None on PostgreSQL and in memory)."""
        if self._data_version is None:
            path = sqlite_file(self.settings.effective_database_url)
            if path is None:
                return None
            self._data_version = DataVersion(path)
        return self._data_version

    async def verify_server_key(self) -> None:
        """Refuse to run with another server key than the database's (ServerKeyMismatch); the
        first node on a database records its key's check value. Every entry point calls this
        before doing anything else."""
        generated = None if self.settings.secret_key else self.settings.resolved_data_dir
        await verify_server_key(
            self.sessions,
            self.box,
            key_file=server_key_file(generated) if generated is not None else None,
        )

    @property
    def reader(self) -> AsyncEngine:
        """The read engine in autocommit mode, for single-statement reads on the hot path."""
        if self._reader is None:
            engine = self.read_engine or self.engine
            self._reader = engine.execution_options(isolation_level="AUTOCOMMIT")
        return self._reader

    @property
    def autocommit_writer(self) -> AsyncEngine | None:
        """On PostgreSQL, the engine in autocommit (`reader`), for a hot-path write of one
        statement (a claim): one round trip, no BEGIN and COMMIT around it. None elsewhere:
        SQLite's reader is read-only and its writes queue for the one writer."""
        return self.reader if self.reads_in_autocommit else None

    @property
    def reads_in_autocommit(self) -> bool:
        """Whether `read_sessions` run each statement in autocommit (PostgreSQL): a unit of
        work that only reads has nothing to commit."""
        return self.engine.dialect.name == "postgresql"

    @property
    def read_sessions(self) -> async_sessionmaker[AsyncSession]:
        """Sessions for a unit of work that only reads (a request without a write method).

        SQLite: a read transaction on the read engine (one snapshot, never waiting for the
        writer). PostgreSQL: autocommit, with no BEGIN and COMMIT round trips: at its READ
        COMMITTED level every statement sees the latest commits whether or not it runs in a
        transaction, so a read-only request loses nothing."""
        if self._read_sessions is None:
            if self.reads_in_autocommit:
                self._read_sessions = make_sessionmaker(self.reader)
            elif self.read_engine is None or self.read_engine is self.engine:
                self._read_sessions = self.sessions
            else:
                self._read_sessions = make_sessionmaker(self.read_engine)
        return self._read_sessions

    @property
    def provider_http(self) -> httpx.AsyncClient:
        """The process's HTTP client for provider APIs, shared by every adapter call (made on
        first use; closed with the runtime)."""
        if self._provider_http is None:
            self._provider_http = build_api_client(
                connections_per_host=self.settings.publisher_concurrency
            )
        return self._provider_http

    _reader: AsyncEngine | None = None
    _read_sessions: async_sessionmaker[AsyncSession] | None = None
    _key_lookup: PostgresKeyLookup | None = None
    _provider_http: httpx.AsyncClient | None = None
    _principals: PrincipalCache = field(default_factory=PrincipalCache)
    _sqlite_cache: SQLitePrincipalCache | None = None
    _data_version: DataVersion | None = None
    _plain_reads: PlainReads | None = None
    # Answers of read operations on a SQLite file, kept while the file is unchanged
    # (http/documents.py): at most 128, some 17 MB at 100 posts a page.
    answers: VersionedCache[bytes] = field(default_factory=lambda: VersionedCache(128))

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        url, pool_size = settings.effective_database_url, settings.database_pool_size
        engine = create_engine(url, pool_size=pool_size)
        return cls(
            settings=settings,
            engine=engine,
            read_engine=create_read_engine(url, engine, pool_size=pool_size),
            sessions=make_sessionmaker(engine),
            limiter=RateLimiter.from_url(settings.redis_url),
            box=SecretBox(
                load_or_create_server_key(settings.secret_key, settings.resolved_data_dir)
            ),
            notifier=Notifier(engine),
        )

    async def close(self) -> None:
        if self._provider_http is not None:
            await self._provider_http.aclose()
            self._provider_http = None
        if self._plain_reads is not None:
            await self._plain_reads.close()
        if self._data_version is not None:
            self._data_version.close()
        await self.notifier.close()
        await self.engine.dispose()
        if self.read_engine is not None and self.read_engine is not self.engine:
            await self.read_engine.dispose()
