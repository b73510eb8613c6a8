"""What YouTube accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import (
    GB,
    HOUR,
    MINUTE,
    MOV,
    MP4,
    WEBM,
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

# videos.insert: files up to 256 GB of type video/* (https://developers.google.com/youtube/v3/docs/videos/insert).
# snippet.title: required, at most 100 characters, no "<" or ">"; snippet.description: at most 5000
# bytes, no "<" or ">" (https://developers.google.com/youtube/v3/docs/videos#snippet.title).
# Videos may run 12 hours (https://support.google.com/youtube/answer/71673); Shorts up to 3
# minutes, square or vertical (YouTube Help, "Upload YouTube Shorts", October 2024).
_YOUTUBE_TEXT = text_rule(5000, "bytes", forbidden_characters=["<", ">"])
_YOUTUBE_OPTIONS = [
    OptionRule(
        name="title",
        type="string",
        required=True,
        max_length=100,
        unit="graphemes",
        forbidden_characters=["<", ">"],
        description="The video's title (snippet.title).",
    ),
    OptionRule(
        name="privacyStatus",
        type="enum",
        values=["public", "unlisted", "private"],  # status.privacyStatus
        description="Who can watch; public when absent.",
    ),
    OptionRule(
        name="madeForKids",
        type="boolean",
        description="status.selfDeclaredMadeForKids; required by COPPA to be answered.",
    ),
    OptionRule(
        name="categoryId",
        type="string",
        max_length=5,
        unit="graphemes",
        description="snippet.categoryId, e.g. 22 (People & Blogs).",
    ),
]
_YOUTUBE_MIME = [MP4, MOV, WEBM]
DECLARATION = ProviderDeclaration(
    id="youtube",
    name="YouTube",
    configured=False,
    # Google OAuth 2.0 with youtube.upload:
    # https://developers.google.com/youtube/v3/guides/authentication
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="video",
            text=_YOUTUBE_TEXT,
            media=media_rule(
                1,
                1,
                video=MediaKindRule(
                    max_items=1,
                    mime_types=_YOUTUBE_MIME,
                    max_bytes=256 * GB,
                    max_duration_seconds=12 * HOUR,
                ),
            ),
            options=_YOUTUBE_OPTIONS,
        ),
        ContentKind(
            kind="short",
            text=_YOUTUBE_TEXT,
            media=media_rule(
                1,
                1,
                video=MediaKindRule(
                    max_items=1,
                    mime_types=_YOUTUBE_MIME,
                    max_bytes=256 * GB,
                    max_duration_seconds=3 * MINUTE,
                    # "square or vertical": no lower bound on width/height, at most 1:1.
                    aspect_ratios=["0:1", "1:1"],
                ),
            ),
            options=_YOUTUBE_OPTIONS,
        ),
    ],
    # Delete: videos.delete; statistics on the videos resource. YouTube takes comments
    # (commentThreads.insert), but no adapter posts one yet: not declared until it does.
    capabilities=Capabilities(threads=False, first_comment=False, delete=True, metrics=True),
    # videos.list statistics: viewCount, likeCount, commentCount
    metrics=["views", "likes", "comments"],
)
