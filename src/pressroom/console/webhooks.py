"""Webhooks: endpoints, their delivery logs with every attempt, tests, replays, enabling and
disabling, deletion, and secret rotation with the new secret shown once.

Every action is the API's own operation: a member whose role may not manage webhooks is not
offered the actions, and the API refuses them (403) if the form is posted anyway."""

from __future__ import annotations

import uuid
from operator import itemgetter
from typing import Any
from typing import get_args

from fastapi import APIRouter
from fastapi import Request
from starlette.responses import Response

from pressroom.console.acting import Person
from pressroom.console.acting import Removal
from pressroom.console.acting import add_removal
from pressroom.console.acting import done_or_refused
from pressroom.console.acting import first
from pressroom.console.acting import form_fields
from pressroom.console.acting import listed
from pressroom.console.acting import query_text
from pressroom.console.acting import refused
from pressroom.console.api import ConsoleApi
from pressroom.console.rendering import render
from pressroom.console.sessions import Visitor
from pressroom.webhooks.schemas import DELIVERY_STATUSES
from pressroom.webhooks.schemas import EventType

router = APIRouter(prefix="/console/webhooks", include_in_schema=False)

EVENTS: tuple[str, ...] = get_args(EventType)
# Grace periods offered for the replaced secret when rotating (seconds, label).
GRACES = ((0, "none: the old secret stops at once"), (3600, "1 hour"), (86400, "24 hours"))
NOTICES = {
    "created": "The endpoint was created.",
    "enabled": "The endpoint is enabled: held deliveries are sent now.",
    "disabled": "The endpoint is disabled: nothing is sent to it until it is enabled.",
    "deleted": "The endpoint was deleted with its deliveries.",
    "tested": "A test event was queued; it appears in the log below.",
    "replayed": "The delivery was queued again; its new attempt appears below.",
}
# How many deliveries an endpoint's log shows, each with all its attempts.
LOG_SIZE = 25


def _manages(api: ConsoleApi) -> bool:
    return api.can("webhooks:write", manager=True)


async def _list_page(
    request: Request, person: Visitor, *, status: int = 200, **context: Any
) -> Response:
    full = {
        "section": "webhooks",
        "endpoints": await listed(person, "/webhooks", limit=100),
        "events": EVENTS,
        "manages": _manages(person.api),
        "notice": NOTICES.get(query_text(request.query_params.get("done")), ""),
        "errors": {},
        "values": {"events": list(EVENTS)},
        **context,
    }
    return render(request, "webhooks.html", full, person=person, status=status)


@router.get("")
async def webhooks(request: Request, person: Person) -> Response:
    """The organization's endpoints and, for those who manage them, a form to add one."""
    return await _list_page(request, person)


@router.post("")
async def create(request: Request, person: Person) -> Response:
    fields = await form_fields(request, person)
    values = {
        "url": first(fields, "url"),
        "events": fields.get("events", []),
        "description": first(fields, "description"),
    }
    body = {**values, "description": values["description"] or None}
    answer = await person.api.call("POST", "/webhooks", json=body)
    if answer.status == 400:
        errors = answer.field_errors or {"url": answer.detail}
        return await _list_page(request, person, status=400, errors=errors, values=values)
    if not answer.ok:
        return refused(request, person, answer)
    return _secret_page(request, person, answer.body, "created")


def _secret_page(request: Request, person: Visitor, endpoint: dict[str, Any], how: str) -> Response:
    """The one page that shows a signing secret (no-store, never shown again)."""
    context = {"section": "webhooks", "endpoint": endpoint, "how": how}
    return render(request, "webhook_secret.html", context, person=person)


@router.get("/{endpoint_id}")
async def endpoint_log(request: Request, person: Person, endpoint_id: uuid.UUID) -> Response:
    """An endpoint and its delivery log: every delivery with every attempt."""
    api = person.api
    answer = await api.get(f"/webhooks/{endpoint_id}")
    if not answer.ok:
        return refused(request, person, answer)
    wanted = query_text(request.query_params.get("status"))
    status = wanted if wanted in DELIVERY_STATUSES else None
    listed = await api.get(f"/webhooks/{endpoint_id}/deliveries", pageSize=LOG_SIZE, status=status)
    deliveries = []
    for delivery in listed.body["items"] if listed.ok else []:
        detail = await api.get(f"/webhooks/{endpoint_id}/deliveries/{delivery['id']}")
        deliveries.append(detail.body if detail.ok else {**delivery, "attempts": []})
    context = {
        "section": "webhooks",
        "endpoint": answer.body,
        "deliveries": deliveries,
        "statuses": DELIVERY_STATUSES,
        "status": status or "",
        "graces": GRACES,
        "manages": _manages(api),
        "notice": NOTICES.get(query_text(request.query_params.get("done")), ""),
    }
    return render(request, "webhook_log.html", context, person=person)


@router.post("/{endpoint_id}/enabled")
async def set_enabled(request: Request, person: Person, endpoint_id: uuid.UUID) -> Response:
    fields = await form_fields(request, person)
    enabled = first(fields, "enabled") == "true"
    answer = await person.api.call("PATCH", f"/webhooks/{endpoint_id}", json={"enabled": enabled})
    done = "enabled" if enabled else "disabled"
    return done_or_refused(request, person, answer, f"/console/webhooks/{endpoint_id}", done)


@router.post("/{endpoint_id}/test")
async def send_test(request: Request, person: Person, endpoint_id: uuid.UUID) -> Response:
    await form_fields(request, person)
    answer = await person.api.call(
        "POST", f"/webhooks/{endpoint_id}/test", json={"event": "webhook.test.v1"}
    )
    return done_or_refused(request, person, answer, f"/console/webhooks/{endpoint_id}", "tested")


@router.post("/{endpoint_id}/deliveries/{delivery_id}/replay")
async def replay(
    request: Request, person: Person, endpoint_id: uuid.UUID, delivery_id: uuid.UUID
) -> Response:
    await form_fields(request, person)
    path = f"/webhooks/{endpoint_id}/deliveries/{delivery_id}/replay"
    answer = await person.api.call("POST", path, json={})
    return done_or_refused(request, person, answer, f"/console/webhooks/{endpoint_id}", "replayed")


@router.post("/{endpoint_id}/rotate")
async def rotate(request: Request, person: Person, endpoint_id: uuid.UUID) -> Response:
    fields = await form_fields(request, person)
    grace = first(fields, "grace", "0")
    seconds = int(grace) if grace in {str(g) for g, _ in GRACES} else 0
    answer = await person.api.call(
        "POST", f"/webhooks/{endpoint_id}/rotate", json={"expireCurrentInSeconds": seconds}
    )
    if not answer.ok:
        return refused(request, person, answer)
    return _secret_page(request, person, answer.body, "rotated")


# Deleting asks first: it removes the endpoint's deliveries too.
add_removal(
    router,
    Removal(
        heading="Delete this webhook endpoint?",
        consequence="Its deliveries and their attempts are deleted with it, and nothing "
        "more is sent to it. This cannot be undone.",
        confirm="Delete the endpoint",
        describe=itemgetter("url"),
        cancel_to_object=True,
    ),
)
