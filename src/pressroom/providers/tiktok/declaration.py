"""What TikTok accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GB
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import WEBM
from pressroom.providers.rules import WEBP
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# Content Posting API: a video's title (its caption) up to 2,200 UTF-16 runes
# (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post); a photo post up
# to 35 images, title 90 runes, description 4,000 runes
# (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post) - Pressroom holds
# the photo description to the contract's 2,200 as well. Media transfer guide
# (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide): videos MP4, WebM,
# MOV, 4 GB, up to 10 minutes (creator_info max_video_post_duration_sec may be lower); photos
# JPEG or WebP, 20 MB each. Minimum video duration 3 seconds (TikTok upload guidance). A file
# upload goes in chunks of 5 to 64 MB, at most 1000 (the same guide; upload.py).
_TIKTOK_PRIVACY = OptionRule(
    name="privacyLevel",
    type="enum",
    # post_info.privacy_level; creator_info/query lists those the account allows
    values=["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
    description="Who can see the post: one of the levels the account's creator info allows. "
    "Until the deployment's TikTok app is audited (PRESSROOM_TIKTOK_AUDITED) only SELF_ONLY; "
    "when absent, SELF_ONLY then, else the most public level the account allows.",
)
_TIKTOK_NO_COMMENTS = OptionRule(
    name="disableComment",
    type="boolean",
    description="Turn comments off (always off when the account turned them off).",
)
DECLARATION = ProviderDeclaration(
    id="tiktok",
    name="TikTok",
    configured=False,
    # Login Kit OAuth 2.0 with video.publish:
    # https://developers.tiktok.com/doc/oauth-user-access-token-management
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="video",
            text=text_rule(2200, "utf16"),
            media=media_rule(
                1,
                1,
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, WEBM, MOV],
                    max_bytes=4 * GB,
                    min_duration_seconds=3,
                    max_duration_seconds=10 * MINUTE,
                ),
            ),
            options=[
                _TIKTOK_PRIVACY,
                _TIKTOK_NO_COMMENTS,
                OptionRule(name="disableDuet", type="boolean", description="Turn duets off."),
                OptionRule(name="disableStitch", type="boolean", description="Turn stitches off."),
            ],
        ),
        ContentKind(
            kind="photo",
            text=text_rule(2200, "utf16"),
            media=media_rule(
                1,
                35,
                image=MediaKindRule(max_items=35, mime_types=[JPEG, WEBP], max_bytes=20 * MB),
            ),
            options=[
                _TIKTOK_PRIVACY,
                _TIKTOK_NO_COMMENTS,
                OptionRule(
                    name="title",
                    type="string",
                    max_length=90,
                    unit="utf16",
                    description="The photo post's title; the text is its description.",
                ),
            ],
        ),
    ],
    # No comment or delete endpoints in the Content Posting API; /v2/video/query/ (scope
    # video.list) reports a public video's counts.
    capabilities=Capabilities(threads=False, first_comment=False, delete=False, metrics=True),
    # Video object fields view_count, like_count, comment_count, share_count
    # (https://developers.tiktok.com/doc/tiktok-api-v2-video-query)
    metrics=["views", "likes", "comments", "shares"],
)
