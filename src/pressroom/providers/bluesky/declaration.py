"""What Bluesky accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GIF
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
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
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import ProviderDeclaration

# Text: app.bsky.feed.post "text" maxGraphemes 300 and maxLength 3000 (UTF-8 bytes), both enforced
# (https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json, as
# shipped in @atproto/api 0.21.0): a text within 300 graphemes can still pass 3000 bytes (a ZWJ
# family emoji is 1 grapheme and 25 bytes; 5000 ZWJs are 1 grapheme and 15,000 bytes). Graphemes
# are what @atproto/api's RichText counts (Intl.Segmenter), held to it by tests/differential.
# Images: app.bsky.embed.images maxLength 4, blob maxSize 1,000,000 bytes, accept image/*
# (.../lexicons/app/bsky/embed/images.json). Video: app.bsky.embed.video, one per post, blob
# maxSize 100,000,000 bytes (.../lexicons/app/bsky/embed/video.json); the video service takes MP4,
# MOV and WebM (video launch post, https://bsky.social/about/blog, 2024-09-11), up to 3 minutes
# since app release 1.99 (March 2025). A post embeds images or a video, not both.
DECLARATION = ProviderDeclaration(
    id="bluesky",
    name="Bluesky",
    configured=False,
    connection="app_password",  # com.atproto.server.createSession with an app password
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(300, max_bytes=3000),
            media=media_rule(
                0,
                4,
                image=MediaKindRule(max_items=4, mime_types=[JPEG, PNG, WEBP], max_bytes=1 * MB),
                gif=MediaKindRule(max_items=4, mime_types=[GIF], max_bytes=1 * MB),
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, MOV, WEBM],
                    max_bytes=100 * MB,
                    max_duration_seconds=3 * MINUTE,
                    exclusive=True,
                ),
            ),
            options=[
                # Replies: the post record's reply refs (root and parent); the first comment
                # is one more, its root and parent the post.
                thread_option(),
                first_reply_option(),
                # app.bsky.embed.video alt: maxGraphemes 1000 (.../lexicons/app/bsky/embed/
                # video.json); app.bsky.embed.images alt has no limit, Pressroom holds it to the
                # same 1000.
                alt_texts_option(1000, "graphemes"),
            ],
        )
    ],
    # Replies: the post record's reply refs; delete: com.atproto.repo.deleteRecord.
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # app.bsky.feed.defs#postView: likeCount, replyCount, repostCount + quoteCount
    metrics=["likes", "comments", "shares"],
)
