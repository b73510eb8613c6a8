"""What YouTube accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GB
from pressroom.providers.rules import HOUR
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PNG
from pressroom.providers.rules import WEBM
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# videos.insert: files up to 256 GB of type video/* (https://developers.google.com/youtube/v3/docs/videos/insert).
# snippet.title: required, at most 100 characters, no "<" or ">"; snippet.description: at most 5000
# bytes, no "<" or ">" (https://developers.google.com/youtube/v3/docs/videos#snippet.title).
# snippet.tags: "a maximum length of 500 characters", commas and the quotes of a tag with a space
# counted (same page; the adapter checks the total, video.py). A default API project's quota
# (10,000 units a day, videos.insert 1,600) bounds uploads, not a declared limit.
# Videos may run 12 hours (https://support.google.com/youtube/answer/71673); Shorts up to 3
# minutes, square or vertical (YouTube Help, "Upload YouTube Shorts", October 2024).
# thumbnails.set: "Maximum file size: 2MB", image/jpeg or image/png
# (https://developers.google.com/youtube/v3/docs/thumbnails/set); setting one needs a channel
# allowed custom thumbnails (a verified account), which only the call itself can tell.
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
        description="status.selfDeclaredMadeForKids; when absent, the channel's default "
        "audience setting applies.",
    ),
    OptionRule(
        name="tags",
        type="textList",
        max_items=250,  # 500 characters with a comma between tags: at most 250 one-letter tags
        description="snippet.tags: keywords, at most 500 characters in all (a comma between "
        "tags counts, and the quotes around a tag with a space).",
    ),
    OptionRule(
        name="categoryId",
        type="string",
        max_length=5,
        unit="graphemes",
        description="snippet.categoryId, e.g. 22 (People & Blogs).",
    ),
    OptionRule(
        name="thumbnailMediaId",
        type="mediaId",
        media={"image": MediaKindRule(max_items=1, mime_types=[JPEG, PNG], max_bytes=2 * MB)},
        description="The id of a JPEG or PNG image of the organization's media (at most 2 MB), "
        "set as the video's custom thumbnail (thumbnails.set) once the video is up. The image "
        "is not one of the target's mediaIds. If YouTube refuses it (the channel may not use "
        "custom thumbnails), the video stays published and the target's error says why.",
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
    # Delete: videos.delete; statistics on the videos resource. No first comment: the adapter does
    # not post one (commentThreads.insert is refused on made-for-kids and private videos).
    capabilities=Capabilities(threads=False, first_comment=False, delete=True, metrics=True),
    # videos.list part=statistics: viewCount, likeCount, commentCount
    # (https://developers.google.com/youtube/v3/docs/videos#statistics)
    metrics=["views", "likes", "comments"],
)
