"""The console's session cookie, its CSRF token, and the signed-in person of a request."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from fastapi import Request
from starlette.responses import Response

from pressroom.auth import signin
from pressroom.console.api import ConsoleApi
from pressroom.db import unit_of_work
from pressroom.runtime import Runtime

COOKIE = "pressroom_console"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"


@dataclass
class Visitor:
    """A signed-in person on this request: the session, its CSRF token, and the API as them."""

    token: str
    signed_in: signin.SignedIn
    csrf: str
    api: ConsoleApi


class SignInRequired(Exception):
    """No live session: the page sends the person to the sign-in form."""


class CsrfRefused(Exception):
    """A write without the session's CSRF token, or from another origin."""


def csrf_token(session_token: str) -> str:
    """The session's CSRF token: derived from the session's own secret, so it needs no storage
    and is worthless without the cookie (which a page of another site cannot read)."""
    mac = hmac.new(session_token.encode(), b"pressroom console csrf", hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).decode().rstrip("=")


def _runtime(request: Request) -> Runtime:
    return request.app.state.runtime  # type: ignore[no-any-return]


def set_cookie(request: Request, response: Response, token: str) -> None:
    secure = urlsplit(_runtime(request).settings.public_url).scheme == "https"
    response.set_cookie(
        COOKIE,
        token,
        httponly=True,
        samesite="lax",
        secure=secure,
        path="/console",
    )


def clear_cookie(response: Response) -> None:
    response.delete_cookie(COOKIE, path="/console")


async def visitor(request: Request) -> Visitor:
    """The signed-in person of this request; SignInRequired when there is none (no cookie,
    signed out, idle too long, or a revoked key)."""
    token = request.cookies.get(COOKIE)
    if not token:
        raise SignInRequired
    runtime = _runtime(request)
    idle = timedelta(seconds=runtime.settings.console_idle_seconds)
    async with unit_of_work(runtime.sessions) as session:
        signed_in = await signin.resume(session, token, idle=idle)
    if signed_in is None:
        raise SignInRequired
    api = ConsoleApi(request.app, signed_in.principal)
    return Visitor(token, signed_in, csrf_token(token), api)


def check_origin(request: Request) -> None:
    """A write must come from a page of this service: an `Origin` naming another site is
    refused (the sign-in forms have no session yet, so this is their protection)."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return
    own = f"{request.url.scheme}://{request.url.netloc}"
    public = _runtime(request).settings.public_url.rstrip("/")
    if origin not in (own, public):
        raise CsrfRefused


async def check_csrf(request: Request, person: Visitor) -> None:
    """Every console write carries the session's CSRF token, in the `X-CSRF-Token` header
    (htmx and uploads) or the `csrf` form field; otherwise 403."""
    check_origin(request)
    given = request.headers.get(CSRF_HEADER)
    if given is None and request.headers.get("content-type", "").startswith(
        ("application/x-www-form-urlencoded", "multipart/form-data")
    ):
        form = await request.form()
        value = form.get(CSRF_FIELD)
        given = value if isinstance(value, str) else None
    if not given or not hmac.compare_digest(given, person.csrf):
        raise CsrfRefused
