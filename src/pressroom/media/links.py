"""Signed public links to stored media, for networks that fetch a post's media from a URL
(Instagram, Threads; Facebook video, Pinterest and TikTok's pull-from-URL).

A link is `{PRESSROOM_PUBLIC_URL}/media-links/{token}`, where the token is the URL-safe
base64 of (version, organization id, media id, expiry in Unix seconds) followed by their
HMAC-SHA256 under a key derived from the server key for this purpose alone
(`SecretBox.sign`). It needs no API key, names one asset of one organization, cannot be
guessed or altered (any change to any byte fails the signature, checked in constant time),
and stops working at its expiry (`PRESSROOM_MEDIA_LINK_SECONDS`, default 6 hours, counted
from the moment the adapter asks for it, i.e. when the publish needs it). When media live in
S3 the bucket serves them instead, through a presigned GET of the same lifetime.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import struct
import uuid
from dataclasses import dataclass
from urllib.parse import urlsplit

from pressroom.config import Settings
from pressroom.kit.clock import utcnow
from pressroom.kit.crypto import SecretBox
from pressroom.kit.outbound.destination import is_public_address
from pressroom.media import service
from pressroom.providers.adapter import MediaItem
from pressroom.providers.adapter import ProviderError
from pressroom.providers.http import PublicMediaUrl
from pressroom.runtime import Runtime

LINK_PATH = "/media-links"
_PURPOSE = "media-link"
_VERSION = 1
# version, organization id, media id, expiry (Unix seconds)
_PAYLOAD = struct.Struct(">B16s16sQ")
_MAC_BYTES = 32
_TOKEN_BYTES = _PAYLOAD.size + _MAC_BYTES


@dataclass(frozen=True)
class LinkedMedia:
    """What a valid link names."""

    organization_id: uuid.UUID
    media_id: uuid.UUID
    expires_at: int  # Unix seconds


def sign_link(
    box: SecretBox, organization_id: uuid.UUID, media_id: uuid.UUID, expires_at: int
) -> str:
    """The token of a link to `media_id` of `organization_id` valid until `expires_at`."""
    payload = _PAYLOAD.pack(_VERSION, organization_id.bytes, media_id.bytes, expires_at)
    token = payload + box.sign(_PURPOSE, payload)
    return base64.urlsafe_b64encode(token).rstrip(b"=").decode()


def read_link(box: SecretBox, token: str, now: int) -> LinkedMedia | None:
    """What `token` names, or None when it is malformed, tampered with or expired."""
    raw = _decode(token)
    if raw is None:
        return None
    payload, mac = raw[: _PAYLOAD.size], raw[_PAYLOAD.size :]
    if not hmac.compare_digest(mac, box.sign(_PURPOSE, payload)):
        return None
    version, organization, media, expires_at = _PAYLOAD.unpack(payload)
    if version != _VERSION or expires_at <= now:
        return None
    return LinkedMedia(uuid.UUID(bytes=organization), uuid.UUID(bytes=media), expires_at)


def _decode(token: str) -> bytes | None:
    if len(token) > 2 * _TOKEN_BYTES or not token.isascii():
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError):
        return None
    # One spelling per token: the unused bits of the last character, padding or characters
    # outside the URL-safe alphabet would otherwise make other strings for the same link.
    if len(raw) != _TOKEN_BYTES or base64.urlsafe_b64encode(raw).rstrip(b"=").decode() != token:
        return None
    return raw


def now_seconds() -> int:
    return int(utcnow().timestamp())


async def public_url(runtime: Runtime, organization_id: uuid.UUID, item: MediaItem) -> str:
    """A URL anyone may fetch `item` (an asset of `organization_id`) from, for
    `PRESSROOM_MEDIA_LINK_SECONDS`: the bucket's presigned URL when media live in S3, else a
    signed link to this server. ProviderError (permanent) when `PRESSROOM_PUBLIC_URL` is an
    address no network can reach."""
    settings = runtime.settings
    seconds = settings.media_link_seconds
    storage = service.storage_for(settings)
    presigned = await storage.presigned_url(item.storage_key, seconds, item.mime_type)
    if presigned is not None:
        return presigned
    _check_reachable(settings)
    token = sign_link(runtime.box, organization_id, item.id, now_seconds() + seconds)
    return f"{settings.public_url}{LINK_PATH}/{token}"


def public_url_maker(runtime: Runtime, organization_id: uuid.UUID) -> PublicMediaUrl:
    """`public_url` bound to one organization: the `media_url` adapters are handed."""

    async def media_url(item: MediaItem) -> str:
        return await public_url(runtime, organization_id, item)

    return media_url


def _check_reachable(settings: Settings) -> None:
    """Networks fetch the link from the internet: a loopback or private public URL (the
    default is http://127.0.0.1:8000) would fail there with an obscure download error."""
    host = (urlsplit(settings.public_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        unreachable = True
    else:
        try:
            unreachable = not is_public_address(ipaddress.ip_address(host))
        except ValueError:
            unreachable = False  # a name: assumed public (it is resolved by the network)
    if unreachable:
        raise ProviderError(
            "invalid_request",
            f"The network fetches this post's media from a link under PRESSROOM_PUBLIC_URL "
            f"({settings.public_url}), which it cannot reach: set PRESSROOM_PUBLIC_URL to this "
            "server's public https address, or store media in S3 (PRESSROOM_MEDIA_STORAGE).",
            retryable=False,
        )
