"""The ceiling of bench_webhooks.py: a bare httpx client sending signed webhook requests.

Signs each request as the worker does (Standard Webhooks v1 over id.timestamp.body) and posts it
over HTTP/1.1 keep-alive with `--concurrency` requests in flight, nothing else: no database, no
leases, no bookkeeping. Prints {"requests", "seconds", "rps", "cpu_ms_per_request", "statuses"}
as JSON.

    python bench/webhook_ceiling.py --url https://127.0.0.1:PORT/hook --ca CA.pem --body FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pressroom.kit.outbound.transport import SOCKET_OPTIONS
from pressroom.webhooks.signing import generate_secret
from pressroom.webhooks.signing import signature_header


async def run(url: str, ca: str, body: bytes, requests: int, concurrency: int) -> dict[str, object]:
    secret = generate_secret()
    context = ssl.create_default_context(cafile=ca)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    # The same socket option the delivery transport sets, so only the work differs.
    transport = httpx.AsyncHTTPTransport(
        verify=context, limits=limits, http2=False, socket_options=list(SOCKET_OPTIONS)
    )
    statuses: Counter[int] = Counter()
    remaining = iter(range(requests))
    # The worker's attempt timeout (PRESSROOM_WEBHOOK_TIMEOUT_SECONDS' default), not httpx's 5 s,
    # which a loaded machine can exceed.
    async with httpx.AsyncClient(transport=transport, timeout=10.0) as client:

        async def sender() -> None:
            for _ in remaining:
                event_id = str(uuid.uuid4())
                timestamp = int(time.time())
                headers = {
                    "Content-Type": "application/json",
                    "Webhook-Id": event_id,
                    "Webhook-Timestamp": str(timestamp),
                    "Webhook-Signature": signature_header([secret], event_id, timestamp, body),
                }
                response = await client.post(url, content=body, headers=headers)
                statuses[response.status_code] += 1

        # Warm up the connections, then measure.
        await asyncio.gather(*(client.post(url, content=body) for _ in range(concurrency)))
        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(sender() for _ in range(concurrency)))
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "requests": requests,
        "seconds": round(seconds, 3),
        "rps": round(requests / seconds, 1),
        "cpu_ms_per_request": round(cpu * 1000 / requests, 3),
        "statuses": {str(k): v for k, v in statuses.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--body", required=True, help="file holding one event's bytes")
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    body = Path(args.body).read_bytes()
    result = asyncio.run(run(args.url, args.ca, body, args.requests, args.concurrency))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
