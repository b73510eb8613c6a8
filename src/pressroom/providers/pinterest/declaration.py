"""What Pinterest accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GB
from pressroom.providers.rules import GIF
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MB
from pressroom.providers.rules import MINUTE
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PNG
from pressroom.providers.rules import WEBP
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# POST /v5/pins (https://developers.pinterest.com/docs/api/v5/pins-create): board_id required,
# description up to 800 characters, title 100, link 2048, alt_text 500; carousels of 2 to 5
# images. Media (https://help.pinterest.com/en/business/article/pinterest-product-specs): images
# BMP, JPEG, PNG, TIFF, GIF, WEBP up to 20 MB; videos MP4, MOV, M4V up to 2 GB, 4 seconds to 15
# minutes, aspect ratio 1:2 to 1.91:1. Images and GIFs are sent as `image_url`, carousel images
# as `multiple_image_urls`, a video is uploaded (`POST /v5/media`) and sent as `video_id`
# (https://developers.pinterest.com/docs/api-features/creating-boards-and-pins/). The `note`
# field is Pressroom's own (the retry recovery, pins.py), so it is not an option.
_PIN_IMAGE = MediaKindRule(max_items=1, mime_types=[JPEG, PNG, WEBP], max_bytes=20 * MB)
_PINTEREST_OPTIONS = [
    # Optional: without it the pin goes to the channel's default board, the account's first
    # board when it was connected (oauth.py).
    OptionRule(
        name="boardId",
        type="string",
        max_length=64,
        unit="graphemes",
        description="The board the pin is saved to (board_id); the channel's default board "
        "when absent.",
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
DECLARATION = ProviderDeclaration(
    id="pinterest",
    name="Pinterest",
    configured=False,
    # https://developers.pinterest.com/docs/getting-started/authentication-and-scopes/
    connection="oauth2",
    content_kinds=[
        ContentKind(
            kind="pin",
            text=text_rule(800),
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
            text=text_rule(800),
            media=media_rule(2, 5, image=_PIN_IMAGE.model_copy(update={"max_items": 5})),
            options=_PINTEREST_OPTIONS,
        ),
    ],
    # No comment endpoint and no replies; DELETE /v5/pins/{pin_id} (adapter.delete);
    # GET /v5/pins/{pin_id}/analytics (metrics.py).
    capabilities=Capabilities(threads=False, first_comment=False, delete=True, metrics=True),
    # Pin analytics: IMPRESSION, SAVE, PIN_CLICK + OUTBOUND_CLICK
    # (https://developers.pinterest.com/docs/api/v5/pins-analytics)
    metrics=["impressions", "saves", "clicks"],
)
