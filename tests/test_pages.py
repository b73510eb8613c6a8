"""The pages for people: the documentation at /docs (vendored Swagger UI 5, offline, under a
strict Content-Security-Policy) and `GET /`, which sends a browser to the console."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from pressroom.http.pages import STATIC

ROOT = Path(__file__).resolve().parent.parent
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}


def _vendor_script() -> ModuleType:
    if "vendor_assets" in sys.modules:
        return sys.modules["vendor_assets"]
    path = ROOT / "scripts" / "vendor_assets.py"
    spec = importlib.util.spec_from_file_location("vendor_assets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vendor_assets"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


async def _assets(client: httpx.AsyncClient) -> list[str]:
    page = await client.get("/docs")
    assert page.status_code == 200
    return re.findall(r'(?:src|href)="([^"]+)"', page.text)


async def test_docs_reference_only_this_services_own_files(client: httpx.AsyncClient):
    page = await client.get("/docs")
    assert page.headers["content-type"].startswith("text/html")
    assets = await _assets(client)
    assert len(assets) == 4  # favicon, stylesheet, Swagger UI, the page's own script
    for asset in assets:
        assert asset.startswith("/static/") and not asset.startswith("//"), asset
    assert "http://" not in page.text and "https://" not in page.text


async def test_every_docs_asset_is_served_with_its_content_type(client: httpx.AsyncClient):
    for asset in await _assets(client):
        response = await client.get(asset)
        assert response.status_code == 200, asset
        expected = CONTENT_TYPES[Path(asset).suffix]
        assert response.headers["content-type"].split(";")[0] == expected, asset
        assert response.content, asset


async def test_the_docs_page_has_no_inline_script_and_a_strict_policy(client: httpx.AsyncClient):
    page = await client.get("/docs")
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page.text, re.S)
    assert len(scripts) == 2
    assert all('src="' in attributes and not body.strip() for attributes, body in scripts)
    assert not re.search(r"\son\w+=", page.text)  # no inline event handler either
    policy = dict(
        part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";")
    )
    assert policy["default-src"] == "'none'"
    assert policy["script-src"] == "'self'"
    assert "unsafe" not in page.headers["content-security-policy"]


async def test_the_page_script_renders_the_document_without_an_outside_validator(
    client: httpx.AsyncClient,
):
    script = (await client.get("/static/docs/docs.js")).text
    assert "SwaggerUIBundle(" in script
    assert "validatorUrl: null" in script
    assert 'data-openapi-url="/openapi.json"' in (await client.get("/docs")).text


def test_the_vendored_swagger_ui_is_version_5_as_the_table_pins_it():
    table = {package.into: package for package in _vendor_script().PACKAGES}
    manifest = json.loads((STATIC / "vendor/swagger-ui/VENDORED.json").read_text())
    pinned = table["swagger-ui"]
    assert (manifest["package"], manifest["version"]) == (pinned.name, pinned.version)
    assert re.fullmatch(r"5\.\d+\.\d+", pinned.version)
    # Only the listed files and the licence, as the script writes them.
    present = {path.name for path in (STATIC / "vendor/swagger-ui").iterdir()}
    assert present == {*pinned.files, pinned.licence, "VENDORED.json"}
    assert "Apache License" in (STATIC / "vendor/swagger-ui" / pinned.licence).read_text()
    bundle = (STATIC / "vendor/swagger-ui/swagger-ui-bundle.js").read_text()
    assert "SwaggerUIBundle" in bundle


def test_every_vendored_directory_is_in_the_table_with_its_licence():
    table = {package.into: package for package in _vendor_script().PACKAGES}
    on_disk = {path.name for path in (STATIC / "vendor").iterdir() if path.is_dir()}
    assert on_disk == set(table)
    for name, package in table.items():
        assert (STATIC / "vendor" / name / package.licence).is_file(), name


def test_the_refresh_refuses_a_tarball_whose_digest_is_not_the_registrys(tmp_path: Path):
    script = _vendor_script()
    tarball = tmp_path / "package.tgz"
    tarball.write_bytes(b"the bytes npm fetched")
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    script.verify(tarball, f"sha512-{digest}")  # the registry's own digest passes
    with pytest.raises(SystemExit, match="does not match"):
        script.verify(tarball, "sha512-" + base64.b64encode(b"\0" * 64).decode())


# --- GET / -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "accept",
    [BROWSER_ACCEPT, "text/html", "application/xhtml+xml", "application/json;q=0.5, text/html"],
)
async def test_a_browser_at_the_root_is_sent_to_the_console(client: httpx.AsyncClient, accept: str):
    response = await client.get("/", headers={"Accept": accept})
    assert response.status_code == 303
    assert response.headers["location"] == "/console"


@pytest.mark.parametrize(
    "accept",
    [None, "*/*", "application/json", "application/json, text/html;q=0.5", "text/html;q=0"],
)
async def test_an_api_client_at_the_root_gets_the_404_of_an_unknown_route(
    client: httpx.AsyncClient, accept: str | None
):
    headers = {"Accept": accept} if accept is not None else {}
    response = await client.get("/", headers=headers)
    unknown = await client.get("/nothing-here", headers=headers)
    assert response.status_code == unknown.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    body, expected = response.json(), unknown.json()
    assert (body["code"], body["detail"]) == (expected["code"], expected["detail"])
