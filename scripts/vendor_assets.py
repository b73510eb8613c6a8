"""Refresh the vendored front-end packages under src/pressroom/static/vendor/ from npm.

Each package of the table below is fetched with `npm pack NAME@VERSION` (the exact version,
never a range), its tarball checked against the integrity the registry publishes for that
version (`npm view NAME@VERSION dist.integrity`), and only the listed files and the licence
copied into its directory, with a `VENDORED.json` naming what was copied from where. The
directory is replaced as a whole, so a file dropped from the list disappears too.

    python scripts/vendor_assets.py              # every package of the table
    python scripts/vendor_assets.py swagger-ui   # only these directories

Adding a package is one line in PACKAGES; then run the script and commit what it wrote.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

VENDOR = Path(__file__).resolve().parent.parent / "src" / "pressroom" / "static" / "vendor"
MANIFEST = "VENDORED.json"


@dataclass(frozen=True)
class Package:
    into: str  # the directory under static/vendor/
    name: str  # the npm package
    version: str  # exact
    files: tuple[str, ...]  # paths inside the package, copied flat into `into`
    licence: str  # the licence file inside the package


# One package a line (the formatter leaves the table as written).
# fmt: off
PACKAGES: tuple[Package, ...] = (
    Package("chart.js", "chart.js", "4.6.1", ("dist/chart.umd.min.js",), "LICENSE.md"),
    Package("htmx.org", "htmx.org", "2.0.11", ("dist/htmx.min.js",), "LICENSE"),
    Package("swagger-ui", "swagger-ui-dist", "5.35.0", ("swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css", "favicon-32x32.png", "NOTICE"), "LICENSE"),  # noqa: E501
)
# fmt: on


def _npm(*args: str, cwd: Path | None = None) -> str:
    result = subprocess.run(
        ["npm", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=300
    )
    return result.stdout


def registry_integrity(package: Package) -> str:
    """The Subresource Integrity string the registry publishes for the exact version."""
    spec = f"{package.name}@{package.version}"
    published = json.loads(_npm("view", spec, "dist.integrity", "--json") or "null")
    if not isinstance(published, str) or not published.startswith("sha512-"):
        raise SystemExit(f"{spec}: the registry publishes no sha512 integrity for it")
    return published


def verify(tarball: Path, integrity: str) -> None:
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if f"sha512-{digest}" != integrity:
        raise SystemExit(f"{tarball.name}: sha512 does not match the registry's {integrity}")


def fetch(package: Package, work: Path) -> tuple[Path, str]:
    """The package's tarball, checked against the registry's integrity, and that integrity."""
    integrity = registry_integrity(package)
    packed = json.loads(_npm("pack", f"{package.name}@{package.version}", "--json", cwd=work))
    tarball = work / packed[0]["filename"]
    verify(tarball, integrity)
    return tarball, integrity


def unpack(package: Package, tarball: Path, integrity: str) -> None:
    """Replace the package's directory with the listed files and its manifest."""
    target = VENDOR / package.into
    staging = Path(tempfile.mkdtemp(dir=VENDOR))
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            for name in (*package.files, package.licence):
                member = archive.getmember(f"package/{name}")  # KeyError: not in the package
                source = archive.extractfile(member)
                if source is None:
                    raise SystemExit(f"{package.name}: {name} is not a regular file")
                (staging / Path(name).name).write_bytes(source.read())
        manifest = {
            "package": package.name,
            "version": package.version,
            "integrity": integrity,
            "files": list(package.files),
            "licence": package.licence,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        staging.chmod(0o755)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="directories of the table to refresh")
    chosen = parser.parse_args(argv).only
    unknown = set(chosen) - {p.into for p in PACKAGES}
    if unknown:
        parser.error(f"not in the table: {', '.join(sorted(unknown))}")
    VENDOR.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        if chosen and package.into not in chosen:
            continue
        with tempfile.TemporaryDirectory() as work:
            unpack(package, *fetch(package, Path(work)))
        print(f"{package.into}: {package.name}@{package.version}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
