"""GET and HEAD /media-links/{token}: a stored asset, served to the network that publishes it.

Outside /api/v1 and without an API key: the signed, expiring token is the authority
(media/links.py). Like every keyless request it is rate limited per client address. Any link
that does not name a current asset (malformed, tampered with, expired, of an asset that is
gone) answers the same 404 problem. Not part of the API's OpenAPI document: integrators never
call it, networks do, with URLs Pressroom makes (README: Media).
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi import Request
from starlette.responses import Response

from pressroom.kit.errors import PressroomError
from pressroom.media import links
from pressroom.media import service
from pressroom.media.delivery import asset_response
from pressroom.media.delivery import etag_matches
from pressroom.media.delivery import etag_of
from pressroom.media.delivery import requested_range
from pressroom.runtime import Runtime

router = APIRouter()


@router.api_route(f"{links.LINK_PATH}/{{token}}", methods=["GET", "HEAD"], include_in_schema=False)
async def get_linked_media(token: str, request: Request) -> Response:
    """A stored asset's bytes, by signed link (single byte ranges; HEAD for probes)."""
    runtime: Runtime = request.app.state.runtime
    now = links.now_seconds()
    linked = links.read_link(runtime.box, token, now)
    asset = None
    if linked is not None:
        async with runtime.sessions() as session:
            assets = await service.get_assets(session, linked.organization_id, [linked.media_id])
        asset = assets.get(linked.media_id)
    if linked is None or asset is None:
        raise PressroomError("not_found", detail="No such media link, or it has expired.")
    headers = {
        "ETag": etag_of(asset),
        "Accept-Ranges": "bytes",
        # Never cached past the link's expiry, and never by a shared cache.
        "Cache-Control": f"private, max-age={linked.expires_at - now}",
        "X-Content-Type-Options": "nosniff",
        "X-Robots-Tag": "noindex",
    }
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None and etag_matches(if_none_match, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    byte_range = requested_range(
        request.headers.get("range"),
        request.headers.get("if-range"),
        headers["ETag"],
        asset.size_bytes,
    )
    return await asset_response(
        runtime, asset, headers, byte_range=byte_range, head=request.method == "HEAD"
    )
