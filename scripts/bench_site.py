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
    --warm-only        only the warm redraw of every calculator (below); no cold loads, no weights
    --next-page-only   only the next page's first result (below), --next-page-runs N pairs (default 3)

The next page's first result (`next_page`, issue 31's "Python once per visit"): Python made ready on 2.1 (a
changed input computed there), the reader clicks the footer's link to 2.2a and, as soon as that page is there,
changes the KV cache calculator's context; timed from the click to the page (swapped in, or loaded), from the
changed input to its live result in the DOM, and from the click to that result (and, apart, a second change of
the same input: the warm recompute, which shows how loaded the machine was). Two ways in the same run,
alternating pair by pair on one site: with instant navigation (Material swaps the page into the document that
keeps the worker and its Python), and with a full load, what every click did before (the same link clicked with
target="_self", which neither Material nor runtime.js takes: the browser loads the page and its scripts and
starts Python again, from its HTTP cache). The machine's load average is printed beside the figures.

Warm redraw of every calculator (`warm_redraw`): each page with calculators is open once per site (the
sites' tabs side by side), Python loaded; then each calculator's input (WARM_INPUTS) is changed
--runs times, alternating between the sites change by change, and timed from the input event to the
calculator's outputs in the DOM (`dom_ms`: its data-computed mark, seen by a MutationObserver) and to
the next frame after it (`frame_ms`: on screen). With two sites, the medians and their ratio
(second / first) are printed per calculator. `--stages` also times compute_json's stages inside
Pyodide (the page's own Python, in the snippets' worker), on the same inputs.
"""

from __future__ import annotations

import argparse
import json
import os
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


# per calculator: the input a reader moves, and values to cycle through (none is a default: a stepper's
# default inputs are drawn at build time and need no Python)
WARM_INPUTS = {
    "activations": ("x", ["-3.2", "0.7", "2.5", "4.1", "-0.4"]),
    "matmul_cost": ("m", ["2", "64", "512", "4096"]),
    "context_budget": ("input_tokens", ["1000", "20000", "35000"]),
    "kv_cache": ("context", ["1024", "65536", "200000", "8192"]),
    "prefill_decode": ("temperature", ["0.7", "1.2", "0.3"]),
    "request_timeline": ("output_tokens", ["128", "512", "1024"]),
    "llm_sampling": ("temperature", ["0.5", "1.3", "0.8"]),
    "tokenizer": ("text", ["The cache grows.", "Keys and values, one token per step.", "Attention is all."]),
    "model_config": ("context", ["4096", "32768", "65536"]),
    "model_diagram": ("model", ["Mistral-7B-v0.1", "DeepSeek-V2-Lite", "Llama-3.1-8B"]),
    "moe_coverage": ("n_tokens", ["1", "16", "256", "4096"]),
    "flash_stepper": ("seed", ["1", "2", "3"]),
    "sliding_window": ("w", ["512", "1024", "8192"]),
    "hybrid_cost": ("share", ["10", "40", "75"]),
    "roofline_play": ("batch", ["3", "6", "9"]),
    "ops_per_byte": ("gpu", ["A100-SXM", "H200-SXM", "B200"]),
    "device_roofline": ("matmul_gflops", ["5000", "20000", "80000"]),
    "roofline": ("batch", ["8", "64", "256"]),
    "decode_batching": ("batch", ["8", "64", "256"]),
    "diffusion_pipeline": ("steps", ["20", "30", "40"]),
    "denoiser_any": ("steps", ["10", "20", "30"]),
    "few_step": ("base_steps", ["20", "30", "40"]),
    "video_generation": ("frames", ["41", "121", "161"]),
}
CALC_PAGES = ["neural-networks/", "llm-inference/", "llm-architecture/", "attention/", "bottlenecks/", "image-generation/"]

CHANGE_JS = """async ([name, field, value]) => {
  const calc = document.querySelector(`[data-calculator="${name}"]`);
  const input = calc.querySelector(`form [name="${field}"]`);
  const before = +calc.dataset.computed || 0;
  let dom = null;
  const painted = new Promise((resolve) => {
    const seen = new MutationObserver(() => {
      if ((+calc.dataset.computed || 0) !== before) { dom = performance.now(); seen.disconnect(); resolve(); }
    });
    seen.observe(calc, {attributes: true, attributeFilter: ["data-computed"]});
  });
  const t0 = performance.now();
  input.value = value;
  input.dispatchEvent(new Event("input", {bubbles: true}));
  await painted;
  // on screen: the frame after the change (its rAF callbacks run before its style, layout and paint; a
  // message posted from one arrives once that frame is done)
  await new Promise((r) => requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = r;
    ch.port2.postMessage(0);
  }));
  const frame = performance.now();
  const message = calc.querySelector("[data-calc-message]");
  return {dom: dom - t0, frame: frame - t0, error: message && !message.hidden ? message.textContent : null};
}"""

# compute_json's stages inside Pyodide: what `compute` does (parse, run, check), then drawing and JSON
STAGES_PY = """
import json, time
from chapter2.calculators import _registry as R
from chapter2 import charts
def _stages(name, raw, n):
    calc = R.get(name)
    rows = []
    for _ in range(n):
        t = [time.perf_counter()]
        merged = {**calc.defaults(), **json.loads(raw)}
        args = {f.name: f.parse(merged[f.name]) for f in calc.fields}
        t.append(time.perf_counter())
        result = calc.fn(**args)
        t.append(time.perf_counter())
        for o in calc.outputs:
            R._check_output(name, o, result[o.key])
        t.append(time.perf_counter())
        out = {o.key: result[o.key] for o in calc.outputs}
        for o in calc.outputs:
            if o.kind == "chart":
                out[o.key] = R.render_chart(name, o, out[o.key])
            elif o.kind == "bars":
                out[o.key] = charts.render_bars(out[o.key])
        t.append(time.perf_counter())
        json.dumps({"ok": True, "outputs": out})
        t.append(time.perf_counter())
        t0 = time.perf_counter(); R.compute_json(name, raw); t.append(time.perf_counter() - t0)
        rows.append([1000 * (b - a) for a, b in zip(t[:5], t[1:6])] + [1000 * t[6]])
    rows = list(zip(*rows))
    med = lambda xs: sorted(xs)[len(xs) // 2]
    return dict(zip(["parse", "compute", "check", "draw", "json", "compute_json"], [round(med(r), 2) for r in rows]))
"""


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


NEXT_CLICK_JS = """(instant) => {
  const a = document.querySelector("a.md-footer__link--next");
  if (!instant) a.target = "_self";  // neither Material nor runtime.js takes it: a full load, as before
  a.click();
}"""


def next_page(browser, url, instant):
    """Python ready on `url` (2.1), then a click to the next page (2.2a) and a changed input there: seconds from
    the click to the page bound (runtime.js's data-c2-page), from the input to its result (data-computed), and
    from the click to that result; whether the document was kept (a `window` marker)."""
    ctx = browser.new_context()
    page = ctx.new_page()
    page.goto(url, wait_until="load")
    first_result(page)
    page.evaluate("() => { window.c2Kept = true; }")
    t0 = time.perf_counter()
    if instant:
        page.evaluate(NEXT_CLICK_JS, True)
    else:
        with page.expect_navigation(wait_until="load", timeout=120000):
            page.evaluate(NEXT_CLICK_JS, False)
    page.wait_for_function("() => document.documentElement.dataset.c2Page === '/llm-inference/'", timeout=120000)
    shown = time.perf_counter() - t0
    kept = page.evaluate("() => window.c2Kept === true")
    r = page.evaluate(CHANGE_JS, ["kv_cache", "context", "65536"])
    total = time.perf_counter() - t0
    again = page.evaluate(CHANGE_JS, ["kv_cache", "context", "8192"])  # the same calculator, warm: load aside
    ctx.close()
    for value, answer in (("65536", r), ("8192", again)):
        if answer["error"]:
            raise RuntimeError(f"kv_cache refused context={value}: {answer['error']}")
    return {"page_s": shown, "input_to_result_s": r["dom"] / 1000, "click_to_result_s": total, "kept": kept,
            "second_change_s": again["dom"] / 1000}


def print_next_page(site, runs, load):
    med = statistics.median
    print(f"next page's first result (2.1 -> 2.2a, kv_cache context changed), median of {len(runs[True])} pairs; {site}")
    print(f"  load average (1 min) {load[0]:.2f} before, {load[1]:.2f} after, on {os.cpu_count()} CPUs")
    print(f"  {'':<22}{'click -> page s':>16}{'input -> result s':>19}{'click -> result s':>19}"
          f"{'next change s':>15}  document kept")
    for instant in (False, True):
        rs = runs[instant]
        print(f"  {'instant navigation' if instant else 'full load (before)':<22}"
              f"{med(r['page_s'] for r in rs):>16.2f}{med(r['input_to_result_s'] for r in rs):>19.2f}"
              f"{med(r['click_to_result_s'] for r in rs):>19.2f}{med(r['second_change_s'] for r in rs):>15.3f}"
              f"  {all(r['kept'] for r in rs)}")
    off = med(r["input_to_result_s"] for r in runs[False])
    on = med(r["input_to_result_s"] for r in runs[True])
    print(f"  input -> result, full load / instant: {off / on:.1f}x (target with instant: about 0.5 s on a quiet machine)")


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


def warm_redraw(browser, urls, runs, stages):
    """Per site, per calculator: [(dom_ms, frame_ms)] over `runs` input changes, changes alternating between the
    sites; errors shown inline (a bad bench input) are collected; `stages` adds Pyodide stage timings."""
    results = {u: {} for u in urls}
    errors = []
    ctx = browser.new_context()
    for path in CALC_PAGES:
        pages = []
        for url in urls:  # one tab per site, Python loaded in both before any timing
            page = ctx.new_page()
            page.goto(url.replace("/neural-networks/", "/" + path), wait_until="load")
            pages.append(page)
        names = [n for n in pages[0].eval_on_selector_all("[data-calculator]", "els => els.map(e => e.dataset.calculator)")
                 if n in WARM_INPUTS]
        for name in names:
            field, values = WARM_INPUTS[name]
            for page in pages:  # the first change loads Python (and the calculator's module and data); two warm it
                page.bring_to_front()
                for v in values[:2]:
                    page.evaluate(CHANGE_JS, [name, field, v])
            for i in range(runs):
                for url, page in zip(urls, pages, strict=True):
                    page.bring_to_front()  # a background tab's frames are throttled
                    r = page.evaluate(CHANGE_JS, [name, field, values[i % len(values)]])
                    if r["error"]:
                        errors.append(f"{name} {field}={values[i % len(values)]}: {r['error']}")
                    results[url].setdefault(name, []).append((r["dom"], r["frame"]))
        if stages:
            for name in names:  # the sites alternate here too; each run() is a fresh namespace
                field, values = WARM_INPUTS[name]
                code = STAGES_PY + f"_stages({name!r}, {json.dumps(json.dumps({field: values[0]}))}, 15)"
                for url, page in zip(urls, pages, strict=True):
                    page.bring_to_front()
                    results[url].setdefault("_stages", {})[name] = page.evaluate("(c) => window.chapter2.run(c)", code)
        for page in pages:
            page.close()
    ctx.close()
    return results, errors


def print_warm(sites, urls, results, errors):
    """One line per calculator: median dom and frame ms per site, and the ratio of the last site to the first."""
    med = statistics.median
    names = list(results[urls[0]].keys() - {"_stages"})
    names.sort(key=lambda n: -med(f for _, f in results[urls[0]][n]))
    head = "".join(f"  {'site ' + str(i + 1) + ' dom/frame ms':>22}" for i in range(len(urls)))
    print(f"warm redraw, median of {len(results[urls[0]][names[0]])} changes per calculator")
    print("  sites: " + "; ".join(f"{i + 1} = {s}" for i, s in enumerate(sites)))
    print(f"{'calculator':<20}{head}" + ("   ratio dom / frame (last/first)" if len(urls) > 1 else ""))
    summary = {u: [] for u in urls}
    for name in names:
        cells, doms, frames = [], [], []
        for url in urls:
            runs = results[url][name]
            d, f = med(x for x, _ in runs), med(y for _, y in runs)
            cells.append(f"  {d:>10.1f} / {f:>9.1f}")
            doms.append(d)
            frames.append(f)
            summary[url].append((d, f))
        ratio = f"   {doms[-1] / doms[0]:.2f} / {frames[-1] / frames[0]:.2f}" if len(urls) > 1 else ""
        print(f"{name:<20}{''.join(cells)}{ratio}")
    for i, url in enumerate(urls):
        doms, frames = [d for d, _ in summary[url]], [f for _, f in summary[url]]
        print(f"site {i + 1}: over calculators, median of the medians: dom {med(doms):.1f} ms, frame {med(frames):.1f} "
              f"ms; worst: dom {max(doms):.1f} ms, frame {max(frames):.1f} ms (target: 20 ms)")
    for i, url in enumerate(urls):
        if "_stages" in results[url]:
            print(f"site {i + 1}: compute_json stages in Pyodide (median ms of 15 calls)")
            for name, st in sorted(results[url]["_stages"].items(), key=lambda kv: -kv[1]["compute_json"]):
                print(f"  {name:<20}" + " ".join(f"{k} {v:6.2f}" for k, v in st.items()))
    if errors:
        print("inputs refused (fix WARM_INPUTS):", *sorted(set(errors)), sep="\n  ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="warm recomputes")
    parser.add_argument("--cold-runs", type=int, default=1, help="cold loads (fresh browser context each); medians reported")
    parser.add_argument("--site", nargs="+", help="measure these already built sites (side by side, interleaved) instead of building")
    parser.add_argument("--warm-only", action="store_true", help="only the warm redraw of every calculator")
    parser.add_argument("--stages", action="store_true", help="also time compute_json's stages inside Pyodide")
    parser.add_argument("--next-page-only", action="store_true", help="only the next page's first result, instant vs full load")
    parser.add_argument("--next-page-runs", type=int, default=3, help="pairs (full load, instant) for the next page's first result")
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
                       env={"NO_MKDOCS_2_WARNING": "1", **os.environ})
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
        nexts = {}
        for site, url in zip(sites, urls, strict=True) if not args.warm_only else ():
            runs, load = {False: [], True: []}, [os.getloadavg()[0]]
            for _ in range(args.next_page_runs):  # alternating: the machine's load falls on both alike
                for instant in (False, True):
                    runs[instant].append(next_page(browser, url, instant))
            nexts[str(site)] = (runs, load + [os.getloadavg()[0]])
        if args.next_page_only:
            browser.close()
            for site, (runs, load) in nexts.items():
                print_next_page(site, runs, load)
            return
        warm, errors = warm_redraw(browser, urls, args.runs, args.stages)
        if args.warm_only:
            browser.close()
            print_warm([str(s) for s in sites], urls, warm, errors)
            return
        for _ in range(args.cold_runs):
            for site, url in zip(sites, urls, strict=True):  # interleaved: the machine's load falls on all alike
                samples[str(site)].append(cold_load(browser, url))
                steps[str(site)].append(stepper_first_step(browser, url.replace("/neural-networks/", "/llm-inference/")))
        for site, url in zip(sites, urls, strict=True):
            weights[str(site)] = page_weight(browser, url, args.runs)
        browser.close()
    for server in servers:
        server.shutdown()

    print_warm([str(s) for s in sites], urls, warm, errors)
    for site, (runs, load) in nexts.items():
        print_next_page(site, runs, load)
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
              f"warm median <= 20 ms (activations): {result['warm_recompute_ms_median']:.1f} ms")


if __name__ == "__main__":
    main()
