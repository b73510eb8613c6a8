"""The tenant as the API shows it."""

from __future__ import annotations

import uuid
from typing import Literal

from pressroom.kit.schema import APIModel
from pressroom.kit.schema import UTCDatetime


class TenantMember(APIModel):
    id: uuid.UUID
    email: str
    role: Literal["owner", "admin", "member"]


class TenantCredential(APIModel):
    id: uuid.UUID
    name: str
    prefix: str
    scopes: list[str]
    created_at: UTCDatetime
    expires_at: UTCDatetime | None


class Tenant(APIModel):
    """The organization selected by the API key, with the caller's member and credential."""

    id: uuid.UUID
    name: str
    created_at: UTCDatetime
    member: TenantMember
    credential: TenantCredential
