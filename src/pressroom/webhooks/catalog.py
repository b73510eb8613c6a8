"""The event catalog: every event type as an entry of the OpenAPI document's `webhooks`
section (3.1), with the request Pressroom sends: the signature headers and the event body,
whose `data` is specific to the type. Integrators generate receivers from it and check
payloads against it.

The bodies refer to the document's own `Post`, `Channel` and `Media` schemas by name: the
events carry exactly the getPost, getChannel and getMedia forms."""

from __future__ import annotations

from typing import Any

from pressroom.webhooks.outbox import EVENT_TYPES

_UUID = {"type": "string", "format": "uuid"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _data(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(properties),
        "properties": properties,
        "additionalProperties": False,
    }


_POST = {"post": _ref("Post")}
# Events about one target of a post also name the target.
_PER_TARGET = {**_POST, "targetId": {**_UUID, "description": "The target it happened to."}}
_CHANNEL = {"channel": _ref("Channel")}

# (data, what the event means)
_EVENTS: dict[str, tuple[dict[str, Any], str]] = {
    "channel.connected.v1": (_CHANNEL, "A channel was connected (or reconnected)."),
    "channel.disconnected.v1": (_CHANNEL, "A channel was disconnected."),
    "channel.reconnect-required.v1": (
        _CHANNEL,
        "The network refused the channel's credentials: it must be connected again.",
    ),
    "media.created.v1": ({"media": _ref("Media")}, "A media asset was uploaded."),
    "post.created.v1": (_POST, "A post was created."),
    "post.updated.v1": (_POST, "A post was changed."),
    "post.deleted.v1": (_POST, "A post was deleted; `post` is its last state."),
    "post.scheduled.v1": (_POST, "A post became scheduled."),
    "post.published.v1": (_PER_TARGET, "One target of a post was published."),
    "post.failed.v1": (_PER_TARGET, "One target of a post failed for good."),
    "webhook.test.v1": (
        {"endpointId": {**_UUID, "description": "The endpoint the test was sent to."}},
        "A test asked for with sendWebhookTest, sent to that endpoint alone.",
    ),
}

_HEADERS: list[dict[str, Any]] = [
    {
        "name": "Webhook-Id",
        "in": "header",
        "required": True,
        "description": "The event id (`id` of the body): the same on every attempt and "
        "endpoint. Deduplicate on it: delivery is at least once.",
        "schema": _UUID,
    },
    {
        "name": "Webhook-Timestamp",
        "in": "header",
        "required": True,
        "description": "Unix seconds of this attempt. Reject values more than five minutes "
        "off your clock.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
    {
        "name": "Webhook-Signature",
        "in": "header",
        "required": True,
        "description": "`v1=` and the base64 HMAC-SHA256 of `<Webhook-Id>.<Webhook-Timestamp>."
        "<raw body>`, keyed with the base64-decoded part of the endpoint's `whsec_` secret; "
        "during a rotation grace one value per live secret, space-separated. Verify it before "
        "parsing the body.",
        "schema": {"type": "string", "pattern": "^v1=[A-Za-z0-9+/=]+( v1=[A-Za-z0-9+/=]+)*$"},
    },
]


def schema_name(event_type: str) -> str:
    """`post.created.v1` -> `PostCreatedV1Event`: the component holding the body."""
    words = event_type.replace("-", ".").split(".")
    return "".join(word.capitalize() for word in words) + "Event"


def _body(event_type: str, data: dict[str, Any], summary: str) -> dict[str, Any]:
    return {
        "type": "object",
        "description": summary,
        "required": ["id", "type", "createdAt", "organizationId", "data"],
        "properties": {
            "id": {**_UUID, "description": "The event id, also sent as `Webhook-Id`."},
            "type": {"type": "string", "const": event_type},
            "createdAt": {"type": "string", "format": "date-time"},
            "organizationId": _UUID,
            "data": _data(data),
        },
        "additionalProperties": False,
    }


def _operation(event_type: str, summary: str) -> dict[str, Any]:
    return {
        "post": {
            "operationId": schema_name(event_type)[0].lower() + schema_name(event_type)[1:],
            "summary": event_type,
            "description": f"{summary} Sent to each enabled endpoint subscribed to "
            f"`{event_type}` as a signed POST of the body's exact bytes.",
            "tags": ["Events"],
            # Pressroom presents no credential: the receiver checks the signature headers.
            "security": [],
            "parameters": _HEADERS,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": _ref(schema_name(event_type))}},
            },
            "responses": {
                "200": {"description": "Any 2xx acknowledges the delivery."},
                "default": {
                    "description": "Any other status, or no answer within the timeout, fails "
                    "the attempt: 408, 425, 429 and 5xx (and network errors) are retried, "
                    "other statuses are not."
                },
            },
        }
    }


def event_catalog() -> tuple[dict[str, Any], dict[str, Any]]:
    """The document's `webhooks` section and the component schemas it refers to."""
    webhooks = {t: _operation(t, _EVENTS[t][1]) for t in EVENT_TYPES}
    schemas = {schema_name(t): _body(t, *_EVENTS[t]) for t in EVENT_TYPES}
    return webhooks, schemas
