"""Site performance, measured side by side in one run (a benchmark, not a test).

    .venv/bin/python scripts/bench_site.py [--runs 30]

Reports: `mkdocs build` wall time; cold page load to the first calculator result
computed in the browser (navigation start -> the reader changes an input as soon
as the page has loaded -> runtime loaded, Pyodide, numpy and chapter2 loaded ->
outputs painted), on 127.0.0.1 with a fresh browser profile, and where that time
went (cold_breakdown_ms: the page's load event, the first interaction, the
runtime's core loaded, then the calculators' worker: its scripts, all downloads,
Python started, numpy and chapter2 installed, numpy imported, chapter2 imported,
the first call and paint); warm recompute time after an input change (median and
p90 over --runs changes); page weight (Content-Length of every response) with and
without the Python runtime, from a separate load so that counting bytes never
slows the timed ones; and a stepper's first step on a cold page (2.2's prefill/decode: Forward pressed as soon
as the page has loaded, to the next step painted) with the size of that page's HTML.

    --cold-runs N      N cold loads, medians reported (one sample is noisy on a shared machine)
    --site DIR [DIR]   measure already built sites, side by side and interleaved, e.g. a build
                       from before a change and one from after it (no build time then)
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


def first_result(page) -> None:
    """The reader's first interaction (x of the activations calculator): it loads the runtime, starts
    Python and asks for a result; returns once the result is painted."""
    page.locator('[data-calculator="activations"] input[name="x"]').fill("2.5")
    page.wait_for_function("() => document.querySelector('[data-calculator=activations]').dataset.computed", timeout=120000)


def cold_load(browser, url):
    """One cold load (fresh browser context): navigation -> first calculator result, and where the time went.

    The reader acts as soon as the page has loaded (its `load` event): no quiet period is waited for,
    and nothing is listened to on the network, since copying every response body out of the browser
    (18 MB of Python) would slow the very load being timed. Weight is measured apart (page_weight).
    """
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(url, wait_until="load")
    interaction_ms = page.evaluate("() => performance.now()")
    first_result(page)
    cold_ms = page.evaluate("() => performance.now()")  # since navigation start
    load_ms = page.evaluate("() => performance.getEntriesByType('navigation')[0].loadEventEnd")
    marks = page.evaluate("() => window.chapter2.lanes.calc.timings") or {}
    ctx.close()
    # worker marks are ms since the worker started (docs/assets/chapter2/worker.js): consecutive phases,
    # plus when the last download finished (downloads run in parallel with the first phases)
    phases = [("worker_scripts", "scripts"), ("python_started", "python"), ("packages_installed", "packages"),
              ("numpy_imported", "numpy"), ("chapter2_imported", "chapter2")]
    breakdown, last = {"page_loaded": round(load_ms), "page_until_interaction": round(interaction_ms)}, 0
    # from the interaction until the worker was created: the runtime's core loaded by the loader (runtime.js)
    spawned_ms = marks.get("spawnedAt", interaction_ms)
    breakdown["runtime_core_loaded"] = round(spawned_ms - interaction_ms)
    for label, key in phases:
        if key in marks:
            breakdown[label], last = marks[key] - last, marks[key]
    if marks:
        breakdown["first_call_and_paint"] = round(cold_ms - spawned_ms - last)
        breakdown["downloads_done_at"] = marks.get("downloaded")
    return {"cold_ms": cold_ms, "from_interaction_ms": cold_ms - interaction_ms, "breakdown": breakdown}


def stepper_first_step(browser, url):
    """Cold load of 2.2's serving page, then Forward on the prefill/decode stepper as soon as the page has loaded:
    ms from the press to the next step painted (it needed Python and the tiny model before the steps were
    prebuilt), and the page's HTML size in bytes (the prebuilt steps travel in it)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    response = page.goto(url, wait_until="load")
    html_bytes = len(response.body())
    calc = page.locator('[data-calculator="prefill_decode"]')
    calc.scroll_into_view_if_needed()
    t0 = page.evaluate("() => performance.now()")
    calc.locator('button[data-step="1"]').click()
    page.wait_for_function("() => document.querySelector('[data-calculator=prefill_decode]').dataset.computed",
                           timeout=180000)
    ms = page.evaluate("() => performance.now()") - t0
    ctx.close()
    return {"ms": ms, "html_bytes": html_bytes}


def page_weight(browser, url, runs):
    """Bytes served (Content-Length) before any interaction and after the first result; then warm recomputes."""
    ctx = browser.new_context()
    page = ctx.new_page()
    sizes = []
    # network responses only (blob: URLs are bytes already counted, run from memory); headers, not bodies
    page.on("response", lambda r: sizes.append(int(r.headers.get("content-length") or 0) if r.url.startswith("http") else 0))
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
    without_python = sum(sizes)
    first_result(page)
    page.wait_for_load_state("networkidle")
    with_python = sum(sizes)
    warm = page.evaluate(WARM_JS, [runs])
    ctx.close()
    return {"without": without_python, "with": with_python, "warm": warm}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="warm recomputes")
    parser.add_argument("--cold-runs", type=int, default=1, help="cold loads (fresh browser context each); medians reported")
    parser.add_argument("--site", nargs="+", help="measure these already built sites (side by side, interleaved) instead of building")
    args = parser.parse_args()

    import functools
    import http.server
    import threading

    from playwright.sync_api import sync_playwright

    build_s = None
    sites = [Path(s) for s in args.site] if args.site else []
    if not sites:
        out = Path(tempfile.mkdtemp(prefix="chapter2-bench-site-"))
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, check=True,
                       env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ})
        build_s = time.perf_counter() - t0
        sites = [out]

    servers, urls = [], []
    for site in sites:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        urls.append(f"http://127.0.0.1:{server.server_address[1]}/neural-networks/")

    samples = {str(site): [] for site in sites}
    steps = {str(site): [] for site in sites}
    weights = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(args.cold_runs):
            for site, url in zip(sites, urls, strict=True):  # interleaved: the machine's load falls on all alike
                samples[str(site)].append(cold_load(browser, url))
                steps[str(site)].append(stepper_first_step(browser, url.replace("/neural-networks/", "/llm-inference/")))
        for site, url in zip(sites, urls, strict=True):
            weights[str(site)] = page_weight(browser, url, args.runs)
        browser.close()
    for server in servers:
        server.shutdown()

    med = statistics.median
    for site, runs in samples.items():
        first, warm = weights[site], sorted(weights[site]["warm"])
        keys = runs[0]["breakdown"].keys()
        result = {
            **({"site": site} if args.site else {"mkdocs_build_s": round(build_s, 2)}),
            "cold_load_to_first_result_s": round(med(r["cold_ms"] for r in runs) / 1000, 2),
            "first_interaction_to_result_s": round(med(r["from_interaction_ms"] for r in runs) / 1000, 2),
            "warm_recompute_ms_median": round(med(warm), 1),
            "warm_recompute_ms_p90": round(warm[int(0.9 * (len(warm) - 1))], 1),
            "page_weight_without_python_MB": round(first["without"] / 1e6, 2),
            "page_weight_with_python_MB": round(first["with"] / 1e6, 2),
            "cold_breakdown_ms": {k: med(r["breakdown"].get(k) or 0 for r in runs) for k in keys},
            "stepper_first_step_cold_ms": round(med(r["ms"] for r in steps[site]), 1),
            "llm_inference_html_kB": round(steps[site][0]["html_bytes"] / 1e3, 1),
            "runs": args.runs,
            "cold_runs": len(runs),
        }
        print(json.dumps(result, indent=2))
        cold = result["cold_load_to_first_result_s"]
        build = f"build <= 60 s: {build_s:.1f} s; " if build_s else ""
        print(f"targets: {build}cold <= 3 s: {cold:.2f} s; "
              f"warm median <= 50 ms: {result['warm_recompute_ms_median']:.1f} ms")


if __name__ == "__main__":
    main()
