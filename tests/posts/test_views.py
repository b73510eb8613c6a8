"""A post's view is built as a plain document: exactly what the `Post` schema would answer."""

from __future__ import annotations

import uuid
from datetime import UTC
from datetime import datetime
from types import SimpleNamespace

from pressroom.posts.schemas import Post as PostSchema
from pressroom.posts.views import post_view


def _as_the_schema_answers(document: dict[str, object]) -> dict[str, object]:
    return PostSchema.model_validate(document).model_dump(mode="json", by_alias=True)


def test_a_post_with_every_field_set_is_what_the_schema_answers():
    media = [str(uuid.uuid4()), str(uuid.uuid4())]
    post = SimpleNamespace(
        id=uuid.uuid4(),
        text="Spring launch: ünïcode and emoji 🚀",
        media_ids={"ids": media},
        scheduled_at=datetime(2026, 12, 1, 9, 0, 0, 123456, tzinfo=UTC),
        model="gpt-5",
        status="partially_published",
        approval_required=True,
        approval_status="approved",
        approval_decided_by=uuid.uuid4(),
        approval_decided_at=datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
        first_published_at=datetime(2026, 12, 1, 9, 0, 1, 999999, tzinfo=UTC),
        created_by=uuid.uuid4(),
        created_at=datetime(2026, 11, 29, 7, 6, 5, 432100, tzinfo=UTC),
        updated_at=datetime(2026, 12, 1, 9, 0, 2, tzinfo=UTC),
    )
    published = SimpleNamespace(
        id=uuid.uuid4(),
        channel_id=uuid.uuid4(),
        provider="bluesky",
        content_kind="post",
        text_override=None,
        media_ids_override=None,
        options={"langs": ["en"], "replies": 60},
        status="published",
        published_at=datetime(2026, 12, 1, 9, 0, 1, 999999, tzinfo=UTC),
        provider_post_id="at://did/post/1",
        url="https://bsky.app/profile/x/post/1",
        attempts=1,
        error_code="media_rejected",
        error_message="the first comment was refused",
        error_retryable=False,
    )
    failed = SimpleNamespace(
        **{
            **vars(published),
            "id": uuid.uuid4(),
            "text_override": "Shorter",
            "media_ids_override": {"ids": []},
            "options": {},
            "status": "failed",
            "published_at": None,
            "provider_post_id": None,
            "url": None,
            "attempts": 3,
            "error_message": None,
            "error_retryable": None,
        }
    )
    document = post_view(post, [published, failed], ["spring-launch"], ["pricing"])
    assert document == _as_the_schema_answers(document)
    assert document["targets"][1]["text"] == "Shorter"
    assert document["targets"][1]["mediaIds"] == []
    assert document["targets"][0]["mediaIds"] == media


def test_a_draft_with_nothing_optional_set_is_what_the_schema_answers():
    post = SimpleNamespace(
        id=uuid.uuid4(),
        text=None,
        media_ids={},
        scheduled_at=None,
        model=None,
        status="draft",
        approval_required=False,
        approval_status="not_required",
        approval_decided_by=None,
        approval_decided_at=None,
        first_published_at=None,
        created_by=None,
        created_at=datetime(2026, 11, 29, 7, 6, 5, tzinfo=UTC),
        updated_at=datetime(2026, 11, 29, 7, 6, 5, tzinfo=UTC),
    )
    document = post_view(post, [], [], [])
    assert document == _as_the_schema_answers(document)
