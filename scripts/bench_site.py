"""Site performance, measured side by side in one run (a benchmark, not a test).

    .venv/bin/python scripts/bench_site.py [--runs 30]

Reports: `mkdocs build` wall time; cold page load to the first calculator result
computed in the browser (navigation start -> Pyodide, numpy and chapter2 loaded
-> outputs painted), on 127.0.0.1 with a fresh browser profile, and where that
time went (cold_breakdown_ms: the page until the first interaction, then the
calculators' worker: its scripts, all downloads, Python started, numpy and
chapter2 installed, numpy imported, chapter2 imported, the first call); warm
recompute time after an input change (median and p90 over --runs changes); page
weight with and without the Python runtime.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS, _Handler  # noqa: E402

WARM_JS = """async ([runs]) => {
  const calc = document.querySelector('[data-calculator=activations]');
  const input = calc.querySelector('input[name=x]');
  const times = [];
  for (let i = 0; i < runs; i++) {
    const before = +calc.dataset.computed;
    const t0 = performance.now();
    input.value = (-5 + (i * 0.37) % 10).toFixed(1);
    input.dispatchEvent(new Event('input', {bubbles: true}));
    while (+calc.dataset.computed === before) await new Promise(r => setTimeout(r, 0));
    times.push(performance.now() - t0);
  }
  return times;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()

    import functools
    import http.server
    import threading

    from playwright.sync_api import sync_playwright

    out = Path(tempfile.mkdtemp(prefix="chapter2-bench-site-"))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, check=True,
                   env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ})
    build_s = time.perf_counter() - t0

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/neural-networks/"

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = browser.new_context()
        page = ctx.new_page()
        sizes = []
        # network responses only (blob: URLs are bytes already counted, run from memory)
        page.on("response", lambda r: sizes.append((r.url, len(r.body()) if r.ok and r.url.startswith("http") else 0)))
        page.goto(url, wait_until="load")
        page.wait_for_load_state("networkidle")
        without_python = sum(s for _, s in sizes)
        calc = page.locator('[data-calculator="activations"]')
        interaction_ms = page.evaluate("() => performance.now()")
        calc.locator('input[name="x"]').fill("2.5")  # first interaction: starts Python and asks for a result
        page.wait_for_function("() => document.querySelector('[data-calculator=activations]').dataset.computed", timeout=120000)
        cold_ms = page.evaluate("() => performance.now()")  # since navigation start
        marks = page.evaluate("() => window.chapter2.lanes.calc.timings") or {}
        page.wait_for_load_state("networkidle")
        with_python = sum(s for _, s in sizes)
        warm = page.evaluate(WARM_JS, [args.runs])
        browser.close()
    server.shutdown()

    warm_sorted = sorted(warm)
    # worker marks are ms since the worker started (docs/assets/chapter2/worker.js): consecutive phases,
    # plus when the last download finished (downloads run in parallel with the first phases)
    phases = [("worker_scripts", "scripts"), ("python_started", "python"), ("packages_installed", "packages"),
              ("numpy_imported", "numpy"), ("chapter2_imported", "chapter2")]
    breakdown, last = {"page_until_interaction": round(interaction_ms)}, 0
    for label, key in phases:
        if key in marks:
            breakdown[label], last = marks[key] - last, marks[key]
    if marks:
        breakdown["first_call_and_paint"] = round(cold_ms - interaction_ms - last)
        breakdown["downloads_done_at"] = marks.get("downloaded")
    result = {
        "mkdocs_build_s": round(build_s, 2),
        "cold_load_to_first_result_s": round(cold_ms / 1000, 2),
        "warm_recompute_ms_median": round(statistics.median(warm), 1),
        "warm_recompute_ms_p90": round(warm_sorted[int(0.9 * (len(warm) - 1))], 1),
        "page_weight_without_python_MB": round(without_python / 1e6, 2),
        "page_weight_with_python_MB": round(with_python / 1e6, 2),
        "cold_breakdown_ms": breakdown,
        "runs": args.runs,
    }
    print(json.dumps(result, indent=2))
    print(f"targets: build <= 60 s: {build_s:.1f} s; cold <= 5 s: {cold_ms / 1000:.2f} s; "
          f"warm median <= 50 ms: {statistics.median(warm):.1f} ms")


if __name__ == "__main__":
    main()
