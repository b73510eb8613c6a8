"""Typed dependencies: the caller, the scope an operation needs, the role it needs."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Annotated
from typing import Any

from fastapi import Depends
from fastapi import Request

from pressroom.auth.scopes import MANAGER_ROLES
from pressroom.auth.service import Principal
from pressroom.kit.errors import PressroomError


def insufficient_scope(scope: str) -> PressroomError:
    return PressroomError(
        "insufficient_scope",
        detail=f"This operation requires the scope {scope}, which the API key lacks.",
        extra={"requiredScope": scope},
    )


def insufficient_role() -> PressroomError:
    return PressroomError(
        "insufficient_role",
        detail="This operation requires an organization owner or admin.",
    )


def check_access(principal: Principal | None, scope: str | None, manager_only: bool) -> Principal:
    """The checks in the contract's order: 401, then 403 scope, then 403 role."""
    if principal is None:
        raise PressroomError("unauthenticated")
    if scope is not None and scope not in principal.scopes:
        raise insufficient_scope(scope)
    if manager_only and principal.member_role not in MANAGER_ROLES:
        raise insufficient_role()
    return principal


def require(scope: str, *, manager_only: bool = False) -> Callable[..., Awaitable[Principal]]:
    """A dependency that yields the caller if the key has `scope` (and, for webhook
    lifecycle operations, the member is an owner or admin). The route layer reads
    `required_scope` and `manager_only` to run these checks before idempotency."""

    async def dependency(request: Request) -> Principal:
        return check_access(getattr(request.state, "principal", None), scope, manager_only)

    dependency.required_scope = scope  # type: ignore[attr-defined]
    dependency.manager_only = manager_only  # type: ignore[attr-defined]
    return dependency


def requirements_of(call: Any) -> tuple[str | None, bool]:
    return getattr(call, "required_scope", None), bool(getattr(call, "manager_only", False))


BodyRoleCheck = Callable[[Principal, bytes], None]


def manager_only_when(decides: Callable[[Any], bool]) -> Callable[..., Awaitable[None]]:
    """A dependency for operations where some requests need an owner or admin: those whose
    JSON body `decides` (a post's approval decision). The route layer runs the check on the
    raw body right after the scope check, so the 403 comes before idempotency and before
    any 400 or 404 (contract section 2); as a dependency it holds outside that layer too."""

    def check(principal: Principal, body: bytes) -> None:
        try:
            parsed = json.loads(body) if body.strip() else None
        except ValueError:
            return  # not JSON: the 400 that follows says so
        if decides(parsed) and principal.member_role not in MANAGER_ROLES:
            raise insufficient_role()

    async def dependency(request: Request) -> None:
        check(request.state.principal, await request.body())

    dependency.body_role_check = check  # type: ignore[attr-defined]
    return dependency


def body_role_check_of(call: Any) -> BodyRoleCheck | None:
    return getattr(call, "body_role_check", None)


WorkspaceRead = Annotated[Principal, Depends(require("workspace:read"))]
ChannelsRead = Annotated[Principal, Depends(require("channels:read"))]
ChannelsWrite = Annotated[Principal, Depends(require("channels:write"))]
PostsRead = Annotated[Principal, Depends(require("posts:read"))]
PostsWrite = Annotated[Principal, Depends(require("posts:write"))]
AnalyticsRead = Annotated[Principal, Depends(require("analytics:read"))]
MediaRead = Annotated[Principal, Depends(require("media:read"))]
MediaWrite = Annotated[Principal, Depends(require("media:write"))]
WebhooksRead = Annotated[Principal, Depends(require("webhooks:read"))]
WebhooksManage = Annotated[Principal, Depends(require("webhooks:write", manager_only=True))]
