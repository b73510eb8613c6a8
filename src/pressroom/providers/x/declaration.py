"""What X accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GIF
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PNG
from pressroom.providers.rules import WEBP
from pressroom.providers.rules import MiB
from pressroom.providers.rules import alt_texts_option
from pressroom.providers.rules import first_reply_option
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.rules import thread_option
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration
from pressroom.providers.text import X_INVALID_CHARACTERS

# Text: 280 weighted characters, URLs 23 (twitter-text config/v3.json;
# https://docs.x.com/resources/fundamentals/counting-characters). Accounts with X Premium may post
# longer text; Pressroom holds every account to the standard limit. Counting follows twitter-text
# 3.1.0's parseTweet (providers/text.py, held to the npm package by tests/differential) with two
# decisions, each pinned by a test: a CRLF counts once (X stores it as LF, twitter-text #8/#9) and
# every emoji the current Twemoji draws weighs 2 ("All emojis count as 2 characters, regardless
# of complexity", docs.x.com counting-characters; twitter-text#369: X counts newer ZWJ emoji 2).
# U+FFFE, U+FEFF and U+FFFF make a Tweet invalid (twitter-text regexp/invalidCharsGroup.js;
# parseTweet answers valid: false), so they are refused outright.
# Media: "up to 4 photos, 1 animated GIF or 1 video in a Post"
# (https://docs.x.com/x-api/media/quickstart/best-practices). Upload limits: image 5 MB, GIF 15 MB,
# video 512 MB (https://docs.x.com/x-api/media/introduction); the API states them in bytes
# ("File size exceeds 5242880 bytes"), i.e. MiB. Video: MP4 or MOV, 0.5 to 140 seconds, aspect
# ratio 1:3 to 3:1; images JPEG, PNG, WEBP (best-practices page above).
DECLARATION = ProviderDeclaration(
    id="x",
    name="X",
    configured=False,
    # OAuth 2.0 Authorization Code with PKCE, user context (docs.x.com, Authentication)
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(
                280, "weighted", url_length=23, forbidden_characters=list(X_INVALID_CHARACTERS)
            ),
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
                # Replies: reply.in_reply_to_tweet_id of POST /2/tweets; the first comment is
                # one more, replying to the post.
                thread_option(),
                first_reply_option(),
                # POST /2/media/metadata alt_text.text: at most 1000 characters
                # (https://docs.x.com/x-api/media/create-media-metadata); counted in UTF-16
                # units, never fewer than X's characters. Sent for images and GIFs only.
                alt_texts_option(1000, "utf16"),
            ],
        )
    ],
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    # Post public_metrics: impression, like, reply, retweet + quote and bookmark counts (docs.x.com,
    # X API v2 fundamentals, Metrics). Link clicks are a non-public metric X gives only to the
    # author for 30 days; the adapter does not read them, so they are not declared.
    metrics=["impressions", "likes", "comments", "shares", "saves"],
)
