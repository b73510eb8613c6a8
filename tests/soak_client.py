"""One client of the soak test (tests/test_soak.py), in a process of its own.

Kept apart from the test module, and importing nothing but httpx, so that the three client
processes start in a fraction of a second instead of importing the whole service."""

from __future__ import annotations

import random
import time
import traceback
from collections import Counter
from typing import Any

import httpx

# How often each operation is picked: writes that make events, and the reads beside them.
WEIGHTS = {
    "createPost": 3,
    "listPosts": 2,
    "getPost": 2,
    "sendWebhookTest": 2,
    "uploadMedia": 1,
    "listChannels": 1,
    "listWebhookDeliveries": 1,
    "getTenant": 1,
}


def client_process(
    go: Any,
    out: Any,
    base: str,
    key: str,
    channels: list[str],
    endpoint: str,
    picture: bytes,
    seconds: float,
    seed: int,
) -> None:
    """Say `ready`, wait for `go`, then drive traffic for `seconds` and put what it did."""
    try:
        out.put(("ready", seed, None))
        if not go.wait(180):
            raise RuntimeError("never told to go")
        out.put(("done", seed, drive(base, key, channels, endpoint, picture, seconds, seed)))
    except BaseException:
        out.put(("error", seed, traceback.format_exc()))


def drive(
    base: str,
    key: str,
    channels: list[str],
    endpoint: str,
    picture: bytes,
    seconds: float,
    seed: int,
) -> dict[str, Any]:
    """Mixed traffic, one request after another, for `seconds`: the calls made, every failure
    seen (any status of 300 or more, any transport error), and the posts and test events
    created."""
    rng = random.Random(seed)
    calls: Counter[str] = Counter()
    failures: list[str] = []
    posts: list[str] = []
    test_events: list[str] = []
    names = list(WEIGHTS)
    weights = [WEIGHTS[name] for name in names]
    deadline = time.monotonic() + seconds
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        while time.monotonic() < deadline:
            (operation,) = rng.choices(names, weights=weights)
            if operation == "getPost" and not posts:
                operation = "listPosts"
            try:
                if operation == "createPost":
                    response = client.post(
                        "/api/v1/posts",
                        json={
                            "text": f"Soak post {seed}-{calls[operation]}",
                            "publishNow": True,
                            "targets": [{"channelId": rng.choice(channels)}],
                        },
                    )
                    if response.status_code == 201:
                        posts.append(response.json()["id"])
                elif operation == "listPosts":
                    response = client.get("/api/v1/posts", params={"pageSize": 20})
                elif operation == "getPost":
                    response = client.get(f"/api/v1/posts/{rng.choice(posts)}")
                elif operation == "sendWebhookTest":
                    response = client.post(
                        f"/api/v1/webhooks/{endpoint}/test", json={"event": "webhook.test.v1"}
                    )
                    if response.status_code == 202:
                        test_events.append(response.json()["eventId"])
                elif operation == "uploadMedia":
                    response = client.post(
                        "/api/v1/media",
                        files=[("files", (f"soak-{seed}.png", picture, "image/png"))],
                    )
                elif operation == "listChannels":
                    response = client.get("/api/v1/channels")
                elif operation == "listWebhookDeliveries":
                    response = client.get(
                        f"/api/v1/webhooks/{endpoint}/deliveries", params={"pageSize": 10}
                    )
                else:
                    response = client.get("/api/v1/tenant")
            except httpx.HTTPError as exc:
                failures.append(f"{operation}: {type(exc).__name__}: {exc}")
                continue
            calls[operation] += 1
            if response.status_code >= 300:
                failures.append(f"{operation}: {response.status_code} {response.text[:300]}")
    return {"calls": dict(calls), "failures": failures, "posts": posts, "testEvents": test_events}
