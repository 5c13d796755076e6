"""Gather the Pyodide runtime for self-hosting, verifying every file by hash.

Sources (how the site uses them: README.md, "Pyodide source"):
- the npm package `pyodide@0.27.7` (installed by `npm ci`, its tarball checked
  by the integrity hash in package-lock.json) holds the core files and the
  official `pyodide-lock.json`;
- the numpy wheel built by the Pyodide project is vendored in this repository
  (`vendor/pyodide/`, with its PROVENANCE.md: the official URL and sha256) and
  checked against the sha256 in the official lock before every use.

A mismatch anywhere raises `VerificationError`, which fails the build.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

PYODIDE_VERSION = "0.27.7"
CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
CORE_FILES = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
VENDOR_DIR = Path("vendor") / "pyodide"  # relative to the project root; see its PROVENANCE.md

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "pyodide-files.sha256"  # sha256 of the core files, as published in pyodide@0.27.7


class VerificationError(RuntimeError):
    pass


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _expect(path: Path, digest: str, what: str) -> None:
    got = sha256(path)
    if got != digest:
        raise VerificationError(f"{what}: sha256 of {path} is {got}, expected {digest}. Delete it and rebuild "
                                "(run `npm ci` for the Pyodide core; for numpy see vendor/pyodide/PROVENANCE.md).")


def core_dir(root: Path) -> Path:
    d = root / "node_modules" / "pyodide"
    pkg = d / "package.json"
    if not pkg.exists():
        raise VerificationError(f"{d} is missing: run `npm ci` in {root} (the Makefile's setup does).")
    version = json.loads(pkg.read_text())["version"]
    if version != PYODIDE_VERSION:
        raise VerificationError(f"node_modules/pyodide is {version}, expected {PYODIDE_VERSION}: run `npm ci`.")
    return d


def official_lock(root: Path) -> dict:
    return json.loads((core_dir(root) / "pyodide-lock.json").read_text())


def verify_core(root: Path) -> dict[str, Path]:
    """Check the core files against the committed manifest; return name -> path."""
    expected = dict(line.split()[::-1] for line in MANIFEST.read_text().splitlines() if line.strip())
    d = core_dir(root)
    files = {}
    for name in CORE_FILES + ("pyodide-lock.json",):
        _expect(d / name, expected[name], f"Pyodide core file {name}")
        files[name] = d / name
    return files


VENDOR_MANIFEST = HERE / "vendor-files.sha256"  # other front-end files copied from node_modules into the site


def vendor_manifest() -> dict[str, str]:
    """{path under node_modules: sha256} from vendor-files.sha256."""
    return dict(line.split()[::-1] for line in VENDOR_MANIFEST.read_text().splitlines() if line.strip())


def verified_vendor_file(root: Path, rel: str) -> Path:
    """node_modules/<rel>, checked against vendor-files.sha256 (npm ci checked the tarball; this checks the file used)."""
    expected = vendor_manifest()
    if rel not in expected:
        raise VerificationError(f"{rel} has no pinned sha256 in {VENDOR_MANIFEST.name}")
    path = root / "node_modules" / rel
    if not path.exists():
        raise VerificationError(f"{path} is missing: run `npm ci` in {root} (the Makefile's setup does).")
    _expect(path, expected[rel], f"vendored file {rel}")
    return path


def cdn_url() -> str:
    """The CDN base URL (CHAPTER2_PYODIDE_CDN overrides it, e.g. for a mirror); always ends with '/'."""
    url = os.environ.get("CHAPTER2_PYODIDE_CDN", CDN_URL)
    return url if url.endswith("/") else url + "/"


def sri(path: Path) -> str:
    """Subresource-integrity value ("sha256-<base64>") of a file."""
    return "sha256-" + base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()


def cdn_integrity(root: Path) -> dict[str, str]:
    """SRI values the browser checks for every core file it takes from the CDN (verified copies from npm)."""
    return {name: sri(path) for name, path in verify_core(root).items()}


def numpy_wheel(root: Path) -> Path:
    """The vendored official numpy wheel (vendor/pyodide/), checked against the official lock's sha256."""
    digest = official_lock(root)["packages"]["numpy"]["sha256"]
    wheel = root / VENDOR_DIR / NUMPY_WHEEL
    if not wheel.exists():
        raise VerificationError(f"{wheel} is missing: it is vendored in the repository (see vendor/pyodide/PROVENANCE.md).")
    _expect(wheel, digest, "numpy wheel for Pyodide (official pyodide-lock.json)")
    return wheel


def site_lock(root: Path, packages: dict[str, Path], numpy_file: Path | None = None) -> dict:
    """The site's Pyodide lock: numpy, plus our packages ({lock name: archive}) with their sha256.

    numpy_file: the archive the site serves instead of the official wheel (compiled, see
    pycompile.py), or None for the official entry as published (CDN mode).
    """
    lock = official_lock(root)
    numpy = dict(lock["packages"]["numpy"])
    if numpy_file is not None:
        numpy.update(file_name=numpy_file.name, sha256=sha256(numpy_file), unvendored_tests=False)
    entries = {"numpy": numpy}
    main = next(iter(packages))  # the package itself first, then its on-demand data
    for name, path in packages.items():
        entries[name] = {
            "name": name, "version": path.stem.rsplit("-", 1)[-1],
            "file_name": path.name, "install_dir": "site", "sha256": sha256(path), "package_type": "package",
            "imports": [name] if name == main else [], "depends": ["numpy"] if name == main else [],
            "unvendored_tests": False,
        }
    return {"info": lock["info"], "packages": entries}


def sri_hex(digest: str) -> str:
    """The subresource-integrity form of a hex sha256 (what Pyodide passes to fetch for a locked package)."""
    return "sha256-" + base64.b64encode(bytes.fromhex(digest)).decode()
