"""Every network's declaration, in one list, and the lookups the API answers from."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from pressroom.providers.bluesky.declaration import DECLARATION as BLUESKY
from pressroom.providers.facebook.declaration import DECLARATION as FACEBOOK
from pressroom.providers.instagram.declaration import DECLARATION as INSTAGRAM
from pressroom.providers.linkedin.declaration import DECLARATION as LINKEDIN
from pressroom.providers.mastodon.declaration import DECLARATION as MASTODON
from pressroom.providers.mastodon.declaration import for_instance as mastodon_for_instance
from pressroom.providers.pinterest.declaration import DECLARATION as PINTEREST
from pressroom.providers.sandbox.declaration import DECLARATION as SANDBOX
from pressroom.providers.sandbox.declaration import SIMULATION_OPTIONS
from pressroom.providers.schemas import ProviderDeclaration
from pressroom.providers.threads.declaration import DECLARATION as THREADS
from pressroom.providers.tiktok.declaration import DECLARATION as TIKTOK
from pressroom.providers.x.declaration import DECLARATION as X
from pressroom.providers.youtube.declaration import DECLARATION as YOUTUBE

__all__ = [
    "ALWAYS_CONFIGURED",
    "DECLARATIONS",
    "PROVIDER_IDS",
    "SIMULATION_OPTIONS",
    "channel_declaration",
]

PROVIDER_IDS: tuple[str, ...] = (
    "x",
    "linkedin",
    "facebook",
    "instagram",
    "threads",
    "bluesky",
    "mastodon",
    "tiktok",
    "youtube",
    "pinterest",
    "sandbox",
)
# Always configured: the simulator needs no credentials (contract section 7).
ALWAYS_CONFIGURED = frozenset({"sandbox"})

DECLARATIONS: dict[str, ProviderDeclaration] = {
    declaration.id: declaration
    for declaration in (
        X,
        LINKEDIN,
        FACEBOOK,
        INSTAGRAM,
        THREADS,
        BLUESKY,
        MASTODON,
        TIKTOK,
        YOUTUBE,
        PINTEREST,
        SANDBOX,
    )
}


def list_declarations(configured_ids: set[str] | frozenset[str]) -> list[ProviderDeclaration]:
    """Every declaration in PROVIDER_IDS order, ``configured`` filled for this deployment."""
    return [
        _with_configured(DECLARATIONS[provider_id], configured_ids) for provider_id in PROVIDER_IDS
    ]


def get_declaration(
    provider_id: str, configured_ids: set[str] | frozenset[str] = frozenset()
) -> ProviderDeclaration | None:
    """One declaration with ``configured`` filled, or None for an unknown provider id."""
    declaration = DECLARATIONS.get(provider_id)
    if declaration is None:
        return None
    return _with_configured(declaration, configured_ids)


def _with_configured(
    declaration: ProviderDeclaration, configured_ids: set[str] | frozenset[str]
) -> ProviderDeclaration:
    configured = declaration.id in ALWAYS_CONFIGURED or declaration.id in configured_ids
    return declaration.model_copy(update={"configured": configured})


# Providers whose accounts live on servers with limits of their own (a channel keeps them, see
# adapter.LimitsAdapter): the declaration as one such server applies it.
_BY_SERVER: dict[str, Callable[[Mapping[str, Any]], ProviderDeclaration]] = {
    "mastodon": mastodon_for_instance,
}


def channel_declaration(
    provider_id: str, limits: Mapping[str, Any] | None
) -> ProviderDeclaration | None:
    """What a channel's targets are validated against: its provider's declaration, as the
    channel's own server applies it where the channel keeps its `limits` (a Mastodon
    instance's); the stock declaration otherwise. None for an unknown provider id."""
    declaration = DECLARATIONS.get(provider_id)
    tailor = _BY_SERVER.get(provider_id)
    if declaration is None or tailor is None or not limits:
        return declaration
    return tailor(limits)
