"""Creating organizations and adding members (bootstrap is the command line's job), and finding
them."""

from __future__ import annotations

import re
import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.auth.models import ROLES
from pressroom.auth.models import Member
from pressroom.auth.models import Organization

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


async def create_organization(session: AsyncSession, name: str) -> Organization:
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise ValueError("organization name must be 1-200 characters")
    organization = Organization(name=name)
    session.add(organization)
    await session.flush()
    return organization


async def add_member(
    session: AsyncSession, organization_id: uuid.UUID, email: str, role: str
) -> Member:
    email = email.strip().lower()
    if not _EMAIL.match(email) or len(email) > 320:
        raise ValueError(f"{email!r} is not an email address")
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}")
    await require_organization(session, organization_id)
    existing = await session.scalar(
        select(Member).where(Member.organization_id == organization_id, Member.email == email)
    )
    if existing is not None:
        raise ValueError(f"{email} is already a member of this organization")
    member = Member(organization_id=organization_id, email=email, role=role)
    session.add(member)
    await session.flush()
    return member


async def require_organization(session: AsyncSession, organization_id: uuid.UUID) -> Organization:
    """The organization; LookupError if none has this id."""
    organization = await session.get(Organization, organization_id)
    if organization is None:
        raise LookupError("no such organization")
    return organization


async def member_with_email(session: AsyncSession, email: str) -> Member | None:
    """A member with this address, in whichever organization (the first found)."""
    return await session.scalar(select(Member).where(Member.email == email.strip().lower()))


async def organizations(session: AsyncSession) -> list[Organization]:
    """Every organization, oldest first (the command line's listing)."""
    statement = select(Organization).order_by(Organization.created_at, Organization.id)
    return list((await session.scalars(statement)).all())


async def members_of(session: AsyncSession, organization_id: uuid.UUID) -> list[Member]:
    """The organization's members, oldest first; LookupError if there is no such organization."""
    await require_organization(session, organization_id)
    statement = (
        select(Member)
        .where(Member.organization_id == organization_id)
        .order_by(Member.created_at, Member.id)
    )
    return list((await session.scalars(statement)).all())
