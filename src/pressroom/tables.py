"""Imports every domain's tables, so Base.metadata is complete for migrations and tests."""

from pressroom.analytics.models import MetricChannelState
from pressroom.analytics.models import MetricPoll
from pressroom.analytics.models import MetricSnapshot
from pressroom.analytics.models import TargetMetrics
from pressroom.audit.models import AuditEntry
from pressroom.audit.models import AuditHead
from pressroom.auth.models import ApiKey
from pressroom.auth.models import ConsoleSession
from pressroom.auth.models import Member
from pressroom.auth.models import Organization
from pressroom.auth.models import SignInLink
from pressroom.channels.models import Channel
from pressroom.channels.models import ChannelAuthorization
from pressroom.channels.models import CredentialRevocation
from pressroom.channels.models import MastodonApp
from pressroom.db import Base
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.media.models import MediaAsset
from pressroom.posts.models import Post
from pressroom.posts.models import PostTag
from pressroom.posts.models import PostTarget
from pressroom.posts.models import PostTopic
from pressroom.providers.sandbox.models import SandboxPublication
from pressroom.server_key import ServerKeyCheck
from pressroom.webhooks.models import Delivery
from pressroom.webhooks.models import DeliveryAttempt
from pressroom.webhooks.models import Event
from pressroom.webhooks.models import WebhookEndpoint

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
