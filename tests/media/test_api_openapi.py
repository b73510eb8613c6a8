"""The OpenAPI document describes the media operations as the server runs them."""

from __future__ import annotations

from typing import Any

import pytest

from pressroom.app import create_app
from pressroom.config import Settings
from tests.factories import SERVER_KEY


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The document /openapi.json serves, built once: generating it takes a while."""
    data_dir = tmp_path_factory.mktemp("openapi")
    app = create_app(
        Settings(
            database_url=f"sqlite:///{data_dir / 'unused.db'}",
            data_dir=data_dir,
            secret_key=SERVER_KEY,
        )
    )
    return app.openapi()


def test_upload_declares_a_multipart_body_of_binary_files(
    document: dict[str, Any],
) -> None:
    operation = document["paths"]["/api/v1/media"]["post"]

    assert operation["operationId"] == "uploadMedia"
    assert list(operation["requestBody"]["content"]) == ["multipart/form-data"]
    schema = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert schema["required"] == ["files"]
    assert schema["additionalProperties"] is False
    files = schema["properties"]["files"]
    assert files["type"] == "array"
    assert (files["minItems"], files["maxItems"]) == (1, 10)
    assert files["items"] == {"type": "string", "format": "binary"}


def test_upload_declares_201_and_the_upload_errors(document: dict[str, Any]) -> None:
    operation = document["paths"]["/api/v1/media"]["post"]

    assert {"201", "400", "401", "403", "404", "409", "413", "415", "422", "429", "500"} == set(
        operation["responses"]
    )
    assert operation["responses"]["201"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/MediaBatch"
    }
    assert any(p["name"] == "Idempotency-Key" for p in operation["parameters"])


def test_media_schema_has_the_contracts_fields(document: dict[str, Any]) -> None:
    schema = document["components"]["schemas"]["Media"]

    assert set(schema["properties"]) == {
        "id",
        "kind",
        "mimeType",
        "filename",
        "sizeBytes",
        "sha256",
        "width",
        "height",
        "durationSeconds",
        "frameRate",
        "videoCodec",
        "audioCodec",
        "pageCount",
        "createdAt",
    }
    # `document` is an addition of version 1 (PDF, for LinkedIn document posts).
    assert schema["properties"]["kind"]["enum"] == ["image", "gif", "video", "document"]


def test_read_operations_are_documented(document: dict[str, Any]) -> None:
    paths = document["paths"]

    assert paths["/api/v1/media"]["get"]["operationId"] == "listMedia"
    assert paths["/api/v1/media/{mediaId}"]["get"]["operationId"] == "getMedia"
    content = paths["/api/v1/media/{mediaId}/content"]["get"]
    assert content["operationId"] == "getMediaContent"
    assert "video/mp4" in content["responses"]["200"]["content"]
    assert "422" not in content["responses"]
    assert {p["name"] for p in content["parameters"]} >= {"mediaId"}
