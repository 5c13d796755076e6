"""Committed benchmark results: provenance, roofline points from first principles, the measured-roofline figure.

Expected ops and bytes are recomputed here from the recorded shapes with the
chapter's formulas (section 2.4.2: standard attention moves 4N^2 + 4Nd
elements per head, FlashAttention 4Nd; QK^T and PV cost 2d FLOPs per
(query, key) pair each), independently of `chapter2.bench_results`.
"""

import copy
import datetime as dt
import json
import re
import statistics

import pytest

from chapter2 import bench_results as br
from chapter2 import roofline

COMMITTED = br.load_results()

# NVIDIA H200 SXM: 989.4 dense BF16 TFLOP/s (half the 1,979 sparse figure), 4.8 TB/s;
# https://www.nvidia.com/en-us/data-center/h200/
H200_BF16_FLOPS, H200_BANDWIDTH = 989.4e12, 4.8e12


def only(suite):
    (doc,) = [r for r in br.newest(COMMITTED) if r["suite"] == suite]
    return doc


def points_of(doc):
    return br.roofline_points([doc])


# -----------------------------------------------------------------------------
# the committed files


def test_committed_results_parse_and_carry_provenance():
    assert {r["suite"] for r in COMMITTED} >= {"cpu-attention", "cpu-tiny-lm"}
    for doc in COMMITTED:
        prov = doc["provenance"]
        date = dt.datetime.fromisoformat(prov["date"])
        assert date.tzinfo is not None  # UTC, as the harness writes it
        assert re.fullmatch(r"[0-9a-f]{40}", prov["git"]["commit"]) and isinstance(prov["git"]["dirty"], bool)
        assert prov["versions"]["numpy"] and prov["versions"]["chapter2"] and prov["python"]
        assert prov["device"]["kind"] and prov["device"]["name"]
        # the file is named <suite>-<device slug>-<UTC time of the run>.json
        stamp = date.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        assert doc["file"].startswith(doc["suite"] + "-") and doc["file"].endswith(f"-{stamp}.json")
        assert br.check_result(doc) is doc


def test_cpu_attention_points_are_ops_over_bytes_from_the_shapes():
    doc = only("cpu-attention")
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


def test_tiny_lm_decode_points_from_the_model_config():
    doc = only("cpu-tiny-lm")
    c = json.loads((br.TINY_LM_DIR / "config.json").read_text())
    h, v, inter, layers = c["hidden_size"], c["vocab_size"], c["intermediate_size"], c["num_hidden_layers"]
    n_q, n_kv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    # weights a token multiplies by: q, o (h x n_q hd), k, v (h x n_kv hd), SwiGLU (3 h inter), the tied LM head
    matmul = v * h + layers * (2 * h * n_q * hd + 2 * h * n_kv * hd + 3 * h * inter)

    def flops(context):  # 2 per weight, plus QK^T and PV over `context` keys
        return 2 * matmul + 4 * layers * n_q * hd * context

    points = points_of(doc)
    assert [p.kernel for p in points] == ["decode"] * len(doc["results"])
    for p, rec in zip(points, doc["results"]):
        n, steps = rec["prompt_tokens"], rec["decode_steps"]
        ops = statistics.fmean(flops(n + k) for k in range(1, steps + 1))  # cache holds n + k after step k
        assert p.intensity == pytest.approx(ops / rec["decode"]["bytes_per_step"], rel=1e-12)
        assert p.achieved_flops == pytest.approx(ops / rec["decode"]["median_s"], rel=1e-12)


def test_cpu_roofs_are_the_measured_matmul_rate_and_copy_bandwidth():
    attn, lm = only("cpu-attention"), only("cpu-tiny-lm")
    assert br.device_key(attn) == br.device_key(lm)  # one machine, named two ways by the two suites
    (panel,) = [p for p in br.rooflines() if p.device == br.device_key(attn)]
    (compute,), (memory,) = panel.compute_roofs, panel.memory_roofs
    assert compute.value == max(r["matmul"]["flops"] / r["matmul"]["min_s"] for r in attn["results"])
    # both roofs from the attention run itself (it measures its copy bandwidth beside the matmul rate)
    assert memory.value == attn["copy"]["large"]["bytes_moved"] / attn["copy"]["large"]["median_s"]
    assert compute.measured and memory.measured and (compute.source, memory.source) == (attn["file"], attn["file"])
    assert panel.dates == tuple(sorted({attn["provenance"]["date"][:10], lm["provenance"]["date"][:10]}))
    assert len(panel.points) == 2 * len(attn["results"]) + len(lm["results"])


def test_tiny_lm_run_of_another_model_is_refused():
    doc = copy.deepcopy(only("cpu-tiny-lm"))
    doc["config"]["parameters"] += 1
    with pytest.raises(ValueError, match="parameters"):
        br.roofline_points([doc])


# -----------------------------------------------------------------------------
# a GPU result, built here with times at twice the H200 roofline bound


def h200_lower_bound(flops, nbytes):
    return max(flops / H200_BF16_FLOPS, nbytes / H200_BANDWIDTH)


def synthetic_h200_result(date="2026-01-02T03:04:05+00:00"):
    """The layout `chapter2.bench.gpu` writes, for three of its device shapes, every kernel at half the roof."""
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
    # the measured copy: a made-up 4.3 TB/s (the order docs/DESIGN notes measured on an H200), below the catalog 4.8
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


def test_newest_run_per_device_and_suite_and_no_interpreter_runs():
    old, new = synthetic_h200_result("2026-01-01T00:00:00+00:00"), synthetic_h200_result("2026-02-01T00:00:00+00:00")
    interp = synthetic_h200_result("2026-03-01T00:00:00+00:00")
    interp["config"]["interpreter"], interp["provenance"]["device"] = True, {"kind": "cpu", "name": "cpu (Triton interpreter)"}
    assert br.newest([new, old, interp]) == [new]
    assert br.roofline_points([interp]) == []
    gpu_panel = br.rooflines([*COMMITTED, old, new])[0]  # GPUs first
    assert gpu_panel.name == "NVIDIA H200" and gpu_panel.dates == ("2026-02-01",) and gpu_panel.is_gpu


# -----------------------------------------------------------------------------
# the figure


def test_measured_roofline_figure_names_device_and_date():
    from chapter2.figures import alt_text, render_svg

    svg = render_svg("measured_roofline")
    alt = alt_text("measured_roofline")
    for panel in br.rooflines():
        assert panel.name in svg and panel.name in alt
        for date in panel.dates:
            assert date in svg and date in alt
        for p in panel.points:  # each point's numbers, read back from the alt text (3 significant figures)
            found = re.search(re.escape(p.label) + r": ([\d,.]+) operations per byte, ([\d,.]+) GFLOP/s", alt)
            intensity, rate = (float(x.replace(",", "")) for x in found.groups())
            assert intensity == pytest.approx(p.intensity, rel=5e-3)
            assert rate == pytest.approx(p.achieved_flops / 1e9, rel=5e-3)
    assert render_svg("measured_roofline") == svg  # deterministic: nothing from the clock


def test_figure_draws_a_gpu_panel_too():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chapter2.figures import measured

    panels = br.rooflines([*COMMITTED, synthetic_h200_result()])
    fig = measured.draw(panels)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    plt.close(fig)
    assert titles[0] == "NVIDIA H200, measured 2026-01-02" and len(titles) == len(panels) == 2
    assert "H200-SXM dense BF16 peak (catalog)" in measured._alt(panels)


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
