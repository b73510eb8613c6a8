"""LinkedIn's token endpoint: codes and refresh tokens traded for access tokens.

`POST https://www.linkedin.com/oauth/v2/accessToken`, a urlencoded form with the app's
`client_id` and `client_secret` (https://learn.microsoft.com/en-us/linkedin/shared/authentication/
authorization-code-flow). The answer: `access_token`, `expires_in` (60 days), `scope`, and for
apps approved for programmatic refresh tokens `refresh_token` and `refresh_token_expires_in`
(a year, counted from the first grant: refreshing does not extend it;
.../shared/authentication/programmatic-refresh-tokens).
"""

from __future__ import annotations

from pressroom.providers.linkedin.errors import PROVIDER
from pressroom.providers.token_endpoint import TokenEndpoint

TOKEN_URL = "https://www.linkedin.com/oauth/v2/accessToken"
TOKEN_ENDPOINT = TokenEndpoint(TOKEN_URL, PROVIDER, PROVIDER)
