"""Media for the composer: uploads streamed to uploadMedia (the browser shows the progress),
and the library's bytes for previews."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Depends
from fastapi import Request
from starlette.responses import HTMLResponse
from starlette.responses import Response

from pressroom.console.api import Answer
from pressroom.console.rendering import TEMPLATES
from pressroom.console.sessions import Visitor
from pressroom.console.sessions import check_csrf
from pressroom.console.sessions import visitor

router = APIRouter(prefix="/console/media", include_in_schema=False)
Person = Annotated[Visitor, Depends(visitor)]


async def stream_upload(request: Request, person: Visitor) -> Answer:
    """The browser's multipart body (after its CSRF check), streamed to uploadMedia as it
    arrives; the API's answer."""
    await check_csrf(request, person)
    headers = {"content-type": request.headers.get("content-type", "")}
    if "content-length" in request.headers:
        headers["content-length"] = request.headers["content-length"]
    return await person.api.call("POST", "/media", content=request.stream(), headers=headers)


def upload_refused(answer: Answer) -> Response:
    """The API's reason, as the text the upload's status line shows."""
    reason = answer.detail or "The upload was refused."
    errors = "; ".join(f"{k} {v}" for k, v in answer.field_errors.items())
    text = f"{reason} {errors}".strip()
    return Response(text, status_code=answer.status, media_type="text/plain")


@router.post("")
async def upload(request: Request, person: Person) -> Response:
    """Stream the browser's multipart body to uploadMedia unchanged; answer the new items as
    choices for the composer (checked), or the API's reason as text."""
    answer = await stream_upload(request, person)
    if not answer.ok:
        return upload_refused(answer)
    items = answer.body["items"]
    template = TEMPLATES.get_template("_media_items.html")
    html = template.render(items=items, chosen=[item["id"] for item in items])
    return HTMLResponse(html, status_code=201)


@router.get("/{media_id}/content")
async def content(person: Person, media_id: str) -> Response:
    """An asset's bytes, for its preview (getMediaContent, as the signed-in person)."""
    answer = await person.api.call("GET", f"/media/{media_id}/content")
    if not answer.ok:
        return Response(status_code=answer.status)
    return Response(
        answer.content,
        media_type=answer.headers.get("content-type", "application/octet-stream"),
        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "private, max-age=300"},
    )
