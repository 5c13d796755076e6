"""Python bytecode for the browser: the site serves its Python precompiled.

Pyodide 0.27.7 ships the standard library (`python_stdlib.zip`) and numpy as
`.py` sources, so every reader's browser compiles each module it imports, every
time a page starts Python: about 1.5 s of a 4 s cold start on a 2-core machine
(scripts/bench_site.py, breakdown). The build compiles them once instead, with
Pyodide's own interpreter (CPython 3.12 in WebAssembly, run by node from the
verified npm package), so the bytecode is exactly what that interpreter would
have written itself:

- the standard library and numpy: sources replaced by `.pyc` (sourceless),
  what cannot run in a browser left out (type stubs, C headers, numpy.f2py);
- chapter2: sources kept (tracebacks of the reader's snippets show the lines),
  `__pycache__/*.pyc` added.

Inputs are the verified files (pyodide_files.verify_core, numpy_wheel); outputs
are deterministic (sorted entries, fixed timestamps, unchecked hash-based pyc,
PYTHONHASHSEED=0) and cached in `.cache/pyodide-compiled/` under the sha256 of
their input and of this step's code, so a build recompiles only what changed.
CDN mode loads the official (uncompiled) files from the CDN.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import subprocess
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "pycompile.mjs"
STDLIB_PREFIX = "/lib/python312.zip/"  # where Pyodide mounts python_stdlib.zip (zipimport paths)
SITE_PREFIX = "/lib/python3.12/site-packages/"  # where Pyodide unpacks packages
# unused at run time in a browser: type stubs, C headers and sources, static libraries; numpy's Fortran
# wrapper generator and PyInstaller hooks (build tools)
DROP = (".pyi", ".pxd", ".h", ".c", ".a", "numpy/f2py/", "numpy/_pyinstaller/")


class CompileError(RuntimeError):
    pass


def _key(path: Path, job: dict) -> str:
    h = hashlib.sha256()
    for part in (path.read_bytes(), SCRIPT.read_bytes(), Path(__file__).read_bytes(), json.dumps(job, sort_keys=True).encode()):
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:20]


def compile_archives(root: Path, jobs: list[tuple[Path, str, str, str]], out_dir: Path) -> list[Path]:
    """Compile each (input archive, output name, mode, prefix); return the output paths, in order.

    mode: "sourceless" or "cached" (see pycompile.mjs). Cached results are copied from
    .cache/pyodide-compiled/; the rest are compiled in one node process.
    """
    cache = root / ".cache" / "pyodide-compiled"
    cache.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    results, todo = [], []
    for src, name, mode, prefix in jobs:
        job = {"mode": mode, "prefix": prefix, "drop": list(DROP) if mode == "sourceless" else []}
        cached = cache / f"{_key(src, job)}-{name}"
        results.append((cached, out_dir / name))
        if not cached.exists():
            # a private name until complete: builds that run at the same time (tests) may compile the same file
            todo.append({"input": str(src), "output": f"{cached}.{os.getpid()}.part", "final": str(cached), **job})
    if todo:
        node = shutil.which("node")
        if node is None:
            raise CompileError("node is missing: the build compiles the browser's Python with Pyodide in node "
                               "(install Node.js; `make setup` needs it for npm too)")
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"indexURL": str(root / "node_modules" / "pyodide") + "/", "jobs": todo}, f)
        try:
            proc = subprocess.run([node, str(SCRIPT), f.name], capture_output=True, text=True, timeout=600)
        finally:
            Path(f.name).unlink()
        if proc.returncode != 0:
            raise CompileError("compiling Python for the browser failed:\n" + (proc.stderr or proc.stdout)[-3000:])
        for job in todo:
            os.replace(job["output"], job["final"])
    for cached, out in results:
        shutil.copyfile(cached, out)
    _prune(cache, {c.name for c, _ in results})
    return [out for _, out in results]


def _prune(cache: Path, keep: set[str], per_name: int = 3, min_age_s: float = 3600) -> None:
    """Keep the cache small: for each output name, this build's entry, the newest few others and
    whatever is less than an hour old (another build may be using it); also stale partial files."""
    by_name: dict[str, list[tuple[float, Path]]] = {}
    now = time.time()
    for p in cache.iterdir():
        try:
            age = now - p.stat().st_mtime
        except FileNotFoundError:
            continue
        if p.name.endswith(".part"):
            if age > min_age_s:
                p.unlink(missing_ok=True)
        elif p.is_file() and "-" in p.name and p.name not in keep:
            by_name.setdefault(p.name.split("-", 1)[1], []).append((age, p))
    for entries in by_name.values():
        for age, p in sorted(entries)[per_name:]:
            if age > min_age_s:
                p.unlink(missing_ok=True)
