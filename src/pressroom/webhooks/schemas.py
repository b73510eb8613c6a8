"""Webhook endpoints, deliveries and attempts as the API shows them (contract section 7)."""

from __future__ import annotations

import uuid
from typing import Annotated
from typing import Any
from typing import Literal
from typing import get_args

from pydantic import Field
from pydantic import StrictBool

from pressroom.kit.schema import APIInput
from pressroom.kit.schema import APIModel
from pressroom.kit.schema import JSONInt
from pressroom.kit.schema import NotNull
from pressroom.kit.schema import UTCDatetime

DeliveryStatus = Literal["pending", "processing", "succeeded", "exhausted", "expired"]
# The event kinds of outbox.EVENT_TYPES, as a type (a test keeps the two equal).
EventType = Literal[
    "channel.connected.v1",
    "channel.disconnected.v1",
    "channel.reconnect-required.v1",
    "media.created.v1",
    "post.created.v1",
    "post.updated.v1",
    "post.deleted.v1",
    "post.scheduled.v1",
    "post.published.v1",
    "post.failed.v1",
    "webhook.test.v1",
]
DELIVERY_STATUSES: tuple[str, ...] = ("pending", "processing", "succeeded", "exhausted", "expired")
MAX_ROTATION_GRACE_SECONDS = 604800  # seven days
MAX_DESCRIPTION_LENGTH = 500


# Checked by the service (to name each bad entry), declared here for the OpenAPI document.
_EVENTS_SCHEMA: dict[str, Any] = {
    "items": {"type": "string", "enum": list(get_args(EventType))},
    "minItems": 1,
    "maxItems": len(get_args(EventType)),
    "uniqueItems": True,
}


class WebhookEndpointCreate(APIInput):
    url: str = Field(
        description="A public https URL: no userinfo, query, fragment or port other than 443, "
        "no non-public IP literal in any spelling, not localhost, *.localhost, *.local, "
        "*.internal or *.home.arpa; at most 2048 characters. Only the text is checked here: "
        "the name is resolved and vetted again before every attempt.",
        examples=["https://hooks.example.com/pressroom"],
    )
    events: list[str] = Field(
        description="1-11 distinct event kinds to receive (`post.published.v1`, ...); an "
        "unknown or repeated entry is a 400 naming it (`events[2]`). `webhook.test.v1` is sent "
        "by sendWebhookTest whatever this list holds.",
        examples=[["post.published.v1", "post.failed.v1"]],
        json_schema_extra=_EVENTS_SCHEMA,
    )
    description: str | None = Field(
        default=None, description=f"Free text, at most {MAX_DESCRIPTION_LENGTH} characters."
    )
    enabled: StrictBool = Field(default=True, description="Disabled endpoints receive nothing.")


class WebhookEndpointUpdate(APIInput):
    """A merge: only the fields present change; `description: null` clears it."""

    url: NotNull[str] = Field(default=None, description="As on create; not null.")
    events: NotNull[list[str]] = Field(
        default=None, description="As on create; not null.", json_schema_extra=_EVENTS_SCHEMA
    )
    description: str | None = None
    enabled: NotNull[StrictBool] = Field(
        default=None,
        description="false holds pending deliveries (not sent, expiry unchanged) and creates "
        "no new ones; true resumes the held ones at once. Not null.",
    )


class RotateSecretInput(APIInput):
    expire_current_in_seconds: JSONInt = Field(
        default=0,
        ge=0,
        le=MAX_ROTATION_GRACE_SECONDS,
        description="How long the secret being replaced keeps signing beside the new one "
        "(deliveries then carry two `v1=` signatures). 0 retires it at once. A rotation "
        "during a grace retires the older secret at once: at most two secrets sign.",
    )


class SecretMetadata(APIModel):
    """The signing secret, masked: the secret itself is shown only by create and rotate."""

    prefix: Literal["whsec_"] = "whsec_"
    last4: str = Field(description="The last four characters of the secret.")
    created_at: UTCDatetime
    previous_expires_at: UTCDatetime | None = Field(
        description="Until when the previous secret also signs deliveries; null if it no "
        "longer does."
    )


class WebhookEndpoint(APIModel):
    id: uuid.UUID
    url: str
    events: list[EventType]
    enabled: bool
    description: str | None
    secret: SecretMetadata
    created_at: UTCDatetime
    updated_at: UTCDatetime


class WebhookEndpointWithSecret(WebhookEndpoint):
    """Returned once, by create and rotate, with `Cache-Control: no-store`."""

    signing_secret: str = Field(
        description="`whsec_` and the base64 of 32 random bytes. Store it now: it is never "
        "shown again. The HMAC key is the base64-decoded part after `whsec_`."
    )


class DeletedWebhookEndpoint(APIModel):
    id: uuid.UUID
    object: Literal["webhookEndpoint"] = "webhookEndpoint"
    deleted: Literal[True] = True


class SendTestInput(APIInput):
    event: Literal["webhook.test.v1"] = Field(description="The only test event.")


class QueuedTest(APIModel):
    delivery_id: uuid.UUID
    event_id: uuid.UUID = Field(description="Also the `Webhook-Id` of the request.")
    status: Literal["pending"] = "pending"


class AttemptError(APIModel):
    code: str = Field(
        description="Retried: `timeout`, `connection_error`, `dns_error`, `tls_error`, "
        "`destination_blocked` (the name resolved to a non-public address; nothing was sent), "
        "`internal_error` (on Pressroom's side), and `http_error` for 408, 425, 429 and 5xx. "
        "Final: `redirect` (3xx, never followed) and `http_error` for any other status."
    )
    message: str


class DeliveryAttempt(APIModel):
    id: uuid.UUID
    number: int = Field(description="1 for the first attempt, counting replays.")
    trigger: Literal["scheduled", "replay", "test"]
    started_at: UTCDatetime
    response_status: int | None = Field(description="The status received; null if none came.")
    latency_ms: int | None = Field(
        description="From the start of the attempt (name resolution included) to the response "
        "status; null if no response came."
    )
    outcome: Literal["succeeded", "failed"]
    error: AttemptError | None


# A delivery's copy of a figure of its latest attempt.
OfLatestAttempt = Annotated[int | None, Field(description="Of the latest attempt.")]


class WebhookDelivery(APIModel):
    id: uuid.UUID
    endpoint_id: uuid.UUID
    event_id: uuid.UUID = Field(description="The `Webhook-Id` of every attempt.")
    event_type: EventType
    status: DeliveryStatus = Field(
        description="`pending` (waiting for its next attempt, or held while the endpoint is "
        "disabled), `processing` (an attempt is under way), `succeeded` (a 2xx came), "
        "`exhausted` (a non-retryable answer, or every attempt failed), `expired` (past "
        "`expiresAt`: never sent again, purged later)."
    )
    response_status: OfLatestAttempt
    latency_ms: OfLatestAttempt
    attempt_count: int
    next_attempt_at: UTCDatetime | None = Field(
        description="When the next attempt is due, while `pending`; otherwise null."
    )
    created_at: UTCDatetime
    expires_at: UTCDatetime
    payload: dict[str, Any] = Field(description="The event exactly as it is sent.")


class WebhookDeliveryDetail(WebhookDelivery):
    attempts: list[DeliveryAttempt] = Field(description="Every attempt, oldest first.")
