"""A beside B in the browser: the compare toggle of every calculator that has one, against CPython.

Turning the toggle on shows the default comparison at once (built with the page); changing one of B's inputs
recomputes both sides in one request, and the table (A, B, B / A) and both sides' drawings equal CPython's; a bad
B input shows B's inline message on B's field, the calculator stays usable, and a good value recovers it.
"""

from __future__ import annotations

import json

import pytest

from _calculators import calculator_pages, computed, open_workbenches, wait_recomputed
from chapter2 import calculators, charts

pytestmark = pytest.mark.browser
WAIT_MS = 90_000
COMPARING = sorted(name for name, calc in calculators.REGISTRY.items() if calc.compare)
# per calculator: a bad value for one of B's inputs (after the fields to set first), then a good one
BAD_B = {
    "model_config": ([], "config_json_b", "{not json", ""),
    "roofline": ([("gpu_b", "custom")], "custom_tflops_b", "abc", "500"),
    "diffusion_pipeline": ([("gpu_b", "custom")], "custom_tb_s_b", "-1", "8"),
    "video_generation": ([("gpu_b", "custom")], "custom_tflops_b", "", "2000"),
    "denoiser_any": ([], "config_json_b", '{"_class_name": "NoSuchTransformer"}', ""),
}


def _raw(calc) -> dict:
    return calc.evaluate("el => Object.fromEntries([...el.querySelector('form').elements].filter(e => e.name)"
                         ".map(e => [e.name, e.value]))")


def _table(calc) -> list:
    """The panel's rows as the reader sees them: [label, A, B, B / A]."""
    return calc.evaluate("el => [...el.querySelectorAll('[data-compare-panel] tbody tr')].map(tr =>"
                         " [...tr.children].map(c => c.textContent))")


def _digests(calc) -> list:
    return calc.evaluate("el => [...el.querySelectorAll('[data-compare-panel] figure.c2-chart')]"
                         ".map(f => f.dataset.digest)")


def _cpython(name: str, raw: dict) -> tuple[list, list]:
    """CPython's table rows and its drawings' digests (A's, then B's, for each chart output) for these inputs."""
    result = calculators.compare(name, raw)
    keys = [o.key for o in calculators.get(name).outputs if o.kind == "chart" and not o.details]
    return [list(r) for r in result.rows], [charts.digest(side[k]) for k in keys for side in (result.a, result.b)]


def _set(page, calc, name, field, value):
    before = computed(calc)
    control = calc.locator(f'[name="{field}"]')
    if control.evaluate("el => el.tagName") == "SELECT":
        control.select_option(value)
    else:
        control.fill(value)
    page.wait_for_function(
        "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return !el.hasAttribute('aria-busy') && ((+el.dataset.computed || 0) > b"
        " || !el.querySelector('[data-calc-message]').hidden); }", arg=[name, before], timeout=WAIT_MS)


def test_compare_two_choices_side_by_side(watched, site_dir):
    pages = calculator_pages(site_dir, set(COMPARING))
    assert set(pages) == set(COMPARING)
    for name in sorted(COMPARING, key=lambda n: pages[n]):
        page = watched.goto(pages[name])
        open_workbenches(page)  # several sit in closed Workbench blocks
        calc = page.locator(f'[data-calculator="{name}"]')
        spec = calculators.get(name)
        panel = calc.locator("[data-compare-panel]")
        b_fields = [calc.locator(f'[name="{b}"]') for b in spec.compare.values()]
        assert panel.is_hidden() and not any(f.is_visible() for f in b_fields), f"{name}: B shows with the toggle off"

        # on: the default comparison at once, from the page as built (not dimmed: it is about these inputs)
        before = computed(calc)
        calc.locator('[name="compare"]').select_option("on")
        panel.wait_for(state="visible", timeout=WAIT_MS)
        assert "c2-compare--stale" not in (panel.get_attribute("class") or ""), name
        rows, digests = _cpython(name, _raw(calc))
        assert _table(calc) == rows, f"{name}: the default comparison"
        assert calc.locator(f'[name="{next(iter(spec.compare.values()))}"]').is_visible()
        wait_recomputed(page, name, before, WAIT_MS)
        assert _table(calc) == rows and _digests(calc) == digests, f"{name}: recomputed in the browser"

        # change B's first input (to an option neither side holds): both sides recomputed in the browser, the
        # table and drawings as CPython's
        a_name, b_name = next(iter(spec.compare.items()))
        first = next(f for f in spec.fields if f.name == b_name)
        held = {str(first.default), _raw(calc)[a_name]}
        _set(page, calc, name, b_name, next(str(v) for v, _ in first.options if str(v) not in held))
        assert calc.locator("[data-calc-message]").is_hidden(), f"{name}: {first.name} changed"
        rows, digests = _cpython(name, _raw(calc))
        assert _table(calc) == rows and _digests(calc) == digests, f"{name}: after {first.name}"
        assert rows[0][2] != rows[0][1], f"{name}: the changed input heads the table"

        # a bad B input: B's message, on B's field; the page stays usable; a good value recovers
        setup, field, bad, good = BAD_B[name]
        for f, v in setup:
            _set(page, calc, name, f, v)
        _set(page, calc, name, field, bad)
        want = json.loads(calculators.compute_json(name, json.dumps(_raw(calc))))
        assert want["ok"] is False and want["message"].startswith("B: "), (name, want)
        message = calc.locator("[data-calc-message]")
        assert message.is_visible() and message.inner_text().startswith(want["message"]), name
        assert calc.locator(f'[name="{want["field"]}"]').get_attribute("aria-invalid") == "true", name
        _set(page, calc, name, field, good)
        assert message.is_hidden(), f"{name}: the message stays after a good B value"
        rows, digests = _cpython(name, _raw(calc))
        assert _table(calc) == rows and _digests(calc) == digests, f"{name}: after a good B value"

        # off: B hides, A's results stay A's
        _set(page, calc, name, "compare", "off")
        assert panel.is_hidden() and not any(f.is_visible() for f in b_fields), name
        watched.assert_clean()


def test_b_looks_a_model_up_by_its_hub_id(browser, site_url):
    """B's own model id field (model_id_b) and Look up button: the Hub answered by a recorded config.json
    (tests/fixtures/hub); B's numbers are those CPython gives for that record, A's stay the select's."""
    from chapter2 import hub
    from chapter2.calculators import _hub
    from conftest import local_only_context
    from test_hub_in_browser import GRANITE, GRANITE_DIR, GRANITE_REV, HUB, FakeHub

    fake = FakeHub()
    config = (GRANITE_DIR / "config.json").read_bytes()
    fake.files[GRANITE] = {"config.json": config, "model.safetensors": None}
    fake.revisions[GRANITE] = {GRANITE_REV}
    mid = hub.parse_model_id(GRANITE, GRANITE_REV)
    record = hub.plan(mid, "llm", {"config.json": hub.Reply(200, config), "model.safetensors.index.json": hub.Reply(404),
                                   "model.safetensors#0-7": hub.Reply(0)})
    _hub.remember(json.dumps({mid.text: record.to_json()}))  # CPython's side: the record the page fetches
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        context.route(f"{HUB}**", fake.handle)
        page = context.new_page()
        page.goto(site_url + "llm-architecture/")
        open_workbenches(page)
        calc = page.locator('[data-calculator="model_config"]')
        _set(page, calc, "model_config", "compare", "on")
        field = calc.locator('.c2-calc__field:has([name="model_id_b"])')
        field.locator('[name="model_id_b"]').fill(mid.text)
        assert not fake.seen, "typing fetches nothing"
        before = computed(calc)
        field.locator("[data-hub-lookup]").click()
        page.wait_for_function("() => document.querySelector('[data-calculator=model_config] "
                               ".c2-calc__field:has([name=model_id_b]) [data-hub-status]').dataset.state === 'done'",
                               timeout=WAIT_MS)
        wait_recomputed(page, "model_config", before, WAIT_MS)
        rows, _ = _cpython("model_config", _raw(calc))
        assert _table(calc) == rows
        assert rows[0] == ["Model (config.json)", "Llama-3.1-8B", mid.text, ""], rows[0]  # the id wins over B's select
        assert rows[1] == ["Parameters", "8.03B", "1.33B", "0.166×"], rows[1]  # Granite 3.1 1B-A400M: 1,334,628,352
        assert (f"{HUB}{GRANITE}/resolve/{GRANITE_REV}/config.json", None) in fake.seen
        assert calc.locator('[name="model_id"]').input_value() == ""  # A's id field untouched
        assert not [u for u in context.blocked if not u.startswith(HUB)]


def test_a_comparison_travels_in_the_permalink(watched, site_dir):
    """The toggle and B's inputs are ordinary fields: the address bar carries them (compare:on, gpu_b:...), and a
    fresh tab opened on that link shows the same comparison, computed again, as CPython's."""
    path = calculator_pages(site_dir, {"roofline"})["roofline"]
    page = watched.goto(path)
    open_workbenches(page)
    calc = page.locator('[data-calculator="roofline"]')
    for field, value in (("compare", "on"), ("gpu_b", "H200-SXM"), ("dtype_b", "fp8")):
        _set(page, calc, "roofline", field, value)
    page.wait_for_function("() => /[?&]roofline=[^&]*compare:on[^&]*gpu_b:H200-SXM[^&]*dtype_b:fp8/.test(location.search)",
                           timeout=WAIT_MS)
    raw, rows = _raw(calc), _table(calc)
    assert rows == _cpython("roofline", raw)[0]
    fresh = watched.page.context.new_page()
    fresh.goto(page.url)
    again = fresh.locator('[data-calculator="roofline"]')
    fresh.wait_for_function("() => { const el = document.querySelector('[data-calculator=roofline]');"
                            " return (+el.dataset.computed || 0) > 0 && !el.hasAttribute('aria-busy')"
                            " && !el.querySelector('[data-compare-panel]').hidden; }", timeout=WAIT_MS)
    assert _raw(again) == raw and _table(again) == rows
    assert "c2-compare--stale" not in (again.locator("[data-compare-panel]").get_attribute("class") or "")
    fresh.close()
    watched.assert_clean()
