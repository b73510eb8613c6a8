"""Where an agent's media upload may come from: a file under a directory the operator lists
(`PRESSROOM_MCP_MEDIA_DIRS`), or, when the operator allows it (`PRESSROOM_MCP_MEDIA_URLS`), a
public URL fetched through the safe outbound client (every address vetted, no redirects)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from pathlib import PurePosixPath
from typing import IO
from urllib.parse import urlsplit

import httpx

from pressroom.kit.outbound.api import build_api_client

# A fetched file larger than this is refused (the API's own limits then apply to the rest).
MAX_FETCH_BYTES = 2**30


class MediaRefused(ValueError):
    """The source is not allowed or cannot be read; the message says why (never a secret)."""


@dataclass(frozen=True)
class MediaPolicy:
    directories: tuple[Path, ...]
    urls: bool

    @classmethod
    def parse(cls, directories: str | None, urls: bool) -> MediaPolicy:
        listed = [part.strip() for part in (directories or "").split(",") if part.strip()]
        return cls(tuple(Path(d).expanduser().resolve() for d in listed), urls)


def allowed_file(policy: MediaPolicy, path: str) -> Path:
    """The file at `path` when it lies under an allowed directory (links resolved first)."""
    if not policy.directories:
        raise MediaRefused("uploads from files are off: the operator lists no directory")
    try:
        resolved = Path(path).expanduser().resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        raise MediaRefused(f"cannot read {path!r}: no such file") from exc
    if not any(resolved.is_relative_to(d) for d in policy.directories):
        raise MediaRefused(f"{path!r} is outside the directories the operator allows")
    if not resolved.is_file():
        raise MediaRefused(f"{path!r} is not a regular file")
    return resolved


@contextlib.asynccontextmanager
async def opened(
    policy: MediaPolicy, path: str | None, url: str | None
) -> AsyncIterator[IO[bytes]]:
    """The bytes to upload, from the file or the URL."""
    if path is not None:
        with allowed_file(policy, path).open("rb") as handle:
            yield handle
        return
    if url is None:
        raise MediaRefused("give `path` or `url`")
    with tempfile.TemporaryFile() as spool:
        await fetch(policy, url, spool)
        spool.seek(0)
        yield spool


async def fetch(policy: MediaPolicy, url: str, sink: IO[bytes]) -> None:
    if not policy.urls:
        raise MediaRefused("uploads from URLs are off on this server")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise MediaRefused("the URL must be an absolute http(s) URL")
    async with build_api_client() as client:
        try:
            async with client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise MediaRefused(f"the URL answered HTTP {response.status_code}")
                received = 0
                async for chunk in response.aiter_bytes():
                    received += len(chunk)
                    if received > MAX_FETCH_BYTES:
                        raise MediaRefused(f"the file is larger than {MAX_FETCH_BYTES} bytes")
                    sink.write(chunk)
        except httpx.HTTPError as exc:
            raise MediaRefused(
                f"cannot fetch the URL ({type(exc).__name__}): its host may not be a public "
                "destination, or it did not answer"
            ) from exc


def filename_of(path: str | None, url: str | None, given: str | None) -> str:
    if given:
        return given
    source = path if path is not None else urlsplit(url or "").path
    return PurePosixPath(source or "upload").name or "upload"
