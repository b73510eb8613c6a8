"""What an attempt's outcome means: classification of answers, the retry schedule with its
jitter, Retry-After (honoured, bounded), the attempt cap, replays and expiry."""

from __future__ import annotations

import email.utils
import uuid
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest

from pressroom.webhooks.attempt import JITTER
from pressroom.webhooks.attempt import MAX_RETRY_AFTER_SECONDS
from pressroom.webhooks.attempt import AttemptResult
from pressroom.webhooks.attempt import ClaimedDelivery
from pressroom.webhooks.attempt import classify_status
from pressroom.webhooks.attempt import next_state
from pressroom.webhooks.attempt import parse_retry_after
from pressroom.webhooks.worker import DeliveryWorker

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DEFAULT_DELAYS = (5.0, 60.0, 300.0, 1800.0, 7200.0, 18000.0, 36000.0)


def claimed(
    number: int = 1, trigger: str = "scheduled", expires_in: timedelta = timedelta(hours=72)
) -> ClaimedDelivery:
    return ClaimedDelivery(
        delivery_id=uuid.uuid4(),
        endpoint_id=uuid.uuid4(),
        event_id=uuid.uuid4(),
        number=number,
        trigger=trigger,
        expires_at=NOW + expires_in,
        lease_owner="test:1",
        url="https://hooks.example.com/hook",
        body=b"{}",
        secret_encrypted="ciphertext",
        previous_secret_encrypted=None,
        previous_expires_at=None,
    )


def failure(
    delivery: ClaimedDelivery, *, retryable: bool = True, retry_after: float | None = None
) -> AttemptResult:
    return AttemptResult(
        delivery, NOW, 503, 10, "http_error", "the endpoint answered 503", retryable, retry_after
    )


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_2xx_succeeds(status: int) -> None:
    result = classify_status(claimed(), NOW, status, 12, None)
    assert result.succeeded
    assert result.response_status == status
    assert next_state(result, DEFAULT_DELAYS, NOW).status == "succeeded"


@pytest.mark.parametrize("status", [408, 425, 429, 500, 502, 503, 504, 599])
def test_408_425_429_and_5xx_are_retried(status: int) -> None:
    result = classify_status(claimed(), NOW, status, 12, None)
    assert (result.error_code, result.retryable, result.response_status) == (
        "http_error",
        True,
        status,
    )
    assert next_state(result, DEFAULT_DELAYS, NOW).status == "pending"


@pytest.mark.parametrize("status", [300, 301, 302, 303, 307, 308])
def test_3xx_is_a_final_redirect_failure_with_its_status(status: int) -> None:
    result = classify_status(claimed(), NOW, status, 12, "60")
    assert (result.error_code, result.retryable, result.response_status) == (
        "redirect",
        False,
        status,
    )
    assert next_state(result, DEFAULT_DELAYS, NOW).status == "exhausted"


@pytest.mark.parametrize("status", [100, 400, 401, 403, 404, 405, 409, 410, 413, 422, 451])
def test_other_statuses_end_the_delivery_at_once(status: int) -> None:
    result = classify_status(claimed(), NOW, status, 12, "5")
    assert (result.error_code, result.retryable) == ("http_error", False)
    assert result.retry_after is None
    state = next_state(result, DEFAULT_DELAYS, NOW)
    assert (state.status, state.next_attempt_at) == ("exhausted", None)


@pytest.mark.parametrize("number", range(1, 8))
def test_each_retry_waits_its_scheduled_delay_plus_at_most_20_percent(number: int) -> None:
    delay = DEFAULT_DELAYS[number - 1]
    waits = set()
    for _ in range(200):
        state = next_state(failure(claimed(number)), DEFAULT_DELAYS, NOW)
        assert state.status == "pending"
        assert state.next_attempt_at is not None
        wait = (state.next_attempt_at - NOW).total_seconds()
        assert delay <= wait <= delay * (1 + JITTER) + 1e-6
        waits.add(wait)
    # Jitter: retries of deliveries that failed together do not all come back at once.
    assert len(waits) > 100


def test_the_default_schedule_allows_eight_attempts() -> None:
    assert next_state(failure(claimed(7)), DEFAULT_DELAYS, NOW).status == "pending"
    state = next_state(failure(claimed(8)), DEFAULT_DELAYS, NOW)
    assert (state.status, state.next_attempt_at) == ("exhausted", None)


def test_retry_after_longer_than_the_schedule_is_honoured() -> None:
    state = next_state(failure(claimed(1), retry_after=120.0), DEFAULT_DELAYS, NOW)
    assert state.next_attempt_at == NOW + timedelta(seconds=120)


def test_retry_after_shorter_than_the_schedule_does_not_shorten_it() -> None:
    state = next_state(failure(claimed(3), retry_after=1.0), DEFAULT_DELAYS, NOW)
    assert state.next_attempt_at is not None
    assert (state.next_attempt_at - NOW).total_seconds() >= 300


@pytest.mark.parametrize("retry_after", [3601.0, 86400.0, 10.0**9])
def test_retry_after_is_bounded_to_an_hour(retry_after: float) -> None:
    state = next_state(failure(claimed(1), retry_after=retry_after), DEFAULT_DELAYS, NOW)
    assert state.next_attempt_at == NOW + timedelta(seconds=MAX_RETRY_AFTER_SECONDS)
    assert MAX_RETRY_AFTER_SECONDS == 3600


def test_a_retry_that_would_fall_after_expiry_ends_the_delivery() -> None:
    soon = claimed(4, expires_in=timedelta(minutes=10))  # the next delay is 30 minutes
    state = next_state(failure(soon), DEFAULT_DELAYS, NOW)
    assert (state.status, state.next_attempt_at) == ("exhausted", None)


def test_a_failed_replay_attempt_is_not_retried() -> None:
    state = next_state(failure(claimed(2, trigger="replay")), DEFAULT_DELAYS, NOW)
    assert (state.status, state.next_attempt_at) == ("exhausted", None)


def test_a_failed_test_attempt_is_retried_like_any_other() -> None:
    assert next_state(failure(claimed(1, trigger="test")), DEFAULT_DELAYS, NOW).status == "pending"


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 7 ", 7.0),
        ("0", 0.0),
        (email.utils.format_datetime(NOW + timedelta(minutes=2), usegmt=True), 120.0),
        (email.utils.format_datetime(NOW - timedelta(minutes=2), usegmt=True), 0.0),
        (None, None),
        ("soon", None),
        ("-5", None),
        ("1.5", None),
    ],
)
def test_retry_after_is_delta_seconds_or_an_http_date(
    header: str | None, seconds: float | None
) -> None:
    assert parse_retry_after(header, NOW) == seconds


def test_retry_after_is_read_only_from_retryable_answers() -> None:
    assert classify_status(claimed(), NOW, 503, 5, "30").retry_after == 30.0
    assert classify_status(claimed(), NOW, 429, 5, "30").retry_after == 30.0
    assert classify_status(claimed(), NOW, 400, 5, "30").retry_after is None


@pytest.mark.parametrize(("in_flight", "held"), [(8, 32), (1, 32), (4, 6), (8, 8)])
@pytest.mark.parametrize("timeout", [1.0, 10.0, 30.0])
def test_lease_outlasts_every_held_delivery_of_a_slow_endpoint(
    in_flight: int, held: int, timeout: float
) -> None:
    """An endpoint that takes the whole timeout on every attempt: the last delivery the worker
    holds for it starts after the others, `in_flight` at a time, and must still be recorded
    under its lease (else it is taken over and sent a second time)."""
    worker = DeliveryWorker(in_flight_per_endpoint=in_flight, held_per_endpoint=held)
    rounds = -(-held // in_flight)
    worst_case = rounds * timeout
    assert worker.lease(timeout).total_seconds() >= worst_case + 5
