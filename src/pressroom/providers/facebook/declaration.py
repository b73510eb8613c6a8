"""What Facebook (Pages) accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GB
from pressroom.providers.rules import GIF
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
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# Text: a Page post's message up to 63,206 characters (contract section 7; the long-standing
# Facebook post limit; https://developers.facebook.com/docs/graph-api/reference/page/feed/ states
# none). A Reel's description is its text; a story publishes none.
_TEXT = text_rule(63206)
# Photos (https://developers.facebook.com/docs/graph-api/reference/photo/): JPEG, BMP, PNG, GIF,
# TIFF, under 10 MB (BMP and TIFF are not media types Pressroom stores). Several photos make one
# post by attaching unpublished photos (attached_media, .../reference/page/feed/); Facebook
# documents no maximum, so 10 (Instagram's carousel size) is Pressroom's own cap.
_FB_PHOTO = MediaKindRule(max_items=10, mime_types=[JPEG, PNG], max_bytes=10 * MB)
_FB_GIF = MediaKindRule(max_items=10, mime_types=[GIF], max_bytes=10 * MB)
# Feed videos go by URL (`file_url`, https://developers.facebook.com/docs/graph-api/reference/page/videos/),
# a non-resumable upload: up to 1 GB and 20 minutes (the 10 GB and 240 minutes of
# https://developers.facebook.com/docs/video-api/guides/publishing need the resumable upload of
# the bytes, which this adapter does not do).
_FB_VIDEO = MediaKindRule(
    max_items=1,
    mime_types=[MP4, MOV],
    max_bytes=1 * GB,
    max_duration_seconds=20 * MINUTE,
    exclusive=True,
)


# Reels (https://developers.facebook.com/docs/video-api/guides/reels-publishing): MP4, 9:16,
# 3 to 90 seconds; at most 30 API-published reels per Page in 24 hours (enforced by Facebook,
# answered as a rate limit).
def _vertical_video(max_seconds: float) -> MediaKindRule:
    return MediaKindRule(
        max_items=1,
        mime_types=[MP4],
        min_duration_seconds=3,
        max_duration_seconds=max_seconds,
        aspect_ratios=["9:16", "9:16"],
    )


_FB_REEL = _vertical_video(90)
# Stories (https://developers.facebook.com/docs/page-stories-api): photos JPEG, BMP, PNG, GIF,
# TIFF up to 10 MB; videos MP4, 9:16, 3 to 60 seconds ("video stories can not exceed 60
# seconds"). A story takes no caption and no comment.
_FB_STORY_VIDEO = _vertical_video(60)
# The first comment: Meta's comments reference states no length; 8,000 characters is what
# Facebook's comment box takes (as widely reported; not in Meta's API documentation).
_FIRST_COMMENT = first_comment_option(8000, "graphemes")
# Alt text of photos goes in `alt_text_custom` (photo reference); Meta states no length, so
# 1,000 characters (X's, the strictest documented) is Pressroom's own cap. Videos and Reels take
# none through the API: the option names photos only.
_ALT_TEXTS = alt_texts_option(1000, "graphemes")
_LINK = OptionRule(
    name="link",
    type="string",
    pattern=r"https?://\S+",
    description="A URL Facebook attaches to a post without media, previewed under the text "
    "(the feed's `link`).",
)
DECLARATION = ProviderDeclaration(
    id="facebook",
    name="Facebook",
    configured=False,
    # Facebook Login, then a Page access token per granted Page:
    # https://developers.facebook.com/docs/pages-api/getting-started
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=_TEXT,
            media=media_rule(0, 10, image=_FB_PHOTO, gif=_FB_GIF, video=_FB_VIDEO),
            options=[_FIRST_COMMENT, _ALT_TEXTS, _LINK],
        ),
        ContentKind(
            kind="reel",
            text=_TEXT,
            media=media_rule(1, 1, video=_FB_REEL),
            options=[_FIRST_COMMENT],
        ),
        ContentKind(
            kind="story",
            text=_TEXT,  # accepted for uniformity; Facebook publishes no story caption
            media=media_rule(
                1,
                1,
                image=MediaKindRule(max_items=1, mime_types=[JPEG, PNG], max_bytes=10 * MB),
                video=_FB_STORY_VIDEO,
            ),
        ),
    ],
    # Comments: POST /{object-id}/comments; delete: DELETE /{post-id}
    # (https://developers.facebook.com/docs/graph-api/reference/post/). No threads.
    capabilities=Capabilities(threads=False, first_comment=True, delete=True, metrics=True),
    # Reactions, comments and shares of the post, and its insights: post_media_view (views),
    # post_total_media_view_unique (reach), post_clicks (clicks). Meta replaced impressions by
    # views in 2025 (https://developers.facebook.com/docs/platforminsights/page/deprecated-metrics).
    metrics=["reach", "views", "likes", "comments", "shares", "clicks"],
)
