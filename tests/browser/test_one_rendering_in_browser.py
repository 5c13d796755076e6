"""One rendering per number, in the browser: no e-notation anywhere a reader looks (page text, tables, chart
labels and text alternatives, calculator outputs after an input change, error messages); controls that apply
only to some inputs are hidden (the `hidden` attribute, out of the accessibility tree) until they apply; a
pasted config.json names itself in the model select; a config of no supported family is one line with a link.
"""

from __future__ import annotations

import json
import re

import pytest

from _calculators import changed_value, computed, open_workbenches, visit, wait_recomputed
from chapter2 import calculators

pytestmark = pytest.mark.browser
WAIT_MS = 90_000
E_NOTATION = r"\d(\.\d+)?[eE][+-]?\d"

# What a reader sees: visible text outside code (a program's source or output is the program's own), the text
# alternatives of drawings (an SVG's <title> and <desc>, an image's alt) and the open inline messages.
SEEN = """(root) => {
  const out = [];
  const skip = (el) => el.closest('pre, code, textarea, script, style, .highlight, [data-snippet] output');
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || skip(el) || !node.textContent.trim()) continue;
    const alt = el.closest('svg desc, svg title');
    if (alt || el.checkVisibility({visibilityProperty: true})) out.push(node.textContent);
  }
  for (const img of root.querySelectorAll('img[alt]')) out.push(img.alt);
  return out.join('\\n');
}"""


def _site_pages(site_dir) -> list[str]:
    skip = ("assets/", "pyodide/", "search/", "figures/")
    return sorted(p.parent.relative_to(site_dir).as_posix() for p in site_dir.rglob("index.html")
                  if not p.relative_to(site_dir).as_posix().startswith(skip))


def _assert_plain(text: str, where: str) -> None:
    found = re.search(E_NOTATION, text)
    assert not found, f"{where}: e-notation {found.group(0)!r} in …{text[max(0, found.start() - 80):found.end() + 40]}…"


def test_no_page_shows_e_notation_even_after_an_input_change_or_an_error(watched, site_dir):
    page = None
    for path in _site_pages(site_dir):
        page = visit(watched, path if path != "." else "", page)
        open_workbenches(page)
        _assert_plain(page.evaluate(SEEN, page.locator("body").element_handle()), path)
        for name in page.eval_on_selector_all("[data-calculator]", "els => els.map(e => e.dataset.calculator)"):
            calc = page.locator(f'[data-calculator="{name}"]')
            spec = calculators.get(name)
            shown = [f for f in spec.fields if f.applies(spec.defaults())]
            number = next((f for f in shown if f.kind == "number" and f.max is not None), None)
            if number is not None:  # far past its top: the message states the limit and the value, digits grouped
                before = computed(calc)
                calc.locator(f'[name="{number.name}"]').fill(str(int(number.max * 1000)))
                page.wait_for_function(
                    "n => !document.querySelector(`[data-calculator=${n}] [data-calc-message]`).hidden", arg=name,
                    timeout=WAIT_MS)
                message = calc.locator("[data-calc-message]").inner_text()
                assert "must be at most" in message, (name, message)
                _assert_plain(message, f"{path} {name} message")
                calc.locator(f'[name="{number.name}"]').fill(str(number.default))
                wait_recomputed(page, name, before, WAIT_MS)
            field = next((f for f in shown if changed_value(f) is not None and f.kind != "text"), None)
            if field is not None:  # a new result, drawn in the browser
                before = computed(calc)
                control = calc.locator(f'[name="{field.name}"]')
                if field.kind == "select":
                    control.select_option(changed_value(field))
                elif field.kind == "range":
                    control.evaluate("(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
                                     changed_value(field))
                else:
                    control.fill(changed_value(field))
                page.wait_for_function(  # a new result, or a message (a model too big for the GPU, say)
                    "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`); return "
                    "!el.hasAttribute('aria-busy') && ((+el.dataset.computed || 0) > b "
                    "|| !el.querySelector('[data-calc-message]').hidden); }", arg=[name, before], timeout=WAIT_MS)
                _assert_plain(page.evaluate(SEEN, calc.element_handle()), f"{path} {name} after {field.name}")
    watched.assert_clean()


def _calc_page(site_dir, name: str) -> str:
    for html in sorted(site_dir.rglob("index.html")):
        if f'data-calculator="{name}"' in html.read_text():
            return html.parent.relative_to(site_dir).as_posix()
    raise AssertionError(f"no page shows {name}")


def test_custom_gpu_fields_show_only_for_a_custom_gpu(watched, site_dir):
    page = watched.goto(_calc_page(site_dir, "ops_per_byte"))
    open_workbenches(page)
    calc = page.locator('[data-calculator="ops_per_byte"]')
    boxes = [calc.locator(f'[name="{n}"]') for n in ("custom_tflops", "custom_tb_s")]

    def shown():
        return [box.is_visible() for box in boxes]

    hidden_attr = calc.evaluate("el => [...el.querySelectorAll('[data-show-field]')].map(d => d.hidden)")
    assert shown() == [False, False] and hidden_attr == [True, True]  # hidden, not just out of sight
    # out of the accessibility tree too: no textbox named "Custom GPU" is exposed
    assert calc.get_by_role("textbox", name=re.compile("Custom GPU")).count() == 0
    before = computed(calc)
    calc.locator('[name="gpu"]').select_option("custom")
    boxes[1].wait_for(state="visible", timeout=WAIT_MS)  # (the runtime loads on this first input)
    assert shown() == [True, True]
    assert calc.get_by_role("textbox", name=re.compile("Custom GPU")).count() == 2
    wait_recomputed(page, "ops_per_byte", before, WAIT_MS)
    before = computed(calc)
    boxes[0].fill("500")
    boxes[1].fill("2")
    page.wait_for_function("() => document.querySelector('[data-calculator=ops_per_byte] [data-output=ratio]')"
                           ".textContent.startsWith('250 ')", timeout=WAIT_MS)  # 500 TFLOP/s / 2 TB/s
    before = computed(calc)
    calc.locator('[name="gpu"]').select_option("H100-SXM")
    wait_recomputed(page, "ops_per_byte", before, WAIT_MS)
    assert shown() == [False, False] and calc.evaluate("el => [...el.querySelectorAll('[data-show-field]')].every(d => d.hidden)")
    assert calc.locator("[data-output=ratio]").inner_text().startswith("295 operations per byte")
    before = computed(calc)
    page.evaluate("() => { const el = document.querySelector('[data-calculator=ops_per_byte] [name=custom_tflops]');"
                  " el.value = '-5'; el.dispatchEvent(new Event('input', {bubbles: true})); }")  # hidden: not checked
    wait_recomputed(page, "ops_per_byte", before, WAIT_MS)
    assert calc.locator("[data-calc-message]").is_hidden()
    watched.assert_clean()


def test_a_pasted_config_names_itself_in_the_select_and_an_unknown_one_links_the_families(watched, site_dir):
    from chapter2.models import FAMILY_CONFIG_DIR

    page = watched.goto(_calc_page(site_dir, "kv_cache"))
    open_workbenches(page)
    calc = page.locator('[data-calculator="kv_cache"]')
    select, text = calc.locator('[name="model"]'), calc.locator('[name="config_json"]')
    assert select.input_value() == "Llama-3.1-8B"
    before = computed(calc)
    text.fill((FAMILY_CONFIG_DIR / "SmolLM3-3B.json").read_text())
    wait_recomputed(page, "kv_cache", before, WAIT_MS)
    assert select.input_value() == "pasted"
    assert select.evaluate("el => el.selectedOptions[0].textContent") == "pasted: SmolLM3ForCausalLM"
    assert "SmolLM3" in calc.locator("[data-output=model_info]").inner_text()
    # a config of no supported family: one line naming it, a link to the list
    before = computed(calc)
    text.fill(json.dumps({"architectures": ["FalconForCausalLM"], "model_type": "falcon"}))
    page.wait_for_function("() => !document.querySelector('[data-calculator=kv_cache] [data-calc-message]').hidden",
                           timeout=WAIT_MS)
    message = calc.locator("[data-calc-message]")
    assert message.inner_text().startswith("config.json: FalconForCausalLM is of none of the 49 families")
    assert "\n" not in message.inner_text() and len(message.inner_text()) < 120
    href = message.locator("a").get_attribute("href")
    assert href.endswith("llm-architecture/#supported-families")
    assert select.evaluate("el => el.selectedOptions[0].textContent") == "pasted: FalconForCausalLM"
    # choosing a shipped model clears the pasted text: the select and the results describe the same model again
    before = computed(calc)
    select.select_option("Qwen3-8B")
    wait_recomputed(page, "kv_cache", before, WAIT_MS)
    assert text.input_value() == "" and select.input_value() == "Qwen3-8B"
    assert calc.locator("[data-calc-message]").is_hidden()
    assert calc.locator("[data-output=model_info]").inner_text().startswith("Qwen3-8B")
    assert select.locator('option[value="pasted"]').evaluate("el => el.hidden")
    # the link lands on the list
    families = watched.goto("llm-architecture/")
    assert families.locator("#supported-families").count() == 1
    watched.assert_clean()
