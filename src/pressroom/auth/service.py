"""Issuing, revoking and checking API keys."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from pressroom.auth.models import ApiKey
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import digest_api_key
from pressroom.kit.schema import as_utc
from pressroom.tenant.models import Member, Organization

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


async def revoke_key(session: AsyncSession, key_id: uuid.UUID) -> ApiKey:
    row = await session.get(ApiKey, key_id)
    if row is None:
        raise LookupError("no such key")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        await session.flush()
    return row


_LOOKUP = (
    select(
        ApiKey.id,
        ApiKey.name,
        ApiKey.prefix,
        ApiKey.scopes,
        ApiKey.created_at,
        ApiKey.expires_at,
        ApiKey.revoked_at,
        Member.id.label("member_id"),
        Member.email,
        Member.role,
        Organization.id.label("organization_id"),
        Organization.name.label("organization_name"),
        Organization.created_at.label("organization_created_at"),
    )
    .join(Member, Member.id == ApiKey.member_id)
    .join(Organization, Organization.id == ApiKey.organization_id)
)


async def authenticate(connection: AsyncConnection, raw_key: str) -> Principal | None:
    """The principal for a live key, or None for an unknown, revoked or expired one.

    One indexed query; the digest comparison happens in the index lookup, so the
    time taken does not depend on how much of a guessed key is right."""
    if not looks_like_key(raw_key):
        return None
    row = (
        await connection.execute(_LOOKUP.where(ApiKey.digest == digest_api_key(raw_key)))
    ).one_or_none()
    if row is None or row.revoked_at is not None:
        return None
    # Core queries skip the ORM's type processing of labelled columns on some drivers.
    expires_at = as_utc(row.expires_at) if row.expires_at else None
    if expires_at is not None and expires_at <= utcnow():
        return None
    return Principal(
        organization_id=row.organization_id,
        organization_name=row.organization_name,
        organization_created_at=as_utc(row.organization_created_at),
        member_id=row.member_id,
        member_email=row.email,
        member_role=row.role,
        credential_id=row.id,
        credential_name=row.name,
        credential_prefix=row.prefix,
        credential_created_at=as_utc(row.created_at),
        credential_expires_at=expires_at,
        scopes=frozenset(row.scopes.get("scopes", [])),
    )
