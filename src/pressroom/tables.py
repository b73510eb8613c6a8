"""Imports every domain's tables, so Base.metadata is complete for migrations and tests."""

from pressroom.analytics.models import (
    MetricChannelState,
    MetricPoll,
    MetricSnapshot,
    TargetMetrics,
)
from pressroom.audit.models import AuditEntry, AuditHead
from pressroom.auth.models import ApiKey, ConsoleSession, Member, Organization, SignInLink
from pressroom.channels.models import (
    Channel,
    ChannelAuthorization,
    CredentialRevocation,
    MastodonApp,
)
from pressroom.db import Base
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.media.models import MediaAsset
from pressroom.posts.models import Post, PostTag, PostTarget, PostTopic
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.server_key import ServerKeyCheck
from pressroom.webhooks.models import Delivery, DeliveryAttempt, Event, WebhookEndpoint

__all__ = [
    "ApiKey",
    "AuditEntry",
    "AuditHead",
    "Base",
    "Channel",
    "ChannelAuthorization",
    "ConsoleSession",
    "CredentialRevocation",
    "Delivery",
    "DeliveryAttempt",
    "Event",
    "IdempotencyRecord",
    "MastodonApp",
    "MediaAsset",
    "Member",
    "MetricChannelState",
    "MetricPoll",
    "MetricSnapshot",
    "Organization",
    "Post",
    "PostTag",
    "PostTarget",
    "PostTopic",
    "SandboxPublication",
    "ServerKeyCheck",
    "SignInLink",
    "TargetMetrics",
    "WebhookEndpoint",
]
