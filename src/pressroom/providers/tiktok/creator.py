"""What a post may ask of the account, checked against its creator info before every post.

`POST /v2/post/publish/creator_info/query/` answers the account's `privacy_level_options` and
whether it turned comments, duets and stitches off (`comment_disabled`, `duet_disabled`,
`stitch_disabled`), and its `max_video_post_duration_sec`
(https://developers.tiktok.com/doc/content-posting-api-reference-query-creator-info). TikTok's
Direct Post guidelines ask an app to offer only what the account allows; an option the account
cannot use is refused here, permanently, naming the option, before anything is uploaded.

Unaudited apps: "All content posted by unaudited clients will be restricted to private viewing
mode" (https://developers.tiktok.com/doc/content-posting-api-reference-direct-post): until the
deployment says its app is audited (PRESSROOM_TIKTOK_AUDITED), only SELF_ONLY is sent.

Without `options.privacyLevel`, an unaudited deployment posts SELF_ONLY and an audited one the
most public level the account allows (the post is meant to be seen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pressroom.providers.adapter import ProviderError

PRIVATE = "SELF_ONLY"
# The most public first: the default of an audited deployment is the first the account allows.
PRIVACY_LEVELS = ("PUBLIC_TO_EVERYONE", "FOLLOWER_OF_CREATOR", "MUTUAL_FOLLOW_FRIENDS", PRIVATE)
CREATOR_INFO_PATH = "/v2/post/publish/creator_info/query/"
# option name -> (post_info field, creator info flag that forces it on, what it turns off)
_INTERACTIONS = {
    "disableComment": ("disable_comment", "comment_disabled", "comments"),
    "disableDuet": ("disable_duet", "duet_disabled", "duets"),
    "disableStitch": ("disable_stitch", "stitch_disabled", "stitches"),
}


@dataclass(frozen=True)
class CreatorInfo:
    username: str | None
    privacy_levels: tuple[str, ...]
    disabled: frozenset[str]  # creator info flags that are true
    max_video_seconds: int | None

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> CreatorInfo:
        levels = data.get("privacy_level_options")
        username = data.get("creator_username")
        longest = data.get("max_video_post_duration_sec")
        return cls(
            username=username if isinstance(username, str) and username else None,
            privacy_levels=tuple(v for v in levels or () if isinstance(v, str)),
            disabled=frozenset(flag for _, flag, _ in _INTERACTIONS.values() if data.get(flag)),
            max_video_seconds=longest if isinstance(longest, int) else None,
        )


def privacy_level(options: dict[str, Any], creator: CreatorInfo, *, audited: bool) -> str:
    """The `privacy_level` to send, or a field-style refusal of `options.privacyLevel`."""
    wanted = options.get("privacyLevel")
    allowed = ", ".join(creator.privacy_levels) or "none"
    if wanted is not None and wanted not in PRIVACY_LEVELS:
        raise ProviderError(
            "invalid_request", f"options.privacyLevel must be one of {', '.join(PRIVACY_LEVELS)}."
        )
    if not audited:
        if wanted not in (None, PRIVATE):
            raise ProviderError(
                "invalid_request",
                f"options.privacyLevel: this deployment's TikTok app is not audited, and TikTok "
                f"lets unaudited apps post only with {PRIVATE} (set PRESSROOM_TIKTOK_AUDITED "
                "once TikTok has audited the app).",
            )
        wanted = PRIVATE
    if wanted is None:
        wanted = next((level for level in PRIVACY_LEVELS if level in creator.privacy_levels), None)
    if wanted is None or wanted not in creator.privacy_levels:
        raise ProviderError(
            "invalid_request",
            f"options.privacyLevel: the account allows only {allowed}"
            + (f", not {wanted}." if wanted else "."),
        )
    return wanted


def interactions(
    options: dict[str, Any], creator: CreatorInfo, names: tuple[str, ...]
) -> dict[str, bool]:
    """The `disable_*` fields of post_info for the options `names`: an interaction the account
    turned off stays off, and asking for it on is refused."""
    fields: dict[str, bool] = {}
    for name in names:
        field, flag, what = _INTERACTIONS[name]
        value = options.get(name)
        if value is not None and not isinstance(value, bool):
            raise ProviderError("invalid_request", f"options.{name} must be true or false.")
        if flag in creator.disabled:
            if value is False:
                raise ProviderError(
                    "invalid_request",
                    f"options.{name}: the account has {what} turned off in its TikTok privacy "
                    "settings, so the post cannot allow them.",
                )
            value = True
        fields[field] = bool(value)
    return fields
