"""Where accepted media live: a local directory (default) or an S3-compatible bucket.

Contract section 11: `PRESSROOM_MEDIA_STORAGE` is `file://<data dir>/media` or `s3://bucket/prefix`.
Every operation is async; the blocking work (file system, boto3) runs in worker threads.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
from collections.abc import AsyncGenerator
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from pathlib import Path
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from typing import Protocol
from urllib.parse import unquote
from urllib.parse import urlsplit

import anyio.to_thread

if TYPE_CHECKING:
    from botocore.exceptions import ClientError
    from botocore.response import StreamingBody
    from mypy_boto3_s3 import S3Client

# Reads are streamed in pieces of this size: big enough to keep thread hops rare, small enough
# that a download route holds little per client.
READ_CHUNK = 1024 * 1024
_COPY_BUFFER = 1024 * 1024
# Listings are handed from their worker thread in batches of this many objects (S3 pages hold
# as many): a thread hop per batch, and a bounded amount held however large the store.
_LIST_BATCH = 1000
S3_ENDPOINT_ENV = "PRESSROOM_S3_ENDPOINT_URL"


@dataclass(frozen=True)
class StoredObject:
    """One object of a listing: its key and when it was last written."""

    key: str
    modified_at: datetime


class MediaStorage(Protocol):
    """Stores media files under opaque keys like `org_123/med_456.mp4`."""

    async def prepare_file(self, path: Path) -> None:
        """Do what `put_file` will need done to a staged file and can start early (the caller
        runs it while the file is being inspected); `put_file` stays correct without it."""

    async def put_file(self, key: str, path: Path) -> None:
        """Move a complete staged file into storage under `key` (the staged file is consumed)."""

    def open_read(
        self, key: str, *, start: int = 0, length: int | None = None
    ) -> AsyncGenerator[bytes, None]:
        """Stream the bytes stored under `key` (from byte `start`, `length` of them or to the
        end); FileNotFoundError on the first read if missing.

        Implementations are async generators, hence a plain `def` here: `async for chunk in
        storage.open_read(key)`. A reader that may stop early wraps it in
        `contextlib.aclosing` so the file or HTTP connection is released at once.
        """
        ...

    async def presigned_url(self, key: str, seconds: int, content_type: str) -> str | None:
        """A URL anyone may GET `key` from for `seconds`, served as `content_type`, signed by
        the store itself; None when the store cannot make one (Pressroom serves a signed link
        of its own instead: media/links.py)."""
        ...

    async def delete(self, key: str) -> None:
        """Remove `key`; removing a missing key is not an error."""

    async def exists(self, key: str) -> bool:
        """Whether `key` is stored."""
        ...

    def list_objects(self) -> AsyncGenerator[StoredObject, None]:
        """Every stored object, in no particular order, fetched a batch at a time."""
        ...


def validate_key(key: str) -> str:
    """Reject keys that could escape the root or mean different things on different stores."""
    if not key or "\\" in key or "\x00" in key:
        raise ValueError(f"invalid storage key {key!r}")
    path = PurePosixPath(key)
    if path.is_absolute() or any(part in ("", ".", "..") for part in key.split("/")):
        raise ValueError(f"invalid storage key {key!r}")
    return key


class LocalStorage:
    """Files under a root directory: writes are renames, so a key is either complete or absent."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, key: str) -> Path:
        return self.root / validate_key(key)

    async def prepare_file(self, path: Path) -> None:
        # Flushing a large file to disk is mostly waiting for the device: done while the file is
        # decoded, it costs the upload little; the fsync in put_file then finds nothing to do.
        await anyio.to_thread.run_sync(_fsync_path, path)

    async def put_file(self, key: str, path: Path) -> None:
        await anyio.to_thread.run_sync(self._put_file, self.path_for(key), path)

    def _put_file(self, target: Path, source: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        # The data must be durable before the name points at it, or a crash could leave a key
        # naming a truncated file.
        _fsync_path(source)
        try:
            os.replace(source, target)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # Staging is on another file system: copy next to the target, then rename, so the
            # target still appears atomically.
            partial = target.with_name(f".{target.name}.partial")
            try:
                with source.open("rb") as src, partial.open("wb") as dst:
                    shutil.copyfileobj(src, dst, _COPY_BUFFER)
                    dst.flush()
                    os.fsync(dst.fileno())
                os.replace(partial, target)
            except BaseException:
                partial.unlink(missing_ok=True)
                raise
            source.unlink()
        # A rename keeps the time the last byte arrived; the orphan sweeper judges an object's
        # age from when it was stored.
        os.utime(target)
        _fsync_path(target.parent)

    async def open_read(
        self, key: str, *, start: int = 0, length: int | None = None
    ) -> AsyncGenerator[bytes, None]:
        path = self.path_for(key)
        file = await anyio.to_thread.run_sync(path.open, "rb")
        try:
            if start:
                await anyio.to_thread.run_sync(file.seek, start)
            left = length
            while left is None or left > 0:
                size = READ_CHUNK if left is None else min(READ_CHUNK, left)
                chunk = await anyio.to_thread.run_sync(file.read, size)
                if not chunk:
                    break
                if left is not None:
                    left -= len(chunk)
                yield chunk
        finally:
            file.close()

    async def presigned_url(self, key: str, seconds: int, content_type: str) -> None:
        """A directory has no URLs of its own."""
        return None

    async def delete(self, key: str) -> None:
        await anyio.to_thread.run_sync(self._delete, self.path_for(key))

    @staticmethod
    def _delete(path: Path) -> None:
        path.unlink(missing_ok=True)

    async def exists(self, key: str) -> bool:
        return await anyio.to_thread.run_sync(self.path_for(key).is_file)

    async def list_objects(self) -> AsyncGenerator[StoredObject, None]:
        files = self._walk()
        while batch := await anyio.to_thread.run_sync(_take, files, _LIST_BATCH):
            for item in batch:
                yield item

    def _walk(self) -> Iterator[StoredObject]:
        for directory, _, names in os.walk(self.root):
            for name in names:
                path = Path(directory, name)
                try:
                    modified = path.stat().st_mtime
                except FileNotFoundError:
                    continue  # removed meanwhile
                key = path.relative_to(self.root).as_posix()
                yield StoredObject(key, datetime.fromtimestamp(modified, UTC))


def _take(items: Iterator[StoredObject], count: int) -> list[StoredObject]:
    return list(itertools.islice(items, count))


def _fsync_path(path: Path) -> None:
    # Opening read-only is enough to fsync on Linux, and the only way for a directory.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class S3Storage:
    """Objects in an S3-compatible bucket under `prefix/`, through boto3 in worker threads."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        endpoint_url: str | None = None,
        region: str | None = None,
        *,
        part_size: int = 16 * 1024 * 1024,
    ) -> None:
        # boto3 is imported here, not with the module: it takes a good second to import and
        # only deployments that store media in S3 need it.
        import boto3
        from boto3.s3.transfer import TransferConfig
        from botocore.config import Config

        self.bucket = bucket
        self.prefix = prefix.strip("/")
        # A session of our own: boto3's default session is not safe to share across threads,
        # clients are. Credentials come from the usual AWS_* variables or instance profile.
        session = boto3.session.Session()
        self.client: S3Client = session.client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region,
            # Presigned URLs too are SigV4 (botocore would otherwise presign with SigV2, which
            # buckets made since mid-2020 refuse).
            config=Config(signature_version="s3v4"),
        )
        # Files above one part go up as multipart uploads, parts sent in parallel by boto3.
        self.transfer = TransferConfig(multipart_threshold=part_size, multipart_chunksize=part_size)

    def object_key(self, key: str) -> str:
        validate_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    async def prepare_file(self, path: Path) -> None:
        """Nothing to prepare: the bytes are read from the staged file by put_file."""

    async def put_file(self, key: str, path: Path) -> None:
        await anyio.to_thread.run_sync(self._put_file, self.object_key(key), path)

    def _put_file(self, object_key: str, path: Path) -> None:
        self.client.upload_file(str(path), self.bucket, object_key, Config=self.transfer)
        # Same contract as LocalStorage: the staged file is consumed once it is stored.
        path.unlink(missing_ok=True)

    async def open_read(
        self, key: str, *, start: int = 0, length: int | None = None
    ) -> AsyncGenerator[bytes, None]:
        object_key = self.object_key(key)
        byte_range = None
        if start or length is not None:
            end = "" if length is None else str(start + length - 1)
            byte_range = f"bytes={start}-{end}"
        body = await anyio.to_thread.run_sync(self._get_body, object_key, byte_range)
        try:
            while chunk := await anyio.to_thread.run_sync(body.read, READ_CHUNK):
                yield chunk
        finally:
            body.close()

    def _get_body(self, object_key: str, byte_range: str | None) -> StreamingBody:
        from botocore.exceptions import ClientError

        try:
            if byte_range is None:
                return self.client.get_object(Bucket=self.bucket, Key=object_key)["Body"]
            answer = self.client.get_object(Bucket=self.bucket, Key=object_key, Range=byte_range)
            return answer["Body"]
        except ClientError as exc:
            if _is_missing(exc):
                raise FileNotFoundError(object_key) from exc
            raise

    async def presigned_url(self, key: str, seconds: int, content_type: str) -> str:
        """A presigned GET of the object (SigV4: at most seven days), which answers with
        `content_type`: objects are stored without one."""
        params = {
            "Bucket": self.bucket,
            "Key": self.object_key(key),
            "ResponseContentType": content_type,
        }
        # Signing is local, but the first call may load credentials (an instance profile).
        return await anyio.to_thread.run_sync(
            lambda: self.client.generate_presigned_url(
                "get_object", Params=params, ExpiresIn=seconds
            )
        )

    async def delete(self, key: str) -> None:
        object_key = self.object_key(key)
        await anyio.to_thread.run_sync(
            lambda: self.client.delete_object(Bucket=self.bucket, Key=object_key)
        )

    async def exists(self, key: str) -> bool:
        return await anyio.to_thread.run_sync(self._exists, self.object_key(key))

    async def list_objects(self) -> AsyncGenerator[StoredObject, None]:
        under = f"{self.prefix}/" if self.prefix else ""
        pages = iter(
            self.client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=under, PaginationConfig={"PageSize": _LIST_BATCH}
            )
        )
        while page := await anyio.to_thread.run_sync(next, pages, None):
            for item in page.get("Contents", []):
                yield StoredObject(item["Key"].removeprefix(under), item["LastModified"])

    def _exists(self, object_key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=object_key)
        except ClientError as exc:
            if _is_missing(exc):
                return False
            raise
        return True


def _is_missing(exc: ClientError) -> bool:
    code = exc.response.get("Error", {}).get("Code")
    return code in ("404", "NoSuchKey", "NotFound")


def storage_from_url(url: str, data_dir: Path) -> MediaStorage:
    """The storage `PRESSROOM_MEDIA_STORAGE` names; relative `file://` paths are under data_dir."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        # file:///abs/path has an empty host; file://media (or file://./media) is relative.
        raw = unquote(parts.netloc + parts.path)
        if not raw:
            raise ValueError(f"media storage URL {url!r} names no directory")
        path = Path(raw)
        return LocalStorage(path if path.is_absolute() else data_dir / path)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ValueError(f"media storage URL {url!r} names no bucket")
        return S3Storage(
            bucket=parts.netloc,
            prefix=unquote(parts.path),
            endpoint_url=os.environ.get(S3_ENDPOINT_ENV) or None,
        )
    raise ValueError(f"media storage URL {url!r} must start with file:// or s3://")
