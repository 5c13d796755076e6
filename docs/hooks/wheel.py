"""Build the pure-Python `chapter2` wheel that the browser loads into Pyodide.

A wheel is a zip with the package files and a `*.dist-info` folder; writing it
here (instead of calling a build backend) keeps the site build fast and makes
the wheel byte-for-byte reproducible: sorted entries, fixed timestamps.

What stays out is decided by the folder layout, not by a list of names: the
package keeps everything that needs torch, Triton or matplotlib (kernels, the
torch twin, benchmarks, figures) in one subpackage, `chapter2/host/`, and
Pyodide has none of those libraries, so that one folder is skipped (plus
bytecode caches). A new module is shipped unless it is put under `host/`.

The browser loads the same files, split in two (`browser_archives`): the package
without its large on-demand data files (ON_DEMAND: the tiny model's weights
and corpus, 1.9 MB that only the prefill/decode stepper and a few snippets
read), and one archive per group of such files, fetched before the code that
reads them first runs.
The wheel offered for download stays whole.
"""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

FIXED_TIME = (2020, 1, 1, 0, 0, 0)
HOST_ONLY = "host"  # chapter2/host/: needs a host Python with torch / triton / matplotlib; never in the browser
# Large data files the browser loads on demand, each group from its own archive: name -> (files under the
# package, the calculators that read them). The tiny model's weights and corpus (1.9 MB) are only read by
# the prefill/decode stepper and the token walk; its tokenizer and config stay in the package (the tokenizer calculator uses
# them). Snippets get everything. tests/test_on_demand_data.py checks the lists against the files each
# calculator really opens.
ON_DEMAND = {"tiny_lm": (("data/tiny_lm/model.safetensors", "data/tiny_lm/corpus.txt", "data/tiny_lm/heldout.txt"),
                         ("prefill_decode", "token_walk"))}


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def package_files(src: Path) -> list[Path]:
    """Every file of the package except `host/` and bytecode caches, sorted."""
    files = []
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_dir() or rel.parts[0] == HOST_ONLY or "__pycache__" in rel.parts or path.suffix == ".pyc":
            continue
        files.append(path)
    return files


def _metadata(project_root: Path) -> tuple[str, str, list[tuple[str, bytes]]]:
    """name, version and the dist-info entries (METADATA, WHEEL, top_level.txt) of the package."""
    meta = tomllib.loads((project_root / "pyproject.toml").read_text())["project"]
    name, version = meta["name"], meta["version"]
    dist_info = f"{name}-{version}.dist-info"
    deps = "".join(f"Requires-Dist: {d}\n" for d in meta.get("dependencies", []))
    return name, version, [
        (f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{deps}".encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: chapter2-site\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
        (f"{dist_info}/top_level.txt", f"{name}\n".encode()),
    ]


def _write_zip(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    """Write `entries` (name in the archive, bytes), in their order, into the zip at `path`: the wheel and the
    browser's archives alike. A fixed timestamp and mode per entry make the same entries the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arc, data in entries:
            info = zipfile.ZipInfo(arc, date_time=FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def browser_archives(project_root: Path, out_dir: Path) -> dict[str, Path]:
    """The package as the browser loads it, as plain zip archives unpacked into site-packages.

    Returns {"chapter2": chapter2-VERSION.zip (every shipped file but the ON_DEMAND files, plus
    the dist-info), "chapter2-tiny-lm": chapter2-tiny-lm-VERSION.zip, ...}: the keys are the
    package names of the site's Pyodide lock.
    """
    name, version, dist_info = _metadata(project_root)
    src = project_root / "src" / name
    core, parts = [], {key: [] for key in ON_DEMAND}
    for path in package_files(src):
        rel = path.relative_to(src).as_posix()
        key = next((k for k, (paths, _) in ON_DEMAND.items() if rel in paths), None)
        (parts[key] if key else core).append((f"{name}/{rel}", path.read_bytes()))
    out = {name: _write_zip(out_dir / f"{name}-{version}.zip", core + dist_info)}
    for key, entries in parts.items():
        pkg = f"{name}-{key.replace('_', '-')}"
        out[pkg] = _write_zip(out_dir / f"{pkg}-{version}.zip", entries)
    return out


def build_wheel(project_root: Path, out_dir: Path) -> Path:
    """Write chapter2-VERSION-py3-none-any.whl into `out_dir` and return its path."""
    name, version, dist_info_entries = _metadata(project_root)
    src = project_root / "src" / name
    dist_info = f"{name}-{version}.dist-info"
    entries = [(f"{name}/{path.relative_to(src).as_posix()}", path.read_bytes()) for path in package_files(src)]
    entries += dist_info_entries
    record = "".join(f"{arc},{_record_hash(data)},{len(data)}\n" for arc, data in entries) + f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode()))
    return _write_zip(out_dir / f"{name}-{version}-py3-none-any.whl", entries)
