"""Two builds from the same commit produce identical figure files and an identical wheel."""

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
    print(p.relative_to(out), hashlib.sha256(p.read_bytes()).hexdigest())
"""


def _build(out: Path) -> str:
    code = BUILD.format(hooks=str(ROOT / "docs" / "hooks"), root=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_two_builds_are_byte_identical(tmp_path):
    first, second = _build(tmp_path / "a"), _build(tmp_path / "b")
    assert first == second
    assert first.count("\n") >= 5 and "chapter2-" in first  # figures and the wheel were all listed
