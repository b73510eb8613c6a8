"""What Threads accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GB
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PNG
from pressroom.providers.rules import alt_texts_option
from pressroom.providers.rules import first_comment_option
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.rules import thread_option
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# Text: 500 characters, and "Emojis are counted as the number of UTF-8 bytes" (Posts,
# Limitations: https://developers.facebook.com/docs/threads/posts); "Threads posts containing
# more than 5 links will fail to post" from December 22, 2025, counting "all unique URLs found in
# the text field" (https://developers.facebook.com/documentation/threads/create-posts/text-attachments);
# Threads does not say how it finds URLs, so they are found as X finds them (with or without a
# scheme: its own examples count www.facebook.com). Media
# specifications (https://developers.facebook.com/docs/threads/overview#media-specifications):
# images JPEG or PNG, 8 MB, aspect ratio limit 10:1; videos MOV or MP4, 1 GB, 5 minutes, aspect
# ratio 0.01:1 to 10:1. Carousels: 2 to 20 images, videos or a mix
# (https://developers.facebook.com/docs/threads/posts#carousel-posts).
_THREADS_IMAGE = MediaKindRule(
    max_items=1, mime_types=[JPEG, PNG], max_bytes=8 * MB, aspect_ratios=["1:10", "10:1"]
)
_THREADS_VIDEO = MediaKindRule(
    max_items=1,
    mime_types=[MP4, MOV],
    max_bytes=1 * GB,
    max_duration_seconds=5 * MINUTE,
    aspect_ratios=["0.01:1", "10:1"],
)
# reply_control of POST /{threads-user-id}/threads
# (https://developers.facebook.com/docs/threads/reference/publishing, .../reply-management).
REPLY_CONTROLS = (
    "everyone",
    "accounts_you_follow",
    "mentioned_only",
    "parent_post_author_only",
    "followers_only",
)
_THREADS_OPTIONS = [
    OptionRule(
        name="replyControl",
        type="enum",
        values=list(REPLY_CONTROLS),
        description="Who may reply to the post and its thread's follow-ups; everyone when absent.",
    ),
    # Follow-ups are replies (reply_to_id), each to the one before, held to the text rule.
    thread_option(),
    # A reply to the post from the same account, held to the post's 500 characters (the
    # adapter also counts its emoji as UTF-8 bytes, which an option rule cannot say).
    first_comment_option(500, "graphemes"),
    # alt_text: "The maximum length of alt_text is 1,000 characters" (reference/publishing
    # above); counted in UTF-16 units, never fewer than Threads' characters.
    alt_texts_option(1000, "utf16"),
]
DECLARATION = ProviderDeclaration(
    id="threads",
    name="Threads",
    configured=False,
    # Threads OAuth 2.0:
    # https://developers.facebook.com/docs/threads/get-started
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(500, emoji_as_bytes=True, max_links=5),
            media=media_rule(0, 1, image=_THREADS_IMAGE, video=_THREADS_VIDEO),
            options=_THREADS_OPTIONS,
        ),
        ContentKind(
            kind="carousel",
            text=text_rule(500, emoji_as_bytes=True, max_links=5),
            media=media_rule(
                2,
                20,
                image=_THREADS_IMAGE.model_copy(update={"max_items": 20}),
                video=_THREADS_VIDEO.model_copy(update={"max_items": 20}),
            ),
            options=_THREADS_OPTIONS,
        ),
    ],
    # Replies: reply_to_id (a thread, the first comment); delete: DELETE /{threads-media-id}
    # (https://developers.facebook.com/docs/threads/posts/delete-posts).
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # Media insights: views, likes, replies (comments), reposts + quotes + shares (shares)
    # (https://developers.facebook.com/docs/threads/insights).
    metrics=["views", "likes", "comments", "shares"],
)
