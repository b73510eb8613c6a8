"""GET /tenant."""

from __future__ import annotations

from functools import lru_cache

from fastapi import APIRouter
from starlette.responses import Response

from pressroom.auth.scopes import SCOPES
from pressroom.auth.service import Principal
from pressroom.http.access import WorkspaceRead
from pressroom.http.routing import PressroomRoute
from pressroom.tenant.schemas import Tenant
from pressroom.tenant.schemas import TenantCredential
from pressroom.tenant.schemas import TenantMember

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Tenant"])


@router.get("/tenant", operation_id="getTenant", response_model=Tenant)
async def get_tenant(principal: WorkspaceRead) -> Response:
    """Scope `workspace:read`. Read the organization selected by the API key."""
    return Response(_tenant_document(principal), media_type="application/json")


@lru_cache(maxsize=1024)
def _tenant_document(principal: Principal) -> bytes:
    """The answer, serialized as FastAPI would (by alias) once a principal: it is made of the
    principal alone, which the principal caches hand out equal until its key, member or
    organization changes (then it is another principal, and another answer)."""
    tenant = _tenant(principal)
    return tenant.__pydantic_serializer__.to_json(tenant, by_alias=True)


def _tenant(principal: Principal) -> Tenant:
    return Tenant(
        id=principal.organization_id,
        name=principal.organization_name,
        created_at=principal.organization_created_at,
        member=TenantMember(
            id=principal.member_id, email=principal.member_email, role=principal.member_role
        ),
        credential=TenantCredential(
            id=principal.credential_id,
            name=principal.credential_name,
            prefix=principal.credential_prefix,
            # In the canonical order of the specification.
            scopes=[s for s in SCOPES if s in principal.scopes],
            created_at=principal.credential_created_at,
            expires_at=principal.credential_expires_at,
        ),
    )
