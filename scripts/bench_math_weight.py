"""What typeset math adds to each section page's weight (a benchmark, not a test).

    .venv/bin/python scripts/bench_math_weight.py [--sites WITH WITHOUT] [--json]

Builds the site twice from the same tree: as published, and with CHAPTER2_MATH=off (the build
hook's measurement switch: the pages keep arithmatex's TeX source and link no KaTeX stylesheet).
Then loads each section page (docs/*.md other than index, chapter-map and recall) on a first
visit, in a fresh browser context, and adds up the bytes of every response until the network is
idle (uncompressed, as scripts/bench_site.py counts page weight), plus how much of it is the page's
HTML and KaTeX's stylesheet and fonts. --sites measures two sites built before instead.

The budget (the live-figures issue): a section page weighs at most 15 % more than when that issue
was filed (scripts/page_weight_at_filing.json: bytes per page measured the same way on a build of that
commit). What KaTeX adds to each page is reported beside it: it is part of that growth, not a budget of
its own (as the other weight drops, its share rises).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _Handler  # noqa: E402

BUDGET = 0.15
AT_FILING = Path(__file__).with_name("page_weight_at_filing.json")
NOT_SECTIONS = {"index", "chapter-map", "recall"}


def section_pages() -> list[str]:
    return sorted(p.stem for p in (ROOT / "docs").glob("*.md") if p.stem not in NOT_SECTIONS)


def build(out: Path, math: str) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "CHAPTER2_MATH": math}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def weigh(browser, site: Path, pages: list[str]) -> dict[str, dict]:
    """{page: {"total", "html", "katex", "fonts"}}: bytes loaded on a first visit (a fresh context) until
    the network is idle, of which the page's HTML and KaTeX's stylesheet and fonts; `browser`: Playwright's."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    result = {}
    try:
        for name in pages:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
            page = context.new_page()
            sizes: list[tuple[str, int]] = []
            page.on("response", lambda r, sizes=sizes: sizes.append((r.url, len(r.body()) if r.ok and r.url.startswith("http") else 0)))
            url = f"{base}{name}/"
            page.goto(url, wait_until="load")
            page.wait_for_load_state("networkidle")
            page.evaluate("() => document.fonts.ready")
            page.wait_for_load_state("networkidle")
            result[name] = {"total": sum(s for _, s in sizes),
                            "html": sum(s for u, s in sizes if u == url),
                            "katex": sum(s for u, s in sizes if "/assets/vendor/katex/" in u),
                            "fonts": sorted(u.rsplit("/", 1)[1] for u, _ in sizes if "/assets/vendor/katex/fonts/" in u)}
            context.close()
    finally:
        server.shutdown()
    return result


def over_filing(with_math: dict) -> dict[str, float]:
    """{page: its weight now over its weight when the issue was filed, minus 1} (AT_FILING)."""
    filed = json.loads(AT_FILING.read_text())
    then = {**filed["bytes"], **{new: filed["bytes"][old] for new, old in filed["split_from"].items()}}
    return {name: with_math[name]["total"] / then[name] - 1 for name in with_math}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sites", nargs=2, type=Path, metavar=("WITH", "WITHOUT"),
                        help="measure these two built sites (with typeset math, with CHAPTER2_MATH=off) instead of building")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON too")
    args = parser.parse_args()

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
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        with_math, without_math = weigh(browser, with_site, pages), weigh(browser, without_site, pages)
        browser.close()

    print(f"{'page':<20}{'without math':>14}{'with math':>12}{'added':>10}{'ratio':>8}{'  of which: html':>18}"
          f"{'css+fonts':>11}  fonts loaded")
    for name in pages:
        a, b = without_math[name], with_math[name]
        print(f"{name:<20}{a['total']:>14,}{b['total']:>12,}{b['total'] - a['total']:>+10,}{b['total'] / a['total']:>8.3f}"
              f"{b['html'] - a['html']:>+18,}{b['katex']:>11,}  {len(b['fonts'])}")
    growth = over_filing(with_math)
    print("\nweight now against the issue's filing (" + json.loads(AT_FILING.read_text())["commit"] + "):")
    for name in pages:
        print(f"  {name:<20}{growth[name]:>+8.1%}")
    worst = max(growth.values())
    print(f"budget: a section page weighs at most {BUDGET:.0%} more than at the filing; worst {worst:+.1%} "
          f"({'within' if worst <= BUDGET else 'OVER'} budget)")
    if args.json:
        print(json.dumps({"with": with_math, "without": without_math}, indent=1))


if __name__ == "__main__":
    main()
