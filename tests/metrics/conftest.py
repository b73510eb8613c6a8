"""Metrics fixtures: an application with /metrics on (and a scrape token), deliveries routed
to a real TLS receiver on loopback, and fast publisher retries."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from pressroom.config import Settings
from tests.webhooks.conftest import receiver
from tests.webhooks.conftest import shared_receiver
from tests.webhooks.receiver import WebhookReceiver

# The webhook tests' loopback TLS receiver (one per session for this directory too).
__all__ = ["receiver", "shared_receiver"]

METRICS_TOKEN = "scrape-token-0123456789abcdef"


@pytest.fixture
def settings(settings: Settings, shared_receiver: WebhookReceiver) -> Settings:
    """The suite's settings, with metrics on and deliveries routed to the receiver."""
    return settings.model_copy(
        update={
            "webhook_resolve": shared_receiver.resolve_setting,
            "webhook_ca_bundle": shared_receiver.ca_bundle_path,
            "webhook_retry_schedule": "0.05",
            "publisher_retry_schedule": "0.05",
            "metrics": True,
            "metrics_token": SecretStr(METRICS_TOKEN),
            "metrics_cache_seconds": 0,
        }
    )
