"""The smallest text of every figure on every section page, in CSS pixels as the reader sees it (a measurement).

    .venv/bin/python scripts/figure_text.py [SITE_DIR] [--width 375]     (default: site/, 375 and 1280)

A figure is a build-time figure (`<figure class="c2-figure">`: an <img> of an SVG, or the <picture> that offers
a phone-width drawing) or an inline SVG with text in the article (the calculators' live charts, diagrams).
For an <img>, the SVG file the browser chose (`currentSrc`) is laid out off screen at the image's displayed
size; for an inline SVG, the SVG itself. Each <text> or <tspan> with text of its own then measures its computed font size times the
scale of its transform to the page (`getScreenCTM`): the height of an em on screen. Collapsed blocks are opened
first and lazy images loaded, so every figure is measured as a reader who opens it sees it. Uses Debian's
Chromium through Playwright, offline; `tests/browser/test_figure_text.py` holds every figure to READABLE_PX.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, _Handler  # noqa: E402

READABLE_PX = 11  # the smallest figure text a phone reader is asked to read (issue 25)
NOT_SECTIONS = {"index", "chapter-map", "recall", "glossary", "use-the-code"}  # as scripts/bench_math_weight.py

# () => [{name, kind, src, min, text, small, width}] for every figure of the page, `min` in CSS px
MEASURE_JS = """async () => {
  const smallest = (svg) => {
    let min = Infinity, text = '', small = 0;
    for (const t of svg.querySelectorAll('text, tspan')) {  // a <tspan> may set its own size (a superscript)
      const label = [...t.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.data).join('').trim();
      if (!label || t.closest('defs, clipPath, mask, symbol')) continue;
      const m = t.getScreenCTM();
      if (!m) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      if (px < 11) small += 1;
      if (px < min) { min = px; text = label; }
    }
    return {min, text, small};
  };
  const out = [];
  const sandbox = document.createElement('div');
  sandbox.style.cssText = 'position:absolute;left:0;top:0;visibility:hidden;pointer-events:none';
  document.body.append(sandbox);
  for (const fig of document.querySelectorAll('article figure.c2-figure')) {
    const img = fig.querySelector('img');
    const box = img.getBoundingClientRect();
    const svg = new DOMParser().parseFromString(await (await fetch(img.currentSrc)).text(), 'image/svg+xml').documentElement;
    svg.setAttribute('width', box.width); svg.setAttribute('height', box.height);
    sandbox.replaceChildren(svg);
    out.push({name: fig.id.replace(/^figure-/, ''), kind: 'figure', src: img.currentSrc.split('/').pop(),
              width: Math.round(box.width), column: Math.round(fig.getBoundingClientRect().width), ...smallest(svg)});
  }
  sandbox.remove();
  const seen = new Map();
  for (const svg of document.querySelectorAll('article svg')) {
    if (svg.closest('figure.c2-figure') || svg.parentElement.closest('svg') || !svg.querySelector('text')) continue;
    const chart = svg.closest('[data-output]'), calc = svg.closest('[data-calculator]');
    let name = chart ? `${calc ? calc.dataset.calculator + '.' : ''}${chart.dataset.output}`
                     : (svg.closest('[id]') || {id: 'svg'}).id;
    seen.set(name, (seen.get(name) || 0) + 1);
    if (seen.get(name) > 1) name += `#${seen.get(name)}`;
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;  // a chart of a hidden panel: measured where it shows
    out.push({name, kind: 'inline svg', src: '', width: Math.round(box.width),
              column: Math.round(svg.parentElement.getBoundingClientRect().width), ...smallest(svg)});
  }
  return out;
}"""


def prepare(page) -> None:
    """Open every collapsed block, load every lazy image, wait for the fonts: every figure laid out."""
    page.evaluate("() => { document.querySelectorAll('article details').forEach(d => { d.open = true; });"
                  " document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; }); }")
    page.wait_for_function("() => [...document.images].every(i => i.complete && i.currentSrc)")
    page.evaluate("() => document.fonts.ready")


def measure_page(page) -> list[dict]:
    prepare(page)
    return page.evaluate(MEASURE_JS)


def section_pages(site: Path) -> list[str]:
    return sorted(p.parent.name for p in site.glob("*/index.html") if p.parent.name not in NOT_SECTIONS
                  and p.parent.name not in {"search", "assets", "notebooks"})


def measure_with(browser, base: str, site: Path, width: int, scheme: str = "light") -> tuple[dict[str, list[dict]], list[str]]:
    """({page: figures}, every URL requested) for every section page at `width` px in `scheme`; `browser`:
    Playwright's, `base`: the site's URL. A Save-Data reader: no calculator starts Python."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
    context.add_init_script("Object.defineProperty(navigator, 'connection', {value: {saveData: true}, configurable: true});")
    requested: list[str] = []
    context.route("**/*", lambda r: (requested.append(r.request.url),
                                     r.continue_() if r.request.url.startswith(base) else r.abort()))
    page = context.new_page()
    result = {}
    try:
        for name in section_pages(site):
            page.goto(f"{base}{name}/")
            result[name] = measure_page(page)
    finally:
        context.close()
    return result, requested


def measure(site: Path, widths: list[int], scheme: str = "light") -> dict[int, dict[str, list[dict]]]:
    from playwright.sync_api import sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            result = {width: measure_with(browser, base, site, width, scheme)[0] for width in widths}
            browser.close()
    finally:
        server.shutdown()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", nargs="?", default=str(ROOT / "site"))
    parser.add_argument("--width", type=int, action="append", help="viewport width (repeatable; default 375 and 1280)")
    parser.add_argument("--dark", action="store_true", help="in the dark colour scheme")
    args = parser.parse_args()
    for width, pages in measure(Path(args.site), args.width or [375, 1280], "dark" if args.dark else "light").items():
        print(f"\n## {width} px viewport: smallest text per figure (CSS px), texts under {READABLE_PX} px")
        print(f"{'page':<18}{'figure':<40}{'file':<30}{'shown':>6}{'column':>7}{'min px':>8}{'<11':>5}  smallest text")
        for name, figs in pages.items():
            low = min((f["min"] for f in figs), default=float("nan"))
            print(f"{name:<18}{'(page minimum)':<40}{'':<30}{'':>6}{low:>8.1f}")
            for f in figs:
                print(f"{'':<18}{f['name'][:39]:<40}{f['src'][:29]:<30}{f['width']:>6}{f['column']:>7}"
                      f"{f['min']:>8.1f}{f['small']:>5}  {f['text'][:30]!r}")


if __name__ == "__main__":
    main()
