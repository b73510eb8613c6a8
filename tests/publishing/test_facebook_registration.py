"""Facebook channels get the Facebook adapter, built on the deployment's settings, and Facebook
is configured exactly when its app is."""

from __future__ import annotations

import uuid

from pydantic import SecretStr

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.facebook import CONNECTOR
from pressroom.providers.facebook import FacebookAdapter
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime


def facebook_channel() -> ChannelContext:
    return ChannelContext(uuid.uuid4(), uuid.uuid4(), "facebook", None, False, {})


async def test_facebook_channels_get_the_adapter_on_the_shared_client_and_graph_version(
    settings: Settings,
) -> None:
    runtime = Runtime.build(
        settings.model_copy(
            update={
                "meta_graph_version": "v25.0",
                "facebook_client_id": "fb-app",
                "facebook_client_secret": SecretStr("fb-secret"),
            }
        )
    )
    try:
        adapter = adapter_for(facebook_channel(), runtime)
        assert isinstance(adapter, FacebookAdapter)
        assert adapter._http is runtime.provider_http
        assert adapter._graph.version == "v25.0"
    finally:
        await runtime.close()


def test_facebook_is_configured_exactly_when_its_app_id_and_secret_are_set(
    settings: Settings,
) -> None:
    assert CONNECTORS["facebook"] is CONNECTOR
    assert "facebook" not in configured_providers(settings)
    only_id = settings.model_copy(update={"facebook_client_id": "fb-app"})
    assert "facebook" not in configured_providers(only_id)
    both = only_id.model_copy(update={"facebook_client_secret": SecretStr("fb-secret")})
    assert "facebook" in configured_providers(both)
