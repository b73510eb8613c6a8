"""GET /providers and GET /providers/{providerId}: what each network accepts, and whether this
deployment can publish to it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from fastapi import Path

from pressroom.http.access import ChannelsRead
from pressroom.http.routing import PressroomRoute
from pressroom.http.routing import RuntimeDep
from pressroom.kit.crypto import SecretBox
from pressroom.kit.errors import found
from pressroom.kit.pagination import Collection
from pressroom.kit.pagination import Pagination
from pressroom.kit.pagination import invalid_cursor
from pressroom.kit.pagination import open_cursor
from pressroom.kit.pagination import sign_cursor
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.declarations import get_declaration
from pressroom.providers.declarations import list_declarations
from pressroom.providers.registry import configured_providers
from pressroom.providers.schemas import ProviderDeclaration

ProviderId = Annotated[
    str,
    Path(
        alias="providerId",
        max_length=32,
        description="`x`, `linkedin`, `facebook`, `instagram`, `threads`, `bluesky`, "
        "`mastodon`, `tiktok`, `youtube`, `pinterest` or `sandbox`.",
    ),
]

router = APIRouter(prefix="/api/v1", route_class=PressroomRoute, tags=["Providers"])

_CONFIGURED = (
    "`configured` says whether this deployment can connect and publish to the provider: "
    "always true for `sandbox`; for a real network, true only when an adapter for it is "
    "registered and has the deployment settings it needs: `bluesky` and `mastodon` need none, "
    "`x` needs the deployment's X app (`PRESSROOM_X_CLIENT_ID`), the others have no adapter yet. "
    "Any provider can still be connected with `--simulated`: validated by its real "
    "declaration, published by the sandbox simulator. Options of type `text` (`firstComment` "
    "on X, Bluesky and Mastodon: a reply held to the content kind's text rule), `textList` (a "
    "thread's follow-up texts, each held to the content kind's text rule) and `mediaTexts` (alt "
    "texts: "
    "a list in media order or an object keyed by media id) are validated item by item, each "
    "problem a 400 naming its own field (`targets[0].options.thread[2]`); an option with "
    "`countsTowardText` is counted together with the text, as the network does. "
    "`capabilities.firstComment` is true exactly where the adapter posts `options.firstComment`; "
    "a first comment refused once the post is live leaves the target `published`, with an "
    "`error` saying why the comment was not posted (it is not retried)."
)


@router.get(
    "/providers",
    operation_id="listProviders",
    description="Scope `channels:read`. "
    "Every provider declaration, in a fixed order (x, linkedin, facebook, "
    "instagram, threads, bluesky, mastodon, tiktok, youtube, pinterest, sandbox), paginated "
    "like every collection. " + _CONFIGURED,
)
async def list_providers(
    principal: ChannelsRead, runtime: RuntimeDep, page: Pagination
) -> Collection[ProviderDeclaration]:
    """List provider declarations."""
    declarations = list_declarations(configured_providers(runtime.settings))
    start = 0
    if page.cursor:
        start = PROVIDER_IDS.index(_decode_cursor(runtime.box, page.cursor)) + 1
    items = declarations[start : start + page.page_size]
    more = start + page.page_size < len(declarations)
    next_cursor = _encode_cursor(runtime.box, items[-1].id) if more and items else None
    return Collection[ProviderDeclaration](items=items, next_cursor=next_cursor)


@router.get(
    "/providers/{providerId}",
    operation_id="getProvider",
    description="Scope `channels:read`. " + _CONFIGURED,
)
async def get_provider(
    provider_id: ProviderId, principal: ChannelsRead, runtime: RuntimeDep
) -> ProviderDeclaration:
    """Read one provider declaration."""
    return found(get_declaration(provider_id, configured_providers(runtime.settings)), "provider")


def _encode_cursor(box: SecretBox, provider_id: str) -> str:
    return sign_cursor(box, "providers", provider_id.encode())


def _decode_cursor(box: SecretBox, cursor: str) -> str:
    provider_id = open_cursor(box, "providers", cursor).decode(errors="replace")
    if provider_id not in PROVIDER_IDS:
        raise invalid_cursor()
    return provider_id
