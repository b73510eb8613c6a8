"""What Mastodon accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pressroom.providers.rules import GIF
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PNG
from pressroom.providers.rules import WEBM
from pressroom.providers.rules import WEBP
from pressroom.providers.rules import alt_texts_option
from pressroom.providers.rules import first_reply_option
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.rules import thread_option
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# Defaults of a stock instance (GET /api/v2/instance configuration, https://docs.joinmastodon.org/methods/instance/#v2):
# statuses.max_characters 500, max_media_attachments 4, characters_reserved_per_url 23;
# media_attachments.image_size_limit 16777216, video_size_limit 103809024. Counting follows
# app/validators/status_length_validator.rb (graphemes, URLs 23, @user@domain as @user). A video
# cannot share a status with other media (PostStatusService#validate_media!,
# app/services/post_status_service.rb); GIFs become looping videos but may sit with images.
DECLARATION = ProviderDeclaration(
    id="mastodon",
    name="Mastodon",
    configured=False,
    connection="access_token",  # an application token from the account's Development settings
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(500, url_length=23),
            media=media_rule(
                0,
                4,
                image=MediaKindRule(max_items=4, mime_types=[JPEG, PNG, WEBP], max_bytes=16777216),
                gif=MediaKindRule(max_items=4, mime_types=[GIF], max_bytes=16777216),
                video=MediaKindRule(
                    max_items=1, mime_types=[MP4, MOV, WEBM], max_bytes=103809024, exclusive=True
                ),
            ),
            options=[
                OptionRule(
                    name="visibility",
                    type="enum",
                    # POST /api/v1/statuses "visibility" (https://docs.joinmastodon.org/methods/statuses/#create)
                    values=["public", "unlisted", "private", "direct"],
                    description="Who can see the status; the account's default when absent.",
                ),
                OptionRule(
                    name="sensitive",
                    type="boolean",
                    description="Hide the media behind a sensitive-content warning.",
                ),
                OptionRule(
                    name="spoilerText",
                    type="string",
                    # spoiler_text; StatusLengthValidator counts it with the text against the
                    # instance's limit (app/validators/status_length_validator.rb).
                    counts_toward_text=True,
                    description="A content warning shown in place of the text until opened; "
                    "counted with the text (and with each thread reply, which carries it too).",
                ),
                OptionRule(
                    name="language",
                    type="string",
                    # language: an ISO 639 code (statuses API page above); Mastodon ignores
                    # codes it does not know.
                    pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$",
                    description="The status's language, an ISO 639 code such as `en` or `pt-BR`; "
                    "the account's default when absent.",
                ),
                # Replies: in_reply_to_id; the first comment is one more, replying to the post
                # with its visibility, language and content warning (counted with it too).
                thread_option(),
                first_reply_option(),
                # POST /api/v2/media description: MediaAttachment::MAX_DESCRIPTION_LENGTH 1500
                # characters (app/models/media_attachment.rb); counted in UTF-16 units, never
                # fewer than Ruby's characters.
                alt_texts_option(1500, "utf16"),
            ],
        )
    ],
    # Replies: in_reply_to_id; delete: DELETE /api/v1/statuses/:id (statuses API page above).
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # Status entity: favourites_count, replies_count, reblogs_count
    metrics=["likes", "comments", "shares"],
)


def for_instance(limits: Mapping[str, Any]) -> ProviderDeclaration:
    """The declaration as one instance applies it, from what its channel keeps of the
    instance's configuration (`MastodonAdapter.read_limits`): its own character limit (and
    URL weight) for the text, each thread reply and the first comment; its own number of
    attachments and image and video sizes. A value missing or malformed keeps the stock one."""
    post = DECLARATION.content_kinds[0]
    text_updates = _positive_values(
        limits, {"maxCharacters": "max_length", "charactersReservedPerUrl": "url_length"}
    )
    most = _positive_values(limits, {"maxMediaAttachments": "max_items"})
    kinds = dict(post.media.kinds)
    sizes: tuple[tuple[MediaKind, str], ...] = (
        ("image", "imageSizeLimit"),
        ("gif", "imageSizeLimit"),
        ("video", "videoSizeLimit"),
    )
    for kind, size in sizes:
        rule = kinds[kind]
        updates = _positive_values(limits, {size: "max_bytes"})
        if kind != "video":  # a video stands alone whatever the instance allows
            updates.update(most)
        kinds[kind] = rule.model_copy(update=updates)
    media = media_rule(
        0,
        most.get("max_items", post.media.max_items),
        image=kinds["image"],
        gif=kinds["gif"],
        video=kinds["video"],
    )
    tailored = post.model_copy(
        update={"text": post.text.model_copy(update=text_updates), "media": media}
    )
    return DECLARATION.model_copy(update={"content_kinds": [tailored]})


def _positive_values(limits: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, int]:
    return {
        field: value
        for key, field in names.items()
        if isinstance(value := limits.get(key), int) and not isinstance(value, bool) and value > 0
    }
