"""Reading the site: every page on a phone, an accessibility audit, weight before and after Python,
the recall check by keyboard, the notebooks, the chapter map, and how long each section page is to read.

Pages are every HTML page of the built site (so a new section is covered without editing this file).
Set CHAPTER2_SCREENSHOTS=/some/dir to keep a full-page screenshot of each page at 375 px and of
each page in both colour schemes.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from _calculators import AXE, axe_problems, open_workbenches
from conftest import local_only_context, wait_scrollables_checked

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
SHOTS = os.environ.get("CHAPTER2_SCREENSHOTS")
PHONE = {"width": 375, "height": 812}
WAIT_MS = 60_000

# inert_worker (conftest INERT_WORKER): pages operated without starting Pyodide (the runtime stays "loading"), for
# tests about layout and keyboard access rather than results. save_data (conftest SAVE_DATA): the audit weighs every
# page as it is before any use (test_runtime covers loading on view).


def _pages(site_dir: Path) -> list[str]:
    paths = sorted(p.parent.relative_to(site_dir).as_posix() for p in site_dir.rglob("index.html"))
    return ["" if p == "." else p + "/" for p in paths] + ["404.html"]


def _html_file(site_dir: Path, path: str) -> Path:
    return site_dir / path if path.endswith(".html") else site_dir / path / "index.html"


def _served_bytes(site_dir: Path, urls, base: str) -> int:
    """Bytes of the site's files behind these URLs (served uncompressed by the test server)."""
    total = 0
    for url in set(urls):
        if not url.startswith(base):
            continue
        rel = url[len(base):].split("#")[0].split("?")[0]
        path = site_dir / rel
        if rel == "" or rel.endswith("/"):
            path = path / "index.html"
        if path.is_file():
            total += path.stat().st_size
    return total


def _shot(page, name: str):
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def _slug(path: str) -> str:
    return path.strip("/").replace("/", "_").replace(".html", "") or "home"


@contextmanager
def _context(browser, site_url, **options):
    """A local-only browser context (see conftest) that also collects page errors in `.errors`."""
    with local_only_context(browser, **options) as context:
        context.errors = []
        context.base = site_url
        yield context


def _open(context, path: str):
    page = context.new_page()
    page.on("pageerror", lambda e: context.errors.append(f"{path}: {e}"))
    page.on("console", lambda m: m.type == "error" and context.errors.append(f"{path}: {m.text}"))
    page.goto(context.base + path)
    page.wait_for_load_state("networkidle")
    return page


def test_the_page_list_covers_the_site(site_dir):
    pages = _pages(site_dir)
    for expected in ("", "neural-networks/", "bottlenecks/", "chapter-map/", "recall/",
                     "notebooks/prefill_decode/", "notebooks/attention_worked_example/"):
        assert expected in pages


# ------------------------------------------------------------------ every page, once per colour scheme

def _visit(context, path: str, site_dir: Path) -> dict:
    """Load a page as a reader would, then audit it: requests, weight, figures, axe."""
    page = context.new_page()
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(context.base + path)
    page.wait_for_load_state("networkidle")
    report = {
        "pyodide_requests": [u for u in requests if "pyodide" in u],
        "state": page.evaluate("() => window.chapter2.state"),
        "weight": _served_bytes(site_dir, requests, context.base),
    }
    for button in page.locator(".c2-recall__toggle").all():
        button.click()  # audit the answers too
    page.mouse.move(0, 0)
    page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    report["figures"] = page.evaluate("""() => [...document.querySelectorAll('figure.c2-figure')].map(f => {
        const img = f.querySelector('img'), cap = f.querySelector('figcaption');
        return {src: img.getAttribute('src'), alt: img.alt, drawn: img.naturalWidth > 0, caption: cap ? cap.textContent.trim() : ''};
    })""")
    wait_scrollables_checked(page)  # a11y.js has marked the boxes that scroll
    report["violations"] = axe_problems(page, None, path)
    _shot(page, f"{context.scheme}_{_slug(path)}")
    page.close()
    return report


@pytest.fixture(scope="module")
def audit(browser, site_url, site_dir):
    """{scheme: {"pages": {path: report}, "blocked": [urls]}}: every page, loaded once per scheme, fresh."""
    assert AXE.exists(), "node_modules/axe-core is missing: run `npm ci`"
    reports = {}
    for scheme in ("light", "dark"):
        # bypass_csp: the site's Content-Security-Policy refuses injected scripts, and the audit script is ours
        # (search too: every page as a reader gets it)
        with _context(browser, site_url, viewport={"width": 1280, "height": 900}, color_scheme=scheme, bypass_csp=True,
                      search=True, save_data=True) as context:
            context.scheme = scheme
            pages = {path: _visit(context, path, site_dir) for path in _pages(site_dir)}
            reports[scheme] = {"pages": pages, "blocked": list(context.blocked)}
    return reports


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_serious_or_critical_violation(audit, scheme):
    found = [v for r in audit[scheme]["pages"].values() for v in r["violations"]]
    assert not found, "\n".join(found)


def test_no_page_reaches_outside_the_site(audit):
    assert not audit["light"]["blocked"] and not audit["dark"]["blocked"], audit["light"]["blocked"] + audit["dark"]["blocked"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_figures_are_drawn_with_a_text_alternative(audit, scheme):
    figures = [(path, f) for path, r in audit[scheme]["pages"].items() for f in r["figures"]]
    assert len(figures) >= 5
    for path, f in figures:
        assert f["drawn"], f"{path}: {f['src']} did not load"
        assert len(f["alt"]) > 20 and f["caption"], f"{path}: {f['src']} has no text alternative"


def test_pages_load_without_python_until_a_calculator_is_used(audit, site_dir, capsys):
    """Pyodide (about 18 MB) is fetched on the first interaction with a calculator or snippet, never on
    load, when the reader's browser asks to save data (else a calculator in view starts it: test_runtime)."""
    pages = audit["light"]["pages"]
    for path, r in pages.items():
        assert not r["pyodide_requests"], f"{path} loaded Pyodide without being asked: {r['pyodide_requests']}"
        assert r["state"] == "idle", path
    runtime = sum(f.stat().st_size for f in (site_dir / "pyodide").iterdir()) + (site_dir / "assets/chapter2/worker.js").stat().st_size
    assert runtime > 10e6
    for path, r in pages.items():
        assert r["weight"] < 4e6, f"{path} weighs {r['weight'] / 1e6:.1f} MB before any interaction"
    with capsys.disabled():
        print("\npage weight (bytes served, uncompressed) on load; Python adds "
              f"{runtime / 1e6:.1f} MB (Pyodide, numpy, chapter2) on first use of a calculator or snippet:")
        for path, r in sorted(pages.items()):
            print(f"  {path or '/':40s} {r['weight'] / 1e3:7.0f} kB   with Python {(r['weight'] + runtime) / 1e6:5.1f} MB")


def test_a_context_without_search_fetches_the_index_and_starts_no_search_worker(browser, site_url):
    """What local_only_context leaves out without `search` (conftest NO_SEARCH_WORKER): Material's search worker,
    and only it. The page still fetches the index, so page weights count it."""
    for search in (False, True):
        with local_only_context(browser, search=search, save_data=True, viewport={"width": 1280, "height": 900}) as context:
            page = context.new_page()
            page.goto(site_url)
            page.wait_for_load_state("networkidle")
            assert [u for u in context.requests if u.endswith("/search/search_index.json")], search
            assert bool([w for w in page.workers if "/workers/search." in w.url]) is search, [w.url for w in page.workers]


# ------------------------------------------------------------------ phones


# What a phone test reads of a control, in one call: a round trip through Playwright per fact cost the test most
# of its time (about 300 controls). `shown` is Playwright's visibility (a box, not visibility: hidden).
CONTROL_JS = """el => { const r = el.getBoundingClientRect();
  return {hidden: el.closest('[hidden]') !== null, kind: el.tagName === 'INPUT' ? el.type : el.tagName.toLowerCase(),
          label: [...(el.labels || [])].map(l => l.textContent.trim()).join(' ') || el.getAttribute('aria-label') || '',
          box: {x: r.x, width: r.width, height: r.height}, enabled: !el.matches(':disabled'), readonly: el.readOnly,
          shown: r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden',
          options: el.tagName === 'SELECT' ? [...el.options].filter(o => !o.hidden).map(o => o.value) : null}; }"""
# A slider after a key press: its value, what its readout shows (null without one) and its aria-valuetext.
SLIDER_JS = """el => { const out = document.querySelector(`output[for="${el.id}"]`);
  return {value: el.value, more: +el.value < +el.max, readout: out ? out.innerText : null,
          labels: JSON.parse(el.dataset.labels || 'null'), valuetext: el.getAttribute('aria-valuetext')}; }"""


def _check_control(page, control, facts):
    kind, box = facts["kind"], facts["box"]
    assert facts["label"], f"{kind} has no label"
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 0.5, f"{kind} outside the screen: {box}"
    assert box["width"] >= 44 and box["height"] >= 16, f"{kind} too small to use: {box}"
    assert facts["shown"] and facts["enabled"], f"{kind} hidden or disabled"
    if kind == "select":
        values = facts["options"]  # not 'pasted' with none
        target = values[-1] if control.input_value() != values[-1] else values[0]
        control.select_option(target)
        assert control.input_value() == target
    elif kind == "range":  # sliders move with the keyboard, and their readout follows
        before = control.evaluate(SLIDER_JS)
        control.focus()
        page.keyboard.press("ArrowRight" if before["more"] else "ArrowLeft")
        after = control.evaluate(SLIDER_JS)
        assert after["value"] != before["value"], "slider does not move with the arrow keys"
        if after["readout"] is not None:  # a slider over named positions (data-labels) shows the position's name
            want = after["labels"][after["value"]] if after["labels"] else after["value"]
            assert after["readout"] == want, "slider readout does not follow"
            if after["labels"]:
                assert after["valuetext"] == want
    else:
        assert not facts["readonly"], f"{kind} is read-only"
        control.fill("7")
        assert control.input_value() == "7"


def test_no_page_scrolls_sideways_on_a_phone_and_calculators_are_usable(browser, site_url, site_dir):
    """At 375 px: nothing wider than the screen; every calculator control labelled, on screen, and operable
    (sliders by keyboard). Python is kept from starting here (inert worker): this is about layout and input."""
    with _context(browser, site_url, viewport=PHONE, is_mobile=True, has_touch=True, inert_worker=True) as context:
        problems, controls, sliders = [], 0, 0
        for path in _pages(site_dir):
            page = _open(context, path)
            width = page.evaluate("() => document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                wide = page.evaluate("""(w) => [...document.querySelectorAll('body *')]
                    .filter(el => el.getBoundingClientRect().right > w + 1 && getComputedStyle(el).position !== 'fixed')
                    .slice(0, 3).map(el => el.tagName + '.' + el.className)""", PHONE["width"])
                problems.append(f"{path}: scrollWidth {width} ({wide})")
            _shot(page, f"phone_{_slug(path)}")
            open_workbenches(page)  # the calculators in closed workbench blocks, once a reader opens them
            for calc in page.locator("[data-calculator]").all():
                name = calc.get_attribute("data-calculator")
                for control in calc.locator("input, select, textarea").all():
                    facts = control.evaluate(CONTROL_JS)  # read now: a select above may have shown or hidden it
                    if facts["hidden"]:
                        continue  # a control that does not apply to the inputs chosen above it (Field.show_when)
                    controls += 1
                    sliders += facts["kind"] == "range"
                    try:
                        _check_control(page, control, facts)
                    except AssertionError as err:
                        problems.append(f"{path} {name}.{control.get_attribute('name')}: {err}")
            width = page.evaluate("() => document.documentElement.scrollWidth")
            if width > PHONE["width"]:
                problems.append(f"{path}: scrollWidth {width} after using the calculators")
            page.close()
        assert not problems, "\n".join(problems)
        assert controls >= 20 and sliders >= 2
        assert not context.blocked and not context.errors, (context.blocked, context.errors)


# ------------------------------------------------------------------ the recall check


def _today(page) -> datetime.date:
    y, m, d = page.evaluate("() => { const t = new Date(); return [t.getFullYear(), t.getMonth() + 1, t.getDate()]; }")
    return datetime.date(y, m, d)


def test_recall_cards_work_by_keyboard_and_remember_in_this_browser_only(browser, site_url):
    with _context(browser, site_url, viewport={"width": 1280, "height": 900}) as context:
        page = _open(context, "recall/")
        root = page.locator("[data-recall]")
        status = page.locator("[data-recall-status]")
        assert "No cards seen yet" in status.inner_text()
        assert page.locator("[data-recall-reset]").is_hidden()
        cards = page.locator("[data-recall-card]")
        n = cards.count()
        assert n >= 12

        # Screen-reader semantics: a named button that says whether its answer is shown, and a named region.
        first = cards.nth(0)
        card_id = first.get_attribute("data-recall-card")
        button = first.locator("button")
        question = button.inner_text()
        assert page.get_by_role("button", name=question).get_attribute("aria-expanded") == "false"
        answer = page.locator(f"#{button.get_attribute('aria-controls')}")
        assert answer.is_hidden()

        # Keyboard: Enter opens, Space closes, Space opens again; Tab goes through the answer's link to the next card.
        sent = []
        page.on("request", lambda r: sent.append(r.url))
        button.focus()
        page.keyboard.press("Enter")
        assert button.get_attribute("aria-expanded") == "true" and answer.is_visible()
        assert page.get_by_role("region", name=question).is_visible()
        page.keyboard.press("Space")
        assert button.get_attribute("aria-expanded") == "false" and answer.is_hidden()
        page.keyboard.press("Space")
        assert answer.is_visible()
        # (the answer's glossary terms are links too: Tab visits each of them, then the link back to the section)
        links = answer.locator("a").count()
        assert answer.locator("a.c2-recall__back").count() == 1
        visited = []
        for _ in range(links):
            page.keyboard.press("Tab")
            visited.append(page.evaluate("() => [...document.activeElement.classList]"))
        assert "c2-recall__back" in visited[-1] and all("c2-term" in v for v in visited[:-1]), visited
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.id") == cards.nth(1).locator("button").get_attribute("id")

        # Remembered in localStorage, with the day; the page suggests a date a week later.
        today = _today(page)
        stored = json.loads(page.evaluate("() => localStorage.getItem('chapter2.recall.v1')"))
        assert stored == {"version": 1, "cards": {card_id: today.isoformat()}}
        assert root.get_attribute("data-last-reviewed") == today.isoformat()
        assert root.get_attribute("data-come-back") == (today + datetime.timedelta(days=7)).isoformat()
        assert re.search(rf"Last reviewed .+: 1 of {n} cards seen\. Come back after .+", status.inner_text())
        assert first.locator("[data-recall-seen]").inner_text() == "Seen today"
        assert not sent, f"revealing a card sent requests: {sent}"

        # Still there after a reload.
        page.reload()
        page.wait_for_load_state("networkidle")
        assert cards.nth(0).locator("[data-recall-seen]").inner_text() == "Seen today"
        assert cards.nth(1).locator("[data-recall-seen]").is_hidden()

        # A review eight days ago is due again.
        old = (today - datetime.timedelta(days=8)).isoformat()
        page.evaluate("(d) => localStorage.setItem('chapter2.recall.v1', JSON.stringify({version: 1, cards: {'nn-collapse': d}}))", old)
        page.reload()
        page.wait_for_load_state("networkidle")
        assert root.get_attribute("data-last-reviewed") == old
        assert "A week or more has passed" in status.inner_text()
        assert page.locator('[data-recall-card="nn-collapse"] [data-recall-seen]').inner_text().startswith("Seen on ")

        # Forgetting clears the storage.
        page.locator("[data-recall-reset]").click()
        assert page.evaluate("() => localStorage.getItem('chapter2.recall.v1')") is None
        assert "No cards seen yet" in status.inner_text()
        assert page.locator("[data-recall-reset]").is_hidden()
        assert not context.errors and not context.blocked, (context.errors, context.blocked)


def test_recall_cards_survive_blocked_storage(browser, site_url):
    with _context(browser, site_url, viewport={"width": 1280, "height": 900}) as context:
        # storage that refuses (private browsing, full quota), for this page's key only: Material's own
        # scripts read localStorage without a guard, which is theirs to handle
        context.add_init_script("""for (const m of ['getItem', 'setItem', 'removeItem']) {
            const real = Storage.prototype[m];
            Storage.prototype[m] = function (key, ...rest) {
                if (String(key).startsWith('chapter2.recall')) throw new DOMException('denied', 'SecurityError');
                return real.call(this, key, ...rest);
            };
        }""")
        page = _open(context, "recall/")
        button = page.locator(".c2-recall__toggle").first
        button.click()
        assert button.get_attribute("aria-expanded") == "true"
        assert "does not let the page keep your progress" in page.locator("[data-recall-status]").inner_text()
        assert not context.errors, context.errors


# ------------------------------------------------------------------ notebooks and the map


@pytest.mark.parametrize("name, expect", [
    ("prefill_decode", ["memory bandwidth (numpy copy)", "prefill:", "decode:", "roofline lower bound"]),
    # (4·4096²·128 + 3·4096²) / (8·4096² + 8·4096·128) = 62.42 (chapter 2.4.2's worked example)
    ("attention_worked_example", ["intensity             = 62.42", "138,412,032", "8,640,266,240"]),
])
def test_notebooks_are_executed_offline_with_downloads(browser, site_url, name, expect):
    with _context(browser, site_url, viewport={"width": 1280, "height": 900}) as context:
        page = _open(context, f"notebooks/{name}/")
        outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
        for text in expect:
            assert text in outputs, text
        assert "Traceback" not in outputs and "Error" not in outputs
        html = page.content()
        assert "mathjax" not in html.lower() and "cdnjs" not in html and "require.js" not in html
        ipynb = page.request.get(site_url + f"notebooks/{name}/{name}.ipynb")
        source = page.request.get(site_url + f"notebooks/{name}/{name}.py")
        assert ipynb.ok and source.ok
        notebook = json.loads(ipynb.text())
        assert notebook["nbformat"] == 4 and notebook["cells"][0]["cell_type"] == "markdown"
        assert source.text() == (ROOT / "docs" / "notebooks" / f"{name}.py").read_text()
        assert page.locator(f'a[href$="/{name}/{name}.ipynb"][download]').is_visible()  # made absolute by Material (instant)
        assert not context.blocked, f"a notebook page reached outside: {context.blocked}"
        assert not context.errors, context.errors


def test_chapter_map_is_one_compact_figure(browser, site_url):
    """The map is one figure (docs/hooks/chapter_map.py): a card per section with its leaves as links, no
    diagram and no second list; at 1280 x 900 it takes at most two screens."""
    with _context(browser, site_url, viewport={"width": 1280, "height": 900}) as context:
        page = _open(context, "chapter-map/")
        figure = page.locator("article figure.c2-chapter-map")
        assert figure.count() == 1 and page.locator(".mermaid").count() == 0
        titles = figure.locator(".c2-map__title").all_inner_texts()
        assert len(titles) >= 6 and all(re.match(r"2\.\d\w? ", t) for t in titles)
        assert figure.locator(".c2-map__leaves a").count() >= 3 * len(titles)
        assert "see also" not in page.locator("article").inner_text().lower()
        assert figure.bounding_box()["height"] <= 2 * 900
        _shot(page, "chapter_map")
        assert not context.blocked and not context.errors, (context.blocked, context.errors)


# ------------------------------------------------------------------ reading length

SCREEN = {"width": 1280, "height": 900}  # a laptop window; scripts/page_metrics.py measures the same screen
MAX_SCREENS = 12.5  # the "about 12 screens" a section page reads in, with a little room for layout
NOT_SECTIONS = {"index.md", "chapter-map.md", "recall.md", "use-the-code.md"}  # home, summary pages, the package; notebooks too


def _section_pages() -> list[str]:
    """The site's section pages, in the order of mkdocs.yml's nav: every Markdown page but home, the chapter map,
    the recall check and the notebooks. A section added to the nav is measured without editing this file."""
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml names Python objects (a superfences formatter); the nav does not need them
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)["nav"]

    def files(items):
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from files(value) if isinstance(value, list) else [value]

    return [f for f in files(nav) if f.endswith(".md") and f not in NOT_SECTIONS and not f.startswith("notebooks/")]


def test_the_section_list_is_the_chapters_sections():
    pages = _section_pages()
    assert {"neural-networks.md", "llm-architecture.md", "llm-inference.md", "image-generation.md",
            "bottlenecks.md", "attention.md"} <= set(pages)
    assert not NOT_SECTIONS & set(pages) and not [p for p in pages if "notebook" in p]


def test_every_section_page_reads_in_about_twelve_screens(browser, site_url):
    """At 1280 × 900, a section page is at most MAX_SCREENS screens tall (page height ÷ 900 px), as a reader first
    sees it: collapsed blocks closed, every figure drawn (lazy images loaded, so the count does not depend on how
    far ahead the browser fetched), the fonts in place, Python not started (inert worker). Side paths belong in
    collapsible blocks; the main story stays short enough to read in one sitting."""
    with _context(browser, site_url, viewport=SCREEN, inert_worker=True) as context:
        heights = {}
        for md in _section_pages():
            page = _open(context, md.removesuffix(".md") + "/")
            page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            page.evaluate("() => document.fonts.ready.then(() => true)")
            heights[md] = page.evaluate("() => document.documentElement.scrollHeight")
            page.close()
        screens = {md: h / SCREEN["height"] for md, h in heights.items()}
        long = {md: round(s, 1) for md, s in screens.items() if s > MAX_SCREENS}
        assert not long, f"section pages longer than {MAX_SCREENS} screens at 1280 × 900: {long} (all: " \
                         f"{ {md: round(s, 1) for md, s in screens.items()} })"
        assert not context.blocked and not context.errors, (context.blocked, context.errors)
