"""X (API v2) adapter and its OAuth 2.0 PKCE helper.

Build with `XAdapter(app=XApp(client_id, client_secret), read_media=...,
on_credentials_changed=...)`. Connect a channel through `oauth.start_authorization` and
`oauth.exchange_code` (the `/connect/x` start and callback routes), or with tokens obtained
elsewhere through `credentials_from_cli_options`.
"""

from pressroom.providers.x.adapter import (
    XAdapter,
    credentials_from_cli_options,
    normalized_text,
    verify_credentials,
)
from pressroom.providers.x.oauth import (
    DEFAULT_SCOPES,
    PendingAuthorization,
    XApp,
    exchange_code,
    revoke_token,
    start_authorization,
    states_match,
)

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
