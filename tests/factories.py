"""Plain factory functions for tests."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from pressroom.auth import service as auth
from pressroom.auth.scopes import SCOPES
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime
from pressroom.tenant import service as tenant_service

# The server key of every test on the shared test database (conftest's settings use it too): a
# database accepts only the key it was first used with, and a key must be strong.
SERVER_KEY = "BavhibUOnsFgB3EjUUux2oLhBctTeRpr9Av6xaRSzTE"


@dataclass
class Tenant:
    organization_id: uuid.UUID
    member_id: uuid.UUID
    key: str
    key_id: uuid.UUID

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


async def make_tenant(
    runtime: Runtime, *, name: str = "Acme", role: str = "owner", scopes: list[str] | None = None
) -> Tenant:
    async with unit_of_work(runtime.sessions) as session:
        organization = await tenant_service.create_organization(session, name)
        member = await tenant_service.add_member(
            session, organization.id, f"{role}-{uuid.uuid4().hex[:8]}@example.com", role
        )
        issued = await auth.issue_key(
            session,
            organization_id=organization.id,
            member_id=member.id,
            scopes=list(scopes if scopes is not None else SCOPES),
        )
    return Tenant(organization.id, member.id, issued.key, issued.id)


async def add_member_with_key(
    runtime: Runtime,
    organization_id: uuid.UUID,
    *,
    role: str = "member",
    scopes: list[str] | None = None,
    expires_in: int | None = None,
) -> Tenant:
    """Another person of an existing organization, with their own key."""
    async with unit_of_work(runtime.sessions) as session:
        member = await tenant_service.add_member(
            session, organization_id, f"{role}-{uuid.uuid4().hex[:8]}@example.com", role
        )
        issued = await auth.issue_key(
            session,
            organization_id=organization_id,
            member_id=member.id,
            scopes=list(scopes if scopes is not None else SCOPES),
            expires_in=expires_in,
        )
    return Tenant(organization_id, member.id, issued.key, issued.id)
