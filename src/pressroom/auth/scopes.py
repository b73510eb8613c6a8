"""The ten scopes of the specification."""

from __future__ import annotations

SCOPES: tuple[str, ...] = (
    "workspace:read",
    "channels:read",
    "channels:write",
    "posts:read",
    "posts:write",
    "analytics:read",
    "media:read",
    "media:write",
    "webhooks:read",
    "webhooks:write",
)

# Roles that may manage webhook subscriptions and decide approvals.
MANAGER_ROLES = frozenset({"owner", "admin"})


def parse_scopes(text: str) -> list[str]:
    """`posts:read,posts:write` -> a validated, de-duplicated list (`all` means every scope)."""
    items = [s.strip() for s in text.split(",") if s.strip()]
    if items == ["all"]:
        return list(SCOPES)
    unknown = [s for s in items if s not in SCOPES]
    if unknown:
        raise ValueError(f"unknown scope(s) {', '.join(unknown)}; known: {', '.join(SCOPES)}")
    if not items:
        raise ValueError("at least one scope is required")
    return list(dict.fromkeys(items))
