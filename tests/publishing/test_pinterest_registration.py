"""Pinterest channels get the Pinterest adapter, built on the deployment's settings, and
Pinterest is configured exactly when its app is."""

from __future__ import annotations

import uuid

from pydantic import SecretStr

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.pinterest import CONNECTOR
from pressroom.providers.pinterest import PinterestAdapter
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime


def pinterest_channel() -> ChannelContext:
    return ChannelContext(uuid.uuid4(), uuid.uuid4(), "pinterest", None, False, {})


async def test_pinterest_channels_get_the_adapter_on_the_shared_client_with_the_app(
    settings: Settings,
) -> None:
    runtime = Runtime.build(
        settings.model_copy(
            update={
                "pinterest_client_id": "pin-app",
                "pinterest_client_secret": SecretStr("pin-secret"),
            }
        )
    )
    try:
        adapter = adapter_for(pinterest_channel(), runtime)
        assert isinstance(adapter, PinterestAdapter)
        assert adapter._http is runtime.provider_http
        assert adapter._app is not None and adapter._app.client_id == "pin-app"
        assert adapter._app.redirect_uri.endswith("/connect/pinterest/callback")
    finally:
        await runtime.close()


def test_pinterest_is_configured_exactly_when_its_app_id_and_secret_are_set(
    settings: Settings,
) -> None:
    assert CONNECTORS["pinterest"] is CONNECTOR
    assert "pinterest" not in configured_providers(settings)
    only_id = settings.model_copy(update={"pinterest_client_id": "pin-app"})
    assert "pinterest" not in configured_providers(only_id)
    both = only_id.model_copy(update={"pinterest_client_secret": SecretStr("pin-secret")})
    assert "pinterest" in configured_providers(both)
