"""Every figure reads on a phone (issue 25): on each section page of the built site, at 375 px wide, the
smallest text of every figure is at least 11 CSS px, in both colour schemes, and every figure fits its column;
at 1280 px every build-time figure is the desktop drawing and no phone drawing is downloaded.

A figure is a build-time figure (<figure class="c2-figure">: the SVG the browser picked from its <picture>)
or an inline SVG with text (live charts, the block diagram). scripts/figure_text.py measures them (the same
code prints the table: `.venv/bin/python scripts/figure_text.py SITE`): for each <text> and <tspan>, its
computed font size times its transform's scale to the page (getScreenCTM), collapsed blocks opened first.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser
PHONE, DESKTOP = 375, 1280


def _script():
    spec = importlib.util.spec_from_file_location("figure_text", ROOT / "scripts" / "figure_text.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIGURE_TEXT = _script()


@pytest.fixture(scope="module")
def measured(browser, site_url, site_dir):
    """{(width, scheme): ({page: figures}, requested URLs)}."""
    return {(w, s): FIGURE_TEXT.measure_with(browser, site_url, site_dir, w, s)
            for w, s in ((PHONE, "light"), (PHONE, "dark"), (DESKTOP, "light"))}


def _drawn(site_dir, page: str) -> list[str]:
    """The build-time figures a page's HTML holds, by name."""
    return re.findall(r'<figure class="c2-figure"[^>]*? id="figure-([\w.-]+)"', (site_dir / page / "index.html").read_text())


def test_every_section_page_and_figure_is_measured(measured, site_dir):
    pages, _ = measured[(PHONE, "light")]
    assert set(pages) == set(FIGURE_TEXT.section_pages(site_dir)) and len(pages) >= 6
    for page, figures in pages.items():
        assert [f["name"] for f in figures if f["kind"] == "figure"] == _drawn(site_dir, page), page
    kinds = [f["kind"] for figures in pages.values() for f in figures]
    assert kinds.count("figure") >= 10 and kinds.count("inline svg") >= 10  # both kinds are on the pages
    assert all(f["min"] < float("inf") for figures in pages.values() for f in figures), "a figure without text measured"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_figure_text_is_at_least_11_px_on_a_375_px_phone(measured, site_dir, scheme):
    pages, _ = measured[(PHONE, scheme)]
    small = [f"{page}: {f['name']} ({f['src'] or f['kind']}) {f['min']:.1f} px ({f['small']} texts under "
             f"{FIGURE_TEXT.READABLE_PX} px, smallest {f['text']!r})"
             for page, figures in pages.items() for f in figures if f["min"] < FIGURE_TEXT.READABLE_PX]
    assert not small, "\n".join(small)
    for page, figures in pages.items():
        for f in (f for f in figures if f["kind"] == "figure"):
            phone = site_dir / "figures" / f"{f['name']}.phone.svg"
            assert f["src"] == (phone.name if phone.exists() else f"{f['name']}.svg"), (page, f)
            assert f["width"] <= f["column"], f"{page}: {f['name']} is {f['width']} px in a {f['column']} px column"


def test_desktop_shows_the_desktop_drawings_and_downloads_no_phone_drawing(measured, site_dir):
    pages, requested = measured[(DESKTOP, "light")]
    for page, figures in pages.items():
        assert [f["src"] for f in figures if f["kind"] == "figure"] == [f"{n}.svg" for n in _drawn(site_dir, page)]
    assert list((site_dir / "figures").glob("*.phone.svg")), "no phone drawings were built"
    assert not [u for u in requested if u.endswith(".phone.svg")]


# The hero of 2.3 in light, then after the reader presses Material's toggle to dark: the grey labels inside the
# <img> SVG follow the scheme (chapter2.host.figures._style.scheme_ink). Counted are pixels of exactly an ink
# (within 6 per channel: glyph stems at 1:1), over a fixed magenta backdrop (near neither ink) so only the image can change.
def _ink_pixels(png: bytes, ink: str) -> int:
    import io

    from PIL import Image

    want = [int(ink[i:i + 2], 16) for i in (1, 3, 5)]
    pixels = Image.open(io.BytesIO(png)).convert("RGB").getdata()
    return sum(all(abs(p - w) <= 6 for p, w in zip(px, want, strict=True)) for px in pixels)


def test_figure_labels_follow_the_scheme_the_reader_picks(browser, site_url):
    from chapter2.host.figures._style import INK_DARK, INK_LIGHT

    from conftest import local_only_context

    with local_only_context(browser, viewport={"width": DESKTOP, "height": 900}, color_scheme="light") as context:
        page = context.new_page()
        page.goto(site_url + "image-generation/")
        page.add_style_tag(content="figure.c2-figure img { background: #ff00ff !important; }")
        hero = page.locator("#figure-image_pipeline img")
        page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=hero.element_handle())
        light = _painted(hero, INK_LIGHT, INK_DARK)
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")
        dark = _painted(hero, INK_DARK, INK_LIGHT)
        # (pixels of the scheme's ink, of the other one's): the labels' pixels move from one ink to the other
        # (the pictures' own pixels, some near either grey, stay as they are)
        assert light[0] - dark[1] >= 50 and dark[0] - light[1] >= 50, (light, dark)
        assert not context.blocked


def _painted(img, ink: str, other: str, frames: int = 50) -> tuple[int, int]:
    """Ink pixels of `img`'s screenshots until one shows `ink` (the new scheme painted): (ink, other)."""
    for _ in range(frames):  # each screenshot waits for a new frame: no fixed sleep
        shot = img.screenshot()
        seen = _ink_pixels(shot, ink), _ink_pixels(shot, other)
        if seen[0] > 0:
            return seen
    return seen
