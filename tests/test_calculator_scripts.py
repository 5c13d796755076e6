"""Copy as Python: every calculator's script, run from the installed wheel, prints what the page shows.

For every calculator, at its defaults and with one input changed, the page's script
(`chapter2.calculators._script.python_script` of the parsed inputs, which the page shows in its
`<pre data-python-script>` block) runs with plain `python` in a fresh virtual environment holding only the
`chapter2` wheel the site offers and numpy, from a folder outside the repository; what it prints must be
`expected_output`: each text result under its label exactly as the page writes it, each bar, each chart's data
digest (the page's figure carries it as data-digest) and every number at full precision, all computed here
by `calculators.evaluate`, the function the page's worker calls. tests/browser/test_share_in_browser.py checks
the other half: the block on the page is this script, and the page shows these results.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import numpy as np
import pytest

from chapter2 import calculators
from chapter2.calculators._script import expected_output, python_script
from test_calculator_numbers import _changed
from test_wheel_install import build_wheel, clean_env


def _one_change(name: str) -> dict:
    """The first input that can change alone and stays valid (a number rather than a select where there is one)."""
    calc = calculators.get(name)
    fields = sorted(calc.fields, key=lambda f: f.kind == "select")
    for field in fields:
        value = _changed(field)
        if value is None or field.name == "model_id" or not field.applies(calc.defaults()):
            continue  # (a field hidden at the defaults, the custom GPU's, is ignored by the calculator)
        raw = {field.name: value}
        if json.loads(calculators.compute_json(name, json.dumps(raw)))["ok"]:
            return raw
    raise AssertionError(f"{name}: no input can change alone")


CASES = [(name, raw) for name in sorted(calculators.REGISTRY) for raw in ({}, _one_change(name))]


def test_a_script_is_plain_python_with_the_parsed_inputs_as_literals():
    """The call passes every field, by name, as the literal of its parsed value; the script imports only chapter2."""
    for name, raw in CASES:
        result = calculators.evaluate(name, raw)
        script = python_script(name, result["inputs"])
        compile(script.encode(), f"{name}.py", "exec")  # as a file's bytes: no line may read as an encoding
        tree = ast.parse(script)
        imports = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert all(m.startswith("chapter2") for m in imports), imports
        call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                    and getattr(node.func, "id", "") == calculators.get(name).fn.__name__)
        assert {k.arg: ast.literal_eval(k.value) for k in call.keywords} == result["inputs"], name


def test_a_pasted_config_and_odd_text_survive_as_literals():
    """A pasted config.json (quotes, newlines, unicode) and a prompt with quotes and a backslash go into the script
    as literals that Python reads back to the same text."""
    from chapter2.models import FAMILY_CONFIG_DIR

    text = (FAMILY_CONFIG_DIR / "SmolLM3-3B.json").read_text() + "\n"
    for name, raw in (("kv_cache", {"config_json": text}), ("tokenizer", {"text": 'a "b" \\ c\n\t— ü'})):
        inputs = calculators.evaluate(name, raw)["inputs"]
        script = python_script(name, inputs)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout == expected_output(name, calculators.evaluate(name, raw))


@pytest.mark.slow  # a virtual environment, a pip install, and two scripts for each calculator in their own process
def test_every_calculator_s_script_prints_the_page_s_results_from_the_installed_wheel(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    (tmp_path / "constraints.txt").write_text(f"numpy=={np.__version__}\n")
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                          "--disable-pip-version-check", "--constraint", str(tmp_path / "constraints.txt"), str(wheel)],
                         capture_output=True, text=True, timeout=600, env=clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    reader = tmp_path / "reader"  # outside the repository: `import chapter2` finds the installed wheel only
    reader.mkdir()
    checked = set()
    for i, (name, raw) in enumerate(CASES):
        result = calculators.evaluate(name, raw)
        path = reader / f"{name}_{i}.py"
        path.write_text(python_script(name, result["inputs"]))
        run = subprocess.run([str(python), path.name], cwd=reader, capture_output=True, text=True, timeout=300,
                             env=clean_env())
        assert run.returncode == 0, f"{name} {raw}: {run.stderr[-2000:]}"
        assert run.stdout == expected_output(name, result), f"{name} {raw}"
        checked.add(name)
    assert checked == set(calculators.REGISTRY)
