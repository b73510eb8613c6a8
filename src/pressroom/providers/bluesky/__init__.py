"""Bluesky (AT Protocol) adapter.

Build with `BlueskyAdapter(read_media=..., on_credentials_changed=..., media_dimensions=...)`.
A channel's credentials dict is `{"identifier", "appPassword", "service"}` to start with
(`credentials_from_cli_options`), completed by the first login with `did`, `handle`,
`accessJwt`, `refreshJwt` and `pds`; `create_session_credentials` logs in at once and returns
the complete dict, for a connect command that should fail on a wrong app password.
"""

from pressroom.providers.bluesky.adapter import BlueskyAdapter
from pressroom.providers.bluesky.adapter import create_session_credentials
from pressroom.providers.bluesky.adapter import credentials_from_cli_options
from pressroom.providers.bluesky.session import DEFAULT_SERVICE

__all__ = [
    "DEFAULT_SERVICE",
    "BlueskyAdapter",
    "create_session_credentials",
    "credentials_from_cli_options",
]
