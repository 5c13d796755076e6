"""Reading length of the built site: screens at 1280 × 900 and words of prose vs code per page.

    .venv/bin/python scripts/page_metrics.py [SITE_DIR]      (default: site/)

A screen is 900 px of page height at a 1280 px wide viewport (collapsed blocks
count as closed, every figure loaded). Prose words are the words of the article outside code,
calculators and snippet output; code words are those inside <pre> blocks.
Uses Debian's Chromium through Playwright, offline.
"""

from __future__ import annotations

import functools
import http.server
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM, CHROMIUM_ARGS, _Handler  # noqa: E402

MEASURE = """() => {
  const article = document.querySelector('article');
  const words = (t) => (t.match(/[A-Za-z0-9][\\w'’.,%×-]*/g) || []).length;
  const clone = article.cloneNode(true);
  let code = 0;
  clone.querySelectorAll('pre').forEach(p => { code += words(p.textContent); p.remove(); });
  clone.querySelectorAll('.c2-calc, .c2-snippet__output, .headerlink, script, style').forEach(n => n.remove());
  return {height: document.documentElement.scrollHeight, prose: words(clone.textContent), code: code};
}"""


def measure(site: Path) -> list[tuple[str, float, int, int]]:
    from playwright.sync_api import sync_playwright

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = sorted(p.parent.relative_to(site).as_posix() for p in site.glob("*/index.html")
                   if p.parent.name not in {"search", "assets", "notebooks"})
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base) else r.abort())
        for name in ["", *pages]:
            page.goto(base + (name + "/" if name else ""))
            # every figure drawn (lazy ones too) and the fonts in: the height a reader scrolls through
            page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => { i.loading = 'eager'; })")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            page.evaluate("() => document.fonts.ready")
            m = page.evaluate(MEASURE)
            rows.append((name or "(home)", m["height"] / 900, m["prose"], m["code"]))
        browser.close()
    server.shutdown()
    return rows


def main() -> None:
    site = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "site"
    print(f"{'page':<28}{'screens':>9}{'prose words':>13}{'code words':>12}")
    for name, screens, prose, code in measure(site):
        print(f"{name:<28}{screens:>9.1f}{prose:>13,}{code:>12,}")


if __name__ == "__main__":
    main()
