"""The app.bsky.feed.post record and its identifiers.

Record shape: lexicons app.bsky.feed.post (text, createdAt, facets, embed, reply),
app.bsky.embed.images (up to 4 images, each with `alt` and `aspectRatio`), app.bsky.embed.video
(one video blob, `alt`, `aspectRatio`) and com.atproto.repo.strongRef (uri + cid) for replies.

Record keys: app.bsky.feed.post declares `"key": "tid"`, so its records are named by a
Timestamp Identifier (https://atproto.com/specs/tid): 13 characters of base32-sortable
(`234567abcdefghijklmnopqrstuvwxyz`) encoding a 64-bit integer whose top bit is 0, then 53 bits
of microseconds since the Unix epoch, then a 10-bit clock identifier. Pressroom derives the key
of each post from the publish's idempotency key instead of the clock, so a publish sent twice
names the same record and cannot create a second one. The derived timestamp falls inside 2023
(a fixed past window): it only has to be a valid TID, and the spec warns that record-key
timestamps are never to be trusted as creation times (`createdAt` is the real one).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pressroom.kit.schema import format_utc

POST_COLLECTION = "app.bsky.feed.post"
IMAGES_EMBED = "app.bsky.embed.images"
VIDEO_EMBED = "app.bsky.embed.video"

TID_ALPHABET = "234567abcdefghijklmnopqrstuvwxyz"
TID_LENGTH = 13
# 2023-01-01T00:00:00Z in microseconds, and one year of microseconds.
_TID_WINDOW_START_US = 1_672_531_200 * 1_000_000
_TID_WINDOW_US = 365 * 86_400 * 1_000_000


def record_key(idempotency_key: str) -> str:
    """A TID-syntax record key that depends only on `idempotency_key`."""
    digest = hashlib.sha256(b"pressroom/bluesky/rkey\x00" + idempotency_key.encode()).digest()
    number = int.from_bytes(digest[:8], "big")
    timestamp = _TID_WINDOW_START_US + (number >> 10) % _TID_WINDOW_US
    clock_id = number & 0x3FF
    value = (timestamp << 10) | clock_id
    chars = []
    for _ in range(TID_LENGTH):
        chars.append(TID_ALPHABET[value & 0x1F])
        value >>= 5
    return "".join(reversed(chars))


def is_tid(value: str) -> bool:
    """Whether `value` is valid TID syntax (13 characters, first one keeps the top bit 0)."""
    return (
        len(value) == TID_LENGTH
        and all(c in TID_ALPHABET for c in value)
        and value[0] in TID_ALPHABET[:16]
    )


def thread_record_key(idempotency_key: str, position: int) -> str:
    """The record key of the thread's post at `position` (0 is the main post)."""
    if position == 0:
        return record_key(idempotency_key)
    return record_key(f"{idempotency_key}\x00thread\x00{position}")


def comment_record_key(idempotency_key: str) -> str:
    """The record key of the first comment (a reply to the main post)."""
    return record_key(f"{idempotency_key}\x00comment")


@dataclass(frozen=True)
class StrongRef:
    """com.atproto.repo.strongRef: a record's AT URI and the CID of its content."""

    uri: str
    cid: str

    def as_json(self) -> dict[str, str]:
        return {"uri": self.uri, "cid": self.cid}


@dataclass(frozen=True)
class AtUri:
    repo: str
    collection: str
    rkey: str

    @classmethod
    def parse(cls, uri: str) -> AtUri:
        if not uri.startswith("at://"):
            raise ValueError(f"not an AT URI: {uri!r}")
        parts = uri[len("at://") :].split("/")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"not a record AT URI: {uri!r}")
        return cls(parts[0], parts[1], parts[2])

    def __str__(self) -> str:
        return f"at://{self.repo}/{self.collection}/{self.rkey}"


def post_uri(did: str, rkey: str) -> str:
    return str(AtUri(did, POST_COLLECTION, rkey))


def post_url(actor: str, rkey: str) -> str:
    """The post's page on the Bluesky app; `actor` is the handle (or the DID)."""
    return f"https://bsky.app/profile/{actor}/post/{rkey}"


def post_record(
    text: str,
    *,
    created_at: datetime,
    facets: list[dict[str, Any]],
    embed: dict[str, Any] | None = None,
    reply: tuple[StrongRef, StrongRef] | None = None,
    langs: list[str] | None = None,
) -> dict[str, Any]:
    """An app.bsky.feed.post record; `reply` is (root, parent)."""
    record: dict[str, Any] = {
        "$type": POST_COLLECTION,
        "text": text,
        "createdAt": format_utc(created_at),
    }
    if facets:
        record["facets"] = facets
    if embed is not None:
        record["embed"] = embed
    if reply is not None:
        root, parent = reply
        record["reply"] = {"root": root.as_json(), "parent": parent.as_json()}
    if langs:
        record["langs"] = langs
    return record


def aspect_ratio(dimensions: tuple[int, int] | None) -> dict[str, int] | None:
    """app.bsky.embed.defs#aspectRatio: width and height, both at least 1."""
    if dimensions is None:
        return None
    width, height = dimensions
    if width < 1 or height < 1:
        return None
    return {"width": width, "height": height}


def images_embed(
    images: list[tuple[dict[str, Any], str | None, tuple[int, int] | None]],
) -> dict[str, Any]:
    """app.bsky.embed.images from (blob, alt, dimensions) triples; `alt` is required by the
    lexicon, so an image without one gets the empty string."""
    entries = []
    for blob, alt, dimensions in images:
        entry: dict[str, Any] = {"image": blob, "alt": alt or ""}
        ratio = aspect_ratio(dimensions)
        if ratio is not None:
            entry["aspectRatio"] = ratio
        entries.append(entry)
    return {"$type": IMAGES_EMBED, "images": entries}


def video_embed(
    blob: dict[str, Any], alt: str | None, dimensions: tuple[int, int] | None
) -> dict[str, Any]:
    embed: dict[str, Any] = {"$type": VIDEO_EMBED, "video": blob}
    if alt:
        embed["alt"] = alt
    ratio = aspect_ratio(dimensions)
    if ratio is not None:
        embed["aspectRatio"] = ratio
    return embed
