"""Two builds from the same commit produce identical figure files and an identical wheel."""

import subprocess
import sys
from pathlib import Path

import pytest

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
    print(p.relative_to(out), hashlib.sha256(p.read_bytes()).hexdigest())
"""


def _build(out: Path) -> str:
    code = BUILD.format(hooks=str(ROOT / "docs" / "hooks"), root=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow  # every figure and the wheel, built twice in subprocesses, 10 s
def test_two_builds_are_byte_identical(tmp_path):
    first, second = _build(tmp_path / "a"), _build(tmp_path / "b")
    assert first == second
    assert first.count("\n") >= 5 and "chapter2-" in first  # figures and the wheel were all listed


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
