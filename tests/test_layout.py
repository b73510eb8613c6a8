"""The layout's bounds on the source tree: no module over 500 lines other than data tables
and migrations, no function over 80 lines (README, "Architecture")."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "pressroom"
# Data tables: generated lists the code looks values up in, not logic.
DATA_TABLES = {"providers/tlds.py", "providers/twemoji.py"}
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def modules() -> list[Path]:
    return [
        path
        for path in sorted(SOURCE.rglob("*.py"))
        if "migrations" not in path.relative_to(SOURCE).parts
    ]


def test_no_module_over_500_lines() -> None:
    long = {
        str(path.relative_to(SOURCE)): count
        for path in modules()
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
        and str(path.relative_to(SOURCE)) not in DATA_TABLES
    }
    assert long == {}


def test_no_function_over_80_lines() -> None:
    long = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(SOURCE)}:{node.name}"] = lines
    assert long == {}


def test_the_data_tables_exist() -> None:
    """The exemptions name real files (a renamed table would otherwise escape the bound)."""
    assert all((SOURCE / name).is_file() for name in DATA_TABLES)
