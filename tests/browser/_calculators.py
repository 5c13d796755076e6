"""Driving a calculator on a built page and comparing it with CPython: where each calculator is, what its form
holds, the digests of the charts it shows, waiting for its next recompute, its answer from Pyodide and from
CPython, and an axe-core audit of it. Shared by the browser tests of the live charts and of the steppers; the
axe audit also by the whole-page audit of tests/browser/test_reading.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from chapter2 import calculators, charts
from _fields import changed_value  # noqa: F401 - the browser tests import it from here
from conftest import local_only_context, wait_scrollables_checked

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"


def calculator_pages(site_dir: Path, names) -> dict[str, str]:
    """{calculator: path of the first built page (in sorted order) that has it}, for the calculators in `names`."""
    pages = {}
    for html in sorted(site_dir.rglob("index.html")):
        for name in re.findall(r'data-calculator="([\w-]+)"', html.read_text()):
            if name in names:
                pages.setdefault(name, html.parent.relative_to(site_dir).as_posix() + "/")
    return pages


# A calculator may sit in a workbench: a closed <details> block (`??? note "Workbench: ..."`) a reader opens on
# purpose. A test that drives or measures every calculator opens those blocks first, as a reader would; a
# calculator in a closed block has no size and takes no input. Works with JavaScript off too (evaluate runs in
# Playwright's own world): a <details> opens without the page's scripts.
OPEN_WORKBENCHES = """() => { let opened = 0;
  for (const calc of document.querySelectorAll('[data-calculator]'))
    for (let d = calc.closest('details'); d; d = d.parentElement && d.parentElement.closest('details'))
      if (!d.open) { d.open = true; opened += 1; }
  return opened; }"""


def open_workbenches(page) -> int:
    """Open every closed <details> that holds a calculator (nested ones too); returns how many it opened."""
    return page.evaluate(OPEN_WORKBENCHES)


# A link to `path` in the site's navigation, followed as a reader's click (runtime.js takes it and Material swaps the
# page in); returns false if the navigation has no such link.
FOLLOW_NAV_LINK = """path => { const a = [...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]
  .find(a => new URL(a.href).pathname === path); if (a) a.click(); return !!a; }"""


def visit(watched, path: str, page=None):
    """Site page `path` ("attention/", "" for the home page) as a reader moves through the site: loaded in the
    watched tab if `page` is None, else reached from `page` by its link in the navigation, which instant navigation
    swaps in (the workers that run the calculators' Python, started on an earlier page, live on; a full load instead
    fails here). Returns the tab once runtime.js has bound every page script to the page (its data-c2-page mark).

    The sweeps over every calculator page (CPython parity, fuzzed input, links, exports, e-notation) move so, as a
    reader would: Python starts once per sweep, not once per page. Measured here, quiet, 2026-12-03: their four
    modules took 208 CPU s against 253 with a fresh load of every page."""
    at = "/" + (path.strip("/") + "/").lstrip("/")  # the URL's path, as runtime.js marks it: /attention/, /
    if page is None:
        page = watched.goto(path)
        page.wait_for_function("p => document.documentElement.dataset.c2Page === p", arg=at)
        return page
    before = page.evaluate("() => document.documentElement.dataset.c2Pages")
    assert page.evaluate(FOLLOW_NAV_LINK, at), f"no link to {at} in the navigation"
    page.wait_for_function("([p, n]) => document.documentElement.dataset.c2Page === p"
                           " && document.documentElement.dataset.c2Pages !== n", arg=[at, before])
    after = page.evaluate("() => document.documentElement.dataset.c2Pages")
    assert int(after) == int(before) + 1, f"{at} was loaded afresh (page {after} of this document), not swapped in"
    return page


def chart_digests(calc) -> dict:
    """{output: digest} of the charts the calculator shows now."""
    return calc.evaluate("el => Object.fromEntries([...el.querySelectorAll('[data-kind=chart]')].map(dd => "
                         "[dd.dataset.output, dd.querySelector('figure').dataset.digest]))")


def cpython_chart_digests(name: str, raw: dict | None = None) -> dict:
    """{output: digest} of the charts CPython draws for these raw inputs (the defaults without them)."""
    out = calculators.compute(name, raw)
    return {o.key: charts.digest(out[o.key]) for o in calculators.get(name).outputs if o.kind == "chart"}


def form_values(calc) -> dict:
    """{field: value} of the calculator's form, as the page holds them (strings)."""
    return calc.evaluate("el => Object.fromEntries([...el.querySelector('form').elements].filter(e => e.name)"
                         ".map(e => [e.name, e.value]))")


def computed(calc) -> int:
    """How many times the calculator has recomputed (its data-computed counter)."""
    return int(calc.get_attribute("data-computed") or 0)


def wait_recomputed(page, name: str, before: int, timeout_ms: int) -> None:
    """Wait until calculator `name` has recomputed since its counter read `before` and is no longer busy."""
    page.wait_for_function(
        "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return !el.hasAttribute('aria-busy') && (+el.dataset.computed || 0) > b; }", arg=[name, before], timeout=timeout_ms)


def pyodide_answer(page, name: str, raw: dict):
    """The page's Pyodide answer (its whole JSON, chart HTML included) for these raw inputs."""
    return page.evaluate("([n, r]) => window.chapter2.calc(n, r)", [name, raw])


def cpython_answer(name: str, raw: dict):
    """CPython's answer for the same raw inputs, through the same JSON entry point Pyodide calls."""
    return json.loads(calculators.compute_json(name, json.dumps(raw)))


def rounded(value):
    """Floats (the tiny model's probabilities) to 12 digits, to compare Pyodide's answer with CPython's: BLAS or
    not, the same value. Ints too: a float that is a whole number comes back from the page's JSON as an int
    (JavaScript has one number type), so 237507211952128.0 in CPython is 237507211952128 in the browser."""
    if isinstance(value, float | int) and not isinstance(value, bool):
        return float(f"{value:.12g}")
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def differences(got, want, at: str = "") -> list[str]:
    """Where two answers differ, one line per leaf ("numbers.kv_cache (B): 1 != 2"), for an assertion's message."""
    if isinstance(got, dict) and isinstance(want, dict):
        return [line for k in sorted(set(got) | set(want), key=str)
                for line in differences(got.get(k, "<missing>"), want.get(k, "<missing>"), f"{at}.{k}" if at else str(k))]
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        return [line for i, (g, w) in enumerate(zip(got, want, strict=True)) for line in differences(g, w, f"{at}[{i}]")]
    return [] if got == want else [f"{at}: {got!r} != {want!r}"[:300]]


def axe_problems(page, selector: str | None, label: str) -> list[str]:
    """axe-core's serious and critical violations inside `selector` (None: the whole document) on the loaded page,
    one line each, headed by `label`. The page's browser context needs bypass_csp, or its Content-Security-Policy
    blocks the injected script."""
    if not page.evaluate("() => 'axe' in window"):  # (once per page load)
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("s => axe.run(s || document, {resultTypes: ['violations']})", selector)
    return [f"{label}: {v['id']} ({v['impact']}, {len(v['nodes'])} nodes) {[n['target'][0] for n in v['nodes'][:3]]}: "
            f"{v['help']}" for v in result["violations"] if v["impact"] in ("serious", "critical")]


def axe_audit(browser, site_url: str, scheme: str, targets) -> list[str]:
    """axe_problems for each (path, selector, label) of `targets`, each page loaded afresh once at 1280 × 900 in the
    colour `scheme`, in one context that bypasses the CSP (for axe's script) and reaches only 127.0.0.1. The pages
    are audited as loaded, before any use: a Save-Data reader's, so no calculator starts Python while axe reads it
    (test_reading.py audits whole pages the same way)."""
    problems, by_path = [], {}
    for path, selector, label in targets:
        by_path.setdefault(path, []).append((selector, label))
    with local_only_context(browser, save_data=True, viewport={"width": 1280, "height": 900}, color_scheme=scheme,
                            bypass_csp=True) as context:
        page = context.new_page()
        for path, audits in by_path.items():
            page.goto(site_url + path)
            page.wait_for_load_state("networkidle")
            open_workbenches(page)  # audit the calculators in closed workbench blocks too
            wait_scrollables_checked(page)  # a11y.js has marked the boxes that scroll
            for selector, label in audits:
                problems += axe_problems(page, selector, label)
        assert not context.blocked, context.blocked
    return problems
