"""A pin's request body, and finding a pin an earlier attempt already created.

`POST /v5/pins` (https://developers.pinterest.com/docs/api/v5/pins-create): `board_id`,
`title`, `description` (the target's text), `link`, `alt_text`, `note` and `media_source`:

- one image or GIF: `{"source_type": "image_url", "url"}`, Pinterest fetching the asset's
  signed public URL;
- a carousel: `{"source_type": "multiple_image_urls", "items": [{"url"}, ...]}`, 2 to 5;
- a video: `{"source_type": "video_id", "media_id", "cover_image_key_frame_time": 0}`, the
  uploaded video (video.py) with its first frame as the cover.

Idempotency: Pinterest takes no idempotency key. Every pin carries the target's idempotency key
in its `note`, a private note only the account sees
(https://help.pinterest.com/en/article/add-notes-to-your-pins). A publish retried after a crash
(attempt 2 onwards) first reads the board's newest pins, `GET /v5/boards/{board_id}/pins`, and
returns the one whose note carries the key instead of creating a second one.
"""

from __future__ import annotations

from typing import Any

from pressroom.providers.adapter import ProviderError
from pressroom.providers.adapter import PublishRequest
from pressroom.providers.pinterest.api import PinterestSession

WEB = "https://www.pinterest.com"
NOTE_PREFIX = "pressroom:"
# The newest pins read back when looking for an earlier attempt's pin: a retry comes minutes
# after the crash, so the pin, if made, is among the last few saved to the board.
RECOVERY_PAGE_SIZE = 50


def pin_url(pin_id: str) -> str:
    return f"{WEB}/pin/{pin_id}/"


def note_of(request: PublishRequest) -> str:
    return NOTE_PREFIX + request.idempotency_key


def board_of(request: PublishRequest) -> str:
    """The target's `options.boardId`, else the channel's default board."""
    board = request.options.get("boardId") or request.channel.credentials.get("defaultBoardId")
    if not isinstance(board, str) or not board:
        raise ProviderError(
            "invalid_request",
            "This Pinterest channel has no default board (the account had none when it was "
            "connected): name one in options.boardId, or create a board and reconnect.",
        )
    return board


def pin_body(request: PublishRequest, board_id: str, source: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"board_id": board_id, "media_source": source}
    if request.text:
        body["description"] = request.text
    for option, field in (("title", "title"), ("link", "link"), ("altText", "alt_text")):
        value = request.options.get(option)
        if value is None or value == "":
            continue
        if not isinstance(value, str):
            raise ProviderError("invalid_request", f"options.{option} must be a text.")
        body[field] = value
    body["note"] = note_of(request)
    return body


async def find_earlier_pin(session: PinterestSession, board_id: str, note: str) -> str | None:
    """The id of a pin on the board whose note is `note`, if there is one."""
    body = await session.call(
        "GET",
        f"/boards/{board_id}/pins",
        "looking for the pin of an earlier attempt",
        params={"page_size": str(RECOVERY_PAGE_SIZE)},
    )
    items = body.get("items")
    for pin in items if isinstance(items, list) else []:
        if isinstance(pin, dict) and pin.get("note") == note and isinstance(pin.get("id"), str):
            return str(pin["id"])
    return None
