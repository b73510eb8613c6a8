"""One delivery attempt: sign, send, classify the outcome, and decide what comes next.

Nothing here touches the database: the worker claims deliveries in one transaction, runs their
attempts outside any transaction, and records the results in another."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import ssl
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Literal

import httpx

from pressroom.kit.clock import utcnow
from pressroom.kit.outbound.destination import DestinationBlocked
from pressroom.kit.outbound.transport import DeliveryClient
from pressroom.webhooks.signing import signature_header

log = logging.getLogger(__name__)

# A response body is read (and thrown away) up to this much, so a short answer leaves the
# connection reusable; a longer one is cut off and its connection closed.
MAX_DRAINED_BYTES = 64 * 1024
# Retry-After is honoured, but never beyond this: a receiver cannot park a delivery for days.
MAX_RETRY_AFTER_SECONDS = 3600.0
# Each scheduled delay is lengthened by up to this fraction, so retries of many deliveries that
# failed together (an endpoint outage) do not all arrive at the same instant.
JITTER = 0.2
MAX_ERROR_MESSAGE = 500
_RETRYABLE_STATUSES = frozenset({408, 425, 429})

Trigger = Literal["scheduled", "replay", "test"]


@dataclass(frozen=True)
class ClaimedDelivery:
    """A delivery this worker holds the lease of, with what its attempt needs."""

    delivery_id: uuid.UUID
    endpoint_id: uuid.UUID
    event_id: uuid.UUID
    number: int  # of the attempt about to be made
    trigger: str
    expires_at: datetime
    lease_owner: str
    url: str
    body: bytes
    secret_encrypted: str
    previous_secret_encrypted: str | None
    previous_expires_at: datetime | None


@dataclass(frozen=True)
class AttemptResult:
    claimed: ClaimedDelivery
    started_at: datetime
    response_status: int | None
    latency_ms: int | None
    error_code: str | None
    error_message: str | None
    retryable: bool
    retry_after: float | None = None

    @property
    def succeeded(self) -> bool:
        return self.error_code is None


def _unanswered(
    claimed: ClaimedDelivery, started_at: datetime, code: str, message: str
) -> AttemptResult:
    """A failure with no response to record (not sent, nothing came back, or our own): retried."""
    return AttemptResult(
        claimed,
        started_at,
        response_status=None,
        latency_ms=None,
        error_code=code,
        error_message=message[:MAX_ERROR_MESSAGE],
        retryable=True,
    )


def _is_tls_error(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ssl.SSLError | ssl.CertificateError):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return "certificate" in str(exc).lower() or "ssl" in str(exc).lower()


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds from a Retry-After header: delta-seconds or an HTTP date; None if unusable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdecimal():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def classify_status(
    claimed: ClaimedDelivery,
    started_at: datetime,
    status: int,
    latency_ms: int,
    retry_after: str | None,
) -> AttemptResult:
    if 200 <= status < 300:
        return AttemptResult(claimed, started_at, status, latency_ms, None, None, False)
    if 300 <= status < 400:
        message = f"the endpoint answered {status}; redirects are never followed"
        return AttemptResult(claimed, started_at, status, latency_ms, "redirect", message, False)
    retryable = status in _RETRYABLE_STATUSES or 500 <= status < 600
    return AttemptResult(
        claimed,
        started_at,
        status,
        latency_ms,
        "http_error",
        f"the endpoint answered {status}",
        retryable,
        retry_after=parse_retry_after(retry_after, utcnow()) if retryable else None,
    )


def request_headers(
    claimed: ClaimedDelivery, secrets: Sequence[str], timestamp: int
) -> dict[str, str]:
    event_id = str(claimed.event_id)
    return {
        "Content-Type": "application/json",
        "Webhook-Id": event_id,
        "Webhook-Timestamp": str(timestamp),
        "Webhook-Signature": signature_header(list(secrets), event_id, timestamp, claimed.body),
    }


async def _drain(response: httpx.Response) -> None:
    """Read at most MAX_DRAINED_BYTES of the body and discard them."""
    declared = response.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_DRAINED_BYTES:
        return
    # Read to the end even when empty: only a response read to its end leaves the connection
    # reusable (keep-alive); one closed early costs a new TCP and TLS handshake.
    received = 0
    async for chunk in response.aiter_raw():
        received += len(chunk)
        if received > MAX_DRAINED_BYTES:
            return


async def perform_attempt(
    client: DeliveryClient,
    claimed: ClaimedDelivery,
    secrets: Sequence[str],
    timeout: float,  # noqa: ASYNC109 (a setting applied to parts of the attempt, not the call)
) -> AttemptResult:
    """Resolve and vet the destination, send the signed event, and classify what happened.

    `timeout` bounds the whole attempt (name resolution included) up to the response status;
    what is read of the body after that shares the same deadline."""
    started_at = utcnow()
    began = time.perf_counter()
    deadline = asyncio.get_running_loop().time() + timeout

    def elapsed_ms() -> int:
        return round((time.perf_counter() - began) * 1000)

    try:
        async with asyncio.timeout_at(deadline):
            try:
                url = await client.vet_destination(claimed.url)
            except httpx.ConnectError as exc:
                return _unanswered(claimed, started_at, "dns_error", str(exc))
            request = client.build_request(
                "POST",
                url,
                content=claimed.body,
                headers=request_headers(claimed, secrets, int(time.time())),
            )
            response = await client.send(request, stream=True)
    except DestinationBlocked as exc:
        return _unanswered(claimed, started_at, "destination_blocked", f"not sent: {exc.reason}")
    except (TimeoutError, httpx.TimeoutException):
        return _unanswered(claimed, started_at, "timeout", f"no response within {timeout:g} s")
    except httpx.ConnectError as exc:
        code = "tls_error" if _is_tls_error(exc) else "connection_error"
        return _unanswered(claimed, started_at, code, str(exc) or code)
    except httpx.TransportError as exc:
        return _unanswered(claimed, started_at, "connection_error", str(exc) or type(exc).__name__)
    latency = elapsed_ms()
    try:
        async with asyncio.timeout_at(deadline):
            await _drain(response)
    except (TimeoutError, httpx.HTTPError):
        pass  # the status has arrived; a body cut short only costs the connection
    finally:
        await response.aclose()
    return classify_status(
        claimed, started_at, response.status_code, latency, response.headers.get("retry-after")
    )


def internal_failure(claimed: ClaimedDelivery, started_at: datetime) -> AttemptResult:
    """An attempt that failed on our side (logged with its cause); retried like a network error."""
    return _unanswered(
        claimed,
        started_at,
        "internal_error",
        "the attempt failed inside Pressroom; it will be retried",
    )


@dataclass(frozen=True)
class NextState:
    status: Literal["succeeded", "pending", "exhausted"]
    next_attempt_at: datetime | None


def next_state(result: AttemptResult, delays: Sequence[float], now: datetime) -> NextState:
    """Where the delivery goes after this attempt.

    Retryable failures of scheduled and test attempts wait for the next delay of the schedule
    (so `len(delays) + 1` attempts at most), lengthened by up to 20% jitter and by Retry-After
    (bounded). A replay attempt is never retried. A retry that would fall after the delivery's
    expiry cannot happen, so the delivery is exhausted instead."""
    if result.succeeded:
        return NextState("succeeded", None)
    claimed = result.claimed
    if not result.retryable or claimed.trigger == "replay" or claimed.number > len(delays):
        return NextState("exhausted", None)
    delay = delays[claimed.number - 1] * (1 + random.uniform(0, JITTER))
    if result.retry_after is not None:
        delay = max(delay, min(result.retry_after, MAX_RETRY_AFTER_SECONDS))
    at = now + timedelta(seconds=delay)
    if at >= claimed.expires_at:
        return NextState("exhausted", None)
    return NextState("pending", at)
