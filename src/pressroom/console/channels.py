"""Channels: the organization's channels with their health, connecting one through the
provider's OAuth authorization (startChannelConnection gives the provider's page and the
console sends the browser there; the provider sends it back to the API's callback, which
returns it here), and disconnecting one after a confirmation."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi import Request
from starlette.responses import RedirectResponse
from starlette.responses import Response

from pressroom.channels.oauth_grants import connected_through_oauth
from pressroom.console.acting import Person
from pressroom.console.acting import Removal
from pressroom.console.acting import add_removal
from pressroom.console.acting import first
from pressroom.console.acting import form_fields
from pressroom.console.acting import listed
from pressroom.console.acting import query_text
from pressroom.console.acting import refused
from pressroom.console.rendering import render
from pressroom.console.sessions import Visitor
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.registry import configured_providers

router = APIRouter(prefix="/console/channels", include_in_schema=False)
NOTICES = {"disconnected": "The channel was disconnected."}


def _connectable(request: Request) -> list[str]:
    """Providers this deployment connects through OAuth, and has the app settings of."""
    configured = configured_providers(request.app.state.runtime.settings)
    return [p for p in PROVIDER_IDS if connected_through_oauth(p) and p in configured]


async def _page(
    request: Request, person: Visitor, *, status: int = 200, **context: Any
) -> Response:
    shown = await listed(person, "/channels", limit=500)
    notice = NOTICES.get(query_text(request.query_params.get("done")), "")
    connected = request.query_params.getlist("channelId")
    if connected:
        count = len(connected)
        notice = f"{count} channel{'s' if count > 1 else ''} connected."
    full = {
        "section": "channels",
        "channels": shown,
        "providers": _connectable(request),
        "notice": notice,
        "connected": connected,
        "errors": {},
        "values": {},
        **context,
    }
    response = render(request, "channels.html", full, person=person, status=status)
    # The connect form's answer is a redirect to the provider's authorization page, on its
    # own https origin: this page's forms may lead there (every other page: 'self' only).
    policy = response.headers["Content-Security-Policy"]
    response.headers["Content-Security-Policy"] = policy.replace(
        "form-action 'self'", "form-action 'self' https:"
    )
    return response


@router.get("")
async def channels(request: Request, person: Person) -> Response:
    """Every connected channel with its health; a form to connect another."""
    return await _page(request, person)


@router.post("/connect")
async def connect(request: Request, person: Person) -> Response:
    """Start the provider's authorization and send the browser to it; the API's callback
    brings it back to this list with the new channel's id."""
    fields = await form_fields(request, person)
    provider = first(fields, "provider")
    values = {
        "provider": provider,
        "name": first(fields, "name"),
        "instance": first(fields, "instance"),
    }
    public = request.app.state.runtime.settings.public_url.rstrip("/")
    body = {
        "name": values["name"],
        "instance": values["instance"] or None,
        "redirectUri": f"{public}/console/channels",
    }
    if provider not in PROVIDER_IDS:
        errors = {"provider": "choose a provider from the list"}
        return await _page(request, person, status=400, errors=errors, values=values)
    answer = await person.api.call("POST", f"/connect/{provider}", json=body)
    if answer.status == 400:
        errors = answer.field_errors or {"provider": answer.detail}
        return await _page(request, person, status=400, errors=errors, values=values)
    if not answer.ok:
        return refused(request, person, answer)
    return RedirectResponse(answer.body["authorizationUrl"], status_code=303)


def _named(channel: dict[str, Any]) -> str:
    handle = f", {channel['handle']}" if channel.get("handle") else ""
    return f"{channel['name']} ({channel['provider']}{handle})"


add_removal(
    router,
    Removal(
        heading="Disconnect this channel?",
        consequence="Its scheduled and pending posts fail on this channel, its access is "
        "erased and revoked at the network, and it leaves the list (its analytics history "
        "stays). Connecting it again makes a new channel.",
        confirm="Disconnect the channel",
        describe=_named,
        done="disconnected",
        verb="disconnect",
    ),
)
