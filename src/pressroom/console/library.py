"""The media library: the organization's assets with previews (image thumbnails, video poster
frames, from getMediaPreview), uploads with a progress bar (streamed like the composer's,
media.py), and deletion after a confirmation."""

from __future__ import annotations

import uuid
from operator import itemgetter

from fastapi import APIRouter
from fastapi import Request
from starlette.responses import HTMLResponse
from starlette.responses import Response

from pressroom.console.acting import Person
from pressroom.console.acting import Removal
from pressroom.console.acting import add_removal
from pressroom.console.acting import listed
from pressroom.console.acting import query_text
from pressroom.console.media import stream_upload
from pressroom.console.media import upload_refused
from pressroom.console.rendering import TEMPLATES
from pressroom.console.rendering import render

router = APIRouter(prefix="/console/media", include_in_schema=False)
# Assets the library shows (newest first).
SHOWN = 200
NOTICES = {"deleted": "The asset was deleted."}


@router.get("")
async def library(request: Request, person: Person) -> Response:
    """Every asset with its preview, and an upload form for those who may upload."""
    context = {
        "section": "media",
        "assets": await listed(person, "/media", limit=SHOWN),
        "notice": NOTICES.get(query_text(request.query_params.get("done")), ""),
    }
    return render(request, "media.html", context, person=person)


@router.get("/{media_id}/preview")
async def preview(person: Person, media_id: uuid.UUID) -> Response:
    """The asset's preview image, as the API gives it to this person."""
    answer = await person.api.call("GET", f"/media/{media_id}/preview")
    if answer.status != 200:
        return Response(status_code=answer.status)
    cache = answer.headers.get("cache-control", "private")
    return Response(answer.content, media_type="image/jpeg", headers={"Cache-Control": cache})


@router.post("/upload")
async def upload(request: Request, person: Person) -> Response:
    """Upload from the library: the new assets as items of the library (or the API's
    refusal as text, with its status)."""
    answer = await stream_upload(request, person)
    if not answer.ok:
        return upload_refused(answer)
    template = TEMPLATES.get_template("media_items.html")
    html = template.render(assets=answer.body["items"], can=person.api.can, csrf=person.csrf)
    return HTMLResponse(html, status_code=201)


add_removal(
    router,
    Removal(
        heading="Delete this asset?",
        consequence="It leaves the library and is no longer served. An asset that a post "
        "still to be published uses cannot be deleted until it is taken out of that post.",
        confirm="Delete the asset",
        describe=itemgetter("filename"),
    ),
)
