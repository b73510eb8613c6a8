"""Webhook signatures: Standard Webhooks signing with `v1=` as the version separator.

A delivery carries three headers: `Webhook-Id` (the event id, stable across attempts),
`Webhook-Timestamp` (Unix seconds of the attempt) and `Webhook-Signature`, one or more
space-separated `v1=<base64 HMAC-SHA256>` values over `<id>.<timestamp>.<raw body>`, keyed with
the base64-decoded part of the `whsec_` secret. Several values appear while a rotated secret is
still in its grace period, so a receiver holding either secret can verify.

The published spec demands `v1=`; Standard Webhooks writes `v1,`. Only `v1=` is accepted by
`verify`: a receiver using a Standard Webhooks library can verify our deliveries by rewriting
`v1=` to `v1,` in the header first.

Integrators verify with:

    from pressroom.webhooks import verify, WebhookVerificationError

    try:
        verify(secret, request.headers, raw_body)
    except WebhookVerificationError:
        return 400
    event = json.loads(raw_body)  # only after the signature checked out
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1="
DEFAULT_TOLERANCE_SECONDS = 300  # the spec's "five minutes"

_SECRET_BYTES = 32


class WebhookVerificationError(Exception):
    """The delivery is not authentic, or not fresh: do not act on it."""


def generate_secret() -> str:
    """A new signing secret: `whsec_` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: the base64-decoded part after `whsec_`.

    The prefix is optional so a receiver may store only the base64 part.
    """
    encoded = secret.removeprefix(SECRET_PREFIX)
    try:
        key = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("the webhook secret is not valid base64 after 'whsec_'") from exc
    if not key:
        raise ValueError("the webhook secret is empty")
    return key


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """One `v1=` signature of a delivery."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return SIGNATURE_VERSION + base64.b64encode(digest).decode("ascii")


def signature_header(secrets: list[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The `Webhook-Signature` value: one signature per live secret, space-separated.

    Pass the current secret first and the previous one while its rotation grace lasts.
    """
    if not secrets:
        raise ValueError("at least one secret is needed to sign a delivery")
    return " ".join(sign(secret, msg_id, timestamp, body) for secret in secrets)


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: int | None = None,
) -> None:
    """Check a delivery's signature and freshness; raise WebhookVerificationError if either fails.

    `body` must be the exact raw bytes received: verify before parsing the JSON, since any
    re-serialisation changes the bytes. Header names are matched case-insensitively. The
    timestamp must lie within `tolerance` seconds of `now` (default: the current time) in either
    direction, which bounds how long a captured delivery can be replayed. The delivery is
    authentic if any of the space-separated `v1=` signatures matches; other versions (and the
    Standard Webhooks `v1,` spelling) are ignored.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    msg_id = lowered.get("webhook-id")
    timestamp_text = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not msg_id or not timestamp_text or not signatures:
        missing = [
            name
            for name, value in (
                ("Webhook-Id", msg_id),
                ("Webhook-Timestamp", timestamp_text),
                ("Webhook-Signature", signatures),
            )
            if not value
        ]
        raise WebhookVerificationError(f"missing header(s): {', '.join(missing)}")

    timestamp_text = timestamp_text.strip()
    # isdecimal() also admits non-ASCII digits; int() would accept "+5", " 5" or "5_0".
    if not (timestamp_text.isascii() and timestamp_text.isdecimal()):
        raise WebhookVerificationError("Webhook-Timestamp is not an integer number of seconds")
    timestamp = int(timestamp_text)
    current = int(time.time()) if now is None else now
    if timestamp < current - tolerance:
        raise WebhookVerificationError("Webhook-Timestamp is too old")
    if timestamp > current + tolerance:
        raise WebhookVerificationError("Webhook-Timestamp is too far in the future")

    try:
        expected = sign(secret, msg_id, timestamp, body).encode("ascii")
    except ValueError as exc:
        raise WebhookVerificationError(str(exc)) from exc
    candidates = [
        candidate.encode("utf-8")
        for candidate in signatures.split()
        if candidate.startswith(SIGNATURE_VERSION)
    ]
    if not candidates:
        raise WebhookVerificationError("Webhook-Signature carries no v1= signature")
    # Compare with every candidate (no early exit) so timing does not reveal which one matched.
    matched = False
    for candidate in candidates:
        matched |= hmac.compare_digest(candidate, expected)
    if not matched:
        raise WebhookVerificationError("no signature matches the secret")
