"""Webhook endpoint lifecycle: create, change, delete, rotate the signing secret."""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from pressroom.config import Settings
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import SecretBox
from pressroom.kit.errors import FieldError
from pressroom.kit.errors import validation_error
from pressroom.kit.outbound.destination import check_destination_url
from pressroom.kit.outbound.destination import parse_resolve_overrides
from pressroom.webhooks.models import WebhookEndpoint
from pressroom.webhooks.outbox import DELIVERIES_CHANNEL
from pressroom.webhooks.outbox import EVENT_TYPES
from pressroom.webhooks.schemas import MAX_DESCRIPTION_LENGTH
from pressroom.webhooks.schemas import WebhookEndpointCreate
from pressroom.webhooks.schemas import WebhookEndpointUpdate
from pressroom.webhooks.signing import generate_secret

if TYPE_CHECKING:
    from pressroom.runtime import Runtime


@functools.lru_cache(maxsize=8)
def override_hosts(setting: str | None) -> frozenset[str]:
    """Hosts PRESSROOM_WEBHOOK_RESOLVE sends to a fixed address (tests only)."""
    return frozenset(parse_resolve_overrides(setting))


def url_errors(url: str, settings: Settings) -> list[FieldError]:
    reasons = check_destination_url(url, override_hosts(settings.webhook_resolve))
    if not reasons:
        return []
    return [FieldError("url", "invalid_destination", "; ".join(reasons))]


def events_errors(events: list[str]) -> list[FieldError]:
    """1-11 distinct known kinds; each unknown or repeated entry is named by its index."""
    if not events:
        return [FieldError("events", "too_short", f"must name 1-{len(EVENT_TYPES)} event kinds")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, kind in enumerate(events):
        if kind not in EVENT_TYPES:
            errors.append(
                FieldError(
                    f"events[{index}]",
                    "unknown_event",
                    f"{kind!r} is not an event kind; known: {', '.join(EVENT_TYPES)}",
                )
            )
        elif kind in seen:
            errors.append(FieldError(f"events[{index}]", "duplicate", f"{kind} is already listed"))
        seen.add(kind)
    return errors


def description_errors(description: str | None) -> list[FieldError]:
    if description is not None and len(description) > MAX_DESCRIPTION_LENGTH:
        return [
            FieldError(
                "description",
                "too_long",
                f"must be at most {MAX_DESCRIPTION_LENGTH} characters",
            )
        ]
    return []


def check_create(body: WebhookEndpointCreate, settings: Settings) -> None:
    errors = [
        *url_errors(body.url, settings),
        *events_errors(body.events),
        *description_errors(body.description),
    ]
    if errors:
        raise validation_error(errors)


def check_update(body: WebhookEndpointUpdate, settings: Settings) -> None:
    errors: list[FieldError] = []
    given = body.model_fields_set
    for name in ("url", "events", "enabled"):
        if name in given and getattr(body, name) is None:
            errors.append(FieldError(name, "null", "must not be null"))
    if body.url is not None:
        errors += url_errors(body.url, settings)
    if body.events is not None:
        errors += events_errors(body.events)
    errors += description_errors(body.description)
    if errors:
        raise validation_error(errors)


@dataclass
class IssuedSecret:
    """A secret to show once, and the endpoint it now signs for."""

    endpoint: WebhookEndpoint
    secret: str


def _store_secret(endpoint: WebhookEndpoint, box: SecretBox, secret: str) -> None:
    endpoint.secret_encrypted = box.encrypt(secret)
    endpoint.secret_last4 = secret[-4:]
    endpoint.secret_created_at = utcnow()


async def create_endpoint(
    session: AsyncSession,
    runtime: Runtime,
    organization_id: uuid.UUID,
    body: WebhookEndpointCreate,
) -> IssuedSecret:
    check_create(body, runtime.settings)
    secret = generate_secret()
    endpoint = WebhookEndpoint(
        organization_id=organization_id,
        url=body.url,
        events={"events": list(body.events)},
        description=body.description,
        enabled=body.enabled,
    )
    _store_secret(endpoint, runtime.box, secret)
    session.add(endpoint)
    await session.flush()
    return IssuedSecret(endpoint, secret)


async def update_endpoint(
    session: AsyncSession,
    runtime: Runtime,
    endpoint: WebhookEndpoint,
    body: WebhookEndpointUpdate,
) -> dict[str, Any]:
    """Apply a merge (already checked with check_update); the changed fields, for the audit."""
    changes: dict[str, Any] = {}
    given = body.model_fields_set
    if body.url is not None and body.url != endpoint.url:
        endpoint.url = body.url
        changes["url"] = body.url
    if body.events is not None and body.events != endpoint.events.get("events"):
        endpoint.events = {"events": list(body.events)}
        changes["events"] = list(body.events)
    if "description" in given and body.description != endpoint.description:
        endpoint.description = body.description
        changes["description"] = body.description
    if body.enabled is not None and body.enabled != endpoint.enabled:
        endpoint.enabled = body.enabled
        changes["enabled"] = body.enabled
        if body.enabled:
            # Held deliveries are due already: wake the workers to send them now.
            await runtime.notifier.notify(session, DELIVERIES_CHANNEL)
    if changes:
        endpoint.updated_at = utcnow()
        await session.flush()
    return changes


async def delete_endpoint(session: AsyncSession, endpoint: WebhookEndpoint) -> None:
    """Its deliveries and their attempts go with it (ON DELETE CASCADE); events stay until
    they expire, since other endpoints may have received them."""
    await session.delete(endpoint)
    await session.flush()


async def rotate_secret(
    session: AsyncSession, runtime: Runtime, endpoint: WebhookEndpoint, grace_seconds: int
) -> IssuedSecret:
    """Issue a new secret; the current one keeps signing for `grace_seconds` (0: not at all).

    Only the secret being replaced gets a grace: one still in an earlier grace stops at once,
    so a delivery never carries more than two signatures."""
    now = utcnow()
    if grace_seconds > 0:
        endpoint.previous_secret_encrypted = endpoint.secret_encrypted
        endpoint.previous_expires_at = now + timedelta(seconds=grace_seconds)
    else:
        endpoint.previous_secret_encrypted = None
        endpoint.previous_expires_at = None
    secret = generate_secret()
    _store_secret(endpoint, runtime.box, secret)
    endpoint.updated_at = now
    await session.flush()
    return IssuedSecret(endpoint, secret)
