"""Examples of preflightPost for the OpenAPI document: request bodies and the service's own
answers to them (tests/posts/test_preflight.py replays them against the service)."""

from __future__ import annotations

from typing import Any

BLUESKY_CHANNEL = "01a2144e-85fa-7199-ad82-eeeefc62706e"
X_CHANNEL = "01a2144e-860b-70d1-9922-f24d69182a94"
IMAGE = "01a2144e-8617-7045-85c9-97e5b0013889"
UNKNOWN_MEDIA = "0190f1e2-1111-7000-8000-000000000000"

_FITS_TEXT = "Spring menu is live: https://example.com/menu \U0001f957"
_X_TEXT = "Spring menu \U0001f957 https://example.com/menu"
_LONG_TEXT = "Our spring menu " + "is fresh " * 33


def _length(count: int, limit: int, unit: str, size: int, max_bytes: int | None) -> dict[str, Any]:
    return {
        "count": count,
        "limit": limit,
        "unit": unit,
        "remaining": limit - count,
        "bytes": size,
        "maxBytes": max_bytes,
        "links": None,
        "maxLinks": None,
    }


def _media(count: int, ok: bool) -> dict[str, Any]:
    return {"count": count, "minItems": 0, "maxItems": 4, "ok": ok}


def _error(field: str, code: str, message: str) -> dict[str, str]:
    return {"field": field, "code": code, "message": message}


_PAST = _error(
    "scheduledAt", "in_the_past", "must be in the future; use publishNow to publish at once"
)
_BLUESKY_LONG = _error("targets[0].text", "too_long", "has 313 graphemes; bluesky allows 300")
_X_UNKNOWN_MEDIA = _error(
    "targets[1].mediaIds[1]", "unknown_media", "names no media of this organization"
)
_X_LONG = _error("targets[1].text", "too_long", "has 313 weighted characters; x allows 280")

FITS_BODY: dict[str, Any] = {
    "text": _FITS_TEXT,
    "mediaIds": [IMAGE],
    "scheduledAt": "2030-04-01T09:00:00Z",
    "targets": [{"channelId": BLUESKY_CHANNEL}, {"channelId": X_CHANNEL, "text": _X_TEXT}],
}
FITS_ANSWER: dict[str, Any] = {
    "ok": True,
    "detail": None,
    "errors": [],
    "targets": [
        {
            "field": "targets[0]",
            "channelId": BLUESKY_CHANNEL,
            "provider": "bluesky",
            "contentKind": "post",
            "text": _FITS_TEXT,
            "textSource": "post",
            "mediaIds": [IMAGE],
            "mediaSource": "post",
            "length": _length(47, 300, "graphemes", 50, 3000),
            "media": _media(1, True),
            "ok": True,
            "errors": [],
        },
        {
            "field": "targets[1]",
            "channelId": X_CHANNEL,
            "provider": "x",
            "contentKind": "post",
            "text": _X_TEXT,
            "textSource": "target",
            "mediaIds": [IMAGE],
            "mediaSource": "post",
            "length": _length(38, 280, "weighted", 41, None),
            "media": _media(1, True),
            "ok": True,
            "errors": [],
        },
    ],
}

REFUSED_BODY: dict[str, Any] = {
    "text": _LONG_TEXT,
    "scheduledAt": "2020-04-01T09:00:00Z",
    "targets": [
        {"channelId": BLUESKY_CHANNEL},
        {"channelId": X_CHANNEL, "mediaIds": [IMAGE, UNKNOWN_MEDIA]},
    ],
}
REFUSED_ANSWER: dict[str, Any] = {
    "ok": False,
    "detail": f"scheduledAt: {_PAST['message']} (and 3 more)",
    "errors": [_PAST, _BLUESKY_LONG, _X_UNKNOWN_MEDIA, _X_LONG],
    "targets": [
        {
            "field": "targets[0]",
            "channelId": BLUESKY_CHANNEL,
            "provider": "bluesky",
            "contentKind": "post",
            "text": _LONG_TEXT,
            "textSource": "post",
            "mediaIds": [],
            "mediaSource": "post",
            "length": _length(313, 300, "graphemes", 313, 3000),
            "media": _media(0, True),
            "ok": False,
            "errors": [_BLUESKY_LONG],
        },
        {
            "field": "targets[1]",
            "channelId": X_CHANNEL,
            "provider": "x",
            "contentKind": "post",
            "text": _LONG_TEXT,
            "textSource": "post",
            "mediaIds": [IMAGE, UNKNOWN_MEDIA],
            "mediaSource": "target",
            "length": _length(313, 280, "weighted", 313, None),
            "media": _media(2, False),
            "ok": False,
            "errors": [_X_UNKNOWN_MEDIA, _X_LONG],
        },
    ],
}

_FITS = "Fits every network"
_REFUSED = "What createPost would refuse"
PREFLIGHT_REQUEST_EXAMPLES: dict[str, dict[str, Any]] = {
    "fits": {"summary": _FITS, "value": FITS_BODY},
    "refused": {"summary": _REFUSED, "value": REFUSED_BODY},
}
PREFLIGHT_EXAMPLES: dict[str, dict[str, Any]] = {
    "fits": {"summary": _FITS, "value": FITS_ANSWER},
    "refused": {
        "summary": f"{_REFUSED}: a past schedule, text over two limits, unknown media",
        "value": REFUSED_ANSWER,
    },
}
