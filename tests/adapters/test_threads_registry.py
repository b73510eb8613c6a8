"""Threads in the registry: configured exactly when its app is, connected through its
connector, published through its adapter on the runtime's shared client."""

from __future__ import annotations

import uuid

from pydantic import SecretStr

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.providers.threads import CONNECTOR
from pressroom.providers.threads import ThreadsAdapter
from pressroom.runtime import Runtime


def test_threads_is_configured_exactly_when_its_app_id_and_secret_are_set(
    settings: Settings,
) -> None:
    assert CONNECTORS["threads"] is CONNECTOR
    assert "threads" not in configured_providers(settings)
    only_id = settings.model_copy(update={"threads_client_id": "990602627938098"})
    assert "threads" not in configured_providers(only_id)
    both = only_id.model_copy(update={"threads_client_secret": SecretStr("threads-secret")})
    assert "threads" in configured_providers(both)


async def test_a_threads_channel_gets_the_threads_adapter_on_the_shared_client(
    runtime: Runtime,
) -> None:
    context = ChannelContext(uuid.uuid4(), uuid.uuid4(), "threads", "@pressroom", False, {})
    adapter = adapter_for(context, runtime)
    assert isinstance(adapter, ThreadsAdapter)
    assert adapter._http is runtime.provider_http
