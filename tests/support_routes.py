"""Routes that exist only in tests, to exercise the cross-cutting layer (transaction,
idempotency, audit, pagination, error rendering) with real rows before domain routes do."""

from __future__ import annotations

import uuid
from typing import Literal

from fastapi import APIRouter
from fastapi import Response
from pydantic import EmailStr
from sqlalchemy import select

from pressroom.auth.models import Member
from pressroom.http.access import PostsRead
from pressroom.http.access import PostsWrite
from pressroom.http.routing import Audit
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import Session
from pressroom.kit.errors import field_error
from pressroom.kit.pagination import Collection
from pressroom.kit.pagination import Pagination
from pressroom.kit.pagination import paginate
from pressroom.kit.schema import APIInput
from pressroom.kit.schema import APIModel
from pressroom.kit.schema import UTCDatetime
from pressroom.tenant import service as tenant_service

router = APIRouter(route_class=PressroomRoute, prefix="/api/v1/test")


class MemberCreate(APIInput):
    email: EmailStr
    role: Literal["owner", "admin", "member"] = "member"
    fail_after_write: bool = False


class MemberOut(APIModel):
    id: uuid.UUID
    email: str
    role: str
    created_at: UTCDatetime


@router.post(
    "/members",
    status_code=201,
    operation_id="createTestMember",
    openapi_extra={"x-idempotent": True},
)
async def create_member(
    body: MemberCreate, principal: PostsWrite, session: Session, audit: Audit, response: Response
) -> MemberOut:
    member = await tenant_service.add_member(
        session, principal.organization_id, body.email, body.role
    )
    audit.set(
        "member", member.id, {"email": body.email, "role": body.role, "apiKey": "prk_" + "s" * 43}
    )
    if body.fail_after_write:
        # The member row was flushed; the 400 must roll it back.
        raise field_error("failAfterWrite", "invalid", "asked to fail after writing")
    response.headers["Location"] = f"/api/v1/test/members/{member.id}"
    return MemberOut.model_validate(member)


@router.get("/members", operation_id="listTestMembers")
async def list_members(
    principal: PostsRead, session: Session, runtime: RuntimeDep, page: Pagination
) -> Collection[MemberOut]:
    rows, next_cursor = await paginate(
        session,
        select(Member).where(Member.organization_id == principal.organization_id),
        model=Member,
        params=page,
        box=runtime.box,
        collection="test-members",
    )
    return Collection[MemberOut](
        items=[MemberOut.model_validate(r) for r in rows], next_cursor=next_cursor
    )


@router.get("/boom", operation_id="testBoom")
async def boom(principal: PostsRead) -> None:
    raise RuntimeError("database password is hunter2 and key prk_" + "z" * 43)


@router.post("/members/twice", status_code=201, operation_id="createTestMemberTwice")
async def create_member_twice(body: MemberCreate, principal: PostsWrite, session: Session) -> None:
    """Adds the same member twice: the database refuses the second (an unexpected 500),
    with the email among the failed statement's parameters."""
    for _ in range(2):
        session.add(
            Member(organization_id=principal.organization_id, email=body.email, role="member")
        )
        await session.flush()
