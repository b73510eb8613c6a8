"""Connecting LinkedIn accounts through 3-legged OAuth 2.0: the member, and every Page
(organization) the member administers, each become one channel.

1. `start`: `https://www.linkedin.com/oauth/v2/authorization?response_type=code&client_id
   &redirect_uri&state&scope=...` (https://learn.microsoft.com/en-us/linkedin/shared/
   authentication/authorization-code-flow). Scopes: `openid profile` (the member's id from
   `/v2/userinfo`, Sign In with LinkedIn using OpenID Connect), `w_member_social` (post, comment
   and delete as the member), `w_organization_social` and `r_organization_social` (post as the
   Pages the member administers and read their posts' statistics; Community Management API).
2. `exchange`: the code for tokens (tokens.py), then the member (`GET /v2/userinfo`: `sub`,
   `name`) and, when the grant holds `w_organization_social`, the organizations the member is an
   approved ADMINISTRATOR of (`GET /rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR
   &state=APPROVED`), each named by `GET /rest/organizations/{id}` (`localizedName`,
   `vanityName`). One grant, one token: every channel it makes holds the same tokens and its own
   `author` URN.
3. `from_token`: an operator's existing token, checked with `/v2/userinfo` before anything is
   stored; its Pages are listed as above unless LinkedIn refuses the lookup (a token without the
   organization scopes), in which case only the member is connected.

Credentials: `accessToken`, `expiresAt`, `refreshToken` and `refreshExpiresAt` (when granted),
`scope`, `author` (`urn:li:person:{sub}` or `urn:li:organization:{id}`), `personId`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import httpx

from pressroom.providers.adapter import ProviderError
from pressroom.providers.connection import CodeFlowConnector
from pressroom.providers.connection import ConnectedAccount
from pressroom.providers.connection import OAuthApp
from pressroom.providers.connection import api_version
from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.linkedin.errors import PROVIDER
from pressroom.providers.linkedin.errors import classify
from pressroom.providers.linkedin.session import API
from pressroom.providers.linkedin.session import DEFAULT_VERSION
from pressroom.providers.linkedin.tokens import TOKEN_ENDPOINT

AUTHORIZE_URL = "https://www.linkedin.com/oauth/v2/authorization"
SCOPES = ("openid", "profile", "w_member_social", "w_organization_social", "r_organization_social")
ORGANIZATION_SCOPE = "w_organization_social"
# Pages listed per grant: enough for any real administrator, bounded for one callback.
MAX_ORGANIZATIONS = 100


class LinkedInConnector(CodeFlowConnector):
    """The `OAuthConnector` of LinkedIn (registry.CONNECTORS)."""

    provider = "linkedin"
    authorize_url = AUTHORIZE_URL
    scopes = SCOPES
    scope_separator = " "

    def __init__(
        self, *, version: str = DEFAULT_VERSION, clock: Callable[[], float] = time.time
    ) -> None:
        super().__init__(clock=clock)
        self.version = version

    async def exchange(
        self, app: OAuthApp, code: str, kept: Mapping[str, str], http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        tokens = await TOKEN_ENDPOINT.code_grant(http, app, code, app.redirect_uri, self._clock)
        scopes = str(tokens.get("scope", "")).replace(",", " ").split()
        version = api_version(app, self.version)
        return await self._accounts(
            http, tokens, organizations=ORGANIZATION_SCOPE in scopes, version=version
        )

    async def from_token(
        self, app: OAuthApp | None, token: str, http: httpx.AsyncClient
    ) -> list[ConnectedAccount]:
        tokens = {"accessToken": token.strip()}
        return await self._accounts(
            http, tokens, organizations=None, version=api_version(app, self.version)
        )

    async def _accounts(
        self,
        http: httpx.AsyncClient,
        tokens: dict[str, Any],
        *,
        organizations: bool | None,
        version: str,
    ) -> list[ConnectedAccount]:
        """The member, then the Pages: `organizations` None means "try, and take a refusal as
        none" (a token whose scopes are unknown)."""
        token = str(tokens["accessToken"])
        member = await _get(http, token, version, "/v2/userinfo", "reading the member")
        person_id = member.get("sub")
        if not isinstance(person_id, str) or not person_id:
            raise ProviderError("provider_unavailable", "LinkedIn answered without a member id.")
        base = {**tokens, "personId": person_id}
        name = member.get("name") if isinstance(member.get("name"), str) else None
        accounts = [ConnectedAccount({**base, "author": f"urn:li:person:{person_id}"}, name, name)]
        if organizations is False:
            return accounts
        try:
            accounts += await _organizations(http, token, version, base)
        except ProviderError as error:
            if organizations or error.code != "permission_denied":
                raise
        return accounts


async def _organizations(
    http: httpx.AsyncClient, token: str, version: str, base: dict[str, Any]
) -> list[ConnectedAccount]:
    acls = await _get(
        http,
        token,
        version,
        "/rest/organizationAcls",
        "listing the Pages the member administers",
        params={
            "q": "roleAssignee",
            "role": "ADMINISTRATOR",
            "state": "APPROVED",
            "count": str(MAX_ORGANIZATIONS),
        },
    )
    elements = acls.get("elements")
    accounts = []
    for acl in elements if isinstance(elements, list) else []:
        urn = acl.get("organization") if isinstance(acl, dict) else None
        if not isinstance(urn, str) or not urn.startswith("urn:li:organization:"):
            continue
        path = f"/rest/organizations/{urn.rsplit(':', 1)[1]}"
        page = await _get(http, token, version, path, "reading a Page")
        name = page.get("localizedName") if isinstance(page.get("localizedName"), str) else None
        vanity = page.get("vanityName") if isinstance(page.get("vanityName"), str) else None
        accounts.append(ConnectedAccount({**base, "author": urn}, vanity or name, name or urn))
    return accounts


async def _get(
    http: httpx.AsyncClient,
    token: str,
    version: str,
    path: str,
    action: str,
    *,
    params: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    response = await provider_request(
        http,
        "GET",
        API + path,
        provider=PROVIDER,
        action=action,
        bearer=token,
        headers={"LinkedIn-Version": version, "X-Restli-Protocol-Version": "2.0.0"},
        params=params,
    )
    if not response.is_success:
        raise classify(response, action, version=version, secrets=(token,))
    return response_json(response)


CONNECTOR = LinkedInConnector()
