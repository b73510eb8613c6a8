"""The demo `pressroom serve --demo` sets up: an organization with its owner (made once), a
sandbox and a simulated Bluesky channel, about 90 days of history on them (analytics/demo.py),
and a fresh all-scope key for the owner each time, revoking the demo keys issued before (only
their digests are stored, so an old key cannot be shown again, and each run would otherwise leave
one more key that never expires). Every change is written to the audit ledger as the command
line's.

It lives in analytics because that is the lowest domain that may call every service it needs
(tenant, auth, channels and the analytics history)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from dataclasses import field

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.analytics.demo import create_demo_history
from pressroom.audit import service as audit
from pressroom.auth import service as auth
from pressroom.auth.models import Member
from pressroom.auth.scopes import SCOPES
from pressroom.channels import service as channels
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant

DEMO_EMAIL = "owner@demo.pressroom.example"
DEMO_KEY_NAME = "demo owner key"


@dataclass(frozen=True)
class Demo:
    organization_id: uuid.UUID
    # The owner's new key: shown once, stored only as a digest.
    key: str = field(repr=False)
    # How many earlier demo keys were revoked to make way for it.
    revoked: int = 0


async def create_demo(session: AsyncSession, runtime: Runtime) -> Demo:
    """Set up the demo organization unless it exists, and issue its owner a new key."""
    owner = await tenant.member_with_email(session, DEMO_EMAIL)
    if owner is None:
        owner = await _create_organization(session)
    organization_id = owner.organization_id
    await _connect_channels(session, runtime, organization_id)
    # After the channels: the history goes on the demo's channels.
    await _create_history(session, runtime, organization_id)
    revoked = await _revoke_earlier_keys(session, runtime, owner)
    issued = await auth.issue_key(
        session,
        organization_id=organization_id,
        member_id=owner.id,
        scopes=list(SCOPES),
        name=DEMO_KEY_NAME,
    )
    await audit.append_command_line(
        session,
        organization_id,
        "cli.keys.create",
        "apiKey",
        issued.id,
        {"name": DEMO_KEY_NAME, "scopes": list(SCOPES)},
    )
    return Demo(organization_id, issued.key, revoked)


async def _revoke_earlier_keys(session: AsyncSession, runtime: Runtime, owner: Member) -> int:
    """Revoke the demo keys of earlier runs that still work; how many."""
    earlier = [
        key
        for key in await auth.keys_of(session, owner.organization_id, owner.id)
        if key.name == DEMO_KEY_NAME and key.revoked_at is None
    ]
    for key in earlier:
        await auth.revoke_key(session, key.id, runtime.notifier)
        await audit.append_command_line(
            session, owner.organization_id, "cli.keys.revoke", "apiKey", key.id, {"revoked": True}
        )
    return len(earlier)


async def _create_organization(session: AsyncSession) -> Member:
    """The demo organization and its owner."""
    organization = await tenant.create_organization(session, "Demo organization")
    owner = await tenant.add_member(session, organization.id, DEMO_EMAIL, "owner")
    await audit.append_command_line(
        session,
        organization.id,
        "cli.demo.create",
        "organization",
        organization.id,
        {"name": organization.name},
    )
    return owner


async def _connect_channels(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID
) -> None:
    """A sandbox channel and a simulated Bluesky channel, so the demo can publish at once."""
    made = await channels.connect_demo_channels(session, runtime, organization_id=organization_id)
    for channel in made:
        changes = {
            "provider": channel.provider,
            "name": channel.name,
            "simulated": channel.simulated,
        }
        await audit.append_command_line(
            session, organization_id, "cli.channels.connect", "channel", channel.id, changes
        )


async def _create_history(
    session: AsyncSession, runtime: Runtime, organization_id: uuid.UUID
) -> None:
    """About 90 days of published history, for the analytics charts (once)."""
    imported = await create_demo_history(session, runtime, organization_id)
    if imported:
        changes = {"imported": imported, "source": "demo"}
        await audit.append_command_line(
            session,
            organization_id,
            "cli.analytics.import",
            "organization",
            organization_id,
            changes,
        )
