"""The fast loop's bookkeeping: the probe that sees which modules a test runs, the check at the end of a run,
and the rules that mark oracle and figure tests (tests/_fast_coverage.py, tests/conftest.py)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import pytest

import _fast_coverage as fc
from conftest import FIGURES, ORACLES, REASONS, uses

ROOT = Path(__file__).resolve().parents[1]


def test_a_probed_function_reports_its_module_when_it_runs():
    """In a fresh interpreter (this one's HITS is shared with whatever else the session ran, and one full run saw
    it miss here while it passed alone; the hook is what is under test, not that state): importing the module
    credits nothing, calling one of its functions credits its module."""
    code = ("import sys; sys.path.insert(0, 'tests'); import _fast_coverage as fc\n"
            "from chapter2 import format as fmt\n"
            "assert 'src/chapter2/format.py' not in fc.HITS, sorted(fc.HITS)\n"
            "fmt.sig(1234.5)\n"
            "print(sorted(fc.HITS))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "src/chapter2/format.py" in out.stdout


def test_probing_keeps_docstrings_signatures_and_line_numbers():
    source = 'def f(a, b=2):\n    """Doc."""\n    x = a + b\n    return x\n\n\ndef g():\n    return 1 / 0\n'
    env: dict = {}
    exec(fc.probed_code(source, "probe_example.py", "src/chapter2/probe_example.py"), env)
    fc.HITS.discard("src/chapter2/probe_example.py")
    assert env["f"].__doc__ == "Doc." and env["f"].__defaults__ == (2,)
    assert env["f"](1) == 3 and "src/chapter2/probe_example.py" in fc.HITS
    with pytest.raises(ZeroDivisionError) as caught:
        env["g"]()
    assert caught.traceback[-1].lineno + 1 == 8  # the line of `return 1 / 0`, as in the source


def test_a_triton_kernel_is_left_as_written():
    source = "import types\njit = lambda f: f\n@jit\ndef kernel():\n    return 1\n"
    env: dict = {}
    exec(fc.probed_code(source, "k.py", "src/chapter2/k.py"), env)
    fc.HITS.discard("src/chapter2/k.py")
    assert env["kernel"]() == 1 and "src/chapter2/k.py" not in fc.HITS


def test_importing_a_module_is_not_running_it(tmp_path, monkeypatch):
    """Functions that a module's top level calls while it is imported are not credited to the running test;
    calling one afterwards is."""
    monkeypatch.setattr(fc, "ROOT", tmp_path)
    (tmp_path / "src" / "chapter2").mkdir(parents=True)
    path = tmp_path / "src" / "chapter2" / "probe_import.py"
    path.write_text("def alt():\n    return 'text'\n\n\nALT = alt()\n")
    spec = importlib.util.spec_from_file_location("c2_probe_import", path)
    module = importlib.util.module_from_spec(spec)
    fc.HITS.discard("src/chapter2/probe_import.py")
    spec.loader.exec_module(module)
    assert module.ALT == "text" and "src/chapter2/probe_import.py" not in fc.HITS
    module.alt()
    assert "src/chapter2/probe_import.py" in fc.HITS


def test_the_check_names_a_module_without_a_fast_test_and_a_stale_exception():
    every = set(fc.modules())
    nodeids = {test for test, _ in fc.NOT_FAST.values()}
    assert fc.problems(every - set(fc.NOT_FAST), nodeids) == []
    missing = fc.problems(every - set(fc.NOT_FAST) - {"src/chapter2/roofline.py"}, nodeids)
    assert missing == ["src/chapter2/roofline.py: no fast test runs any of its functions "
                       "(make test-fast would not notice it break)"]
    some = next(iter(fc.NOT_FAST))
    stale = fc.problems(every, nodeids)
    assert stale == [f"{rel}: a fast test runs it now; remove it from NOT_FAST in tests/_fast_coverage.py"
                     for rel in fc.modules() if rel in fc.NOT_FAST]
    assert any(some in line for line in fc.problems(every - set(fc.NOT_FAST), nodeids - {fc.NOT_FAST[some][0]}))


def test_every_watched_module_with_a_function_is_checked():
    listed = set(fc.modules())
    assert "src/chapter2/roofline.py" in listed and "docs/hooks/build_site.py" in listed
    assert "snippets/ops_per_byte.py" in listed
    assert "src/chapter2/__init__.py" not in listed  # a docstring and a version: nothing to run
    assert set(fc.NOT_FAST) <= listed


def test_not_fast_names_tests_that_exist():
    for rel, (test, why) in fc.NOT_FAST.items():
        file, name = test.split("::")
        assert re.search(rf"^def {re.escape(name)}\(", (ROOT / file).read_text(), re.M), (rel, test)
        assert why, rel


def _item(fn, **fixtures):
    defs = {name: [types.SimpleNamespace(func=f)] for name, f in fixtures.items()}
    return types.SimpleNamespace(function=fn, _fixtureinfo=types.SimpleNamespace(name2fixturedefs=defs))


def _require(name):  # stands for _oracles.require
    return types.ModuleType(name)


transformers = types.ModuleType("transformers")


def _builds_a_pipeline():  # a test helper of the module
    import diffusers  # noqa: F401


def test_oracle_rule_sees_the_ways_a_test_reaches_an_oracle():
    def by_require():
        return _require("transformers")

    def by_import():
        from torch.utils.flop_counter import FlopCounterMode  # noqa: F401

    def by_global():
        return transformers.AutoConfig

    def by_helper():
        return [_builds_a_pipeline() for _ in range(1)]

    def by_fixture(model):
        return model

    def plain():
        return "transformers are not used here", sys.version

    for fn in (by_require, by_import, by_global, by_helper):
        assert uses(_item(fn), ORACLES), fn.__name__
    assert uses(_item(by_fixture, model=by_global), ORACLES)
    assert not uses(_item(plain), ORACLES) and not uses(_item(by_fixture, model=plain), ORACLES)


def test_figure_rule_sees_matplotlib_and_the_figure_registry():
    def draws():
        from chapter2.host.figures import render_svg

        return render_svg("roofline")

    def plots():
        import matplotlib.pyplot as plt

        return plt

    def plain():
        return "a figure"

    assert uses(_item(draws), FIGURES) and uses(_item(plots), FIGURES) and not uses(_item(plain), FIGURES)


def test_every_marker_is_declared_with_its_meaning():
    declared = {line.split(":")[0] for line in
                tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]}
    assert {"browser", "slow", *REASONS} <= declared


def test_oracle_figure_and_bench_tests_are_slow(request):
    for item in request.session.items:
        if any(item.get_closest_marker(r) for r in REASONS):
            assert item.get_closest_marker("slow") is not None, item.nodeid
