"""Connectors of versioned APIs call them at the deployment's configured version: `oauth_app`
carries the setting (`meta_graph_version`, `linkedin_version`) in `OAuthApp.api_version`."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

import httpx
import respx
from pydantic import SecretStr

from pressroom.config import Settings
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import oauth_app
from pressroom.providers.facebook import FacebookConnector
from pressroom.providers.instagram import InstagramConnector
from pressroom.providers.linkedin import LinkedInConnector

from .linkedin_support import API as LINKEDIN_API

APP = OAuthApp(
    provider="facebook",
    client_id="1234567890",
    client_secret="app-secret-xyz",
    redirect_uri="https://pressroom.example/connect/facebook/callback",
)


def configured(settings: Settings, provider: str, **changes: object) -> OAuthApp:
    ready = settings.model_copy(
        update={
            f"{provider}_client_id": "client-1",
            f"{provider}_client_secret": SecretStr("s3cret"),
            **changes,
        }
    )
    app = oauth_app(ready, provider)
    assert app is not None
    return app


def test_oauth_app_carries_each_providers_version_setting(settings: Settings) -> None:
    assert configured(settings, "facebook", meta_graph_version="v25.0").api_version == "v25.0"
    assert configured(settings, "instagram", meta_graph_version="v25.0").api_version == "v25.0"
    assert configured(settings, "linkedin", linkedin_version="202612").api_version == "202612"
    assert configured(settings, "youtube").api_version is None


def test_facebook_connector_uses_the_configured_graph_version() -> None:
    start = FacebookConnector().start(replace(APP, api_version="v25.0"), "state-1")
    assert urlsplit(start.url).path == "/v25.0/dialog/oauth"
    assert urlsplit(FacebookConnector().start(APP, "state-1").url).path == "/v24.0/dialog/oauth"


async def test_facebook_token_is_verified_at_the_configured_graph_version(
    network: respx.MockRouter,
) -> None:
    accounts = network.get("https://graph.facebook.com/v25.0/me/accounts").respond(
        200, json={"data": [{"id": "111", "name": "News", "access_token": "EAAPage-111"}]}
    )
    network.get("https://graph.facebook.com/v25.0/oauth/access_token").respond(
        200, json={"access_token": "EAAUser-long", "expires_in": 5183944}
    )
    async with httpx.AsyncClient() as http:
        connected = await FacebookConnector(clock=lambda: 1_800_000_000.0).from_token(
            replace(APP, api_version="v25.0"), "EAAUser-short", http
        )
    assert accounts.called
    assert [account.credentials["pageId"] for account in connected] == ["111"]


async def test_instagram_account_is_read_at_the_configured_graph_version(
    network: respx.MockRouter,
) -> None:
    me = network.get("https://graph.instagram.com/v25.0/me").respond(
        200, json={"user_id": "17841405822304914", "username": "pressroom", "id": "7214"}
    )
    network.get("https://graph.instagram.com/refresh_access_token").respond(
        200, json={"access_token": "IGAA-long-2", "token_type": "bearer", "expires_in": 5183944}
    )
    app = replace(APP, provider="instagram", api_version="v25.0")
    async with httpx.AsyncClient() as http:
        accounts = await InstagramConnector(clock=lambda: 1_800_000_000.0).from_token(
            app, "IGAA-operator", http
        )
    assert me.called
    assert accounts[0].credentials["userId"] == "17841405822304914"


async def test_linkedin_calls_carry_the_configured_version(network: respx.MockRouter) -> None:
    member = network.get(f"{LINKEDIN_API}/v2/userinfo").respond(
        200, json={"sub": "abc123XYZ", "name": "Ada"}
    )
    network.get(f"{LINKEDIN_API}/rest/organizationAcls").respond(200, json={"elements": []})
    app = replace(APP, provider="linkedin", api_version="202612")
    async with httpx.AsyncClient() as http:
        await LinkedInConnector().from_token(app, "AQV-token", http)
    assert member.calls[0].request.headers["LinkedIn-Version"] == "202612"
