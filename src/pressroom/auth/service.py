"""Issuing, revoking and checking API keys."""

from __future__ import annotations

import json
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.models import ApiKey
from pressroom.auth.models import Member
from pressroom.auth.models import Organization
from pressroom.kit.attributes import from_attributes
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import digest_api_key
from pressroom.kit.data_version import DataVersion
from pressroom.kit.notify import Notifier
from pressroom.kit.plain_reads import PlainReads
from pressroom.kit.schema import as_utc

KEY_PREFIX = "prk_"
# prk_ + 43 base64url characters = 256 random bits.
_KEY_BYTES = 32
_DISPLAY_PREFIX_LENGTH = 12


@dataclass(frozen=True)
class Principal:
    """The caller: an organization, the member (person), and the credential in use."""

    organization_id: uuid.UUID
    organization_name: str
    organization_created_at: datetime
    member_id: uuid.UUID
    member_email: str
    member_role: str
    credential_id: uuid.UUID
    credential_name: str
    credential_prefix: str
    credential_created_at: datetime
    credential_expires_at: datetime | None
    scopes: frozenset[str]


@dataclass(frozen=True)
class IssuedKey:
    id: uuid.UUID
    key: str
    prefix: str


def looks_like_key(raw: str) -> bool:
    return raw.startswith(KEY_PREFIX) and 20 <= len(raw) <= 128


async def issue_key(
    session: AsyncSession,
    *,
    organization_id: uuid.UUID,
    member_id: uuid.UUID,
    scopes: list[str],
    name: str | None = None,
    expires_in: int | None = None,
) -> IssuedKey:
    member = await session.get(Member, member_id)
    if member is None or member.organization_id != organization_id:
        raise LookupError("no such member in this organization")
    key = KEY_PREFIX + secrets.token_urlsafe(_KEY_BYTES)
    prefix = key[:_DISPLAY_PREFIX_LENGTH]
    now = utcnow()
    row = ApiKey(
        organization_id=organization_id,
        member_id=member_id,
        name=name or f"key {prefix}",
        prefix=prefix,
        digest=digest_api_key(key),
        scopes={"scopes": scopes},
        expires_at=now + timedelta(seconds=expires_in) if expires_in else None,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    await session.flush()
    return IssuedKey(id=row.id, key=key, prefix=prefix)


# Announced whenever a credential stops being valid, so every node drops cached principals.
CREDENTIALS_CHANNEL = "pressroom_credentials"


async def keys_of(
    session: AsyncSession, organization_id: uuid.UUID, member_id: uuid.UUID | None = None
) -> list[ApiKey]:
    """The organization's keys (revoked and expired ones too), oldest first; only one member's
    when `member_id` is given."""
    statement = select(ApiKey).where(ApiKey.organization_id == organization_id)
    if member_id is not None:
        statement = statement.where(ApiKey.member_id == member_id)
    return list((await session.scalars(statement.order_by(ApiKey.created_at, ApiKey.id))).all())


async def revoke_key(session: AsyncSession, key_id: uuid.UUID, notifier: Notifier) -> ApiKey:
    row = await session.get(ApiKey, key_id)
    if row is None:
        raise LookupError("no such key")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        await session.flush()
    await notifier.notify(session, CREDENTIALS_CHANNEL)
    return row


class PrincipalCache:
    """Principals of recently seen keys, for PostgreSQL deployments.

    Used only while this process listens for credential changes: a revocation in any
    process clears it (on commit here, by NOTIFY elsewhere); a lost listener clears it
    and bypasses it until listening again. Expiry is still checked on every request,
    failed lookups are never cached, and an entry lives at most `ttl` seconds."""

    def __init__(self, ttl: float = 30.0, max_entries: int = 10_000) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: dict[str, tuple[Principal, float]] = {}
        # Bumped by every clear: a lookup that began before a revocation must not
        # store what it read once the revocation has cleared the cache.
        self.generation = 0

    def get(self, digest: str, now: float) -> Principal | None:
        entry = self._entries.get(digest)
        if entry is None:
            return None
        principal, stored_at = entry
        if now - stored_at > self.ttl:
            del self._entries[digest]
            return None
        expires = principal.credential_expires_at
        if expires is not None and expires <= utcnow():
            del self._entries[digest]
            return None
        return principal

    def put(self, digest: str, principal: Principal, now: float, generation: int) -> None:
        if generation != self.generation:
            return
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[digest] = (principal, now)

    def clear(self) -> None:
        self.generation += 1
        self._entries.clear()


class SQLitePrincipalCache:
    """Principals of recently seen keys on a SQLite file, each used only while nothing a
    principal is made of has changed since it was read.

    Every request reads the file's `DataVersion` first. Only when it moved (a commit by any
    connection, of this process or another) is the count of credential changes read:
    `credential_changes`, which triggers move on every update or deletion of a key, a member
    or an organization (migration 0015). When that count moved, the cache is emptied before
    anything is served from it; commits to anything else (posts, events, deliveries) keep
    it. A principal is stored under the count read before its lookup began (the lookup's
    snapshot is that state or a later one), so a cached principal is always what a lookup
    would read now: a revocation, a removed member or a changed role takes effect on the next
    request. Expiry is checked on every request; failed lookups are never cached."""

    def __init__(self, versions: DataVersion, ttl: float = 30.0, max_entries: int = 10_000) -> None:
        self._versions = versions
        self._entries = PrincipalCache(ttl, max_entries)
        # The count of credential changes the entries were read at, and the file's version
        # at which that count was last read.
        self._version: int | None = None
        self._file_version: int | None = None

    def version(self) -> int | None:
        """The count of credential changes now (the cache emptied if it moved), or None when
        it cannot be read at once (the cache is then not to be used)."""
        file_version = self._versions.read()
        if file_version is not None and file_version == self._file_version:
            return self._version
        changes = None if file_version is None else self._versions.read_number(_CHANGES)
        if changes is None or changes != self._version:
            self._entries.clear()
            self._version = changes
        self._file_version = None if changes is None else file_version
        return changes

    def get(self, digest: str, version: int, now: float) -> Principal | None:
        if version != self._version:
            return None
        return self._entries.get(digest, now)

    def put(self, digest: str, principal: Principal, version: int, now: float) -> None:
        """Keep a principal read after `version` was read, unless the database has moved
        since."""
        if version == self._version:
            self._entries.put(digest, principal, now, self._entries.generation)


# The count of credential changes (migration 0015's table, moved by its triggers).
_CHANGES = "SELECT count FROM credential_changes WHERE id = 1"

_LOOKUP = (
    select(
        ApiKey.id.label("credential_id"),
        ApiKey.name.label("credential_name"),
        ApiKey.prefix.label("credential_prefix"),
        ApiKey.scopes,
        ApiKey.created_at.label("credential_created_at"),
        ApiKey.expires_at,
        ApiKey.revoked_at,
        Member.id.label("member_id"),
        Member.email.label("member_email"),
        Member.role.label("member_role"),
        Organization.id.label("organization_id"),
        Organization.name.label("organization_name"),
        Organization.created_at.label("organization_created_at"),
    )
    .join(Member, Member.id == ApiKey.member_id)
    .join(Organization, Organization.id == ApiKey.organization_id)
    # Built once with a bound parameter: SQLAlchemy reuses its compiled form on every request.
    .where(ApiKey.digest == bindparam("digest"))
)


async def authenticate(connection: AsyncConnection, raw_key: str) -> Principal | None:
    """The principal for a live key, or None for an unknown, revoked or expired one.

    One indexed query; the digest comparison happens in the index lookup, so the
    time taken does not depend on how much of a guessed key is right."""
    if not looks_like_key(raw_key):
        return None
    return await lookup(connection, digest_api_key(raw_key))


async def lookup(connection: AsyncConnection, digest: str) -> Principal | None:
    """The principal for a live key, by the key's digest."""
    row = (await connection.execute(_LOOKUP, {"digest": digest})).one_or_none()
    return principal_from_row(row)


# The same lookup as _LOOKUP, for the PostgreSQL fast path (see PostgresKeyLookup).
LOOKUP_SQL = """
SELECT k.id AS credential_id, k.name AS credential_name, k.prefix AS credential_prefix,
       k.scopes::text AS scopes, k.created_at AS credential_created_at, k.expires_at,
       k.revoked_at, m.id AS member_id, m.email AS member_email, m.role AS member_role,
       o.id AS organization_id, o.name AS organization_name,
       o.created_at AS organization_created_at
FROM api_keys k
JOIN members m ON m.id = k.member_id
JOIN organizations o ON o.id = k.organization_id
WHERE k.digest = $1
"""


class PostgresKeyLookup:
    """Authenticates with a prepared statement on the plain read connections
    (kit/plain_reads.py).

    Every API request runs this lookup; through the ORM's connection pool and result
    machinery it costs about three times the database round trip itself."""

    def __init__(self, reads: PlainReads) -> None:
        self._reads = reads

    async def authenticate(self, raw_key: str) -> Principal | None:
        if not looks_like_key(raw_key):
            return None
        return await self.lookup(digest_api_key(raw_key))

    async def lookup(self, digest: str) -> Principal | None:
        record = await self._reads.fetchrow(LOOKUP_SQL, digest)
        if record is None:
            return None
        values = dict(record)
        values["scopes"] = json.loads(values["scopes"])
        return principal_from_row(SimpleNamespace(**values))


def principal_from_row(row: Any) -> Principal | None:
    """The principal of a row naming its fields as `Principal` does (the credential's
    `expires_at`, `revoked_at` and `scopes` as stored), or None for a missing, revoked or
    expired credential."""
    if row is None or row.revoked_at is not None:
        return None
    # Core queries skip the ORM's type processing of labelled columns on some drivers.
    expires_at = as_utc(row.expires_at) if row.expires_at else None
    if expires_at is not None and expires_at <= utcnow():
        return None
    return from_attributes(
        Principal,
        row,
        organization_created_at=as_utc(row.organization_created_at),
        credential_created_at=as_utc(row.credential_created_at),
        credential_expires_at=expires_at,
        scopes=frozenset(row.scopes.get("scopes", [])),
    )
