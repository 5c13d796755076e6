"""Every calculator on every page, in the browser, against CPython.

For each calculator: the build-time defaults equal `calculators.compute(name)`;
after changing one input in the page, the worker's outputs equal CPython's for
the same raw inputs; a fuzzed bad value shows an inline message, never NaN or
Infinity, and the calculator recovers.
"""

from __future__ import annotations

from html import unescape
import json
import re

import pytest

from _calculators import changed_value, open_workbenches, visit
from chapter2 import calculators, charts

pytestmark = pytest.mark.browser
WAIT_MS = 60_000


def _pages(site_dir):
    pages = {}
    for html in sorted(site_dir.rglob("index.html")):
        for name in re.findall(r'data-calculator="([\w-]+)"', html.read_text()):
            pages.setdefault(name, html.parent.relative_to(site_dir).as_posix())
    return pages


def _raw(calc):
    return calc.evaluate("el => Object.fromEntries([...el.querySelector('form').elements].filter(e => e.name).map(e => [e.name, e.value]))")


def _outputs(calc):
    return calc.evaluate("""el => Object.fromEntries([...el.querySelectorAll('[data-output]')].map(dd =>
        [dd.dataset.output, dd.dataset.kind === 'bars'
            ? [...dd.querySelectorAll('.c2-bar')].map(b => [b.querySelector('.c2-bar__label').textContent, +b.dataset.value])
            : dd.dataset.kind === 'chart' ? dd.querySelector('figure').dataset.digest : dd.textContent]))""")


def _normalise(outputs):
    """Bars to rounded numbers; a chart to its digest: the page's figure carries the digest of the data it drew,
    `compute` gives the data, `compute_json` the drawing (with the digest in it)."""
    def chart(val):
        return charts.digest(val) if isinstance(val, dict) else re.match(r'<figure class="c2-chart[^"]*" data-digest="(\w+)"', val)[1]

    def bars(val):  # compute_json sends bars drawn by charts.render_bars: read back its labels and data-values
        return [[unescape(lbl), v] for v, lbl in re.findall(
            r'<div class="c2-bar" data-value="([^"]+)"><span class="c2-bar__label">(.*?)</span>', val)]

    outputs = {k: bars(v) if isinstance(v, str) and v.startswith('<div class="c2-bars"') else v for k, v in outputs.items()}
    return {k: [[str(lbl), float(f"{float(v):.9g}")] for lbl, v in val] if isinstance(val, list)
            else chart(val) if isinstance(val, dict) or str(val).startswith('<figure class="c2-chart') else val
            for k, val in outputs.items()}


def _wait_computed(page, name, before, *, or_message=False):
    """Wait until the worker painted a new result (or, with or_message, showed an inline message)."""
    page.wait_for_function(
        "([n, b, m]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return !el.hasAttribute('aria-busy') && ((+el.dataset.computed || 0) > b"
        " || (m && !el.querySelector('[data-calc-message]').hidden)); }",
        arg=[name, before, or_message], timeout=WAIT_MS)


def _set(calc, field, value):
    control = calc.locator(f'[name="{field.name}"]')
    if field.kind == "select":
        control.select_option(value)
    else:
        control.fill(value)


def test_every_calculator_is_on_a_page(site_dir):
    assert set(_pages(site_dir)) == set(calculators.REGISTRY), "each registered calculator appears on some page"


def test_each_calculator_matches_cpython_in_the_browser(watched, site_dir):
    current = page = None
    for name, path in sorted(_pages(site_dir).items(), key=lambda kv: kv[1]):
        if path != current:
            page, current = visit(watched, path, page), path
            open_workbenches(page)
        calc = page.locator(f'[data-calculator="{name}"]')
        assert _normalise(_outputs(calc)) == _normalise(calculators.compute(name)), f"{name}: build-time defaults"
        spec = calculators.get(name)
        changed = 0
        for field in spec.fields:
            value = changed_value(field)
            # (typing in a Hub model id, A's or B's, recomputes nothing: test_hub_in_browser.py and
            # test_compare_in_browser.py drive them)
            if value is None or field.name in ("model_id", "model_id_b") or not field.applies(_raw(calc)):  # or a hidden control (show_when)
                continue
            before = int(calc.get_attribute("data-computed") or 0)
            _set(calc, field, value)
            try:
                _wait_computed(page, name, before, or_message=True)
            except Exception as err:
                raise AssertionError(f"{name}: no result after {field.name}={value!r} ({err})") from None
            raw = _raw(calc)
            want = json.loads(calculators.compute_json(name, json.dumps(raw)))
            if want["ok"]:
                assert _normalise(_outputs(calc)) == _normalise(want["outputs"]), f"{name}: after {field.name}={value}"
            else:  # the changed value is invalid in combination: the same message must show inline
                assert calc.locator("[data-calc-message]").inner_text() == want["message"]
                _set(calc, field, str(field.default))
                try:
                    _wait_computed(page, name, before)
                except Exception as err:
                    raise AssertionError(f"{name}: no result after restoring {field.name}={field.default!r} ({err})") from None
            changed += 1
        assert changed, f"{name}: no field could be changed"
        watched.assert_clean()


BAD_VALUES = ["", "NaN", "-1e308", "1e308", "abc"]


def test_fuzzed_input_shows_a_message_and_recovers(watched, site_dir):
    by_page = {}
    for name, path in _pages(site_dir).items():
        by_page.setdefault(path, []).append(name)
    page = None
    for path, names in by_page.items():
        page = visit(watched, path, page)
        open_workbenches(page)
        for name in names:
            calc = page.locator(f'[data-calculator="{name}"]')
            message = calc.locator("[data-calc-message]")
            spec = calculators.get(name)
            # (the Hub model id is left out: typing in it recomputes nothing; test_hub_in_browser.py covers it)
            fields = [f for f in spec.fields if f.kind in ("number", "text") and f.name != "model_id"
                      and f.applies(spec.defaults())][:2]
            for field in fields:
                for bad in BAD_VALUES:
                    if bad == str(field.default):
                        continue  # no change, no input event
                    before = int(calc.get_attribute("data-computed") or 0)
                    calc.locator(f'[name="{field.name}"]').fill(bad)
                    try:
                        page.wait_for_function(
                            "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
                            " return !el.hasAttribute('aria-busy') && ((+el.dataset.computed || 0) > b || !el.querySelector('[data-calc-message]').hidden); }",
                            arg=[name, before], timeout=WAIT_MS)
                    except Exception as err:
                        raise AssertionError(f"{name}.{field.name}={bad!r}: no result and no message ({err})") from None
                    shown = " ".join(str(v) for v in _outputs(calc).values()).lower()
                    assert "nan" not in shown.split() and "infinity" not in shown, f"{name}.{field.name}={bad!r}: {shown}"
                    if not message.is_hidden():
                        assert message.inner_text().strip()
                    before = int(calc.get_attribute("data-computed") or 0)
                    calc.locator(f'[name="{field.name}"]').fill(str(field.default))
                    try:
                        _wait_computed(page, name, before)
                    except Exception as err:
                        raise AssertionError(f"{name}.{field.name}: no recompute after restoring {field.default!r} from {bad!r} ({err})") from None
                    assert message.is_hidden(), f"{name}.{field.name}: message stays after a valid value"
        watched.assert_clean()


def _assert_shows(calc, want, what):
    """The calculator shows CPython's answer `want` (charts compared by digest), and no inline message."""
    shown, expected = _normalise(_outputs(calc)), _normalise(want["outputs"])
    for key, value in expected.items():  # compute_json sends charts drawn: compare their digests
        if isinstance(value, str) and value.startswith("<figure"):
            expected[key] = re.search(r'data-digest="([0-9a-f]+)"', value).group(1)
    assert shown == expected, what
    assert calc.locator("[data-calc-message]").is_hidden(), what


def test_a_pasted_config_json_is_read_in_the_browser(watched, site_dir):
    """A reader's own config.json pasted into the text area: the worker reads it as CPython does (family, counts,
    KV per layer kind, defaulted fields); an unsupported class shows the inline message; clearing the text area
    goes back to the selected shipped config."""
    from chapter2.models import FAMILY_CONFIG_DIR

    pages = _pages(site_dir)
    pasted = (FAMILY_CONFIG_DIR / "SmolLM3-3B.json").read_text()
    for name in ("kv_cache", "model_config"):
        page = watched.goto(pages[name])
        open_workbenches(page)
        calc = page.locator(f'[data-calculator="{name}"]')
        field = next(f for f in calculators.get(name).fields if f.name == "config_json")
        for text, ok in ((pasted, True), ('{"architectures": ["FalconForCausalLM"]}', False), ("", True)):
            before = int(calc.get_attribute("data-computed") or 0)
            _set(calc, field, text)
            _wait_computed(page, name, before, or_message=not ok)
            want = json.loads(calculators.compute_json(name, json.dumps(_raw(calc))))
            assert want["ok"] is ok, (name, text[:40])
            if ok:
                _assert_shows(calc, want, f"{name}: pasted {text[:40]!r}")
                if text:
                    assert "SmolLM3" in want["outputs"]["model_info"]
            else:
                # one line naming the class, and a link to the families' list (its text after the message)
                assert calc.locator("[data-calc-message]").inner_text() == f"{want['message']} ({want['link']['text']})"
                assert "FalconForCausalLM is of none of the" in want["message"]
        watched.assert_clean()


def test_a_pasted_whisper_config_gives_numbers_in_every_calculator_that_takes_a_config(watched, site_dir):
    """whisper-large-v3's shipped config.json pasted into each calculator that reads one, at its default contexts
    (32,768 or 4,096 tokens, past the decoder's 448 positions): each shows numbers, as CPython does, no inline
    message, and says where it capped the context; the block diagram draws the encoder's block and the decoder's."""
    from chapter2.models import FAMILY_CONFIG_DIR

    pages = _pages(site_dir)
    pasted = (FAMILY_CONFIG_DIR / "whisper-large-v3.json").read_text()
    said = {"kv_cache": "note", "roofline": "decode", "decode_batching": "intensity", "model_config": "layers"}
    for name in (*said, "model_diagram"):
        page = watched.goto(pages[name])
        open_workbenches(page)
        calc = page.locator(f'[data-calculator="{name}"]')
        field = next(f for f in calculators.get(name).fields if f.name == "config_json")
        before = int(calc.get_attribute("data-computed") or 0)
        _set(calc, field, pasted)
        _wait_computed(page, name, before)
        want = json.loads(calculators.compute_json(name, json.dumps(_raw(calc))))
        assert want["ok"] is True, (name, want)
        _assert_shows(calc, want, f"{name}: pasted whisper-large-v3")
        if name in said:
            assert "capped at 448 tokens" in _outputs(calc)[said[name]], name
            assert "Whisper (WhisperForConditionalGeneration)" in calc.inner_text(), name
        else:
            svg = calc.locator("[data-output=diagram] svg")
            assert "× 32 encoder layers" in svg.text_content() and "× 32 decoder layers" in svg.text_content()
    watched.assert_clean()
