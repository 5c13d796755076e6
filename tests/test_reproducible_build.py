"""Two builds from the same commit produce identical figure files and an identical wheel: the site's (built once per
test run, tests/conftest.py) and one more, in a process of its own (another hash seed, a fresh matplotlib)."""

import hashlib
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]

BUILD = """
import hashlib, sys
from pathlib import Path
sys.path.insert(0, {hooks!r})
from chapter2.host.figures import build_all
from wheel import build_wheel
out = Path(sys.argv[1])
paths = build_all(out / "figures") + [build_wheel(Path({root!r}), out / "wheel")]
for p in sorted(paths):
    print(p.name, hashlib.sha256(p.read_bytes()).hexdigest())
"""


def _build(out: Path) -> dict[str, str]:
    """{file name: sha256} of every figure and the wheel, built by a fresh interpreter."""
    code = BUILD.format(hooks=str(ROOT / "docs" / "hooks"), root=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split() for line in proc.stdout.splitlines())


def _site_files(site_dir: Path, names) -> dict[str, str]:
    """The same files as the site ships them: figures under figures/, the wheel under pyodide/."""
    out = {}
    for name in names:
        path = site_dir / ("pyodide" if name.endswith(".whl") else "figures") / name
        out[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing from the site"
    return out


def test_two_builds_are_byte_identical(tmp_path, site_dir):
    fresh = _build(tmp_path / "b")
    assert len(fresh) >= 5 and any(name.startswith("chapter2-") for name in fresh)  # figures and the wheel
    assert _site_files(site_dir, fresh) == fresh
    assert {p.name for p in (site_dir / "figures").glob("*.svg")} == {n for n in fresh if n.endswith(".svg")}


def test_the_browser_wheel_leaves_out_exactly_the_host_folder():
    """What needs torch / triton / matplotlib lives in chapter2/host/, and only that folder stays out of the wheel."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("c2_wheel_under_test", ROOT / "docs" / "hooks" / "wheel.py")
    wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wheel)
    src = ROOT / "src" / "chapter2"
    shipped = {p.relative_to(src).as_posix() for p in wheel.package_files(src)}
    every = {p.relative_to(src).as_posix() for p in src.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
    assert shipped == {name for name in every if not name.startswith("host/")}
    assert {"kv_cache.py", "models/transformer.py", "devices.py"} <= shipped
    assert any(name.startswith("host/kernels/") for name in every)  # the kernels exist, just not in the wheel
