"""Committed benchmark results: provenance, roofline points from first principles, the measured-roofline figure.

Expected ops and bytes are recomputed here from the recorded shapes with the
chapter's formulas (section 2.4.2: standard attention moves 4N^2 + 4Nd
elements per head, FlashAttention 4Nd; QK^T and PV cost 2d FLOPs per
(query, key) pair each), independently of `chapter2.bench_results`.

Nothing here assumes how many runs, machines or devices are committed: every
test that reads the committed results also runs (fixture `results`) on a copy
of them in a temporary folder plus a second machine's runs (a GPU host: its
two CPU suites and an H200 gpu-attention run), as committing results from a
lent GPU machine will do.
"""

import copy
import datetime as dt
import json
import re
import shutil
import statistics

import pytest

from chapter2 import bench_results as br
from chapter2 import roofline

COMMITTED = br.load_results()
H200 = "cuda: NVIDIA H200"  # device_key of the synthetic H200 runs below

# NVIDIA H200 SXM: 989.4 dense BF16 TFLOP/s (half the 1,979 sparse figure), 4.8 TB/s;
# https://www.nvidia.com/en-us/data-center/h200/
H200_BF16_FLOPS, H200_BANDWIDTH = 989.4e12, 4.8e12


@pytest.fixture(scope="module", params=["committed", "with a second machine"])
def results(request, tmp_path_factory):
    """The committed results; then a copy of them plus a second machine's runs, loaded from a folder."""
    if request.param == "committed":
        return COMMITTED
    folder = tmp_path_factory.mktemp("bench")
    for path in br.list_result_files():
        shutil.copy(path, folder)
    added = write_second_machine(folder)
    loaded = br.load_results(folder)
    assert sorted(r["file"] for r in loaded) == sorted([*(r["file"] for r in COMMITTED), *added])
    return loaded


def of_suite(results, suite):
    """Every run of `suite` in `results` (one per file), whichever machines they came from."""
    return [r for r in results if r["suite"] == suite]


def without_h200(results):
    """`results` less any H200 runs, so that the synthetic H200 runs below are the only ones on that device."""
    return [r for r in results if br.device_key(r) != H200]


def points_of(doc):
    return br.roofline_points([doc])


# -----------------------------------------------------------------------------
# the committed files


def test_committed_results_parse_and_carry_provenance(results):
    assert {r["suite"] for r in results} >= {"cpu-attention", "cpu-tiny-lm"}
    assert len({r["file"] for r in results}) == len(results)
    for doc in results:
        prov = doc["provenance"]
        date = dt.datetime.fromisoformat(prov["date"])
        assert date.tzinfo is not None  # UTC, as the harness writes it
        assert re.fullmatch(r"[0-9a-f]{40}", prov["git"]["commit"]) and isinstance(prov["git"]["dirty"], bool)
        assert prov["versions"]["numpy"] and prov["versions"]["chapter2"] and prov["python"]
        assert prov["device"]["kind"] and prov["device"]["name"]
        # the file is named <suite>-<device slug>-<UTC time of the run>.json
        stamp = date.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        assert doc["file"].startswith(doc["suite"] + "-") and doc["file"].endswith(f"-{stamp}.json")
        assert br.check_result(doc) is doc


def test_cpu_attention_points_are_ops_over_bytes_from_the_shapes(results):
    assert of_suite(results, "cpu-attention")
    for doc in of_suite(results, "cpu-attention"):
        check_cpu_attention_points(doc)


def check_cpu_attention_points(doc):
    points = {(p.kernel, p.label): p for p in points_of(doc)}
    assert len(points) == 2 * len(doc["results"])
    for rec in doc["results"]:
        s = rec["shape"]
        b, h, n, d, causal = s["B"], s["H"], s["N"], s["d"], rec["causal"]
        pairs = n * (n + 1) // 2 if causal else n * n  # causal: query i sees i + 1 keys
        ops = 4 * d * b * h * pairs
        assert rec["flops"] == ops
        element = 4  # float32
        traffic = {"naive": b * h * (4 * n * n + 4 * n * d) * element, "flash": b * h * 4 * n * d * element}
        for kernel, name in (("naive", "naive attention"), ("flash", "tiled FlashAttention")):
            p = points[(kernel, f"{name}, N={n}{' causal' if causal else ''}")]
            assert p.intensity == pytest.approx(ops / traffic[kernel], rel=1e-12)
            assert p.achieved_flops == pytest.approx(ops / rec[kernel]["min_s"], rel=1e-12)
            assert p.date == doc["provenance"]["date"] and p.device == br.device_key(doc)


def test_tiny_lm_decode_points_from_the_model_config(results):
    assert of_suite(results, "cpu-tiny-lm")
    for doc in of_suite(results, "cpu-tiny-lm"):
        check_tiny_lm_points(doc)


def check_tiny_lm_points(doc):
    c = json.loads((br.TINY_LM_DIR / "config.json").read_text())
    h, v, inter, layers = c["hidden_size"], c["vocab_size"], c["intermediate_size"], c["num_hidden_layers"]
    n_q, n_kv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    # weights a token multiplies by: q, o (h x n_q hd), k, v (h x n_kv hd), SwiGLU (3 h inter), the tied LM head
    matmul = v * h + layers * (2 * h * n_q * hd + 2 * h * n_kv * hd + 3 * h * inter)

    def flops(context):  # 2 per weight, plus QK^T and PV over `context` keys
        return 2 * matmul + 4 * layers * n_q * hd * context

    points = points_of(doc)
    assert [p.kernel for p in points] == ["decode"] * len(doc["results"])
    for p, rec in zip(points, doc["results"], strict=True):
        n, steps = rec["prompt_tokens"], rec["decode_steps"]
        ops = statistics.fmean(flops(n + k) for k in range(1, steps + 1))  # cache holds n + k after step k
        assert p.intensity == pytest.approx(ops / rec["decode"]["bytes_per_step"], rel=1e-12)
        assert p.achieved_flops == pytest.approx(ops / rec["decode"]["median_s"], rel=1e-12)


def test_cpu_roofs_are_the_measured_matmul_rate_and_copy_bandwidth(results):
    cpu_panels = [p for p in br.rooflines(results) if not p.is_gpu]
    assert cpu_panels
    # the two suites name a CPU differently (core count, model name) but one machine is one panel
    assert any(len(p.files) == 2 for p in cpu_panels)
    for panel in cpu_panels:
        runs = [r for r in br.newest(results) if br.device_key(r) == panel.device]  # newest per suite, oldest first
        assert panel.files == tuple(r["file"] for r in runs)
        (attn,), lm = of_suite(runs, "cpu-attention"), of_suite(runs, "cpu-tiny-lm")
        (compute,), (memory,) = panel.compute_roofs, panel.memory_roofs
        assert compute.value == max(r["matmul"]["flops"] / r["matmul"]["min_s"] for r in attn["results"])
        # both roofs from the attention run itself (it measures its copy bandwidth beside the matmul rate)
        assert memory.value == attn["copy"]["large"]["bytes_moved"] / attn["copy"]["large"]["median_s"]
        assert compute.measured and memory.measured and (compute.source, memory.source) == (attn["file"], attn["file"])
        assert panel.dates == tuple(sorted({r["provenance"]["date"][:10] for r in runs}))
        assert len(panel.points) == 2 * len(attn["results"]) + sum(len(r["results"]) for r in lm)


def test_tiny_lm_run_of_another_model_is_refused():
    doc = copy.deepcopy(of_suite(COMMITTED, "cpu-tiny-lm")[-1])
    doc["config"]["parameters"] += 1
    with pytest.raises(ValueError, match="parameters"):
        br.roofline_points([doc])


# -----------------------------------------------------------------------------
# a GPU result, built here with times at twice the H200 roofline bound


def h200_lower_bound(flops, nbytes):
    return max(flops / H200_BF16_FLOPS, nbytes / H200_BANDWIDTH)


def synthetic_h200_result(date="2026-01-02T03:04:05+00:00"):
    """The layout `chapter2.host.bench.gpu` writes, for three of its device shapes, every kernel at half the roof."""
    element = 2  # bf16
    results = []
    b, h, n, d = 4, 16, 4096, 128
    for causal in (False, True):
        flops = 4 * b * h * d * (n * (n + 1) // 2 if causal else n * n)
        nbytes = 4 * b * h * n * d * element
        t = 2 * h200_lower_bound(flops, nbytes)
        results.append({"part": "attention", "case": f"N={n}", "shape": {"B": b, "H_q": h, "H_kv": h, "N": n, "d": d},
                        "causal": causal, "flops": flops, "bytes": nbytes,
                        "variants": [{"variant": "triton", "median_s": t, "min_s": t},
                                     {"variant": "sdpa_default", "median_s": t, "min_s": t},
                                     {"variant": "sdpa_cudnn", "error": "RuntimeError: no kernel"}], "ratios": {}})
    b, h_q, h_kv, s = 8, 32, 8, 32768
    # the measured copy: a made-up 4.3 TB/s, a plausible copy rate below the H200's catalog 4.8 TB/s
    cache = 2 * b * h_kv * s * d * element
    nbytes = cache + 2 * b * h_q * d * element
    t = 2 * h200_lower_bound(4 * b * h_q * d * s, nbytes)
    results.append({"part": "decode", "case": "B=8 S=32k", "shape": {"B": b, "H_q": h_q, "H_kv": h_kv, "S": s, "d": d},
                    "kv_cache_bytes": cache, "bytes": nbytes,
                    "copy": {"variant": "device_copy", "median_s": 2 * cache / 4.3e12, "min_s": 2 * cache / 4.3e12},
                    "variants": [{"variant": "triton_split", "median_s": t, "min_s": t}], "ratios": {}})
    b, h, n, w = 1, 16, 16384, 4096
    pairs = {"triton_causal": n * (n + 1) // 2, "triton_window": n * w - w * (w - 1) // 2}
    nbytes = 4 * b * h * n * d * element
    results.append({"part": "window", "case": "N=16k w=4k", "shape": {"B": b, "H": h, "N": n, "d": d}, "window": w,
                    "full_pairs": pairs["triton_causal"], "window_pairs": pairs["triton_window"],
                    "variants": [{"variant": name, "median_s": 2 * h200_lower_bound(4 * b * h * d * p, nbytes)}
                                 for name, p in pairs.items()]})
    return {
        "schema": br.SCHEMA, "suite": "gpu-attention", "file": "gpu-attention-nvidia-h200-synthetic.json",
        "provenance": {"date": date, "git": {"commit": "0" * 40, "dirty": False}, "python": "3.12.0",
                       "platform": "Linux", "versions": {"chapter2": "0.1.0", "numpy": "2.0.2", "torch": "2.11.0",
                                                         "triton": "3.6.0"},
                       "device": {"kind": "cuda", "name": "NVIDIA H200"}},
        "config": {"size": "device", "dtype": "bf16", "interpreter": False, "catalog": {"catalog_key": "H200-SXM"}},
        "results": results, "summary": {},
    }


def expected_ops_bytes(rec, element=2):
    """(ops, bytes) of a gpu-attention record, from its shape: 4 d H B pairs; Q, K, V (or the KV cache) read, O written."""
    s = rec["shape"]
    if rec["part"] == "attention":
        n, d = s["N"], s["d"]
        pairs = n * (n + 1) // 2 if rec["causal"] else n * n
        return 4 * d * s["B"] * s["H_q"] * pairs, 2 * s["B"] * (s["H_q"] + s["H_kv"]) * n * d * element
    if rec["part"] == "decode":
        return 4 * s["d"] * s["B"] * s["H_q"] * s["S"], 2 * s["B"] * (s["H_kv"] * s["S"] + s["H_q"]) * s["d"] * element
    n, w = s["N"], rec["window"]
    pairs = {"triton_causal": n * (n + 1) // 2, "triton_window": n * w - w * (w - 1) // 2}
    return {k: (4 * s["d"] * s["B"] * s["H"] * p, 4 * s["B"] * s["H"] * n * s["d"] * element) for k, p in pairs.items()}


def test_gpu_result_sits_under_the_h200_catalog_roof():
    doc = synthetic_h200_result()
    points = br.roofline_points([doc])
    expected = []
    for rec in doc["results"]:
        for v in rec["variants"]:
            if "error" not in v:
                want = expected_ops_bytes(rec)
                expected.append(want[v["variant"]] if isinstance(want, dict) else want)
    assert [(p.ops, p.bytes) for p in points] == expected
    assert all(p.intensity == p.ops / p.bytes for p in points)
    # 2 attention cases x 2 variants that ran, 1 decode kernel (the copy is a roof, not a point), 2 window kernels
    assert len(points) == 7 and "sdpa_cudnn" not in {p.kernel for p in points}
    for p in points:
        roof = roofline.attainable_flops(p.intensity, "H200-SXM", "bf16")
        assert p.achieved_flops == pytest.approx(roof / 2, rel=1e-9), p.label  # the times were 2x the bound
    decode = next(p for p in points if p.kernel == "triton_split")
    assert decode.intensity < roofline.get_gpu("H200-SXM").ops_per_byte("bf16")  # decode is memory bound
    roofs = br.device_roofs([doc])["cuda: NVIDIA H200"]
    assert [(r.kind, r.value, r.measured) for r in roofs] == [
        ("compute", H200_BF16_FLOPS, False), ("memory", H200_BANDWIDTH, False), ("memory", pytest.approx(4.3e12), True)]


def test_newest_run_per_device_and_suite_and_no_interpreter_runs(results):
    old, new = synthetic_h200_result("2026-01-01T00:00:00+00:00"), synthetic_h200_result("2026-02-01T00:00:00+00:00")
    interp = synthetic_h200_result("2026-03-01T00:00:00+00:00")
    interp["config"]["interpreter"], interp["provenance"]["device"] = True, {"kind": "cpu", "name": "cpu (Triton interpreter)"}
    assert br.newest([new, old, interp]) == [new]
    assert br.roofline_points([interp]) == []
    panels = br.rooflines([*without_h200(results), old, new])
    assert panels[0].is_gpu and [p.is_gpu for p in panels] == sorted((p.is_gpu for p in panels), reverse=True)  # GPUs first
    (gpu_panel,) = [p for p in panels if p.device == H200]
    assert gpu_panel.name == "NVIDIA H200" and gpu_panel.dates == ("2026-02-01",) and gpu_panel.files == (new["file"],)
    assert br.device_roofline("cuda", [old, new]) == gpu_panel


# -----------------------------------------------------------------------------
# the figure


def title(panel):
    return f"{panel.name}, measured {', '.join(panel.dates)}"


def check_alt_text(panels, alt):
    """One paragraph per panel, in order, naming its device and dates and quoting each drawn point's numbers."""
    parts = [part for part in re.split(r"(?=Log-log roofline of )", alt) if part.strip()]
    assert len(parts) == len(panels)
    for panel, part in zip(panels, parts, strict=True):
        assert part.startswith(f"Log-log roofline of {title(panel)}:")
        unit, div = ("TFLOP/s", 1e12) if panel.is_gpu else ("GFLOP/s", 1e9)
        drawn = [p for p in panel.points if not panel.is_gpu or p.kernel.startswith("triton")]  # a GPU: Triton only
        assert drawn
        for p in drawn:  # each point's numbers, read back from the alt text (3 significant figures)
            found = re.search(re.escape(p.label) + rf": ([\d,.]+) operations per byte, ([\d,.]+) {unit}", part)
            assert found, p.label
            intensity, rate = (float(x.replace(",", "")) for x in found.groups())
            assert intensity == pytest.approx(p.intensity, rel=5e-3)
            assert rate == pytest.approx(p.achieved_flops / div, rel=5e-3)


def test_measured_roofline_figure_names_device_and_date():
    from chapter2.host.figures import alt_text, render_svg

    svg = render_svg("measured_roofline")
    alt = alt_text("measured_roofline")
    panels = br.rooflines()
    for panel in panels:
        assert panel.name in svg and panel.name in alt
        for date in panel.dates:
            assert date in svg and date in alt
    check_alt_text(panels, alt)
    assert render_svg("measured_roofline") == svg  # deterministic: nothing from the clock


def test_figure_draws_every_device_and_a_gpu_panel_too(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chapter2.host.figures import measured

    for runs in (results, [*without_h200(results), synthetic_h200_result()]):
        panels = br.rooflines(runs)
        fig = measured.draw(panels)
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        plt.close(fig)
        assert titles == [title(p) for p in panels]
        check_alt_text(panels, measured._alt(panels))
    assert titles[0] == "NVIDIA H200, measured 2026-01-02"  # GPUs first
    assert "H200-SXM dense BF16 peak (catalog)" in measured._alt(panels)


def test_pages_find_a_cpu_panel(results):
    """docs/attention.md quotes `device_roofline("cpu")`: a CPU panel with both roofs, whatever else is committed."""
    panel = br.device_roofline("cpu", results)
    assert not panel.is_gpu and panel.compute_roofs and panel.memory_roofs and panel.dates
    assert any(p.kernel == "decode" for p in panel.points)


# -----------------------------------------------------------------------------
# a second machine's results, as committing the lent GPU machine's runs would add them


SECOND_CPU = {"kind": "cpu", "machine": "x86_64", "processor": None, "cpu_count": 16, "triton_interpret": None}
SECOND_PLATFORM = "Linux-5.15.0-122-generic-x86_64-with-glibc2.35"


def rescaled(value, speedup):
    """`value` with every time (keys ending in _s) divided by `speedup` and every rate (_per_s) multiplied."""
    if isinstance(value, dict):
        return {k: (v * speedup if k.endswith("per_s") else v / speedup if k.endswith("_s") else rescaled(v, speedup))
                if isinstance(v, float) else rescaled(v, speedup) for k, v in value.items()}
    if isinstance(value, list):
        return [rescaled(v, speedup) for v in value]
    return value


def second_machine_run(doc, date, name, speedup):
    """A committed CPU run as a 16-core GPU host would record it: its own device, date, platform and times."""
    run = rescaled({k: v for k, v in doc.items() if k != "file"}, speedup)
    prov = run["provenance"]
    prov.update(date=date, platform=SECOND_PLATFORM, python="3.12.3", device={**SECOND_CPU, "name": name})
    prov["versions"].update(torch="2.11.0+cu128", triton="3.6.0")
    if "model_dir" in run["config"]:
        run["config"]["model_dir"] = "/home/runner/chapter2/src/chapter2/data/tiny_lm"  # the shipped model, elsewhere
    return run


def write_second_machine(folder):
    """Write a second machine's three result files into `folder`, named as the harness names them; return the names."""
    stamp = lambda date: dt.datetime.fromisoformat(date).strftime("%Y%m%dT%H%M%SZ")  # noqa: E731
    attn = second_machine_run(of_suite(COMMITTED, "cpu-attention")[-1], "2026-12-01T10:00:00+00:00",
                              "CPU x86_64 (16 logical cores)", speedup=3.0)
    lm = second_machine_run(of_suite(COMMITTED, "cpu-tiny-lm")[-1], "2026-12-01T10:20:00+00:00",
                            "Intel(R) Xeon(R) Platinum 8468", speedup=2.5)
    gpu = {k: v for k, v in synthetic_h200_result("2026-12-01T10:40:00+00:00").items() if k != "file"}
    files = {f"cpu-attention-cpu-x86-64-16-logical-cores-{stamp(attn['provenance']['date'])}.json": attn,
             f"cpu-tiny-lm-intel-r-xeon-r-platinum-8468-{stamp(lm['provenance']['date'])}.json": lm,
             f"gpu-attention-nvidia-h200-{stamp(gpu['provenance']['date'])}.json": gpu}
    for name, doc in files.items():
        (folder / name).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return list(files)


def test_second_machine_is_a_device_of_its_own(results):
    panels = br.rooflines(results)
    devices = {br.device_key(r) for r in results}
    assert [p.device for p in panels] == sorted(devices, key=lambda k: (not k.startswith("cuda:"), k))
    for panel in panels:  # each panel holds its own device's points and roofs, from its own files
        assert {p.device for p in panel.points} == {panel.device}
        mine = {r["file"] for r in results if br.device_key(r) == panel.device}
        assert set(panel.files) <= mine and {r.source for r in panel.roofs if r.measured} <= mine
    if len(devices) > 1:  # the second machine's CPU is faster: its roofs are not the first machine's
        cpu = [p for p in panels if not p.is_gpu]
        assert len({p.compute_roofs[0].value for p in cpu}) == len(cpu)


# -----------------------------------------------------------------------------
# input checks


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(TypeError, match="folder"):
        br.load_results(3)
    with pytest.raises(ValueError, match="folder"):
        br.load_results(tmp_path / "missing")
    assert br.load_results(tmp_path) == []
    broken = synthetic_h200_result()
    del broken["provenance"]["git"]["commit"]
    (tmp_path / "gpu-attention-x.json").write_text(json.dumps(broken))
    with pytest.raises(ValueError, match=r"gpu-attention-x\.json: provenance\.git\.commit"):
        br.load_results(tmp_path)
    with pytest.raises(TypeError, match="results"):
        br.roofline_points(synthetic_h200_result())
    with pytest.raises(ValueError, match="suite"):
        br.roofline_points([{**synthetic_h200_result(), "suite": "gpu-matmul"}])
