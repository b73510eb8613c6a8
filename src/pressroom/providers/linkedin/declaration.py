"""What LinkedIn accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GIF
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PDF
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

# Text: commentary up to 3000 characters (Posts API,
# https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api).
# Images: JPG, GIF, PNG, under 36,152,320 pixels, GIF up to 250 frames; LinkedIn states no byte
# limit (Images API, .../community-management/shares/images-api). A post holds one image or a
# MultiImage of 2 to 20 (.../community-management/shares/multiimage-post-api), or one video:
# MP4, 75 KB to 500 MB, 3 seconds to 30 minutes, aspect ratio 1:2.4 to 2.4:1 (Videos API,
# .../community-management/shares/videos-api). Or one document: "The file size cannot exceed
# 100MB and 300 pages"; LinkedIn also takes PPT, PPTX, DOC and DOCX, which Pressroom's library
# does not hold (their pages cannot be counted without laying them out), so PDF alone
# (Documents API, .../community-management/shares/documents-api).
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
                document=MediaKindRule(
                    max_items=1,
                    mime_types=[PDF],
                    max_bytes=100 * MB,
                    max_pages=300,
                    exclusive=True,
                ),
            ),
            options=[
                OptionRule(
                    name="visibility",
                    type="enum",
                    values=["PUBLIC", "CONNECTIONS"],  # Posts API "visibility"
                    description="Who can see the post; PUBLIC when absent. CONNECTIONS is for "
                    "a member's posts only (a Page posts publicly).",
                ),
                # Posts API ArticleContent: source (the URL) and title, description optional.
                OptionRule(
                    name="link",
                    type="string",
                    description="A link shared as an article card (posts without media).",
                ),
                OptionRule(
                    name="linkTitle",
                    type="string",
                    max_length=400,  # ArticleContent title: 400 characters
                    description="The article card's title; the link itself when absent.",
                ),
                OptionRule(
                    name="linkDescription",
                    type="string",
                    max_length=4086,  # ArticleContent description: 4086 characters
                    description="The article card's description.",
                ),
                OptionRule(
                    name="videoTitle",
                    type="string",
                    max_length=400,  # MediaContent title
                    description="The title shown with a video.",
                ),
                OptionRule(
                    name="documentTitle",
                    type="string",
                    max_length=400,  # MediaContent title
                    description="The title shown over a document (a PDF); the document's file "
                    "name without its extension when absent.",
                ),
                # MediaContent altText: up to 4086 characters (Posts API).
                alt_texts_option(4086, "graphemes"),
                # Comments API: a comment's message text is at most 1250 characters
                # (.../community-management/shares/comments-api).
                first_comment_option(1250, "graphemes"),
            ],
        )
    ],
    # Comments: socialActions/{urn}/comments; delete: DELETE /rest/posts/{urn} (Posts API page).
    capabilities=Capabilities(threads=False, first_comment=True, delete=True, metrics=True),
    # A Page's posts, organizationalEntityShareStatistics: impressionCount,
    # uniqueImpressionsCount, likeCount, commentCount, shareCount, clickCount
    # (.../community-management/organizations/share-statistics); a member's posts only likes and
    # comments (socialActions summaries).
    metrics=["impressions", "reach", "likes", "comments", "shares", "clicks"],
)
