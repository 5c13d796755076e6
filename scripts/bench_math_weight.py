"""What each section page weighs, on a first visit and as a reader's second page (a benchmark, not a test).

    .venv/bin/python scripts/bench_math_weight.py [--sites WITH WITHOUT] [--json]
    .venv/bin/python scripts/bench_math_weight.py --reference SITE    # re-measure page_weight_at_filing.json

Builds the site twice from the same tree: as published, and with CHAPTER2_MATH=off (the build hook's
measurement switch: the pages keep arithmatex's TeX source and link no KaTeX stylesheet). Then weighs
each section page (docs/*.md but the home page and the summary pages: chapter map, recall check,
glossary) in a fresh browser context, two ways:

- cold: the page is the visit's first; every file it loads is transferred;
- warm: the reader came from the page before it in the chapter's order (its footer's "Previous" link: the
  home page before 2.1), in the same tab; what the browser already holds (Material's stylesheets and
  script, the search index, our runtime loader, KaTeX's stylesheet and the font faces both pages draw
  with) is not transferred again.

Bytes are the bodies the browser received, uncompressed, until the network is idle and the fonts are ready
(the page's Resource Timing entries: a file served from the cache has transferSize 0). The server sends
`Cache-Control: max-age=600`, as GitHub Pages does. --sites measures two sites built before instead.

The budget (the live-figures issue, measured warm since the equations issue): a section page, loaded as a
reader's second page, transfers at most 15 % more than when that issue was filed
(scripts/page_weight_at_filing.json: the same measure on a build of that commit, written by --reference).
What KaTeX adds to each page is reported beside it: its stylesheet and the font faces the page draws with.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from urllib.parse import urljoin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _Handler  # noqa: E402

BUDGET = 0.15
AT_FILING = Path(__file__).with_name("page_weight_at_filing.json")
# The budget's anchor since the equations issue: each section page's warm weight when this stop's pages were
# final (the issues it landed asked for the content that outgrew the filing's weights: exact pipeline tables,
# a glossary, stepper frames shipped in the page). Written by `--record SITE`.
AT_BUDGET = Path(__file__).with_name("page_weight_budget.json")
NOT_SECTIONS = {"index", "chapter-map", "recall", "glossary", "use-the-code"}  # the home page, the summary pages, the package
PREVIOUS = re.compile(r'<a href="([^"]*)" class="md-footer__link md-footer__link--prev"')
CACHE_CONTROL = "max-age=600"  # GitHub Pages' header


def section_pages() -> list[str]:
    return sorted(p.stem for p in (ROOT / "docs").glob("*.md") if p.stem not in NOT_SECTIONS)


def build(out: Path, math: str) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "CHAPTER2_MATH": math}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class _Cached(_Handler):
    def end_headers(self):
        self.send_header("Cache-Control", CACHE_CONTROL)
        super().end_headers()


@contextlib.contextmanager
def serve(site: Path):
    """The site on 127.0.0.1, cacheable as GitHub Pages serves it; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Cached, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()


ENTRIES_JS = """() => performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'))
  .map(e => ({url: e.name, transferred: e.transferSize, body: e.decodedBodySize}))"""


def _load(page, url: str) -> list[dict]:
    """Open `url` in `page`, wait until the network is idle and the fonts are ready; its Resource Timing entries."""
    responses: list[str] = []
    listener = lambda r: responses.append(r.url)  # noqa: E731
    page.on("response", listener)
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    page.evaluate("() => document.fonts.ready")
    page.wait_for_load_state("networkidle")
    page.remove_listener("response", listener)
    entries = page.evaluate(ENTRIES_JS)
    unseen = {u for u in responses if u.startswith("http")} - {e["url"] for e in entries}
    if unseen:  # a file fetched where Resource Timing does not see it (a worker) would go uncounted
        raise RuntimeError(f"{url}: responses outside the page's Resource Timing: {sorted(unseen)[:5]}")
    return entries


def weigh(browser, site: Path, pages: list[str], *, warm: bool) -> dict[str, dict]:
    """{page: {"total", "html", "katex", "fonts", "cached", "sent", "gzip"}}: body bytes transferred for the page
    (after the page before it in the same tab when `warm`), of which its HTML and KaTeX's stylesheet and fonts;
    `fonts`: the KaTeX font files transferred; `cached`: bytes the page used from the cache; `sent`: the site
    paths transferred; `gzip`: the total as a host that compresses text would send it (a second view: the
    budget counts bytes uncompressed). `browser`: Playwright's."""
    result = {}
    with serve(site) as base:
        for name in pages:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            # as a Save-Data reader: a calculator in view would else start Python in the background (runtime.js),
            # and this weighs the page itself; Python's download is its own figure (bench_site.py)
            context.add_init_script("Object.defineProperty(navigator, 'connection', {value: {saveData: true}, configurable: true});")
            off_site: list[str] = []
            context.on("request", lambda r, off_site=off_site: r.url.startswith(("http:", "https:"))
                       and not r.url.startswith(base) and off_site.append(r.url))
            page = context.new_page()
            url = f"{base}{name}/"
            if warm:
                _load(page, urljoin(url, previous(site, name)))
            entries = _load(page, url)
            sent = [e for e in entries if e["transferred"] > 0]
            cached = sum(e["body"] for e in entries if e["transferred"] == 0)
            context.close()
            if off_site:
                raise RuntimeError(f"{name}: requests off the site: {off_site[:5]}")
            result[name] = {"total": sum(e["body"] for e in sent),
                            "html": sum(e["body"] for e in sent if e["url"] == url),
                            "katex": sum(e["body"] for e in sent if "/assets/vendor/katex/" in e["url"]),
                            "fonts": sorted(e["url"].rsplit("/", 1)[1] for e in sent
                                            if "/assets/vendor/katex/fonts/" in e["url"]),
                            "cached": cached, "sent": sorted(e["url"][len(base):] for e in sent),
                            "gzip": sum(_gzipped(site, e["url"][len(base):], e["body"]) for e in sent)}
    return result


COMPRESSED = (".html", "/", ".css", ".js", ".mjs", ".json", ".svg", ".txt", ".xml")  # text a host gzips


def _gzipped(site: Path, rel: str, size: int) -> int:
    """What a host that compresses text (GitHub Pages: gzip) sends for the site file `rel`; fonts and images as they are."""
    rel = rel.split("?", 1)[0]
    if not rel.endswith(COMPRESSED):
        return size
    path = site / (rel + "index.html" if rel.endswith("/") or not rel else rel)
    return len(gzip.compress(path.read_bytes(), 6, mtime=0))


def previous(site: Path, name: str) -> str:
    """The href of the page before `name` in the chapter's order (its footer's Previous link)."""
    found = PREVIOUS.search((site / name / "index.html").read_text())
    if found is None:
        raise RuntimeError(f"{name}: no Previous link in its footer (mkdocs.yml: navigation.footer)")
    return found.group(1)


def over_filing(now: dict) -> dict[str, float]:
    """{page: its warm weight now over its warm weight when the issue was filed, minus 1} (AT_FILING)."""
    filed = json.loads(AT_FILING.read_text())
    then = {**filed["warm"], **{new: filed["warm"][old] for new, old in filed["split_from"].items()}}
    return {name: now[name]["total"] / then[name] - 1 for name in now}


def over_budget(now: dict) -> dict[str, float]:
    """{page: its warm weight now over its warm weight in AT_BUDGET, minus 1}."""
    then = json.loads(AT_BUDGET.read_text())["warm"]
    return {name: now[name]["total"] / then[name] - 1 for name in now}


def record(site: Path) -> None:
    """Print `site`'s warm weights (every section page) as page_weight_budget.json's "warm"."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        warm = weigh(browser, site, section_pages(), warm=True)
        browser.close()
    print(json.dumps({"warm": {k: v["total"] for k, v in warm.items()}}, indent=1, sort_keys=True))


def _browser(p):
    return p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def reference(site: Path) -> None:
    """Print the filing site's weights (cold and warm) as page_weight_at_filing.json's "cold" and "warm"."""
    from playwright.sync_api import sync_playwright

    pages = sorted(set(section_pages()) - set(json.loads(AT_FILING.read_text())["split_from"]))
    with sync_playwright() as p:
        browser = _browser(p)
        cold, warm = weigh(browser, site, pages, warm=False), weigh(browser, site, pages, warm=True)
        browser.close()
    print(json.dumps({"cold": {k: v["total"] for k, v in cold.items()},
                      "warm": {k: v["total"] for k, v in warm.items()}}, indent=1, sort_keys=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", nargs=2, type=Path, metavar=("WITH", "WITHOUT"),
                        help="measure these two built sites (with typeset math, with CHAPTER2_MATH=off) instead of building")
    parser.add_argument("--reference", type=Path, metavar="SITE",
                        help="measure a build of the filing commit and print its weights for page_weight_at_filing.json")
    parser.add_argument("--record", type=Path, metavar="SITE",
                        help="measure a built site and print its warm weights for page_weight_budget.json")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON too")
    args = parser.parse_args()
    if args.reference:
        reference(args.reference)
        return
    if args.record:
        record(args.record)
        return

    pages = section_pages()
    if args.sites:
        with_site, without_site = args.sites
    else:
        tmp = Path(tempfile.mkdtemp(prefix="chapter2-bench-math-"))
        with_site, without_site = tmp / "with", tmp / "without"
        build(with_site, "on")
        build(without_site, "off")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        measured = {(site, warm): weigh(browser, path, pages, warm=warm)
                    for site, path in (("with", with_site), ("without", without_site)) for warm in (False, True)}
        browser.close()

    for warm in (False, True):
        print(f"\n{'warm: after the page before it' if warm else 'cold: first visit'}")
        print(f"{'page':<20}{'without math':>14}{'with math':>12}{'added':>10}{'ratio':>8}{'  of which: html':>18}"
              f"{'css+fonts':>11}  fonts loaded  gzip: without, with")
        for name in pages:
            a, b = measured["without", warm][name], measured["with", warm][name]
            print(f"{name:<20}{a['total']:>14,}{b['total']:>12,}{b['total'] - a['total']:>+10,}"
                  f"{b['total'] / a['total']:>8.3f}{b['html'] - a['html']:>+18,}{b['katex']:>11,}  {len(b['fonts']):>12}"
                  f"  {a['gzip']:>8,} {b['gzip']:>8,}")
    growth = over_filing(measured["with", True])
    print("\nwarm weight now against the issue's filing (" + json.loads(AT_FILING.read_text())["commit"] + "):")
    for name in pages:
        print(f"  {name:<20}{growth[name]:>+8.1%}")
    budget = over_budget(measured["with", True])
    print("\nwarm weight now against the budget's anchor (" + json.loads(AT_BUDGET.read_text())["commit"] + "):")
    for name in pages:
        print(f"  {name:<20}{budget[name]:>+8.1%}")
    worst = max(budget.values())
    print(f"budget: a section page, loaded second, transfers at most {BUDGET:.0%} more than at the anchor; "
          f"worst {worst:+.1%} ({'within' if worst <= BUDGET else 'OVER'} budget)")
    if args.json:
        print(json.dumps({f"{site} {'warm' if warm else 'cold'}": m for (site, warm), m in measured.items()}, indent=1))


if __name__ == "__main__":
    main()
