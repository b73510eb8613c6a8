"""What each network accepts, as data. Every limit names the page it comes from.

Sizes: where a network states bytes (X's "5242880 bytes", Mastodon's ``image_size_limit``, Bluesky's
lexicon ``maxSize``) the number is exact; where it only says "MB" or "GB" we read the decimal unit,
the smaller one, so that a file we accept is never one the network refuses for size.
"""

from __future__ import annotations

from pressroom.providers.schemas import (
    Capabilities,
    ContentKind,
    MediaKind,
    MediaKindRule,
    MediaRule,
    OptionRule,
    ProviderDeclaration,
    TextRule,
    ratio_value,
)
from pressroom.providers.text import TextUnit

KB = 1000
MB = 1000 * KB
GB = 1000 * MB
MiB = 1024 * 1024

JPEG = "image/jpeg"
PNG = "image/png"
WEBP = "image/webp"
GIF = "image/gif"
MP4 = "video/mp4"
MOV = "video/quicktime"
WEBM = "video/webm"

MINUTE = 60.0
HOUR = 60 * MINUTE

PROVIDER_IDS: tuple[str, ...] = (
    "x",
    "linkedin",
    "facebook",
    "instagram",
    "threads",
    "bluesky",
    "mastodon",
    "tiktok",
    "youtube",
    "pinterest",
    "sandbox",
)
# Always configured: the simulator needs no credentials (contract section 7).
ALWAYS_CONFIGURED = frozenset({"sandbox"})


def media_rule(
    min_items: int,
    max_items: int,
    *,
    image: MediaKindRule | None = None,
    gif: MediaKindRule | None = None,
    video: MediaKindRule | None = None,
) -> MediaRule:
    """A media rule whose summary fields are computed from its per-kind rules."""
    kinds: dict[MediaKind, MediaKindRule] = {}
    if image is not None:
        kinds["image"] = image
    if gif is not None:
        kinds["gif"] = gif
    if video is not None:
        kinds["video"] = video
    rules = list(kinds.values())
    mime_types = [mime for rule in rules for mime in rule.mime_types]
    sizes = [rule.max_bytes for rule in rules]
    ratios = [rule.aspect_ratios for rule in rules]
    return MediaRule(
        min_items=min_items,
        max_items=max_items,
        mime_types=list(dict.fromkeys(mime_types)),
        max_bytes=None if not sizes or None in sizes else max(s for s in sizes if s is not None),
        max_duration_seconds=video.max_duration_seconds if video is not None else None,
        aspect_ratios=_widest(ratios),
        kinds=kinds,
    )


def _widest(ratios: list[list[str] | None]) -> list[str] | None:
    if not ratios or any(r is None for r in ratios):
        return None
    bounds = [r for r in ratios if r is not None]
    low = min((r[0] for r in bounds), key=ratio_value)
    high = max((r[1] for r in bounds), key=ratio_value)
    return [low, high]


def _text(max_length: int, unit: TextUnit = "graphemes", **extra: object) -> TextRule:
    return TextRule.model_validate({"max_length": max_length, "unit": unit, **extra})


# --- Options the real adapters share (publishing/adapters/options.py) ---------------------------
# A thread: follow-up texts, each published as a reply to the one before. No network limits a
# thread's length; Pressroom's own cap keeps one publish to a bounded number of calls.
MAX_THREAD_FOLLOW_UPS = 24


def _thread_option() -> OptionRule:
    return OptionRule(
        name="thread",
        type="textList",
        max_items=MAX_THREAD_FOLLOW_UPS,
        description="Follow-up texts, published in order as replies under the post (a "
        "thread); each is held to the post's text rule and carries no media.",
    )


def _alt_texts_option(max_length: int, unit: TextUnit) -> OptionRule:
    return OptionRule(
        name="altTexts",
        type="mediaTexts",
        max_length=max_length,
        unit=unit,
        description="Alternative text of the target's media: a list in media order (null or "
        "empty for none) or an object keyed by media id.",
    )


# --- X -----------------------------------------------------------------------------------------
# Text: 280 weighted characters, URLs 23 (twitter-text config/v3.json;
# https://docs.x.com/resources/fundamentals/counting-characters). Accounts with X Premium may post
# longer text; Pressroom holds every account to the standard limit.
# Media: "up to 4 photos, 1 animated GIF or 1 video in a Post"
# (https://docs.x.com/x-api/media/quickstart/best-practices). Upload limits: image 5 MB, GIF 15 MB,
# video 512 MB (https://docs.x.com/x-api/media/introduction); the API states them in bytes
# ("File size exceeds 5242880 bytes"), i.e. MiB. Video: MP4 or MOV, 0.5 to 140 seconds, aspect
# ratio 1:3 to 3:1; images JPEG, PNG, WEBP (best-practices page above).
_X = ProviderDeclaration(
    id="x",
    name="X",
    configured=False,
    # OAuth 2.0 Authorization Code with PKCE, user context (docs.x.com, Authentication)
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(280, "weighted", url_length=23),
            media=media_rule(
                0,
                4,
                image=MediaKindRule(max_items=4, mime_types=[JPEG, PNG, WEBP], max_bytes=5 * MiB),
                gif=MediaKindRule(
                    max_items=1, mime_types=[GIF], max_bytes=15 * MiB, exclusive=True
                ),
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, MOV],
                    max_bytes=512 * MiB,
                    min_duration_seconds=0.5,
                    max_duration_seconds=140,
                    aspect_ratios=["1:3", "3:1"],
                    exclusive=True,
                ),
            ),
            options=[
                OptionRule(
                    name="replySettings",
                    type="enum",
                    # POST /2/tweets reply_settings (https://docs.x.com/x-api/posts/create-post)
                    values=["following", "mentionedUsers", "subscribers", "verified"],
                    description="Who may reply; everyone when absent.",
                ),
                # Replies: reply.in_reply_to_tweet_id of POST /2/tweets.
                _thread_option(),
                # POST /2/media/metadata alt_text.text: at most 1000 characters
                # (https://docs.x.com/x-api/media/create-media-metadata); counted in UTF-16
                # units, never fewer than X's characters. Sent for images and GIFs only.
                _alt_texts_option(1000, "utf16"),
            ],
        )
    ],
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # Post public_metrics: impression, like, reply, retweet + quote and bookmark counts (docs.x.com,
    # X API v2 fundamentals, Metrics). Link clicks are a non-public metric X gives only to the
    # author for 30 days; the adapter does not read them, so they are not declared.
    metrics=["impressions", "likes", "comments", "shares", "saves"],
)

# --- LinkedIn ----------------------------------------------------------------------------------
# Text: commentary up to 3000 characters (Posts API,
# https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api).
# Images: JPG, GIF, PNG, under 36,152,320 pixels, GIF up to 250 frames; LinkedIn states no byte
# limit (Images API, .../community-management/shares/images-api). A post holds one image or a
# MultiImage of 2 to 20 (.../community-management/shares/multiimage-post-api), or one video:
# MP4, 75 KB to 500 MB, 3 seconds to 30 minutes, aspect ratio 1:2.4 to 2.4:1 (Videos API,
# .../community-management/shares/videos-api).
_LINKEDIN = ProviderDeclaration(
    id="linkedin",
    name="LinkedIn",
    configured=False,
    # 3-legged OAuth 2.0:
    # https://learn.microsoft.com/en-us/linkedin/shared/authentication/authorization-code-flow
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(3000),
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
    # Comments: socialActions/{urn}/comments; delete: DELETE /rest/posts/{urn} (Posts API page).
    capabilities=Capabilities(threads=False, first_comment=True, delete=True, metrics=True),
    # organizationalEntityShareStatistics: impressionCount, uniqueImpressionsCount, likeCount,
    # commentCount, shareCount, clickCount (.../community-management/organizations/share-statistics)
    metrics=["impressions", "reach", "likes", "comments", "shares", "clicks"],
)

# --- Facebook (Pages) --------------------------------------------------------------------------
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
_FACEBOOK = ProviderDeclaration(
    id="facebook",
    name="Facebook",
    configured=False,
    # Facebook Login, then a Page access token:
    # https://developers.facebook.com/docs/pages-api/getting-started
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(63206),
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
            kind="reel", text=_text(63206), media=media_rule(1, 1, video=_FB_VERTICAL_VIDEO)
        ),
        ContentKind(
            kind="story",
            text=_text(63206),  # Page stories carry no caption; text is not published.
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

# --- Instagram ---------------------------------------------------------------------------------
# Content Publishing (https://developers.facebook.com/docs/instagram-platform/content-publishing/)
# and IG User Media (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media):
# caption up to 2,200 characters; images JPEG only, 8 MB, aspect ratio 4:5 to 1.91:1; reels MOV or
# MP4, 300 MB, 3 seconds to 15 minutes, aspect ratio 0.01:1 to 10:1; story videos 100 MB, 3 to 60
# seconds; carousels 2 to 10 images and videos, carousel videos 100 MB, 3 to 60 seconds, aspect
# ratio 4:5 to 16:9. Reels cannot appear in carousels; stories publish no caption.
_IG_IMAGE = MediaKindRule(
    max_items=1, mime_types=[JPEG], max_bytes=8 * MB, aspect_ratios=["4:5", "1.91:1"]
)
_INSTAGRAM = ProviderDeclaration(
    id="instagram",
    name="Instagram",
    configured=False,
    connection="oauth2",  # Instagram API with Facebook Login / Instagram Login (OAuth 2.0)
    content_kinds=[
        ContentKind(kind="post", text=_text(2200), media=media_rule(1, 1, image=_IG_IMAGE)),
        ContentKind(
            kind="reel",
            text=_text(2200),
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
                )
            ],
        ),
        ContentKind(
            kind="story",
            text=_text(2200),  # Accepted for uniformity; Instagram publishes no story caption.
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
            text=_text(2200),
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
        ),
    ],
    # Comments: POST /{ig-media-id}/comments; the API offers no way to delete published media
    # (IG Media reference, https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-media).
    capabilities=Capabilities(threads=False, first_comment=True, delete=False, metrics=True),
    # IG Media insights: reach, views, likes, comments, shares, saved (impressions was retired
    # for new media in v22.0) (.../instagram-graph-api/reference/ig-media/insights)
    metrics=["reach", "views", "likes", "comments", "shares", "saves"],
)

# --- Threads -----------------------------------------------------------------------------------
# Text: 500 characters (https://developers.facebook.com/docs/threads/posts). Media
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
_THREADS_OPTIONS = [
    OptionRule(
        name="replyControl",
        type="enum",
        # reply_control (https://developers.facebook.com/docs/threads/reply-management)
        values=["everyone", "accounts_you_follow", "mentioned_only"],
        description="Who may reply; everyone when absent.",
    )
]
_THREADS = ProviderDeclaration(
    id="threads",
    name="Threads",
    configured=False,
    # Threads OAuth 2.0:
    # https://developers.facebook.com/docs/threads/get-started
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(500),
            media=media_rule(0, 1, image=_THREADS_IMAGE, video=_THREADS_VIDEO),
            options=_THREADS_OPTIONS,
        ),
        ContentKind(
            kind="carousel",
            text=_text(500),
            media=media_rule(
                2,
                20,
                image=_THREADS_IMAGE.model_copy(update={"max_items": 20}),
                video=_THREADS_VIDEO.model_copy(update={"max_items": 20}),
            ),
            options=_THREADS_OPTIONS,
        ),
    ],
    # Replies: reply_to_id; delete: DELETE /{threads-media-id}
    # (https://developers.facebook.com/docs/threads/posts/delete-posts).
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # Media insights: views, likes, replies, reposts, quotes, shares
    # (https://developers.facebook.com/docs/threads/insights)
    metrics=["views", "likes", "comments", "shares"],
)

# --- Bluesky -----------------------------------------------------------------------------------
# Text: app.bsky.feed.post "text" maxGraphemes 300 (and maxLength 3000 bytes, reached only by
# long emoji sequences) (https://github.com/bluesky-social/atproto/blob/main/lexicons/app/bsky/feed/post.json).
# Images: app.bsky.embed.images maxLength 4, blob maxSize 1,000,000 bytes, accept image/*
# (.../lexicons/app/bsky/embed/images.json). Video: app.bsky.embed.video, one per post, blob
# maxSize 100,000,000 bytes (.../lexicons/app/bsky/embed/video.json); the video service takes MP4,
# MOV and WebM (video launch post, https://bsky.social/about/blog, 2024-09-11), up to 3 minutes
# since app release 1.99 (March 2025). A post embeds images or a video, not both.
_BLUESKY = ProviderDeclaration(
    id="bluesky",
    name="Bluesky",
    configured=False,
    connection="app_password",  # com.atproto.server.createSession with an app password
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(300),
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
                # Replies: the post record's reply refs (root and parent).
                _thread_option(),
                # app.bsky.embed.video alt: maxGraphemes 1000 (.../lexicons/app/bsky/embed/
                # video.json); app.bsky.embed.images alt has no limit, Pressroom holds it to the
                # same 1000.
                _alt_texts_option(1000, "graphemes"),
            ],
        )
    ],
    # Replies: the post record's reply refs; delete: com.atproto.repo.deleteRecord.
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # app.bsky.feed.defs#postView: likeCount, replyCount, repostCount + quoteCount
    metrics=["likes", "comments", "shares"],
)

# --- Mastodon ----------------------------------------------------------------------------------
# Defaults of a stock instance (GET /api/v2/instance configuration, https://docs.joinmastodon.org/methods/instance/#v2):
# statuses.max_characters 500, max_media_attachments 4, characters_reserved_per_url 23;
# media_attachments.image_size_limit 16777216, video_size_limit 103809024. Counting follows
# app/validators/status_length_validator.rb (graphemes, URLs 23, @user@domain as @user). A video
# cannot share a status with other media (PostStatusService#validate_media!,
# app/services/post_status_service.rb); GIFs become looping videos but may sit with images.
_MASTODON = ProviderDeclaration(
    id="mastodon",
    name="Mastodon",
    configured=False,
    connection="access_token",  # an application token from the account's Development settings
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(500, url_length=23),
            media=media_rule(
                0,
                4,
                image=MediaKindRule(max_items=4, mime_types=[JPEG, PNG, WEBP], max_bytes=16777216),
                gif=MediaKindRule(max_items=4, mime_types=[GIF], max_bytes=16777216),
                video=MediaKindRule(
                    max_items=1, mime_types=[MP4, MOV, WEBM], max_bytes=103809024, exclusive=True
                ),
            ),
            options=[
                OptionRule(
                    name="visibility",
                    type="enum",
                    # POST /api/v1/statuses "visibility" (https://docs.joinmastodon.org/methods/statuses/#create)
                    values=["public", "unlisted", "private", "direct"],
                    description="Who can see the status; the account's default when absent.",
                ),
                OptionRule(
                    name="sensitive",
                    type="boolean",
                    description="Hide the media behind a sensitive-content warning.",
                ),
                OptionRule(
                    name="spoilerText",
                    type="string",
                    # spoiler_text; StatusLengthValidator counts it with the text against the
                    # instance's limit (app/validators/status_length_validator.rb).
                    counts_toward_text=True,
                    description="A content warning shown in place of the text until opened; "
                    "counted with the text (and with each thread reply, which carries it too).",
                ),
                OptionRule(
                    name="language",
                    type="string",
                    # language: an ISO 639 code (statuses API page above); Mastodon ignores
                    # codes it does not know.
                    pattern=r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$",
                    description="The status's language, an ISO 639 code such as `en` or `pt-BR`; "
                    "the account's default when absent.",
                ),
                # Replies: in_reply_to_id.
                _thread_option(),
                # POST /api/v2/media description: MediaAttachment::MAX_DESCRIPTION_LENGTH 1500
                # characters (app/models/media_attachment.rb); counted in UTF-16 units, never
                # fewer than Ruby's characters.
                _alt_texts_option(1500, "utf16"),
            ],
        )
    ],
    # Replies: in_reply_to_id; delete: DELETE /api/v1/statuses/:id (statuses API page above).
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # Status entity: favourites_count, replies_count, reblogs_count
    metrics=["likes", "comments", "shares"],
)

# --- TikTok ------------------------------------------------------------------------------------
# Content Posting API: a video's title (its caption) up to 2,200 UTF-16 runes
# (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post); a photo post up
# to 35 images, title 90 runes, description 4,000 runes
# (https://developers.tiktok.com/doc/content-posting-api-reference-photo-post) - Pressroom holds
# the photo description to the contract's 2,200 as well. Media transfer guide
# (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide): videos MP4, WebM,
# MOV, 4 GB, up to 10 minutes (creator_info max_video_post_duration_sec may be lower); photos
# JPEG or WebP, 20 MB each. Minimum video duration 3 seconds (TikTok upload guidance).
_TIKTOK_PRIVACY = OptionRule(
    name="privacyLevel",
    type="enum",
    # post_info.privacy_level; creator_info/query lists those the account allows
    values=["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"],
    description="Who can see the post; the adapter asks the account's allowed levels when absent.",
)
_TIKTOK_NO_COMMENTS = OptionRule(
    name="disableComment", type="boolean", description="Turn comments off."
)
_TIKTOK = ProviderDeclaration(
    id="tiktok",
    name="TikTok",
    configured=False,
    # Login Kit OAuth 2.0 with video.publish:
    # https://developers.tiktok.com/doc/oauth-user-access-token-management
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="video",
            text=_text(2200, "utf16"),
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
            text=_text(2200, "utf16"),
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
    # No comment or delete endpoints in the Content Posting API; video.list reports counts.
    capabilities=Capabilities(threads=False, first_comment=False, delete=False, metrics=True),
    # video.list fields: view_count, like_count, comment_count, share_count
    # (https://developers.tiktok.com/doc/tiktok-api-v2-video-object)
    metrics=["views", "likes", "comments", "shares"],
)

# --- YouTube -----------------------------------------------------------------------------------
# videos.insert: files up to 256 GB of type video/* (https://developers.google.com/youtube/v3/docs/videos/insert).
# snippet.title: required, at most 100 characters, no "<" or ">"; snippet.description: at most 5000
# bytes, no "<" or ">" (https://developers.google.com/youtube/v3/docs/videos#snippet.title).
# Videos may run 12 hours (https://support.google.com/youtube/answer/71673); Shorts up to 3
# minutes, square or vertical (YouTube Help, "Upload YouTube Shorts", October 2024).
_YOUTUBE_TEXT = _text(5000, "bytes", forbidden_characters=["<", ">"])
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
_YOUTUBE = ProviderDeclaration(
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
    # Comments: commentThreads.insert; delete: videos.delete; statistics on the videos resource.
    capabilities=Capabilities(threads=False, first_comment=True, delete=True, metrics=True),
    # videos.list statistics: viewCount, likeCount, commentCount
    metrics=["views", "likes", "comments"],
)

# --- Pinterest ---------------------------------------------------------------------------------
# POST /v5/pins (https://developers.pinterest.com/docs/api/v5/pins-create): board_id required,
# description up to 800 characters, title 100, link 2048, alt_text 500; carousels of 2 to 5
# images. Media (https://help.pinterest.com/en/business/article/pinterest-product-specs): images
# BMP, JPEG, PNG, TIFF, GIF, WEBP up to 20 MB; videos MP4, MOV, M4V up to 2 GB, 4 seconds to 15
# minutes, aspect ratio 1:2 to 1.91:1.
_PIN_IMAGE = MediaKindRule(max_items=1, mime_types=[JPEG, PNG, WEBP], max_bytes=20 * MB)
_PINTEREST_OPTIONS = [
    OptionRule(
        name="boardId",
        type="string",
        required=True,
        max_length=64,
        unit="graphemes",
        description="The board the pin is saved to (board_id).",
    ),
    OptionRule(
        name="title", type="string", max_length=100, unit="graphemes", description="Pin title."
    ),
    OptionRule(
        name="link",
        type="string",
        max_length=2048,
        unit="graphemes",
        description="Where the pin leads when clicked.",
    ),
    OptionRule(
        name="altText",
        type="string",
        max_length=500,
        unit="graphemes",
        description="Alternative text for the pin's image.",
    ),
]
_PINTEREST = ProviderDeclaration(
    id="pinterest",
    name="Pinterest",
    configured=False,
    # https://developers.pinterest.com/docs/getting-started/authentication-and-scopes/
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="pin",
            text=_text(800),
            media=media_rule(
                1,
                1,
                image=_PIN_IMAGE,
                gif=MediaKindRule(max_items=1, mime_types=[GIF], max_bytes=20 * MB),
                video=MediaKindRule(
                    max_items=1,
                    mime_types=[MP4, MOV],
                    max_bytes=2 * GB,
                    min_duration_seconds=4,
                    max_duration_seconds=15 * MINUTE,
                    aspect_ratios=["1:2", "1.91:1"],
                ),
            ),
            options=_PINTEREST_OPTIONS,
        ),
        ContentKind(
            kind="carousel",
            text=_text(800),
            media=media_rule(2, 5, image=_PIN_IMAGE.model_copy(update={"max_items": 5})),
            options=_PINTEREST_OPTIONS,
        ),
    ],
    # No comment endpoint; DELETE /v5/pins/{pin_id}; GET /v5/pins/{pin_id}/analytics.
    capabilities=Capabilities(threads=False, first_comment=False, delete=True, metrics=True),
    # Pin analytics: IMPRESSION, SAVE, PIN_CLICK + OUTBOUND_CLICK
    # (https://developers.pinterest.com/docs/api/v5/pins-analytics)
    metrics=["impressions", "saves", "clicks"],
)

# The sandbox simulator's switches (contract section 7). They are options of the sandbox's post and
# of any channel connected with --simulated, which is validated by its real provider's declaration.
SIMULATION_OPTIONS: tuple[OptionRule, ...] = (
    OptionRule(
        name="simulate",
        type="enum",
        values=["text_rejected", "provider_unavailable", "auth_expired"],
        description="Make the simulated publish fail on purpose.",
    ),
    OptionRule(
        name="failTimes",
        type="integer",
        minimum=0,
        description="With provider_unavailable: fail this many times, then succeed.",
    ),
)
# --- Sandbox -----------------------------------------------------------------------------------
# The simulated network of contract section 7: one content kind "post", 300 graphemes, no URL
# discount, up to 4 images or 1 video, every capability, every metric.
_SANDBOX = ProviderDeclaration(
    id="sandbox",
    name="Sandbox",
    configured=True,
    connection="none",
    content_kinds=[
        ContentKind(
            kind="post",
            text=_text(300),
            media=media_rule(
                0,
                4,
                image=MediaKindRule(max_items=4, mime_types=[JPEG, PNG, WEBP]),
                gif=MediaKindRule(max_items=4, mime_types=[GIF]),
                video=MediaKindRule(max_items=1, mime_types=[MP4, MOV, WEBM], exclusive=True),
            ),
            options=list(SIMULATION_OPTIONS),
        )
    ],
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    metrics=["impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks"],
)

DECLARATIONS: dict[str, ProviderDeclaration] = {
    declaration.id: declaration
    for declaration in (
        _X,
        _LINKEDIN,
        _FACEBOOK,
        _INSTAGRAM,
        _THREADS,
        _BLUESKY,
        _MASTODON,
        _TIKTOK,
        _YOUTUBE,
        _PINTEREST,
        _SANDBOX,
    )
}


def list_declarations(configured_ids: set[str] | frozenset[str]) -> list[ProviderDeclaration]:
    """Every declaration in PROVIDER_IDS order, ``configured`` filled for this deployment."""
    return [
        _with_configured(DECLARATIONS[provider_id], configured_ids) for provider_id in PROVIDER_IDS
    ]


def get_declaration(
    provider_id: str, configured_ids: set[str] | frozenset[str] = frozenset()
) -> ProviderDeclaration | None:
    """One declaration with ``configured`` filled, or None for an unknown provider id."""
    declaration = DECLARATIONS.get(provider_id)
    if declaration is None:
        return None
    return _with_configured(declaration, configured_ids)


def _with_configured(
    declaration: ProviderDeclaration, configured_ids: set[str] | frozenset[str]
) -> ProviderDeclaration:
    configured = declaration.id in ALWAYS_CONFIGURED or declaration.id in configured_ids
    return declaration.model_copy(update={"configured": configured})
