"""Bluesky record keys and the post record.

Follows https://atproto.com/specs/tid (13 base32-sortable characters, top bit 0, 53 bits of
microseconds, 10 bits of clock id), https://atproto.com/specs/record-key (app.bsky.feed.post
keys are TIDs) and the lexicon app.bsky.feed.post."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime

from pressroom.providers.bluesky.records import TID_ALPHABET
from pressroom.providers.bluesky.records import AtUri
from pressroom.providers.bluesky.records import is_tid
from pressroom.providers.bluesky.records import post_record
from pressroom.providers.bluesky.records import record_key
from pressroom.providers.bluesky.records import thread_record_key

from .support import FIXED_NOW


def _tid_microseconds(tid: str) -> int:
    value = 0
    for char in tid:
        value = (value << 5) | TID_ALPHABET.index(char)
    return value >> 10


def test_record_key_is_the_same_for_the_same_idempotency_key() -> None:
    assert record_key("target-1:2026-12-01T09:00:00Z") == record_key(
        "target-1:2026-12-01T09:00:00Z"
    )


def test_record_key_differs_between_idempotency_keys() -> None:
    keys = {record_key(f"target-{n}:2026-12-01T09:00:00Z") for n in range(1000)}
    assert len(keys) == 1000


def test_record_key_is_valid_tid_syntax_with_a_past_timestamp() -> None:
    for n in range(200):
        key = record_key(f"k{n}")
        assert is_tid(key), key
        moment = datetime.fromtimestamp(_tid_microseconds(key) / 1_000_000, UTC)
        assert moment.year == 2023


def test_thread_posts_get_their_own_keys_and_the_first_is_the_post_key() -> None:
    keys = [thread_record_key("key", position) for position in range(4)]
    assert keys[0] == record_key("key")
    assert len(set(keys)) == 4
    assert all(is_tid(key) for key in keys)


def test_post_record_has_type_text_and_utc_created_at() -> None:
    assert post_record("hello", created_at=FIXED_NOW, facets=[]) == {
        "$type": "app.bsky.feed.post",
        "text": "hello",
        "createdAt": "2026-11-22T09:30:00.123Z",
    }


def test_at_uri_round_trips() -> None:
    uri = AtUri.parse("at://did:plc:abc/app.bsky.feed.post/3jzfcijpj2z2a")
    assert (uri.repo, uri.collection, uri.rkey) == (
        "did:plc:abc",
        "app.bsky.feed.post",
        "3jzfcijpj2z2a",
    )
    assert str(uri) == "at://did:plc:abc/app.bsky.feed.post/3jzfcijpj2z2a"
