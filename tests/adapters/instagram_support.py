"""Recorded graph.instagram.com answers for the Instagram adapter tests.

Shapes follow developers.facebook.com/docs/instagram-platform: content-publishing, instagram-graph-
api/reference/ig-user/media (POST -> `{"id"}`), ig-container (`{"status_code", "status", "id"}`),
ig-user/media_publish (`{"id"}`), ig-user/content_publishing_limit (`{"data": [{"quota_usage",
"config": {"quota_total", "quota_duration"}}]}`), reference/instagram-media (`permalink`,
`media_product_type`), reference/instagram-media/insights and error-codes."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import httpx

from pressroom.providers.adapter import MediaItem

from .support import fixed_clock

GRAPH = "https://graph.instagram.com/v24.0"
IG_USER = "17841405822304914"
MEDIA_ID = "17895695668004550"
PERMALINK = "https://www.instagram.com/p/DCx1a2bC3dE/"
NOW = int(fixed_clock().timestamp())
DAY = 24 * 3600
CREDENTIALS: dict[str, Any] = {
    "accessToken": "IGAA-long-1",
    "expiresAt": NOW + 50 * DAY,
    "refreshableAt": NOW - 10 * DAY,
    "userId": IG_USER,
    "username": "pressroom",
}


async def signed_url(item: MediaItem) -> str:
    return f"https://pressroom.example/m/{item.id}?expires=1800000000&sig=c2lnbmVk"


def form(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode()).items()}


def query(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


def created(container: str) -> httpx.Response:
    return httpx.Response(200, json={"id": container})


def status(code: str, detail: str | None = None) -> httpx.Response:
    body: dict[str, Any] = {"status_code": code, "id": "container"}
    if detail is not None:
        body["status"] = detail
    return httpx.Response(200, json=body)


def quota(usage: int, total: int = 50, duration: int = 86400) -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "data": [
                {
                    "quota_usage": usage,
                    "config": {"quota_total": total, "quota_duration": duration},
                }
            ]
        },
    )


def graph_error(
    status_code: int, code: int, message: str, subcode: int | None = None, **extra: Any
) -> httpx.Response:
    error: dict[str, Any] = {
        "message": message,
        "type": "OAuthException",
        "code": code,
        "fbtrace_id": "A6LJylpZRKw2xKLFsAP-cJh",
        **extra,
    }
    if subcode is not None:
        error["error_subcode"] = subcode
    return httpx.Response(status_code, json={"error": error})
