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
    assert out["intensity"] == "1,365" and c.intensity == pytest.approx(4096 / 3)  # 2m³ / (3m² x 2 bytes)


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


# -----------------------------------------------------------------------------
# How servers keep the KV cache (2.2a's workbenches): the defaults worked by hand for Llama 3.1 8B on one H100
# (989.4 TFLOP/s of FP16, 3.35 TB/s, 80 GB), from its config.json: 32 layers of 4,096 (8 KV heads of 128),
# MLP 14,336, vocabulary 128,256, untied LM head.

LLAMA_LAYER = 4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336  # q, k, v, o and the SwiGLU MLP: 218,103,808
LLAMA_HEAD = 128_256 * 4096  # the LM head (and, apart, the embedding table): 525,336,576
LLAMA_MATMUL = 32 * LLAMA_LAYER + LLAMA_HEAD  # weights a token multiplies by: 7,504,658,432
LLAMA_STREAMED = 2 * (LLAMA_MATMUL + (2 * 32 + 1) * 4096)  # FP16 bytes a pass reads: all but the embedding table
LLAMA_KV = 2 * 32 * 8 * 128 * 2  # bytes per token: 131,072
LLAMA_PER_KEY = 4 * 32 * 128 * 32  # score and value products per key: 524,288 FLOPs
LLAMA_LM = 2 * LLAMA_HEAD  # one position's logits
LLAMA_ACT, LLAMA_LOGITS = 2 * 32 * 4096 * 2, 128_256 * 2  # a token's hidden states in and out of 32 blocks; a logit row
H100_PEAK, H100_BW = 989.4e12, 3.35e12


def _h100(flops, nbytes):
    return max(flops / H100_PEAK, nbytes / H100_BW)


def _llama_prefill(cached, new):
    """A Llama 3.1 8B prefill pass of `new` tokens after `cached` (last position's logits), on the H100."""
    flops = 2 * LLAMA_MATMUL * new + LLAMA_PER_KEY * sum(range(cached + 1, cached + new + 1)) - (new - 1) * LLAMA_LM
    return flops, (cached + new) * LLAMA_KV + new * LLAMA_ACT + LLAMA_LOGITS


def test_kv_blocks_defaults_by_hand():
    from chapter2.format import duration

    out = calculators.compute("kv_blocks")
    free = 0.9 * 80e9 - 2 * 8_030_261_248  # 55,939,477,504 bytes beside the BF16 weights
    block = 16 * LLAMA_KV  # 2,097,152
    assert out["pool"] == ("0.9 × 80 GB − 16.1 GB of weights = 55.9 GB (weights and cache in FP16): 26,674 blocks "
                           "of 16 tokens × 131 kB = 2.1 MB each")
    assert int(free // block) == 26_674
    # 2,500 + 500 = 3,000 tokens: 187.5 blocks, so 188 (3,008 slots), 8 empty
    assert out["blocks"].startswith("3,000 tokens take 188 blocks (3,008 token slots): the last block leaves 8 empty")
    reserved = int(free // ((2500 + 4096) * LLAMA_KV))  # 64.7
    paged = int(free // (188 * block))  # 141.9
    exact = int(free // (3000 * LLAMA_KV))  # 142.3
    shared = int((free - 125 * block) // ((188 - 0.8 * 125) * block))  # 80 % share 125 blocks: 88 of their own
    assert (reserved, paged, shared, exact) == (64, 141, 301, 142)
    assert [v for _, v in out["fit"]] == [64, 141, 301, 142]
    (miss_flops, miss_bytes), (hit_flops, hit_bytes) = _llama_prefill(0, 2500), _llama_prefill(2000, 500)
    miss, hit = _h100(miss_flops, LLAMA_STREAMED + miss_bytes), _h100(hit_flops, LLAMA_STREAMED + hit_bytes)
    assert (duration(miss), duration(hit), duration(0.8 * hit + 0.2 * miss)) == ("36.9 ms", "7.65 ms", "13.5 ms")
    assert out["prefill"].startswith("a miss computes all 2,500 tokens in 36.9 ms; a hit computes the last 500 over "
                                     "2,000 cached in 7.65 ms; with 80 % of requests hitting, 13.5 ms on average")
    assert out["prefill"].endswith("(SGLang's token hit rate: 64 %)")  # 0.8 x 2,000 / 2,500


def test_kv_blocks_refuses_what_cannot_be():
    for raw, field in (({"prefix_tokens": "3000"}, "prefix_tokens"), ({"max_tokens": "499"}, "max_tokens"),
                       ({"model": "DeepSeek-V3"}, "n_gpus"), ({"hit_rate": "1.5"}, "hit_rate")):
        result = json.loads(calculators.compute_json("kv_blocks", json.dumps(raw)))
        assert result["ok"] is False and result["field"] == field, raw


def test_chunked_prefill_defaults_by_hand():
    from chapter2.format import duration

    out = calculators.compute("chunked_prefill")
    decode_flops = 64 * (2 * LLAMA_MATMUL + LLAMA_PER_KEY * 4096)
    decode_bytes = 64 * 4096 * LLAMA_KV + 64 * (LLAMA_ACT + LLAMA_LOGITS)

    def step(start, size):  # 64 decode tokens and a chunk share one read of the weights
        flops, nbytes = _llama_prefill(start, size)
        return _h100(decode_flops + flops, LLAMA_STREAMED + decode_bytes + nbytes)

    chunked = [step(s, 512) for s in range(0, 8192, 512)]
    whole = step(0, 8192)
    plain = _h100(decode_flops, LLAMA_STREAMED + decode_bytes)
    assert [duration(x) for x in (sum(chunked), max(chunked), whole, plain)] == ["240 ms", "15.2 ms", "134 ms", "14.8 ms"]
    assert out["ttft"].startswith("240 ms in 16 steps of up to 512 tokens; 134 ms unchunked")
    assert out["tpot"].startswith("15.2 ms at the slowest step")
    assert "14.8 ms for a decode step alone; unchunked they would wait 134 ms" in out["tpot"]
    chart = out["chart"]
    assert chart["series"][0]["x"] == [128, 256, 512, 1024, 2048, 4096, 8192]  # the prompt / 64, doubling


def test_chunked_prefill_refuses_too_many_chunks_and_whisper():
    result = json.loads(calculators.compute_json("chunked_prefill", json.dumps({"chunk_tokens": "1"})))
    assert result["field"] == "chunk_tokens" and "at least 2 tokens" in result["message"]  # 8,192 / 4,096 chunks
    result = json.loads(calculators.compute_json("chunked_prefill", json.dumps({"config_json": _whisper_text()})))
    assert result["field"] == "config_json" and "encoder-decoder" in result["message"]


def test_speculative_decoding_defaults_by_hand():
    from chapter2.format import plain

    out = calculators.compute("speculative_decoding")
    c = (LLAMA_LAYER + 2 * 4096**2 + LLAMA_HEAD) / LLAMA_MATMUL  # a one-layer head and the LM head it reads
    assert plain(c) == "0.104"
    step_plain = (LLAMA_STREAMED + 4096 * LLAMA_KV + LLAMA_ACT + LLAMA_LOGITS) / H100_BW  # memory bound
    verify = (LLAMA_STREAMED + 4099 * LLAMA_KV + 4 * (LLAMA_ACT + LLAMA_LOGITS)) / H100_BW  # 4 positions
    tokens = 1 + 0.8 + 0.8**2 + 0.8**3  # 2.952
    speedup = tokens * step_plain / (verify + 3 * c * step_plain)
    assert plain(speedup) == "2.25"
    assert out["tokens"] == "E = 2.95 of the 4 positions verified (acceptance 0.8, 3 drafted)"
    assert out["drafter_info"].endswith("c = 0.104 of a decode step per drafted token")
    assert out["speedup"].startswith("2.25× on the roofline (2.25× by Leviathan et al.'s formula)")
    # the best draft length: E / (1 + g c) peaks at g = 6 (2.44) for a = 0.8, c = 0.104
    by_g = {g: (1 - 0.8 ** (g + 1)) / 0.2 / (1 + g * c) for g in range(17)}
    assert max(by_g, key=by_g.get) == 6 and out["best"] == f"6 drafted tokens: {plain(by_g[6])}×"
    custom = calculators.compute("speculative_decoding", {"drafter": "custom", "drafter_cost": "2"})
    assert custom["best"] == "do not speculate: no draft length beats plain decoding at c = 2"
