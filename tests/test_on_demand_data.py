"""The browser loads large data files on demand (docs/hooks/wheel.py, ON_DEMAND): a calculator that reads
one must say so there, or it would fail in the browser's calculator worker, which loads those files' archive
only before the calculators listed for them. Checked by running every calculator with its defaults in a fresh
interpreter and recording (an audit hook) which files it opens, caches emptied between calculators."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import functools, gc, json, sys
from pathlib import Path
import chapter2
from chapter2 import calculators, stepper

package = Path(chapter2.__file__).resolve().parent
current, opened = None, {}

def hook(event, args):
    if current is not None and event in ("open", "os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes, Path)):
        try:
            rel = Path(args[0] if not isinstance(args[0], bytes) else args[0].decode()).resolve().relative_to(package)
        except ValueError:
            return
        opened.setdefault(current, set()).add(rel.as_posix())

sys.addaudithook(hook)
for name in sorted(calculators.REGISTRY):
    for obj in gc.get_objects():  # what an earlier calculator loaded and cached must be loaded again
        if isinstance(obj, functools._lru_cache_wrapper):
            obj.cache_clear()
    stepper._LOADED.clear()  # the tiny model, kept by chapter2.stepper.load for every calculator that runs it
    current = name
    calculators.compute(name)
    current = None
print(json.dumps({k: sorted(v) for k, v in opened.items()}))
"""


def test_calculators_that_read_on_demand_data_are_listed():
    spec = importlib.util.spec_from_file_location("c2_wheel_under_test", ROOT / "docs" / "hooks" / "wheel.py")
    wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wheel)
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    opened = json.loads(proc.stdout.splitlines()[-1])
    for key, (paths, listed) in wheel.ON_DEMAND.items():
        readers = sorted(name for name, files in opened.items() if set(files) & set(paths))
        assert readers == sorted(listed), (f"calculators that open {paths}: {readers}; "
                                           f"docs/hooks/wheel.py ON_DEMAND[{key!r}] lists {sorted(listed)}")
        assert all((ROOT / "src" / "chapter2" / p).is_file() for p in paths), f"ON_DEMAND[{key!r}] names a file that is gone"
