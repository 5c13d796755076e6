"""The old URL of section 2.2 keeps its anchors: a link to a heading that moved to the section's first page
lands on that heading, through the small inline script of docs/llm-inference.md, under the site's
Content-Security-Policy; an anchor that stayed stays.
"""

from __future__ import annotations

import pytest

from chapter2.pages import llm_inference as li
from conftest import local_only_context

pytestmark = pytest.mark.browser


def test_old_anchors_land_where_their_heading_is_now(browser, site_url):
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        errors = []
        page = context.new_page()
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))  # a CSP refusal is logged here
        page.on("pageerror", lambda e: errors.append(str(e)))
        for anchor in li.OLD_ANCHORS:
            page.goto(f"{site_url}llm-inference/#{anchor}")
            if anchor in li.MOVED_ANCHORS:
                page.wait_for_url(f"{site_url}llm-architecture/#{anchor}", timeout=10_000)
                heading = page.locator(f'h2[id="{anchor}"]')
            else:
                page.wait_for_load_state("load")  # (a hash change on the same page: wait until the address has it)
                page.wait_for_url(f"{site_url}llm-inference/#{anchor}", timeout=10_000)
                heading = page.locator(f'[id="{anchor}"]')
            assert heading.count() == 1, anchor
            page.wait_for_function("(id) => { const r = document.getElementById(id).getBoundingClientRect();"
                                   " return r.top >= 0 && r.top < innerHeight; }", arg=anchor, timeout=10_000)
        # a hash changed on the page itself (a reader following an old in-page link) is followed too
        page.goto(f"{site_url}llm-inference/")
        page.evaluate("() => { location.hash = '#224-mixture-of-experts'; }")
        page.wait_for_url(f"{site_url}llm-architecture/#224-mixture-of-experts", timeout=10_000)
        assert not errors, errors
        assert not context.blocked, context.blocked
