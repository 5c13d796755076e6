"""Every snippet runs as `python snippets/NAME.py` in CPython and prints something."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = sorted((ROOT / "snippets").glob("*.py"))


def test_there_are_snippets():
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("path", SNIPPETS, ids=lambda p: p.name)
def test_snippet_runs(path):
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), f"{path.name} printed nothing"
    assert "nan" not in proc.stdout.lower().split()
