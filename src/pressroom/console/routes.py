"""Installs the console on the application: its pages, static files and error pages."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi import Request
from starlette.requests import ClientDisconnect
from starlette.responses import RedirectResponse
from starlette.responses import Response
from starlette.staticfiles import StaticFiles

from pressroom.console import composer
from pressroom.console import media
from pressroom.console import overview
from pressroom.console import posts
from pressroom.console import signing_in
from pressroom.console.acting import Refused
from pressroom.console.acting import refused
from pressroom.console.operations import OPERATIONS_ROUTERS
from pressroom.console.rendering import render
from pressroom.console.sessions import CsrfRefused
from pressroom.console.sessions import SignInRequired

_HERE = Path(__file__).parent


def install_console(app: FastAPI) -> None:
    for router in (
        signing_in.router,
        overview.router,
        posts.router,
        composer.router,
        media.router,
        *OPERATIONS_ROUTERS,
    ):
        app.include_router(router)
    app.mount("/console/static", StaticFiles(directory=str(_HERE / "static")), name="console")

    async def sign_in_first(request: Request, _exc: Exception) -> Response:
        if request.headers.get("hx-request"):
            # htmx follows this header with a full page load.
            return Response(status_code=401, headers={"HX-Redirect": "/console/sign-in"})
        return RedirectResponse("/console/sign-in", status_code=303)

    async def csrf_refused(request: Request, _exc: Exception) -> Response:
        message = (
            "This form was refused: it did not carry this session's security token (CSRF). "
            "Reload the page and try again."
        )
        return render(request, "error.html", {"error": message}, status=403)

    async def api_refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, Refused)
        return refused(request, exc.person, exc.answer)

    async def gone(_request: Request, _exc: Exception) -> Response:
        # The browser left mid-request (a newer live count replaced this one): nobody to answer.
        return Response(status_code=400)

    app.add_exception_handler(ClientDisconnect, gone)
    app.add_exception_handler(SignInRequired, sign_in_first)
    app.add_exception_handler(CsrfRefused, csrf_refused)
    app.add_exception_handler(Refused, api_refused)
