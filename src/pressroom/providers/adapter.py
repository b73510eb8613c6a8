"""The provider adapter interface: what the publisher, the metrics poller and the
channel health check need from a social network, and how its failures are described."""

from __future__ import annotations

import uuid
from abc import ABC
from abc import abstractmethod
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any
from typing import ClassVar
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

# The actionable error codes of contract section 7 (Publishing), with whether a retry can
# help. Adapters classify every provider failure into one of these.
ERROR_CODES: dict[str, bool] = {
    "auth_expired": False,  # the channel must be reconnected
    "rate_limited": True,
    "media_rejected": False,
    "text_rejected": False,
    "provider_unavailable": True,
    "duplicate_content": False,
    "permission_denied": False,
    "not_found": False,
    "invalid_request": False,
    "channel_disconnected": False,
    "timeout": True,
}


class ProviderError(Exception):
    """A classified provider failure. `message` must be actionable and must never carry a
    token or secret; `retry_after` (seconds) comes from the provider when it says so."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        retryable: bool | None = None,
        retry_after: float | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown provider error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = ERROR_CODES[code] if retryable is None else retryable
        self.retry_after = retry_after


# What a refusal's message names as refused: (error code, what, words naming it).
RefusedParts = Iterable[tuple[str, str, Iterable[str]]]


def refused_part(provider: str, detail: str, parts: RefusedParts) -> ProviderError | None:
    """A refusal for what its message names: the first of `parts` one of whose words `detail`
    contains, as "{provider} refused {what}: {detail}" with its error code; None when the
    message names none of them. `detail` must already be safe (`http.safe_detail`)."""
    lowered = detail.lower()
    for code, what, words in parts:
        if any(word in lowered for word in words):
            return ProviderError(code, f"{provider} refused {what}: {detail}")
    return None


def duplicate_refused(provider: str, detail: str, of: str) -> ProviderError:
    """`duplicate_content` for a post the network refused as a duplicate `of` one it holds
    (`detail` must already be safe): only a change of text lets it through."""
    return ProviderError(
        "duplicate_content",
        f"{provider} refused the post as a duplicate of {of} ({detail}). "
        "Change the text to post it again.",
    )


@dataclass(frozen=True)
class ChannelContext:
    """What an adapter knows of the channel it acts for. `credentials` are decrypted
    provider tokens (never logged); empty for the sandbox and simulated channels."""

    id: uuid.UUID
    organization_id: uuid.UUID
    provider: str
    handle: str | None
    simulated: bool
    credentials: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def unsaved(cls, provider: str, credentials: dict[str, Any]) -> ChannelContext:
        """A channel not stored yet: its credentials are checked before it is connected."""
        return cls(
            id=uuid.uuid4(),
            organization_id=uuid.uuid4(),
            provider=provider,
            handle=None,
            simulated=False,
            credentials=credentials,
        )


@dataclass(frozen=True)
class MediaItem:
    id: uuid.UUID
    kind: str  # image | gif | video | document
    mime_type: str
    size_bytes: int
    storage_key: str
    # The name the file was uploaded under (LinkedIn titles a document with it).
    filename: str = ""


@dataclass(frozen=True)
class PublishRequest:
    channel: ChannelContext
    target_id: uuid.UUID
    content_kind: str
    text: str
    media: tuple[MediaItem, ...]
    options: dict[str, Any]
    # Stable for one target and one schedule: sent as the provider's own idempotency key
    # where it has one, so a retried or re-claimed publish cannot post twice.
    idempotency_key: str
    # Which attempt this is (1 for the first), for simulators that fail N times.
    attempt: int = 1


@dataclass(frozen=True)
class PublishResult:
    provider_post_id: str
    url: str | None
    published_at: datetime
    # The post is live but its first comment (`options.firstComment`) was refused: why. It is
    # recorded on the published target and never retried (a retry could only post it again).
    comment_error: ProviderError | None = None
    # The post is live but something the target asked for with it was not done (YouTube: its
    # custom thumbnail): why. Recorded on the published target like `comment_error`.
    warning: ProviderError | None = None


@dataclass(frozen=True)
class HealthResult:
    state: str  # healthy | degraded | reconnect_required
    reason: str | None = None

    @classmethod
    def failed(cls, error: ProviderError) -> HealthResult:
        """A check that failed: a refused token needs a reconnect, anything else degrades."""
        state = "reconnect_required" if error.code == "auth_expired" else "degraded"
        return cls(state, error.message)


async def probed_health(probe: Callable[[], Awaitable[object]]) -> HealthResult:
    """The health of a channel whose check is one call (`probe`): healthy once it answers,
    else what its ProviderError says (`HealthResult.failed`)."""
    try:
        await probe()
    except ProviderError as error:
        return HealthResult.failed(error)
    return HealthResult("healthy")


class ProviderAdapter(Protocol):
    """One implementation per network (and the sandbox simulator)."""

    provider: str

    async def publish(self, request: PublishRequest) -> PublishResult:
        """Publish, or raise ProviderError. Must be safe to call again with the same
        idempotency key after a crash (return the existing post, not a second one)."""
        ...

    async def delete(self, channel: ChannelContext, provider_post_id: str) -> None: ...

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        """Current values of the canonical metrics this network reports (impressions,
        reach, views, likes, comments, shares, saves, clicks); raise ProviderError."""
        ...

    async def check_health(self, channel: ChannelContext) -> HealthResult: ...


class SessionMetrics(ABC):
    """`fetch_metrics` for an adapter whose network's metrics of a post are read through a
    session of the post's channel (`_session`) by its `read_metrics`."""

    # The network's reading of a post's metrics, given a session of its channel and its id.
    read_metrics: ClassVar[staticmethod[[Any, str], Awaitable[dict[str, int]]]]

    @abstractmethod
    def _session(self, channel: ChannelContext) -> Any:
        """A session of `channel`'s account."""

    async def fetch_metrics(
        self, channel: ChannelContext, provider_post_id: str, published_at: datetime
    ) -> dict[str, int]:
        return await self.read_metrics(self._session(channel), provider_post_id)


# What a revocation came to. `revoked`: the provider invalidated the tokens (or said they were
# already invalid). `nothing_to_revoke`: the channel holds no token at the provider (the
# sandbox, a simulated channel, a Bluesky account that never logged in). `unsupported`:
# Pressroom holds a token it has no way to revoke (only the account's owner can).
Revocation = Literal["revoked", "nothing_to_revoke", "unsupported"]


@runtime_checkable
class RevokingAdapter(Protocol):
    """The optional capability of revoking a disconnected channel's tokens at the provider.
    An adapter without it counts as `unsupported`."""

    async def revoke(self, channel: ChannelContext) -> Revocation:
        """Invalidate the tokens of `channel.credentials` at the provider; raise
        ProviderError (retryable or not) when the provider could not be told. Must be safe
        to call again: revoking a token already revoked is a success."""
        ...


@runtime_checkable
class LimitsAdapter(Protocol):
    """The optional capability of reading what one account's own server accepts where it
    differs from the provider's declaration (a Mastodon instance's character limit). The
    channel keeps what it answers (read at connect and at each health check), and its targets
    are validated against the declaration as that server applies it
    (`declarations.channel_declaration`)."""

    async def read_limits(self, channel: ChannelContext) -> dict[str, Any]:
        """The server's limits, as the provider's declaration module reads them back; raise
        ProviderError when they cannot be read."""
        ...


def counter_metrics(
    counters: Mapping[str, Any], fields: Mapping[str, Sequence[str]]
) -> dict[str, int]:
    """Pressroom's metric keys from a post's counters as a network answers them: each key is
    the sum of the counters named for it; a missing or unreadable counter counts 0 (a count
    given as a digit string, as YouTube gives them, is read)."""
    return {
        key: sum(_counter(counters.get(name)) for name in names) for key, names in fields.items()
    }


def shown_metrics(
    counters: object, fields: Mapping[str, Sequence[str]], provider: str, post: str
) -> dict[str, int]:
    """`counter_metrics` of the counters a network shows for `post` ("video 123"), or
    `not_found` when it shows none: the post was deleted or is hidden."""
    if not isinstance(counters, dict):
        raise ProviderError(
            "not_found", f"{provider} no longer shows {post}; it may have been deleted."
        )
    return counter_metrics(counters, fields)


def _counter(value: object) -> int:
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
