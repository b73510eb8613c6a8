"""Where the Threads API lives and how one request to it is sent.

Threads has its own Graph host and version path (https://developers.facebook.com/docs/threads/
reference: "graph.threads.com or graph.threads.net", every endpoint under `v1.0`), apart from
the Facebook Graph API and its version setting. The token travels as the `access_token`
parameter, as every Threads example sends it: in the query string of a GET or DELETE and in
the form body of a POST. It is never quoted in an error (`safe_detail` is given it) and
transport failures quote only the exception's type, never the URL.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from pressroom.providers.http import provider_request
from pressroom.providers.http import response_json
from pressroom.providers.threads.errors import PROVIDER
from pressroom.providers.threads.errors import classify

GRAPH = "https://graph.threads.net"
API = f"{GRAPH}/v1.0"


async def send(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    action: str,
    *,
    params: Mapping[str, str] | None = None,
    data: Mapping[str, str] | None = None,
) -> httpx.Response:
    """The answer to one request, whatever its status; raises only when none came."""
    return await provider_request(
        http, method, url, provider=PROVIDER, action=action, params=params, data=data
    )


def answer_json(
    response: httpx.Response, action: str, secrets: tuple[str | None, ...] = ()
) -> dict[str, object]:
    """The JSON object of a successful answer; a classified ProviderError otherwise."""
    if not response.is_success:
        raise classify(response, action, secrets)
    return response_json(response)
