"""Webhook signatures: known answers, verification, rotation, Standard Webhooks interop."""

from __future__ import annotations

import base64
import hashlib
import hmac
import subprocess
import sys
import time
from datetime import UTC
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import standardwebhooks

from pressroom.webhooks.signing import WebhookVerificationError
from pressroom.webhooks.signing import generate_secret
from pressroom.webhooks.signing import secret_key
from pressroom.webhooks.signing import sign
from pressroom.webhooks.signing import signature_header
from pressroom.webhooks.signing import verify

KEY = bytes(range(32))
SECRET = "whsec_" + base64.b64encode(KEY).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(b"\x01" * 32).decode()
MSG_ID = "evt_01HZX3K9V6Q4T8"
TIMESTAMP = 1_700_000_000
BODY = b'{"id":"evt_01HZX3K9V6Q4T8","type":"webhook.test.v1","data":{"endpointId":"e1"}}'


def headers_for(signature: str, msg_id: str = MSG_ID, timestamp: int = TIMESTAMP) -> dict[str, str]:
    return {
        "Webhook-Id": msg_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": signature,
    }


def test_signature_matches_an_independent_hmac() -> None:
    digest = hmac.new(KEY, f"{MSG_ID}.{TIMESTAMP}.".encode() + BODY, hashlib.sha256).digest()
    assert sign(SECRET, MSG_ID, TIMESTAMP, BODY) == "v1=" + base64.b64encode(digest).decode()


def test_standard_webhooks_published_vector() -> None:
    # The example of the Standard Webhooks specification, with `v1=` for its `v1,`.
    signature = sign(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        b'{"test": 2432232314}',
    )
    assert signature == "v1=g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_generated_secret_is_whsec_and_32_random_bytes() -> None:
    secret = generate_secret()
    assert secret.startswith("whsec_")
    assert len(secret_key(secret)) == 32
    assert generate_secret() != secret


def test_secret_key_decodes_with_or_without_prefix() -> None:
    assert secret_key(SECRET) == KEY
    assert secret_key(SECRET.removeprefix("whsec_")) == KEY


@pytest.mark.parametrize("secret", ["whsec_not base64!", "whsec_", "whsec_abc"])
def test_malformed_secret_is_refused(secret: str) -> None:
    with pytest.raises(ValueError, match="secret"):
        secret_key(secret)


def test_round_trip_verifies() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    verify(SECRET, headers_for(signature), BODY, now=TIMESTAMP)


def test_header_names_are_case_insensitive() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    lower = {k.lower(): v for k, v in headers_for(signature).items()}
    upper = {k.upper(): v for k, v in headers_for(signature).items()}
    verify(SECRET, lower, BODY, now=TIMESTAMP)
    verify(SECRET, upper, BODY, now=TIMESTAMP)


@pytest.mark.parametrize("offset", [-300, 0, 300])
def test_timestamp_within_tolerance_is_accepted(offset: int) -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    verify(SECRET, headers_for(signature), BODY, now=TIMESTAMP + offset)


@pytest.mark.parametrize(("offset", "message"), [(301, "too old"), (-301, "future")])
def test_timestamp_outside_tolerance_is_rejected(offset: int, message: str) -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError, match=message):
        verify(SECRET, headers_for(signature), BODY, now=TIMESTAMP + offset)


def test_tolerance_is_configurable() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError, match="too old"):
        verify(SECRET, headers_for(signature), BODY, tolerance=10, now=TIMESTAMP + 11)


def test_tampered_body_is_rejected() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(SECRET, headers_for(signature), BODY.replace(b"e1", b"e2"), now=TIMESTAMP)


def test_reserialised_body_is_rejected() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError):
        verify(SECRET, headers_for(signature), BODY.replace(b":", b": "), now=TIMESTAMP)


def test_tampered_id_is_rejected() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(SECRET, headers_for(signature, msg_id="evt_other"), BODY, now=TIMESTAMP)


def test_tampered_timestamp_is_rejected() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    headers = headers_for(signature, timestamp=TIMESTAMP + 1)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(SECRET, headers, BODY, now=TIMESTAMP)


def test_wrong_secret_is_rejected() -> None:
    signature = sign(OTHER_SECRET, MSG_ID, TIMESTAMP, BODY)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(SECRET, headers_for(signature), BODY, now=TIMESTAMP)


@pytest.mark.parametrize("missing", ["Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"])
def test_missing_header_is_named(missing: str) -> None:
    headers = headers_for(sign(SECRET, MSG_ID, TIMESTAMP, BODY))
    del headers[missing]
    with pytest.raises(WebhookVerificationError, match=missing):
        verify(SECRET, headers, BODY, now=TIMESTAMP)


@pytest.mark.parametrize("timestamp", ["1700000000.5", "-1700000000", "+1700000000", "soon", "١٢"])
def test_non_integer_timestamp_is_rejected(timestamp: str) -> None:
    headers = headers_for(sign(SECRET, MSG_ID, TIMESTAMP, BODY))
    headers["Webhook-Timestamp"] = timestamp
    with pytest.raises(WebhookVerificationError, match="integer"):
        verify(SECRET, headers, BODY, now=TIMESTAMP)


def test_standard_webhooks_comma_separator_is_not_accepted() -> None:
    signature = sign(SECRET, MSG_ID, TIMESTAMP, BODY).replace("v1=", "v1,", 1)
    with pytest.raises(WebhookVerificationError, match="no v1= signature"):
        verify(SECRET, headers_for(signature), BODY, now=TIMESTAMP)


def test_unknown_signature_versions_are_ignored() -> None:
    signature = "v2=c29tZXRoaW5n " + sign(SECRET, MSG_ID, TIMESTAMP, BODY)
    verify(SECRET, headers_for(signature), BODY, now=TIMESTAMP)


def test_rotation_header_carries_one_signature_per_secret() -> None:
    header = signature_header([SECRET, OTHER_SECRET], MSG_ID, TIMESTAMP, BODY)
    assert header.split(" ") == [
        sign(SECRET, MSG_ID, TIMESTAMP, BODY),
        sign(OTHER_SECRET, MSG_ID, TIMESTAMP, BODY),
    ]


@pytest.mark.parametrize("receiver_secret", [SECRET, OTHER_SECRET])
def test_during_rotation_either_secret_verifies(receiver_secret: str) -> None:
    header = signature_header([SECRET, OTHER_SECRET], MSG_ID, TIMESTAMP, BODY)
    verify(receiver_secret, headers_for(header), BODY, now=TIMESTAMP)


def test_signing_needs_a_secret() -> None:
    with pytest.raises(ValueError, match="at least one secret"):
        signature_header([], MSG_ID, TIMESTAMP, BODY)


def test_standard_webhooks_library_verifies_our_signature() -> None:
    now = int(time.time())
    header = signature_header([SECRET, OTHER_SECRET], MSG_ID, now, BODY)
    headers = headers_for(header.replace("v1=", "v1,"), timestamp=now)
    payload = standardwebhooks.Webhook(SECRET).verify(BODY, headers)
    assert payload["type"] == "webhook.test.v1"


def test_we_verify_the_standard_webhooks_library_signature() -> None:
    now = int(time.time())
    signed_at = datetime.fromtimestamp(now, tz=UTC)
    theirs = standardwebhooks.Webhook(SECRET).sign(MSG_ID, signed_at, BODY.decode())
    verify(SECRET, headers_for(theirs.replace("v1,", "v1="), timestamp=now), BODY)


def test_package_root_exposes_verify_without_heavy_imports() -> None:
    code = (
        "import sys; from pressroom.webhooks import verify, WebhookVerificationError; "
        "heavy = ('httpx', 'httpcore', 'sqlalchemy', 'fastapi'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert result.stdout.strip() == "[]"


def readme_receiver_example() -> str:
    """The receiver example of README.md's Webhooks section, as integrators read it."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("\n## Webhooks\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_receiver_example_accepts_a_delivery_and_refuses_a_forgery() -> None:
    handled: list[str] = []
    namespace: dict[str, Any] = {
        "WEBHOOK_SECRET": SECRET,
        "already_handled": lambda event_id: event_id in handled,
        "handle": lambda event: handled.append(event["id"]),
    }
    exec(compile(readme_receiver_example(), "README.md", "exec"), namespace)
    receive = namespace["receive"]
    now = int(time.time())
    headers = headers_for(signature_header([SECRET], MSG_ID, now, BODY), timestamp=now)
    assert receive(headers, BODY) == 200
    assert receive(headers, BODY) == 200  # the same event again: acknowledged, not handled
    assert handled == [MSG_ID]
    assert receive(headers, BODY.replace(b"e1", b"e2")) == 400
    stale = headers_for(sign(SECRET, MSG_ID, now - 301, BODY), timestamp=now - 301)
    assert receive(stale, BODY) == 400
    assert handled == [MSG_ID]
