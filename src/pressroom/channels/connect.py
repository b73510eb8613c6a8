"""POST /api/v1/connect/{provider} and GET /connect/{provider}/callback: connecting channels
through the provider's OAuth authorization (see channels/authorization.py).

The callback is outside /api/v1 and takes no API key: the person's browser comes back to it
from the provider. The random, single-use, 10-minute `state` authenticates it instead; like
every request without a key it is rate limited per client address.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Sequence
from typing import Annotated
from typing import Any
from urllib.parse import parse_qsl
from urllib.parse import urlencode
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from fastapi import APIRouter
from fastapi import Path
from fastapi import Query
from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.responses import JSONResponse
from fastapi.responses import RedirectResponse
from starlette.responses import Response

from pressroom.audit import service as audit
from pressroom.audit.service import Actor
from pressroom.channels import authorization
from pressroom.channels import service as channels
from pressroom.channels.authorization import ClaimedAuthorization
from pressroom.channels.schemas import Channel
from pressroom.channels.schemas import ChannelBatch
from pressroom.channels.schemas import ConnectionStart
from pressroom.channels.schemas import ConnectionStarted
from pressroom.db import unit_of_work
from pressroom.http.access import ChannelsWrite
from pressroom.http.problems import error_responses
from pressroom.http.routing import Audit
from pressroom.http.routing import DocumentedRoute
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.http.routing import UnitOfWork
from pressroom.kit.errors import PressroomError
from pressroom.kit.errors import field_error
from pressroom.kit.schema import format_utc
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.registry import CONNECTORS
from pressroom.runtime import Runtime

log = logging.getLogger(__name__)

# The networks connected through their OAuth connectors in this build, for the documentation.
_CONNECTED = ", ".join(f"`{provider}`" for provider in sorted(CONNECTORS)) or "none in this build"

ProviderPath = Annotated[
    str,
    Path(
        alias="provider",
        max_length=32,
        description="The provider id: `x`, `mastodon`, or a network with an OAuth connector "
        f"({_CONNECTED}). Bluesky connects with an app password on the command line; other "
        "providers are not connected through OAuth here.",
    ),
]

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Channels"])
callback_router = APIRouter(route_class=DocumentedRoute, tags=["Channels"])

_START_DESCRIPTION = f"""\
Scope `channels:write`. Starts connecting a channel through the provider's OAuth
authorization and answers where to send the person: open `authorizationUrl` in their browser.
After they authorize Pressroom the provider sends the browser to
`GET /connect/{{provider}}/callback`, which creates the channel (one per account the person
granted; emitting `channel.connected.v1` for each) and writes the audit entry in the name of
the member who started it.

- `x`: OAuth 2.0 Authorization Code with PKCE (S256), scopes `tweet.read tweet.write
  users.read media.write offline.access`. Needs the deployment's X app
  (`PRESSROOM_X_CLIENT_ID`, and `PRESSROOM_X_CLIENT_SECRET` for a confidential client); without
  it this is a 400 (`provider`, `not_configured`), and `configured` is false in the provider's
  declaration.
- `mastodon`: `instance` is required. Pressroom registers itself on the instance once
  (`POST /api/v1/apps`, kept for later connections), then sends the person to the instance's
  `/oauth/authorize` with scopes `read:accounts read:statuses write:media write:statuses` and a
  PKCE challenge. An instance that cannot be reached or is not a Mastodon server is a 400 on
  `instance`.
- Networks with an OAuth connector ({_CONNECTED}): the network's own authorization page
  with the deployment's app there, `PRESSROOM_{{PROVIDER}}_CLIENT_ID` and
  `PRESSROOM_{{PROVIDER}}_CLIENT_SECRET` (e.g. `PRESSROOM_FACEBOOK_CLIENT_ID`), and the scopes
  publishing and reading metrics need; the callback's code is exchanged for long-lived tokens.
  Without both settings this is a 400 (`provider`, `not_configured`) whose message names the
  missing ones, and `configured` is false in the provider's declaration. One authorization may
  grant several accounts (the Facebook Pages the person selects): each becomes a channel.
- Other providers: `bluesky` connects with an app password on the command line
  (`pressroom channels connect bluesky`), the others are not supported here: 400 on `provider`.
  An unknown provider id is 404.

The provider must have `{{PRESSROOM_PUBLIC_URL}}/connect/{{provider}}/callback` registered as the
redirect URI. The authorization is single use and expires after 10 minutes (`expiresAt`); what
the callback will need (the PKCE verifier, Mastodon's client secret, a connector's own values)
is stored encrypted, the `state` only as a digest, and none of them is ever logged or audited.
The response is not cacheable (`Cache-Control: no-store`). This operation takes no
`Idempotency-Key` (like every operation the specification does not list); starting again
simply makes a new authorization.
"""

_CALLBACK_DESCRIPTION = """\
No API key: the person's browser arrives here from the provider, and the single-use `state`
authenticates the request (requests are rate limited per client address). The state is taken
first, so it never serves twice, whatever happens next.

- With `code`: the code is exchanged for the granted accounts' tokens (X: `POST
  /2/oauth2/token` with the PKCE verifier, then `GET /2/users/me`; Mastodon: `POST
  /oauth/token`, then `verify_credentials`; other networks: their connector's exchange for
  long-lived tokens), one channel is created per account with its tokens stored encrypted, all
  in one transaction, and `channel.connected.v1` is emitted for each. The answer:
  - one account (X, Mastodon, and most grants): the channel (the `getChannel` form) as JSON;
  - several accounts (e.g. the Facebook Pages the person selected): `{"items": [channel, ...]}`
    in the provider's order, the form `uploadMedia` answers for several objects one request
    made; the channels are named `"{name}: {account}"` (the account's name at the network);
  - for a browser asking for `text/html`, a short page listing every channel;
  - when the connection was started with `redirectUri`, a `303 See Other` to it instead, with
    one `channelId` query parameter per channel, in the same order.
- With `error` (e.g. `access_denied`: the person declined): 400 naming the provider's error
  (field `error`); nothing is created.
- A missing, unknown, expired or already used `state`: 400 (field `state`, code `required`,
  `unknown`, `expired` or `already_used`). A code the provider refuses: 400 (field `code`); a
  grant of no account: 400 (field `code`, code `no_account`). A provider whose app settings
  were removed since the start: 400 (field `provider`, code `not_configured`).

An audit entry (operation `completeChannelConnection`) is written for the member who started
the connection: one per channel created (several share the request id and list
`channelIds`), or one for the connection when it failed once the state was recognised; it
never holds the code, the state or a token.
"""


_START_RESPONSES: dict[int | str, dict[str, Any]] = {
    201: {
        "description": "The authorization page to send the person to.",
        "headers": {"Cache-Control": {"description": "`no-store`", "schema": {"type": "string"}}},
    },
}


@router.post(
    "/connect/{provider}",
    operation_id="startChannelConnection",
    status_code=201,
    responses=_START_RESPONSES,
    description=_START_DESCRIPTION,
)
async def start_channel_connection(
    provider: ProviderPath,
    body: ConnectionStart,
    principal: ChannelsWrite,
    runtime: RuntimeDep,
    unit: UnitOfWork,
    audit_note: Audit,
    response: Response,
) -> ConnectionStarted:
    """Start connecting a channel through the provider's OAuth authorization."""
    # Registering on a Mastodon instance is a network call: before the transaction begins.
    prepared = await authorization.prepare(
        runtime,
        provider=provider,
        name=body.name,
        instance=body.instance,
        return_url=body.redirect_uri,
    )
    started = await authorization.record(await unit.session(), runtime, principal, prepared)
    audit_note.set(
        "channelConnection",
        started.id,
        {
            "provider": provider,
            "name": prepared.name,
            "instance": prepared.instance,
            "redirectUri": prepared.return_url,
            "expiresAt": format_utc(started.expires_at),
        },
    )
    response.headers["Cache-Control"] = "no-store"
    return ConnectionStarted(
        authorization_url=started.authorization_url,
        state=started.state,
        expires_at=started.expires_at,
    )


def _callback_responses() -> dict[int | str, dict[str, Any]]:
    errors = error_responses()
    return {
        200: {
            "description": "The channel connected (`Channel`), or every channel when the grant "
            "covered several accounts (`ChannelBatch`); an HTML page for browsers.",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
        303: {
            "description": "The connection was started with `redirectUri`: the browser is sent "
            "there, with one `channelId` query parameter per channel added to its query.",
            "headers": {"Location": {"schema": {"type": "string"}}},
        },
        **{status: errors[status] for status in (400, 404, 429, 500)},
    }


@callback_router.get(
    "/connect/{provider}/callback",
    operation_id="completeChannelConnection",
    response_model=Channel | ChannelBatch,
    responses=_callback_responses(),
    description=_CALLBACK_DESCRIPTION,
    # No API key: the single-use state authenticates the browser coming back.
    openapi_extra={"security": []},
)
async def complete_channel_connection(
    request: Request,
    provider: ProviderPath,
    state: Annotated[
        str,
        Query(max_length=512, description="The `state` of `startChannelConnection`."),
    ],
    code: Annotated[
        str | None, Query(max_length=4096, description="The authorization code.")
    ] = None,
    error: Annotated[
        str | None,
        Query(max_length=256, description="The provider's error, e.g. `access_denied`."),
    ] = None,
    error_description: Annotated[
        str | None,
        Query(max_length=2048, description="The provider's explanation of `error`."),
    ] = None,
) -> Response:
    """Complete a channel connection: the provider's redirect back."""
    runtime: Runtime = request.app.state.runtime
    if provider not in PROVIDER_IDS:
        raise PressroomError("not_found", detail=f"No provider {provider!r}.")
    async with unit_of_work(runtime.sessions) as session:
        claimed = await authorization.claim(session, runtime, provider, state)
    try:
        if error:
            raise authorization.refused_by_provider(error, error_description)
        accounts = await authorization.exchange(runtime, claimed, code)
        async with unit_of_work(runtime.sessions) as session:
            try:
                made = await authorization.complete(session, runtime, claimed, accounts)
            except ValueError as exc:
                raise field_error("provider", "not_configured", str(exc)) from None
            status = 303 if claimed.return_url else 200
            ids = [str(channel.id) for channel in made]
            for channel_id in ids:
                await _audit(session, request, claimed, status, channel_ids=ids, of=channel_id)
        shown = [channels.to_schema(channel) for channel in made]
    except PressroomError as problem:
        await _audit_failure(runtime, request, claimed, problem)
        raise
    if claimed.return_url:
        return RedirectResponse(_with_channel_ids(claimed.return_url, ids), 303)
    if "text/html" in request.headers.get("accept", ""):
        return HTMLResponse(_confirmation_page(shown))
    if len(shown) == 1:
        return JSONResponse(shown[0].model_dump(mode="json", by_alias=True))
    return JSONResponse(ChannelBatch(items=shown).model_dump(mode="json", by_alias=True))


async def _audit(
    session: Any,
    request: Request,
    claimed: ClaimedAuthorization,
    status: int,
    *,
    channel_ids: Sequence[str] = (),
    of: str | None = None,
    error: str | None = None,
) -> None:
    """The entry of channel `of` (one of the grant's `channel_ids`), or of the connection."""
    changes: dict[str, Any] = {
        "provider": claimed.provider,
        "name": claimed.name,
        "connectionId": str(claimed.id),
    }
    if claimed.instance:
        changes["instance"] = claimed.instance
    if len(channel_ids) > 1:
        changes["channelIds"] = list(channel_ids)
    if error:
        changes["error"] = error
    await audit.append(
        session,
        organization_id=claimed.organization_id,
        actor=Actor(
            member_id=claimed.member_id,
            credential_id=claimed.credential_id,
            credential_prefix=claimed.credential_prefix,
        ),
        operation_id="completeChannelConnection",
        outcome_status=status,
        resource_type="channel" if of else "channelConnection",
        resource_id=of or str(claimed.id),
        request_id=request.state.request_id,
        changes=changes,
    )


async def _audit_failure(
    runtime: Runtime, request: Request, claimed: ClaimedAuthorization, problem: PressroomError
) -> None:
    reason = problem.errors[0].code if problem.errors else problem.code
    try:
        async with unit_of_work(runtime.sessions) as session:
            await _audit(session, request, claimed, problem.status, error=reason)
    except Exception:
        # The request's own outcome stands; this bookkeeping failure is logged, not raised.
        log.exception("could not audit a failed channel connection")


def _with_channel_ids(url: str, channel_ids: Sequence[str]) -> str:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query += [("channelId", channel_id) for channel_id in channel_ids]
    return urlunsplit(parts._replace(query=urlencode(query)))


def _confirmation_page(shown: Sequence[Channel]) -> str:
    items = "".join(
        f"<li>{html.escape(channel.provider)} account "
        f"{html.escape(channel.handle or channel.name)} is connected as channel "
        f"<code>{channel.id}</code> ({html.escape(channel.name)})</li>"
        for channel in shown
    )
    heading = "Channel connected" if len(shown) == 1 else f"{len(shown)} channels connected"
    return (
        f"<!doctype html><meta charset=utf-8><title>{heading}</title>"
        f"<h1>{heading}</h1><ul>{items}</ul><p>You can close this window.</p>"
    )
