"""The media of a target: how many of each kind, which kinds mix, and each item's type, size,
duration, aspect ratio and page count; and one media item named by an option (`mediaId`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from pressroom.kit.errors import FieldError
from pressroom.providers.schemas import ContentKind
from pressroom.providers.schemas import MediaKind
from pressroom.providers.schemas import MediaKindRule
from pressroom.providers.schemas import OptionRule
from pressroom.providers.schemas import ratio_value

KIND_NAMES: dict[MediaKind, tuple[str, str]] = {
    "image": ("image", "images"),
    "gif": ("GIF", "GIFs"),
    "video": ("video", "videos"),
    "document": ("document", "documents"),
}
# Aspect ratios are compared exactly; this only absorbs float rounding of "W:H" strings.
_RATIO_EPSILON = 1e-9


@dataclass(frozen=True)
class MediaFacts:
    """What validation needs to know about one media asset (from the media domain's row)."""

    id: str
    kind: MediaKind
    mime_type: str
    size_bytes: int
    width: int | None = None
    height: int | None = None
    duration_seconds: float | None = None
    page_count: int | None = None


def check_media(
    who: str, kind: ContentKind, media: Sequence[MediaFacts], prefix: str
) -> list[FieldError]:
    """The target's media, in ``mediaIds`` order; ``who`` names the provider and content kind
    in messages ("x post")."""
    rule = kind.media
    field = f"{prefix}.mediaIds"
    errors = []
    if len(media) < rule.min_items:
        errors.append(
            FieldError(
                field,
                "too_few",
                f"{who} needs at least {items(rule.min_items)}; got {len(media)}",
            )
        )
    if len(media) > rule.max_items:
        errors.append(
            FieldError(
                field,
                "too_many",
                f"{who} allows at most {items(rule.max_items)}; got {len(media)}",
            )
        )
    # Media of kinds the content kind does not take are reported on each item below.
    counts = Counter(item.kind for item in media if item.kind in rule.kinds)
    for media_kind, count in counts.items():
        limit = rule.kinds[media_kind].max_items
        # Over the overall maximum is already reported; say it once.
        if count > limit and limit < rule.max_items:
            errors.append(
                FieldError(
                    field,
                    "too_many",
                    f"{who} allows at most {_count(limit, media_kind)}; got {count}",
                )
            )
    exclusive = [k for k in counts if rule.kinds[k].exclusive]
    if exclusive and len(counts) > 1:
        errors.append(
            FieldError(
                field,
                "mixed_media",
                f"{who} cannot combine {_article(exclusive[0])} with other media",
            )
        )
    for index, item in enumerate(media):
        errors += check_media_item(who, kind.media.kinds, item, f"{field}[{index}]")
    return errors


def check_media_option(
    who: str,
    rule: OptionRule,
    value: object,
    field: str,
    library: Mapping[str, MediaFacts],
) -> list[FieldError]:
    """An option naming one media item of the organization (`mediaId`): `library` holds the
    organization's items the target's options name, by id; the item must meet `rule.media`."""
    if value is None or value == "":
        return []
    if not isinstance(value, str):
        return [FieldError(field, "invalid_type", "must be the id of a media item")]
    item = library.get(value.lower())
    if item is None:
        return [FieldError(field, "unknown_media", "names no media of this organization")]
    return check_media_item(who, rule.media or {}, item, field)


def option_media_ids(rules: Sequence[OptionRule], options: Mapping[str, object]) -> list[str]:
    """The media ids the `mediaId` options among `options` name (lowercase, as given: a value
    that is no id is reported by `check_media_option`)."""
    return [
        value.lower()
        for rule in rules
        if rule.type == "mediaId" and isinstance(value := options.get(rule.name), str) and value
    ]


def items(count: int) -> str:
    """A number of media items for messages: "1 media item", "4 media items"."""
    return f"{count} media item" if count == 1 else f"{count} media items"


def check_media_item(
    who: str, kinds: Mapping[MediaKind, MediaKindRule], item: MediaFacts, field: str
) -> list[FieldError]:
    """One media item against the rule of its kind among `kinds` (absent: refused)."""
    kind_rule = kinds.get(item.kind)
    if kind_rule is None:
        accepted = " and ".join(KIND_NAMES[k][1] for k in kinds) or "no media"
        return [
            FieldError(
                field,
                "unsupported_media_kind",
                f"is {_article(item.kind)}; {who} accepts {accepted}",
            )
        ]
    if item.mime_type not in kind_rule.mime_types:
        return [
            FieldError(
                field,
                "unsupported_media_type",
                f"is {item.mime_type}; {who} accepts {', '.join(kind_rule.mime_types)}",
            )
        ]
    errors = []
    plural = KIND_NAMES[item.kind][1]
    if kind_rule.max_bytes is not None and item.size_bytes > kind_rule.max_bytes:
        errors.append(
            FieldError(
                field,
                "too_large",
                f"is {item.size_bytes:,} bytes; {who} accepts {plural} up to "
                f"{kind_rule.max_bytes:,} bytes ({_human_size(kind_rule.max_bytes)})",
            )
        )
    if kind_rule.max_pages is not None and (item.page_count or 0) > kind_rule.max_pages:
        errors.append(
            FieldError(
                field,
                "too_many_pages",
                f"has {item.page_count:,} pages; {who} accepts {plural} of up to "
                f"{kind_rule.max_pages:,} pages",
            )
        )
    errors += _check_duration(who, kind_rule, item, field)
    errors += _check_aspect_ratio(who, kind_rule, item, field)
    return errors


def _check_duration(
    who: str, kind_rule: MediaKindRule, item: MediaFacts, field: str
) -> list[FieldError]:
    duration = item.duration_seconds
    if duration is None:
        return []
    plural = KIND_NAMES[item.kind][1]
    longest, shortest = kind_rule.max_duration_seconds, kind_rule.min_duration_seconds
    if longest is not None and duration > longest:
        return [
            FieldError(
                field,
                "too_long",
                f"lasts {duration:g} seconds; {who} accepts {plural} up to {longest:g} seconds",
            )
        ]
    if shortest is not None and duration < shortest:
        return [
            FieldError(
                field,
                "too_short",
                f"lasts {duration:g} seconds; {who} accepts {plural} of at least "
                f"{shortest:g} seconds",
            )
        ]
    return []


def _check_aspect_ratio(
    who: str, kind_rule: MediaKindRule, item: MediaFacts, field: str
) -> list[FieldError]:
    bounds = kind_rule.aspect_ratios
    if bounds is None or not item.width or not item.height:
        return []
    ratio = item.width / item.height
    low, high = ratio_value(bounds[0]), ratio_value(bounds[1])
    if low - _RATIO_EPSILON <= ratio <= high + _RATIO_EPSILON:
        return []
    allowed = f"exactly {bounds[0]}" if low == high else f"{bounds[0]} to {bounds[1]}"
    return [
        FieldError(
            field,
            "invalid_aspect_ratio",
            f"is {item.width}x{item.height} ({ratio:.3g}:1); {who} accepts aspect ratios "
            f"{allowed} (width:height)",
        )
    ]


def _count(count: int, media_kind: MediaKind) -> str:
    singular, plural = KIND_NAMES[media_kind]
    return f"{count} {singular if count == 1 else plural}"


def _article(media_kind: MediaKind) -> str:
    name = KIND_NAMES[media_kind][0]
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def _human_size(size: int) -> str:
    # Name a limit the way its source states it: "500 MB" (decimal) or "5 MiB" (binary).
    for name, factor in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {name}"
    for name, factor in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {name}"
    return f"{size / 1000**2:g} MB"
