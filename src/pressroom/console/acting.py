"""What the operations screens (webhooks, analytics, audit, media, channels) share: a form's
fields, a write through the API with its CSRF check, a collection read whole, the page a
refusal shows, and removals asked for on a page of their own."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter
from fastapi import Depends
from fastapi import Request
from starlette.responses import RedirectResponse
from starlette.responses import Response

from pressroom.console.api import Answer
from pressroom.console.rendering import render
from pressroom.console.sessions import Visitor
from pressroom.console.sessions import check_csrf
from pressroom.console.sessions import visitor

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


class Refused(Exception):
    """The API refused what a page is made of: the page shows the refusal (`refused`)."""

    def __init__(self, person: Visitor, answer: Answer) -> None:
        super().__init__(answer.status)
        self.person = person
        self.answer = answer


async def listed(person: Visitor, path: str, limit: int) -> list[dict[str, Any]]:
    """Up to `limit` items of the collection at `path`, newest first; Refused when the API
    refuses it to this person."""
    answer = await person.api.listing(path, limit)
    if not answer.ok:
        raise Refused(person, answer)
    items: list[dict[str, Any]] = answer.body["items"]
    return items


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
class Removal:
    """A destructive action of a screen: `GET {screen}/{id}/{verb}` asks first, naming the
    object the API reads at `/{section}/{id}` (`describe` of its answer) and saying what
    follows; posting the same path (CSRF checked) deletes it through the API and goes back to
    the screen's list with `done`, or shows the API's refusal."""

    heading: str
    consequence: str
    confirm: str
    describe: Callable[[dict[str, Any]], str]
    done: str = "deleted"
    verb: str = "delete"
    # Cancelling goes back to the object's own page (else to the list).
    cancel_to_object: bool = False


def add_removal(router: APIRouter, removal: Removal) -> None:
    """The question page and the deleting form of `removal`, on the screen `router`."""
    screen = router.prefix
    section = screen.rpartition("/")[2]
    path = f"/{{object_id}}/{removal.verb}"

    @router.get(path)
    async def ask(request: Request, person: Person, object_id: uuid.UUID) -> Response:
        answer = await person.api.get(f"/{section}/{object_id}")
        if not answer.ok:
            return refused(request, person, answer)
        own = f"{screen}/{object_id}"
        context = {
            "section": section,
            "heading": removal.heading,
            "what": removal.describe(answer.body),
            "consequence": removal.consequence,
            "action": f"{own}/{removal.verb}",
            "confirm": removal.confirm,
            "cancel": own if removal.cancel_to_object else screen,
        }
        return render(request, "confirm.html", context, person=person)

    @router.post(path)
    async def remove(request: Request, person: Person, object_id: uuid.UUID) -> Response:
        await form_fields(request, person)
        answer = await person.api.call("DELETE", f"/{section}/{object_id}")
        return done_or_refused(request, person, answer, screen, removal.done)
