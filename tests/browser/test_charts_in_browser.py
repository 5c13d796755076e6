"""Live charts in the browser: drawn at build time, redrawn after an input, the same as CPython,
usable at 375 px and in dark mode, and clean under axe-core.

The drawing is `chapter2.charts.render`, run by the build and by Pyodide (`compute_json`); these
tests check that the page shows it before Python loads (and without JavaScript), that an input
change swaps in Pyodide's drawing, and that Pyodide's JSON (chart HTML included) equals CPython's
for the same raw inputs, byte for byte.
"""

from __future__ import annotations

import math
import re

import pytest

from _calculators import calculator_pages, chart_digests, computed, cpython_answer, cpython_chart_digests, form_values
from _calculators import axe_audit, differences, open_workbenches, pyodide_answer, rounded, wait_recomputed
from chapter2 import calculators

from conftest import local_only_context

pytestmark = pytest.mark.browser
WAIT_MS = 90_000
PHONE = {"width": 375, "height": 812}

# the inputs each chart follows, and new values for them: after each group the chart redraws and a marker moves
MOVES = {
    "activations": [{"x": "-2.3"}, {"beta": "3.5"}],
    "sliding_window": [{"n": "100000"}],
    "roofline": [{"batch": "64"}, {"gpu": "H200-SXM"}],
    "roofline_play": [{"batch": "6"}, {"context": "14"}, {"gpu": "L4"}],
    "model_diagram": [{"model": "DeepSeek-V3"}],
    "hybrid_cost": [{"context": "262144"}],
    "decode_batching": [{"batch": "300"}],
    "kv_cache": [{"context": "131072"}],
    "moe_coverage": [{"n_tokens": "16"}],
    "diffusion_pipeline": [{"steps": "28"}],
    "few_step": [{"few_steps": "4"}],
    "denoiser_any": [{"pipeline": "Wan2.1-T2V-1.3B"}, {"width": "512"}],
    "device_roofline": [{"matmul_gflops": "2.5", "copy_gb_s": "12.5"}, {"copy_gb_s": "30"}],
    "prefill_decode": [{"n_steps": "3"}],
    "flash_stepper": [{"tiles": "3"}, {"q_block": "2"}],
    "request_timeline": [{"token": "100"}, {"batch": "32"}],
    "token_walk": [{"step": "5"}, {"prompt": "A decode step reads the whole KV"}],
    "chunked_prefill": [{"chunk_tokens": "2048"}, {"decode_batch": "8"}],
    "speculative_decoding": [{"draft_tokens": "5"}, {"acceptance": "0.6"}],
}


def _chart_pages(site_dir) -> dict[str, str]:
    """{calculator: page path} for every calculator with a chart output, from the built pages."""
    with_charts = {name for name, c in calculators.REGISTRY.items() if any(o.kind == "chart" for o in c.outputs)}
    return calculator_pages(site_dir, with_charts)


def _set(page, calc, field, value):
    before = computed(calc)
    control = calc.locator(f'[name="{field}"]')
    if control.evaluate("el => el.tagName") == "SELECT":
        control.select_option(value)
    elif control.get_attribute("type") == "range":
        control.evaluate("(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }", value)
    else:
        control.fill(value)
    wait_recomputed(page, calc.get_attribute("data-calculator"), before, WAIT_MS)


def test_every_chart_calculator_is_on_a_page(site_dir):
    missing = set(MOVES) - set(_chart_pages(site_dir))
    assert not missing, (f"chart calculators on no page: {sorted(missing)} (device_roofline belongs on "
                         "docs/bottlenecks.md, as <!-- calculator: device_roofline -->)")


def test_charts_are_in_the_page_without_javascript(browser, site_url, site_dir):
    """The build's SVG is the drawing for the default inputs, shown with JavaScript off (and so before Python)."""
    with local_only_context(browser, java_script_enabled=False, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        for name, path in sorted(_chart_pages(site_dir).items()):
            page.goto(site_url + path)
            open_workbenches(page)
            calc = page.locator(f'[data-calculator="{name}"]')
            assert chart_digests(calc) == cpython_chart_digests(name), f"{name}: build-time charts"
            for svg in calc.locator("svg.c2-chart__svg").all():
                box = svg.bounding_box()
                assert box and box["width"] > 250 and box["height"] > 100, f"{name}: chart not drawn ({box})"
                assert svg.locator("path, rect").count() >= 3, name  # lines, or the boxes of a picture (canvas)
        assert not context.blocked


def test_charts_redraw_on_input_and_match_cpython(watched, site_dir):
    """After each input change: the page shows Pyodide's drawing, whose digest is CPython's for the same
    inputs; the marker moves; and Pyodide's whole JSON answer (chart HTML included) equals CPython's."""
    pages = _chart_pages(site_dir)
    current, timings = None, []
    for name, path in sorted(pages.items(), key=lambda kv: kv[1]):
        if path != current:
            page, current = watched.goto(path), path
            open_workbenches(page)
        calc = page.locator(f'[data-calculator="{name}"]')
        calc.scroll_into_view_if_needed()
        for move in MOVES[name]:
            markers = calc.evaluate("el => [...el.querySelectorAll('.c2-chart__pt')].map(c => c.getAttribute('cx') + ',' + c.getAttribute('cy'))")
            built = chart_digests(calc)
            for field, value in move.items():
                _set(page, calc, field, value)
            raw = form_values(calc)
            assert {k: raw[k] for k in move} == move
            assert chart_digests(calc) == cpython_chart_digests(name, raw), f"{name}: after {move}"
            assert chart_digests(calc) != built, f"{name}: {move} did not redraw"
            moved = calc.evaluate("el => [...el.querySelectorAll('.c2-chart__pt')].map(c => c.getAttribute('cx') + ',' + c.getAttribute('cy'))")
            if any(o.chart.kind not in ("diagram", "heatmap") for o in calculators.get(name).outputs if o.kind == "chart"):
                assert moved and moved != markers, f"{name}: the marker did not move after {move}"
            else:  # a diagram or a heatmap has no marker: the boxes or the cells themselves change
                assert not moved and not markers
            got, want = rounded(pyodide_answer(page, name, raw)), rounded(cpython_answer(name, raw))
            assert got == want, f"{name}: Pyodide vs CPython: {differences(got, want)[:8]}"
        # redraw time: one more change, timed in the page from the input event to the painted result
        field = next(iter(MOVES[name][0]))
        ms = calc.evaluate("""async (el, [f, v]) => {
            const input = el.querySelector(`[name=${f}]`), before = +el.dataset.computed || 0;
            const t0 = performance.now();
            input.value = v; input.dispatchEvent(new Event('change', {bubbles: true}));
            while ((+el.dataset.computed || 0) === before || el.hasAttribute('aria-busy')) await new Promise(r => setTimeout(r, 0));
            return performance.now() - t0; }""", [field, str(calculators.get(name).defaults()[field])])
        timings.append((name, ms))
        watched.assert_clean()
    print("\nredraw after an input change (ms): " + ", ".join(f"{n} {ms:.0f}" for n, ms in timings))


def test_measure_this_device_runs_on_request_and_lands_on_the_roofline(watched, site_dir):
    path = _chart_pages(site_dir).get("device_roofline")
    assert path, "device_roofline is on no page"
    page = watched.goto(path)
    page.wait_for_load_state("networkidle")
    open_workbenches(page)
    calc = page.locator('[data-calculator="device_roofline"]')
    # nothing measured on page load (Python may be starting already: 2.4's roofline chart is in the first screen)
    assert form_values(calc)["matmul_gflops"] == "0" and calc.locator(".c2-chart__pt").count() == 0
    assert "Done" not in calc.locator("[data-calc-action-status]").inner_text()
    before = computed(calc)
    calc.get_by_role("button", name="Measure this device").click()
    wait_recomputed(page, "device_roofline", before, WAIT_MS)
    raw = form_values(calc)
    rate, bandwidth = float(raw["matmul_gflops"]), float(raw["copy_gb_s"])
    assert rate > 0 and bandwidth > 0
    assert chart_digests(calc) == cpython_chart_digests("device_roofline", raw)
    assert calc.locator(".c2-chart__pt").count() == 1
    legend = calc.locator(".c2-chart__legend").inner_text()
    # ratio = rate / bandwidth, to 3 significant digits: within one unit of the last digit (the form shows the
    # rounded measurements, and a ratio that falls on a rounding tie may round either way)
    shown = float(re.search(r"its ops:byte ([\d.,]+)", legend).group(1).replace(",", ""))
    ratio = rate / bandwidth
    assert abs(shown - ratio) <= 10 ** (math.floor(math.log10(ratio)) - 2), (shown, ratio)
    assert "Done in your browser" in calc.locator("[data-calc-action-status]").inner_text()
    print(f"\nthis browser (Pyodide): numpy matmul {rate} GFLOP/s, copy {bandwidth} GB/s, ops:byte {rate / bandwidth:.3g}")
    watched.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_charts_fit_a_phone_and_follow_the_colour_scheme(browser, site_url, site_dir, scheme):
    # save_data: the charts drawn at build time, and no calculator starts Python
    with local_only_context(browser, save_data=True, viewport=PHONE, is_mobile=True, has_touch=True,
                            color_scheme=scheme) as context:
        page = context.new_page()
        for path in sorted(set(_chart_pages(site_dir).values())):
            page.goto(site_url + path)
            page.wait_for_load_state("networkidle")
            open_workbenches(page)
            assert page.evaluate("() => document.body.getAttribute('data-md-color-scheme')") == \
                ("slate" if scheme == "dark" else "default")
            assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"], path
            for fig in page.locator("figure.c2-chart").all():
                fig.scroll_into_view_if_needed()
                box = fig.locator("svg.c2-chart__svg").bounding_box()
                assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 0.5, f"{path}: {box}"
                assert box["width"] > 200, f"{path}: chart squeezed to {box['width']} px"
                for li in fig.locator(".c2-chart__legend li").all():
                    b = li.bounding_box()
                    assert b["x"] + b["width"] <= PHONE["width"] + 0.5, f"{path}: legend runs off the screen"
            # text follows the scheme (currentColor): dark ink on light, light ink on slate
            lum = page.evaluate("""() => [...document.querySelectorAll('.c2-chart__svg text')].slice(0, 20).map(t => {
                const [r, g, b] = getComputedStyle(t).fill.match(/\\d+/g).map(Number);
                return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; })""")
            assert lum and all((v > 0.6) if scheme == "dark" else (v < 0.4) for v in lum), (path, lum)
        assert not context.blocked


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_issue_in_the_calculators_with_charts(browser, site_url, site_dir, scheme):
    # the calculators with charts (the whole page is audited by tests/browser/test_reading.py)
    pages = sorted(set(_chart_pages(site_dir).values()))
    problems = axe_audit(browser, site_url, scheme, [(path, ".c2-calc", path) for path in pages])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desktop"])
def test_build_time_figures_keep_their_drawn_size(browser, site_url, site_dir, viewport):
    """A figure is drawn at most at its own size: never stretched (the 8 x 8 causal mask was 620 px tall at
    1280 px), and shrunk only to fit its column; on a phone the drawing made for a phone (whose text stays at
    least 11 px: test_figure_text.py) fits the column, and the page never scrolls sideways. In one colour scheme:
    which drawing a figure shows follows the width alone (no <source> asks for a scheme: checked here), and
    test_figure_text.py measures the figures in both schemes (text size, fit in the column)."""
    html = {p: p.read_text() for p in site_dir.rglob("index.html")}
    pages = sorted({p.parent.relative_to(site_dir).as_posix() + "/" for p, text in html.items() if 'class="c2-figure"' in text})
    assert pages
    medias = {m for text in html.values() for fig in re.findall(r'<figure class="c2-figure".*?</figure>', text, re.S)
              for m in re.findall(r'<source[^>]*\bmedia="([^"]*)"', fig)}
    assert medias and not any("color-scheme" in m for m in medias), medias
    # save_data: figures drawn at build time, and no calculator starts Python
    with local_only_context(browser, save_data=True, viewport=viewport, color_scheme="light") as context:
        page = context.new_page()
        for path in pages:
            page.goto(site_url + path)
            page.wait_for_load_state("networkidle")
            sizes = page.evaluate("""async () => {
                const imgs = [...document.querySelectorAll('.c2-figure img')];
                await Promise.all(imgs.map((img) => { img.loading = 'eager'; return img.decode().catch(() => {}); }));
                return imgs.map(img => [img.getAttribute('src'), img.naturalWidth, img.getBoundingClientRect().width,
                                        img.closest('figure > p').clientWidth]); }""")
            for src, natural, shown, column in sizes:
                assert natural > 0, f"{path}: {src} not drawn"
                assert shown <= natural + 1, f"{path}: {src} stretched from {natural} to {shown:.0f} px"  # natural: whole px
                assert shown >= min(natural, column) - 1, f"{path}: {src} drawn at {shown:.0f} px"
                assert shown <= column + 0.5, f"{path}: {src} is {shown:.0f} px wide in a {column} px column"
            assert page.evaluate("() => document.documentElement.scrollWidth") <= viewport["width"], path
        assert not context.blocked


# Every rule's label (class c2-chart__rule: "H100 SXM memory: 80 GB", "32,768 tokens", "ridge: 295 FLOP/B") as
# laid out, against every other text of its chart: tick labels, the other rules' labels, notes. Overlaps are of
# the browser's own text boxes, by more than a pixel each way.
RULE_OVERLAPS = """() => { const out = [];
  for (const svg of document.querySelectorAll('[data-calculator] figure.c2-chart svg.c2-chart__svg')) {
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim())
      .map((t) => [t.textContent, t.getBoundingClientRect(), t.classList.contains('c2-chart__rule')]);
    let rules = 0;
    for (const [i, [a, ra, ruleA]] of texts.entries()) { rules += ruleA;
      for (const [b, rb, ruleB] of texts.slice(i + 1)) {
        const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
        const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
        if ((ruleA || ruleB) && w > 1 && h > 1) out.push([svg.closest('[data-calculator]').dataset.calculator, a, b]);
      } }
    out.push(rules); }
  return out; }"""


@pytest.mark.parametrize("width", [1280, 375])
def test_a_rule_s_label_overlaps_no_other_text_of_its_chart(browser, site_url, site_dir, width):
    """Each chart as built (workbenches opened) on every page with charts: a rule's label is placed clear of the
    curves, the tick labels and the other labels (2.2a's kv_cache chart had "32,768 tokens" over "H100 SXM
    memory: 80 GB")."""
    overlaps, rules = [], 0
    with local_only_context(browser, viewport={"width": width, "height": 900}) as context:
        context.add_init_script("window.Worker = class { constructor() {} postMessage() {} terminate() {} addEventListener() {} };")
        page = context.new_page()
        for path in sorted(set(_chart_pages(site_dir).values())):
            page.goto(site_url + path)
            open_workbenches(page)
            found = page.evaluate(RULE_OVERLAPS)
            rules += sum(x for x in found if isinstance(x, int))
            overlaps += [f"{path}: {x}" for x in found if not isinstance(x, int)]
        assert not context.blocked
    assert rules >= 5, "too few rule labels measured"  # kv_cache, roofline_play, sliding_window, ...
    assert not overlaps, "\n".join(overlaps)
