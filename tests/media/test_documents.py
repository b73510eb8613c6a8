"""PDF documents in the media library: recognised by their header, inspected for real (trailer,
cross-reference data, page tree, no password), counted in pages, and served back as PDF; a
file that only claims to be a PDF is a 422 naming its part."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest

from pressroom.media.inspect import UnprocessableMedia
from pressroom.media.inspect import inspect_file
from pressroom.media.sniff import PDF
from pressroom.media.sniff import sniff
from pressroom.runtime import Runtime
from tests.factories import Tenant

from . import factories
from .api import MEDIA
from .api import assert_nothing_stored
from .api import upload
from .factories import FormPart

PDF_TYPE = "application/pdf"


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "upload.part"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("version", [b"1.3", b"1.7", b"2.0"])
def test_a_pdf_header_is_a_document(version: bytes) -> None:
    assert sniff(b"%PDF-" + version + b"\n%\xe2\xe3\xcf\xd3\n1 0 obj") == PDF
    assert PDF.kind == "document" and PDF.mime_type == PDF_TYPE


def test_a_pdf_is_inspected_for_its_pages(tmp_path: Path) -> None:
    info = inspect_file(write(tmp_path, factories.pdf_bytes(7)), PDF)
    assert (info.kind, info.mime_type, info.page_count) == ("document", PDF_TYPE, 7)
    assert (info.width, info.height, info.duration_seconds) == (None, None, None)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (factories.pdf_bytes(3)[:-40], "no end-of-file marker (%%EOF)"),
        (b"%PDF-1.7\n" + b"x" * 2000 + b"\n%%EOF\n", "no cross-reference offset (startxref)"),
        (b"%PDF-1.7\nnot objects at all\nstartxref\n9\n%%EOF\n", "the PDF cannot be read"),
        (factories.pdf_bytes(2, password="secret"), "encrypted (password-protected)"),
        (factories.pdf_bytes(0), "the PDF has no pages"),
    ],
    ids=["truncated", "no-startxref", "no-objects", "encrypted", "no-pages"],
)
def test_a_pdf_that_is_not_whole_and_readable_is_unprocessable(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    with pytest.raises(UnprocessableMedia) as refused:
        inspect_file(write(tmp_path, data), PDF)
    assert refused.value.code == "undecodable"
    assert reason in refused.value.reason
    assert str(tmp_path) not in refused.value.reason


async def test_an_uploaded_pdf_is_a_document_with_its_page_count_and_comes_back_as_pdf(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    data = factories.pdf_bytes(4)
    response = await upload(client, tenant, [FormPart(data, "Q3 report.pdf", PDF_TYPE)])
    assert response.status_code == 201, response.text
    [item] = response.json()["items"]
    assert {k: v for k, v in item.items() if k not in ("id", "createdAt")} == {
        "kind": "document",
        "mimeType": PDF_TYPE,
        "filename": "Q3 report.pdf",
        "sizeBytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "width": None,
        "height": None,
        "durationSeconds": None,
        "frameRate": None,
        "videoCodec": None,
        "audioCodec": None,
        "pageCount": 4,
    }
    content = await client.get(f"{MEDIA}/{item['id']}/content", headers=tenant.headers)
    assert content.status_code == 200
    assert content.headers["content-type"] == PDF_TYPE
    assert content.content == data


async def test_a_pdf_recognised_whatever_its_declared_type_or_name(
    client: httpx.AsyncClient, tenant: Tenant
) -> None:
    response = await upload(
        client, tenant, [FormPart(factories.pdf_bytes(1), "scan", "application/octet-stream")]
    )
    assert response.status_code == 201, response.text
    assert response.json()["items"][0]["kind"] == "document"


@pytest.mark.parametrize(
    ("filename", "content_type"),
    [("report.pdf", "application/octet-stream"), ("report", PDF_TYPE)],
    ids=["by-name", "by-content-type"],
)
async def test_a_file_claiming_to_be_a_pdf_that_is_not_one_is_422_naming_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant, filename: str, content_type: str
) -> None:
    parts = [
        FormPart(factories.png_bytes(), "good.png", "image/png"),
        FormPart(b"<html><body>not a PDF</body></html>" * 20, filename, content_type),
    ]
    response = await upload(client, tenant, parts)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "unprocessable_media"
    [error] = problem["errors"]
    assert (error["field"], error["code"]) == ("files[1]", "undecodable")
    assert "is declared a PDF but is not one" in error["message"]
    await assert_nothing_stored(runtime, tenant)


async def test_a_truncated_pdf_upload_is_422_naming_it(
    client: httpx.AsyncClient, runtime: Runtime, tenant: Tenant
) -> None:
    cut = factories.pdf_bytes(3)[:-60]
    response = await upload(client, tenant, [FormPart(cut, "cut.pdf", PDF_TYPE)])
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert (error["field"], error["code"]) == ("files[0]", "undecodable")
    assert "%%EOF" in error["message"]
    await assert_nothing_stored(runtime, tenant)
