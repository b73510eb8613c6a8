"""Console sign-in: one-time links, and sessions opened by a link or by an API key.

Links and session tokens carry 256 random bits and are stored only as SHA-256 digests (like
API keys), so the database never holds anything a browser could present."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import delete
from sqlalchemy import or_
from sqlalchemy import select
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.models import ApiKey
from pressroom.auth.models import ConsoleSession
from pressroom.auth.models import Member
from pressroom.auth.models import Organization
from pressroom.auth.models import SignInLink
from pressroom.auth.scopes import SCOPES
from pressroom.auth.service import Principal
from pressroom.auth.service import principal_from_row
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import digest_api_key
from pressroom.kit.schema import as_utc

LINK_PREFIX = "prl_"
SESSION_PREFIX = "prs_"
LINK_LIFETIME = timedelta(minutes=15)
# A session's last-seen time is written at most this often: not on every page.
_TOUCH_EVERY = timedelta(seconds=60)
# What the audit ledger names as the credential of a session opened by a link.
LINK_SESSION_PREFIX = "console"


class SignInRefused(Exception):
    """A sign-in link that is unknown, already used or expired (the reason is not told apart,
    so a guess learns nothing)."""


@dataclass(frozen=True)
class IssuedLink:
    id: uuid.UUID
    token: str
    expires_at: datetime


@dataclass(frozen=True)
class SignedIn:
    """A live console session: its id and the principal it acts as."""

    session_id: uuid.UUID
    principal: Principal


def _token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


async def issue_link(
    session: AsyncSession, *, organization_id: uuid.UUID, member_id: uuid.UUID
) -> IssuedLink:
    member = await session.get(Member, member_id)
    if member is None or member.organization_id != organization_id:
        raise LookupError("no such member in this organization")
    token = _token(LINK_PREFIX)
    now = utcnow()
    row = SignInLink(
        organization_id=organization_id,
        member_id=member_id,
        digest=digest_api_key(token),
        created_at=now,
        expires_at=now + LINK_LIFETIME,
    )
    session.add(row)
    await session.flush()
    return IssuedLink(id=row.id, token=token, expires_at=row.expires_at)


async def redeem_link(session: AsyncSession, token: str) -> tuple[str, SignedIn]:
    """Use a link once: a new session's token and who it signs in. SignInRefused when the link
    is unknown, used or expired. The use is one conditional UPDATE, so two requests racing
    with the same link cannot both win."""
    if not token.startswith(LINK_PREFIX) or len(token) > 128:
        raise SignInRefused
    now = utcnow()
    digest = digest_api_key(token)
    claimed = await session.execute(
        update(SignInLink)
        .where(
            SignInLink.digest == digest,
            SignInLink.used_at.is_(None),
            SignInLink.expires_at > now,
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    if getattr(claimed, "rowcount", 0) != 1:
        raise SignInRefused
    link = (await session.scalars(select(SignInLink).where(SignInLink.digest == digest))).one()
    return await _open(session, link.organization_id, link.member_id, None)


async def open_with_key(session: AsyncSession, principal: Principal) -> tuple[str, SignedIn]:
    """A session acting with an authenticated API key's scopes; it ends with the key."""
    return await _open(session, principal.organization_id, principal.member_id, principal)


async def _open(
    session: AsyncSession,
    organization_id: uuid.UUID,
    member_id: uuid.UUID,
    key: Principal | None,
) -> tuple[str, SignedIn]:
    token = _token(SESSION_PREFIX)
    now = utcnow()
    row = ConsoleSession(
        organization_id=organization_id,
        member_id=member_id,
        api_key_id=key.credential_id if key else None,
        digest=digest_api_key(token),
        created_at=now,
        last_seen_at=now,
    )
    session.add(row)
    await session.flush()
    signed_in = await resume(session, token, idle=timedelta(days=1))
    assert signed_in is not None
    return token, signed_in


async def resume(session: AsyncSession, token: str, *, idle: timedelta) -> SignedIn | None:
    """The live session of a cookie's token, or None: unknown, signed out, idle for longer
    than `idle`, or opened by a key since revoked or expired. Marks it seen."""
    if not token.startswith(SESSION_PREFIX) or len(token) > 128:
        return None
    now = utcnow()
    found = (
        await session.execute(
            select(ConsoleSession, Member, Organization)
            .join(Member, Member.id == ConsoleSession.member_id)
            .join(Organization, Organization.id == ConsoleSession.organization_id)
            .where(ConsoleSession.digest == digest_api_key(token))
        )
    ).one_or_none()
    if found is None:
        return None
    row, member, organization = found
    if row.ended_at is not None or as_utc(row.last_seen_at) + idle <= now:
        return None
    principal = await _principal(session, row, member, organization)
    if principal is None:
        return None
    if now - as_utc(row.last_seen_at) >= _TOUCH_EVERY:
        row.last_seen_at = now
        await session.flush()
    return SignedIn(session_id=row.id, principal=principal)


async def _principal(
    session: AsyncSession, row: ConsoleSession, member: Member, organization: Organization
) -> Principal | None:
    """A link's session acts as the member with every scope (their role still decides what
    only owners and admins may do); a key's session acts with that key, while it is live (the
    API's own check of a key: revoked, expired)."""
    credential: Any = SimpleNamespace(
        id=row.id,
        name="console session",
        prefix=LINK_SESSION_PREFIX,
        scopes={"scopes": list(SCOPES)},
        created_at=row.created_at,
        expires_at=None,
        revoked_at=None,
    )
    if row.api_key_id is not None:
        credential = await session.get(ApiKey, row.api_key_id)
        if credential is None:
            return None
    return principal_from_row(
        SimpleNamespace(
            credential_id=credential.id,
            credential_name=credential.name,
            credential_prefix=credential.prefix,
            scopes=credential.scopes,
            credential_created_at=credential.created_at,
            expires_at=credential.expires_at,
            revoked_at=credential.revoked_at,
            member_id=member.id,
            member_email=member.email,
            member_role=member.role,
            organization_id=organization.id,
            organization_name=organization.name,
            organization_created_at=organization.created_at,
        )
    )


async def end(session: AsyncSession, token: str) -> None:
    """Sign out: the session's token stops working at once."""
    await session.execute(
        update(ConsoleSession)
        .where(ConsoleSession.digest == digest_api_key(token), ConsoleSession.ended_at.is_(None))
        .values(ended_at=utcnow())
        .execution_options(synchronize_session=False)
    )


# Kept a day past their end, then removed: a used or expired link and an ended or idle session
# open nothing, and their rows would otherwise only grow.
_KEEP = timedelta(days=1)


async def purge_stale(session: AsyncSession, *, idle: timedelta) -> int:
    """Remove links expired and sessions ended or idle for more than a day; how many."""
    cutoff = utcnow() - _KEEP
    links = await session.execute(delete(SignInLink).where(SignInLink.expires_at < cutoff))
    sessions = await session.execute(
        delete(ConsoleSession).where(
            or_(ConsoleSession.ended_at < cutoff, ConsoleSession.last_seen_at < cutoff - idle)
        )
    )
    return int(getattr(links, "rowcount", 0)) + int(getattr(sessions, "rowcount", 0))
