"""One Facebook Page as a channel: its id and Page access token (from the channel's
credentials), and the Graph calls made with that token.

Credentials dict (oauth.py makes it): `{"pageId", "accessToken"}`, plus `"expiresAt"` (Unix
seconds) only for a Page token that expires: one derived from a long-lived user token never
does (https://developers.facebook.com/docs/facebook-login/guides/access-tokens/get-long-lived),
and none can be refreshed without the person logging in again. `"userTokenExpiresAt"` records
when the user token the Page token came from expires; the Page token outlives it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pressroom.config import Settings
from pressroom.providers.adapter import ChannelContext
from pressroom.providers.adapter import ProviderError
from pressroom.providers.graph import GraphClient

PROVIDER = "Facebook"
# The deployment's choice is PRESSROOM_META_GRAPH_VERSION; this is its default.
DEFAULT_GRAPH_VERSION: str = Settings.model_fields["meta_graph_version"].default
# Meta's upload host for Reels and video stories (the start phase names the exact URL).
RUPLOAD_HOST = "rupload.facebook.com"


class PageApi:
    """Graph calls as one Page. Build one per adapter call."""

    def __init__(self, graph: GraphClient, channel: ChannelContext) -> None:
        credentials = channel.credentials
        page_id = credentials.get("pageId")
        token = credentials.get("accessToken")
        if not isinstance(page_id, str) or not page_id or not isinstance(token, str) or not token:
            raise ProviderError(
                "auth_expired",
                "The Facebook channel has no Page id or Page access token; reconnect it.",
            )
        expires_at = credentials.get("expiresAt")
        self.graph = graph
        self.page_id = page_id
        self.token = token
        self.expires_at = (
            int(expires_at)
            if isinstance(expires_at, int | float) and not isinstance(expires_at, bool)
            else None
        )

    async def get(
        self, path: str, action: str, params: dict[str, str] | None = None
    ) -> dict[str, Any]:
        return await self.graph.call("GET", path, action, token=self.token, params=params)

    async def post(self, path: str, action: str, form: dict[str, str]) -> dict[str, Any]:
        return await self.graph.call("POST", path, action, token=self.token, form=form)

    async def delete(self, path: str, action: str) -> dict[str, Any]:
        return await self.graph.call("DELETE", path, action, token=self.token)

    async def upload_from_url(self, upload_url: str, file_url: str, action: str) -> None:
        """Have Meta fetch a hosted file into an upload session
        (https://developers.facebook.com/docs/video-api/guides/reels-publishing, "Upload a
        hosted file"): `POST {upload_url}` with `Authorization: OAuth {token}` and `file_url`."""
        body = await self.graph.call(
            "POST",
            upload_url,
            action,
            token=self.token,
            headers={"file_url": file_url},
            auth_scheme="OAuth",
        )
        if body.get("success") is not True:
            raise ProviderError(
                "provider_unavailable",
                f"Facebook did not confirm the upload while {action}; it will be retried.",
            )

    def upload_url(self, offered: object, video_id: str) -> str:
        """Where to upload a session's file: the URL Facebook offered, only if it is on its
        upload host (the Page token goes with it), else the documented one."""
        if isinstance(offered, str):
            parts = urlsplit(offered)
            if parts.scheme == "https" and parts.hostname == RUPLOAD_HOST:
                return offered
        return f"https://{RUPLOAD_HOST}/video-upload/{self.graph.version}/{video_id}"


def required_value(body: dict[str, Any], key: str, action: str) -> str:
    """`body[key]` (an id, a token) as text, or a retryable error saying Facebook answered
    without it."""
    value = body.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value:
        return value
    raise ProviderError("provider_unavailable", f"Facebook answered {action} without {key}.")
