"""What Instagram accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import alt_texts_option
from pressroom.providers.rules import first_comment_option
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# Content Publishing (https://developers.facebook.com/docs/instagram-platform/content-publishing/)
# and IG User Media (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media):
# caption up to 2,200 characters; images JPEG only, 8 MB, aspect ratio 4:5 to 1.91:1; reels MOV or
# MP4, 300 MB, 3 seconds to 15 minutes, aspect ratio 0.01:1 to 10:1; story videos 100 MB, 3 to 60
# seconds; carousels 2 to 10 images and videos, carousel videos 100 MB, 3 to 60 seconds, aspect
# ratio 4:5 to 16:9. Reels cannot appear in carousels; stories publish no caption, and through the
# API only business accounts (not creator accounts) can publish them.
_IG_IMAGE = MediaKindRule(
    max_items=1, mime_types=[JPEG], max_bytes=8 * MB, aspect_ratios=["4:5", "1.91:1"]
)
# `alt_text` is taken on image containers only ("Reels and stories are not supported", Content
# Publishing, March 24, 2025), single images and carousel items alike; the API states no length
# for it, nor for a comment's `message` (IG Media Comments), so both are held to the caption's.
_ALT_TEXTS = alt_texts_option(2200, "graphemes")
# POST /{ig-media-id}/comments with `message`; a story takes no comments.
_FIRST_COMMENT = first_comment_option(2200, "graphemes")
DECLARATION = ProviderDeclaration(
    id="instagram",
    name="Instagram",
    configured=False,
    # Business Login for Instagram (the Instagram API with Instagram Login, OAuth 2.0); the
    # Facebook Login variant, through a Page, is not built.
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(2200),
            media=media_rule(1, 1, image=_IG_IMAGE),
            options=[_FIRST_COMMENT, _ALT_TEXTS],
        ),
        ContentKind(
            kind="reel",
            text=text_rule(2200),
            media=media_rule(
                1,
                1,
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, MOV],
                    max_bytes=300 * MB,
                    min_duration_seconds=3,
                    max_duration_seconds=15 * MINUTE,
                    aspect_ratios=["0.01:1", "10:1"],
                ),
            ),
            options=[
                OptionRule(
                    name="shareToFeed",
                    type="boolean",
                    description="Also show the reel in the feed (share_to_feed); true when absent.",
                ),
                _FIRST_COMMENT,
            ],
        ),
        ContentKind(
            kind="story",
            # A story publishes no caption: a text shared with the post's other targets is
            # accepted and not sent.
            text=text_rule(2200),
            media=media_rule(
                1,
                1,
                image=MediaKindRule(max_items=1, mime_types=[JPEG], max_bytes=8 * MB),
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, MOV],
                    max_bytes=100 * MB,
                    min_duration_seconds=3,
                    max_duration_seconds=60,
                ),
            ),
        ),
        ContentKind(
            kind="carousel",
            text=text_rule(2200),
            media=media_rule(
                2,
                10,
                image=_IG_IMAGE.model_copy(update={"max_items": 10}),
                video=MediaKindRule(
                    max_items=10,
                    mime_types=[MP4, MOV],
                    max_bytes=100 * MB,
                    min_duration_seconds=3,
                    max_duration_seconds=60,
                    aspect_ratios=["4:5", "16:9"],
                ),
            ),
            options=[_FIRST_COMMENT, _ALT_TEXTS],
        ),
    ],
    # First comments: POST /{ig-media-id}/comments (posts, reels, carousels). The Instagram API with
    # Instagram Login offers no way to delete published media (IG Media reference,
    # https://developers.facebook.com/docs/instagram-platform/reference/instagram-media).
    capabilities=Capabilities(threads=False, first_comment=True, delete=False, metrics=True),
    # IG Media insights: reach, views, likes, comments, shares, saved -> saves (impressions and
    # plays were retired in v22.0 for views); stories give reach, views and shares only
    # (https://developers.facebook.com/docs/instagram-platform/reference/instagram-media/insights)
    metrics=["reach", "views", "likes", "comments", "shares", "saves"],
)
