"""Live charts: the one renderer (chapter2.charts), the chart outputs of the calculators, and "your device".

The browser side (build-time SVG, redraw after an input, dark mode, 375 px,
axe) is tests/browser/test_charts_in_browser.py.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from chapter2 import activations as act
from chapter2 import calculators, charts, hardware, measure, moe, roofline
from chapter2.attention import attended_pairs

ROOT = Path(__file__).resolve().parents[1]
CHARTS = [(name, o) for name, calc in sorted(calculators.REGISTRY.items()) for o in calc.outputs if o.kind == "chart"]
SVG = "{http://www.w3.org/2000/svg}"


def _chart(name, key, raw=None):
    return calculators.compute(name, raw)[key]


def _html(name, key, raw=None):
    return json.loads(calculators.compute_json(name, json.dumps(raw or {})))["outputs"][key]


def _parse(fragment: str) -> ET.Element:
    return ET.fromstring(fragment.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def test_the_issue_s_charts_exist():
    names = {name for name, _ in CHARTS}
    assert {"activations", "sliding_window", "roofline", "kv_cache", "moe_coverage", "diffusion_pipeline", "few_step",
            "decode_batching", "device_roofline"} <= names


@pytest.mark.parametrize("name, output", CHARTS, ids=[f"{n}.{o.key}" for n, o in CHARTS])
def test_every_chart_is_well_formed_accessible_and_csp_friendly(name, output):
    data = _chart(name, output.key)
    charts.check(output.chart, data)
    json.dumps(data, allow_nan=False)  # plain JSON
    fragment = _html(name, output.key)
    assert fragment == calculators.render_chart(name, output, data)  # the browser's HTML is the build's
    root = _parse(fragment)
    assert root.tag == "figure" and root.get("data-digest") == charts.digest(data)
    svg = root.find(f"{SVG}svg")
    # a heatmap is a group of rows a reader can focus (each an img with its own label); the others are one img
    assert svg.get("role") == ("group" if output.chart.kind == "heatmap" else "img")
    title = svg.find(f"{SVG}title")
    desc = svg.find(f"{SVG}desc")
    assert svg.get("aria-labelledby") == title.get("id") and title.text == output.label
    assert svg.get("aria-describedby") == desc.get("id") and len(desc.text) > 60
    if output.chart.kind == "diagram":  # boxes and arrows: no axes, no legend; the description reads every box
        assert all(b["label"] in desc.text for b in data["boxes"])
        assert fragment == calculators.render_chart(name, output, data)
        return
    assert "style=" not in fragment and "<script" not in fragment.lower() and "javascript:" not in fragment
    if output.chart.kind == "canvas":  # a picture: every shape's text is drawn, the legend names each colour
        texts = "".join(t.text or "" for t in svg.iter(f"{SVG}text"))
        assert all(line in texts for s in data["shapes"] for line in s["text"].split("\n")) and desc.text == data["summary"]
        legend = root.find("ul")
        assert legend is not None and len(legend.findall("li")) == len(data["keys"]) >= 1
        assert set(re.findall(r'(?:stroke|fill)="(#[0-9a-f]{3,6})"', fragment)) <= set(charts.PALETTE) | {charts.INK}
        return
    x_label, y_label = output.chart.x_label, output.chart.y_label
    if output.chart.kind == "heatmap":  # each drawing may name its own axes
        x_label, y_label = data["x_label"] or x_label, data["y_label"] or y_label
    assert x_label in desc.text and y_label in desc.text
    assert "style=" not in fragment and "<script" not in fragment.lower() and "javascript:" not in fragment
    colours = set(re.findall(r'(?:stroke|fill)="(#[0-9a-f]{3,6})"', fragment))
    assert colours <= set(charts.PALETTE) | {charts.INK, "#fff"}, colours
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert x_label in labels and y_label in labels  # axis labels, with units
    legend = root.find("ul")
    if output.chart.kind == "grid":  # a grid's legend: what each colour means
        named = [k["label"] for k in data["keys"] if k["label"]]
        assert svg.find(f".//{SVG}circle").get("class") == "c2-chart__pt"  # the current step's marker
    elif output.chart.kind == "heatmap":  # what each colour means; the chosen row is outlined
        named = data["keys"]
        assert [g for g in svg.iter(f"{SVG}g") if "c2-hm__row--focus" in (g.get("class") or "")]
    else:
        named = [s["label"] for s in data["series"] if s["label"]] + [g["label"] for g in data.get("lanes", ())]
    if named or output.chart.kind in ("grid", "heatmap"):
        assert legend is not None and len(legend.findall("li")) >= len(named) >= 1
    else:  # an empty plot (a stepper's first step: nothing seen yet) says why on the plot itself
        assert not data["series"] and data["rules"] and all(r["label"] in labels for r in data["rules"])
    assert fragment == calculators.render_chart(name, output, data)  # deterministic


def test_the_figures_and_the_charts_share_one_palette():
    from chapter2.host.figures import _style

    assert _style.PALETTE is charts.PALETTE and _style.INK == charts.INK


def test_activation_charts_mark_x_and_follow_beta():
    out = calculators.compute("activations", {"x": "-1.3", "beta": "2.5"})
    values, slopes = out["values"], out["slopes"]
    grid = np.array(values["series"][0]["x"])
    swish = next(s for s in values["series"] if s["label"].startswith("Swish"))
    assert swish["label"] == "Swish, β = 2.5"
    assert swish["y"] == pytest.approx(act.swish(grid, 2.5), abs=1e-5)
    slope = next(s for s in slopes["series"] if s["label"].startswith("Swish"))
    assert slope["y"] == pytest.approx(act.swish_slope(grid, 2.5), abs=1e-5)
    assert [p["x"] for p in values["points"]] == [-1.3] * 5
    assert values["points"][3]["y"] == pytest.approx(float(act.gelu(-1.3)), rel=1e-5)
    assert slopes["points"][0]["y"] == 0.0  # ReLU's slope left of 0
    relu_slope = slopes["series"][0]
    assert relu_slope["y"][relu_slope["x"].index(-1e-9)] == 0 and relu_slope["y"][relu_slope["x"].index(1e-9)] == 1
    assert values["rules"] == [charts.rule("x", -1.3, "x = -1.3")]
    changed = calculators.compute("activations", {"x": "-1.3", "beta": "4"})["values"]
    assert charts.digest(changed) != charts.digest(values)


def test_sliding_window_chart_marks_n_and_w_with_the_exact_counts():
    data = _chart("sliding_window", "chart", {"n": "32768", "w": "4096"})
    full, window = data["series"]
    for x, y in zip(full["x"], full["y"], strict=True):
        assert y == pytest.approx(attended_pairs(int(x), causal=True), rel=1e-5)
    for x, y in zip(window["x"], window["y"], strict=True):
        assert y == pytest.approx(attended_pairs(int(x), window=4096), rel=1e-5)
    assert [(p["x"], p["y"]) for p in data["points"]] == [(32768, charts._r(attended_pairs(32768, causal=True))),
                                                          (32768, charts._r(attended_pairs(32768, window=4096)))]
    assert {r["at"] for r in data["rules"]} == {32768, 4096}
    ratio = [f / w for f, w in zip(full["y"], window["y"], strict=True)]  # the saving grows with length
    assert ratio == sorted(ratio) and ratio[0] == pytest.approx(1) and ratio[-1] > 30


def test_roofline_chart_puts_the_workloads_on_the_chosen_gpu():
    out = calculators.compute("roofline", {"gpu": "H200-SXM", "dtype": "fp8", "batch": "64"})
    data, bars = out["chart"], dict(out["intensity"])
    gpu = hardware.get_gpu("H200-SXM")
    assert data["rules"][0]["at"] == charts._r(gpu.ops_per_byte("fp8"))
    for p in data["points"]:
        label = p["label"].split(":")[0]
        assert p["x"] == pytest.approx(bars[label], rel=1e-3)
        assert p["y"] == pytest.approx(float(roofline.attainable_flops(p["x"], gpu, "fp8")), rel=1e-5)
    assert max(data["series"][0]["y"]) == gpu.peak_flops("fp8")


def test_decode_batching_chart_moves_its_point_with_the_slider():
    a, b = (_chart("decode_batching", "chart", {"batch": str(n)}) for n in (1, 300))
    assert a["points"][0]["x"] == 1 and b["points"][0]["x"] == 300
    assert b["points"][0]["y"] > a["points"][0]["y"]
    step, weights = b["series"]
    assert step["y"] == sorted(step["y"]) and weights["y"] == sorted(weights["y"])  # batching raises intensity
    assert b["rules"][0]["at"] == charts._r(hardware.get_gpu("H100-SXM").ops_per_byte("fp16"))


def test_kv_cache_chart_grows_with_context_beside_the_weights():
    out = calculators.compute("kv_cache", {"context": "65536", "batch": "4"})
    data, memory = out["chart"], dict(out["memory"])
    kv, weights, total = data["series"]
    assert weights["y"] == [charts._r(memory["weights"])] * len(weights["x"])
    assert kv["y"] == sorted(kv["y"]) and kv["y"][kv["x"].index(65536)] == pytest.approx(memory["KV cache"], rel=1e-5)
    assert data["points"][0] == charts.point(65536, memory["KV cache"], "KV cache at 65,536 tokens", color=0)
    assert "passes the weights at" in data["summary"]
    spec = calculators.get("kv_cache").outputs[-1].chart
    assert not spec.x_log and not spec.y_log  # linear growth drawn on linear axes
    # equal steps of context add equal bytes (Llama-3.1-8B: 128 KiB per token in BF16, x 4 sequences)
    steps = [b - a for a, b in zip(kv["y"], kv["y"][1:], strict=False)]
    xs = [b - a for a, b in zip(kv["x"], kv["x"][1:], strict=False)]
    assert all(dy == pytest.approx(dx * 4 * 131072 / 1e9, rel=1e-4) for dy, dx in zip(steps, xs, strict=True))
    assert charts.rule("y", 80, "H100-SXM memory: 80 GB") in data["rules"]  # NVIDIA's H100 SXM5: 80 GB of HBM3


def test_moe_chart_is_the_coverage_curve_with_t_marked():
    data = _chart("moe_coverage", "chart", {"n_tokens": "40"})
    (curve,) = data["series"]
    for t, share in zip(curve["x"], curve["y"], strict=True):
        assert share == pytest.approx(100 * moe.expected_experts_touched(128, 8, t) / 128, rel=1e-5)
    assert data["points"][0]["x"] == 40 and data["rules"][0]["at"] == 100 * 8 / 128
    # in the page's letters: B tokens in the batch (T is the sampling temperature), E_tok experts per token
    assert data["points"][0]["label"].startswith("B = 40: ") and "E_tok" in curve["label"] and "E_tok / E" in data["rules"][0]["label"]


def test_diffusion_charts_mark_the_guided_and_few_step_pipelines():
    out = calculators.compute("few_step")
    times = dict(out["times"])
    data = out["chart"]
    guided, unguided = data["series"]
    assert guided["label"].startswith("guidance on") and unguided["label"].startswith("guidance off")
    full, few = data["points"]
    assert (full["x"], few["x"]) == (50, 8)
    assert [full["y"], few["y"]] == pytest.approx(list(times.values()), rel=1e-3)
    pipeline = calculators.compute("diffusion_pipeline", {"steps": "30", "guidance": "off"})["chart"]
    assert pipeline["points"][0]["x"] == 30 and pipeline["points"][0]["color"] == 1  # on the unguided line


def test_axes_ticks_and_numbers():
    assert charts._nice_log(989.4e12 * 1.1, down=False) == 2e15 and charts._nice_log(0.7, down=True) == 0.5
    assert charts._log_ticks(0.1, 1e4) == [0.1, 1, 10, 100, 1000, 10000]
    assert charts._lin_ticks(-1, 6)[2] == [-2, 0, 2, 4, 6]
    assert [charts.tick_text(v) for v in (0, 1500, 1e12, 0.25, 1e-4)] == ["0", "1.5k", "1T", "0.25", "0.0001"]
    with pytest.raises(ValueError):
        charts.check(charts.ChartSpec("x", "y", y_log=True), charts.chart([charts.series("s", [1, 2], [0, 1])]))
    with pytest.raises(ValueError):
        charts.check(charts.ChartSpec("x", "y"), charts.chart([charts.series("s", [1, 2], [float("nan"), 1])]))
    with pytest.raises(TypeError):
        charts.check(charts.ChartSpec("x", "y"), {"series": []})
    with pytest.raises(ValueError):
        calculators.Output("c", "C", kind="chart")  # a chart output needs its ChartSpec


def test_every_series_kind_draws():
    spec = charts.ChartSpec("steps", "count", x_log=True)
    data = charts.chart([charts.series("line", [1, 10, 100], [1, 2, 3]),
                         charts.series("step", [1, 10, 100], [3, 1, 2], kind="step"),
                         charts.series("dots", [2, 20], [1, 2], kind="scatter"),
                         charts.series("bars", [1, 10, 100], [2, 3, 1], kind="bars")],
                        [charts.point(10, 2, "here", legend=True)], [charts.rule("x", 10, "ten"), charts.rule("y", 2)])
    root = _parse(charts.render(spec, data, uid="t", title="All kinds"))
    svg = root.find(f"{SVG}svg")
    assert len(svg.findall(f".//{SVG}rect")) == 3 + 1  # three bars + the clip rectangle
    assert any("H" in (p.get("d") or "") and "V" in p.get("d") for p in svg.iter(f"{SVG}path"))
    assert len(root.findall("ul/li")) == 5


# ------------------------------------------------------------------ your device


def test_measure_this_device_within_its_budget():
    # (how long it takes is timing, not correctness: scripts/bench_charts.py reports it)
    r = measure.measure(0.1)
    assert r.matmul_flops > 0 and r.copy_bytes_per_s > 0 and r.seconds > 0
    assert r.ops_per_byte == r.matmul_flops / r.copy_bytes_per_s
    assert 64 <= r.matmul_n <= measure.MAX_N and measure.COPY_BYTES[1] <= r.copy_array_bytes <= measure.COPY_BYTES[0]
    fields = measure.measure_fields(0.05)
    assert set(fields) == {"matmul_gflops", "copy_gb_s"} and all(v > 0 for v in fields.values())
    with pytest.raises(ValueError):
        measure.measure(0)


def test_device_roofline_places_a_measured_device_next_to_the_gpus():
    calc = calculators.get("device_roofline")
    assert calc.action.call == "chapter2.measure:measure_fields"
    module, fn = calc.action.call.split(":")
    assert set(getattr(sys.modules[module], fn)(0.05)) <= {f.name for f in calc.fields}  # it fills real fields
    empty = calculators.compute("device_roofline")
    assert "not measured" in empty["device"] and not empty["chart"]["points"]
    drawn = [s["label"].split(":")[0] for s in empty["chart"]["series"]]
    assert drawn == ["H20", "A100-SXM", "B200", "H100-SXM", "L40S"]  # a few, not all 15, by ops:byte: 37 to 419
    assert f"{len(drawn)} of the {len(hardware.GPUS)} catalog GPUs" in empty["chart"]["summary"]
    fields = measure.measure_fields(0.05)
    out = calculators.compute("device_roofline", {k: str(v) for k, v in fields.items()})
    ratio = fields["matmul_gflops"] / fields["copy_gb_s"]  # ops:byte = rate / bandwidth
    (point,) = out["chart"]["points"]
    assert point["x"] == charts._r(ratio) and point["y"] == charts._r(fields["matmul_gflops"] * 1e9)
    assert out["chart"]["series"][-1]["label"] == "this device (measured)"
    typed = calculators.compute("device_roofline", {"matmul_gflops": "3.2", "copy_gb_s": "8.5"})
    assert typed["ratio"].startswith("0.376 operations per byte = 3.2 GFLOP/s / 8.5 GB/s")  # 3.2 / 8.5 = 0.37647
    assert "ops:byte 295 vs 0.376" in typed["reference"]
    fp8 = calculators.compute("device_roofline", {"dtype": "fp8"})  # the A100 has no FP8 figure: left out
    assert {s["label"].split(":")[0] for s in fp8["chart"]["series"]} == {"H20", "H100-SXM", "B200", "L40S"}


# ------------------------------------------------------------------ the page and the browser hook


def test_build_renders_the_chart_and_the_browser_hook_is_wired():
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    page = directives.render_calculator("sliding_window")
    data = calculators.compute("sliding_window")["chart"]
    assert 'data-kind="chart"' in page and f'data-digest="{charts.digest(data)}"' in page and "<svg" in page
    device = directives.render_calculator("device_roofline")
    assert 'data-calc-action="chapter2.measure:measure_fields"' in device and 'type="button"' in device
    assets = ROOT / "docs" / "assets" / "chapter2"
    assert "window.chapter2Charts.update(dd, value)" in (assets / "runtime-core.js").read_text()
    assert "window.chapter2Charts = { update }" in (assets / "charts.js").read_text()
    # the loader every page carries (mkdocs.yml) loads charts.js before the core, on first use
    assert "assets/chapter2/runtime.js" in (ROOT / "mkdocs.yml").read_text()
    assert '["config.js", "charts.js", "hub.js", "runtime-core.js", "share.js"]' in (assets / "runtime.js").read_text()


def test_marks_outside_a_fixed_range_are_left_out():
    spec = charts.ChartSpec("x", "y", x_range=(0, 10), y_range=(0, 1))
    data = charts.chart([charts.series("s", [0, 20], [0, 2])], [charts.point(5, 0.5), charts.point(50, 0.5)],
                        [charts.rule("x", 50, "far"), charts.rule("x", 5, "near")])
    svg = charts.render(spec, data, uid="t", title="Clipped")
    assert svg.count("c2-chart__pt") == 1 and "near" in svg and ">far<" not in svg


# ------------------------------------------------------------------ 2.4's roofline to play with


def _notes(name, raw):
    """{first line of each label written beside a point: (its x, its y)} of the chart CPython draws."""
    data = _chart(name, "chart", raw)
    return {p["label"].split("\n")[0]: (p["x"], p["y"]) for p in data["points"] if p.get("note")}


def test_roofline_play_shades_both_regions_and_labels_the_ridge_and_the_points():
    gpu = hardware.get_gpu("H100-SXM")
    ridge = 989.4e12 / 3.35e12  # dense FP16 peak over HBM3 bandwidth, from NVIDIA's H100 datasheet
    data = _chart("roofline_play", "chart")
    memory, compute = data["bands"]
    assert (memory["label"], compute["label"]) == ("memory bound", "compute bound")
    assert memory["hi"] == compute["lo"] == pytest.approx(ridge, rel=1e-5) == pytest.approx(gpu.ops_per_byte("fp16"))
    assert data["rules"][0]["label"] == "ridge: 295 FLOP/B"
    spec = calculators.get("roofline_play").outputs[0].chart
    assert spec.x_log and spec.y_log and "FLOP per byte" in spec.x_label and "TFLOP/s" in spec.y_label
    svg = _parse(_html("roofline_play", "chart")).find(f"{SVG}svg")
    written = " ".join("".join(t.itertext()) for t in svg.iter(f"{SVG}text"))
    for label in ("memory bound", "compute bound", "ridge: 295 FLOP/B", "decode, batch 1", "prefill, 1,024 tokens"):
        assert label in written, label  # on the plot itself, not in a numbered key
    assert not re.search(r"\d\.\d{4}|e[+-]?\d", written), written  # numbers as people write them


def test_roofline_play_batch_moves_decode_towards_the_ridge_and_context_moves_prefill_past_it():
    ridge = hardware.get_gpu("H100-SXM").ops_per_byte("fp16")
    decode = [_notes("roofline_play", {"batch": str(k), "context": "6"})[f"decode, batch {2**k:,}"][0] for k in range(11)]
    assert decode == sorted(decode) and decode[0] < ridge / 100 and decode[-1] > ridge  # 64 tokens: it gets past
    # prefill of a prompt of P tokens reads the 8B model's weights once: about P FLOP per byte at 16 bits
    prefill = {k: _notes("roofline_play", {"context": str(k)})[f"prefill, {2**k:,} tokens"][0] for k in (4, 7, 10, 13)}
    assert prefill[4] < ridge < prefill[10] and list(prefill.values()) == sorted(prefill.values())
    assert prefill[10] == pytest.approx(2**10, rel=0.15)
    # a longer context pulls decode back: every sequence reads its own KV cache
    short, long = (_notes("roofline_play", {"batch": "8", "context": c})["decode, batch 256"][0] for c in ("8", "15"))
    assert long < short / 4
    h100, l4 = (_notes("roofline_play", {"gpu": g})["prefill, 1,024 tokens"][1] for g in ("H100-SXM", "L4"))
    assert h100 == pytest.approx(989.4, rel=1e-4) and l4 == pytest.approx(121, rel=1e-4)  # on each GPU's flat roof


def test_a_slider_over_named_positions_shows_the_position_s_name():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    import directives

    html = directives.render_calculator("roofline_play")
    assert 'aria-valuetext="1,024"' in html and "data-labels=" in html
    assert re.search(r'name="context" type="range" value="10" [^>]*data-labels="[^"]*">'
                     r'<output for="c2-roofline_play-context" data-field-value="context">1,024</output>', html)


def test_bands_and_notes_are_checked_and_drawn():
    spec = charts.ChartSpec("x", "y", x_log=True, y_log=True, x_range=(1, 100), y_range=(1, 100))
    with pytest.raises(ValueError):
        charts.band("x", 5, 2)
    with pytest.raises(ValueError):
        charts.check(spec, charts.chart([charts.series("s", [1, 2], [1, 2])], bands=[charts.band("x", 0, 2)]))
    data = charts.chart([charts.series("s", [1, 100], [1, 100])],
                        [charts.point(10, 10, "a\nfirst", note=True), charts.point(10, 10, "b\nsame place", note=True)],
                        bands=[charts.band("x", 1, 10, "left", color=0)])
    svg = _parse(charts.render(spec, data, uid="t", title="t")).find(f"{SVG}svg")
    notes = [t for t in svg.iter(f"{SVG}text") if t.get("class") == "c2-chart__note"]
    assert ["".join(t.itertext()) for t in notes] == ["afirst", "bsame place"]
    assert abs(float(notes[0].get("y")) - float(notes[1].get("y"))) >= charts.FONT * 2  # moved apart, not on top
    assert any(r.get("class") == "c2-chart__band" for r in svg.iter(f"{SVG}rect"))
    assert "Shaded: left, x from 1 to 10." in svg.find(f"{SVG}desc").text


# ------------------------------------------------------------------ bars: one renderer, numbers as pages write them


def test_bars_print_numbers_as_pages_do_and_go_logarithmic_across_decades():
    html = charts.render_bars([["ops:byte", 295.3], ["prefill", 3480.0], ["decode", 1.0], ["big", 5.369e8]])
    shown = re.findall(r'class="c2-bar__value">([^<]*)<', html)
    assert shown == ["295", "3,480", "1", "537 M"]  # no 295.3000, no 3.480e3, no 5.369e8
    assert 'data-scale="log"' in html and "log scale" in html
    lengths = [(float(v) - float(lo)) / (float(hi) - float(lo))
               for lo, hi, v in re.findall(r'<meter min="([^"]+)" max="([^"]+)" value="([^"]+)"', html)]
    # log10 from a tenth of the smallest (0.1) to the largest (5.369e8): 1 is 1/9.73 of the way, not 2e-9
    assert lengths[2] == pytest.approx(1 / (8.7299 + 1), rel=1e-3) and lengths[3] == pytest.approx(1)
    near = charts.render_bars([["a", 40.0], ["b", 100.0], ["c", 0.0]])
    assert 'data-scale="linear"' in near and "log scale" not in near
    assert re.findall(r'value="([^"]+)"></meter>', near) == ["40", "100", "0"]
    assert re.findall(r'data-value="([^"]+)"', near) == ["40", "100", "0"]
    with pytest.raises(ValueError):
        charts.render_bars([["a", -1.0]])


def test_every_bars_output_is_drawn_by_the_package_renderer():
    bars = [(name, o) for name, calc in sorted(calculators.REGISTRY.items()) for o in calc.outputs if o.kind == "bars"]
    assert len(bars) >= 8
    for name, o in bars:
        value = calculators.compute(name)[o.key]
        drawn = json.loads(calculators.compute_json(name, "{}"))["outputs"][o.key]
        assert drawn == charts.render_bars(value, shares=o.shares)  # the browser's bars are the build's
        for text in re.findall(r'c2-bar__value">([^<]*)<', drawn):  # (a part's share follows in a span of its own)
            assert re.fullmatch(r"\d{1,3}(,\d{3})*(\.\d+)?( [kMGTPE])?", text), (name, text)  # no e-notation
            if "." in text:  # a fraction: at most 3 significant digits (no 295.3000)
                assert len(text.split(" ")[0].replace(",", "").replace(".", "").lstrip("0")) <= 3, (name, text)
    runtime = (ROOT / "docs/assets/chapter2/runtime-core.js").read_text()
    assert "renderBars" not in runtime and "toFixed(4)" not in runtime  # no second bar renderer in the page



# ------------------------------------------------------------------ 2.2's block diagram


def test_the_block_diagram_shows_the_chosen_config_s_sizes():
    # Llama 3.1 8B's published config.json: 32 layers, 32 query heads and 8 K/V heads of 128, MLP 4,096 -> 14,336,
    # a vocabulary of 128,256; its KV cache per token and layer in BF16: 2 (K, V) x 8 x 128 x 2 bytes = 4,096 B
    data = _chart("model_diagram", "diagram")
    assert [r["label"] for r in data["repeat"]] == ["× 32 layers"]
    labels = [b["label"] for b in data["boxes"]]
    assert labels == ["Token embedding", "Norm", "Attention", "Norm", "Feed-forward (MLP)", "Final norm", "LM head"]
    text = " ".join(b["detail"] + " " + b["side"] for b in data["boxes"])
    for shown in ("Q: 32 heads of 128", "K, V: 8 heads, each shared by 4 query heads", "4,096 → 14,336 → 4,096",
                  "128,256 rows of 4,096", "4.1 kB per token and layer (BF16)"):
        assert shown in text, shown
    assert (data["repeat"][0]["start"], data["repeat"][0]["end"]) == (1, 5)  # norm, attention, norm, FFN repeat
    # DeepSeek-V3: 61 layers, 256 routed experts with 8 per token (3 dense layers first), MLA with a 512 latent
    v3 = _chart("model_diagram", "diagram", {"model": "DeepSeek-V3"})
    text = " ".join(b["detail"] for b in v3["boxes"])
    assert v3["repeat"][0]["label"] == "× 61 layers" and v3["boxes"][4]["label"] == "Mixture of experts"
    assert "picks 8 of 256 experts" in text and "3 of 61 layers have a dense MLP" in text and "512-number latent" in text
    html = _html("model_diagram", "diagram", {"model": "DeepSeek-V3"})
    svg = _parse(html).find(f"{SVG}svg")
    assert int(svg.get("font-size")) * 310 / charts.W >= 11  # 11 px or more on a 375 px phone
    assert max(float(r.get("x")) + float(r.get("width")) for r in svg.iter(f"{SVG}rect")) <= charts.W
    with pytest.raises(TypeError):
        charts.diagram([("a", "", 0)], repeat=(0, 2, "x 2"))
    with pytest.raises(TypeError, match="overlaps"):  # blocks in order and apart
        charts.diagram([("a", "", 0), ("b", "", 0), ("c", "", 0)], repeat=[(0, 2, "x 2"), (1, 3, "x 3")])
