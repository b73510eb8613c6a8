"""LinkedIn channels get the LinkedIn adapter, built on the deployment's settings, and LinkedIn
is configured exactly when its app is."""

from __future__ import annotations

import uuid

from pydantic import SecretStr

from pressroom.channels.adapters import adapter_for
from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.linkedin import CONNECTOR
from pressroom.providers.linkedin import LinkedInAdapter
from pressroom.providers.registry import CONNECTORS
from pressroom.providers.registry import configured_providers
from pressroom.runtime import Runtime


async def test_linkedin_channels_get_the_adapter_with_the_version_and_app(
    settings: Settings,
) -> None:
    runtime = Runtime.build(
        settings.model_copy(
            update={
                "linkedin_version": "202607",
                "linkedin_client_id": "li-app",
                "linkedin_client_secret": SecretStr("li-secret"),
            }
        )
    )
    try:
        channel = ChannelContext(uuid.uuid4(), uuid.uuid4(), "linkedin", None, False, {})
        adapter = adapter_for(channel, runtime)
        assert isinstance(adapter, LinkedInAdapter)
        assert adapter._http is runtime.provider_http
        assert adapter.version == "202607"
        assert adapter._app is not None and adapter._app.client_id == "li-app"
    finally:
        await runtime.close()


def test_linkedin_is_configured_exactly_when_its_app_id_and_secret_are_set(
    settings: Settings,
) -> None:
    assert CONNECTORS["linkedin"] is CONNECTOR
    assert "linkedin" not in configured_providers(settings)
    only_id = settings.model_copy(update={"linkedin_client_id": "li-app"})
    assert "linkedin" not in configured_providers(only_id)
    both = only_id.model_copy(update={"linkedin_client_secret": SecretStr("li-secret")})
    assert "linkedin" in configured_providers(both)
