"""The upload ceiling: a bare Starlette endpoint that reads a request body and throws it away.

Served by the same uvicorn as Pressroom, it measures what receiving the bytes alone costs, the
part of an upload no application code can make cheaper.
"""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def sink(request: Request) -> JSONResponse:
    received = 0
    async for chunk in request.stream():
        received += len(chunk)
    return JSONResponse({"received": received}, status_code=201)


async def ready(_request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


app = Starlette(routes=[Route("/sink", sink, methods=["POST"]), Route("/healthz", ready)])
