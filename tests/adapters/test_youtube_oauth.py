"""Connecting a YouTube channel through Google OAuth 2.0 for web server applications
(developers.google.com/youtube/v3/guides/auth/server-side-web-apps: the authorization URL's
parameters, POST oauth2.googleapis.com/token, tokeninfo) and channels.list?mine=true."""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import parse_qs
from urllib.parse import parse_qsl
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.youtube import YouTubeConnector

from .youtube_support import ACCESS_TOKEN
from .youtube_support import API
from .youtube_support import APP
from .youtube_support import CHANNEL_ID
from .youtube_support import NOW
from .youtube_support import REFRESH_TOKEN
from .youtube_support import TOKEN_URL

SCOPES = (
    "https://www.googleapis.com/auth/youtube.upload "
    "https://www.googleapis.com/auth/youtube.force-ssl"
)
CHANNEL = {
    "items": [
        {
            "id": CHANNEL_ID,
            "snippet": {"title": "Pressroom HQ", "customUrl": "@pressroomhq"},
        }
    ]
}


@pytest.fixture
def connector() -> YouTubeConnector:
    return YouTubeConnector(clock=lambda: float(NOW))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def form(route: respx.Route, call: int = 0) -> dict[str, str]:
    return dict(parse_qsl(route.calls[call].request.content.decode()))


def test_authorization_url_asks_for_offline_access_and_the_youtube_scopes(
    connector: YouTubeConnector,
) -> None:
    url = urlsplit(connector.start(APP, "state-123").url)
    assert (
        f"{url.scheme}://{url.netloc}{url.path}" == "https://accounts.google.com/o/oauth2/v2/auth"
    )
    assert {key: values[0] for key, values in parse_qs(url.query).items()} == {
        "client_id": APP.client_id,
        "redirect_uri": APP.redirect_uri,
        "response_type": "code",
        "scope": SCOPES,
        "state": "state-123",
        "access_type": "offline",
        "prompt": "consent",
    }


async def test_the_code_is_exchanged_and_the_channel_read(
    network: respx.MockRouter, connector: YouTubeConnector, http: httpx.AsyncClient
) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": ACCESS_TOKEN,
                "expires_in": 3599,
                "refresh_token": REFRESH_TOKEN,
                "scope": SCOPES,
                "token_type": "Bearer",
            },
        )
    )
    channels = network.get(f"{API}/channels").mock(return_value=httpx.Response(200, json=CHANNEL))
    [account] = await connector.exchange(APP, "4/code", {}, http)
    assert form(token) == {
        "grant_type": "authorization_code",
        "code": "4/code",
        "redirect_uri": APP.redirect_uri,
        "client_id": APP.client_id,
        "client_secret": APP.client_secret,
    }
    assert dict(channels.calls[0].request.url.params) == {"part": "snippet", "mine": "true"}
    assert channels.calls[0].request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    assert account.credentials == {
        "accessToken": ACCESS_TOKEN,
        "refreshToken": REFRESH_TOKEN,
        "expiresAt": NOW + 3599,
        "scope": SCOPES,
        "channelId": CHANNEL_ID,
        "channelTitle": "Pressroom HQ",
    }
    assert (account.handle, account.account_name) == ("@pressroomhq", "Pressroom HQ")


async def test_a_refused_code_is_auth_expired_in_googles_words(
    network: respx.MockRouter, connector: YouTubeConnector, http: httpx.AsyncClient
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400, json={"error": "invalid_grant", "error_description": "Malformed auth code."}
        )
    )
    with pytest.raises(ProviderError) as failed:
        await connector.exchange(APP, "4/code", {}, http)
    assert failed.value.code == "auth_expired"
    assert "Malformed auth code." in failed.value.message


async def test_an_account_without_a_channel_is_permission_denied(
    network: respx.MockRouter, connector: YouTubeConnector, http: httpx.AsyncClient
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(200, json={"access_token": ACCESS_TOKEN, "expires_in": 3599})
    )
    network.get(f"{API}/channels").mock(return_value=httpx.Response(200, json={"items": []}))
    with pytest.raises(ProviderError) as failed:
        await connector.exchange(APP, "4/code", {}, http)
    assert failed.value.code == "permission_denied"


async def test_from_token_takes_a_refresh_token(
    network: respx.MockRouter, connector: YouTubeConnector, http: httpx.AsyncClient
) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(200, json={"access_token": ACCESS_TOKEN, "expires_in": 3599})
    )
    network.get(f"{API}/channels").mock(return_value=httpx.Response(200, json=CHANNEL))
    [account] = await connector.from_token(APP, f" {REFRESH_TOKEN} ", http)
    assert form(token)["grant_type"] == "refresh_token"
    assert form(token)["refresh_token"] == REFRESH_TOKEN
    assert account.credentials["refreshToken"] == REFRESH_TOKEN
    assert account.credentials["expiresAt"] == NOW + 3599


async def test_from_token_takes_an_access_token_checked_with_tokeninfo(
    network: respx.MockRouter, connector: YouTubeConnector, http: httpx.AsyncClient
) -> None:
    info = network.get("https://oauth2.googleapis.com/tokeninfo").mock(
        return_value=httpx.Response(200, json={"expires_in": "1200", "scope": SCOPES})
    )
    network.get(f"{API}/channels").mock(return_value=httpx.Response(200, json=CHANNEL))
    [account] = await connector.from_token(None, ACCESS_TOKEN, http)
    assert dict(info.calls[0].request.url.params) == {"access_token": ACCESS_TOKEN}
    assert account.credentials == {
        "accessToken": ACCESS_TOKEN,
        "expiresAt": NOW + 1200,
        "scope": SCOPES,
        "channelId": CHANNEL_ID,
        "channelTitle": "Pressroom HQ",
    }


async def test_from_token_refuses_a_token_google_does_not_know(
    network: respx.MockRouter, connector: YouTubeConnector, http: httpx.AsyncClient
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400, json={"error": "invalid_grant", "error_description": "Bad Request"}
        )
    )
    network.get("https://oauth2.googleapis.com/tokeninfo").mock(
        return_value=httpx.Response(400, json={"error_description": "Invalid Value"})
    )
    with pytest.raises(ProviderError) as failed:
        await connector.from_token(APP, "garbage", http)
    assert failed.value.code == "auth_expired"
    assert "Invalid Value" in failed.value.message
