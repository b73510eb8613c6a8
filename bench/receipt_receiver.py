"""A webhook receiver that notes when each event arrived: one line per request,
`<wall-clock seconds> <event type> <post id>`, appended to RECEIPT_LOG. Answers 200 at once.
Served by uvicorn over TLS for bench_receipt.py."""

from __future__ import annotations

import json
import os
import time
from typing import Any

_LOG = open(os.environ["RECEIPT_LOG"], "a", buffering=1)  # noqa: SIM115


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    arrived = time.time()
    try:
        event = json.loads(body)
        post_id = event["data"]["post"]["id"]
        _LOG.write(f"{arrived:.6f} {event['type']} {post_id}\n")
    except (ValueError, KeyError, TypeError):
        pass
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
    )
    await send({"type": "http.response.body", "body": b""})
