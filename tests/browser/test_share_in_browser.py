"""Export and Copy as Python in the browser (docs/assets/chapter2/share.js), for every calculator on the built site.

At its defaults and after one input changed: the JSON export holds the inputs Python parsed (named with their
units), the results exactly as the page shows them and the numbers CPython computes (`calculators.evaluate`),
to 12 digits (the tiny model's probabilities differ in their last bits between Pyodide and CPython; the
rest are equal); the CSV holds the same inputs and numbers, one column each. "Copy as Python" copies the
script the page shows in its `<pre data-python-script>` block, which is `python_script` of those inputs; run
with CPython, it prints every text the page shows under its label, every bar, every chart's data digest (the
page's figure carries it) and the numbers of the export. A stepper's step drawn at build time, with no Python
asked, gets its record from Python when exported. No request leaves 127.0.0.1.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from _calculators import calculator_pages, open_workbenches, visit
from chapter2 import calculators
from chapter2.calculators._script import expected_output, python_script
from test_calculator_scripts import _one_change

pytestmark = pytest.mark.browser
WAIT_MS = 180_000
SRC = str(Path(__file__).resolve().parents[2] / "src")


def _fields(calc) -> dict:
    return calc.evaluate("el => Object.fromEntries([...el.querySelector('form').elements].filter(e => e.name)"
                         ".map(e => [e.name, e.value]))")


def _texts(calc) -> dict:
    """{output: text} of the text outputs and the caption, as shown."""
    return calc.evaluate("el => Object.fromEntries([...el.querySelectorAll('[data-output]')]"
                         ".filter(dd => !dd.dataset.kind).map(dd => [dd.dataset.output, dd.textContent]))")


def _digests(calc) -> dict:
    return calc.evaluate("el => Object.fromEntries([...el.querySelectorAll('[data-kind=chart]')].map(dd => "
                         "[dd.dataset.output, dd.querySelector('figure').dataset.digest]))")


def _settled(page, name: str, before: int) -> None:
    page.wait_for_function(
        "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return !el.hasAttribute('aria-busy') && (+el.dataset.computed || 0) > b; }", arg=[name, before], timeout=WAIT_MS)


def _download(page, calc, kind: str) -> str:
    with page.expect_download(timeout=WAIT_MS) as got:
        calc.locator(f'[data-share="{kind}"]').click()
    path = got.value.path()
    assert got.value.suggested_filename == f"{calc.get_attribute('data-calculator')}.{kind}"
    return Path(path).read_text()


def rounded(value):
    """Every number (an int too: JSON has no 1.0, so an export's 4.0 reads back as 4) as a float of 12 digits."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(f"{value:.12g}")
    if isinstance(value, list):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def _same_number(cell: str, value) -> bool:
    if value is None:
        return cell == ""
    if isinstance(value, list):
        return json.loads(cell) == value
    if isinstance(value, str):
        return cell == value
    return float(cell) == float(value)


def _check(page, calc, name: str, raw: dict, what: str) -> None:
    """The calculator's export and script match CPython's answer for the form's inputs `raw`, and the page."""
    want = calculators.evaluate(name, raw)
    spec = calculators.get(name)
    shown = _texts(calc)
    assert shown == {o.key: want["outputs"][o.key] for o in spec.outputs if o.kind in ("text", "caption")}, what

    data = json.loads(_download(page, calc, "json"))
    columns = {f.name: f.column for f in spec.fields}
    assert data["calculator"] == name and data["title"] == spec.title, what
    assert data["inputs"] == {columns[k]: v for k, v in want["inputs"].items()}, what
    # every float to 12 digits: the tiny model's probabilities differ in their last bits between Pyodide's numpy
    # and this one's BLAS (as tests/browser/test_browser_calculators.py allows); every other number is equal
    assert rounded(data["numbers"]) == rounded(json.loads(json.dumps(want["numbers"]))), what
    labels = {o.key: o.label for o in spec.outputs}
    assert {k: v for k, v in data["results"].items() if isinstance(v, str)} == {labels[k]: v for k, v in shown.items()}, what
    for o in spec.outputs:
        if o.kind == "bars":
            assert data["results"][o.label] == [[label, float(f"{v:.9g}")] for label, v in want["outputs"][o.key]], what
    assert data["link"].endswith(f"#calculator-{name}"), what

    table = list(csv.reader(io.StringIO(_download(page, calc, "csv"))))
    assert len(table) == 2 and len(table[0]) == len(table[1]), what
    row = dict(zip(table[0], table[1], strict=True))
    assert set(row) == {f"inputs.{k}" for k in data["inputs"]} | {f"numbers.{k}" for k in data["numbers"]}, what
    for key, value in data["numbers"].items():
        assert _same_number(row[f"numbers.{key}"], value), (what, key, row[f"numbers.{key}"], value)  # CSV = JSON
    for key, value in data["inputs"].items():
        assert _same_number(row[f"inputs.{key}"], value), (what, key)

    calc.locator('[data-share="python"]').click()
    page.wait_for_function("n => document.querySelector(`[data-calculator=${n}] [data-python-script]`).dataset.state"
                           " === 'current' && !document.querySelector(`#c2-${n}-python`).hidden", arg=name, timeout=WAIT_MS)
    script = calc.locator("[data-python-script]").text_content()
    assert script == python_script(name, want["inputs"]), what
    assert page.evaluate("() => navigator.clipboard.readText()") == script, what
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": SRC})
    assert run.returncode == 0, (what, run.stderr[-2000:])
    printed = run.stdout
    assert printed == expected_output(name, want), what
    for o in spec.outputs:  # what the page shows, line by line in what the script printed
        if o.kind in ("text", "caption"):
            assert f"{o.label}: {shown[o.key]}\n" in printed, (what, o.key)
        elif o.kind == "chart":
            assert f"{o.label}: chart data {_digests(calc)[o.key]}\n" in printed, (what, o.key)
    numbers = printed.split("\nNumbers:\n", 1)[1].splitlines()
    printed_numbers = {line[2:].split(": ", 1)[0]: ast.literal_eval(line.split(": ", 1)[1]) for line in numbers}
    assert rounded(printed_numbers) == rounded(data["numbers"]), what  # the export's, printed (1.0 is 1 in JSON)


def test_export_and_python_of_every_calculator(watched, site_dir):
    checked = set()
    by_page: dict[str, list[str]] = {}
    for name, path in sorted(calculator_pages(site_dir, set(calculators.REGISTRY)).items()):
        by_page.setdefault(path, []).append(name)
    watched.page.context.grant_permissions(["clipboard-read", "clipboard-write"])  # one tab for the whole sweep
    page = None
    for path, names in by_page.items():
        page = visit(watched, path, page)
        open_workbenches(page)
        for name in names:
            calc = page.locator(f'[data-calculator="{name}"]')
            _check(page, calc, name, _fields(calc), f"{name} at its defaults")
            change = _one_change(name)
            field = next(f for f in calculators.get(name).fields if f.name in change)
            before = int(calc.get_attribute("data-computed") or 0)
            control = calc.locator(f'[name="{field.name}"]')
            if field.kind == "select":
                control.select_option(change[field.name])
            else:
                control.fill(change[field.name])
            _settled(page, name, before)
            _check(page, calc, name, _fields(calc), f"{name} with {change}")
            checked.add(name)
        watched.assert_clean()
    assert checked == set(calculators.REGISTRY)


def test_a_stepper_s_prebuilt_step_is_exported_with_its_own_numbers_and_script(watched, site_dir):
    """Forward on the FlashAttention stepper paints a step drawn at build time (no Python asked); its export and its
    script are that step's, which share.js asks of Python."""
    path = calculator_pages(site_dir, {"flash_stepper"})["flash_stepper"]
    page = watched.goto(path)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_workbenches(page)
    calc = page.locator('[data-calculator="flash_stepper"]')
    calc.locator('[data-share="python"]').click()  # the panel open: it follows the step
    page.wait_for_function("() => window.chapter2.lanes && window.chapter2.lanes.calc.state === 'ready'", timeout=WAIT_MS)
    before = int(calc.get_attribute("data-computed") or 0)
    calc.locator('button[data-step="1"]').click()
    _settled(page, "flash_stepper", before)
    assert "drawn when the site was built" in calc.locator("[data-calc-status]").inner_text()
    raw = _fields(calc)
    assert raw["tiles"] == "1"
    page.wait_for_function("() => document.querySelector('[data-calculator=flash_stepper] [data-python-script]')"
                           ".dataset.state === 'current'", timeout=WAIT_MS)
    assert re.search(r"^    tiles=1,$", calc.locator("[data-python-script]").text_content(), re.M)
    _check(page, calc, "flash_stepper", raw, "flash_stepper at a prebuilt step")
    watched.assert_clean()
