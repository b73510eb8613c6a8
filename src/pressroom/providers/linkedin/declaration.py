"""What LinkedIn accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import (
    GIF,
    JPEG,
    MB,
    MINUTE,
    MP4,
    PNG,
    media_rule,
    text_rule,
)
from pressroom.providers.schemas import (
    Capabilities,
    ContentKind,
    MediaKindRule,
    OptionRule,
    ProviderDeclaration,
)

# Text: commentary up to 3000 characters (Posts API,
# https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api).
# Images: JPG, GIF, PNG, under 36,152,320 pixels, GIF up to 250 frames; LinkedIn states no byte
# limit (Images API, .../community-management/shares/images-api). A post holds one image or a
# MultiImage of 2 to 20 (.../community-management/shares/multiimage-post-api), or one video:
# MP4, 75 KB to 500 MB, 3 seconds to 30 minutes, aspect ratio 1:2.4 to 2.4:1 (Videos API,
# .../community-management/shares/videos-api).
DECLARATION = ProviderDeclaration(
    id="linkedin",
    name="LinkedIn",
    configured=False,
    # 3-legged OAuth 2.0:
    # https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(3000),
            media=media_rule(
                0,
                20,
                image=MediaKindRule(max_items=20, mime_types=[JPEG, PNG]),
                gif=MediaKindRule(max_items=20, mime_types=[GIF]),
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4],
                    max_bytes=500 * MB,
                    min_duration_seconds=3,
                    max_duration_seconds=30 * MINUTE,
                    aspect_ratios=["1:2.4", "2.4:1"],
                    exclusive=True,
                ),
            ),
            options=[
                OptionRule(
                    name="visibility",
                    type="enum",
                    values=["PUBLIC", "CONNECTIONS"],  # Posts API "visibility"
                    description="Who can see the post; PUBLIC when absent.",
                )
            ],
        )
    ],
    # Delete: DELETE /rest/posts/{urn} (Posts API page). LinkedIn takes comments
    # (socialActions/{urn}/comments), but no adapter posts one yet: not declared until it does.
    capabilities=Capabilities(threads=False, first_comment=False, delete=True, metrics=True),
    # organizationalEntityShareStatistics: impressionCount, uniqueImpressionsCount, likeCount,
    # commentCount, shareCount, clickCount (.../community-management/organizations/share-statistics)
    metrics=["impressions", "reach", "likes", "comments", "shares", "clicks"],
)
