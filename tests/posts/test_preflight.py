"""preflightPost: createPost's checks without creating anything.

The agreement tests send the same body to both operations: the preflight reports a problem
exactly when createPost refuses the body, with the same field errors, for the boundary texts of
the counting and validation tests (every network's limit and one unit more, X's weighted count
with URLs as 23 and emoji as 2, Bluesky's 300 graphemes and 3000 bytes, Threads' emoji as bytes
and link cap, Mastodon's URL and remote-mention rewriting) and for media and request problems.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func
from sqlalchemy import select

from pressroom.audit.models import AuditEntry
from pressroom.db import unit_of_work
from pressroom.http.idempotency_models import IdempotencyRecord
from pressroom.posts import preflight_examples as examples
from pressroom.posts.models import Post
from pressroom.posts.models import PostTarget
from pressroom.posts.preflight import preflight_post
from pressroom.posts.schemas import PostCreate
from pressroom.providers.declarations import DECLARATIONS
from pressroom.runtime import Runtime
from pressroom.webhooks.models import Event
from tests.channels.factories import connect_channel
from tests.factories import Tenant
from tests.factories import make_tenant
from tests.posts.factories import add_media
from tests.posts.factories import iso
from tests.posts.factories import valid_media_ids
from tests.providers.test_validation import CJK
from tests.providers.test_validation import E_ACUTE
from tests.providers.test_validation import FAMILY
from tests.providers.test_validation import FLAG_FR
from tests.providers.test_validation import GRIN
from tests.providers.test_validation import LONG_URL
from tests.providers.test_validation import REMOTE_MENTION
from tests.providers.test_validation import all_content_kinds
from tests.providers.test_validation import required_options
from tests.providers.test_validation import text_of_length

PREFLIGHT = "/api/v1/posts/preflight"


@dataclass
class World:
    """One organization's channels (one per network, made on first use) and media."""

    runtime: Runtime
    tenant: Tenant
    channels: dict[str, str] = field(default_factory=dict)

    async def channel(self, provider: str) -> str:
        if provider not in self.channels:
            organization = self.tenant.organization_id
            made = await connect_channel(self.runtime, organization, provider=provider)
            self.channels[provider] = str(made)
        return self.channels[provider]

    async def image(self, **facts: Any) -> str:
        return str(await add_media(self.runtime, self.tenant.organization_id, **facts))

    async def target(self, provider: str, kind_name: str, **fields: Any) -> dict[str, Any]:
        """A target of `kind_name` with the least media and the options it requires."""
        kind = DECLARATIONS[provider].content_kind(kind_name)
        assert kind is not None
        return {
            "channelId": await self.channel(provider),
            "contentKind": kind_name,
            "mediaIds": await valid_media_ids(self.runtime, self.tenant.organization_id, kind),
            "options": required_options(kind),
            **fields,
        }


@pytest.fixture
def world(runtime: Runtime, tenant: Tenant) -> World:
    return World(runtime, tenant)


async def both(client: httpx.AsyncClient, tenant: Tenant, body: dict[str, Any]) -> dict[str, Any]:
    """Preflight then create `body`; assert they agree, and return the preflight's answer."""
    checked = await client.post(PREFLIGHT, json=body, headers=tenant.headers)
    assert checked.status_code == 200, checked.text
    answer: dict[str, Any] = checked.json()
    created = await client.post("/api/v1/posts", json=body, headers=tenant.headers)
    assert created.status_code in (201, 400), created.text
    assert answer["ok"] is (created.status_code == 201), (answer, created.text)
    if created.status_code == 400:
        refusal = created.json()
        assert answer["errors"] == refusal["errors"]
        assert answer["detail"] == refusal["detail"]
    else:
        assert answer["errors"] == []
        assert answer["detail"] is None
    return answer


# --- every network's limit, and one unit more -----------------------------------------------


@pytest.mark.parametrize(("provider", "kind_name"), all_content_kinds())
async def test_preflight_and_create_agree_at_every_limit_and_one_unit_over(
    client: httpx.AsyncClient, world: World, provider: str, kind_name: str
):
    kind = DECLARATIONS[provider].content_kind(kind_name)
    assert kind is not None
    limit = kind.text.max_length
    target = await world.target(provider, kind_name)
    for length in (limit, limit + 1):
        body = {"text": text_of_length(kind.text, length), "targets": [target]}
        answer = await both(client, world.tenant, body)
        assert answer["ok"] is (length == limit)
        [checked] = answer["targets"]
        assert checked["length"]["count"] == length
        assert checked["length"]["limit"] == limit
        assert checked["length"]["unit"] == kind.text.unit
        assert checked["length"]["remaining"] == limit - length
        assert checked["ok"] is (length == limit)


# --- boundary texts of the counting and validation tests ------------------------------------

X_280 = CJK * 100 + FAMILY * 10 + " " + LONG_URL + " " + "a" * 35
X_URL_AND_EMOJI = "https://example.com/" + "a" * 200 + " " + GRIN * 128
BLUESKY_300 = FAMILY * 50 + FLAG_FR * 50 + "\U0001f44b\U0001f3fd" * 50 + E_ACUTE * 50 + CJK * 100
MASTODON_500 = REMOTE_MENTION + " " + LONG_URL + " " + FAMILY * 200 + E_ACUTE * 200 + CJK * 69
THREADS_LINKS = [f"https://example.com/{n}" for n in range(6)]

# (network, text, its count in the network's unit)
TEXTS = [
    pytest.param("x", X_280, 280, id="x-280-weighted"),
    pytest.param("x", X_280 + E_ACUTE, 281, id="x-281-weighted"),
    pytest.param("x", X_URL_AND_EMOJI, 280, id="x-url-23-emoji-2"),
    pytest.param("x", X_URL_AND_EMOJI + "a", 281, id="x-url-23-emoji-2-over"),
    pytest.param("x", "a" * 256 + " " + LONG_URL, 280, id="x-long-url-23"),
    pytest.param("x", "hello \ufeffworld", 13, id="x-invalid-character"),
    pytest.param("bluesky", BLUESKY_300, 300, id="bluesky-300-graphemes"),
    pytest.param("bluesky", BLUESKY_300 + CJK, 301, id="bluesky-301-graphemes"),
    pytest.param("bluesky", FAMILY * 120, 120, id="bluesky-3000-bytes"),
    pytest.param("bluesky", FAMILY * 120 + "a", 121, id="bluesky-3001-bytes"),
    pytest.param("bluesky", "\u200d" * 5000, 1, id="bluesky-one-grapheme-15000-bytes"),
    pytest.param("mastodon", MASTODON_500, 500, id="mastodon-url-and-remote-mention-500"),
    pytest.param("mastodon", MASTODON_500 + FLAG_FR, 501, id="mastodon-501"),
    pytest.param("threads", GRIN * 125, 500, id="threads-emoji-as-bytes-500"),
    pytest.param("threads", GRIN * 125 + "a", 501, id="threads-emoji-as-bytes-501"),
    pytest.param("threads", "a" * 400 + LONG_URL, 500, id="threads-url-in-full"),
    pytest.param("threads", " ".join(THREADS_LINKS[:5] + THREADS_LINKS[:2]), 153, id="threads-5"),
    pytest.param("threads", " ".join(THREADS_LINKS), 131, id="threads-6-links"),
    pytest.param("linkedin", "", 0, id="empty-text-without-media"),
]


@pytest.mark.parametrize(("provider", "text", "count"), TEXTS)
async def test_preflight_and_create_agree_on_the_counting_tests_boundary_texts(
    client: httpx.AsyncClient, world: World, provider: str, text: str, count: int
):
    body = {"text": text, "targets": [{"channelId": await world.channel(provider)}]}
    answer = await both(client, world.tenant, body)
    [checked] = answer["targets"]
    assert checked["length"]["count"] == count
    assert checked["text"] == text
    assert checked["length"]["bytes"] == len(text.encode())


async def test_bluesky_reports_its_byte_cap_and_threads_its_link_cap(
    client: httpx.AsyncClient, world: World
):
    body = {
        "text": FAMILY * 120 + "a",
        "targets": [
            {"channelId": await world.channel("bluesky")},
            {"channelId": await world.channel("threads"), "text": " ".join(THREADS_LINKS)},
        ],
    }
    bluesky, threads = (await both(client, world.tenant, body))["targets"]
    assert (bluesky["length"]["bytes"], bluesky["length"]["maxBytes"]) == (3001, 3000)
    assert bluesky["errors"][0]["message"] == "has 3001 bytes; bluesky allows 3000 bytes"
    assert (threads["length"]["links"], threads["length"]["maxLinks"]) == (6, 5)
    assert [e["code"] for e in threads["errors"]] == ["too_many_links"]


async def test_a_targets_override_is_counted_and_the_problem_is_on_that_target(
    client: httpx.AsyncClient, world: World
):
    body = {
        "text": "short",
        "targets": [
            {"channelId": await world.channel("linkedin"), "text": "x" * 301},
            {"channelId": await world.channel("bluesky"), "text": "x" * 301},
        ],
    }
    answer = await both(client, world.tenant, body)
    linkedin, bluesky = answer["targets"]
    assert (linkedin["textSource"], linkedin["ok"], linkedin["length"]["remaining"]) == (
        "target",
        True,
        2699,
    )
    assert (bluesky["field"], bluesky["ok"], bluesky["length"]["remaining"]) == (
        "targets[1]",
        False,
        -1,
    )
    assert [e["field"] for e in answer["errors"]] == ["targets[1].text"]
    assert bluesky["errors"] == answer["errors"]


async def test_mastodons_content_warning_is_counted_with_the_text(
    client: httpx.AsyncClient, world: World
):
    channel = await world.channel("mastodon")
    body = {
        "text": "a" * 490,
        "targets": [{"channelId": channel, "options": {"spoilerText": "b" * 11}}],
    }
    answer = await both(client, world.tenant, body)
    [target] = answer["targets"]
    assert (target["length"]["count"], target["length"]["remaining"]) == (501, -1)
    assert [e["field"] for e in answer["errors"]] == ["targets[0].options.spoilerText"]


# --- media and the rest of the request ------------------------------------------------------

Case = Callable[[World], Awaitable[dict[str, Any]]]


async def _five_images_on_x(w: World) -> dict[str, Any]:
    images = [await w.image() for _ in range(5)]
    return {"text": "hi", "mediaIds": images, "targets": [{"channelId": await w.channel("x")}]}


async def _video_mixed_with_an_image_on_x(w: World) -> dict[str, Any]:
    video = await w.image(kind="video", mime_type="video/mp4", duration_seconds=10.0)
    media = [video, await w.image()]
    return {"text": "hi", "mediaIds": media, "targets": [{"channelId": await w.channel("x")}]}


async def _image_too_large_for_bluesky(w: World) -> dict[str, Any]:
    image = await w.image(size_bytes=1_000_001)
    return {"mediaIds": [image], "targets": [{"channelId": await w.channel("bluesky")}]}


async def _gif_where_images_and_videos_go(w: World) -> dict[str, Any]:
    gif = await w.image(kind="gif", mime_type="image/gif")
    return {"mediaIds": [gif], "targets": [{"channelId": await w.channel("threads")}]}


async def _instagram_image_of_the_wrong_shape(w: World) -> dict[str, Any]:
    target = await w.target("instagram", "post", mediaIds=[await w.image(width=300, height=1000)])
    return {"text": "hi", "targets": [target]}


async def _youtube_video_without_its_title(w: World) -> dict[str, Any]:
    target = await w.target("youtube", "video", options={})
    return {"text": "hi", "targets": [target]}


async def _unknown_and_foreign_media(w: World) -> dict[str, Any]:
    other = await make_tenant(w.runtime, name="Other")
    foreign = str(await add_media(w.runtime, other.organization_id))
    return {
        "text": "hi",
        "mediaIds": [str(uuid.uuid4()), foreign],
        "targets": [{"channelId": await w.channel("sandbox"), "mediaIds": [str(uuid.uuid4())]}],
    }


async def _unknown_channel(w: World) -> dict[str, Any]:
    return {
        "text": "hi",
        "targets": [{"channelId": str(uuid.uuid4())}, {"channelId": await w.channel("x")}],
    }


async def _schedule_in_the_past(w: World) -> dict[str, Any]:
    past = iso(datetime.now(UTC) - timedelta(minutes=5))
    return {"text": "hi", "scheduledAt": past, "targets": [{"channelId": await w.channel("x")}]}


async def _schedule_and_publish_now(w: World) -> dict[str, Any]:
    future = iso(datetime.now(UTC) + timedelta(hours=1))
    channel = await w.channel("sandbox")
    return {
        "text": "hi",
        "scheduledAt": future,
        "publishNow": True,
        "targets": [{"channelId": channel}],
    }


async def _labels(w: World) -> dict[str, Any]:
    return {
        "text": "hi",
        "tags": ["spring", "a,b", "spring", " "],
        "topics": ["x" * 101],
        "targets": [{"channelId": await w.channel("sandbox")}],
    }


async def _two_targets_in_one_slot_and_a_bad_kind(w: World) -> dict[str, Any]:
    channel = await w.channel("bluesky")
    return {
        "text": "hi",
        "targets": [
            {"channelId": channel},
            {"channelId": channel},
            {"channelId": await w.channel("x"), "contentKind": "reel"},
        ],
    }


async def _unknown_option_and_a_valid_schedule(w: World) -> dict[str, Any]:
    future = iso(datetime.now(UTC) + timedelta(hours=1))
    channel = await w.channel("x")
    return {
        "text": "hi",
        "scheduledAt": future,
        "targets": [{"channelId": channel, "options": {"colour": "red"}}],
    }


async def _everything_fine_with_media(w: World) -> dict[str, Any]:
    images = [await w.image() for _ in range(4)]
    channel = await w.channel("x")
    return {"text": "four pictures", "mediaIds": images, "targets": [{"channelId": channel}]}


# Each case and the problems createPost finds in it (field, code).
CASES: list[tuple[Case, list[tuple[str, str]]]] = [
    (_five_images_on_x, [("targets[0].mediaIds", "too_many")]),
    (_video_mixed_with_an_image_on_x, [("targets[0].mediaIds", "mixed_media")]),
    (_image_too_large_for_bluesky, [("targets[0].mediaIds[0]", "too_large")]),
    (_gif_where_images_and_videos_go, [("targets[0].mediaIds[0]", "unsupported_media_kind")]),
    (_instagram_image_of_the_wrong_shape, [("targets[0].mediaIds[0]", "invalid_aspect_ratio")]),
    (_youtube_video_without_its_title, [("targets[0].options.title", "required")]),
    (
        _unknown_and_foreign_media,
        [
            ("mediaIds[0]", "unknown_media"),
            ("mediaIds[1]", "unknown_media"),
            ("targets[0].mediaIds[0]", "unknown_media"),
        ],
    ),
    (_unknown_channel, [("targets[0].channelId", "unknown_channel")]),
    (_schedule_in_the_past, [("scheduledAt", "in_the_past")]),
    (_schedule_and_publish_now, [("publishNow", "conflict")]),
    (
        _labels,
        [
            ("tags[1]", "invalid_character"),
            ("tags[2]", "duplicate"),
            ("tags[3]", "required"),
            ("topics[0]", "too_long"),
        ],
    ),
    (
        _two_targets_in_one_slot_and_a_bad_kind,
        [
            ("targets[1].contentKind", "duplicate_target"),
            ("targets[2].contentKind", "unsupported_content_kind"),
        ],
    ),
    (_unknown_option_and_a_valid_schedule, [("targets[0].options.colour", "unknown_option")]),
    (_everything_fine_with_media, []),
]


@pytest.mark.parametrize(
    ("case", "problems"), CASES, ids=[case.__name__.strip("_") for case, _ in CASES]
)
async def test_preflight_and_create_agree_on_media_channels_schedules_and_labels(
    client: httpx.AsyncClient, world: World, case: Case, problems: list[tuple[str, str]]
):
    answer = await both(client, world.tenant, await case(world))
    assert [(e["field"], e["code"]) for e in answer["errors"]] == problems
    for target in answer["targets"]:
        prefix = f"{target['field']}."
        mine = [e for e in answer["errors"] if e["field"].startswith(prefix)]
        assert target["errors"] == mine
        assert target["ok"] is (not mine)


async def test_media_are_checked_against_the_networks_rule(client: httpx.AsyncClient, world: World):
    answer = await both(client, world.tenant, await _five_images_on_x(world))
    [target] = answer["targets"]
    assert target["media"] == {"count": 5, "minItems": 0, "maxItems": 4, "ok": False}
    assert target["mediaSource"] == "post"
    assert [(e["field"], e["code"]) for e in target["errors"]] == [
        ("targets[0].mediaIds", "too_many")
    ]


async def test_an_unknown_channel_is_reported_without_counts(
    client: httpx.AsyncClient, world: World
):
    answer = await both(client, world.tenant, await _unknown_channel(world))
    unknown, x = answer["targets"]
    assert (unknown["provider"], unknown["length"], unknown["media"]) == (None, None, None)
    assert [e["code"] for e in unknown["errors"]] == ["unknown_channel"]
    assert (x["provider"], x["contentKind"], x["ok"]) == ("x", "post", True)


# --- what makes the body unreadable is createPost's 400 -------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"{", id="malformed-json"),
        pytest.param(b'{"text": 5, "targets": [{"channelId": "nope"}]}', id="wrong-types"),
        pytest.param(b'{"txt": "hi", "targets": []}', id="unknown-field-and-no-target"),
        pytest.param(b'{"text": "a\\u0000b", "targets": []}', id="nul-character"),
        pytest.param(b"[]", id="not-an-object"),
        pytest.param(
            b'{"text": "hi", "publishNow": 1, "approval": {"required": "true"}, "targets": '
            b'[{"channelId": "01a2144e-85fa-7199-ad82-eeeefc62706e"}]}',
            id="numbers-and-strings-for-booleans",
        ),
    ],
)
async def test_an_unreadable_body_is_the_same_400_as_create_post(
    client: httpx.AsyncClient, tenant: Tenant, content: bytes
):
    headers = {**tenant.headers, "Content-Type": "application/json"}
    checked = await client.post(PREFLIGHT, content=content, headers=headers)
    created = await client.post("/api/v1/posts", content=content, headers=headers)
    assert checked.status_code == created.status_code == 400, checked.text
    assert checked.json()["errors"] == created.json()["errors"]
    assert checked.json()["code"] == "validation_failed"


async def test_a_body_that_is_not_json_is_415(client: httpx.AsyncClient, tenant: Tenant):
    headers = {**tenant.headers, "Content-Type": "text/plain"}
    response = await client.post(PREFLIGHT, content=b"hello", headers=headers)
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


# --- creates nothing; scoped and rate limited like a read -----------------------------------


async def _counts(runtime: Runtime, organization_id: uuid.UUID) -> dict[str, int]:
    tables = {
        "posts": Post,
        "targets": PostTarget,
        "events": Event,
        "audit": AuditEntry,
        "idempotency": IdempotencyRecord,
    }
    counts = {}
    async with unit_of_work(runtime.sessions) as session:
        for name, table in tables.items():
            statement = select(func.count()).select_from(table)
            statement = statement.where(table.organization_id == organization_id)
            counts[name] = int(await session.scalar(statement) or 0)
    return counts


async def test_a_preflight_creates_nothing_and_ignores_an_idempotency_key(
    client: httpx.AsyncClient, world: World
):
    future = iso(datetime.now(UTC) + timedelta(hours=1))
    channel = await world.channel("sandbox")
    body = {"text": "hello", "scheduledAt": future, "targets": [{"channelId": channel}]}
    before = await _counts(world.runtime, world.tenant.organization_id)
    headers = {**world.tenant.headers, "Idempotency-Key": "preflight-1"}
    for _ in range(2):
        response = await client.post(PREFLIGHT, json=body, headers=headers)
        assert response.status_code == 200, response.text
        assert response.json()["ok"] is True
        assert "idempotent-replayed" not in response.headers
    assert await _counts(world.runtime, world.tenant.organization_id) == before
    # The same key still belongs to nobody: createPost claims it as new.
    created = await client.post("/api/v1/posts", json=body, headers=headers)
    assert created.status_code == 201, created.text
    assert "idempotent-replayed" not in created.headers


async def test_a_key_with_posts_read_alone_may_preflight(
    client: httpx.AsyncClient, runtime: Runtime, world: World
):
    reader = await make_tenant(runtime, name="Reader", scopes=["posts:read"])
    channel = await connect_channel(runtime, reader.organization_id, provider="bluesky")
    body = {"text": "hello", "targets": [{"channelId": str(channel)}]}
    response = await client.post(PREFLIGHT, json=body, headers=reader.headers)
    assert response.status_code == 200, response.text
    assert response.json()["targets"][0]["length"]["count"] == 5
    assert response.headers["ratelimit-limit"]
    refused = await client.post("/api/v1/posts", json=body, headers=reader.headers)
    assert refused.status_code == 403


async def test_a_key_without_posts_read_is_403(client: httpx.AsyncClient, runtime: Runtime):
    writer = await make_tenant(runtime, name="Writer", scopes=["posts:write", "channels:read"])
    body = {"text": "hello", "targets": [{"channelId": str(uuid.uuid4())}]}
    response = await client.post(PREFLIGHT, json=body, headers=writer.headers)
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert response.json()["requiredScope"] == "posts:read"


async def test_without_a_key_it_is_401(client: httpx.AsyncClient):
    response = await client.post(PREFLIGHT, json={"targets": []})
    assert response.status_code == 401


# --- the service, as the console and the MCP server call it ---------------------------------


async def test_the_service_answers_as_the_operation_does(
    client: httpx.AsyncClient, runtime: Runtime, world: World
):
    body = {"text": X_280 + E_ACUTE, "targets": [{"channelId": await world.channel("x")}]}
    principal = await runtime.authenticate(world.tenant.key)
    assert principal is not None
    async with unit_of_work(runtime.sessions) as session:
        answer = await preflight_post(session, runtime, principal, PostCreate.model_validate(body))
    response = await client.post(PREFLIGHT, json=body, headers=world.tenant.headers)
    assert json.loads(answer.model_dump_json(by_alias=True)) == response.json()
    assert answer.ok is False
    assert answer.targets[0].length is not None
    assert answer.targets[0].length.count == 281


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE", "PUT"])
async def test_other_methods_on_the_preflight_path_are_405_not_a_post_id(
    client: httpx.AsyncClient, tenant: Tenant, method: str
):
    response = await client.request(method, PREFLIGHT, headers=tenant.headers)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] == "POST"
    # Any other segment is still read as a post id.
    other = await client.get("/api/v1/posts/preflights", headers=tenant.headers)
    assert other.status_code == 400
    assert other.json()["errors"][0]["field"] == "postId"


# --- the document's examples are real answers -----------------------------------------------


@pytest.mark.parametrize("name", ["fits", "refused"])
async def test_the_documents_examples_are_what_the_service_answers(
    client: httpx.AsyncClient, world: World, name: str
):
    """Each example body, sent with this test's own channels and media in place of the
    example's ids, is answered with the example's answer (ids put back)."""
    ids = {
        examples.BLUESKY_CHANNEL: await world.channel("bluesky"),
        examples.X_CHANNEL: await world.channel("x"),
        examples.IMAGE: await world.image(),
        examples.UNKNOWN_MEDIA: examples.UNKNOWN_MEDIA,
    }
    body = examples.PREFLIGHT_REQUEST_EXAMPLES[name]["value"]
    sent = json.loads(_swap(json.dumps(body), ids))
    response = await client.post(PREFLIGHT, json=sent, headers=world.tenant.headers)
    assert response.status_code == 200, response.text
    answer = json.loads(_swap(response.text, {real: made for made, real in ids.items()}))
    assert answer == examples.PREFLIGHT_EXAMPLES[name]["value"]


def _swap(text: str, ids: dict[str, str]) -> str:
    for old, new in ids.items():
        text = text.replace(old, new)
    return text
