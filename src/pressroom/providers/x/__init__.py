"""X (API v2) adapter and its OAuth 2.0 PKCE helper.

Build with `XAdapter(app=XApp(client_id, client_secret), read_media=...,
on_credentials_changed=...)`. Connect a channel through `oauth.start_authorization` and
`oauth.exchange_code` (the `/connect/x` start and callback routes), or with tokens obtained
elsewhere through `credentials_from_cli_options`.
"""

from pressroom.providers.x.adapter import XAdapter
from pressroom.providers.x.adapter import credentials_from_cli_options
from pressroom.providers.x.adapter import normalized_text
from pressroom.providers.x.adapter import verify_credentials
from pressroom.providers.x.oauth import DEFAULT_SCOPES
from pressroom.providers.x.oauth import PendingAuthorization
from pressroom.providers.x.oauth import XApp
from pressroom.providers.x.oauth import exchange_code
from pressroom.providers.x.oauth import revoke_token
from pressroom.providers.x.oauth import start_authorization
from pressroom.providers.x.oauth import states_match

__all__ = [
    "DEFAULT_SCOPES",
    "PendingAuthorization",
    "XAdapter",
    "XApp",
    "credentials_from_cli_options",
    "exchange_code",
    "normalized_text",
    "revoke_token",
    "start_authorization",
    "states_match",
    "verify_credentials",
]
