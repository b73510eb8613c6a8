"""Where the Threads API lives, how a request to it carries the token, and how its answer is
read.

Threads has its own Graph host and version path (https://developers.facebook.com/docs/threads/
reference: "graph.threads.com or graph.threads.net", every endpoint under `v1.0`), apart from
the Facebook Graph API and its version setting. The token travels as the `access_token`
parameter, as every Threads example sends it: in the query string of a GET or DELETE and in
the form body of a POST. It is never quoted in an error (`safe_detail` is given it), and
requests go through `provider_request`, whose transport failures quote only the exception's
type, never the URL.
"""

from __future__ import annotations

import httpx

from pressroom.providers.http import response_json
from pressroom.providers.threads.errors import classify

GRAPH = "https://graph.threads.net"
API = f"{GRAPH}/v1.0"


def answer_json(
    response: httpx.Response, action: str, secrets: tuple[str | None, ...] = ()
) -> dict[str, object]:
    """The JSON object of a successful answer; a classified ProviderError otherwise."""
    if not response.is_success:
        raise classify(response, action, secrets)
    return response_json(response)
