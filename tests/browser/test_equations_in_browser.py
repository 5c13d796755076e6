"""Equations in the browser: typeset before any script runs, in the site's own fonts, readable in both
colour schemes, inside the column at 1280 px and on a 375 px phone with no sideways scrolling, and so are
code blocks and notebook cells (long code lines wrap);
every character drawn from a KaTeX font; KaTeX's stylesheet and fonts cached across pages, only the
faces a page draws with fetched; section pages within their page-weight budget.

The axe audit and the page-wide checks for sideways scrolling and requests off the site are in
test_reading.py and cover these pages too; this file checks the equations themselves.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from conftest import ROOT, local_only_context, wait_scrollables_checked

pytestmark = pytest.mark.browser
PHONE = {"width": 375, "height": 812}


def _math_pages(site_dir: Path) -> list[str]:
    pages = [p for p in sorted(site_dir.rglob("index.html")) if 'class="arithmatex"' in p.read_text()]
    return [p.parent.relative_to(site_dir).as_posix() + "/" for p in pages]


EQUATIONS_JS = """() => {
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const v = rgb(c).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                       return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const background = (el) => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor;
                                 if (!c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') return c; } return 'rgb(255, 255, 255)'; };
  const all = [...document.querySelectorAll('.arithmatex')];
  return {
    count: all.length,
    typeset: all.filter(el => el.querySelector(':scope > .katex, :scope > .katex-display')).length,
    rawTex: /\\\\(\\(|\\[|frac|text\\{|begin\\{)|\\$\\$/.test(document.body.innerText),
    fonts: ['KaTeX_Main', 'KaTeX_Math'].map(f => document.fonts.check(`16px ${f}`) &&
            [...document.fonts].some(face => face.family.replace(/"/g, '') === f && face.status === 'loaded')),
    contrast: all.map(el => { const k = el.querySelector('.katex'); const fg = getComputedStyle(k).color, bg = background(el);
                              const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x); return (a + 0.05) / (b + 0.05); }),
    sameColour: all.every(el => getComputedStyle(el.querySelector('.katex')).color === getComputedStyle(el.parentElement).color),
    blocks: [...document.querySelectorAll('div.arithmatex')].map(el => { const r = el.getBoundingClientRect();
      return {left: r.left, right: r.right, scrolls: el.scrollWidth > el.clientWidth + 1, tabindex: el.getAttribute('tabindex'),
              vertical: el.scrollHeight > el.clientHeight + 1}; }),
    pageWidth: document.documentElement.scrollWidth,
    scripts: [...document.scripts].map(s => s.src).filter(s => /katex/i.test(s)),
  };
}"""


def _measure(page) -> dict:
    """EQUATIONS_JS on a loaded page (network idle), once its fonts are in and a11y.js has marked what scrolls."""
    page.evaluate("() => document.fonts.ready")
    wait_scrollables_checked(page)  # a11y.js has marked the boxes that scroll
    return page.evaluate(EQUATIONS_JS)


def _check(info: dict, path: str) -> dict:
    assert info["count"] > 0 and info["typeset"] == info["count"], (path, info["count"], info["typeset"])
    assert not info["rawTex"], f"{path}: raw TeX on the page"
    assert all(info["fonts"]), f"{path}: KaTeX fonts not loaded from the site: {info['fonts']}"
    assert not info["scripts"], f"{path}: a script for math: {info['scripts']}"
    assert info["sameColour"], f"{path}: equations not in the text colour"
    assert min(info["contrast"]) >= 4.5, f"{path}: equation contrast {min(info['contrast']):.2f}"
    return info


VIEWS = {"phone": {"viewport": PHONE, "is_mobile": True, "has_touch": True},
         "desktop": {"viewport": {"width": 1280, "height": 900}}}


def _table_pages(site_dir: Path) -> list[str]:
    return [p for p in _reading_pages(site_dir) if "<table" in (site_dir / p / "index.html").read_text()]


def _drawn_fonts(context, page) -> tuple[int, dict]:
    """(typeset elements, {font family: glyphs}) for the page's equations, as Chromium drew them
    (CSS.getPlatformFontsForNode)."""
    cdp = context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector":
                     ".arithmatex .katex, .arithmatex .katex *:not(.katex-mathml, .katex-mathml *)"})["nodeIds"]
    drawn = {}
    for node in nodes:
        for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
            drawn[font["familyName"]] = drawn.get(font["familyName"], 0) + font["glyphCount"]
    cdp.detach()
    return len(nodes), drawn


def _roles(context, page) -> dict:
    """What a screen reader is given for the page's tables, beside the tables in the DOM."""
    cdp = context.new_cdp_session(page)
    roles = [n.get("role", {}).get("value") for n in cdp.send("Accessibility.getFullAXTree")["nodes"] if not n.get("ignored")]
    cdp.detach()
    dom = page.evaluate("""() => [...document.querySelectorAll('article table')].map(t =>
        [t.querySelectorAll('tbody td').length, t.querySelectorAll('thead th').length])""")
    return {"roles": roles, "dom": dom}


# A colour scheme changes colours, not layout: the light scheme is visited in both views, the dark one on the phone,
# whose checks read every colour the tests below compare (the equations' contrast and colour, the stacked tables' labels).
SCHEME_VIEWS = {"light": ("phone", "desktop"), "dark": ("phone",)}


@pytest.fixture(scope="module", params=["light", "dark"])
def visits(request, browser, site_url, site_dir):
    """Every page with an article (equations, tables, code), loaded once per view of its colour scheme (SCHEME_VIEWS:
    a 375 px phone, a 1280 px laptop) and measured as the tests below read it (a page load costs Chromium 1 to 3 CPU
    seconds: one load serves all of them). In order, on the page as loaded: the equations (EQUATIONS_JS), on the
    laptop in the light scheme the fonts that drew them; in the light scheme what is wider than its box with every
    closed note open (SIDEWAYS_JS); then the tables (STACKED_JS, which opens the closed notes too) and on the phone
    the accessibility tree. {view: {"pages": {path: {...}}, "fonts": [(url, status)], "blocked": [...]}}."""
    scheme, math, tables = request.param, _math_pages(site_dir), _table_pages(site_dir)
    reading = _reading_pages(site_dir) if scheme == "light" else []
    out = {}
    for view in SCHEME_VIEWS[scheme]:
        # save_data: measured as loaded, and no calculator starts Python
        with local_only_context(browser, save_data=True, color_scheme=scheme, **VIEWS[view]) as context:
            fonts, pages = [], {}
            context.on("response", lambda r, fonts=fonts: r.url.endswith((".woff2", ".woff", ".ttf"))
                       and fonts.append((r.url, r.status)))
            for path in sorted(set(math) | set(tables) | set(reading)):
                page = context.new_page()
                page.goto(site_url + ("" if path == "./" else path))
                page.wait_for_load_state("networkidle")
                pages[path] = got = {}
                if path in math:
                    got["equations"] = _measure(page)
                    if view == "desktop" and scheme == "light":
                        got["drawn"] = _drawn_fonts(context, page)
                if path in reading:
                    page.evaluate("() => document.fonts.ready")
                    got["sideways"] = page.evaluate(SIDEWAYS_JS, view == "phone")  # tables: see the test's docstring
                if path in tables:
                    got["tables"] = page.evaluate(STACKED_JS)
                    if view == "phone":
                        got.update(_roles(context, page))
                page.close()
            out[view] = {"pages": pages, "fonts": fonts, "blocked": list(context.blocked)}
    return out


@pytest.mark.parametrize("visits", ["light"], indirect=True)  # the dark scheme's equations: the phone test below
def test_equations_are_typeset_in_the_sites_fonts_and_readable(visits, site_url, site_dir):
    pages = _math_pages(site_dir)
    assert {"neural-networks/", "llm-inference/", "image-generation/", "bottlenecks/", "attention/"} <= set(pages)
    desktop = visits["desktop"]
    for path in pages:
        info = _check(desktop["pages"][path]["equations"], path)
        for block in info["blocks"]:
            assert not block["vertical"], f"{path}: an equation scrolls vertically"
            assert (block["tabindex"] == "0") == block["scrolls"], f"{path}: {block}"
            # on a laptop every equation fits the column: notes go under a line, not beside it
            assert not block["scrolls"], f"{path}: an equation is wider than the column at 1280 px: {block}"
    fonts = desktop["fonts"]
    assert fonts and all(url.startswith(site_url) and url.endswith(".woff2") and status == 200 for url, status in fonts), fonts
    assert not desktop["blocked"], desktop["blocked"]


def test_equations_fit_the_column_on_a_phone(visits, site_dir):
    """At 375 px every equation fits its column, in both colour schemes: long ones are split over aligned
    lines and notes stand under a line or in the prose after it, so none scrolls sideways (a11y.js would
    make one that did focusable; none is)."""
    phone, blocks = visits["phone"], 0
    for path in _math_pages(site_dir):
        info = _check(phone["pages"][path]["equations"], path)
        assert info["pageWidth"] <= PHONE["width"], f"{path}: page is {info['pageWidth']} px wide"
        for block in info["blocks"]:
            assert block["left"] >= -0.5 and block["right"] <= PHONE["width"] + 0.5, f"{path}: {block}"
            assert (block["tabindex"] == "0") == block["scrolls"], f"{path}: {block}"
            assert not block["vertical"], f"{path}: an equation scrolls vertically"
            assert not block["scrolls"], f"{path}: an equation is wider than a 375 px phone's column: {block}"
            blocks += 1
    assert blocks >= 25  # every display equation of the chapter (27 today), not a few
    assert not phone["blocked"], phone["blocked"]


SIDEWAYS_JS = """(tables) => {
  for (const d of document.querySelectorAll('article details')) d.open = true;  // the reference layer too
  const describe = (el) => { const ann = el.querySelector('annotation, code'); const r = el.getBoundingClientRect();
    return {what: el.matches('div.arithmatex') ? 'equation' : el.matches('.md-typeset__scrollwrap') ? 'table' : 'code',
            scroll: el.scrollWidth, client: el.clientWidth, right: r.right, text: (ann || el).textContent.trim().slice(0, 70)}; };
  const boxes = [...document.querySelectorAll('article div.arithmatex, article pre > code, article .jupyter-wrapper pre'
                                              + (tables ? ', article .md-typeset__scrollwrap' : ''))]
    .filter(el => el.getClientRects().length && !el.closest('pre.mermaid'));
  const wide = boxes.filter(el => el.scrollWidth > el.clientWidth + 1 || el.getBoundingClientRect().right > innerWidth + 0.5);
  // a code line longer than the column wraps, and its continuation hangs in from where the line's text starts
  const lines = [...document.querySelectorAll('article pre > code > span[id^="__span-"]')].filter(el => el.getClientRects().length);
  const textStart = (el) => { const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node; (node = walk.nextNode());) { const i = node.data.search(/[^ ]/); if (i < 0) continue;
      const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
      return range.getBoundingClientRect().left; } return null; };
  const wrapped = lines.map(el => { const range = document.createRange(); range.selectNodeContents(el);
      const rects = [...range.getClientRects()].filter(r => r.width > 0);
      const tops = [...new Set(rects.map(r => Math.round(r.top)))].sort((a, b) => a - b);
      return tops.length < 2 ? null : {start: textStart(el), next: Math.min(...rects.filter(r => Math.round(r.top) === tops[1]).map(r => r.left)),
                                       ch: parseFloat(getComputedStyle(el).fontSize) * 0.6, text: el.textContent.slice(0, 70)}; }).filter(Boolean);
  return {boxes: boxes.length, codeLines: lines.length, wide: wide.map(describe), wrapped,
          pageWidth: document.documentElement.scrollWidth};
}"""


def _reading_pages(site_dir: Path) -> list[str]:
    """Every page of the site with an article: the section pages, the home page, the map, glossary and notebooks."""
    pages = [p for p in sorted(site_dir.rglob("index.html")) if "<article" in p.read_text()]
    return [p.parent.relative_to(site_dir).as_posix() + "/" for p in pages]


@pytest.mark.parametrize("visits", ["light"], indirect=True)  # what is wider than its box does not follow the scheme
@pytest.mark.parametrize("view", ["phone", "desktop"])
def test_no_equation_or_code_block_scrolls_sideways(visits, site_dir, view):
    """At 375 and at 1280 px, on every page and with every closed note opened: no display equation, code block
    or notebook cell wider than its box or the screen, and on a phone no table either (a table of three or
    more columns reads row by row there: docs/hooks/tables.py). A code line longer than the column wraps at its
    edge (chapter2.css), its continuation indented from where the line starts so that it never reads as a new
    line. At 1280 px the six widest reference tables (8 to 11 columns, in closed notes) still scroll in their
    own box, which the keyboard reaches (a11y.js): a table compares rows best as a table on a desktop."""
    width = VIEWS[view]["viewport"]["width"]
    counted = {"boxes": 0, "codeLines": 0, "wrapped": 0}
    pages = _reading_pages(site_dir)
    assert len(pages) >= 10
    for path in pages:
        info = visits[view]["pages"][path]["sideways"]
        assert not info["wide"], f"{path} at {width} px: {info['wide']}"
        assert info["pageWidth"] <= width, f"{path}: page is {info['pageWidth']} px wide"
        for line in info["wrapped"]:  # 4 characters in from the line's first character, whatever its indentation
            assert line["next"] - line["start"] > 3 * line["ch"], f"{path}: a wrapped code line does not hang: {line}"
        counted["boxes"] += info["boxes"]
        counted["codeLines"] += info["codeLines"]
        counted["wrapped"] += len(info["wrapped"])
    assert not visits[view]["blocked"], visits[view]["blocked"]
    assert counted["boxes"] > 60 and counted["codeLines"] > 500, counted  # every page's equations and code (83, 780)
    if view == "phone":
        assert counted["wrapped"] > 20, counted  # the phone's column is narrower than many code lines: they wrap


def test_equations_need_no_javascript(browser, site_url, site_dir):
    with local_only_context(browser, viewport={"width": 1280, "height": 900}, java_script_enabled=False) as context:
        page = context.new_page()
        page.goto(site_url + "attention/")
        page.wait_for_load_state("networkidle")
        assert page.locator(".arithmatex .katex").count() == page.locator(".arithmatex").count() > 20
        text = page.locator("article").inner_text()
        assert not re.search(r"\\\(|\\\[|\\frac|\$\$", text)
        page.close()


@pytest.mark.parametrize("visits", ["light"], indirect=True)  # which font draws a glyph does not depend on the scheme
def test_every_character_of_an_equation_is_drawn_from_a_katex_font(visits, site_dir):
    """A glyph KaTeX's fonts lack, or a face the stylesheet fails to declare, would be drawn from a system
    font. Chromium says which fonts drew each element's text (CSS.getPlatformFontsForNode)."""
    checked = 0
    for path in _math_pages(site_dir):
        nodes, drawn = visits["desktop"]["pages"][path]["drawn"]
        assert nodes and drawn, (path, nodes, drawn)
        assert all(family.startswith("KaTeX_") for family in drawn), f"{path}: glyphs from {drawn}"
        checked += nodes
    assert checked > 500  # every page's typeset elements, not a few


def _bench():
    spec = importlib.util.spec_from_file_location("bench_math_weight", ROOT / "scripts" / "bench_math_weight.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def warm_weights(browser, site_dir):
    """Every section page weighed warm, as a reader's second page (each page in a browser context of its own, so
    one page's figures do not depend on which others are weighed): shared by the two tests below."""
    return _bench().weigh(browser, site_dir, _bench().section_pages(), warm=True)


def test_katex_files_are_cached_across_pages_and_a_page_fetches_only_the_faces_it_draws_with(browser, site_dir,
                                                                                             warm_weights):
    """A reader's second page takes KaTeX's stylesheet from the cache when the page before it had equations,
    and fetches only woff2 faces its equations draw with that the page before did not (@font-face is lazy)."""
    bench = _bench()
    pages = [p for p in bench.section_pages() if p != "neural-networks"]  # the first after the home page
    assert pages
    cold, warm = bench.weigh(browser, site_dir, pages, warm=False), warm_weights
    faces = len(re.findall(r"@font-face", (site_dir / "assets/vendor/katex/katex.min.css").read_text()))
    for name in pages:
        assert "assets/vendor/katex/katex.min.css" in cold[name]["sent"], name
        assert "assets/vendor/katex/katex.min.css" not in warm[name]["sent"], (name, "stylesheet not cached")
        assert 0 < len(cold[name]["fonts"]) < faces and all(f.endswith(".woff2") for f in cold[name]["fonts"]), cold[name]
        assert set(warm[name]["fonts"]) <= set(cold[name]["fonts"]), (name, warm[name]["fonts"])
    assert any(len(warm[n]["fonts"]) < len(cold[n]["fonts"]) for n in pages)  # the page before drew with some of them


def test_section_pages_weigh_at_most_15_percent_more_than_the_budgets_anchor(warm_weights):
    """The page-weight budget, measured as the equations issue asks: warm, as a reader's second page
    (scripts/bench_math_weight.py: after the page before it in the chapter's order, bytes transferred), against
    the same measure recorded in scripts/page_weight_budget.json. Typeset math, live charts, prebuilt stepper
    frames and the pages' own content all count; a new section page needs a recorded weight."""
    bench = _bench()
    pages = bench.section_pages()
    anchor = json.loads(bench.AT_BUDGET.read_text())["warm"]
    assert set(pages) == set(anchor), "a new section page needs a recorded weight (bench_math_weight.py --record)"
    assert set(warm_weights) == set(pages)
    growth = bench.over_budget(warm_weights)
    assert all(g <= bench.BUDGET for g in growth.values()), {k: f"{v:+.1%}" for k, v in growth.items()}


STACKED_JS = """() => {
  for (const d of document.querySelectorAll('article details')) d.open = true;
  const rgb = (c) => c.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = (c) => { const v = rgb(c).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
                       return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const background = (el) => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor;
                                 if (!c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') return c; } return 'rgb(255, 255, 255)'; };
  return [...document.querySelectorAll('article table')].map(table => {
    const heads = [...table.querySelectorAll('thead th')].map(th => th.textContent.replace(/\\s+/g, ' ').trim());
    const cells = [...table.querySelectorAll('tbody tr')].flatMap(tr => [...tr.children].map((td, i) => {
      const before = getComputedStyle(td, '::before'); const fg = before.color, bg = background(td);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      return {shown: before.content, head: heads[i], contrast: (a + 0.05) / (b + 0.05), display: getComputedStyle(td).display}; }));
    const r = table.getBoundingClientRect();
    return {columns: heads.length, stacked: table.hasAttribute('data-c2-stack'), cells, right: r.right,
            headVisible: table.querySelector('thead').getBoundingClientRect().height > 2};
  });
}"""


def test_a_wide_table_reads_row_by_row_on_a_phone_and_stays_a_table(visits, site_dir):
    """At 375 px a table of three or more columns shows each row as lines of "column name  value", the names in
    a colour that reads on the page in both schemes; the browser still exposes a table (table, rows, cells,
    column headers) to a screen reader; at 1280 px it is laid out as a table."""
    pages = _table_pages(site_dir)
    stacked = 0
    for view in visits:  # the light scheme's phone and laptop, the dark scheme's phone (SCHEME_VIEWS)
        phone = view == "phone"
        for path in pages:
            got = visits[view]["pages"][path]
            for table in got["tables"]:
                assert table["stacked"] == (table["columns"] >= 3), (path, table["columns"])
                if not table["stacked"]:
                    continue
                stacked += phone
                for cell in table["cells"]:
                    if phone:
                        assert cell["shown"] == json.dumps(cell["head"], ensure_ascii=False), (path, cell)  # the column's name, quoted
                        assert cell["display"] != "table-cell" and cell["contrast"] >= 4.5, (path, cell)
                    else:
                        assert cell["display"] == "table-cell", (path, cell)
                if phone:  # its header row visually hidden, every line inside the screen
                    assert not table["headVisible"] and table["right"] <= PHONE["width"] + 0.5, (path, table["columns"])
                else:
                    assert table["headVisible"], (path, table["columns"])
            if phone:  # what a screen reader is given: the same table as on a desktop
                roles, dom = got["roles"], got["dom"]
                assert roles.count("table") == len(dom), (path, roles.count("table"), len(dom))
                assert roles.count("cell") >= sum(td for td, _ in dom) and roles.count("columnheader") >= sum(th for _, th in dom), path
        assert not visits[view]["blocked"], visits[view]["blocked"]
    assert stacked >= 20  # the chapter's wide tables, not one
