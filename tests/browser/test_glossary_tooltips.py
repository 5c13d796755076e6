"""Every term a tap away, in the browser: a term's definition opens on hover, on keyboard focus and on a tap.

Abbreviations carry their definition as a title, and the first use of each glossary term on a page is a link
with the definition as its title (docs/hooks/glossary_links.py); Material's tooltips (content.tooltips) show a
title on hover and focus, and docs/assets/chapter2/terms.js turns a link's first tap into a focus. Checked at
375 px with a touch screen (Playwright's `tap`), in light and dark, and at 1280 px with a mouse and a keyboard:
the tooltip holds the definition, lies inside the screen, and its text contrasts with its background.
"""

from __future__ import annotations

import pytest

from _contrast import contrast
from conftest import local_only_context

pytestmark = pytest.mark.browser
PHONE = {"width": 375, "height": 812}
PAGE = "llm-inference/"

ACTIVE_TOOLTIP = """(text) => [...document.querySelectorAll('.md-tooltip2--active')]
    .some(t => t.textContent.trim() === text && getComputedStyle(t).opacity === '1')"""
TOOLTIP_BOX = """() => {
  const t = [...document.querySelectorAll('.md-tooltip2--active')].pop();
  const inner = t.querySelector('.md-tooltip2__inner') || t;
  const r = inner.getBoundingClientRect(), s = getComputedStyle(inner);
  return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, color: s.color, background: s.backgroundColor,
          font: parseFloat(s.fontSize)};
}"""


def _rgb(css: str) -> list[float]:
    """An rgb()/rgba() colour as sRGB components from 0 to 1 (its alpha left out)."""
    return [int(float(x)) / 255 for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]


def _readable(page, width: int):
    box = page.evaluate(TOOLTIP_BOX)
    assert 0 <= box["left"] and box["right"] <= width + 0.5, f"tooltip outside the screen: {box}"
    assert box["font"] >= 11, box
    assert contrast(_rgb(box["color"]), _rgb(box["background"])) >= 4.5, f"tooltip text contrast too low: {box}"


def _open(context, site_url, path=PAGE):
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site_url + path)
    page.wait_for_load_state("networkidle")
    return page, errors


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_tap_shows_an_abbreviations_and_a_terms_definition_on_a_phone(chromium, site_url, scheme):
    # the full browser: the headless shell gives a tap no hover, so an abbreviation's title would never show (conftest)
    with local_only_context(chromium, viewport=PHONE, has_touch=True, is_mobile=True, color_scheme=scheme) as context:
        page, errors = _open(context, site_url)
        abbr = page.locator("article p abbr[title]:not(a abbr):not(details abbr)").first  # not inside a link
        abbr.scroll_into_view_if_needed()
        definition = abbr.get_attribute("title")
        assert len(definition.split()) >= 5
        abbr.tap()
        page.wait_for_function(ACTIVE_TOOLTIP, arg=definition)
        _readable(page, PHONE["width"])

        term = page.locator("article a.c2-term").nth(2)
        term.scroll_into_view_if_needed()
        definition, href = term.get_attribute("title"), term.get_attribute("href")
        term.tap()  # the first tap shows the definition and stays on the page
        page.wait_for_function(ACTIVE_TOOLTIP, arg=definition)
        _readable(page, PHONE["width"])
        assert page.url == site_url + PAGE
        term.tap()  # the second follows the link to the glossary entry
        page.wait_for_url("**/glossary/#" + href.split("#")[1])
        # instant navigation: the address changes first, the glossary's content is swapped in after
        page.locator(f"#{href.split('#')[1]}").wait_for(state="visible")
        assert not errors and not context.blocked, (errors, context.blocked)


def test_hover_and_keyboard_focus_show_a_terms_definition(browser, site_url):
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        page, errors = _open(context, site_url)
        first, second = page.locator("article a.c2-term").nth(0), page.locator("article a.c2-term").nth(1)
        definition = first.get_attribute("title")
        first.hover()
        page.wait_for_function(ACTIVE_TOOLTIP, arg=definition)
        _readable(page, 1280)
        page.mouse.move(0, 0)
        definition = second.get_attribute("title")
        second.focus()
        page.wait_for_function(ACTIVE_TOOLTIP, arg=definition)
        page.keyboard.press("Enter")  # a keyboard follows the link at once
        page.wait_for_url("**/glossary/#*")
        assert not errors and not context.blocked, (errors, context.blocked)


def test_a_mouse_click_on_a_term_follows_the_link_at_once(browser, site_url):
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        page, errors = _open(context, site_url)
        term = page.locator("article a.c2-term").first
        anchor = term.get_attribute("href").split("#")[1]
        term.click()
        page.wait_for_url(f"**/glossary/#{anchor}")
        assert not errors
