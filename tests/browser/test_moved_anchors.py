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
        for anchor in li.OLD_ANCHORS:
            # each old link opened as a reader opens one, in a tab of its own: a full load. (Typed one after the other
            # on the same page, an address that differs only in its hash is a navigation within the page, and Material
            # may scroll back to where the page was if its scroll memory writes that into the new entry first.)
            page = context.new_page()
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))  # a CSP refusal is logged here
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{site_url}llm-inference/#{anchor}")
            if anchor in li.MOVED_ANCHORS:
                page.wait_for_url(f"{site_url}llm-architecture/#{anchor}", timeout=10_000)
                heading = page.locator(f'h2[id="{anchor}"]')
            else:
                page.wait_for_load_state("load")
                page.wait_for_url(f"{site_url}llm-inference/#{anchor}", timeout=10_000)
                heading = page.locator(f'[id="{anchor}"]')
            assert heading.count() == 1, anchor
            page.wait_for_function("(id) => { const r = document.getElementById(id).getBoundingClientRect();"
                                   " return r.top >= 0 && r.top < innerHeight; }", arg=anchor, timeout=10_000)
            page.close()
        assert not errors, errors
        assert not context.blocked, context.blocked





# Stands in for Material's listeners, which are registered after the page's own and do not capture: records what
# they see of a hash change, and once the page has handled the change (a task after hashchange) asks for a URL
# that carries the record, so the test knows the order without a timer.
LATE_LISTENERS = """
window.c2Seen = [];
document.addEventListener('DOMContentLoaded', () => {
  for (const type of ['popstate', 'hashchange']) window.addEventListener(type, () => window.c2Seen.push(type));
});
window.addEventListener('hashchange', () => setTimeout(() => {
  fetch('/c2-test-handled?seen=' + window.c2Seen.join('+')).catch(() => {});
}), true);
"""


def test_an_old_in_page_link_is_followed_and_the_page_does_not_answer_it(browser, site_url):
    """A hash changed on the page itself (a reader following an old in-page link) is followed too, and nothing else
    on the old page answers it. Material answers a hash change's popstate by clicking a link to the hash (after
    fetching the page), and HTML aborts a navigation on its way when the page navigates within itself: in CI the
    reader stayed on the old page (net::ERR_ABORTED). The new page's response is held until the old page has
    handled the change."""
    anchor = "224-mixture-of-experts"
    with local_only_context(browser, viewport={"width": 1280, "height": 900}) as context:
        errors, failed, moves, handled, held = [], [], [], [], []
        page = context.new_page()
        page.add_init_script(LATE_LISTENERS)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("requestfailed", lambda r: r.is_navigation_request() and failed.append(f"{r.url} {r.failure}"))
        page.goto(f"{site_url}llm-inference/")
        page.wait_for_function("() => document.documentElement.dataset.c2Pages === '1'")  # the page's scripts bound

        # the new page is answered once the old page has handled the change, whichever event Playwright hands over
        # first (a route's handler may run after a later request's event)
        def move(route):
            moves.append(route.request.url)
            if handled:
                route.continue_()
            else:
                held.append(route)

        def on_request(request):
            if request.url.startswith(f"{site_url}c2-test-handled"):
                handled.append(request.url)
                while held:
                    held.pop().continue_()

        page.route(f"{site_url}llm-architecture/", move)
        page.on("request", on_request)
        with page.expect_request(lambda r: r.url.startswith(f"{site_url}c2-test-handled")):
            page.evaluate(f"() => {{ location.hash = '#{anchor}'; }}")
        assert handled[0].endswith("?seen="), handled  # the later listeners saw nothing
        page.wait_for_url(f"{site_url}llm-architecture/#{anchor}", timeout=10_000)
        assert page.locator(f'h2[id="{anchor}"]').count() == 1
        assert moves == [f"{site_url}llm-architecture/"], moves  # one move, started once
        assert not failed, failed
        assert not errors, errors
        assert not context.blocked, context.blocked
