"""Calculator layout: compact at desktop width, stacked on a phone, nothing hidden, charts where the layout says.

Every calculator on every built page is measured from its boxes as the browser lays it out (the HTML of
docs/hooks/directives.py, the CSS of docs/assets/chapter2/chapter2.css). Python is kept from starting (a
Worker that never answers): this is about layout, and nothing here waits for a computation.

At 1280 × 900 (scripts/page_metrics.py's screen) Material's content column is 688 px wide: fields sit three
abreast, results two abreast, and a calculator with data-layout="beside" (a short form without a stepper)
has its charts in a column beside the form; the others have their charts below the form with the legend
beside the drawing. At 375 px everything stacks in one column, a page's hero with its drawing first.
"""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from chapter2 import calculators, charts
from _calculators import open_workbenches
from conftest import local_only_context

pytestmark = pytest.mark.browser
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 375, "height": 812}
# At most 1.75 screens for one calculator: its form and charts on one screen, its results on the next. The
# tallest (2.4's roofline: 12 fields, 12 results, a chart) needed 2.6 screens before the compact layout.
MAX_HEIGHT = 1.75 * DESKTOP["height"]
# A workbench (a calculator in a closed block of the reference layer, opened by a reader who asked for every
# input and result) may take two screens: 2.4's roofline workbench, with communication between GPUs, expected
# ranges beside its bounds and a compare toggle (issues 31 and 32), is 1,814 px: two screens and a quarter.
MAX_WORKBENCH_HEIGHT = 2.25 * DESKTOP["height"]
# A chart's tick labels are charts.FONT units of a drawing charts.W units wide: at this width they are 11 px.
MIN_CHART_WIDTH = charts.W * 11 / charts.FONT
TOLERANCE = 1.5  # px: rounding of fractional layouts

# Every box that matters, per calculator, in page coordinates (scroll offsets added).
MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height, r: r.right + scrollX, b: r.bottom + scrollY}; };
  const shown = (el) => { const s = getComputedStyle(el); const r = el.getBoundingClientRect();
    return s.display !== 'none' && s.visibility === 'visible' && r.width > 0 && r.height > 0; };
  return [...document.querySelectorAll('[data-calculator]')].map((calc) => ({
    name: calc.dataset.calculator,
    layout: calc.dataset.layout,
    hero: calc.hasAttribute('data-hero'),
    workbench: calc.closest('details') !== null,
    // what the search index must leave out (build_site.py SEARCH_EXCLUDE): the form and both result lists
    searchExcluded: [...calc.querySelectorAll('form, dl')].every((el) => el.hasAttribute('data-search-exclude')),
    box: box(calc),
    form: box(calc.querySelector('form')),
    // a control that does not apply to these inputs is hidden (Field.show_when): not laid out, not measured
    fields: [...calc.querySelectorAll('.c2-calc__field:not([hidden])')].map((f) => ({cls: f.className, box: box(f)})),
    controls: [...calc.querySelectorAll('input, select, textarea, button')].filter((c) => !c.closest('[hidden]')).map((c) => ({
      name: c.name || c.textContent.trim(), box: box(c), shown: shown(c), tab: c.tabIndex})),
    outputs: calc.querySelector('.c2-calc__outputs') && box(calc.querySelector('.c2-calc__outputs')),
    cards: [...calc.querySelectorAll('.c2-calc__outputs > .c2-calc__out')].map((o) => ({cls: o.className, box: box(o)})),
    values: [...calc.querySelectorAll('[data-output]')].map((dd) => ({key: dd.dataset.output, shown: shown(dd)})),
    charts: [...calc.querySelectorAll('figure.c2-chart')].map((f) => ({
      box: box(f), svg: box(f.querySelector('svg.c2-chart__svg')),
      legend: f.querySelector('.c2-chart__legend') && box(f.querySelector('.c2-chart__legend'))})),
    overflow: [...calc.querySelectorAll('*')].filter((el) => { const r = el.getBoundingClientRect();
      return r.width > 0 && (r.left < -0.5 || r.right > innerWidth + 0.5); }).slice(0, 3)
      .map((el) => `${el.tagName}.${el.className.baseVal ?? el.className}`),
  }));
}"""


def _calculator_paths(site_dir) -> list[str]:
    """The built pages that hold a calculator (every HTML page is read, so a new section is covered)."""
    return sorted(html.parent.relative_to(site_dir).as_posix() + "/" for html in site_dir.rglob("index.html")
                  if 'data-calculator="' in html.read_text())


def _measure(browser, site_url, site_dir, viewport, **options) -> dict[str, dict]:
    """{calculator: its boxes} at this viewport, from every page that has calculators."""
    found = {}
    with local_only_context(browser, inert_worker=True, viewport=viewport, **options) as context:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        for path in _calculator_paths(site_dir):
            page.goto(site_url + path)
            page.wait_for_load_state("networkidle")
            open_workbenches(page)  # measured as a reader sees them once opened
            for calc in page.evaluate(MEASURE):
                calc["path"] = path
                found.setdefault(calc["name"], calc)
            assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"], path
        assert not errors and not context.blocked, (errors, context.blocked)
    assert set(found) == set(calculators.REGISTRY), "every calculator is measured"
    return found


@pytest.fixture(scope="module")
def desktop(browser, site_url, site_dir):
    return _measure(browser, site_url, site_dir, DESKTOP)


@pytest.fixture(scope="module")
def phone(browser, site_url, site_dir):
    return _measure(browser, site_url, site_dir, PHONE, is_mobile=True, has_touch=True)


def _overlap_rows(a, b) -> bool:
    """Whether two boxes share part of their height (they sit in one row)."""
    return min(a["b"], b["b"]) - max(a["y"], b["y"]) > TOLERANCE


def _problems_common(c) -> list[str]:
    """Nothing hidden, nothing outside the box, and the tab order is the visual order (left to right, then down)."""
    out = []
    for ctl in c["controls"]:
        if not ctl["shown"] or ctl["tab"] < 0:
            out.append(f"control {ctl['name']!r} is hidden or out of the tab order")
        elif ctl["box"]["x"] < c["box"]["x"] - TOLERANCE or ctl["box"]["r"] > c["box"]["r"] + TOLERANCE:
            out.append(f"control {ctl['name']!r} sticks out of the box")
    out += [f"output {v['key']!r} is hidden" for v in c["values"] if not v["shown"]]
    out += [f"{el} runs off the screen" for el in c["overflow"]]
    focusable = [ctl for ctl in c["controls"] if ctl["shown"]]
    for a, b in pairwise(focusable):
        same_row = _overlap_rows(a["box"], b["box"])
        if (same_row and b["box"]["x"] < a["box"]["r"] - TOLERANCE) or (not same_row and b["box"]["y"] < a["box"]["b"] - TOLERANCE):
            out.append(f"tab order: {b['name']!r} comes after {a['name']!r} but sits before it")
    return out


def _report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}: {p}" for name, ps in sorted(problems.items()) for p in ps)


def test_calculators_are_compact_at_desktop_width(desktop):
    """At 1280 × 900: each calculator at most MAX_HEIGHT tall (a workbench in a closed block MAX_WORKBENCH_HEIGHT), its fields three abreast (the narrow column beside a
    chart excepted), its results two abreast, no field or result hidden, tab order as laid out."""
    problems = {}
    for name, c in desktop.items():
        p = _problems_common(c)
        if not c["searchExcluded"]:  # build_site.py's SEARCH_EXCLUDE marks them by class
            p.append("its form or results are not marked data-search-exclude: they would go into the search index")
        limit = MAX_WORKBENCH_HEIGHT if c["workbench"] else MAX_HEIGHT
        if c["box"]["h"] > limit:
            p.append(f"{c['box']['h']:.0f} px tall, more than {limit:.0f} ({c['path']})")
        if c["layout"] != "beside":
            form_w = c["form"]["w"]
            narrow = [f for f in c["fields"] if not re.search(r"--(text|stepper|hub)\b", f["cls"])]  # text boxes span two
            wide = [f["cls"] for f in narrow if f["box"]["w"] > form_w / 3 + TOLERANCE]
            if wide:
                p.append(f"fields wider than a third of the form ({form_w:.0f} px): {wide}")
        if c["outputs"]:
            cards = [o for o in c["cards"] if "c2-calc__out--wide" not in o["cls"]]
            wide = [o["box"]["w"] for o in cards if o["box"]["w"] > c["outputs"]["w"] / 2 + TOLERANCE]
            if wide:
                p.append(f"results wider than half the box: {wide}")
        if p:
            problems[name] = p
    assert not problems, _report(problems)


def test_charts_sit_beside_the_form_or_below_it_with_their_legend_beside(desktop):
    """data-layout="beside": every chart starts beside the form (to its right, level with it); the others: charts below
    the form, the legend to the right of the drawing. Never narrower than MIN_CHART_WIDTH, never past the box."""
    beside = {n for n, c in desktop.items() if c["layout"] == "beside"}
    with_charts = {n for n, c in desktop.items() if c["charts"]}
    assert beside and with_charts - beside, "both layouts are in use"
    assert beside <= with_charts
    steppers = {n for n, c in desktop.items() if any("--stepper" in f["cls"] for f in c["fields"])}
    assert not beside & steppers, "a stepper's Back, slider and Forward need the whole width"
    problems = {}
    for name in sorted(with_charts):
        c, p = desktop[name], []
        form = c["form"]
        for i, ch in enumerate(c["charts"]):
            svg, legend = ch["svg"], ch["legend"]
            if svg["w"] < MIN_CHART_WIDTH - TOLERANCE:
                p.append(f"chart {i} drawn {svg['w']:.0f} px wide, under {MIN_CHART_WIDTH:.0f}")
            if ch["box"]["r"] > c["box"]["r"] + TOLERANCE:
                p.append(f"chart {i} sticks out of the box")
            if name in beside:
                if ch["box"]["x"] < form["r"] - TOLERANCE:
                    p.append(f"chart {i} is not beside the form (chart x {ch['box']['x']:.0f}, form ends {form['r']:.0f})")
                if i == 0 and not _overlap_rows(ch["box"], form):
                    p.append("the first chart does not start level with the form")
            else:
                if ch["box"]["y"] < form["b"] - TOLERANCE:
                    p.append(f"chart {i} is not below the form")
                if legend and legend["x"] < svg["r"] - TOLERANCE:
                    p.append(f"chart {i}: the legend is not beside the drawing")
        if p:
            problems[name] = p
    assert not problems, _report(problems)


def test_calculators_stack_on_a_phone(phone):
    """At 375 px: one column (charts under the form, whatever the desktop layout; a page's hero has its charts
    above it), nothing off the screen or hidden, tab order as laid out, charts as wide as the column allows."""
    assert sum(c["hero"] for c in phone.values()) >= 3  # 2.2a's stepper, 2.2b's diagram, 2.4's roofline
    problems = {}
    for name, c in phone.items():
        p = _problems_common(c)
        if c["box"]["r"] > PHONE["width"] + TOLERANCE:
            p.append(f"the box ends at {c['box']['r']:.0f} px")
        xs = {round(f["box"]["x"]) for f in c["fields"]}
        if len(xs) > 1:
            p.append(f"fields in more than one column: x = {sorted(xs)}")
        for i, ch in enumerate(c["charts"]):
            if c["hero"] and ch["box"]["b"] > c["form"]["y"] + TOLERANCE:
                p.append(f"chart {i} of the page's hero is not above the form (its picture comes first)")
            if not c["hero"] and ch["box"]["y"] < c["form"]["b"] - TOLERANCE:
                p.append(f"chart {i} is not below the form")
            if ch["svg"]["w"] < c["form"]["w"] - TOLERANCE:
                p.append(f"chart {i} is {ch['svg']['w']:.0f} px wide in a {c['form']['w']:.0f} px column")
        if p:
            problems[name] = p
    assert not problems, _report(problems)
