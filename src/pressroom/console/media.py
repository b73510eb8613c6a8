"""The media library: the organization's assets with previews (image thumbnails, video poster
frames, from getMediaPreview), uploads with a progress bar, and deletion."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

from pressroom.console.acting import Person, done_or_refused, form_fields, query_text, refused
from pressroom.console.rendering import TEMPLATES, render
from pressroom.console.sessions import check_csrf

router = APIRouter(prefix="/console/media", include_in_schema=False)
# Assets the library shows (newest first).
SHOWN = 200
NOTICES = {"deleted": "The asset was deleted."}


@router.get("")
async def library(request: Request, person: Person) -> Response:
    """Every asset with its preview, and an upload form for those who may upload."""
    answer = await person.api.get("/media", pageSize=1)
    if not answer.ok:
        return refused(request, person, answer)
    context = {
        "section": "media",
        "assets": await person.api.items("/media", limit=SHOWN),
        "notice": NOTICES.get(query_text(request.query_params.get("done")), ""),
    }
    return render(request, "media.html", context, person=person)


@router.get("/{media_id}/preview")
async def preview(person: Person, media_id: uuid.UUID) -> Response:
    """The asset's preview image, as the API gives it to this person."""
    answer = await person.api.fetch(f"/media/{media_id}/preview")
    if answer.status_code != 200:
        return Response(status_code=answer.status_code)
    cache = answer.headers.get("cache-control", "private")
    return Response(answer.content, media_type="image/jpeg", headers={"Cache-Control": cache})


@router.post("/upload")
async def upload(request: Request, person: Person) -> Response:
    """The browser's multipart body, streamed on to uploadMedia as it arrives; the new assets
    as items of the library (or the API's refusal as text, with its status)."""
    await check_csrf(request, person)
    headers = {"Content-Type": request.headers.get("content-type", "")}
    if "content-length" in request.headers:
        headers["Content-Length"] = request.headers["content-length"]
    answer = await person.api.call("POST", "/media", content=request.stream(), headers=headers)
    if not answer.ok:
        message = answer.detail or f"The upload was refused ({answer.status})."
        return HTMLResponse(f"<p>{_escape(message)}</p>", status_code=answer.status)
    template = TEMPLATES.get_template("media_items.html")
    html = template.render(assets=answer.body["items"], can=person.api.can, csrf=person.csrf)
    return HTMLResponse(html, status_code=201)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@router.get("/{media_id}/delete")
async def confirm_delete(request: Request, person: Person, media_id: uuid.UUID) -> Response:
    answer = await person.api.get(f"/media/{media_id}")
    if not answer.ok:
        return refused(request, person, answer)
    context = {
        "section": "media",
        "heading": "Delete this asset?",
        "what": answer.body["filename"],
        "consequence": "It leaves the library and is no longer served. An asset that a post "
        "still to be published uses cannot be deleted until it is taken out of that post.",
        "action": f"/console/media/{media_id}/delete",
        "confirm": "Delete the asset",
        "cancel": "/console/media",
    }
    return render(request, "confirm.html", context, person=person)


@router.post("/{media_id}/delete")
async def delete(request: Request, person: Person, media_id: uuid.UUID) -> Response:
    await form_fields(request, person)
    answer = await person.api.call("DELETE", f"/media/{media_id}")
    return done_or_refused(request, person, answer, "/console/media", "deleted")
