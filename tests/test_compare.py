"""A beside B: the calculators that compare two choices (calculators/_compare.py).

The default pairs are worked by hand here: two models' parameter counts and KV caches from their config.json
files, and two GPUs' times from their datasheet peaks and bandwidths. The table's texts must be the numbers as the
single view writes them, and every ratio follows one rule: B / A to 3 significant digits, with "×".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chapter2 import calculators
from chapter2.calculators import _compare
from chapter2.models import CONFIG_DIR

COMPARING = sorted(name for name, calc in calculators.REGISTRY.items() if calc.compare)


def _rows(result) -> dict:
    return {label: (a, b, ratio) for label, a, b, ratio in result.rows}


def _dense_params(cfg: dict) -> int:
    """A Llama-style dense decoder counted from its config.json: embedding, per layer q/k/v/o, a gated MLP (3
    matrices), two RMSNorms (and Qwen3's q/k norms of head_dim each), the final norm, an untied LM head."""
    h, layers, vocab = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"]
    d = cfg.get("head_dim", h // cfg["num_attention_heads"])
    q, kv = cfg["num_attention_heads"] * d, cfg["num_key_value_heads"] * d
    attention = h * q + 2 * h * kv + q * h
    qk_norms = 2 * d if cfg["model_type"] == "qwen3" else 0
    per_layer = attention + qk_norms + 3 * h * cfg["intermediate_size"] + 2 * h
    assert cfg["tie_word_embeddings"] is False
    return vocab * h + layers * per_layer + h + vocab * h


def _config(name: str) -> dict:
    return json.loads((CONFIG_DIR / f"{name}.json").read_text())


def test_the_comparing_calculators_are_the_ones_the_issue_names():
    assert COMPARING == ["denoiser_any", "diffusion_pipeline", "model_config", "roofline", "video_generation"]


def test_two_models_parameter_counts_and_caches_worked_by_hand():
    llama, qwen = _config("Llama-3.1-8B"), _config("Qwen3-8B")
    a, b = _dense_params(llama), _dense_params(qwen)
    assert (a, b) == (8_030_261_248, 8_190_735_360)  # Llama 3.1 8B's published count; Qwen3-8B's "8.2B"
    rows = _rows(calculators.compare("model_config"))
    assert rows["Model (config.json)"] == ("Llama-3.1-8B", "Qwen3-8B", "")
    assert rows["Parameters"] == ("8.03B", "8.19B", "1.02×")  # 8,190,735,360 / 8,030,261,248 = 1.01998
    assert rows["Layers"] == ("32", "36", "1.12×")  # 36 / 32 = 1.125, to 3 digits as the site rounds: 1.12
    # K and V, per layer and KV head, 128 values each, 2 bytes: 2 x 32 x 8 x 128 x 2 and 2 x 36 x 8 x 128 x 2
    kv_a, kv_b = 2 * 32 * 8 * 128 * 2, 2 * 36 * 8 * 128 * 2
    assert (kv_a, kv_b) == (131_072, 147_456)
    assert rows["KV cache per token (BF16)"] == ("131 kB", "147 kB", "1.12×")
    # the cache of one 131,072-token sequence: 17.2 GB and 19.3 GB
    assert rows["One sequence's BF16 cache at this context"] == ("17.2 GB", "19.3 GB", "1.12×")
    assert 131_072 * kv_a == 17_179_869_184 and 131_072 * kv_b == 19_327_352_832


def test_two_gpus_times_worked_from_their_datasheets():
    """Llama 3.1 8B in FP16 on an H100 SXM (989.4 dense TFLOP/s, 3.35 TB/s) and a B200 (2,250, 7.7): prefill of
    4,096 tokens is compute bound on both (same FLOPs), a decode step at batch 1 memory bound (same bytes)."""
    rows = _rows(calculators.compare("roofline"))
    assert rows["GPU"] == ("NVIDIA H100 SXM5 80GB", "NVIDIA B200 (HGX B200, per GPU)", "")
    assert rows["Prefill bound"] == ("compute", "compute", "") and rows["Decode bound"] == ("memory", "memory", "")
    assert rows["Time to first token"][2] == "0.44×"  # 989.4 / 2,250 = 0.4397
    assert rows["Time per output token"][2] == "0.435×"  # 3.35 / 7.7 = 0.4351
    assert rows["Tokens/s for the batch"][2] == "2.3×"  # 7.7 / 3.35 = 2.299
    assert rows["Prefill intensity"][2] == rows["Decode intensity"][2] == "1×"  # the same model and formats
    assert rows["The GPU's ops:byte"] == ("295", "292", "0.989×")  # 989.4 / 3.35 = 295.3; 2,250 / 7.7 = 292.2


def test_the_ratio_rule():
    from chapter2.format import SI, Int, Text

    assert _compare.ratio_text(Int(4), Int(2)) == "0.5×"
    assert _compare.ratio_text(Int(3), Int(1000)) == "333×"
    assert _compare.ratio_text(SI(7.0, "B"), SI(7.0, "B")) == "1×"
    assert _compare.ratio_text(Int(0), Int(5)) == "—"  # no ratio to a zero
    assert _compare.ratio_text(Text("memory"), Text("compute")) == ""
    assert _compare.ratio_text(Int(1), Int(10**20)) == "10²⁰×"  # never e-notation


@pytest.mark.parametrize("name", COMPARING)
def test_the_table_writes_each_number_as_the_single_view_does(name):
    """Each compared number of A and of B is written, letter for letter, in that side's own outputs (the
    calculator computed alone for B's inputs), and its ratio is B's exact value over A's by the one rule."""
    calc = calculators.get(name)
    raw = {**calc.defaults(), "compare": "on"}
    result = calculators.compare(name, raw)
    raw_b = _compare.side_b(calc, raw)
    assert result.a == calculators.compute(name, raw) and result.b == calculators.compute(name, raw_b)
    quantities = [calculators.evaluate(name, r)["compared"] for r in (raw, raw_b)]
    for (label, a, b, ratio), (_, qa), (_, qb) in zip(result.rows[result.inputs:], *quantities, strict=True):
        for side, text in ((result.a, a), (result.b, b)):
            written = " ".join(v for v in side.values() if isinstance(v, str))
            assert re.search(rf"(^|[^\d.,]){re.escape(text)}($|[^\d])", written), (name, label, text)
        if isinstance(qa.value, str):  # words: no ratio
            assert ratio == "", (name, label)
        elif qa.value == 0:
            assert ratio == "—", (name, label)
        else:  # B's exact value over A's, to 3 significant digits
            assert ratio.endswith("×") and float(ratio[:-1].replace(",", "")) == pytest.approx(qb.value / qa.value,
                                                                                               rel=5e-3), (name, label)
    assert result.inputs >= 1, f"{name}: B's defaults differ from A's in at least one input"


def test_fields_of_b_are_ordinary_fields_with_a_suffix():
    calc = calculators.get("roofline")
    names = [f.name for f in calc.fields]
    assert names[names.index("compare"):] == ["compare", "model_b", "model_id_b", "config_json_b", "gpu_b", "custom_tflops_b",
                                              "custom_tb_s_b", "dtype_b", "weight_dtype_b", "kv_dtype_b"]
    by = {f.name: f for f in calc.fields}
    assert by["gpu_b"].show_when == ("compare", "on") and by["gpu_b"].label == "B: GPU"
    assert by["custom_tflops_b"].show_when == ("gpu_b", "custom")  # tied to B's GPU, which the toggle shows
    assert by["model_b"].paste == "config_json_b" and by["config_json_b"].show_when == ("compare", "on")
    assert calc.compare["gpu"] == "gpu_b" and "compare" not in {f.name for f in calc.own}
    # B's custom numbers apply only while the comparison is on and B's GPU is custom
    on = {**calc.defaults(), "compare": "on", "gpu_b": "custom"}
    assert calc.applies(by["custom_tflops_b"], on)
    assert not calc.applies(by["custom_tflops_b"], {**on, "compare": "off"})
    assert not calc.applies(by["custom_tflops_b"], {**on, "gpu_b": "B200"})


def _answer(name, **raw):
    return json.loads(calculators.compute_json(name, json.dumps(raw)))


def test_one_request_answers_both_and_the_toggle_off_ignores_b():
    on, alone = _answer("roofline", compare="on"), _answer("roofline")
    assert on["ok"] and set(on) == {"ok", "outputs", "inputs", "numbers", "script", "compare"}
    assert on["outputs"] == alone["outputs"] and on["numbers"] == alone["numbers"]  # A's, as without the comparison
    assert on["script"] == alone["script"]  # copy as Python reproduces A
    assert on["inputs"] == alone["inputs"]  # A's inputs; B's beside them, with B's numbers
    assert on["compare"]["inputs"] == {**alone["inputs"], "gpu": "B200"} and on["compare"]["numbers"]["gpu"] == "B200"
    assert on["compare"]["rows"] == [list(r) for r in calculators.compare("roofline").rows]
    html = on["compare"]["html"]
    assert "<th scope=\"col\">B / A</th>" in html and html.count("<figure") == 2  # A's chart and B's
    assert 'id="c2-chart-roofline-chart-a-t"' in html and 'id="c2-chart-roofline-chart-b-t"' in html  # ids apart
    off = _answer("roofline", compare="off", gpu_b="nonsense", custom_tflops_b="-5")
    assert off["ok"] and "compare" not in off  # B's fields are not inputs while the toggle is off
    bad = _answer("roofline", compare="maybe")
    assert bad == {"ok": False, "field": "compare", "message": "Compare two choices: choose one of off, on"}


def test_a_bad_b_input_is_b_s_inline_message():
    bad = _answer("roofline", compare="on", gpu_b="nonsense")
    assert bad["ok"] is False and bad["field"] == "gpu_b" and bad["message"].startswith("B: GPU: choose one of ")
    bad = _answer("diffusion_pipeline", compare="on", gpu_b="custom", custom_tflops_b="abc")
    assert bad == {"ok": False, "field": "custom_tflops_b",
                   "message": "B: Custom GPU: dense TFLOP/s: 'abc' is not a number"}
    bad = _answer("model_config", compare="on", config_json_b="{not json")
    assert bad["ok"] is False and bad["field"] == "config_json_b" and bad["message"].startswith("B: config.json: ")
    bad = _answer("model_config", compare="on", config_json_b='{"architectures": ["FalconForCausalLM"]}')
    assert bad["field"] == "config_json_b" and bad["link"]["text"] == "the list"  # the families' link comes along
    bad = _answer("denoiser_any", compare="on", pipeline="Wan2.1-T2V-1.3B", pipeline_b="Qwen-Image", frames="5")
    assert bad["ok"] is False and bad["field"] == "frames" and bad["message"].startswith("B: ")  # a shared field
    a_bad = _answer("roofline", compare="on", gpu="nonsense")
    assert a_bad["field"] == "gpu" and a_bad["message"].startswith("GPU: choose one of ")  # A's, said as A's


def test_b_takes_a_pasted_config():
    pasted = (CONFIG_DIR / "Mistral-7B-v0.1.json").read_text()
    result = calculators.compare("model_config", {"config_json_b": pasted, "model_b": "pasted"})
    rows = _rows(result)
    assert rows["Model (config.json)"] == ("Llama-3.1-8B", "pasted config.json", "")
    assert rows["Parameters"][1] == "7.24B"  # Mistral 7B: 7,241,732,096


def test_registration_refuses_a_comparison_it_cannot_make():
    field = calculators.Field("gpu", "GPU", "a", kind="select", options=(("a", "A"), ("b", "B")))
    with pytest.raises(ValueError, match="compare names no field"):
        calculators.calculator("bad_compare_1", title="t", outputs=[], fields=[field], compare={"model": "x"})(
            lambda gpu: {})
    with pytest.raises(ValueError, match="B's default for 'gpu'"):
        calculators.calculator("bad_compare_2", title="t", outputs=[], fields=[field], compare={"gpu": "c"})(
            lambda gpu: {})
    assert "bad_compare_1" not in calculators.REGISTRY and "bad_compare_2" not in calculators.REGISTRY


def test_build_renders_the_default_comparison_hidden():
    """The page holds the default comparison, inert until the toggle is on, with the inputs it is for."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "hooks"))
    import directives

    html = directives.render_calculator("model_config")
    assert '<div class="c2-compare" data-compare-panel hidden></div>' in html  # empty until the toggle is on
    panel = re.search(r'<template data-compare-built data-inputs="([^"]*)">(.*?)</template>', html, re.S)
    assert panel, "the default comparison, in a template"
    inputs = json.loads(directives.html.unescape(panel.group(1)))
    assert inputs == {"model": "Llama-3.1-8B", "model_id": "", "config_json": "", "context": "131072",
                      "compare": "on", "model_b": "Qwen3-8B", "model_id_b": "", "config_json_b": ""}
    assert "<td>8.03B</td><td>8.19B</td><td class=\"c2-compare__ratio\">1.02×</td>" in panel.group(2)
    # the table alone: both sides' drawings come with the browser's answer (the page's weight)
    assert "<svg" not in panel.group(2) and "data-compare-later" in panel.group(2)
    assert "data-compare-later" not in directives.render_calculator("video_generation")  # (it draws nothing)
    b_field = re.search(r'<div class="c2-calc__field[^"]*"([^>]*)><label for="c2-model_config-model_b"', html)
    assert b_field.group(1) == ' data-show-field="compare" data-show-value="on" hidden'


def test_a_chart_s_two_drawings_share_their_axes():
    """An H100 in FP16 beside a B200 in FP8: alone, their rooflines top out on different y axes; side by side
    both drawings take the axes that hold both (charts.shared), so the same height means the same TFLOP/s."""
    def y_ticks(figure: str) -> list[str]:
        return re.findall(r'dy="0.35em" text-anchor="end">([^<]+)</text>', figure)

    alone = [y_ticks(_answer("roofline", **raw)["outputs"]["chart"]) for raw in ({}, {"gpu": "B200", "dtype": "fp8"})]
    assert alone[0] != alone[1]  # (ticks from the bottom up: 1T to 1P, and 10T to 1P)
    html = _answer("roofline", compare="on", dtype_b="fp8")["compare"]["html"]
    figures = re.findall(r'<figure class="c2-chart".*?</figure>', html, re.S)
    assert len(figures) == 2 and y_ticks(figures[0]) == y_ticks(figures[1])
    assert {alone[0][0], alone[0][-1], alone[1][0], alone[1][-1]} <= set(y_ticks(figures[0]))


def test_the_format_values_the_table_writes():
    from chapter2.format import Count, Duration

    assert [str(Count(n)) for n in (8_030_261_248, 956_000_000, 210_000, 512, 512.0)] == [
        "8.03B", "956M", "210k", "512", "512"]
    assert [str(Duration(s)) for s in (4.6e-5, 0.00464, 1.3, 690)] == ["46 µs", "4.64 ms", "1.3 s", "11.5 min"]
    with pytest.raises(TypeError):
        Count("8B")


def test_b_takes_a_hub_model_id_as_it_takes_the_pasted_config():
    """B's model id (model_id_b), looked up (the page sends the record it fetched; here the recorded config.json of
    a real checkpoint, tests/fixtures/hub), gives B the numbers of that config pasted into B."""
    from chapter2 import hub
    from chapter2.calculators import _hub

    folder = Path(__file__).parent / "fixtures" / "hub" / "ibm-granite--granite-3.1-1b-a400m-instruct"
    mid = hub.parse_model_id("ibm-granite/granite-3.1-1b-a400m-instruct")
    record = hub.plan(mid, "llm", {"config.json": hub.Reply(200, (folder / "config.json").read_bytes()),
                                   "model.safetensors.index.json": hub.Reply(404),
                                   "model.safetensors#0-7": hub.Reply(0)})
    _hub.remember(json.dumps({mid.text: record.to_json()}))
    for name in ("model_config", "roofline"):
        by_id = calculators.compare(name, {"model_id_b": mid.text})
        pasted = calculators.compare(name, {"config_json_b": (folder / "config.json").read_text(), "model_b": "pasted"})
        assert [r[1:] for r in by_id.rows[by_id.inputs:]] == [r[1:] for r in pasted.rows[pasted.inputs:]], name
        assert by_id.rows[0][1:] == (calculators.get(name).defaults()["model"], mid.text, ""), by_id.rows[0]
