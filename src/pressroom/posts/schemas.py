"""Posts on the wire (contract section 7, "Posts")."""

from __future__ import annotations

import re
import uuid
from typing import Annotated
from typing import Any
from typing import Literal

from pydantic import BeforeValidator
from pydantic import Field
from pydantic import StrictBool

from pressroom.kit.schema import APIInput
from pressroom.kit.schema import APIModel
from pressroom.kit.schema import AwareDatetime
from pressroom.kit.schema import NotNull
from pressroom.kit.schema import UTCDatetime
from pressroom.providers.text import TextUnit

PostStatus = Literal[
    "draft",
    "pending_approval",
    "scheduled",
    "publishing",
    "published",
    "partially_published",
    "failed",
]
TargetStatus = Literal[
    "draft", "pending_approval", "scheduled", "publishing", "published", "failed", "canceled"
]
ApprovalStatus = Literal["not_required", "pending", "approved", "rejected"]

MAX_TARGETS = 20
MAX_MEDIA = 50
MAX_LABELS = 20
MAX_LABEL_LENGTH = 100
# Far above every network's limit (Facebook's 63,206 is the largest): a sanity bound only.
MAX_TEXT_LENGTH = 200_000

_TEXT = Field(default=None, max_length=MAX_TEXT_LENGTH)

Tags = Annotated[
    list[str],
    Field(
        max_length=MAX_LABELS,
        description=f"Campaign tag values, at most {MAX_LABELS}, each 1-{MAX_LABEL_LENGTH} "
        "characters, distinct, without commas (analytics filters take comma-separated tags).",
    ),
]
Topics = Annotated[
    list[str],
    Field(
        max_length=MAX_LABELS,
        description=f"Free topic labels, at most {MAX_LABELS}, each 1-{MAX_LABEL_LENGTH} "
        "characters, distinct.",
    ),
]
MediaIds = Annotated[list[uuid.UUID], Field(max_length=MAX_MEDIA)]
Model = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=100,
        description="The AI model that wrote the text (for example `gpt-5`); null when a "
        "person did.",
    ),
]
ContentKindName = Annotated[
    str | None,
    Field(
        max_length=32,
        description="One of the provider's content kinds (`GET /providers/{providerId}`); "
        "the provider's first content kind when absent.",
    ),
]


def _integral_options(value: Any) -> Any:
    # An integer option may be written 60.0, which JSON Schema calls an integer too.
    if isinstance(value, dict):
        return {
            key: int(item) if isinstance(item, float) and item.is_integer() else item
            for key, item in value.items()
        }
    return value


Options = Annotated[
    dict[str, Any],
    BeforeValidator(_integral_options),
    Field(
        description="Provider-specific options of the content kind (its declaration lists "
        "them); unknown options are a 400."
    ),
]


class TargetCreate(APIInput):
    """One destination: a channel and a content kind, with optional overrides."""

    channel_id: uuid.UUID
    content_kind: ContentKindName = None
    text: str | None = Field(
        default=None,
        max_length=MAX_TEXT_LENGTH,
        description="Overrides the post's text on this target; null or absent: the post's.",
    )
    media_ids: MediaIds | None = Field(
        default=None,
        description="Overrides the post's media on this target (`[]`: none); null or "
        "absent: the post's.",
    )
    options: Options = Field(default_factory=dict)


class TargetUpdate(APIInput):
    """An entry of a PATCH's `targets`: with an `id`, a merge into that target (absent
    fields keep their value); without, a new target (`channelId` required)."""

    id: uuid.UUID | None = None
    channel_id: uuid.UUID | None = None
    content_kind: ContentKindName = None
    text: str | None = Field(default=None, max_length=MAX_TEXT_LENGTH)
    media_ids: MediaIds | None = None
    options: Options | None = None


class ApprovalCreate(APIInput):
    required: StrictBool = Field(
        default=False,
        description="The post must be approved by an owner or admin before it is published.",
    )


class ApprovalUpdate(APIInput):
    required: StrictBool | None = Field(
        default=None,
        description="Turning the requirement off on a post that has it is a decision too: "
        "only an owner or admin may (403 `insufficient_role`).",
    )
    status: Literal["approved", "rejected"] | None = Field(
        default=None,
        description="The decision, by an owner or admin only (403 `insufficient_role` for a "
        "member). `approved` moves a `pending_approval` post to `scheduled` (or `publishing` "
        "if due); a draft may be approved in advance. `rejected` returns the post to `draft` "
        "(its `scheduledAt` is cleared). Changing the text or media of an approved post "
        "makes its approval `pending` again.",
    )


class PostCreate(APIInput):
    text: str | None = _TEXT
    media_ids: MediaIds = Field(default_factory=list)
    scheduled_at: AwareDatetime | None = Field(
        default=None,
        description="When to publish (RFC 3339 with an offset; stored in UTC). Must be in "
        "the future: use `publishNow` for now. Absent with `publishNow` false: a draft.",
    )
    publish_now: StrictBool = Field(
        default=False,
        description="Publish at once (straight to `publishing`, or to `pending_approval`); "
        "excludes `scheduledAt`.",
    )
    tags: Tags = Field(default_factory=list)
    topics: Topics = Field(default_factory=list)
    model: Model = None
    approval: ApprovalCreate = Field(default_factory=ApprovalCreate)
    targets: list[TargetCreate] = Field(
        min_length=1,
        max_length=MAX_TARGETS,
        description=f"1-{MAX_TARGETS} targets, at most one per (channelId, contentKind).",
    )


class PostUpdate(APIInput):
    """A merge: only the fields present change. `scheduledAt: null` makes a draft again;
    `targets`, when present, is the new list (entries with an `id` update that target,
    entries without add one, omitted targets are removed)."""

    text: str | None = _TEXT
    media_ids: NotNull[MediaIds] = Field(
        default=None, description="The post's media, replaced; not null (`[]`: none)."
    )
    scheduled_at: AwareDatetime | None = None
    publish_now: NotNull[StrictBool] = Field(
        default=None,
        description="`true` publishes now; on a `failed` or `partially_published` post it "
        "also retries the failed targets. `false` changes nothing. Not null.",
    )
    tags: NotNull[Tags] = None
    topics: NotNull[Topics] = None
    model: Model = None
    approval: NotNull[ApprovalUpdate] = None
    targets: NotNull[list[TargetUpdate]] = Field(default=None, min_length=1, max_length=MAX_TARGETS)


class TargetError(APIModel):
    """Why the last attempt failed. `retryable` says whether the kind of error is
    transient (a later attempt may succeed), not whether Pressroom will try again: a
    target in `publishing` will be retried, one in `failed` will not. On a `published`
    target, an error is a warning: the post is live but its first comment
    (`options.firstComment`) was refused, or (YouTube) its custom thumbnail
    (`options.thumbnailMediaId`) was not set; the target stays published and nothing is
    retried."""

    code: str = Field(
        description="`auth_expired`, `rate_limited`, `media_rejected`, `text_rejected`, "
        "`provider_unavailable`, `duplicate_content`, `permission_denied`, `not_found`, "
        "`invalid_request`, `channel_disconnected` or `timeout`."
    )
    message: str
    retryable: bool


class PostTarget(APIModel):
    id: uuid.UUID
    channel_id: uuid.UUID
    provider: str
    content_kind: str
    text: str | None = Field(description="The effective text: the override, else the post's.")
    media_ids: list[uuid.UUID] = Field(
        description="The effective media: the override, else the post's."
    )
    options: dict[str, Any]
    status: TargetStatus
    published_at: UTCDatetime | None
    provider_post_id: str | None
    url: str | None
    attempts: int = Field(description="Publish attempts made for the current schedule.")
    error: TargetError | None


class Approval(APIModel):
    required: bool
    status: ApprovalStatus
    decided_by: uuid.UUID | None = Field(description="The member who approved or rejected.")
    decided_at: UTCDatetime | None


class Post(APIModel):
    """A logical post with its independently addressed targets."""

    id: uuid.UUID
    text: str | None
    media_ids: list[uuid.UUID]
    scheduled_at: UTCDatetime | None
    tags: list[str]
    topics: list[str]
    model: str | None
    status: PostStatus
    approval: Approval
    published_at: UTCDatetime | None = Field(
        description="The earliest `publishedAt` of its targets; null until one is published."
    )
    created_by: uuid.UUID | None
    created_at: UTCDatetime
    updated_at: UTCDatetime
    targets: list[PostTarget]


class DeletedPost(APIModel):
    id: uuid.UUID
    object: Literal["post"] = "post"
    deleted: Literal[True] = True


_SPACED_OFFSET = re.compile(r"^(.*\d)\s(\d{2}:?\d{2})$")


def _restore_plus(value: Any) -> Any:
    # An unencoded "+02:00" in a query string arrives as " 02:00".
    if isinstance(value, str):
        match = _SPACED_OFFSET.match(value)
        if match:
            return f"{match.group(1)}+{match.group(2)}"
    return value


QueryTime = Annotated[AwareDatetime, BeforeValidator(_restore_plus)]


class FieldProblem(APIModel):
    """One problem, exactly as createPost's 400 would name it in `errors[]`."""

    field: str = Field(examples=["targets[0].text"])
    code: str = Field(examples=["too_long"])
    message: str = Field(examples=["has 312 graphemes; bluesky allows 300"])


class TextLength(APIModel):
    """The effective text measured the way the target's network counts it."""

    count: int = Field(
        description="The length in `unit`, as the network counts it (X: weighted, a URL 23; "
        "Mastodon: a URL 23, a remote mention without its domain; Threads: an emoji as its "
        "UTF-8 bytes). An option the network counts with the text (Mastodon's content "
        "warning, `options.spoilerText`) is included."
    )
    limit: int = Field(description="The most the network accepts, in `unit`.")
    unit: TextUnit
    remaining: int = Field(description="`limit - count`: negative when over the limit.")
    bytes: int = Field(description="The text's size in UTF-8 bytes.")
    max_bytes: int | None = Field(
        description="A second cap in UTF-8 bytes the text must meet too (Bluesky: 3000); null "
        "when the network has none."
    )
    links: int | None = Field(
        description="Distinct links in the text, when the network caps them; else null."
    )
    max_links: int | None = Field(
        description="The most distinct links the network accepts (Threads: 5); null: no cap."
    )


class MediaCheck(APIModel):
    """The target's effective media against its content kind's media rule (each item's type,
    size, duration and shape are checked too; problems are in `errors`)."""

    count: int = Field(description="Media items the target would carry.")
    min_items: int
    max_items: int
    ok: bool = Field(description="No problem names the target's `mediaIds`.")


class PreflightTarget(APIModel):
    """One requested target, as createPost would check it."""

    field: str = Field(description="The target's place in the request (`targets[0]`).")
    channel_id: uuid.UUID
    provider: str | None = Field(description="The channel's network; null for an unknown channel.")
    content_kind: str | None = Field(
        description="The content kind checked: the requested one, else the network's first; "
        "null for an unknown channel."
    )
    text: str | None = Field(description="The effective text: the override, else the post's.")
    text_source: Literal["target", "post"] = Field(
        description="`target` when the target's own `text` overrides the post's."
    )
    media_ids: list[uuid.UUID] = Field(
        description="The effective media: the override, else the post's."
    )
    media_source: Literal["target", "post"]
    length: TextLength | None = Field(
        description="The effective text counted the network's way; null when the channel or "
        "content kind is unknown."
    )
    media: MediaCheck | None = Field(
        description="Null when the channel or content kind is unknown."
    )
    ok: bool = Field(description="No problem names this target (`errors` is empty).")
    errors: list[FieldProblem] = Field(
        description="The problems naming this target's fields (`targets[0]...`): a subset of "
        "the top-level `errors`."
    )


class PostPreflight(APIModel):
    """What createPost would make of a body, without creating anything."""

    ok: bool = Field(description="createPost would accept this body now (no `errors`).")
    detail: str | None = Field(
        description="The `detail` createPost's 400 would carry; null when `ok`."
    )
    errors: list[FieldProblem] = Field(
        description="Every problem createPost would report for this body, in its order, with "
        "the same `field`, `code` and `message`."
    )
    targets: list[PreflightTarget]
