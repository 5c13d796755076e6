"""chapter2._browser, what the site's worker calls in Pyodide, run here in CPython; and the lazy calculators
package it relies on (importing chapter2.calculators imports no calculator module)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

from chapter2 import _browser

ROOT = Path(__file__).resolve().parents[1]


def _answer(text: str):
    return json.loads(text)


# ------------------------------------------------------------------ run: the value of the last expression


def test_run_returns_the_last_expressions_value_as_json():
    assert _answer(_browser.run("x = 2\nx * 21")) == {"ok": True, "value": 42}
    assert _answer(_browser.run("import numpy as np\nnp.arange(3) * 1.5")) == {"ok": True, "value": [0.0, 1.5, 3.0]}
    assert _answer(_browser.run("__name__")) == {"ok": True, "value": "__main__"}
    assert _answer(_browser.run("x = 1")) == {"ok": True, "value": None}  # no expression last
    assert _answer(_browser.run("1 + 1;")) == {"ok": True, "value": None}  # a ";" asks for no value
    assert _answer(_browser.run("1 + 1  # a comment; not a semicolon")) == {"ok": True, "value": 2}
    assert _answer(_browser.run("")) == {"ok": True, "value": None}


def test_each_run_starts_in_a_fresh_namespace():
    assert _answer(_browser.run("leak = 1\nleak"))["value"] == 1
    failed = _answer(_browser.run("leak"))
    assert failed["ok"] is False and failed["error"] == "NameError: name 'leak' is not defined"


@dataclasses.dataclass
class _Point:
    x: float
    label: str


def test_jsonable_turns_numpy_dataclasses_and_non_finite_floats_into_json():
    value = {1: (np.float32(0.5), np.int64(3)), "p": _Point(math.inf, "a"), "n": [math.nan, -math.inf],
             "a": np.array([[1, 2], [3, 4]], dtype=np.int8)}
    assert _browser.jsonable(value) == {"1": [0.5, 3], "p": {"x": "Infinity", "label": "a"}, "n": ["NaN", "-Infinity"],
                                        "a": [[1, 2], [3, 4]]}
    json.dumps(_browser.jsonable(value), allow_nan=False)  # strict JSON: what JSON.parse in the worker reads


def test_an_error_is_one_line_and_a_traceback_from_the_readers_code():
    failed = _answer(_browser.run("x = 1\ndef f():\n    raise ValueError('boom')\nf()"))
    assert failed["ok"] is False and failed["error"] == "ValueError: boom"
    trace = failed["traceback"]
    assert trace.startswith("Traceback") and 'File "<exec>", line 4' in trace and 'File "<exec>", line 3, in f' in trace
    assert "_browser.py" not in trace  # this module's frames are not the reader's business
    syntax = _answer(_browser.run("1 +"))
    assert syntax["ok"] is False and syntax["error"].startswith("SyntaxError") and "<exec>" in syntax["traceback"]


def test_running_out_of_memory_is_flagged():
    assert _answer(_browser.run("raise MemoryError")) == {"ok": False, "oom": True, "error": "MemoryError"}
    assert _answer(_browser.run_script("raise MemoryError")) == {"ok": False, "oom": True, "error": "MemoryError"}


# ------------------------------------------------------------------ run_script: what a snippet printed


def test_run_script_returns_what_was_printed_and_the_error_under_it():
    ok = _answer(_browser.run_script("import sys\nprint('out')\nprint('err', file=sys.stderr)\n2 + 2"))
    assert ok == {"ok": True, "value": {"stdout": "out\nerr\n", "error": None}}
    failed = _answer(_browser.run_script("print('before')\nraise ValueError('boom')"))["value"]
    assert failed["stdout"] == "before\n"
    assert failed["error"].rstrip().endswith("ValueError: boom") and 'File "<exec>", line 2' in failed["error"]
    assert "_browser.py" not in failed["error"]
    assert _answer(_browser.run_script("raise SystemExit(3)"))["value"]["error"].rstrip().endswith("SystemExit: 3")


# ------------------------------------------------------------------ calc and versions


def test_calc_answers_as_compute_json_does_and_names_a_bad_field():
    good = _answer(_browser.calc("matmul_cost", json.dumps({"m": "64"}), "chapter2.calculators.nn"))
    assert good["ok"] is True and good["value"]["ok"] is True and good["value"]["outputs"]
    bad = _answer(_browser.calc("matmul_cost", json.dumps({"m": "abc"})))
    assert bad == {"ok": True, "value": {"ok": False, "field": "m", "message": "Tokens (rows of x): 'abc' is not a number"}}
    unknown = _answer(_browser.calc("no_such_calculator", "{}"))
    assert unknown["ok"] is False and "unknown calculator 'no_such_calculator'" in unknown["error"]
    missing = _answer(_browser.calc("matmul_cost", "{}", "chapter2.calculators.no_such_module"))
    assert missing["ok"] is False and missing["error"].startswith("ModuleNotFoundError")


def test_versions():
    import chapter2

    assert _answer(_browser.versions()) == {"chapter2": chapter2.__version__, "numpy": np.__version__}


def _fresh(code: str) -> dict:
    """Run `code` in a new interpreter (nothing imported yet) and return the JSON it prints."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout)


MODULES = "sorted(m for m in sys.modules if m.startswith('chapter2.calculators.') and not m.rsplit('.', 1)[1].startswith('_'))"


def test_a_calculator_runs_with_only_its_own_module_imported():
    """The worker passes the calculator's module (calculators.json): a page's first result waits for it alone."""
    got = _fresh("import json, sys\nfrom chapter2 import _browser\n"
                 "answer = json.loads(_browser.calc('matmul_cost', '{}', 'chapter2.calculators.nn'))\n"
                 f"print(json.dumps({{'ok': answer['value']['ok'], 'modules': {MODULES}}}))")
    assert got == {"ok": True, "modules": ["chapter2.calculators.nn"]}


def test_the_calculators_package_imports_its_modules_only_when_asked():
    got = _fresh("import json, pkgutil, sys\nimport chapter2.calculators as c\n"
                 f"before = {MODULES}\nnames = {{calc.fn.__module__ for calc in c.REGISTRY.values()}}\n"
                 "public = sorted('chapter2.calculators.' + m.name for m in pkgutil.iter_modules(c.__path__) if m.name[0] != '_')\n"
                 f"print(json.dumps({{'before': before, 'after': {MODULES}, 'registering': sorted(names), 'public': public}}))")
    assert got["before"] == []
    assert got["after"] == got["public"] == got["registering"]  # REGISTRY: every module imported, each registers one at least
    assert len(got["public"]) >= 10


def test_a_calculator_module_is_an_attribute_of_the_package():
    from chapter2 import calculators

    assert calculators.bottlenecks.__name__ == "chapter2.calculators.bottlenecks"
    assert not hasattr(calculators, "no_such_module")


def test_the_browser_wheel_carries_the_module():
    spec = importlib.util.spec_from_file_location("c2_wheel_hook", ROOT / "docs" / "hooks" / "wheel.py")
    wheel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wheel)
    src = ROOT / "src" / "chapter2"
    assert src / "_browser.py" in wheel.package_files(src)
