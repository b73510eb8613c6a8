"""The FastAPI application: middleware, routers and error handlers; nothing else."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter
from fastapi import FastAPI
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from fastapi.responses import JSONResponse
from fastapi.responses import RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.staticfiles import StaticFiles

from pressroom.agents.mounted import install_mcp
from pressroom.analytics.routes import router as analytics_router
from pressroom.channels.connect import callback_router as connect_callback_router
from pressroom.channels.connect import router as connect_router
from pressroom.channels.routes import router as channels_router
from pressroom.config import Settings
from pressroom.console.routes import install_console
from pressroom.http.middleware import ServiceMiddleware
from pressroom.http.openapi import install_openapi
from pressroom.http.pages import DOCS_PAGE
from pressroom.http.pages import DOCS_POLICY
from pressroom.http.pages import STATIC
from pressroom.http.pages import prefers_html
from pressroom.http.problems import as_problem
from pressroom.http.problems import problem_page
from pressroom.http.problems import problem_response
from pressroom.http.routing import api_routes
from pressroom.http.routing import direct_reads
from pressroom.kit.errors import PressroomError
from pressroom.media.link_routes import router as media_links_router
from pressroom.media.routes import router as media_router
from pressroom.posts.media_deletion import router as media_deletion_router
from pressroom.posts.routes import router as posts_router
from pressroom.providers.routes import router as providers_router
from pressroom.runtime import Runtime
from pressroom.scrape import install_metrics
from pressroom.tenant.routes import router as tenant_router
from pressroom.webhooks.catalog import event_catalog
from pressroom.webhooks.routes import router as webhooks_router
from pressroom.wiring import wire
from pressroom.workers.loops import default_loops
from pressroom.workers.runner import WorkerRunner

# FastAPI tries the routers in this order on every request, each route in turn (about a
# microsecond a route): the most requested first. (No two answer the same method and path.)
API_ROUTERS: list[APIRouter] = [
    tenant_router,
    posts_router,
    media_router,
    channels_router,
    webhooks_router,
    analytics_router,
    media_deletion_router,
    providers_router,
    connect_router,
    # Outside /api/v1, without a key: the provider sends the person's browser back here.
    connect_callback_router,
    # Outside /api/v1, without a key: networks fetch post media from these signed links.
    media_links_router,
]


def create_app(
    settings: Settings | None = None,
    *,
    runtime: Runtime | None = None,
    run_workers: bool = False,
) -> FastAPI:
    settings = settings or (runtime.settings if runtime else Settings())
    runtime = wire(runtime or Runtime.build(settings))

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # Long-lived objects made at start-up never become garbage: keep them out of
        # the collector's scans, and collect the young generation less often, which
        # removes most collector pauses from request latency.
        gc.collect()
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
        runner = WorkerRunner(runtime, default_loops()) if run_workers else None
        try:
            # Before serving anything: a node with another server key than the database's
            # refuses to start (ServerKeyMismatch) instead of failing every decryption.
            await runtime.verify_server_key()
            if runner:
                await runner.start()
            yield
        finally:
            if runner:
                await runner.stop()
            await runtime.close()

    app = FastAPI(
        title="Pressroom API",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
        # `/api/v1/posts/` is an unknown route (404), not a redirect built from the Host header.
        redirect_slashes=False,
        # Exception records are never exported: their messages bypass our log scrubbing.
        telemetry={
            "tracing": settings.telemetry,
            "metrics": settings.telemetry,
            "operation_spans": settings.telemetry,
            "logs": False,
        },
    )
    app.state.runtime = runtime
    for router in API_ROUTERS:
        app.include_router(router)
    _add_service_routes(app)
    install_console(app)
    _add_error_handlers(app)
    install_openapi(app, event_catalog())
    app.add_middleware(
        ServiceMiddleware, runtime=runtime, direct=direct_reads(list(app.router.routes), settings)
    )
    if settings.mcp:
        install_mcp(app, runtime)
    if settings.metrics:
        install_metrics(app, runtime)
    return app


def _add_service_routes(app: FastAPI) -> None:
    # Served from the installed package, so every page works with no internet access.
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.get("/", include_in_schema=False)
    async def home(request: Request) -> Response:
        # A browser goes to the console; an API client gets the 404 of an unknown route.
        if prefers_html(request.headers.get("accept", "")):
            return RedirectResponse("/console", status_code=303)
        raise StarletteHTTPException(status_code=404)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return HTMLResponse(DOCS_PAGE, headers={"Content-Security-Policy": DOCS_POLICY})

    @app.get("/problems/{code}", include_in_schema=False)
    async def problem(code: str, request: Request) -> Response:
        page = problem_page(code)
        if page is None:
            raise PressroomError("not_found", detail=f"No problem type {code!r}.")
        if "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(
                f"<!doctype html><title>{page['title']}</title><h1>{page['title']}</h1>"
                f"<p>HTTP {page['status']} <code>{page['code']}</code></p>"
                f"<p>{page['explanation']}</p>"
            )
        return JSONResponse(page)

    @app.get("/healthz", include_in_schema=False)
    async def health() -> JSONResponse:
        return JSONResponse({"status": "ok"})


def _add_error_handlers(app: FastAPI) -> None:
    async def render(request: Request, exc: Exception) -> Response:
        problem = as_problem(exc) or PressroomError("internal_error")
        if problem.code == "method_not_allowed":
            problem.headers["Allow"] = _allowed_methods(app, request)
        return problem_response(problem, request.state.request_id)

    app.add_exception_handler(PressroomError, render)
    app.add_exception_handler(RequestValidationError, render)
    app.add_exception_handler(StarletteHTTPException, render)


def _allowed_methods(app: FastAPI, request: Request) -> str:
    """Every method of every route on the path: Starlette's own 405 names only the methods of
    the first route it tried (POST /media, not also GET /media). The routes of included
    routers are looked at one by one (they carry their own prefix)."""
    path = request.scope["path"]
    methods: set[str] = set()
    for route in [*api_routes(list(app.router.routes)), *app.router.routes]:
        regex = getattr(route, "path_regex", None)
        if regex is not None and regex.match(path):
            methods |= getattr(route, "methods", None) or set()
    return ", ".join(sorted(methods))
