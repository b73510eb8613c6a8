"""The composer: one text with per-network overrides, live counts as the person types, media
from the library or uploaded with a progress bar, then a draft, a schedule or publish now."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated
from typing import Any

from fastapi import APIRouter
from fastapi import Depends
from fastapi import Request
from starlette.datastructures import FormData
from starlette.responses import RedirectResponse
from starlette.responses import Response

from pressroom.console.overview import channel_names
from pressroom.console.preflight import live_counts
from pressroom.console.rendering import render
from pressroom.console.rendering import time_zone
from pressroom.console.sessions import Visitor
from pressroom.console.sessions import check_csrf
from pressroom.console.sessions import visitor

router = APIRouter(prefix="/console", include_in_schema=False)
Person = Annotated[Visitor, Depends(visitor)]


def _refused(request: Request, person: Visitor, scope: str) -> Response:
    message = f"Your sign-in cannot do this: it needs the scope {scope}."
    return render(request, "error.html", {"error": message}, person=person, status=403)


async def _library(person: Visitor) -> list[dict[str, Any]]:
    return await person.api.items("/media", limit=60) if person.api.can("media:read") else []


async def _compose_page(
    request: Request, person: Visitor, form: FormData | None = None, **extra: Any
) -> Response:
    status = extra.pop("status", 200)
    context = {
        "section": "compose",
        "channels": await channel_names(person.api),
        "library": await _library(person),
        "form": _form_values(form),
        **extra,
    }
    return render(request, "compose.html", context, person=person, status=status)


def _form_values(form: FormData | None) -> dict[str, Any]:
    if form is None:
        return {"channels": [], "media": [], "when": "draft"}
    return {
        "text": form.get("text", ""),
        "channels": form.getlist("channel"),
        "media": form.getlist("media"),
        "overrides": {k[9:]: v for k, v in form.items() if k.startswith("override-")},
        "when": form.get("when", "draft"),
        "scheduled_at": form.get("scheduled_at", ""),
        "approval": bool(form.get("approval")),
        "tags": form.get("tags", ""),
    }


@router.get("/compose")
async def compose(request: Request, person: Person) -> Response:
    """The composer (only for a sign-in that may create posts)."""
    if not person.api.can("posts:write"):
        return _refused(request, person, "posts:write")
    return await _compose_page(request, person)


def post_body(values: dict[str, Any], request: Request) -> tuple[dict[str, Any], dict[str, str]]:
    """The createPost body of the composer's form; and errors the form itself can name."""
    errors: dict[str, str] = {}
    targets = []
    for channel_id in values["channels"]:
        target: dict[str, Any] = {"channelId": channel_id}
        override = str(values["overrides"].get(channel_id, "")).strip()
        if override:
            target["text"] = override
        targets.append(target)
    if not targets:
        errors["targets"] = "choose at least one channel"
    body: dict[str, Any] = {
        "text": values["text"] or None,
        "mediaIds": values["media"],
        "targets": targets,
        "tags": [tag.strip() for tag in str(values["tags"]).split(",") if tag.strip()],
        "approval": {"required": values["approval"]},
    }
    if values["when"] == "now":
        body["publishNow"] = True
    elif values["when"] == "schedule":
        try:
            local = datetime.fromisoformat(str(values["scheduled_at"]))
            body["scheduledAt"] = local.replace(tzinfo=time_zone(request)).isoformat()
        except ValueError:
            errors["scheduledAt"] = "give a date and time to schedule at"
    return body, errors


@router.post("/compose")
async def create_post(request: Request, person: Person) -> Response:
    """Create the post through createPost; its field errors are shown beside the form."""
    await check_csrf(request, person)
    if not person.api.can("posts:write"):
        return _refused(request, person, "posts:write")
    form = await request.form()
    values = _form_values(form)
    body, errors = post_body(values, request)
    if errors:
        return await _compose_page(request, person, form, errors=errors, status=400)
    answer = await person.api.call("POST", "/posts", json=body)
    if answer.ok:
        return RedirectResponse(f"/console/posts/{answer.body['id']}", status_code=303)
    errors = answer.field_errors or {"post": answer.detail}
    status = answer.status if answer.status in (400, 403, 409) else 400
    return await _compose_page(
        request, person, form, errors=errors, detail=answer.detail, status=status
    )


@router.post("/compose/counts")
async def counts(request: Request, person: Person) -> Response:
    """The live counts under the composer (htmx, as the person types)."""
    await check_csrf(request, person)
    body, _ = post_body(_form_values(await request.form()), request)
    channels = await channel_names(person.api)
    context = {"preflight": await live_counts(person.api, body, channels)}
    return render(request, "_counts.html", context, person=person)
