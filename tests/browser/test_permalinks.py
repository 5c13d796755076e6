"""Permalinks (docs/assets/chapter2/share.js): every calculator's inputs in the page's URL, restored from it.

For every calculator on the built site: change its inputs (a stepper's step among them), and the address bar
carries them, in place (no new history entry); open that URL in a fresh tab, with the workbenches left closed,
and the calculator shows the same inputs and the live results for them, which CPython computes too. A pasted
config.json travels deflated when the link stays under its limit, and the link says so when it cannot carry it.
The page's anchors keep working beside the query, and "Copy link" copies a link to the one calculator.
"""

from __future__ import annotations

import json
import random
import string
from urllib.parse import urlsplit

import pytest

from _calculators import calculator_pages, changed_value, cpython_chart_digests, open_workbenches, visit
from chapter2 import calculators

pytestmark = pytest.mark.browser
WAIT_MS = 180_000
URL_LIMIT = 2000  # share.js URL_LIMIT


def _fields(calc) -> dict:
    return calc.evaluate("el => Object.fromEntries([...el.querySelector('form').elements].filter(e => e.name)"
                         ".map(e => [e.name, e.value]))")


def _shown(calc) -> dict:
    """Every output as the page shows it: texts, bars as [label, data-value], charts by their digest."""
    return calc.evaluate("""el => Object.fromEntries([...el.querySelectorAll('[data-output]')].map(dd =>
        [dd.dataset.output, dd.dataset.kind === 'bars'
            ? [...dd.querySelectorAll('.c2-bar')].map(b => [b.querySelector('.c2-bar__label').textContent, b.dataset.value])
            : dd.dataset.kind === 'chart' ? dd.querySelector('figure').dataset.digest : dd.textContent]))""")


def _settled(page, name: str, before: int = 0) -> None:
    page.wait_for_function(
        "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return !el.hasAttribute('aria-busy') && (+el.dataset.computed || 0) > b; }", arg=[name, before], timeout=WAIT_MS)


def _set(calc, field, value: str) -> None:
    control = calc.locator(f'[name="{field.name}"]')
    if field.kind == "select":
        control.select_option(value)
    else:
        control.fill(value)


def _changes(name: str) -> list[tuple]:
    """Inputs to change, each valid for CPython with the ones before: the first field that can change and the
    last (a stepper's step field, if it has one), so that a select, a number and a step all travel."""
    spec = calculators.get(name)
    raw, picks = spec.defaults(), []
    for field in spec.fields:
        value = changed_value(field)
        applies = getattr(field, "applies", lambda raw: True)
        if value is None or field.name == "model_id" or not applies(raw):
            continue
        trial = {**raw, field.name: value}
        if json.loads(calculators.compute_json(name, json.dumps(trial)))["ok"]:
            picks.append((field, value))
    step = [p for p in picks if p[0].stepper]
    chosen = picks[:1] + (step or picks[-1:])
    return list(dict.fromkeys(chosen)) if chosen else []


def _address_has(page, names) -> None:
    """Wait until the address bar carries a parameter for each calculator in `names` (share.js writes it a moment
    after the last change)."""
    page.wait_for_function("names => { const keys = location.search.slice(1).split('&').map(p => p.split('=')[0]);"
                           " return names.every(n => keys.includes(n)); }", arg=list(names), timeout=WAIT_MS)


def _differs(field, raw: dict) -> bool:
    """Whether the form's value of `field` differs from its default (a slider's as a number), in a field in use."""
    value, default = raw[field.name], str(field.default)
    if field.kind == "range":
        return float(value) != float(default)
    return value != default and getattr(field, "applies", lambda raw: True)(raw)


def _address_carries(page, differ: dict) -> None:
    """Wait until the address bar's parameter of each calculator names exactly the fields in `differ[name]`."""
    page.wait_for_function("""differ => { const q = Object.fromEntries(location.search.slice(1).split('&').filter(Boolean)
        .map(p => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
        return Object.entries(differ).every(([n, fields]) => (q[n] || '').split(',').filter(Boolean)
            .map(x => x.slice(0, x.indexOf(':'))).sort().join() === fields.join()); }""", arg=differ, timeout=WAIT_MS)


def _by_page(site_dir) -> dict[str, list[str]]:
    pages: dict[str, list[str]] = {}
    for name, path in sorted(calculator_pages(site_dir, set(calculators.REGISTRY)).items()):
        pages.setdefault(path, []).append(name)
    return pages


def _tab(watched):
    """A new tab in the watched context, its errors reported with the watched page's."""
    tab = watched.page.context.new_page()
    tab.on("console", lambda m: m.type == "error" and watched.console_errors.append(m.text))
    tab.on("pageerror", lambda e: watched.page_errors.append(str(e)))
    return tab


def _in_workbench(page, name: str) -> bool:
    return page.evaluate("n => !!document.querySelector(`[data-calculator=${n}]`).closest('details')", name)


def test_every_calculator_comes_back_from_its_link(watched, browser, site_url, site_dir):
    checked, page = set(), None
    for path, names in _by_page(site_dir).items():
        page = visit(watched, path, page)
        history = page.evaluate("history.length")
        open_workbenches(page)
        want = {}
        for name in names:
            calc = page.locator(f'[data-calculator="{name}"]')
            changes = _changes(name)
            assert changes, f"{name}: no input to change"
            for field, value in changes:
                before = int(calc.get_attribute("data-computed") or 0)
                _set(calc, field, value)
                _settled(page, name, before)
            want[name] = (_fields(calc), _shown(calc))
            raw = want[name][0]
            answer = json.loads(calculators.compute_json(name, json.dumps(raw)))
            assert answer["ok"], (name, raw)
            texts = {o.key for o in calculators.get(name).outputs if o.kind in ("text", "caption")}
            assert {k: v for k, v in want[name][1].items() if k in texts} == {k: answer["outputs"][k] for k in texts}, name
        # only what differs from the defaults travels (share.js writes it a moment after the last change)
        differ = {name: sorted(f.name for f in calculators.get(name).fields if _differs(f, want[name][0])) for name in names}
        _address_carries(page, differ)
        assert page.evaluate("history.length") == history, f"{path}: changing inputs added history entries"
        url = page.url
        assert len(url) <= URL_LIMIT, url
        fresh = _tab(watched)  # a new tab: no form state the browser could restore
        fresh.goto(url)
        for name in names:
            _settled(fresh, name)
            calc = fresh.locator(f'[data-calculator="{name}"]')
            assert _fields(calc) == want[name][0], f"{name}: inputs from {url}"
            assert _shown(calc) == want[name][1], f"{name}: outputs from {url}"
            assert cpython_chart_digests(name, want[name][0]) == {
                k: v for k, v in _shown(calc).items() if k in cpython_chart_digests(name, want[name][0])}, name
            assert "c2-calc--stale" not in (calc.get_attribute("class") or ""), name
            if _in_workbench(fresh, name):
                assert fresh.evaluate("n => document.querySelector(`[data-calculator=${n}]`).closest('details').open",
                                      name), f"{name}: the link did not open its workbench"
            checked.add(name)
        fresh.close()
        watched.assert_clean()
    assert checked == set(calculators.REGISTRY)


def _pasted_config() -> str:
    from chapter2.models import FAMILY_CONFIG_DIR

    return (FAMILY_CONFIG_DIR / "SmolLM3-3B.json").read_text()


def test_a_pasted_config_travels_deflated_and_a_too_long_one_is_left_out_with_a_note(watched, site_dir):
    path = calculator_pages(site_dir, {"kv_cache"})["kv_cache"]
    page = watched.goto(path)
    calc = page.locator('[data-calculator="kv_cache"]')
    field = next(f for f in calculators.get("kv_cache").fields if f.name == "config_json")
    text = _pasted_config()
    before = int(calc.get_attribute("data-computed") or 0)
    _set(calc, field, text)
    _settled(page, "kv_cache", before)
    _address_has(page, ["kv_cache"])
    page.wait_for_function("() => location.search.includes('config_json:~z')", timeout=WAIT_MS)
    url, shown = page.url, _shown(calc)
    assert len(url) < len(text) and len(url) <= URL_LIMIT, (len(url), len(text))
    assert "SmolLM3" in shown["model_info"]

    fresh = _tab(watched)
    fresh.goto(url)
    _settled(fresh, "kv_cache")
    restored = fresh.locator('[data-calculator="kv_cache"]')
    assert restored.locator('[name="config_json"]').input_value() == text
    assert _shown(restored) == shown
    fresh.close()

    # a config that does not compress (a random string in a key no reader reads) cannot ride along: the link
    # leaves it out, keeps the other inputs, and both the page and whoever opens the link are told
    noise = "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=3000))
    big = json.dumps({**json.loads(text), "_note": noise}, indent=1)
    context_field = next(f for f in calculators.get("kv_cache").fields if f.name == "context")
    for f, value in ((field, big), (context_field, "65536")):
        before = int(calc.get_attribute("data-computed") or 0)
        _set(calc, f, value)
        _settled(page, "kv_cache", before)
    page.wait_for_function("() => location.search.includes('config_json:~x') && location.search.includes('context:65536')",
                           timeout=WAIT_MS)
    assert len(page.url) <= URL_LIMIT
    status = calc.locator("[data-share-status]")
    assert "cannot carry" in status.inner_text() and "under 2,000 characters" in status.inner_text()

    fresh = _tab(watched)
    fresh.goto(page.url)
    _settled(fresh, "kv_cache")
    restored = fresh.locator('[data-calculator="kv_cache"]')
    assert restored.locator('[name="context"]').input_value() == "65536"
    assert restored.locator('[name="config_json"]').input_value() == ""
    assert "could not carry" in restored.locator("[data-share-status]").inner_text()
    want = json.loads(calculators.compute_json("kv_cache", json.dumps(_fields(restored))))
    assert restored.locator('[data-output="total"]').inner_text() == want["outputs"]["total"]
    fresh.close()
    watched.assert_clean()


def test_anchors_work_beside_the_query_and_copy_link_copies_one_calculator(watched, site_dir):
    path = calculator_pages(site_dir, {"kv_cache"})["kv_cache"]
    page = watched.goto(path)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    heading = page.evaluate("() => [...document.querySelectorAll('h2[id]')].filter(h => h.getBoundingClientRect().top"
                            " + scrollY + 2 * innerHeight < document.body.scrollHeight).at(-1).id")  # not at the end
    page.goto(f"{watched.base}{path}?kv_cache=context:65536#{heading}")
    _settled(page, "kv_cache")
    top = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", heading)
    assert 0 <= top < 200, f"#{heading} is at {top} px, not at the top"
    calc = page.locator('[data-calculator="kv_cache"]')
    assert calc.locator('[name="context"]').input_value() == "65536"
    # an in-page link keeps the query; a later change keeps the anchor
    page.evaluate("id => { const a = document.createElement('a'); a.href = '#' + id; a.id = 'c2-test-link';"
                  " a.textContent = 'x'; document.body.prepend(a); }", heading)
    page.locator("#c2-test-link").click()
    assert urlsplit(page.url).query == "kv_cache=context:65536" and urlsplit(page.url).fragment == heading
    before = int(calc.get_attribute("data-computed") or 0)
    calc.locator('[name="batch"]').fill("4")
    _settled(page, "kv_cache", before)
    page.wait_for_function("() => location.search.includes('batch:4')", timeout=WAIT_MS)
    assert urlsplit(page.url).fragment == heading

    button = calc.locator('[data-share="link"]')
    button.click()
    page.wait_for_function("() => document.querySelector('[data-calculator=kv_cache] [data-share=link]').dataset.copies")
    copied = page.evaluate("() => navigator.clipboard.readText()")
    parts = urlsplit(copied)
    assert (parts.path, parts.query, parts.fragment) == (f"/{path}", "kv_cache=context:65536,batch:4", "calculator-kv_cache")
    assert "Link copied" in calc.locator("[data-share-status]").inner_text()

    fresh = _tab(watched)
    fresh.goto(copied)
    _settled(fresh, "kv_cache")
    box = fresh.locator('[data-calculator="kv_cache"]').bounding_box()
    assert box and 0 <= box["y"] < 200, f"the copied link does not scroll to its calculator ({box})"
    assert _fields(fresh.locator('[data-calculator="kv_cache"]')) == _fields(calc)
    assert _shown(fresh.locator('[data-calculator="kv_cache"]')) == _shown(calc)
    fresh.close()
    watched.assert_clean()


def test_a_looked_up_model_id_travels_and_the_link_looks_it_up(browser, site_url, site_dir):
    """A Hub model id travels once looked up (the Hub answered by the recorded files of test_hub_in_browser), and
    opening the link looks it up again: the same numbers; a half-typed id does not travel."""
    from conftest import local_only_context
    from test_hub_in_browser import GRANITE, GRANITE_DIR, GRANITE_REV, FakeHub, _elsewhere

    path = calculator_pages(site_dir, {"model_config"})["model_config"]
    fake = FakeHub()
    fake.files[GRANITE] = {"config.json": (GRANITE_DIR / "config.json").read_bytes(), "model.safetensors": None}
    fake.revisions[GRANITE] = {GRANITE_REV}
    typed = f"{GRANITE}@{GRANITE_REV}"
    done = ("() => document.querySelector('[data-calculator=model_config] [data-hub-status]').dataset.state === 'done'"
            " && !document.querySelector('[data-calculator=model_config]').hasAttribute('aria-busy')")
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        context.route("https://huggingface.co/**", fake.handle)
        page = context.new_page()
        page.goto(site_url + path)
        open_workbenches(page)
        calc = page.locator('[data-calculator="model_config"]')
        calc.locator('[name="model_id"]').fill(typed)
        before = int(calc.get_attribute("data-computed") or 0)
        calc.locator('[name="context"]').fill("65536")  # recomputes without the id, which is not looked up yet
        _settled(page, "model_config", before)
        _address_carries(page, {"model_config": ["context"]})
        assert not fake.seen
        calc.locator('[name="model_id"]').press("Enter")
        page.wait_for_function(done, timeout=WAIT_MS)
        _address_carries(page, {"model_config": ["context", "model_id"]})
        shown = _shown(calc)
        assert shown["model_info"].startswith(f"{typed}: GraniteMoE")
        fake.seen.clear()

        fresh = context.new_page()
        fresh.goto(page.url)
        fresh.wait_for_function(done, timeout=WAIT_MS)
        restored = fresh.locator('[data-calculator="model_config"]')
        _settled(fresh, "model_config")
        assert restored.locator('[name="model_id"]').input_value() == typed
        assert _shown(restored) == shown
        assert any(url.endswith(f"/{GRANITE}/resolve/{GRANITE_REV}/config.json") for url, _ in fake.seen)
        assert not _elsewhere(context)
