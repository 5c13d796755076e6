"""Python once per visit: Material's instant navigation (navigation.instant) on the built site.

A click on a link to another page swaps that page's content into the document the browser keeps, so the
calculators' and snippets' workers, and the Python started in them, live on. Each test leaves a marker on
`window` before it clicks and checks that the marker is still there after: the page was swapped, not loaded.
What each page's scripts bind (docs/assets/chapter2/runtime.js, chapter2.onPage) must work on the page swapped
in: a calculator computes with the Python of the first page (no second start), a stepper plays from its prebuilt
steps (inline and in a file of their own), a glossary term's first tap shows its definition, the recall cards
open, Back and Forward, anchors and search work, a calculator's inputs in the URL (share.js) come back, and the
site's Content-Security-Policy refuses nothing (a refusal is a console error). The site is served at the root of
a random port, where Material's own sitemap check does not match (runtime.js takes the click), under a path
like GitHub Pages' /<repo>/, and with a sitemap written for the server, where Material takes the click itself.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading

import pytest

from _calculators import cpython_answer
from conftest import _Handler, local_only_context

pytestmark = pytest.mark.browser
WAIT_MS = 180_000  # Python's first start on a loaded 2-core machine
DESKTOP = {"width": 1280, "height": 900}
# inert_worker (conftest): what a stepper shows can only come from the steps drawn at build time


def _swapped_to(page, path: str) -> None:
    """Wait until the page at `path` is swapped in and every page script has bound it (runtime.js's mark)."""
    page.wait_for_function("p => document.documentElement.dataset.c2Page === p", arg=path, timeout=WAIT_MS)


def _mark(page) -> None:
    page.evaluate("() => { window.c2Kept = 'this document'; }")


def _kept(page) -> bool:
    return page.evaluate("() => window.c2Kept === 'this document'")


def _texts(page, name: str) -> dict:
    """The text outputs of calculator `name`, as the page shows them."""
    return page.evaluate("n => Object.fromEntries([...document.querySelectorAll(`[data-calculator=${n}] [data-output]`)]"
                         ".filter(dd => !dd.dataset.kind).map(dd => [dd.dataset.output, dd.textContent]))", name)


def _settled(page, name: str, before: int) -> None:
    page.wait_for_function(
        "([n, b]) => { const el = document.querySelector(`[data-calculator=${n}]`);"
        " return el && !el.hasAttribute('aria-busy') && (+el.dataset.computed || 0) > b; }", arg=[name, before],
        timeout=WAIT_MS)


def _computed(page, name: str) -> int:
    return page.evaluate("n => +document.querySelector(`[data-calculator=${n}]`).dataset.computed || 0", name)


def _first_result(page) -> dict:
    """Python started on 2.1 by a changed input (activations' x); returns the calculators' worker's start mark."""
    before = _computed(page, "activations")
    page.locator('[data-calculator="activations"] input[name="x"]').fill("2.5")
    _settled(page, "activations", before)
    return page.evaluate("() => window.chapter2.lanes.calc.timings")


def _nav_click(page, href_end: str) -> None:
    page.locator(f'nav.md-nav--primary a.md-nav__link[href$="{href_end}"]').first.click()


def _clean(page, errors, context) -> None:
    assert not errors, errors  # page errors, and console errors (a Content-Security-Policy refusal is one)
    assert not context.blocked, context.blocked


def _watch(page) -> list:
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_python_started_on_one_page_computes_the_next_page_s_calculator(browser, site_url):
    """The worker of 2.1 answers 2.2a's KV cache calculator after a click: the same worker (its start mark), no
    second download of Pyodide, and the answer CPython gives for the same inputs."""
    with local_only_context(browser, search=True, viewport=DESKTOP) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url + "neural-networks/")
        booted = _first_result(page)
        wasm = sum(u.endswith(".wasm") for u in context.requests)
        assert wasm >= 1  # the worker's downloads are seen here
        _mark(page)
        _nav_click(page, "llm-inference/")
        _swapped_to(page, "/llm-inference/")
        assert _kept(page) and page.url == site_url + "llm-inference/"
        before = _computed(page, "kv_cache")
        page.locator('[data-calculator="kv_cache"] input[name="context"]').fill("65536")
        _settled(page, "kv_cache", before)
        assert page.evaluate("() => window.chapter2.lanes.calc.timings") == booted  # the same worker, started once
        assert sum(u.endswith(".wasm") for u in context.requests) == wasm
        want = cpython_answer("kv_cache", {**_form(page, "kv_cache"), "context": "65536"})["outputs"]
        shown = _texts(page, "kv_cache")
        assert shown and all(shown[k] == want[k] for k in shown), (shown, want)
        _clean(page, errors, context)


def _form(page, name: str) -> dict:
    return page.evaluate("n => Object.fromEntries([...document.querySelector(`[data-calculator=${n}] form`).elements]"
                         ".filter(e => e.name).map(e => [e.name, e.value]))", name)


def test_steppers_play_from_their_prebuilt_steps_after_a_click(browser, site_url):
    """2.2a's hero stepper (its steps inline in the page) plays after a click to it, and 2.2b's token walk (its
    steps in a file of their own) steps forward: both from the steps drawn at build time, without Python."""
    # inert_worker: Python never answers, so what plays is the build's
    with local_only_context(browser, inert_worker=True, search=True, viewport=DESKTOP) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url + "neural-networks/")
        page.evaluate("() => { window.chapter2.playMs = 50; }")  # a setting the document keeps across pages
        _mark(page)
        _nav_click(page, "llm-inference/")
        _swapped_to(page, "/llm-inference/")
        hero = page.locator('[data-calculator="prefill_decode"]')
        hero.locator("button[data-play]").click()
        page.wait_for_function("() => +document.querySelector('[data-calculator=prefill_decode] input[name=n_steps]')"
                               ".value >= 3", timeout=WAIT_MS)
        hero.locator("button[data-play]").click()  # pause
        assert hero.locator("[data-calc-status]").text_content().startswith("This step was drawn when the site was built")
        _nav_click(page, "llm-architecture/")
        _swapped_to(page, "/llm-architecture/")
        walk = page.locator('[data-calculator="token_walk"]')
        walk.evaluate("el => { for (let d = el.closest('details'); d; d = d.parentElement.closest('details')) d.open = true; }")
        walk.scroll_into_view_if_needed()
        before = _computed(page, "token_walk")
        walk.locator('button[data-step="1"]').first.click()
        _settled(page, "token_walk", before)
        assert walk.locator("[data-calc-status]").text_content().startswith("This step was drawn when the site was built")
        assert _kept(page)
        assert page.evaluate("() => window.chapter2.lanes.calc.state") != "ready"  # no Python was needed for any of it
        _clean(page, errors, context)


def test_back_forward_anchors_and_the_inputs_in_the_url(browser, site_url):
    """A changed input writes the URL (share.js); a click to another page, then Back, restores that page with the
    input and its live result; Forward returns; an anchor on the page scrolls to its heading; a link to another
    page's anchor lands on it. All in the one document."""
    with local_only_context(browser, search=True, viewport=DESKTOP) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url + "llm-inference/")
        _mark(page)
        before = _computed(page, "kv_cache")
        page.locator('[data-calculator="kv_cache"] input[name="context"]').fill("65536")
        _settled(page, "kv_cache", before)
        page.wait_for_function("() => location.search.includes('kv_cache=context:65536')", timeout=WAIT_MS)
        shown = _texts(page, "kv_cache")
        length = page.evaluate("() => history.length")
        _nav_click(page, "bottlenecks/")
        _swapped_to(page, "/bottlenecks/")
        assert page.evaluate("() => history.length") == length + 1  # one entry per click, as a full load makes
        page.go_back()
        _swapped_to(page, "/llm-inference/")
        page.wait_for_function("() => document.querySelector('[data-calculator=kv_cache] input[name=context]').value"
                               " === '65536'", timeout=WAIT_MS)
        _settled(page, "kv_cache", 0)
        assert _texts(page, "kv_cache") == shown and _kept(page)
        page.go_forward()
        _swapped_to(page, "/bottlenecks/")
        assert _kept(page)
        # an anchor on this page: the table of contents' link to a heading further down
        link = page.locator(".md-sidebar--secondary nav.md-nav--secondary a.md-nav__link").nth(3)
        target = link.get_attribute("href").split("#")[1]
        link.click()
        page.wait_for_function(_IN_VIEW, arg=target, timeout=WAIT_MS)
        assert page.url.endswith("bottlenecks/#" + target) and _kept(page)
        # another page's anchor: a glossary term's link lands on its entry
        term = page.locator("article a.c2-term").first
        entry = term.get_attribute("href").split("#")[1]
        term.click()
        _swapped_to(page, "/glossary/")
        page.wait_for_function(_IN_VIEW, arg=entry, timeout=WAIT_MS)
        assert page.url == site_url + "glossary/#" + entry and _kept(page)
        page.go_back()
        _swapped_to(page, "/bottlenecks/")
        assert _kept(page)
        _clean(page, errors, context)


_IN_VIEW = ("id => { const el = document.getElementById(id); if (!el) return false;"
            " const r = el.getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight; }")


def test_an_anchor_of_the_page_keeps_the_page_and_the_inputs_in_its_address(browser, site_url):
    """A table-of-contents entry scrolls to its heading, and Back returns, in the page as it is: not fetched again,
    the same calculator element, an input typed just before the click kept, and the inputs share.js wrote into
    the address kept beside the anchor. Two faults did otherwise. Material writes a page's links as absolute URLs
    without a query, so with ?kv_cache=... in the address the entry was another URL and the browser loaded the page
    again, without the inputs (runtime.js, anchorHere). And Chromium fires popstate for the anchor and for Back,
    and in a document Material had not navigated yet that made Material fetch the page and swap it in, building
    every calculator again from the address (the head's guard, docs/hooks/build_site.py; CI once saw a test's
    input land on the calculator that was swapped out)."""
    with local_only_context(browser, search=True, viewport=DESKTOP) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url + "llm-inference/")
        _mark(page)
        calc = page.locator('[data-calculator="kv_cache"]')
        calc.evaluate("el => { el.c2Kept = true; }")
        calc.locator('input[name="batch"]').fill("3")
        page.wait_for_function("() => location.search === '?kv_cache=batch:3'", timeout=WAIT_MS)  # share.js wrote it
        calc.locator('input[name="context"]').fill("65536")  # then at once the click, before share.js writes it
        link = page.locator(".md-sidebar--secondary nav.md-nav--secondary a.md-nav__link").nth(3)
        target = link.get_attribute("href").split("#")[1]
        assert "?" not in link.get_attribute("href")  # as Material wrote it
        link.click()
        page.wait_for_function(_IN_VIEW, arg=target, timeout=WAIT_MS)
        assert page.evaluate("() => location.hash") == "#" + target
        page.wait_for_function("() => location.search === '?kv_cache=context:65536,batch:3'", timeout=WAIT_MS)
        page.go_back()  # to the entry left with batch 3 alone: the address follows the inputs shown
        page.wait_for_function("() => location.hash === '' && location.search === '?kv_cache=context:65536,batch:3'",
                               timeout=WAIT_MS)
        loads = [u for u in context.requests if u.split("?")[0].split("#")[0] == site_url + "llm-inference/"]
        assert loads == [site_url + "llm-inference/"], f"the page was fetched again: {loads}"
        assert page.evaluate("() => document.documentElement.dataset.c2Pages") == "1" and _kept(page)
        assert calc.evaluate("el => el.c2Kept === true"), "the calculator was swapped out"
        assert [calc.locator(f'input[name="{n}"]').input_value() for n in ("context", "batch")] == ["65536", "3"]
        _clean(page, errors, context)


def test_search_takes_the_reader_to_a_result_in_the_same_document(browser, site_url):
    with local_only_context(browser, search=True, viewport=DESKTOP) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url)
        _mark(page)
        page.locator("label.md-search__icon, .md-search__input").first.click()
        page.locator("input.md-search__input").press_sequentially("FlashAttention")  # Material listens to keyup
        result = page.locator(".md-search-result__item a.md-search-result__link").first
        result.wait_for(timeout=WAIT_MS)
        path = re.sub(r"^https?://[^/]+", "", result.get_attribute("href")).split("?")[0].split("#")[0]
        result.click()
        _swapped_to(page, path)
        assert _kept(page) and path != "/"
        _clean(page, errors, context)


def test_a_term_s_first_tap_shows_its_definition_on_a_page_swapped_in(browser, site_url):
    """On a phone: a link in the text to another page swaps it in; there a term's first tap shows its definition
    and stays (instant navigation does not take it), the second follows the link to the glossary."""
    with local_only_context(browser, search=True, viewport={"width": 375, "height": 812}, has_touch=True, is_mobile=True) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url + "neural-networks/")
        _mark(page)
        link = page.locator('article a[href*="llm-inference/"]:not(.c2-term)').first  # to 2.2a's prefill and decode
        link.scroll_into_view_if_needed()
        link.tap()
        _swapped_to(page, "/llm-inference/")
        page.wait_for_function(_IN_VIEW, arg="prefill-and-decode", timeout=WAIT_MS)  # the link's anchor
        term = page.locator("article a.c2-term").nth(2)
        term.scroll_into_view_if_needed()
        definition, entry = term.get_attribute("title"), term.get_attribute("href").split("#")[1]
        term.tap()
        page.wait_for_function("text => [...document.querySelectorAll('.md-tooltip2--active')]"
                               ".some(t => t.textContent.trim() === text)", arg=definition, timeout=WAIT_MS)
        assert page.url == site_url + "llm-inference/#prefill-and-decode"  # the first tap followed nothing
        term.tap()
        _swapped_to(page, "/glossary/")
        assert page.url == site_url + "glossary/#" + entry and _kept(page)
        _clean(page, errors, context)


def test_recall_cards_notebooks_and_scrollable_boxes_after_clicks(browser, site_url):
    """The recall page's own script (in its content) runs when the page is swapped in, once however often the
    reader comes back; a notebook page swapped in twice adds its copy notice listener once; a11y.js makes the
    boxes that scroll on the page swapped in focusable."""
    with local_only_context(browser, search=True, viewport=DESKTOP) as context:
        page = context.new_page()
        errors = _watch(page)
        page.goto(site_url)
        _mark(page)
        for _ in range(2):
            _nav_click(page, "recall/")
            _swapped_to(page, "/recall/")
            # recall.js comes in the page's content: on the first visit it may run just after runtime.js's mark
            page.wait_for_function("() => document.querySelector('[data-recall]').dataset.recallReady === 'true'",
                                   timeout=WAIT_MS)
            card = page.locator("[data-recall-card] button[aria-controls]").first
            card.click()
            assert card.get_attribute("aria-expanded") == "true"  # one handler: a second would close it again
            page.wait_for_function("() => document.querySelector('[data-recall-status]').textContent.startsWith('Last reviewed')")
            _nav_click(page, "notebooks/prefill_decode/")
            _swapped_to(page, "/notebooks/prefill_decode/")
        assert page.evaluate("() => window.chapter2CopyNotice") is True and _kept(page)
        # 2.4's wide tables scroll sideways at this width: a11y.js makes each focusable on the page swapped in
        _nav_click(page, "bottlenecks/")
        _swapped_to(page, "/bottlenecks/")
        page.wait_for_function("() => document.documentElement.dataset.c2Scrollables === 'checked'", timeout=WAIT_MS)
        wide = page.evaluate("() => [...document.querySelectorAll('article .md-typeset__scrollwrap')]"
                             ".map(el => [el.scrollWidth > el.clientWidth + 1, el.getAttribute('tabindex')])")
        assert any(scrolls for scrolls, _ in wide) and all((t == "0") == scrolls for scrolls, t in wide), wide
        _clean(page, errors, context)


# ------------------------------------------------------------------ under a path, and Material's own sitemap check
class _UnderPath(_Handler):
    """The site under PREFIX (as GitHub Pages serves a project under /<repo>/); with `sitemap`, a sitemap.xml
    whose URLs are this server's, so that Material's own check matches and Material takes the clicks."""

    prefix = "/"
    sitemap = False

    def do_GET(self):
        if not self.path.startswith(self.prefix):
            self.send_error(404)
            return
        self.path = "/" + self.path[len(self.prefix):]
        if self.sitemap and self.path == "/sitemap.xml":
            base = f"http://127.0.0.1:{self.server.server_address[1]}{self.prefix}"
            pages = ["", "neural-networks/", "llm-inference/", "bottlenecks/"]
            body = ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                    + "".join(f"<url><loc>{base}{p}</loc></url>" for p in pages) + "</urlset>\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


_MATERIAL_TAKES = """() => {
  const a = document.createElement('a');
  a.href = '#c2-probe';
  document.querySelector('article').append(a);
  let taken = false;
  const see = (e) => { taken = e.defaultPrevented; };
  window.addEventListener('click', see);
  a.click();
  window.removeEventListener('click', see);
  a.remove();
  return taken;
}"""


@pytest.mark.parametrize("prefix, sitemap", [("/chapter2-models/", False), ("/", True)])
def test_a_click_is_a_swap_under_a_path_and_when_material_takes_it(browser, site_dir, prefix, sitemap):
    handler = functools.partial(type("H", (_UnderPath,), {"prefix": prefix, "sitemap": sitemap}), directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    try:
        with local_only_context(browser, search=True, viewport=DESKTOP) as context:
            page = context.new_page()
            errors = _watch(page)
            page.goto(base + "neural-networks/")
            if sitemap:  # until Material has read its sitemap and takes a click (here, on an anchor of this page)
                page.wait_for_function(_MATERIAL_TAKES, timeout=WAIT_MS)
            _mark(page)
            length = page.evaluate("() => history.length")
            page.locator('a.md-footer__link--next').click()
            _swapped_to(page, prefix + "llm-inference/")
            assert _kept(page) and page.url == base + "llm-inference/"
            assert page.evaluate("() => history.length") == length + 1  # taken once, by one of the two
            taken_here = page.evaluate("() => +document.documentElement.dataset.c2Clicks || 0")
            assert taken_here == (0 if sitemap else 1)
            page.go_back()
            _swapped_to(page, prefix + "neural-networks/")
            assert _kept(page)
            _clean(page, errors, context)
    finally:
        server.shutdown()
