"""The shape of a section page as a newcomer first meets it (issue 29): one hero in the first screen, at most
two calculators in the running text, the others in workbench blocks that work once opened.

At 1280 × 900, as a reader first sees the page (collapsed blocks closed, the fonts in, the hero drawn; Python
kept from starting, since none of this waits on it):

- the page has exactly one hero: the figure or calculator its Markdown marks `hero`
  (`<!-- figure: NAME hero -->`, docs/hooks/directives.py puts data-hero="true" on it);
- the hero's top is inside the first screen, under the header, with at least VISIBLE_PX of it on that screen
  (all of it, if it is shorter), and it is not clipped: shown, inside the content column, nothing wider inside
  it, its image drawn, nothing on top of it;
- at most MAX_OPEN calculators sit in the running text, that is outside closed <details> blocks. The others
  are in workbenches, `??? note "Workbench: <the question it answers>"`, placed where they belong.

And with Python running: a calculator in a closed workbench works once a reader opens the block with a click
on its summary (it shows, and a changed input gives CPython's answer).

PAGES lists the section pages reshaped this way; a page joins when it is.
"""

from __future__ import annotations

import re

import pytest

from _calculators import changed_value, chart_digests, computed, cpython_answer, form_values, wait_recomputed
from chapter2 import calculators
from conftest import local_only_context

pytestmark = pytest.mark.browser

PAGES = (  # one a line, in the chapter's order
    "neural-networks",
    "llm-inference",
    "llm-architecture",
    "image-generation",
    "bottlenecks",
    "attention",
)
SCREEN = {"width": 1280, "height": 900}
MAX_OPEN = 2
VISIBLE_PX = 240  # of the hero, on the first screen: a picture, not its top edge
WAIT_MS = 120_000

SHAPE = """() => {
  const closed = (el) => !!el.closest('details:not([open])');
  const calcs = [...document.querySelectorAll('article [data-calculator]')];
  const heroes = [...document.querySelectorAll('article [data-hero]')];
  const header = document.querySelector('.md-header').getBoundingClientRect().bottom;
  const column = document.querySelector('article').getBoundingClientRect();
  const out = {scrollY, header, column: [column.left, column.right], heroes: heroes.map((h) => h.id),
               open: calcs.filter((c) => !closed(c)).map((c) => c.dataset.calculator),
               workbench: calcs.filter(closed).map((c) => c.dataset.calculator)};
  if (heroes.length !== 1) return out;
  const h = heroes[0], r = h.getBoundingClientRect(), s = getComputedStyle(h);
  const seenTop = Math.max(r.top, header), seenBottom = Math.min(r.bottom, innerHeight);
  const probes = seenBottom > seenTop ? [[r.left + r.width / 2, (seenTop + seenBottom) / 2],
                                         [r.left + 8, seenTop + 8], [r.right - 8, seenTop + 8]] : [];
  const img = h.querySelector('img');
  out.hero = {
    top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height, width: r.width,
    shown: s.display !== 'none' && s.visibility === 'visible' && +s.opacity > 0 && r.width > 0 && r.height > 0,
    inClosedBlock: closed(h),
    overflow: h.scrollWidth - h.clientWidth,
    image: img && {complete: img.complete, natural: img.naturalWidth, width: img.getBoundingClientRect().width,
                   lazy: img.loading === 'lazy'},
    covered: probes.filter(([x, y]) => { const el = document.elementFromPoint(x, y); return !el || !h.contains(el); })
                   .map(([x, y]) => `${Math.round(x)},${Math.round(y)}: ${document.elementFromPoint(x, y)?.tagName}`),
  };
  return out;
}"""


@pytest.fixture(scope="module")
def shapes(browser, site_url):
    """{page: what SHAPE measured} for every page of PAGES, at 1280 × 900, as first seen."""
    found = {}
    with local_only_context(browser, inert_worker=True, viewport=SCREEN) as context:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        for path in PAGES:
            page.goto(site_url + path + "/")
            page.wait_for_load_state("networkidle")
            # a lazy image is not waited for: a hero must not be lazy (its check below says so)
            page.wait_for_function("() => document.fonts.status === 'loaded' && [...document.querySelectorAll("
                                   "'[data-hero] img')].every((i) => i.complete || i.loading === 'lazy')")
            found[path] = page.evaluate(SHAPE)
        assert not errors and not context.blocked, (errors, context.blocked)
    return found


@pytest.mark.parametrize("path", PAGES)
def test_at_most_two_calculators_in_the_running_text(shapes, path):
    shape = shapes[path]
    assert len(shape["open"]) <= MAX_OPEN, (
        f"{path}: {len(shape['open'])} calculators in the running text ({', '.join(shape['open'])}), more than "
        f"{MAX_OPEN}: move the others into workbench blocks (??? note \"Workbench: ...\")")


@pytest.mark.parametrize("path", PAGES)
def test_the_hero_is_in_the_first_screen_and_not_clipped(shapes, path):
    shape = shapes[path]
    assert len(shape["heroes"]) == 1, f"{path}: {len(shape['heroes'])} heroes {shape['heroes']}; mark one `hero`"
    hero, header = shape["hero"], shape["header"]
    assert shape["scrollY"] == 0
    assert hero["shown"] and not hero["inClosedBlock"], f"{path}: the hero is not shown ({hero})"
    assert header <= hero["top"], f"{path}: the hero's top ({hero['top']:.0f} px) is under the header ({header:.0f} px)"
    need = min(VISIBLE_PX, hero["height"])
    assert hero["top"] + need <= SCREEN["height"], (
        f"{path}: the hero starts at {hero['top']:.0f} px; at 1280 × 900 the first screen shows "
        f"{max(0, SCREEN['height'] - hero['top']):.0f} px of it, less than {need:.0f}")
    left, right = shape["column"]
    assert left - 0.5 <= hero["left"] and hero["right"] <= right + 0.5, f"{path}: the hero sticks out of the column"
    assert hero["overflow"] <= 1, f"{path}: something in the hero is {hero['overflow']} px wider than it"
    if hero["image"]:
        image = hero["image"]
        assert image["complete"] and image["natural"] > 0, (
            f"{path}: the hero's picture is not drawn{' (it loads lazily)' if image['lazy'] else ''}")
        assert image["width"] <= hero["width"] + 0.5
    assert not hero["covered"], f"{path}: something lies over the hero at {hero['covered']}"


PHONE = {"width": 375, "height": 812}
PHONE_VISIBLE_PX = 120  # of the hero's drawing on a phone's first screen: a picture begun, not an edge
# The hero's drawing: a build-time figure's image, else the first drawing a calculator shows (its first chart)
DRAWING = """() => { const h = document.querySelector('article [data-hero]');
  const d = h && h.querySelector('figure.c2-chart svg, img');
  const r = d && d.getBoundingClientRect();
  return r && {top: r.top, height: r.height, header: document.querySelector('.md-header').getBoundingClientRect().bottom,
               fields: [...h.querySelectorAll('.c2-calc__field')].filter((f) => f.getBoundingClientRect().top < r.top).length}; }"""


def test_on_a_phone_the_first_screen_shows_the_hero_s_drawing(browser, site_url):
    """At 375 × 812 each page's first screen shows its hero's picture begun (PHONE_VISIBLE_PX of it, or all of it),
    not only a calculator's fields: a hero calculator draws first on a narrow screen (chapter2.css), its fields
    below the drawing."""
    seen = {}
    with local_only_context(browser, inert_worker=True, viewport=PHONE, is_mobile=True, has_touch=True) as context:
        page = context.new_page()
        for path in PAGES:
            page.goto(site_url + path + "/")
            page.wait_for_function("() => document.fonts.status === 'loaded'")
            seen[path] = page.evaluate(DRAWING)
        assert not context.blocked
    late = {path: d for path, d in seen.items()
            if d is None or d["top"] < d["header"] or d["top"] + min(PHONE_VISIBLE_PX, d["height"]) > PHONE["height"]
            or d["fields"]}
    assert not late, f"at 375 × 812 these heroes' drawings are not on the first screen, or follow fields: {late}"


def _open_block(page, name: str) -> list[str]:
    """Open the closed blocks around calculator `name` as a reader does, a click on each summary, outermost first;
    returns the summaries' text."""
    titles = []
    calc = page.locator(f'[data-calculator="{name}"]')
    while True:
        marked = calc.evaluate("""(el) => { const blocks = [];
            for (let d = el.closest('details'); d; d = d.parentElement && d.parentElement.closest('details'))
              if (!d.open) blocks.push(d);
            document.querySelectorAll('[data-test-opening]').forEach((d) => d.removeAttribute('data-test-opening'));
            if (!blocks.length) return false;
            blocks[blocks.length - 1].setAttribute('data-test-opening', '');
            return true; }""")
        if not marked:
            return titles
        summary = page.locator("details[data-test-opening] > summary")
        titles.append(summary.inner_text().strip())
        summary.click()


def _shows_cpythons_answer(calc, name: str) -> None:
    want = cpython_answer(name, form_values(calc))
    if not want["ok"]:
        assert calc.locator("[data-calc-message]").inner_text() == want["message"], name
        return
    assert calc.locator("[data-calc-message]").is_hidden(), name
    spec = {o.key: o for o in calculators.get(name).outputs}
    digests = {key: re.search(r'data-digest="([0-9a-f]+)"', value).group(1) for key, value in want["outputs"].items()
               if spec[key].kind == "chart"}
    assert chart_digests(calc) == digests, f"{name}: the charts are not CPython's"
    for key, value in want["outputs"].items():
        if spec[key].kind not in ("chart", "bars"):
            assert calc.locator(f'[data-output="{key}"]').text_content() == value, f"{name}: {key}"


def test_a_calculator_in_a_closed_workbench_works_once_opened(watched):
    """On each page, its first workbench calculator: hidden until a click on the block's summary opens it, then
    a changed input recomputes in the browser and shows what CPython computes for the same inputs."""
    checked = []
    for path in PAGES:
        page = watched.goto(path + "/")
        inside = page.evaluate("() => [...document.querySelectorAll('details:not([open]) [data-calculator]')]"
                               ".map((c) => c.dataset.calculator)")
        if not inside:
            continue
        name = inside[0]
        calc = page.locator(f'[data-calculator="{name}"]')
        assert not calc.is_visible(), f"{path}: {name} shows though its block is closed"
        titles = _open_block(page, name)
        assert titles and titles[0].startswith("Workbench: "), f"{path}: {name} sits in {titles}, not a workbench"
        assert calc.is_visible(), f"{path}: {name} is still hidden after opening {titles}"
        movable = [f for f in calculators.get(name).fields if changed_value(f) is not None]
        field = ([f for f in movable if f.kind != "text"] or movable)[0]  # a text field when it has nothing else
        control = calc.locator(f'[name="{field.name}"]')
        before = computed(calc)
        if field.kind == "select":
            control.select_option(changed_value(field))
        elif field.kind == "range":
            control.evaluate("(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true})); }",
                             changed_value(field))
        else:
            control.fill(changed_value(field))
        wait_recomputed(page, name, before, WAIT_MS)
        _shows_cpythons_answer(calc, name)
        checked.append(f"{path}: {name}")
        watched.assert_clean()
    assert checked, f"no page of {PAGES} has a calculator in a workbench block"
