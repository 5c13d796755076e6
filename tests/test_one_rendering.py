"""One rendering per number (issue 29, item 7): a named fact reads the same on the page, in a calculator's
default and live outputs, in its error messages and in a chart's labels and text alternative; no e-notation
anywhere a reader looks; plurals agree; "per layer" is said where a number is per layer; and the chart defects
a newcomer met are gone. Every expected number is worked out here by hand (or read from a config.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chapter2 import charts, pages
from chapter2 import format as fmt
from chapter2.calculators import compute, compute_json, get, render_chart

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "src" / "chapter2" / "data" / "configs"
LLAMA = json.loads((CONFIGS / "Llama-3.1-8B.json").read_text())
E_NOTATION = re.compile(r"\d(\.\d+)?[eE][+-]?\d")


def _chart_html(calc: str, key: str, value: dict) -> str:
    output = next(o for o in get(calc).outputs if o.key == key)
    return render_chart(calc, output, value)


def _desc(svg: str) -> str:
    return re.search(r"<desc[^>]*>(.*?)</desc>", svg, re.S).group(1)


# ------------------------------------------------------------------ no e-notation


@pytest.mark.parametrize("text", [
    fmt.number(1e9, 4), fmt.number(1.5e-7, 3), fmt.plain(2.5e-5), fmt.plain(123456789.0), fmt.sig(1e300),
    fmt.sig(-5.92e-9), fmt.duration(1e-11), fmt.duration(3.6e9), fmt.si(2.5e22, "FLOP"),
    charts.tick_text(1e-4), charts.tick_text(2.5e-7), charts.tick_text(1e21), charts.value_text(-5.92e-9),
    charts.value_text(3.2e-5), charts.value_text(1e20), charts.bar_text(1.2e-7),
])
def test_number_formatters_never_write_e_notation(text):
    assert not E_NOTATION.search(text), text
    assert len(text) < 24, f"unreadably long: {text}"


def test_an_input_out_of_range_is_refused_with_grouped_digits():
    """Tokens: at most 10,000,000 (1e7 in the field's declaration); the reader typed a billion."""
    out = json.loads(compute_json("matmul_cost", json.dumps({"m": "1000000000"})))
    assert out["message"] == "Tokens (rows of x): must be at most 10,000,000, got 1,000,000,000"
    small = json.loads(compute_json("ops_per_byte", json.dumps({"gpu": "custom", "custom_tflops": "0.0000001"})))
    assert not E_NOTATION.search(small["message"]) and "at least 0.001" in small["message"], small["message"]


def test_every_calculator_s_defaults_and_charts_are_free_of_e_notation():
    from chapter2.calculators import REGISTRY

    for name in REGISTRY:
        result = json.loads(compute_json(name, "{}"))
        assert result["ok"], name
        for key, value in result["outputs"].items():
            text = re.sub(r"<[^>]+>", " ", value)  # what a reader sees of a drawn chart or bars: its text
            found = E_NOTATION.search(text)
            assert not found, f"{name}.{key}: {found.group(0)} in ...{text[max(0, found.start() - 80):found.end() + 40]}"


# ------------------------------------------------------------------ 2.1


def test_the_matmul_calculator_shows_2_1_s_numbers_as_the_page_does():
    """Query projection, 4,096 x 4,096, FP16: 2kn / 2(k + kn + n) = 0.9995 for one token, 4096 / 3 = 1,365.3 for
    4,096 tokens; the page shows 1 and 1,365."""
    assert compute("matmul_cost")["intensity"] == pages.text("neural_networks.q_proj_decode_intensity") == "1"
    wide = compute("matmul_cost", {"m": "4096"})["intensity"]
    assert wide == pages.text("neural_networks.q_proj_prefill_intensity") == "1,365"


def test_the_activation_charts_share_their_x_axis_and_silu_shows_under_swish():
    out = compute("activations")  # beta = 1: Swish is SiLU
    swish = next(s for s in out["values"]["series"] if s["label"].startswith("Swish"))
    silu = next(s for s in out["values"]["series"] if s["label"] == "SiLU")
    assert swish["y"] == pytest.approx(silu["y"]) and swish.get("dash") and not silu.get("dash")
    frames = [re.search(r'<path d="M(\d+) \d+V\d+H(\d+)"', _chart_html("activations", k, out[k])).groups()
              for k in ("values", "slopes")]
    assert frames[0] == frames[1], f"the two plots' left and right edges differ: {frames}"


# ------------------------------------------------------------------ 2.4


def test_the_h100_s_ops_per_byte_reads_295_in_every_calculator():
    """989.4 TFLOP/s / 3.35 TB/s = 295.34: the page, the calculators and the charts all write 295."""
    assert pages.text("bottlenecks.h100_ops_per_byte") == "295"
    assert compute("ops_per_byte")["ratio"].startswith("295 operations per byte")
    roof = compute("roofline")
    assert "vs ops:byte 295 →" in roof["prefill"] and "vs ops:byte 295 →" in roof["decode"]
    assert "295.3" not in _chart_html("roofline", "chart", roof["chart"])
    play = compute("roofline_play")
    assert "295.3" not in _chart_html("roofline_play", "chart", play["chart"])
    image = compute("diffusion_pipeline")
    assert "ops:byte 295 →" in image["intensity"]


def test_decode_and_attention_intensities_read_as_the_page_writes_them():
    """Llama 3.1 8B decode, batch 1, 4,096 tokens: 1.104 ops/byte, shown 1.1; standard attention N = 4,096,
    d = 128: (4N²d + 3N²) / (8N² + 8Nd) = 62.42, shown 62.4."""
    assert pages.text("bottlenecks.llama_8b_decode_intensity") == "1.1"
    assert pages.text("bottlenecks.attention_intensity") == "62.4"
    batching = compute("decode_batching")
    assert batching["intensity"].startswith("1.1 ops/byte →")
    roof = compute("roofline")
    assert roof["decode"].startswith("1.1 ops/byte") and roof["attention"].startswith("standard 62.4 ops/byte")
    for calc, result in (("roofline", roof), ("decode_batching", batching)):
        desc = _desc(_chart_html(calc, "chart", result["chart"]))
        assert "1.104" not in desc and "62.42" not in desc and "3.697" not in desc, desc


def test_the_device_chart_draws_a_few_distinct_gpus_not_every_catalog_roof():
    data = compute("device_roofline")["chart"]
    assert 3 <= len(data["series"]) <= 5 and not any(s.get("dash") for s in data["series"])
    assert any(s["label"].startswith("H100-SXM") for s in data["series"])
    assert "catalog" in data["summary"]


# ------------------------------------------------------------------ 2.5


def test_the_sliding_window_ratio_reads_as_the_page_writes_it():
    """N = 32,768, w = 4,096: full N(N+1)/2 = 536,887,296 pairs; window w(w+1)/2 + (N - w)w = 125,831,168;
    ratio 4.2667, which the page's text and table write 4.27."""
    n, w = 32768, 4096
    full, window = n * (n + 1) // 2, w * (w + 1) // 2 + (n - w) * w
    assert (full, window) == (536_887_296, 125_831_168)
    assert pages.text("attention.window_saving_at_long_prompt") == "4.27"
    assert "| 32,768 | 537 M | 126 M | 4.27× |" in pages.text("attention.window_saving_table")
    out = compute("sliding_window")
    assert out["ratio"] == "4.27×"
    assert "4.27 times fewer" in out["chart"]["summary"] and "4.267" not in json.dumps(out)


def test_a_window_wider_than_the_prompt_is_no_saving_and_n_sits_on_its_curve():
    """w = 4,096 > N = 100: every query sees all earlier tokens, 100 · 101 / 2 = 5,050 scores either way."""
    out = compute("sliding_window", {"n": "100", "w": "4096"})
    assert "N w - w^2/2" not in out["window"] and "5.05 k" in out["window"]
    assert out["ratio"] == "1×"
    chart = out["chart"]
    for series in chart["series"]:
        assert 100 in series["x"], f"{series['label']}: N = 100 is off the drawn curve"
        assert series["y"][series["x"].index(100)] == 5050
    assert [p["y"] for p in chart["points"]] == [5050, 5050]


# ------------------------------------------------------------------ 2.2


def _pasted(**changes) -> str:
    return json.dumps({**LLAMA, **changes})


def test_one_query_head_per_kv_head_is_singular():
    out = compute("model_config", {"config_json": _pasted(num_key_value_heads=32)})
    assert "(1 query head per KV head)" in out["attention"], out["attention"]
    assert "(4 query heads per KV head)" in compute("model_config", {"model": "Llama-3.1-8B"})["attention"]


def test_the_block_diagram_says_its_kv_cache_is_per_layer():
    """Llama 3.1 8B: 2 (K, V) x 8 KV heads x 128 x 2 bytes = 4,096 bytes per token in each of 32 layers, 131,072
    in all."""
    svg = _chart_html("model_diagram", "diagram", compute("model_diagram")["diagram"])
    assert "4.1 kB per token and layer" in svg and "4.1 kB per token (BF16)" not in svg
    assert "131 kB per token over all layers" in svg


def test_parameter_bars_are_linear_with_each_part_s_share_printed():
    """Llama 3.1 8B: the feed-forward layers hold 3 x 4,096 x 14,336 x 32 = 5,637,144,576 of 8,030,261,248
    parameters (70.2 %, as the page says); the norms 4,096 x 65 = 266,240 (0.003 %): a bar too short to see, not
    a quarter of attention's as on a log scale."""
    out = compute("model_config", {"model": "Llama-3.1-8B"})
    html = charts.render_bars(out["bars"], shares=True)
    assert 'data-scale="linear"' in html and "log scale" not in html
    ffn = 3 * 4096 * 14336 * 32
    assert f"{100 * ffn / 8_030_261_248:.1f}" == "70.2"
    assert "(70.2 %)" in html and pages.text("llm_architecture.llama_8b_ffn_share") == "70.2 %", html
    assert next(o for o in get("model_config").outputs if o.key == "bars").shares


def test_a_moe_model_is_not_said_to_run_every_part_for_every_token():
    out = compute("model_config", {"model": "Qwen3-235B-A22B"})
    assert "every part runs for every token" not in out["when"]
    assert "8 of 128 experts" in out["when"], out["when"]


def test_the_kv_cache_ratio_is_written_as_a_multiple():
    """Llama 3.1 8B, 32,768 tokens, BF16: 32,768 x 131,072 bytes = 4.29 GB over 16.06 GB of weights = 0.267."""
    assert compute("kv_cache")["ratio"] == "0.267×"


# ------------------------------------------------------------------ 2.3 and every chart: labels that fit


def test_an_axis_label_too_long_for_the_plot_is_refused():
    """W = 320 units at 13-unit text: a 57-character x label ("…or frames of a c") was cut at a phone's width."""
    with pytest.raises(ValueError, match="x_label"):
        charts.ChartSpec("size: side of a square image (pixels), or frames of a clip", "time (s)")
    with pytest.raises(ValueError, match="y_label"):
        charts.ChartSpec("x", "attention share of a pass's FLOPs (%), and more words", height=200)


# ------------------------------------------------------------------ labels clear of lines and points


def _texts(svg: str) -> list[tuple[float, float, str, str]]:
    """(x, y of the first baseline, anchor, text) of each label in the plot (tick labels and axis titles left out)."""
    out = []
    for m in re.finditer(r'<text ([^>]*)>(.*?)</text>', svg, re.S):
        attrs, body = m.group(1), m.group(2)
        if "transform" in attrs or "dy=\"0.35em\"" in attrs:
            continue
        y = float(re.search(r'\by="([-\d.]+)"', attrs).group(1))
        x = re.search(r'\bx="([-\d.]+)"', attrs) or re.search(r'<tspan x="([-\d.]+)"', body)
        anchor = re.search(r'text-anchor="(\w+)"', attrs)
        out.append((float(x.group(1)), y, anchor.group(1) if anchor else "start", re.sub(r"<[^>]+>", "", body)))
    return out


def _box(x, y, anchor, text):
    width = 0.56 * charts.FONT * len(text)
    left = x if anchor == "start" else x - width if anchor == "end" else x - width / 2
    return left, y - charts.FONT * 0.75, left + width, y + charts.FONT * 0.2


def test_roofline_point_labels_keep_off_every_point_at_a_large_batch():
    out = compute("roofline_play", {"batch": "10"})  # 1,024 sequences: decode sits near the ridge
    svg = _chart_html("roofline_play", "chart", out["chart"])
    dots = [(float(a), float(b)) for a, b in re.findall(r'class="c2-chart__pt" cx="([-\d.]+)" cy="([-\d.]+)"', svg)]
    notes = re.findall(r'<text class="c2-chart__note" y="([-\d.]+)" text-anchor="(\w+)"[^>]*>(.*?)</text>', svg, re.S)
    assert notes and dots
    for y, anchor, body in notes:
        lines = re.findall(r'<tspan x="([-\d.]+)" dy="([-\d.]+)">(.*?)</tspan>', body)
        baseline = float(y)
        for x, dy, text in lines:
            baseline += float(dy)
            x0, y0, x1, y1 = _box(float(x), baseline, anchor, text)
            for cx, cy in dots:
                assert not (x0 - 5 < cx < x1 + 5 and y0 - 5 < cy < y1 + 5), f"{text!r} covers the point at {cx}, {cy}"


def test_a_rule_s_label_keeps_off_the_lines_it_would_cover():
    """KV cache at 1,000,000 tokens: the context line's label sat on the weights line at the bottom."""
    out = compute("kv_cache", {"context": "1000000"})
    svg = _chart_html("kv_cache", "chart", out["chart"])
    label = next(t for t in _texts(svg) if t[3] == "1,000,000 tokens")
    x0, y0, x1, y1 = _box(*label)
    weights = re.findall(r'<path d="M([-\d.]+) ([-\d.]+)(?:L[-\d. ]+)*" stroke="#8a8f98" stroke-width="2"', svg)
    assert weights, "the weights line (drawn in the ink colour)"
    wy = float(weights[0][1])
    assert not (y0 - 2 < wy < y1 + 2), f"the label spans y {y0:.0f} to {y1:.0f}, the weights line is at {wy:.0f}"


def test_a_denoiser_pass_s_flops_read_the_same_on_2_3_2_4_and_in_the_calculator():
    """issue 32 item 5: one Qwen-Image pass at 1328 x 1328 (6,889 latent tokens) read 130 TFLOP in 2.3's pipelines
    table and 135 TFLOP in 2.4's denoiser table and the denoiser calculator. One rendering: three significant digits,
    as the format rule writes FLOPs everywhere else (FLUX.1-dev's 74.4 TFLOP at 4,096 tokens likewise)."""
    def cells(name: str, model: str) -> list[str]:
        table = pages.text(name)
        row = next(line for line in table.splitlines() if line.startswith(f"| {model} |"))
        return [c.strip() for c in row.strip("|").split("|")]

    for model, flops in (("Qwen-Image", "135 TFLOP"), ("FLUX.1-dev", "74.4 TFLOP")):
        assert flops in cells("image_generation.pipelines_table", model), model
        assert flops in cells("bottlenecks.denoiser_pass_table", model), model
    assert compute("denoiser_any")["pass_flops"].startswith("135 TFLOP ")
