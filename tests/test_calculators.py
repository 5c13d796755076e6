"""The calculator contract: parsing, clear errors, and no NaN/Infinity ever shown."""

import json

import pytest

from chapter2 import calculators
from chapter2.activations import gelu, gelu_slope
from chapter2.linear import matmul_cost


def test_every_calculator_computes_its_defaults():
    assert calculators.REGISTRY
    for name, calc in calculators.REGISTRY.items():
        out = calculators.compute(name)
        assert set(out) == {o.key for o in calc.outputs}, name


def test_matmul_calculator_shows_the_library_values():
    out = calculators.compute("matmul_cost", {"m": "4096", "k": "4096", "n": "4096", "dtype": "fp16"})
    c = matmul_cost(4096, 4096, 4096, "fp16")
    assert out["ops"] == "137 GFLOP" and c.ops == 2 * 4096**3
    assert out["intensity"] == f"{c.intensity:.4g}"


def test_activations_calculator_shows_the_library_values():
    out = calculators.compute("activations", {"x": "-0.7", "beta": "1"})
    assert out["gelu"] == f"{float(gelu(-0.7)):.4f} / {float(gelu_slope(-0.7)):.4f}"


@pytest.mark.parametrize("raw", ["", " ", "nan", "NaN", "inf", "-Infinity", "abc", "1e400", "-3", "0", "2.5", "1e20"])
def test_bad_numbers_are_field_errors(raw):
    result = json.loads(calculators.compute_json("matmul_cost", json.dumps({"m": raw})))
    assert result["ok"] is False and result["field"] == "m"
    assert result["message"].startswith("Tokens (rows of x):")


@pytest.mark.parametrize("name", sorted(calculators.REGISTRY))
def test_fuzzed_inputs_never_show_nan_or_crash(name):
    calc = calculators.get(name)
    for field in calc.fields:
        for raw in ["", "nan", "-1e308", "1e308", "x", "-0", "0.5", str(field.min or 0), str(field.max or 1e9)]:
            result = json.loads(calculators.compute_json(name, json.dumps({field.name: raw})))
            if result["ok"]:
                text = json.dumps(result["outputs"]).lower()
                assert "nan" not in text.split('"') and "infinity" not in text
            else:
                assert result["message"]


def test_unknown_select_option():
    result = json.loads(calculators.compute_json("matmul_cost", json.dumps({"dtype": "fp12"})))
    assert result == {"ok": False, "field": "dtype", "message": "Data type: choose one of fp32, bf16, fp16, fp8"}


# -----------------------------------------------------------------------------
# Whisper pasted: every calculator that takes a config answers at the decoder's 448 positions, and says so

def _whisper_text():
    from chapter2.models import FAMILY_CONFIG_DIR

    return (FAMILY_CONFIG_DIR / "whisper-large-v3.json").read_text()


# whisper-large-v3 by hand (its config.json: d_model 1,280, 32 decoder layers of 20 heads of 64, 1,500 encoder
# positions, max_target_positions 448): self-attention K and V per token 2 x 32 x 20 x 64 x 2 bytes (BF16/FP16);
# the cross-attention cache 32 layers x 1,500 positions x 2 x 1,280 x 2 bytes, fixed.
WHISPER_KV_PER_TOKEN, WHISPER_CROSS = 2 * 32 * 20 * 64 * 2, 32 * 1500 * 2 * 1280 * 2


def test_fit_context_caps_only_a_hard_limit_and_says_so():
    from chapter2.calculators._models import fit_context
    from chapter2.models import ModelConfig, load_config

    whisper = ModelConfig.from_text(_whisper_text())
    assert fit_context(whisper, 448) == (448, "") and fit_context(whisper, 1) == (1, "")
    used, note = fit_context(whisper, 32_768)
    assert used == 448
    assert note == ("Context capped at 448 tokens, not the 32,768 asked: Whisper's decoder holds at most 448 "
                    "(max_target_positions, one learned position per token)")
    assert fit_context(whisper, 449, "Prompt")[1].startswith("Prompt capped at 448 tokens, not the 449 asked")
    llama = load_config("Llama-3.1-8B")  # RoPE: past max_position_embeddings (131,072) is not refused nor capped
    assert llama.context_limit is None and fit_context(llama, 10**6) == (10**6, "")


def test_a_pasted_whisper_config_gives_numbers_at_the_default_contexts():
    from chapter2.format import nbytes

    text = _whisper_text()
    kv = calculators.compute("kv_cache", {"config_json": text})  # default context: 32,768 tokens
    assert kv["total"] == f"{nbytes(WHISPER_KV_PER_TOKEN * 448 + WHISPER_CROSS)} (448 tokens x 1 sequence)"
    assert kv["note"].startswith("Context capped at 448 tokens, not the 32,768 asked: Whisper's decoder")
    chart = kv["chart"]
    assert max(max(s["x"]) for s in chart["series"]) == 448  # drawn across the contexts the model holds, no further
    assert chart["points"][0]["y"] == pytest.approx((WHISPER_KV_PER_TOKEN * 448 + WHISPER_CROSS) / 1e9, rel=1e-5)  # charts keep 6 digits
    assert chart["summary"].endswith("no context the model holds (up to 448 tokens).")  # 319 MB < 3.09 GB of weights

    roof = calculators.compute("roofline", {"config_json": text})  # defaults: a 4,096-token prompt and context
    at_limit = calculators.compute("roofline", {"config_json": text, "prompt": "448", "context": "448"})
    for key in roof:  # the same numbers as asking for 448 tokens, plus the sentence that says why
        if key in ("prefill", "decode"):
            assert roof[key].startswith(at_limit[key] + "; ") and "capped at 448 tokens" in roof[key], key
        else:
            assert roof[key] == at_limit[key], key
    assert roof["prefill"].endswith("Prompt capped at 448 tokens, not the 4,096 asked: Whisper's decoder holds at "
                                    "most 448 (max_target_positions, one learned position per token)")
    assert [label for label, _ in roof["intensity"]][1:3] == ["Prefill, 448 tokens", "Decode, batch 1, 448-token context"]
    assert f"KV cache {nbytes(WHISPER_KV_PER_TOKEN * 448 + WHISPER_CROSS)}" in roof["parts"]

    batching = calculators.compute("decode_batching", {"config_json": text})
    assert "Context capped at 448 tokens, not the 4,096 asked" in batching["intensity"]
    assert f"+ {nbytes(WHISPER_KV_PER_TOKEN * 448 + WHISPER_CROSS)} of KV cache +" in batching["bytes"]
    assert "whole step at 448 tokens of context" in batching["critical"]
    # a decoder-only model at the same inputs keeps its context: no cap, no sentence
    llama = calculators.compute("decode_batching", {"context": "200000"})
    assert "capped" not in llama["intensity"] and "200,000 tokens of context" in llama["critical"]


def test_the_block_diagram_draws_whisper_s_encoder_feeding_cross_attention():
    data = calculators.compute("model_diagram", {"config_json": _whisper_text()})["diagram"]
    labels = [b["label"] for b in data["boxes"]]
    assert labels == ["Audio in", "Conv stem + positions", "Norm", "Encoder self-attention", "Norm",
                      "Feed-forward (MLP)", "Encoder output", "Decoder: token embedding", "Norm",
                      "Self-attention (causal)", "Norm", "Cross-attention", "Norm", "Feed-forward (MLP)",
                      "Final norm", "LM head"]
    assert [(r["start"], r["end"], r["label"]) for r in data["repeat"]] == [
        (2, 6, "× 32 encoder layers"), (8, 14, "× 32 decoder layers")]
    box = dict(zip(labels, data["boxes"], strict=True))
    # 3,000 mel frames (10 ms hop over 30 s) of 128 bins; the stride-2 conv halves them to 1,500 positions
    assert "3,000 frames of 128 mel bins" in box["Audio in"]["detail"]
    assert "1,500 positions of 1,280 numbers" in box["Conv stem + positions"]["detail"]
    assert "20 heads of 64" in box["Encoder self-attention"]["detail"]
    assert "cross-attention reads them" in box["Encoder output"]["detail"]
    assert "encoder's 1,500 positions" in box["Cross-attention"]["detail"]
    # per decoder layer in BF16: K and V of 20 heads of 64 per token; K and V of 1,500 positions x 1,280 numbers
    assert box["Self-attention (causal)"]["side"].startswith(f"KV cache: {2 * 20 * 64 * 2 / 1e3:.2f} kB per token")
    assert box["Cross-attention"]["side"].startswith(f"cross-attention cache: {1500 * 2 * 1280 * 2 / 1e6:.2f} MB")
    assert [b["detail"] for b in data["boxes"] if b["label"] == "Feed-forward (MLP)"] == [
        "1,280 → 5,120 → 1,280, every position", "1,280 → 5,120 → 1,280, every token"]
    html = json.loads(calculators.compute_json("model_diagram", json.dumps({"config_json": _whisper_text()})))
    svg = html["outputs"]["diagram"]
    assert svg.count('stroke-dasharray="6 3"') == 2  # two dashed frames: the encoder's block and the decoder's
    assert "× 32 encoder layers" in svg and "× 32 decoder layers" in svg


def test_a_config_with_k_per_layer_says_so_in_the_calculators():
    """Hunyuan's moe_topk as a list (k = 2, 8, 8, 4): the calculators name the range, the active count sums each
    layer's own k (64 experts of 3 x 32 x 16 weights: 22 of the 4 x 64 run per token)."""
    raw = {"architectures": ["HunYuanMoEV1ForCausalLM"], "num_hidden_layers": 4, "num_experts": 64,
           "moe_topk": [2, 8, 8, 4], "hidden_size": 32, "intermediate_size": 16, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 8, "vocab_size": 50}
    text = json.dumps(raw)
    out = calculators.compute("model_config", {"config_json": text})
    assert "(2 to 8 (by layer) of 64 experts in 4 of 4 layers)" in out["model_info"]
    expert = 3 * 32 * 16
    assert (4 * 64 * expert, 22 * expert) == (393_216, 33_792)
    assert "routed experts 393k (33.8k active)" in out["parts"]  # three digits shown
    diagram = calculators.compute("model_diagram", {"config_json": text})["diagram"]
    assert "a router picks 2 to 8 (by layer) of 64 experts per token" in diagram["boxes"][4]["detail"]
    coverage = calculators.compute("moe_coverage", {"config_json": text})
    assert coverage["source"].endswith("E_tok differs by layer (2 to 8 (by layer)): shown for the layers with the most, 8")
