"""What the sandbox accepts, as data; every limit names the page it comes from."""

from __future__ import annotations

from pressroom.providers.rules import GIF
from pressroom.providers.rules import JPEG
from pressroom.providers.rules import MOV
from pressroom.providers.rules import MP4
from pressroom.providers.rules import PNG
from pressroom.providers.rules import WEBM
from pressroom.providers.rules import WEBP
from pressroom.providers.rules import first_reply_option
from pressroom.providers.rules import media_rule
from pressroom.providers.rules import text_rule
from pressroom.providers.schemas import Capabilities
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ProviderDeclaration

# The sandbox simulator's switches (contract section 7). They are options of the sandbox's post and
# of any channel connected with --simulated, which is validated by its real provider's declaration.
SIMULATION_OPTIONS: tuple[OptionRule, ...] = (
    OptionRule(
        name="simulate",
        type="enum",
        values=["text_rejected", "provider_unavailable", "auth_expired", "comment_rejected"],
        description="Make the simulated publish fail on purpose (`comment_rejected`: the "
        "post is published, its first comment is refused).",
    ),
    OptionRule(
        name="failTimes",
        type="integer",
        minimum=0,
        description="With provider_unavailable: fail this many times, then succeed.",
    ),
)
# The simulated network of contract section 7: one content kind "post", 300 graphemes, no URL
# discount, up to 4 images or 1 video, every capability, every metric.
DECLARATION = ProviderDeclaration(
    id="sandbox",
    name="Sandbox",
    configured=True,
    connection="none",
    content_kinds=[
        ContentKind(
            kind="post",
            text=text_rule(300),
            media=media_rule(
                0,
                4,
                image=MediaKindRule(max_items=4, mime_types=[JPEG, PNG, WEBP]),
                gif=MediaKindRule(max_items=4, mime_types=[GIF]),
                video=MediaKindRule(max_items=1, mime_types=[MP4, MOV, WEBM], exclusive=True),
            ),
            # The simulator records the first comment with the post (its `first_comment`).
            options=[
                *SIMULATION_OPTIONS,
                first_reply_option(),
            ],
        )
    ],
    capabilities=Capabilities(threads=True, first_comment=True, delete=True, metrics=True),
    metrics=["impressions", "reach", "views", "likes", "comments", "shares", "saves", "clicks"],
)
