from __future__ import annotations

import errno
import hashlib
import os
from contextlib import aclosing
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path

import pytest

from pressroom.media import storage as storage_module
from pressroom.media.storage import LocalStorage
from pressroom.media.storage import MediaStorage
from pressroom.media.storage import S3Storage
from pressroom.media.storage import storage_from_url
from pressroom.media.storage import validate_key

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024


def staged_file(directory: Path, content: bytes, name: str = "upload.part") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_bytes(content)
    return path


async def read_all(storage: MediaStorage, key: str) -> bytes:
    return b"".join([chunk async for chunk in storage.open_read(key)])


# -- keys -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key", ["org_1/med_1.png", "med_1.mp4", "a/b/c/d.webm", "org_1/.hidden", "x..y/z"]
)
def test_plain_relative_keys_are_valid(key: str) -> None:
    assert validate_key(key) == key


@pytest.mark.parametrize(
    "key",
    ["", "../escape", "org/../../escape", "/etc/passwd", "a//b", "a/./b", "a/", "a\\b", "a\x00b"],
)
def test_keys_that_could_escape_or_alias_are_rejected(key: str) -> None:
    with pytest.raises(ValueError, match="invalid storage key"):
        validate_key(key)


# -- local ----------------------------------------------------------------------------------------


async def test_local_round_trip_moves_the_staged_file(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")
    content = os.urandom(3 * MiB + 17)
    source = staged_file(tmp_path / "staging", content)

    await storage.put_file("org_1/med_1.mp4", source)

    assert not source.exists()
    assert (tmp_path / "media" / "org_1" / "med_1.mp4").read_bytes() == content
    assert await storage.exists("org_1/med_1.mp4")
    assert await read_all(storage, "org_1/med_1.mp4") == content

    await storage.delete("org_1/med_1.mp4")

    assert not await storage.exists("org_1/med_1.mp4")


async def test_local_listing_dates_each_object_from_when_it_was_stored(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")
    source = staged_file(tmp_path / "staging", b"bytes that arrived long ago")
    os.utime(source, (1_000_000_000, 1_000_000_000))  # 2001
    before = datetime.now(UTC) - timedelta(seconds=5)

    await storage.put_file("org_1/med_1.png", source)
    await storage.put_file("org_1/nested/med_2.png", staged_file(tmp_path / "staging", b"x"))

    listed = {item.key: item.modified_at async for item in storage.list_objects()}
    assert set(listed) == {"org_1/med_1.png", "org_1/nested/med_2.png"}
    assert listed["org_1/med_1.png"] >= before  # the sweeper must not take it for an old orphan


async def test_listing_a_store_that_does_not_exist_yet_is_empty(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "never-written")

    assert [item async for item in storage.list_objects()] == []


async def test_local_put_replaces_an_existing_key(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")
    await storage.put_file("k.png", staged_file(tmp_path / "staging", b"first"))

    await storage.put_file("k.png", staged_file(tmp_path / "staging", b"second"))

    assert await read_all(storage, "k.png") == b"second"


async def test_local_put_copies_across_file_systems(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rename from staging (another mount) into the media root fails with EXDEV.
    real_replace = os.replace
    staging = tmp_path / "staging"

    def replace(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        if Path(source).parent == staging:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    storage = LocalStorage(tmp_path / "media")
    content = os.urandom(2 * MiB)
    source = staged_file(staging, content)

    await storage.put_file("org_1/med_2.png", source)

    assert not source.exists()
    assert await read_all(storage, "org_1/med_2.png") == content
    assert sorted(p.name for p in (tmp_path / "media" / "org_1").iterdir()) == ["med_2.png"]


async def test_local_reading_a_missing_key_is_file_not_found(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")

    with pytest.raises(FileNotFoundError):
        await read_all(storage, "nope.png")


async def test_local_delete_of_missing_key_is_quiet(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")

    await storage.delete("never/stored.png")

    assert not await storage.exists("never/stored.png")


async def test_local_storage_refuses_keys_outside_its_root(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")
    source = staged_file(tmp_path / "staging", b"x")

    with pytest.raises(ValueError, match="invalid storage key"):
        await storage.put_file("../outside.png", source)
    assert source.exists()


async def test_reader_stopped_early_releases_the_file(tmp_path: Path) -> None:
    storage = LocalStorage(tmp_path / "media")
    await storage.put_file("big.bin", staged_file(tmp_path / "staging", bytes(3 * MiB)))

    async with aclosing(storage.open_read("big.bin")) as chunks:
        first = await anext(chunks)

    assert len(first) == storage_module.READ_CHUNK


# -- storage URLs ---------------------------------------------------------------------------------


def test_absolute_file_url_is_local_storage_at_that_path(tmp_path: Path) -> None:
    storage = storage_from_url(f"file://{tmp_path}/media", Path("/srv/data"))

    assert isinstance(storage, LocalStorage)
    assert storage.root == tmp_path / "media"


@pytest.mark.parametrize("url", ["file://media", "file://./media"])
def test_relative_file_url_is_under_the_data_dir(url: str) -> None:
    storage = storage_from_url(url, Path("/srv/data"))

    assert isinstance(storage, LocalStorage)
    assert storage.root.resolve() == Path("/srv/data/media")


def test_s3_url_names_bucket_and_prefix_and_reads_the_endpoint_from_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRESSROOM_S3_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")

    storage = storage_from_url("s3://pressroom-media/tenants/media/", Path("/srv/data"))

    assert isinstance(storage, S3Storage)
    assert (storage.bucket, storage.prefix) == ("pressroom-media", "tenants/media")
    assert storage.client.meta.endpoint_url == "http://127.0.0.1:9"
    assert storage.object_key("org_1/m.png") == "tenants/media/org_1/m.png"


@pytest.mark.parametrize("url", ["http://example.com/media", "media", "file://", "s3:///prefix"])
def test_other_storage_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError, match="media storage URL"):
        storage_from_url(url, Path("/srv/data"))


# -- S3, against a real moto server on loopback ---------------------------------------------------


@pytest.fixture
def s3_storage(moto_endpoint: str, s3_bucket: str) -> S3Storage:
    # 5 MiB is S3's smallest part size: the 12 MiB file below goes up in three parts.
    return S3Storage(s3_bucket, "media/", endpoint_url=moto_endpoint, part_size=5 * MiB)


async def test_s3_round_trip_of_a_multipart_upload(s3_storage: S3Storage, tmp_path: Path) -> None:
    content = os.urandom(12 * MiB + 5)
    source = staged_file(tmp_path, content)

    await s3_storage.put_file("org_1/med_1.mp4", source)

    assert not source.exists()
    head = s3_storage.client.head_object(Bucket=s3_storage.bucket, Key="media/org_1/med_1.mp4")
    assert head["ContentLength"] == len(content)
    assert "-" in head["ETag"]  # multipart ETags are "<md5 of part md5s>-<part count>"
    assert await s3_storage.exists("org_1/med_1.mp4")
    chunks = [chunk async for chunk in s3_storage.open_read("org_1/med_1.mp4")]
    assert len(chunks) > 1  # streamed, not read whole
    assert hashlib.sha256(b"".join(chunks)).digest() == hashlib.sha256(content).digest()


async def test_s3_delete_removes_the_object(s3_storage: S3Storage, tmp_path: Path) -> None:
    await s3_storage.put_file("org_1/small.png", staged_file(tmp_path, b"png bytes"))

    await s3_storage.delete("org_1/small.png")

    assert not await s3_storage.exists("org_1/small.png")
    await s3_storage.delete("org_1/small.png")  # deleting again is quiet


async def test_s3_missing_key_does_not_exist_and_reads_as_file_not_found(
    s3_storage: S3Storage,
) -> None:
    assert not await s3_storage.exists("org_1/ghost.png")
    with pytest.raises(FileNotFoundError):
        await read_all(s3_storage, "org_1/ghost.png")


# -- byte ranges (signed media links answer Range requests) ---------------------------------------


@pytest.mark.parametrize(
    ("start", "length"), [(0, 5), (MiB - 3, 10), (MiB, None), (2 * MiB + 1, 1), (7, 2 * MiB)]
)
async def test_local_reads_a_byte_range_across_read_chunks(
    tmp_path: Path, start: int, length: int | None
) -> None:
    storage = LocalStorage(tmp_path / "media")
    content = os.urandom(2 * MiB + 9)
    await storage.put_file("org_1/big.bin", staged_file(tmp_path / "staging", content))

    read = b"".join(
        [chunk async for chunk in storage.open_read("org_1/big.bin", start=start, length=length)]
    )

    assert read == content[start : None if length is None else start + length]


async def test_s3_reads_a_byte_range_and_presigns_a_sigv4_get(
    s3_storage: S3Storage, tmp_path: Path
) -> None:
    content = os.urandom(3000)
    await s3_storage.put_file("org_1/part.bin", staged_file(tmp_path, content))

    middle = [c async for c in s3_storage.open_read("org_1/part.bin", start=100, length=50)]
    tail = [c async for c in s3_storage.open_read("org_1/part.bin", start=2990)]
    url = await s3_storage.presigned_url("org_1/part.bin", 600, "image/png")

    assert b"".join(middle) == content[100:150]
    assert b"".join(tail) == content[2990:]
    assert "X-Amz-Algorithm=AWS4-HMAC-SHA256" in url and "X-Amz-Expires=600" in url
    assert "/media/org_1/part.bin?" in url


async def test_a_local_store_makes_no_presigned_urls(tmp_path: Path) -> None:
    assert await LocalStorage(tmp_path).presigned_url("org_1/a.png", 600, "image/png") is None
