"""The framework ceiling: a bare Starlette JSON endpoint, nothing else (and, for write paths,
one that parses a JSON body and answers it)."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def hello(_request: Request) -> JSONResponse:
    return JSONResponse({"id": "00000000-0000-7000-8000-000000000000", "name": "ceiling"})


async def echo(request: Request) -> JSONResponse:
    return JSONResponse(await request.json(), status_code=201)


app = Starlette(routes=[Route("/json", hello), Route("/echo", echo, methods=["POST"])])
