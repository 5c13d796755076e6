"""The build's figures are matplotlib SVGs made smaller by `compact_svg`: the same drawing, fewer bytes."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from _contrast import contrast
from _oracles import require

ROOT = Path(__file__).resolve().parents[1]

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def _raw_svg() -> str:
    """A figure with what the site's figures hold: lines, markers, a log axis (mathtext ticks), a legend,
    text with spaces, an embedded image; as matplotlib writes it."""
    require("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from chapter2.host.figures._style import style

    with style():
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(6, 3))
        x = np.linspace(0.013, 7.77, 50)
        ax.loglog(x, x**1.37, label="decode, batch 1")
        ax.plot([1.2345], [2.3456], "o", label="this device")
        ax.set_xlabel("arithmetic intensity (FLOPs / byte)")
        ax.legend()
        ax2.imshow(np.arange(12.0).reshape(3, 4))
        ax2.set_title("0.125 stays 0.125")
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
        plt.close(fig)
    return buf.getvalue()


def _elements(svg: str) -> list[ET.Element]:
    """Every element of the drawing, in document order; the <metadata> block (compact_svg drops it) left out."""
    root = ET.fromstring(svg.encode())
    dropped = {id(x) for m in root.iter() if m.tag.endswith("}metadata") for x in m.iter()}
    return [e for e in root.iter() if id(e) not in dropped]


def test_compact_svg_draws_the_same_figure_in_fewer_bytes():
    from chapter2.host.figures import compact_svg

    raw = _raw_svg()
    small = compact_svg(raw)
    assert len(small) < 0.85 * len(raw), (len(small), len(raw))
    assert "<metadata>" not in small and "<!--" not in small and "<!DOCTYPE" not in small
    before, after = _elements(raw), _elements(small)
    assert [e.tag for e in before] == [e.tag for e in after]
    for old, new in zip(before, after, strict=True):
        assert (old.text or "").strip() == (new.text or "").strip()  # text content, untouched
        assert old.attrib.keys() == new.attrib.keys()
        for key, value in old.attrib.items():
            a, b = NUMBER.findall(value), NUMBER.findall(new.attrib[key])
            assert len(a) == len(b), (key, value, new.attrib[key])
            for x, y in zip(a, b, strict=True):
                assert float(y) == pytest.approx(float(x), abs=0.0051), (key, x, y)
    assert "0.125 stays 0.125" in small


def test_the_site_figures_are_compact():
    require("matplotlib")
    from chapter2.host.figures import compact_svg, render_svg

    svg = render_svg("roofline")
    assert compact_svg(svg) == svg, "render_svg returns the compact form (and compacting is idempotent)"
    assert not re.search(r'="[^"]*\d\.\d{3,}', svg), "a number with more than two decimals is left in an attribute"


def test_smallest_text_px_is_the_smallest_font_times_the_shown_scale():
    """Sizes worked out by hand: a 620 pt wide drawing in a 310 px column is shown at half a px per point; a
    200 pt one is shown at its own size, 4/3 px per point (an <img> never grows past its size)."""
    from chapter2.host.figures import smallest_text_px

    wide = ('<svg width="620pt" height="100pt" viewBox="0 0 620 100"><text style="font-size: 12px; fill: red">a</text>'
            '<text style="font: 9px \'DejaVu Sans\'">b<tspan style="font-size: 6.3px">2</tspan></text></svg>')
    assert smallest_text_px(wide, 310) == pytest.approx(6.3 * 0.5)
    narrow = '<svg width="200pt" height="100pt" viewBox="0 0 200 100"><text style="font-size: 12px">a</text></svg>'
    assert smallest_text_px(narrow, 310) == pytest.approx(16.0)
    assert smallest_text_px('<svg viewBox="0 0 10 10"><rect/></svg>') == float("inf")  # no text, nothing to read


@pytest.mark.slow  # draws every figure a page shows, for a phone (about 10 s)
def test_every_page_figure_has_a_phone_drawing_whose_text_reads_on_a_phone():
    """Every figure on a page is offered to a phone at 11 px or more in a 310 px column (the build hook refuses
    less): from its phone drawing, whose every text is at least PHONE_PT and which is at most a phone column
    wide, or from the desktop drawing where that already reads (phone=False)."""
    require("matplotlib")
    from chapter2.host.figures import PHONE_COLUMN_PX, READABLE_PX, REGISTRY, _discover, render_svg, smallest_text_px
    from chapter2.host.figures._style import PHONE_PT

    _discover()
    shown = {m for page in (ROOT / "docs").glob("*.md")
             for m in re.findall(r"<!--\s*figure:\s*([\w.-]+)(?:\s+hero)?\s*-->", page.read_text(encoding="utf-8"))}
    assert len(shown) >= 10
    for name in sorted(shown):
        if not REGISTRY[name].phone:
            assert smallest_text_px(render_svg(name)) >= READABLE_PX, name
            continue
        svg = render_svg(name, phone=True)
        sizes = [float(x) for x in re.findall(r"font(?:-size)?:\s*([\d.]+)px", svg)]
        width = float(re.search(r'viewBox="[\d.]+ [\d.]+ ([\d.]+)', svg).group(1))
        assert min(sizes) >= PHONE_PT, (name, min(sizes))
        assert width <= 1.1 * PHONE_COLUMN_PX, (name, width)  # about a column: shown near 1:1, not shrunk
        assert smallest_text_px(svg) >= READABLE_PX, name
        assert svg != render_svg(name), name


def _rgb(color: str) -> tuple[float, float, float]:
    return tuple(int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))


def _over(color: str, alpha: float, page) -> tuple[float, float, float]:
    """A box filled with `color` at `alpha` (how the figures draw boxes), as seen on `page`."""
    return tuple(alpha * c + (1 - alpha) * p for c, p in zip(_rgb(color), page, strict=True))


def test_figure_text_reads_on_either_scheme_s_page_and_boxes():
    """WCAG AA (4.5:1) for figure text, on each scheme's page and on every box fill a figure draws (PALETTE at
    alpha 0.3 over that page). The pages are Material's: white, and slate's hsla(225deg, 15%, 14%)."""
    import colorsys

    from chapter2.charts import INK, PALETTE
    from chapter2.host.figures._style import INK_DARK, INK_LIGHT

    white, slate = (1.0, 1.0, 1.0), colorsys.hls_to_rgb(225 / 360, 0.14, 0.15)
    for page, ink in ((white, INK_LIGHT), (slate, INK_DARK)):
        for behind in [page] + [_over(c, 0.3, page) for c in PALETTE]:
            assert contrast(_rgb(ink), behind) >= 4.5, (ink, behind)
    # the one grey both schemes shared did not: under 3:1 on the pale boxes of a light page
    assert min(contrast(_rgb(INK), _over(c, 0.3, white)) for c in PALETTE) < 3


def test_every_figure_carries_the_scheme_s_ink_for_its_grey_text():
    require("matplotlib")
    from chapter2.charts import INK
    from chapter2.host.figures import render_svg
    from chapter2.host.figures._style import INK_DARK, INK_LIGHT

    for name, phone in (("image_pipeline", False), ("image_pipeline", True), ("roofline", False)):
        svg = render_svg(name, phone=phone)
        sheet = ET.fromstring(svg)[0]
        assert sheet.tag.endswith("style"), name  # first, before anything is drawn
        light, dark = re.fullmatch(r"@media \(prefers-color-scheme: light\)\{(.*)\}"
                                   r"@media \(prefers-color-scheme: dark\)\{(.*)\}", sheet.text).groups()
        assert light.endswith(f"{{fill:{INK_LIGHT}!important}}") and dark.endswith(f"{{fill:{INK_DARK}!important}}")
        assert f'text[style*="fill: {INK}"]' in light and f'tspan[style*="fill: {INK}"]' in light
        assert svg.count(f"fill: {INK}\"") >= 5, name  # the selectors match how matplotlib writes the labels


def test_scheme_ink_refuses_what_is_not_an_svg():
    from chapter2.host.figures._style import scheme_ink

    with pytest.raises(ValueError, match="svg"):
        scheme_ink("<html></html>")
