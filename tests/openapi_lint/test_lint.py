"""The OpenAPI document passes Spectral's `spectral:oas` rules and Redocly's recommended
rules without a single warning (rules turned off say why, in `.spectral.yaml` and
`redocly.yaml` here). The linters are the Node packages pinned in this folder."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from pressroom.app import create_app
from pressroom.config import Settings
from tests.factories import SERVER_KEY
from tests.node_packages import require_node_packages

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require_node_packages(HERE, "the OpenAPI lint tests")
    app = create_app(Settings(data_dir=Path(tempfile.mkdtemp()), secret_key=SERVER_KEY))
    path = tmp_path_factory.mktemp("document") / "openapi.json"
    path.write_text(json.dumps(app.openapi()))
    return path


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HERE / "node_modules" / ".bin" / command[0]), *command[1:]],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_document_passes_spectral_oas_without_a_warning(document: Path) -> None:
    result = _run(
        "spectral", "lint", "--ruleset", ".spectral.yaml", "--fail-severity=warn", str(document)
    )
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]


def test_the_document_passes_redocly_recommended_without_a_warning(document: Path) -> None:
    # Redocly fails only on errors; its JSON report counts the warnings too.
    result = _run("redocly", "lint", "--config", "redocly.yaml", "--format=json", str(document))
    report = json.loads(result.stdout)
    assert report["totals"]["errors"] == 0, result.stdout[-5000:]
    assert report["totals"]["warnings"] == 0, result.stdout[-5000:]
