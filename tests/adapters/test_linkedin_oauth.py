"""Connecting LinkedIn: the authorization URL, the code exchange (the member and each Page
administered becoming one account), and an operator's token."""

from __future__ import annotations

from urllib.parse import parse_qs
from urllib.parse import parse_qsl
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.linkedin import LinkedInConnector

from .linkedin_support import API
from .linkedin_support import APP
from .linkedin_support import NOW
from .linkedin_support import ORGANIZATION
from .linkedin_support import TOKEN
from .linkedin_support import VERSION
from .linkedin_support import clock
from .linkedin_support import linkedin_error

TOKEN_URL = "https://www.linkedin.com/oauth/v2/accessToken"
SCOPES = "openid profile w_member_social w_organization_social r_organization_social"


def connector() -> LinkedInConnector:
    return LinkedInConnector(version=VERSION, clock=clock)


def test_start_sends_the_person_to_linkedins_authorization_page() -> None:
    url = urlsplit(connector().start(APP, "state-123").url)
    assert (
        f"{url.scheme}://{url.netloc}{url.path}"
        == "https://www.linkedin.com/oauth/v2/authorization"
    )
    assert parse_qs(url.query) == {
        "response_type": ["code"],
        "client_id": ["li-client"],
        "redirect_uri": [APP.redirect_uri],
        "state": ["state-123"],
        "scope": [SCOPES],
    }


def member_route(network: respx.MockRouter) -> respx.Route:
    return network.get(f"{API}/v2/userinfo").mock(
        return_value=httpx.Response(200, json={"sub": "abc123XYZ", "name": "Ada Lovelace"})
    )


async def test_exchange_connects_the_member_and_each_administered_page(
    network: respx.MockRouter,
) -> None:
    token = network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": TOKEN,
                "expires_in": 5184000,
                "refresh_token": "AQX-r",
                "refresh_token_expires_in": 31536000,
                "scope": SCOPES.replace(" ", ","),
            },
        )
    )
    member_route(network)
    acls = network.get(f"{API}/rest/organizationAcls").mock(
        return_value=httpx.Response(
            200, json={"elements": [{"organization": ORGANIZATION, "role": "ADMINISTRATOR"}]}
        )
    )
    network.get(f"{API}/rest/organizations/2414183").mock(
        return_value=httpx.Response(
            200, json={"localizedName": "Pressroom", "vanityName": "pressroomhq"}
        )
    )
    async with httpx.AsyncClient() as http:
        accounts = await connector().exchange(APP, "code-1", {}, http)
    assert dict(parse_qsl(token.calls[0].request.content.decode())) == {
        "grant_type": "authorization_code",
        "code": "code-1",
        "redirect_uri": APP.redirect_uri,
        "client_id": "li-client",
        "client_secret": "li-secret",
    }
    assert dict(acls.calls[0].request.url.params) == {
        "q": "roleAssignee",
        "role": "ADMINISTRATOR",
        "state": "APPROVED",
        "count": "100",
    }
    assert acls.calls[0].request.headers["LinkedIn-Version"] == VERSION
    member, page = accounts
    assert member.credentials["author"] == "urn:li:person:abc123XYZ"
    assert member.handle == "Ada Lovelace"
    assert member.credentials["expiresAt"] == int(NOW) + 5184000
    assert member.credentials["refreshExpiresAt"] == int(NOW) + 31536000
    assert page.credentials["author"] == ORGANIZATION
    assert page.credentials["personId"] == "abc123XYZ"
    assert (page.handle, page.account_name) == ("pressroomhq", "Pressroom")


async def test_exchange_without_organization_scope_connects_only_the_member(
    network: respx.MockRouter,
) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            200,
            json={
                "access_token": TOKEN,
                "expires_in": 5184000,
                "scope": "openid,profile,w_member_social",
            },
        )
    )
    member_route(network)
    async with httpx.AsyncClient() as http:
        accounts = await connector().exchange(APP, "code-1", {}, http)
    assert [a.credentials["author"] for a in accounts] == ["urn:li:person:abc123XYZ"]


async def test_a_refused_code_is_auth_expired_in_linkedins_words(network: respx.MockRouter) -> None:
    network.post(TOKEN_URL).mock(
        return_value=httpx.Response(
            400,
            json={
                "error": "invalid_request",
                "error_description": "Unable to retrieve access token",
            },
        )
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as raised:
            await connector().exchange(APP, "code-1", {}, http)
    assert raised.value.code == "auth_expired"
    assert "Unable to retrieve access token" in raised.value.message


async def test_from_token_verifies_it_and_takes_a_refused_page_lookup_as_none(
    network: respx.MockRouter,
) -> None:
    member = member_route(network)
    network.get(f"{API}/rest/organizationAcls").mock(
        return_value=linkedin_error(403, "ACCESS_DENIED", "Not enough permissions")
    )
    async with httpx.AsyncClient() as http:
        accounts = await connector().from_token(None, f" {TOKEN} ", http)
    assert member.calls[0].request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert [a.credentials for a in accounts] == [
        {"accessToken": TOKEN, "personId": "abc123XYZ", "author": "urn:li:person:abc123XYZ"}
    ]


async def test_from_token_refused_by_linkedin_stores_nothing(network: respx.MockRouter) -> None:
    network.get(f"{API}/v2/userinfo").mock(
        return_value=linkedin_error(401, "INVALID_ACCESS_TOKEN", "Invalid access token")
    )
    async with httpx.AsyncClient() as http:
        with pytest.raises(ProviderError) as raised:
            await connector().from_token(None, TOKEN, http)
    assert raised.value.code == "auth_expired"
