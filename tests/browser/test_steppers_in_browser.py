"""The three steppers in the browser: prefill and decode (the tiny model's KV cache), FlashAttention one
tile at a time, and a request on a timeline.

Each has a first frame drawn at build time (there without JavaScript); stepping forward and back, with
the buttons or the keyboard (the slider's arrow keys, Enter on a button), redraws with Pyodide what
CPython draws for the same inputs; a step slider whose top is another field follows it; the steppers
fit a phone's 375 px and axe finds no serious issue in them. Prints the median redraw time of a step.
Play steps on by itself, each step drawn (prebuilt, or by Python) before the next, with its caption,
and stops at the end; Pause, Back or another field stop it (tests that drive the clock, never sleep).
"""

from __future__ import annotations

import statistics
import pytest

from _calculators import calculator_pages, chart_digests, computed, cpython_answer, cpython_chart_digests, form_values
from _calculators import axe_audit, differences, open_workbenches, pyodide_answer, rounded, wait_recomputed
from chapter2 import calculators
from conftest import local_only_context

pytestmark = pytest.mark.browser
WAIT_MS = 120_000
PHONE = {"width": 375, "height": 812}
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
    texts = {o.key for o in calculators.get(name).outputs if o.kind in ("text", "caption")}  # charts, bars: drawn
    assert _texts(calc) == {k: v for k, v in want["outputs"].items() if k in texts}
    bars = {k: want["outputs"][o.key] for o in calculators.get(name).outputs if o.kind == "bars" for k in [o.key]}
    same = calc.evaluate("""(el, bars) => Object.entries(bars).every(([k, html]) => {
        const t = document.createElement('template'); t.innerHTML = html;  // the browser's own serialisation
        return el.querySelector(`[data-output=${k}]`).innerHTML === t.innerHTML; })""", bars)
    assert same, f"{name}: {what}: the bars are not CPython's"
    got = pyodide_answer(page, name, raw)
    assert rounded(got) == rounded(want), (f"{name}: {what}: Pyodide's answer is not CPython's: "
                                           f"{differences(rounded(got), rounded(want))[:8]}")
    return raw


def test_every_stepper_is_on_a_page(site_dir):
    missing = set(STEPPERS) - set(_pages(site_dir))
    assert not missing, f"steppers on no page: {sorted(missing)}"


def test_the_first_frame_is_in_the_page_without_javascript(browser, site_url, site_dir):
    with local_only_context(browser, java_script_enabled=False, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        for name, path in sorted(_pages(site_dir).items()):
            page.goto(site_url + path)
            open_workbenches(page)
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
    with local_only_context(browser, inert_worker=True, viewport=viewport, has_touch=viewport is PHONE) as context:
        page = context.new_page()
        for name, path in sorted(_pages(site_dir).items()):
            page.goto(site_url + path)
            open_workbenches(page)
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


def test_a_press_while_the_runtime_loads_moves_one_step(browser, site_url, site_dir):
    """A press that lands after charts.js has run but before the rest of the runtime has (its scripts run one
    by one) is held and replayed once the runtime takes over: it must move the stepper one step, not two (the
    step buttons bind at the hand-over, not while the press is still being held). share.js, the last of the
    runtime's scripts, is kept back until the press is in."""
    held = []
    with local_only_context(browser, inert_worker=True, viewport={"width": 1280, "height": 900}) as context:
        context.route("**/assets/chapter2/share.js", lambda route: held.append(route))  # answered below, after the press
        page = context.new_page()
        page.goto(site_url + _pages(site_dir)["flash_stepper"])
        open_workbenches(page)
        calc = page.locator('[data-calculator="flash_stepper"]')
        calc.scroll_into_view_if_needed()
        slider = calc.locator('input[type=range][name="tiles"]')
        forward = calc.locator(f'button[data-step="1"][aria-controls="{slider.get_attribute("id")}"]')
        start = int(slider.input_value())
        calc.hover()  # a sign of interest: the runtime starts loading
        page.wait_for_function("() => !!window.chapter2Charts", timeout=30_000)  # charts.js has run
        forward.click()
        assert held, "share.js was not requested"
        held.pop().continue_()
        page.wait_for_function("(el) => +el.dataset.presses >= 1", arg=forward.element_handle(), timeout=30_000)
        assert int(slider.input_value()) == start + 1
        assert not context.blocked


def test_step_with_buttons_and_keys_and_match_cpython(watched, site_dir):
    timings = {}
    for name, path in sorted(_pages(site_dir).items(), key=lambda kv: kv[1]):
        page = watched.goto(path)
        open_workbenches(page)
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
    open_workbenches(page)
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
            open_workbenches(page)
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


# ------------------------------------------------------------------ Play / Pause and the captions

PLAY_MS = 777  # a dwell no other timer of the runtime uses: the manual clock below fires only these
# A clock the test drives: the runtime's timers wait in window.__timers until the test fires them.
MANUAL_CLOCK = """(ms) => {
  window.__timers = new Map(); let id = 0;
  window.chapter2.playMs = ms;
  window.chapter2.clock = { now: () => Date.now(),
    setTimeout: (fn, wait) => { window.__timers.set(++id, [fn, wait]); return id; },
    clearTimeout: (t) => { window.__timers.delete(t); } };
  window.__player = () => [...window.__timers].filter(([, [, w]]) => w === ms || w === 2 * ms);
  window.__fire = () => { const due = window.__player(); for (const [t, [fn]] of due) { window.__timers.delete(t); fn(); }
    return due.length; };
}"""
# Each paint of the calculator: [the step shown, its caption] (data-computed counts the paints).
RECORD = """(el) => { window.__seen = [];
  const slider = el.querySelector('.c2-calc__field--stepper input[type=range]'), caption = el.querySelector('[data-caption]');
  new MutationObserver(() => window.__seen.push([+slider.value, caption.textContent]))
    .observe(el, { attributes: true, attributeFilter: ['data-computed'] }); }"""


def _stepper(page, name):
    calc = page.locator(f'[data-calculator="{name}"]')
    calc.scroll_into_view_if_needed()
    field = STEPPERS[name]
    group = calc.get_by_role("group", name=next(f.label for f in calculators.get(name).fields if f.name == field))
    return calc, calc.locator(f'input[type=range][name="{field}"]'), group


def _visited(low, top):
    """The steps Play shows from the first: every one, or on a long stepper each stride's multiple and the last."""
    k = next(k for k in (1, 2, 5, 10, 20, 50, 100) if (top - low) / k <= 30)
    return sorted({*range(low + k, top, k), top})


def test_play_runs_each_stepper_to_its_end_and_shows_each_step_s_caption(browser, site_url, site_dir):
    """No Python here (an inert Worker): every step of the defaults is prebuilt, so Play moves through them by
    itself, each drawn with the caption CPython wrote for it, and stops at the last step, named Play again."""
    with local_only_context(browser, inert_worker=True, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        for name, path in sorted(_pages(site_dir).items()):
            page.goto(site_url + path)
            open_workbenches(page)
            page.evaluate("() => { window.chapter2.playMs = 30; }")
            calc, slider, group = _stepper(page, name)
            calc.evaluate(RECORD)
            low, top = int(slider.get_attribute("min")), int(slider.get_attribute("max"))
            group.get_by_role("button", name="Play").click()
            page.wait_for_function("([el, top]) => el.querySelector('[data-play]').dataset.playing === 'false'"
                                   " && +el.querySelector('.c2-calc__field--stepper input[type=range]').value === top",
                                   arg=[calc.element_handle(), top], timeout=WAIT_MS)
            seen = page.evaluate("() => window.__seen")
            field = STEPPERS[name]
            want = [[v, calculators.compute(name, {field: str(v)})["caption"]] for v in _visited(low, top)]
            assert seen == want, f"{name}: played {seen[:3]}..., want {want[:3]}..."
            assert len({c for _, c in seen}) == len(seen), f"{name}: two steps with one caption"
            assert group.get_by_role("button", name="Play").count() == 1  # stopped at the end: Play again
            assert calc.locator("[data-caption]").get_attribute("role") == "status"  # a live region
            assert page.evaluate("() => window.chapter2.lanes.calc.state") != "ready"  # no Python was needed
        assert not context.blocked


def test_pause_and_the_reader_s_own_input_stop_play(browser, site_url, site_dir):
    """The test drives the clock: Play moves one step at once and waits PLAY_MS before the next; Pause (by
    mouse or by keyboard) and Back or a changed field cancel that wait and leave the step where it is."""
    with local_only_context(browser, inert_worker=True, viewport={"width": 1280, "height": 900}) as context:
        page = context.new_page()
        page.goto(site_url + _pages(site_dir)["flash_stepper"])
        open_workbenches(page)
        page.evaluate(MANUAL_CLOCK, PLAY_MS)
        calc, slider, group = _stepper(page, "flash_stepper")
        play = calc.locator("[data-play]")
        group.get_by_role("button", name="Play").click()
        page.wait_for_function("() => window.__player().length === 1")  # step 1 drawn, the next one waiting
        assert slider.input_value() == "1" and play.get_attribute("data-playing") == "true"
        assert page.evaluate("() => window.__player()[0][1][1]") == PLAY_MS
        assert page.evaluate("() => window.__fire()") == 1
        assert slider.input_value() == "2" and page.evaluate("() => window.__player().length") == 1
        group.get_by_role("button", name="Pause").click()  # Pause: the wait is cancelled, nothing moves
        assert page.evaluate("() => window.__player().length") == 0 and slider.input_value() == "2"
        assert play.get_attribute("data-playing") == "false" and group.get_by_role("button", name="Play").count() == 1

        play.focus()  # the keyboard: Enter plays, Space pauses; focus stays on the button
        page.keyboard.press("Enter")
        assert slider.input_value() == "3" and group.get_by_role("button", name="Pause").count() == 1
        page.keyboard.press("Space")
        assert page.evaluate("() => window.__player().length") == 0 and slider.input_value() == "3"
        assert play.evaluate("b => b === document.activeElement")

        play.click()  # Back while playing: one step back, and the player stops
        assert slider.input_value() == "4"
        group.get_by_role("button", name="Back").click()
        assert slider.input_value() == "3" and play.get_attribute("data-playing") == "false"
        assert page.evaluate("() => window.__player().length") == 0

        play.click()  # from step 3, Play moves to step 4, the last, and stops there by itself
        assert slider.input_value() == "4" and page.evaluate("() => window.__player().length") == 0
        assert play.get_attribute("data-playing") == "false"
        play.click()  # at the end, Play starts again from the first step; another field changed stops it
        assert slider.input_value() == "0" and play.get_attribute("data-playing") == "true"
        calc.locator('[name="d"]').select_option("8")
        assert play.get_attribute("data-playing") == "false" and page.evaluate("() => window.__player().length") == 0
        assert page.evaluate("() => window.__fire()") == 0 and slider.input_value() == "0"
        assert not context.blocked


def test_play_holds_each_step_twice_as_long_for_reduced_motion_and_never_starts_by_itself(browser, site_url, site_dir):
    with local_only_context(browser, inert_worker=True, viewport={"width": 1280, "height": 900}, reduced_motion="reduce") as context:
        page = context.new_page()
        page.goto(site_url + _pages(site_dir)["prefill_decode"])
        open_workbenches(page)
        page.evaluate(MANUAL_CLOCK, PLAY_MS)
        calc, slider, group = _stepper(page, "prefill_decode")
        page.evaluate("() => window.chapter2.load()")  # the runtime is in, and nothing plays until a press
        assert slider.input_value() == "0" and page.evaluate("() => window.__player().length") == 0
        group.get_by_role("button", name="Play").click()
        page.wait_for_function("() => window.__player().length === 1")
        assert slider.input_value() == "1" and page.evaluate("() => window.__player()[0][1][1]") == 2 * PLAY_MS
        assert not context.blocked


def test_play_waits_for_python_to_draw_each_step(watched, site_dir):
    """Inputs whose steps were not prebuilt: each step is computed by Python in the browser, and Play moves on
    only once it is drawn, so every step shows, in order, with CPython's caption for it."""
    page = watched.goto(_pages(site_dir)["flash_stepper"])
    open_workbenches(page)
    page.evaluate("() => { window.chapter2.playMs = 30; }")
    calc, slider, group = _stepper(page, "flash_stepper")
    before = computed(calc)
    calc.locator('[name="seed"]').fill("5")
    _wait(page, "flash_stepper", before)
    calc.evaluate(RECORD)
    group.get_by_role("button", name="Play").click()
    page.wait_for_function("(el) => el.querySelector('[data-play]').dataset.playing === 'false'",
                           arg=calc.element_handle(), timeout=WAIT_MS)
    raw = form_values(calc)
    want = [[t, calculators.compute("flash_stepper", {**raw, "tiles": str(t)})["caption"]] for t in range(1, 5)]
    assert page.evaluate("() => window.__seen") == want
    assert "drawn when the site was built" not in calc.locator("[data-calc-status]").inner_text()
    _matches_cpython(page, "flash_stepper", calc, "played to the end")
    watched.assert_clean()
