"""The three steppers in the browser: prefill and decode (the tiny model's KV cache), FlashAttention one
tile at a time, and a request on a timeline.

Each has a first frame drawn at build time (there without JavaScript); stepping forward and back, with
the buttons or the keyboard (the slider's arrow keys, Enter on a button), redraws with Pyodide what
CPython draws for the same inputs; a step slider whose top is another field follows it; the steppers
fit a phone's 375 px and axe finds no serious issue in them. Prints the median redraw time of a step.
"""

from __future__ import annotations

import statistics
import pytest

from _calculators import calculator_pages, chart_digests, computed, cpython_answer, cpython_chart_digests, form_values
from _calculators import axe_audit, pyodide_answer, rounded, wait_recomputed
from chapter2 import calculators
from conftest import local_only_context

pytestmark = pytest.mark.browser
WAIT_MS = 120_000
PHONE = {"width": 375, "height": 812}
INERT_WORKER = "window.Worker = class { constructor() {} postMessage() {} terminate() {} addEventListener() {} };"
STEPPERS = {"prefill_decode": "n_steps", "flash_stepper": "tiles", "request_timeline": "token"}  # calculator: its step


def _pages(site_dir) -> dict[str, str]:
    return calculator_pages(site_dir, STEPPERS)


def _texts(calc) -> dict:
    return calc.evaluate("el => Object.fromEntries([...el.querySelectorAll('[data-output]')]"
                         ".filter(dd => !dd.dataset.kind).map(dd => [dd.dataset.output, dd.textContent]))")


def _wait(page, name, before):
    wait_recomputed(page, name, before, WAIT_MS)


def _matches_cpython(page, name, calc, what):
    raw = form_values(calc)
    assert chart_digests(calc) == cpython_chart_digests(name, raw), f"{name}: {what}: the drawing is not CPython's"
    want = cpython_answer(name, raw)
    texts = {o.key for o in calculators.get(name).outputs if o.kind == "text"}  # charts and bars come drawn
    assert _texts(calc) == {k: v for k, v in want["outputs"].items() if k in texts}
    bars = {k: want["outputs"][o.key] for o in calculators.get(name).outputs if o.kind == "bars" for k in [o.key]}
    same = calc.evaluate("""(el, bars) => Object.entries(bars).every(([k, html]) => {
        const t = document.createElement('template'); t.innerHTML = html;  // the browser's own serialisation
        return el.querySelector(`[data-output=${k}]`).innerHTML === t.innerHTML; })""", bars)
    assert same, f"{name}: {what}: the bars are not CPython's"
    got = pyodide_answer(page, name, raw)
    assert rounded(got) == rounded(want), f"{name}: {what}: Pyodide's answer is not CPython's"
    return raw


def test_every_stepper_is_on_a_page(site_dir):
    missing = set(STEPPERS) - set(_pages(site_dir))
    assert not missing, f"steppers on no page: {sorted(missing)}"


def test_the_first_frame_is_in_the_page_without_javascript(browser, site_url, site_dir):
    with local_only_context(browser, java_script_enabled=False, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        for name, path in sorted(_pages(site_dir).items()):
            page.goto(site_url + path)
            calc = page.locator(f'[data-calculator="{name}"]')
            assert chart_digests(calc) == cpython_chart_digests(name), f"{name}: build-time frame"
            field = STEPPERS[name]
            slider = calc.locator(f'input[type=range][name="{field}"]')
            assert slider.input_value() == str(calculators.get(name).defaults()[field])
            group = calc.get_by_role("group", name=next(f.label for f in calculators.get(name).fields if f.name == field))
            assert group.get_by_role("button", name="Back").count() == 1
            assert group.get_by_role("button", name="Forward").count() == 1
            for svg in calc.locator("svg.c2-chart__svg").all():
                box = svg.bounding_box()
                assert box and box["width"] > 250 and box["height"] > 80, f"{name}: chart not drawn ({box})"
            assert calc.locator(".c2-chart__pt").count() >= 1  # the current step is marked
        assert not context.blocked


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1280, "height": 900}], ids=["phone", "desktop"])
def test_steppers_open_at_the_first_step_and_step_at_once_without_python(browser, site_url, site_dir, viewport):
    """Python never answers here (a Worker that does nothing): the steps of the default inputs were drawn
    when the site was built, so Back is marked disabled at the first step and Forward and Back (+10 and −10
    on the long timeline) draw at once what CPython draws for that step."""
    with local_only_context(browser, viewport=viewport, has_touch=viewport is PHONE) as context:
        context.add_init_script(INERT_WORKER)
        page = context.new_page()
        for name, path in sorted(_pages(site_dir).items()):
            page.goto(site_url + path)
            calc = page.locator(f'[data-calculator="{name}"]')
            calc.scroll_into_view_if_needed()
            field = STEPPERS[name]
            slider = calc.locator(f'input[type=range][name="{field}"]')
            sid = slider.get_attribute("id")
            assert slider.input_value() == slider.get_attribute("min"), f"{name}: opens at its first step"
            assert calc.locator(f'button[data-step="-1"][aria-controls="{sid}"]').get_attribute("aria-disabled") == "true"
            # the timeline's 256 steps ship every 10th (directives.FRAME_BUDGET): +10 is prebuilt, +1 asks Python
            for delta in (10, -10) if name == "request_timeline" else (1, 1, -1):
                button = calc.locator(f'button[data-step="{delta}"][aria-controls="{sid}"]')
                before, value = computed(calc), int(slider.input_value())
                button.click()
                wait_recomputed(page, name, before, 10_000)
                assert int(slider.input_value()) == value + delta
                assert chart_digests(calc) == cpython_chart_digests(name, {field: str(value + delta)}), (name, delta)
                assert "drawn when the site was built" in calc.locator("[data-calc-status]").inner_text()
            assert page.evaluate("() => window.chapter2.lanes.calc.state") != "ready"  # no Python was needed
        assert not context.blocked


def test_step_with_buttons_and_keys_and_match_cpython(watched, site_dir):
    timings = {}
    for name, path in sorted(_pages(site_dir).items(), key=lambda kv: kv[1]):
        page = watched.goto(path)
        calc = page.locator(f'[data-calculator="{name}"]')
        calc.scroll_into_view_if_needed()
        field = STEPPERS[name]
        slider = calc.locator(f'input[type=range][name="{field}"]')
        forward = calc.locator(f'button[data-step="1"][aria-controls="{slider.get_attribute("id")}"]')
        back = calc.locator(f'button[data-step="-1"][aria-controls="{slider.get_attribute("id")}"]')
        start = int(slider.input_value())
        first = chart_digests(calc)

        # Forward, clicked: one step on, a new drawing, Pyodide's equal to CPython's
        before = computed(calc)
        forward.click()
        _wait(page, name, before)
        assert int(slider.input_value()) == start + 1
        assert calc.locator(f'output[data-field-value="{field}"]').inner_text() == str(start + 1)
        _matches_cpython(page, name, calc, "Forward clicked")
        assert chart_digests(calc) != first

        # the slider's own keys: ArrowRight steps on
        slider.focus()
        before = computed(calc)
        page.keyboard.press("ArrowRight")
        _wait(page, name, before)
        assert int(slider.input_value()) == start + 2
        _matches_cpython(page, name, calc, "ArrowRight on the slider")

        # Enter on the Back button steps back; the drawing is the one after one step
        back.focus()
        before = computed(calc)
        page.keyboard.press("Enter")
        _wait(page, name, before)
        assert int(slider.input_value()) == start + 1
        assert back.evaluate("b => b === document.activeElement")  # focus stays on the button
        _matches_cpython(page, name, calc, "Enter on Back")

        # Home, then Enter on Forward up to 5 times: the warm redraw time of one step, from the key to the paint
        slider.focus()
        before = computed(calc)
        page.keyboard.press("Home")
        _wait(page, name, before)
        low, high = int(slider.get_attribute("min")), int(slider.get_attribute("max"))
        assert int(slider.input_value()) == low and back.get_attribute("aria-disabled") == "true"
        _matches_cpython(page, name, calc, "Home")
        forward.focus()
        ms = []
        for _ in range(min(5, high - low)):
            before = computed(calc)
            t = page.evaluate("() => performance.now()")
            page.keyboard.press("Enter")
            _wait(page, name, before)
            ms.append(page.evaluate("() => performance.now()") - t)
        timings[name] = statistics.median(ms)
        assert int(slider.input_value()) == low + len(ms)
        _matches_cpython(page, name, calc, f"{len(ms)} times Enter on Forward")

        # at the end of the range (End on the slider): Forward is marked disabled and does nothing
        slider.focus()
        before, at_end = computed(calc), slider.input_value() == slider.get_attribute("max")
        page.keyboard.press("End")
        if not at_end:
            _wait(page, name, before)
        assert slider.input_value() == slider.get_attribute("max")
        assert forward.get_attribute("aria-disabled") == "true" and back.get_attribute("aria-disabled") == "false"
        before, presses = computed(calc), int(forward.get_attribute("data-presses") or 0)
        forward.focus()  # marked disabled, still focusable: a press does nothing
        page.keyboard.press("Enter")
        # the button's handler has run (its data-presses counter moved): had it moved the slider, the
        # calculator would be busy or have recomputed by now (its input event is dispatched synchronously)
        page.wait_for_function("([b, n]) => +(b.dataset.presses || 0) > n", arg=[forward.element_handle(), presses])
        assert calc.get_attribute("aria-busy") is None
        assert computed(calc) == before and slider.input_value() == slider.get_attribute("max")
        _matches_cpython(page, name, calc, "End")
        # Python is ready: no status line on the page is left saying it is loading
        assert page.locator("[data-calc-status] .c2-load__bar").count() == 0, name
        watched.assert_clean()
    print("\nstepper redraw, one step, warm (median of 5, ms): " + ", ".join(f"{n} {ms:.0f}" for n, ms in timings.items()))


def test_a_step_slider_follows_the_field_that_sets_its_top(watched, site_dir):
    page = watched.goto(_pages(site_dir)["request_timeline"])
    calc = page.locator('[data-calculator="request_timeline"]')
    calc.scroll_into_view_if_needed()
    slider = calc.locator('input[type=range][name="token"]')
    assert slider.get_attribute("max") == "256" and slider.get_attribute("data-max-from") == "output_tokens"
    slider.evaluate("el => { el.value = '120'; el.dispatchEvent(new Event('input', {bubbles: true})); }")
    _wait(page, "request_timeline", 0)
    before = computed(calc)
    calc.locator('[name="output_tokens"]').fill("50")
    _wait(page, "request_timeline", before)
    assert slider.get_attribute("max") == "50" and slider.input_value() == "50"
    assert calc.locator('output[data-field-value="token"]').inner_text() == "50"
    _matches_cpython(page, "request_timeline", calc, "output 50")
    before = computed(calc)
    calc.locator('[name="output_tokens"]').fill("300")
    _wait(page, "request_timeline", before)
    assert slider.get_attribute("max") == "300" and slider.input_value() == "120"  # the step chosen comes back
    _matches_cpython(page, "request_timeline", calc, "output 300")
    watched.assert_clean()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_steppers_fit_a_phone(browser, site_url, site_dir, scheme):
    with local_only_context(browser, viewport=PHONE, is_mobile=True, has_touch=True, color_scheme=scheme) as context:
        page = context.new_page()
        for name, path in sorted(_pages(site_dir).items()):
            page.goto(site_url + path)
            page.wait_for_load_state("networkidle")
            assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"], path
            calc = page.locator(f'[data-calculator="{name}"]')
            calc.scroll_into_view_if_needed()
            for el in [*calc.locator("button.c2-step").all(), *calc.locator("svg.c2-chart__svg").all(),
                       calc.locator(f'input[type=range][name="{STEPPERS[name]}"]')]:
                box = el.bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 0.5, f"{name}: {box}"
            for svg in calc.locator("svg.c2-chart__svg").all():
                assert svg.bounding_box()["width"] > 200, name
            buttons = [b.bounding_box() for b in calc.locator("button.c2-step").all()]
            assert all(b["height"] >= 44 and b["width"] >= 44 for b in buttons), buttons  # a finger's target
        assert not context.blocked


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_issue_in_the_steppers(browser, site_url, site_dir, scheme):
    targets = [(path, f"[data-calculator={name}]", name) for name, path in sorted(_pages(site_dir).items())]
    problems = axe_audit(browser, site_url, scheme, targets)
    assert not problems, "\n".join(problems)
