from __future__ import annotations

from typing import Any

import pytest

from pressroom.providers.declarations import DECLARATIONS
from pressroom.providers.declarations import PROVIDER_IDS
from pressroom.providers.declarations import get_declaration
from pressroom.providers.declarations import list_declarations
from pressroom.providers.schemas import ProviderDeclaration
from pressroom.providers.schemas import ratio_value

CONTRACT_PROVIDER_IDS = (
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
CANONICAL_METRICS = {
    "impressions",
    "reach",
    "views",
    "likes",
    "comments",
    "shares",
    "saves",
    "clicks",
}
MEDIA_MIME_TYPES = {
    "image/jpeg",
    "image/png",
    "image/webp",
    "image/gif",
    "video/mp4",
    "video/quicktime",
    "video/webm",
    "application/pdf",  # documents, an addition (LinkedIn)
}
# Contract section 7: the text rule of every content kind of each network.
TEXT_RULES: dict[str, dict[str, Any]] = {
    "x": {"maxLength": 280, "unit": "weighted", "urlLength": 23},
    "bluesky": {"maxLength": 300, "unit": "graphemes", "urlLength": None},
    "mastodon": {"maxLength": 500, "unit": "graphemes", "urlLength": 23},
    "threads": {"maxLength": 500, "unit": "graphemes", "urlLength": None},
    "linkedin": {"maxLength": 3000, "unit": "graphemes", "urlLength": None},
    "instagram": {"maxLength": 2200, "unit": "graphemes", "urlLength": None},
    "facebook": {"maxLength": 63206, "unit": "graphemes", "urlLength": None},
    "pinterest": {"maxLength": 800, "unit": "graphemes", "urlLength": None},
    "tiktok": {"maxLength": 2200, "unit": "utf16", "urlLength": None},
    "youtube": {"maxLength": 5000, "unit": "bytes", "urlLength": None},
    "sandbox": {"maxLength": 300, "unit": "graphemes", "urlLength": None},
}
CONTENT_KINDS = {
    "x": ["post"],
    "linkedin": ["post"],
    "facebook": ["post", "reel", "story"],
    "instagram": ["post", "reel", "story", "carousel"],
    "threads": ["post", "carousel"],
    "bluesky": ["post"],
    "mastodon": ["post"],
    "tiktok": ["video", "photo"],
    "youtube": ["video", "short"],
    "pinterest": ["pin", "carousel"],
    "sandbox": ["post"],
}
CONNECTIONS = {
    "x": "oauth2",
    "linkedin": "oauth2",
    "facebook": "oauth2",
    "instagram": "oauth2",
    "threads": "oauth2",
    "bluesky": "app_password",
    "mastodon": "access_token",
    "tiktok": "oauth2",
    "youtube": "oauth2",
    "pinterest": "oauth2",
    "sandbox": "none",
}


def wire(declaration: ProviderDeclaration) -> dict[str, Any]:
    return declaration.model_dump(mode="json", by_alias=True)


def all_content_kinds() -> list[tuple[str, str]]:
    return [(d.id, k.kind) for d in DECLARATIONS.values() for k in d.content_kinds]


def test_provider_ids_are_the_contracts_in_order() -> None:
    assert PROVIDER_IDS == CONTRACT_PROVIDER_IDS
    assert [d.id for d in list_declarations(set())] == list(CONTRACT_PROVIDER_IDS)


@pytest.mark.parametrize("provider_id", CONTRACT_PROVIDER_IDS)
def test_declaration_has_the_contract_fields_in_camel_case(provider_id: str) -> None:
    body = wire(DECLARATIONS[provider_id])
    assert set(body) == {
        "id",
        "name",
        "configured",
        "connection",
        "contentKinds",
        "capabilities",
        "metrics",
    }
    assert set(body["capabilities"]) == {"threads", "firstComment", "delete", "metrics"}
    for content_kind in body["contentKinds"]:
        assert {"kind", "text", "media"} <= set(content_kind)
        assert {"maxLength", "unit", "urlLength"} <= set(content_kind["text"])
        assert {
            "minItems",
            "maxItems",
            "mimeTypes",
            "maxBytes",
            "maxDurationSeconds",
            "aspectRatios",
        } <= set(content_kind["media"])


@pytest.mark.parametrize(("provider_id", "kind"), all_content_kinds())
def test_text_rule_is_exactly_the_contracts(provider_id: str, kind: str) -> None:
    content_kind = DECLARATIONS[provider_id].content_kind(kind)
    assert content_kind is not None
    text = wire(DECLARATIONS[provider_id])["contentKinds"]
    rule = next(k["text"] for k in text if k["kind"] == kind)
    expected = TEXT_RULES[provider_id]
    assert {key: rule[key] for key in expected} == expected


@pytest.mark.parametrize("provider_id", CONTRACT_PROVIDER_IDS)
def test_content_kinds_reflect_the_network(provider_id: str) -> None:
    assert [k.kind for k in DECLARATIONS[provider_id].content_kinds] == CONTENT_KINDS[provider_id]


@pytest.mark.parametrize("provider_id", CONTRACT_PROVIDER_IDS)
def test_connection_method_is_declared(provider_id: str) -> None:
    assert DECLARATIONS[provider_id].connection == CONNECTIONS[provider_id]


@pytest.mark.parametrize("provider_id", CONTRACT_PROVIDER_IDS)
def test_metrics_are_canonical_keys(provider_id: str) -> None:
    metrics = DECLARATIONS[provider_id].metrics
    assert metrics
    assert set(metrics) <= CANONICAL_METRICS
    assert len(metrics) == len(set(metrics))


@pytest.mark.parametrize(("provider_id", "kind"), all_content_kinds())
def test_media_rule_is_consistent(provider_id: str, kind: str) -> None:
    content_kind = DECLARATIONS[provider_id].content_kind(kind)
    assert content_kind is not None
    media = content_kind.media
    assert 0 <= media.min_items <= media.max_items
    assert media.kinds, "every content kind takes some media"
    kind_mimes = {mime for rule in media.kinds.values() for mime in rule.mime_types}
    assert set(media.mime_types) == kind_mimes
    assert kind_mimes <= MEDIA_MIME_TYPES
    for rule in media.kinds.values():
        assert 1 <= rule.max_items <= media.max_items
        if rule.aspect_ratios is not None:
            low, high = rule.aspect_ratios
            assert ratio_value(low) <= ratio_value(high)
        if rule.min_duration_seconds is not None and rule.max_duration_seconds is not None:
            assert rule.min_duration_seconds < rule.max_duration_seconds
    sizes = [rule.max_bytes for rule in media.kinds.values()]
    if None not in sizes:
        assert media.max_bytes == max(s for s in sizes if s is not None)
    else:
        assert media.max_bytes is None


def test_sandbox_is_configured_post_of_300_graphemes_with_4_images_or_1_video() -> None:
    sandbox = wire(DECLARATIONS["sandbox"])
    assert sandbox["configured"] is True
    assert sandbox["connection"] == "none"
    assert [k["kind"] for k in sandbox["contentKinds"]] == ["post"]
    post = sandbox["contentKinds"][0]
    assert post["text"] == {
        "maxLength": 300,
        "unit": "graphemes",
        "urlLength": None,
        "maxBytes": None,
        "emojiAsBytes": False,
        "maxLinks": None,
        "forbiddenCharacters": None,
    }
    assert post["media"]["maxItems"] == 4
    assert post["media"]["kinds"]["image"]["maxItems"] == 4
    assert post["media"]["kinds"]["video"] == {
        "maxItems": 1,
        "mimeTypes": ["video/mp4", "video/quicktime", "video/webm"],
        "maxBytes": None,
        "minDurationSeconds": None,
        "maxDurationSeconds": None,
        "aspectRatios": None,
        "exclusive": True,
        "maxPages": None,
    }
    assert sandbox["capabilities"] == {
        "threads": True,
        "firstComment": True,
        "delete": True,
        "metrics": True,
    }
    assert set(sandbox["metrics"]) == CANONICAL_METRICS


def test_sandbox_post_accepts_the_simulation_options() -> None:
    post = DECLARATIONS["sandbox"].content_kind("post")
    assert post is not None
    options = {option.name: option for option in post.options}
    assert options["simulate"].values == [
        "text_rejected",
        "provider_unavailable",
        "auth_expired",
        "comment_rejected",
    ]
    assert options["failTimes"].type == "integer"
    assert options["failTimes"].minimum == 0


@pytest.mark.parametrize("kind", ["video", "short"])
def test_youtube_requires_a_title_of_100_graphemes(kind: str) -> None:
    content_kind = DECLARATIONS["youtube"].content_kind(kind)
    assert content_kind is not None
    title = next(option for option in content_kind.options if option.name == "title")
    assert title.required is True
    assert (title.max_length, title.unit) == (100, "graphemes")
    assert title.forbidden_characters == ["<", ">"]
    assert content_kind.text.forbidden_characters == ["<", ">"]


@pytest.mark.parametrize(
    ("provider_id", "kind", "min_items", "max_items"),
    [
        ("x", "post", 0, 4),
        ("bluesky", "post", 0, 4),
        ("mastodon", "post", 0, 4),
        ("instagram", "post", 1, 1),
        ("instagram", "carousel", 2, 10),
        ("threads", "carousel", 2, 20),
        ("pinterest", "pin", 1, 1),
        ("pinterest", "carousel", 2, 5),
        ("tiktok", "photo", 1, 35),
        ("youtube", "video", 1, 1),
    ],
)
def test_media_counts_follow_the_network(
    provider_id: str, kind: str, min_items: int, max_items: int
) -> None:
    content_kind = DECLARATIONS[provider_id].content_kind(kind)
    assert content_kind is not None
    assert (content_kind.media.min_items, content_kind.media.max_items) == (min_items, max_items)


def test_list_declarations_marks_configured_providers_and_always_the_sandbox() -> None:
    declarations = {d.id: d.configured for d in list_declarations({"x", "bluesky"})}
    assert declarations == {
        provider_id: provider_id in {"x", "bluesky", "sandbox"}
        for provider_id in CONTRACT_PROVIDER_IDS
    }


def test_list_declarations_leaves_the_static_data_unchanged() -> None:
    list_declarations(set(CONTRACT_PROVIDER_IDS))
    assert DECLARATIONS["x"].configured is False


def test_get_declaration_fills_configured() -> None:
    unconfigured = get_declaration("x")
    configured = get_declaration("x", {"x"})
    assert unconfigured is not None
    assert configured is not None
    assert (unconfigured.configured, configured.configured) == (False, True)


def test_get_declaration_of_the_sandbox_is_configured_without_ids() -> None:
    sandbox = get_declaration("sandbox")
    assert sandbox is not None
    assert sandbox.configured is True


def test_get_declaration_of_an_unknown_provider_is_none() -> None:
    assert get_declaration("myspace") is None


def test_declarations_are_immutable() -> None:
    with pytest.raises(ValueError, match="frozen"):
        DECLARATIONS["x"].configured = True  # type: ignore[misc]
