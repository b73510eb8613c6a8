"""The smallest webhook receiver: read the request body, answer 200 with no body.

Served by uvicorn over TLS for bench_webhooks.py, so the receiver costs as little as possible and
the benchmark measures the senders."""

from __future__ import annotations

from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})
