"""TikTok in the registry: configured exactly when its app is, connected through its connector,
published through its adapter on the runtime's shared client with the deployment's settings."""

from __future__ import annotations

import uuid

from pydantic import SecretStr

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.providers.tiktok import CONNECTOR
from pressroom.providers.tiktok import TikTokAdapter
from pressroom.runtime import Runtime


def test_tiktok_is_configured_exactly_when_its_client_key_and_secret_are_set(
    settings: Settings,
) -> None:
    assert CONNECTORS["tiktok"] is CONNECTOR
    assert "tiktok" not in configured_providers(settings)
    only_key = settings.model_copy(update={"tiktok_client_id": "awx4bq7tk1example"})
    assert "tiktok" not in configured_providers(only_key)
    both = only_key.model_copy(update={"tiktok_client_secret": SecretStr("tiktok-secret")})
    assert "tiktok" in configured_providers(both)


def test_tiktok_deployments_are_unaudited_and_upload_files_by_default(settings: Settings) -> None:
    assert settings.tiktok_audited is False
    assert settings.tiktok_pull_from_url is False


async def test_a_tiktok_channel_gets_the_tiktok_adapter_on_the_shared_client(
    runtime: Runtime,
) -> None:
    context = ChannelContext(uuid.uuid4(), uuid.uuid4(), "tiktok", "@pressroom", False, {})
    adapter = adapter_for(context, runtime)
    assert isinstance(adapter, TikTokAdapter)
    assert adapter._http is runtime.provider_http
