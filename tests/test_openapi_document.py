"""What the OpenAPI document tells an integrator beyond operation ids: time formats, scopes,
servers and tags (tests/openapi_lint runs the linters over it; test_generated_client generates
a client from it)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pressroom.app import create_app
from pressroom.auth.scopes import SCOPES
from pressroom.config import Settings
from tests.factories import SERVER_KEY


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    app = create_app(Settings(data_dir=Path(tempfile.mkdtemp()), secret_key=SERVER_KEY))
    return app.openapi()


def _operations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for operation in item.values():
            yield path, operation


def _is_time(name: str) -> bool:
    return name.endswith("At") or name in {"start", "end"}


def test_every_response_time_is_a_date_time(document: dict[str, Any]) -> None:
    untyped = []
    for model, schema in document["components"]["schemas"].items():
        for name, prop in schema.get("properties", {}).items():
            if not _is_time(name):
                continue
            strings = [b for b in prop.get("anyOf", [prop]) if b.get("type") == "string"]
            if [b.get("format") for b in strings] != ["date-time"]:
                untyped.append(f"{model}.{name}")
    assert untyped == []


def test_optional_time_parameters_carry_the_format_inside_any_of(
    document: dict[str, Any],
) -> None:
    parameters = {
        p["name"]: p["schema"] for p in document["paths"]["/api/v1/analytics"]["get"]["parameters"]
    }
    for name in ("comparisonStart", "comparisonEnd"):
        assert "format" not in parameters[name]
        assert {"type": "string", "format": "date-time"} in parameters[name]["anyOf"]


def test_the_timezone_parameter_is_a_documented_string_not_an_enum(
    document: dict[str, Any],
) -> None:
    (timezone,) = [
        p
        for p in document["paths"]["/api/v1/analytics"]["get"]["parameters"]
        if p["name"] == "timezone"
    ]
    assert timezone["schema"]["type"] == "string"
    assert "enum" not in timezone["schema"]
    assert "https://www.iana.org/time-zones" in timezone["description"]


def test_every_api_operation_names_its_scope(document: dict[str, Any]) -> None:
    unnamed = [
        operation["operationId"]
        for path, operation in _operations(document)
        if path.startswith("/api/v1")
        and not any(f"Scope `{scope}`" in operation.get("description", "") for scope in SCOPES)
    ]
    assert unnamed == []


def test_the_document_names_a_server_and_declares_every_tag(document: dict[str, Any]) -> None:
    assert document["servers"] == [{"url": "/", "description": "The server serving this document."}]
    declared = {tag["name"]: tag.get("description") for tag in document["tags"]}
    used = {tag for _, operation in _operations(document) for tag in operation.get("tags", [])}
    assert used <= set(declared)
    assert all(declared.values())
