"""YouTube channels get the YouTube adapter, built on the deployment's app, and YouTube is
configured exactly when its app is."""

from __future__ import annotations

import uuid

from pydantic import SecretStr

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.providers.youtube import CONNECTOR
from pressroom.providers.youtube import YouTubeAdapter
from pressroom.runtime import Runtime


async def test_youtube_channels_get_the_adapter_with_the_app_on_the_shared_client(
    settings: Settings,
) -> None:
    runtime = Runtime.build(
        settings.model_copy(
            update={
                "youtube_client_id": "yt-app",
                "youtube_client_secret": SecretStr("yt-secret"),
            }
        )
    )
    try:
        channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "youtube", None, False, {})
        adapter = adapter_for(channel, runtime)
        assert isinstance(adapter, YouTubeAdapter)
        assert adapter._http is runtime.provider_http
        assert adapter._app is not None and adapter._app.client_id == "yt-app"
        assert adapter._app.redirect_uri.endswith("/connect/youtube/callback")
    finally:
        await runtime.close()


def test_youtube_is_configured_exactly_when_its_app_id_and_secret_are_set(
    settings: Settings,
) -> None:
    assert CONNECTORS["youtube"] is CONNECTOR
    assert "youtube" not in configured_providers(settings)
    only_id = settings.model_copy(update={"youtube_client_id": "yt-app"})
    assert "youtube" not in configured_providers(only_id)
    both = only_id.model_copy(update={"youtube_client_secret": SecretStr("yt-secret")})
    assert "youtube" in configured_providers(both)
