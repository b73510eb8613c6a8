"""What Facebook (Pages) accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import (
    GB,
    GIF,
    JPEG,
    MB,
    MINUTE,
    MOV,
    MP4,
    PNG,
    media_rule,
    text_rule,
)
from pressroom.providers.schemas import (
    Capabilities,
    ContentKind,
    MediaKindRule,
    ProviderDeclaration,
)

# Text: a Page post's message up to 63,206 characters (contract section 7; the long-standing
# Facebook post limit). Photos: JPEG, BMP, PNG, GIF, TIFF, 10 MB at most; videos for stories:
# MP4, 9:16, 3 to 90 seconds (https://developers.facebook.com/docs/page-stories-api). Feed videos:
# up to 10 GB and 240 minutes (https://developers.facebook.com/docs/video-api/guides/publishing).
# Reels: MP4, 9:16, 3 to 90 seconds
# (https://developers.facebook.com/docs/video-api/guides/reels-publishing).
# A multi-photo post attaches unpublished photos through attached_media
# (https://developers.facebook.com/docs/graph-api/reference/page/feed/); Facebook documents no
# maximum, so 10 (Instagram's carousel size) is Pressroom's own cap.
_FB_PHOTO = MediaKindRule(max_items=10, mime_types=[JPEG, PNG], max_bytes=10 * MB)
_FB_GIF = MediaKindRule(max_items=10, mime_types=[GIF], max_bytes=10 * MB)
_FB_VERTICAL_VIDEO = MediaKindRule(
    max_items=1,
    mime_types=[MP4],
    min_duration_seconds=3,
    max_duration_seconds=90,
    aspect_ratios=["9:16", "9:16"],
)
DECLARATION = ProviderDeclaration(
    id="facebook",
    name="Facebook",
    configured=False,
    # Facebook Login, then a Page access token:
    # https://developers.facebook.com/docs/pages-api/getting-started
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(63206),
            media=media_rule(
                0,
                10,
                image=_FB_PHOTO,
                gif=_FB_GIF,
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, MOV],
                    max_bytes=10 * GB,
                    max_duration_seconds=240 * MINUTE,
                    exclusive=True,
                ),
            ),
        ),
        ContentKind(
            kind="reel", text=text_rule(63206), media=media_rule(1, 1, video=_FB_VERTICAL_VIDEO)
        ),
        ContentKind(
            kind="story",
            text=text_rule(63206),  # Page stories carry no caption; text is not published.
            media=media_rule(
                1,
                1,
                image=MediaKindRule(max_items=1, mime_types=[JPEG, PNG], max_bytes=10 * MB),
                video=_FB_VERTICAL_VIDEO,
            ),
        ),
    ],
    # Comments: POST /{post-id}/comments; delete: DELETE /{post-id}
    # (https://developers.facebook.com/docs/graph-api/reference/post/).
    capabilities=Capabilities(threads=False, first_comment=True, delete=True, metrics=True),
    # Page post insights: post_impressions, post_impressions_unique, post_video_views, reactions,
    # comments, shares, post_clicks (https://developers.facebook.com/docs/graph-api/reference/insights/)
    metrics=["impressions", "reach", "views", "likes", "comments", "shares", "clicks"],
)
