"""Confirmation tokens of two-step writes.

A token names its expiry and a nonce, and carries an HMAC-SHA256 over the tool, the exact
arguments and those two, under a key derived from the caller's API key: it cannot be forged
without the key, used by another key, for another tool or with other arguments, or after it
expires. Nothing is stored, so any node (or a restarted `pressroom mcp`) accepts a token
another issued. The Idempotency-Key of the write is derived from the token: a retried
confirmation replays the first one's answer instead of acting again."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

_CONTEXT = b"pressroom mcp confirmation v1\x00"


def _mac(api_key: str, tool: str, arguments: dict[str, Any], payload: str) -> str:
    key = hashlib.sha256(_CONTEXT + api_key.encode()).digest()
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    message = "\x00".join((tool, canonical, payload)).encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(
    api_key: str, tool: str, arguments: dict[str, Any], *, seconds: int, now: float | None = None
) -> tuple[str, int]:
    """A token for this call, and its expiry (Unix seconds)."""
    expires = int((time.time() if now is None else now) + seconds)
    payload = f"{expires}.{secrets.token_urlsafe(12)}"
    return f"{payload}.{_mac(api_key, tool, arguments, payload)}", expires


def refusal(
    api_key: str, tool: str, arguments: dict[str, Any], token: str, now: float | None = None
) -> str | None:
    """Why the token does not confirm this call, or None when it does."""
    expires, _, rest = token.partition(".")
    nonce, _, mac = rest.partition(".")
    if not (expires.isdecimal() and nonce and mac):
        return "is not a confirmation token"
    expected = _mac(api_key, tool, arguments, f"{expires}.{nonce}")
    if not hmac.compare_digest(mac.encode(), expected.encode()):
        return (
            "does not match this call: it was issued for another tool, other arguments or "
            "another key; call without it for a new preview"
        )
    if int(expires) < (time.time() if now is None else now):
        return "has expired; call without it for a new preview"
    return None


def idempotency_key(token: str) -> str:
    """The Idempotency-Key the confirmed write is sent with."""
    return "mcp-" + hashlib.sha256(token.encode()).hexdigest()[:48]
