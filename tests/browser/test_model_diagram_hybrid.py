"""2.2's block diagram with Nemotron 3 Nano's config.json pasted, in Chromium: Pyodide draws what CPython draws
(its kinds, counts and caches are pinned in tests/test_model_diagram.py), and the drawing reads at 375 px and
1280 px, light and dark: inside the screen, text at 11 px or more, ink that follows the colour scheme, the
strip's cells and the boxes' outlines visible on the page's background."""

from __future__ import annotations

import pytest

from _calculators import calculator_pages, chart_digests, computed, cpython_chart_digests, wait_recomputed
from chapter2.models import FAMILY_CONFIG_DIR
from conftest import local_only_context

pytestmark = pytest.mark.browser
WAIT_MS = 90_000
NANO = "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [375, 1280])
def test_a_pasted_nemotron_3_nano_draws_its_hybrid_stack(browser, site_url, site_dir, width, scheme):
    text = (FAMILY_CONFIG_DIR / f"{NANO}.json").read_text()
    path = calculator_pages(site_dir, {"model_diagram"})["model_diagram"]
    options = dict(viewport={"width": width, "height": 900}, color_scheme=scheme)
    if width < 500:
        options.update(is_mobile=True, has_touch=True)
    with local_only_context(browser, **options) as context:
        page = context.new_page()
        page.goto(site_url + path)
        calc = page.locator('[data-calculator="model_diagram"]')
        calc.scroll_into_view_if_needed()
        before = computed(calc)
        calc.locator('[name="config_json"]').fill(text)
        wait_recomputed(page, "model_diagram", before, WAIT_MS)
        assert chart_digests(calc) == cpython_chart_digests("model_diagram", {"model": "Llama-3.1-8B",
                                                                              "config_json": text})
        svg = calc.locator("[data-output=diagram] svg")
        drawn = svg.text_content()
        for shown in ("The stack: 52 layers", "Mamba-2 (23 of 52", "MoE (23 of 52 layers)", "Attention (6 of 52",
                      "× 52 layers", "fixed state:", "KV cache:"):
            assert shown in drawn, shown
        box = svg.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5 and box["width"] > 250, box
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        sizes = svg.evaluate("s => [...s.querySelectorAll('text')].map(t => t.getBoundingClientRect().height)")
        smallest = svg.evaluate("s => Math.min(...[...s.querySelectorAll('text')].map(t => "
                                "parseFloat(getComputedStyle(t).fontSize) * s.getBoundingClientRect().width / "
                                "s.viewBox.baseVal.width))")
        assert sizes and smallest >= 11, smallest
        # ink follows the scheme (currentColor): dark on light, light on slate
        lum = svg.evaluate("""s => [...s.querySelectorAll('text')].map(t => {
            const [r, g, b] = getComputedStyle(t).fill.match(/\\d+/g).map(Number);
            return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255; })""")
        assert all((v > 0.6) if scheme == "dark" else (v < 0.4) for v in lum), lum
        # 52 strip cells, each at least 4 px wide on this screen
        cells = svg.evaluate("s => [...s.querySelectorAll('rect:not([stroke])')].map(r => r.getBoundingClientRect().width)")
        assert len(cells) == 52 and min(cells) >= 4, cells
        assert not context.blocked


def test_nemotron_3_nano_picked_in_the_select_draws_as_cpython_does(watched, site_dir):
    path = calculator_pages(site_dir, {"model_diagram"})["model_diagram"]
    page = watched.goto(path)
    calc = page.locator('[data-calculator="model_diagram"]')
    calc.scroll_into_view_if_needed()
    before = computed(calc)
    calc.locator('[name="model"]').select_option(NANO)
    wait_recomputed(page, "model_diagram", before, WAIT_MS)
    assert chart_digests(calc) == cpython_chart_digests("model_diagram", {"model": NANO, "config_json": ""})
    assert "23 × Mamba-2, 23 × MoE," in calc.locator("[data-output=diagram] svg").text_content()
    watched.assert_clean()
