"""Signing in (a one-time link, or an API key pasted once) and signing out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Depends
from fastapi import Form
from fastapi import Query
from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import RedirectResponse
from starlette.responses import Response

from pressroom.audit import service as audit
from pressroom.audit.service import Actor
from pressroom.auth import signin
from pressroom.console.rendering import render
from pressroom.console.sessions import Visitor
from pressroom.console.sessions import check_csrf
from pressroom.console.sessions import check_origin
from pressroom.console.sessions import clear_cookie
from pressroom.console.sessions import set_cookie
from pressroom.console.sessions import visitor
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime

router = APIRouter(prefix="/console", include_in_schema=False)
Person = Annotated[Visitor, Depends(visitor)]


def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


def _actor(signed_in: signin.SignedIn) -> Actor:
    principal = signed_in.principal
    return Actor(principal.member_id, principal.credential_id, principal.credential_prefix)


async def _record(
    session: AsyncSession, request: Request, signed_in: signin.SignedIn, operation: str
) -> None:
    """Sign-ins and sign-outs go into the organization's audit ledger in their own
    transaction, naming the member and the session's credential (the key, or the session a
    link opened)."""
    by_link = signed_in.principal.credential_prefix == signin.LINK_SESSION_PREFIX
    via = "link" if by_link else "apiKey"
    await audit.append(
        session,
        organization_id=signed_in.principal.organization_id,
        actor=_actor(signed_in),
        operation_id=operation,
        outcome_status=303,
        resource_type="consoleSession",
        resource_id=str(signed_in.session_id),
        request_id=request.state.request_id,
        changes={"via": via},
    )


def _signed_in_response(request: Request, token: str) -> Response:
    response = RedirectResponse("/console", status_code=303)
    set_cookie(request, response, token)
    return response


@router.get("/sign-in")
async def sign_in_page(request: Request) -> Response:
    """The sign-in form: an API key, or how to get a link."""
    return render(request, "sign_in.html", {})


@router.post("/sign-in")
async def sign_in_with_key(
    request: Request, key: Annotated[str, Form(max_length=200)] = ""
) -> Response:
    """Open a session with an API key: it acts with the key's scopes until the key is revoked
    or expires. The key is not kept (only its id); failed attempts count against the same
    per-address limit as the API's."""
    check_origin(request)
    runtime = _runtime(request)
    principal = await runtime.authenticate(key.strip()) if key.strip() else None
    if principal is None:
        address = request.client.host if request.client else "unknown"
        limit, window = runtime.settings.auth_failure_rate
        decision = await runtime.limiter.hit("authfail", address, limit, window)
        message = (
            "Too many failed sign-ins from this address; wait a minute."
            if not decision.allowed
            else "That API key is unknown, revoked or expired."
        )
        status = 429 if not decision.allowed else 401
        return render(request, "sign_in.html", {"error": message}, status=status)
    async with unit_of_work(runtime.sessions) as session:
        token, signed_in = await signin.open_with_key(session, principal)
        await _record(session, request, signed_in, "console.signIn")
    return _signed_in_response(request, token)


@router.get("/sign-in/link")
async def sign_in_link_page(
    request: Request, token: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """A link's landing page: a button that uses it (a link scanner fetching the page does
    not use up the link)."""
    return render(request, "sign_in_link.html", {"has_token": bool(token)})


@router.post("/sign-in/link")
async def sign_in_with_link(
    request: Request, token: Annotated[str, Query(max_length=200)] = ""
) -> Response:
    """Use a one-time link: once, within 15 minutes of its issue."""
    check_origin(request)
    runtime = _runtime(request)
    try:
        async with unit_of_work(runtime.sessions) as session:
            session_token, signed_in = await signin.redeem_link(session, token)
            await _record(session, request, signed_in, "console.signIn")
    except signin.SignInRefused:
        message = (
            "This sign-in link has already been used, has expired (links last 15 minutes) or "
            "is not valid. Ask for a new one: pressroom members login-link --org ORG --member M."
        )
        return render(request, "sign_in.html", {"error": message}, status=400)
    return _signed_in_response(request, session_token)


@router.post("/sign-out")
async def sign_out(request: Request, person: Person) -> Response:
    """End the session at once; its cookie stops working everywhere."""
    await check_csrf(request, person)
    async with unit_of_work(_runtime(request).sessions) as session:
        await signin.end(session, person.token)
        await _record(session, request, person.signed_in, "console.signOut")
    response = RedirectResponse("/console/sign-in", status_code=303)
    clear_cookie(response)
    return response
