"""What the operations screens (webhooks, analytics, audit, media, channels) share: a form's
fields, a write through the API with its CSRF check, and the page a refusal shows."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Depends, Request
from starlette.responses import RedirectResponse, Response

from pressroom.console.api import Answer
from pressroom.console.rendering import render
from pressroom.console.sessions import Visitor, check_csrf, visitor

Person = Annotated[Visitor, Depends(visitor)]


async def form_fields(request: Request, person: Visitor) -> dict[str, list[str]]:
    """The submitted form, after its CSRF token was checked: every field's values."""
    await check_csrf(request, person)
    form = await request.form()
    fields: dict[str, list[str]] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            fields.setdefault(name, []).append(value)
    return fields


def first(fields: dict[str, list[str]], name: str, default: str = "") -> str:
    values = fields.get(name)
    return values[0].strip() if values else default


def refused(
    request: Request, person: Visitor, answer: Answer, heading: str = "Refused"
) -> Response:
    """The API's refusal as a page with the API's own status (403 for a missing role or
    scope, 404, 409 with its reason, 400 with the fields named)."""
    message = answer.detail or f"The request was refused ({answer.status})."
    reason = answer.body.get("reason") if isinstance(answer.body, dict) else None
    if reason:
        message = f"{message} ({str(reason).replace('_', ' ')})"
    fields = answer.field_errors
    if fields:
        message += " " + "; ".join(f"{name}: {text}" for name, text in fields.items())
    status = answer.status if 400 <= answer.status < 500 else 502
    return render(
        request, "error.html", {"error": message, "heading": heading}, person=person, status=status
    )


def back_to(path: str, **query: str) -> Response:
    """After a write: the page again (a reload does not repeat the write)."""
    target = f"{path}?{urlencode(query)}" if query else path
    return RedirectResponse(target, status_code=303)


def done_or_refused(
    request: Request, person: Visitor, answer: Answer, path: str, done: str
) -> Response:
    if not answer.ok:
        return refused(request, person, answer)
    return back_to(path, done=done)


def query_text(value: Any, limit: int = 200) -> str:
    """A query parameter as bounded text (a page never fails on a strange one)."""
    return str(value or "").strip()[:limit]


@dataclass(frozen=True)
class Confirmation:
    """A destructive action's question page: what goes, what follows, and where to go."""

    section: str
    heading: str
    consequence: str
    action: str
    confirm: str
    cancel: str


async def confirm_first(
    request: Request, person: Visitor, path: str, describe: Any, ask: Confirmation
) -> Response:
    """Read `path` through the API (refused as the API refuses it), then ask: the page names
    the object (`describe(body)`) and posts to `ask.action` with the session's token."""
    answer = await person.api.get(path)
    if not answer.ok:
        return refused(request, person, answer)
    context = {**asdict(ask), "what": describe(answer.body)}
    return render(request, "confirm.html", context, person=person)


async def write_then_back(
    request: Request, person: Visitor, method: str, path: str, back: str, done: str
) -> Response:
    """A form's write through the API (CSRF checked first); back to `back` with `done`, or
    the API's refusal."""
    await form_fields(request, person)
    answer = await person.api.call(method, path)
    return done_or_refused(request, person, answer, back, done)
