"""The token walk (calculator `token_walk`, page 2.2b) in the browser.

The default walk is drawn at build time, every step, so Play steps through it with no Python at all; a
reader's own prompt is walked by Pyodide, by Play too, and every step of it equals what CPython computes (and CPython's walk equals
transformers', tests/test_token_walk.py). Tapping a token of the heatmap on a 375 px touch screen, or
pointing at it on a desktop, shows what that token attends to. Prints the median time of one walk
computed in the browser (warm: Python loaded, a new prompt each time).
"""

from __future__ import annotations

import statistics

import pytest

from _calculators import (calculator_pages, chart_digests, computed, cpython_answer, cpython_chart_digests,
                          form_values, pyodide_answer, rounded, wait_recomputed)
from chapter2 import calculators, charts
from conftest import local_only_context

pytestmark = pytest.mark.browser
NAME = "token_walk"
WAIT_MS = 120_000
SHOWN = """(el) => { const row = [...el.querySelectorAll('.c2-hm__row')].find(r =>
    getComputedStyle(r.querySelector('.c2-hm__detail')).display !== 'none');
  return row ? [[...row.parentNode.querySelectorAll('.c2-hm__row')].indexOf(row),
                [...row.querySelectorAll('.c2-hm__detail text')].map(t => t.textContent).join(' '),
                getComputedStyle(row.querySelector('.c2-hm__band')).strokeOpacity] : null; }"""


def _path(site_dir) -> str:
    pages = calculator_pages(site_dir, {NAME})
    assert NAME in pages, "the token walk is on no page"
    return pages[NAME]


def _caption(calc) -> str:
    return calc.locator("[data-output=caption]").inner_text()


def _go_to_step(page, calc, step: int) -> None:
    before = computed(calc)
    page.evaluate("""([n, s]) => { const r = document.querySelector(`[data-calculator=${n}] input[name=step]`);
        r.value = String(s); r.dispatchEvent(new Event('input', {bubbles: true})); }""", [NAME, step])
    wait_recomputed(page, NAME, before, WAIT_MS)


# Each paint of the calculator: [the step shown, its caption, the picture's digest] (data-computed counts paints).
RECORD = """(el) => { window.__seen = [];
  const slider = el.querySelector('input[name=step]'), caption = el.querySelector('[data-caption]');
  new MutationObserver(() => window.__seen.push([+slider.value, caption.textContent,
      el.querySelector('[data-output=picture] figure').dataset.digest]))
    .observe(el, { attributes: true, attributeFilter: ['data-computed'] }); }"""


def _play_to_the_end(page, calc) -> list:
    """Press Play and wait until the walk has stepped by itself to its last step and stopped; the paints seen."""
    calc.evaluate(RECORD)
    top = int(calc.locator("input[name=step]").get_attribute("max"))
    calc.get_by_role("button", name="Play").click()
    page.wait_for_function("([el, top]) => el.querySelector('[data-play]').dataset.playing === 'false'"
                           " && +el.querySelector('input[name=step]').value === top",
                           arg=[calc.element_handle(), top], timeout=WAIT_MS)
    return page.evaluate("() => window.__seen")


def _cpython_step(raw: dict, step: int) -> list:
    out = calculators.compute(NAME, {**raw, "step": str(step)})
    return [step, out["caption"], charts.digest(out["picture"])]


def test_the_default_walk_plays_by_itself_without_python(browser, site_url, site_dir):
    """Python never answers here: Play walks the default prompt through all 25 steps by itself, each the
    drawing and the caption CPython made for it, and stops at the drawn token."""
    with local_only_context(browser, inert_worker=True, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        page.goto(site_url + _path(site_dir))
        page.wait_for_load_state("networkidle")

        def fetched():
            return [u for u in context.requests if u.endswith("/assets/chapter2/frames/token_walk.json")]

        assert not fetched(), "the walk's prebuilt steps were downloaded before the reader came to them"
        page.evaluate("() => { window.chapter2.playMs = 30; }")  # each step shown 30 ms once drawn
        calc = page.locator(f'[data-calculator="{NAME}"]')
        calc.scroll_into_view_if_needed()
        seen = _play_to_the_end(page, calc)
        assert len(fetched()) == 1  # fetched once, when the reader came to the walk
        assert seen == [_cpython_step({}, step) for step in range(1, calculators.get(NAME).fields[1].max + 1)]
        assert calc.get_by_role("button", name="Play").count() == 1  # stopped at the end: Play again
        assert page.evaluate("() => window.chapter2.lanes.calc.state") != "ready"  # no Python was needed
        assert not context.blocked


def test_a_reader_s_prompt_walks_in_pyodide_as_in_cpython(watched, site_dir):
    page = watched.goto(_path(site_dir))
    calc = page.locator(f'[data-calculator="{NAME}"]')
    calc.scroll_into_view_if_needed()
    before = computed(calc)
    calc.locator("textarea[name=prompt]").fill("A decode step reads the whole KV")
    wait_recomputed(page, NAME, before, WAIT_MS)
    # leaving the prompt (a real click elsewhere) fires its "change": the prompt was computed as typed, so
    # nothing is asked again (it used to be, and its paint could land after Play's first step was asked for)
    page.evaluate("""() => { const api = window.chapter2, calc = api.calc; window.__asked = 0;
        api.calc = (...args) => { window.__asked += 1; return calc(...args); }; }""")
    painted = computed(calc)
    page.locator("article h1").first.click()
    assert page.evaluate("() => window.__asked") == 0
    assert computed(calc) == painted
    for step in (0, 1, 5, 11, 22, 23, 24):  # tokens, embedding, two heads, the final state, logits, the draw
        _go_to_step(page, calc, step)
        raw = form_values(calc)
        assert raw["step"] == str(step)
        assert chart_digests(calc) == cpython_chart_digests(NAME, raw), step
        assert _caption(calc) == cpython_answer(NAME, raw)["outputs"]["caption"]
        assert rounded(pyodide_answer(page, NAME, raw)) == rounded(cpython_answer(NAME, raw)), step
    assert "cache" in _caption(calc)  # the drawn token: the tiny model completes "the whole KV" with "cache"
    # Play, from the first step: Pyodide computes each step of this prompt, the walk steps on by itself
    raw = form_values(calc)
    _go_to_step(page, calc, 0)
    page.evaluate("() => { window.chapter2.playMs = 30; }")
    seen = _play_to_the_end(page, calc)
    assert seen == [_cpython_step(raw, step) for step in range(1, 25)]
    # one walk, warm: a new prompt each time (a walk is kept per prompt), at the step of a head's heatmap
    times = []
    for i in range(5):
        raw = {**form_values(calc), "prompt": f"The KV cache holds {i + 2} keys and", "step": "5"}
        times.append(page.evaluate("""async ([n, r]) => { const t0 = performance.now();
            const out = await window.chapter2.calc(n, r); if (!out.ok) throw new Error(out.message);
            return performance.now() - t0; }""", [NAME, raw]))
    print(f"\ntoken walk in the browser: one walk of 8 tokens, warm, median {statistics.median(times):.0f} ms "
          f"(of {', '.join(f'{t:.0f}' for t in times)})")
    watched.assert_clean()


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_tapping_a_token_at_375_px_shows_what_it_attends_to(browser, site_url, site_dir, scheme):
    with local_only_context(browser, viewport={"width": 375, "height": 812}, has_touch=True, is_mobile=True,
                            color_scheme=scheme) as context:
        page = context.new_page()
        page.goto(site_url + _path(site_dir))
        calc = page.locator(f'[data-calculator="{NAME}"]')
        calc.scroll_into_view_if_needed()
        _go_to_step(page, calc, 5)  # layer 1, head 4: drawn at build time
        want = calculators.compute(NAME, {"step": "5"})["picture"]
        n = len(want["rows"])
        shown = calc.evaluate(SHOWN)
        assert shown[0] == n - 1 and shown[2] == "1"  # before any tap: the last token, outlined
        assert shown[1] == want["details"][-1]
        rows = calc.locator(".c2-hm__row")
        for i in (1, 6, 3):
            rows.nth(i).tap()
            page.wait_for_function(f"el => ({SHOWN})(el)[0] === {i}", arg=calc.element_handle(), timeout=10_000)
            index, text, outline = calc.evaluate(SHOWN)
            assert text == want["details"][i] and outline == "1"
            assert text.startswith(f"‘{want['rows'][i]}’ attends to ")
        svg = calc.locator(".c2-hm__svg").bounding_box()
        assert svg["x"] >= 0 and svg["x"] + svg["width"] <= 375  # the whole heatmap on the phone's screen
        size = calc.locator(".c2-hm__row text").first.evaluate(
            "t => t.getBoundingClientRect().height / t.getBBox().height * 12")  # the label's 12 units, in px
        assert size >= 11, f"row labels are {size:.1f} px on a 375 px phone"
        assert not context.blocked


def test_pointing_at_a_token_on_a_desktop_shows_what_it_attends_to(watched, site_dir):
    page = watched.goto(_path(site_dir))
    calc = page.locator(f'[data-calculator="{NAME}"]')
    calc.scroll_into_view_if_needed()
    _go_to_step(page, calc, 17)  # layer 4, head 1
    want = calculators.compute(NAME, {"step": "17"})["picture"]
    calc.locator(".c2-hm__row").nth(2).hover()
    page.wait_for_function(f"el => ({SHOWN})(el)[0] === 2", arg=calc.element_handle(), timeout=10_000)
    assert calc.evaluate(SHOWN)[1] == want["details"][2]
    page.mouse.move(0, 0)  # pointing away: back to the last token
    page.wait_for_function(f"el => ({SHOWN})(el)[0] === {len(want['rows']) - 1}", arg=calc.element_handle(),
                           timeout=10_000)
    calc.locator(".c2-hm__row").nth(0).focus()  # a keyboard user tabs to a row: the same
    page.wait_for_function(f"el => ({SHOWN})(el)[0] === 0", arg=calc.element_handle(), timeout=10_000)
    watched.assert_clean()
