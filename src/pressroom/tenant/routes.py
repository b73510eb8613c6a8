"""GET /tenant."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from pressroom.auth.scopes import SCOPES
from pressroom.auth.service import Principal
from pressroom.http.access import WorkspaceRead
from pressroom.http.documents import model_response
from pressroom.http.routing import PressroomRoute
from pressroom.tenant.schemas import Tenant
from pressroom.tenant.schemas import TenantCredential
from pressroom.tenant.schemas import TenantMember

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Tenant"])


@router.get("/tenant", operation_id="getTenant", response_model=Tenant)
async def get_tenant(principal: WorkspaceRead) -> Response:
    """Scope `workspace:read`. Read the organization selected by the API key."""
    # Serialized once, as FastAPI would (by alias), without validating the model again.
    return model_response(_tenant(principal))


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
