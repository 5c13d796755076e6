"""The live charts, measured in the browser (a benchmark, not a test).

    .venv/bin/python scripts/bench_charts.py [--site DIR] [--before DIR] [--runs 30]

Reports, for every calculator with a chart output: the redraw time after an input
change (input event -> Pyodide recomputes and redraws -> the new chart is in the page;
median and p90 over --runs changes, Python already warm; and the median until the next
frame is painted, which a 60 Hz display rounds up to about 16.7 ms), and for every page with charts its
weight on load (bytes served, uncompressed), with the share that is chart markup.
With --before (a site built without the charts) it prints the weight change per page.
Without --site it builds the site into a temporary folder first.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _Handler  # noqa: E402

# one input per chart calculator and two values to alternate between (each change moves a marker)
MOVES = {
    "activations": ("x", "-2.3", "1.7"), "sliding_window": ("n", "100000", "32768"), "roofline": ("batch", "64", "1"),
    "decode_batching": ("batch", "300", "12"), "kv_cache": ("context", "131072", "8192"),
    "moe_coverage": ("n_tokens", "16", "300"), "diffusion_pipeline": ("steps", "28", "50"),
    "few_step": ("few_steps", "4", "8"), "device_roofline": ("copy_gb_s", "12.5", "30"),
}

REDRAW_JS = """async ([name, field, a, b, runs]) => {
  const el = document.querySelector(`[data-calculator=${name}]`);
  const input = el.querySelector(`[name=${field}]`);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const before = +el.dataset.computed || 0;
    const t0 = performance.now();
    input.value = i % 2 ? b : a;
    input.dispatchEvent(new Event('change', {bubbles: true}));
    while ((+el.dataset.computed || 0) === before || el.hasAttribute('aria-busy')) await new Promise(r => setTimeout(r, 0));
    const inPage = performance.now() - t0;  // recomputed, redrawn and swapped into the page
    await new Promise(r => requestAnimationFrame(() => r()));  // ... and painted (the next frame)
    times.push([inPage, performance.now() - t0]);
  }
  return times;
}"""


def serve(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def chart_pages(site: Path) -> dict[str, list[str]]:
    """{page path: [calculators with a chart on it]}, from the built HTML."""
    pages = {}
    for html in sorted(site.rglob("index.html")):
        text = html.read_text()
        names = [n for n in re.findall(r'data-calculator="([\w-]+)"', text) if n in MOVES]
        if names:
            pages[html.parent.relative_to(site).as_posix() + "/"] = names
    return pages


def page_weight(browser, site: Path, path: str) -> int:
    """Bytes of the site's files a reader's browser fetches to show `path` (before any interaction)."""
    server, base = serve(site)
    try:
        ctx = browser.new_context()
        page = ctx.new_page()
        urls = []
        page.on("request", lambda r: urls.append(r.url))
        page.goto(base + path)
        page.wait_for_load_state("networkidle")
        ctx.close()
    finally:
        server.shutdown()
    total = 0
    for url in set(urls):
        rel = url[len(base):].split("#")[0].split("?")[0] if url.startswith(base) else None
        if rel is None:
            continue
        file = site / rel
        if rel == "" or rel.endswith("/"):
            file = file / "index.html"
        if file.is_file():
            total += file.stat().st_size
    return total


def chart_markup_bytes(site: Path, path: str) -> int:
    """Bytes of the chart outputs (<dt> + <dd data-kind="chart">) in one page's HTML."""
    text = (site / path / "index.html").read_text()
    return sum(len(m.encode()) for m in re.findall(r'<dt class="c2-calc__wide">[^<]*</dt><dd [^>]*data-kind="chart".*?</figure></dd>',
                                                   text, flags=re.S))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path)
    parser.add_argument("--before", type=Path, help="a site built without the charts, for the page-weight change")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    site = args.site
    if site is None:
        site = Path(tempfile.mkdtemp(prefix="chapter2-bench-charts-"))
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT, check=True)

    from playwright.sync_api import sync_playwright

    pages = chart_pages(site)
    result = {"redraw_ms": {}, "page_weight_kB": {}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for path in pages:
            after = page_weight(browser, site, path)
            row = {"after": round(after / 1e3, 1), "charts": round(chart_markup_bytes(site, path) / 1e3, 1)}
            if args.before:
                before = page_weight(browser, args.before, path)
                row.update(before=round(before / 1e3, 1), change_pct=round(100 * (after / before - 1), 1))
            result["page_weight_kB"][path] = row
        server, base = serve(site)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        for path, names in pages.items():
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            page.evaluate("() => window.chapter2.ready")
            for name in names:
                field, a, b = MOVES[name]
                page.evaluate(REDRAW_JS, [name, field, a, b, 3])  # warm: first calls import and allocate
                runs = page.evaluate(REDRAW_JS, [name, field, a, b, args.runs])
                swapped, painted = sorted(t for t, _ in runs), sorted(t for _, t in runs)
                result["redraw_ms"][name] = {"median": round(statistics.median(swapped), 1),
                                             "p90": round(swapped[int(0.9 * (len(swapped) - 1))], 1),
                                             "painted_median": round(statistics.median(painted), 1)}
        server.shutdown()
        browser.close()
    medians = [r["median"] for r in result["redraw_ms"].values()]
    result["redraw_ms_median_of_medians"] = round(statistics.median(medians), 1)
    print(json.dumps(result, indent=1))
    worst = max(result["redraw_ms"].items(), key=lambda kv: kv[1]["median"])
    print(f"target: redraw median <= 50 ms: worst {worst[0]} {worst[1]['median']} ms")
    if args.before:
        change = max(r["change_pct"] for r in result["page_weight_kB"].values())
        print(f"target: page weight within +15 %: largest change {change} %")


if __name__ == "__main__":
    main()
