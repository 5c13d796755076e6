"""config.json arithmetic: parameter counts, KV cache bytes, FLOPs per token.

Oracles: published parameter counts (sources cited next to each), the same
counts written out by hand from the config values, and the real transformers
model classes instantiated on the `meta` device (no memory) whose
`numel()` sums are the ground truth for "total".
"""

from __future__ import annotations

import json

import pytest
from _oracles import require

from chapter2.models import (CONFIG_DIR, FAMILY_CONFIG_DIR, ModelConfig, describe_architecture, list_configs,
                             list_family_configs, load_config)

SHIPPED = ["DeepSeek-V2-Lite", "DeepSeek-V3", "Kimi-K2-Instruct", "Llama-3.1-8B", "Llama-4-Scout-17B-16E", "Mistral-7B-v0.1",
           "Mixtral-8x7B-v0.1", "Qwen2-7B", "Qwen3-235B-A22B", "Qwen3-8B", "gemma-3-27b-it", "gpt-oss-120b"]
FAMILY_CONFIGS = ["AFM-4.5B", "AI21-Jamba-1.5-Mini", "Apertus-8B-Instruct-2509", "ERNIE-4.5-21B-A3B-PT",
                  "EXAONE-4.0-32B", "Falcon-H1-0.5B-Instruct", "GLM-4-9B-0414",
                  "GLM-4.5-Air", "Hunyuan-A13B-Instruct", "Hunyuan-MT-7B", "LFM2-1.2B", "LFM2-8B-A1B",
                  "Llama-2-7b-hf", "MiniMax-M1", "MiniMax-M2", "Ministral-3-3B-Instruct-2512", "Mistral-Nemo-Base-2407",
                  "Mistral-Small-3.1-24B-Instruct-2503",
                  "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "Nemotron-H-8B-Base-8K", "OLMo-2-1124-7B",
                  "OLMoE-1B-7B-0924", "Phi-3-mini-4k-instruct", "Phi-3.5-MoE-instruct", "Phi-4-mini-instruct",
                  "Qwen1.5-MoE-A2.7B", "Qwen2.5-VL-7B-Instruct", "Qwen3-Next-80B-A3B-Instruct",
                  "Qwen3-VL-30B-A3B-Instruct", "Qwen3-VL-4B-Instruct", "Qwen3.5-27B", "Qwen3.5-397B-A17B",
                  "Seed-OSS-36B-Instruct", "SmolLM3-3B", "c4ai-command-r-v01", "dots.llm1.inst", "gemma-2-9b",
                  "gemma-3n-E2B-it", "gemma-7b", "granite-3.0-1b-a400m-base", "granite-3.0-8b-base", "granite-4.0-h-tiny",
                  "whisper-large-v3"]


def within(value, published, tol=0.01):
    return abs(value - published) / published <= tol


def test_shipped_configs_are_listed_and_sourced():
    assert list_configs() == SHIPPED
    assert list_family_configs() == FAMILY_CONFIGS
    for name in SHIPPED + FAMILY_CONFIGS:
        folder = CONFIG_DIR if name in SHIPPED else FAMILY_CONFIG_DIR
        raw = json.loads((folder / f"{name}.json").read_text())
        source = raw["_source"]
        # the Hub, or the developer's own repository (MiniMax-M1's config.json is in MiniMax's GitHub repository)
        assert source.startswith(("https://huggingface.co/", "https://github.com/")), name
        assert source.endswith("/config.json"), name
        config = load_config(name)
        assert config.name == name and config.source == source


# -----------------------------------------------------------------------------
# published totals


def test_published_parameter_counts():
    # Qwen3-235B-A22B model card (https://huggingface.co/Qwen/Qwen3-235B-A22B): "235B in total and 22B
    # activated", "Number of Parameters (Non-Embedding): 234B"
    p = load_config("Qwen3-235B-A22B").params()
    assert within(p.total, 235e9) and within(p.active, 22e9) and within(p.non_embedding, 234e9)
    # Qwen3-8B model card (https://huggingface.co/Qwen/Qwen3-8B): "8.2B", non-embedding "6.95B"
    p = load_config("Qwen3-8B").params()
    assert within(p.total, 8.2e9) and within(p.non_embedding, 6.95e9)
    # Llama-3.1-8B: 8.03B params (model size on https://huggingface.co/meta-llama/Llama-3.1-8B)
    assert within(load_config("Llama-3.1-8B").params().total, 8.03e9)
    # Mixtral of experts (https://mistral.ai/news/mixtral-of-experts): "46.7B total parameters
    # but only uses 12.9B parameters per token"
    p = load_config("Mixtral-8x7B-v0.1").params()
    assert within(p.total, 46.7e9) and within(p.active, 12.9e9)
    # Mistral 7B announcement (https://mistral.ai/news/announcing-mistral-7b): "a 7.3B parameter model"
    assert within(load_config("Mistral-7B-v0.1").params().total, 7.3e9)
    # DeepSeek-V3 technical report (arXiv:2412.19437, abstract): "671B total parameters with 37B
    # activated for each token" (the 14B multi-token-prediction module is extra, not in the 671B).
    p = load_config("DeepSeek-V3").params()
    assert within(p.total, 671e9)
    # Counting both embedding tables (as Mixtral's 12.9B does) gives 37.55B; the report rounds to
    # whole billions without stating its convention, so this one check allows 1.5 %.
    assert within(p.active, 37e9, tol=0.015)


def test_parameter_counts_by_hand():
    # Llama-3.1-8B: vocab 128256, hidden 4096, 32 layers, 32 q heads / 8 kv heads of 128, MLP 14336, untied
    attn = 4096 * 4096 * 2 + 2 * 4096 * (8 * 128)  # q, o + k, v
    mlp = 3 * 4096 * 14336
    per_layer = attn + mlp + 2 * 4096  # + 2 RMSNorms
    llama = 32 * per_layer + 2 * 128256 * 4096 + 4096  # + embed, lm_head, final norm
    assert llama == 8_030_261_248
    p = load_config("Llama-3.1-8B").params()
    assert p.total == p.active == llama
    assert p.embedding == p.lm_head == 128256 * 4096

    # Qwen3-235B-A22B: 94 layers, hidden 4096, 64 q heads / 4 kv heads of 128, q/k norms,
    # 128 experts of width 1536, top 8, router 128 x 4096
    attn = 4096 * 64 * 128 * 2 + 2 * 4096 * 4 * 128 + 2 * 128
    expert = 3 * 4096 * 1536
    shared = attn + 128 * 4096 + 2 * 4096
    embed = 2 * 151936 * 4096 + 4096
    p = load_config("Qwen3-235B-A22B").params()
    assert p.total == 94 * (shared + 128 * expert) + embed
    assert p.active == 94 * (shared + 8 * expert) + embed

    # DeepSeek-V3: 61 layers, the first 3 dense (MLP 18432), 58 MoE (256 routed + 1 shared expert of
    # width 2048, top 8, router 256 x 7168 plus a 256-entry correction bias); MLA with q rank 1536,
    # kv rank 512, 128 heads of 128 (nope) + 64 (rope) for q/k and 128 for v
    h = 7168
    mla = (h * 1536 + 1536 + 1536 * 128 * 192  # q_a, q_a_layernorm, q_b
           + h * (512 + 64) + 512 + 512 * 128 * (128 + 128)  # kv_a (latent + rope key), kv_a_layernorm, kv_b
           + 128 * 128 * h)  # o
    expert = 3 * h * 2048
    dense_layer = mla + 3 * h * 18432 + 2 * h
    moe_common = mla + 2 * h + expert + 256 * h + 256  # + shared expert, router, bias
    embed = 2 * 129280 * h + h
    p = load_config("DeepSeek-V3").params()
    assert p.total == 3 * dense_layer + 58 * (moe_common + 256 * expert) + embed
    assert p.active == 3 * dense_layer + 58 * (moe_common + 8 * expert) + embed


# The counts against the transformers classes (every shipped config, every family's defaults and small
# variants, the KV cache after a real forward pass) are in tests/test_model_families.py.


def test_transformers_5_config_dialect_reads_the_same():
    # transformers >= 5 writes rope_parameters and num_local_experts; the hub file uses rope_theta and num_experts
    transformers = require("transformers")
    raw = {k: v for k, v in json.loads((CONFIG_DIR / "Qwen3-235B-A22B.json").read_text()).items() if not k.startswith("_")}
    v5 = transformers.Qwen3MoeConfig(**raw).to_dict()
    assert "rope_parameters" in v5
    a, b = ModelConfig.from_hf(v5), load_config("Qwen3-235B-A22B")
    assert a.params() == b.params() and a.rope_theta == b.rope_theta == 1e6 and a.rope_scaling is None
    llama = ModelConfig.from_hf(transformers.LlamaConfig(**{k: v for k, v in json.loads(
        (CONFIG_DIR / "Llama-3.1-8B.json").read_text()).items() if not k.startswith("_")}).to_dict())
    assert llama.rope_scaling == load_config("Llama-3.1-8B").rope_scaling
    assert llama.rope_scaling["rope_type"] == "llama3" and llama.rope_scaling["factor"] == 8.0


# -----------------------------------------------------------------------------
# KV cache


def test_kv_cache_bytes_per_token_by_hand():
    # GQA: 2 (K and V) * layers * kv heads * head_dim * bytes
    assert load_config("Llama-3.1-8B").kv_cache_bytes_per_token("bf16") == 2 * 32 * 8 * 128 * 2 == 131072
    assert load_config("Qwen3-8B").kv_cache_bytes_per_token("bf16") == 2 * 36 * 8 * 128 * 2
    assert load_config("Qwen3-235B-A22B").kv_cache_bytes_per_token("bf16") == 2 * 94 * 4 * 128 * 2
    assert load_config("Qwen2-7B").kv_cache_bytes_per_token("bf16") == 2 * 28 * 4 * 128 * 2
    assert load_config("Mixtral-8x7B-v0.1").kv_cache_bytes_per_token("bf16") == 2 * 32 * 8 * 128 * 2
    # MLA: one latent of kv_lora_rank plus one shared RoPE key of qk_rope_head_dim per layer
    assert load_config("DeepSeek-V3").kv_cache_bytes_per_token("bf16") == 61 * (512 + 64) * 2 == 70272
    # dtype scales it
    assert load_config("Llama-3.1-8B").kv_cache_bytes_per_token("fp8") == 65536
    assert load_config("Llama-3.1-8B").kv_cache_bytes_per_token("fp32") == 262144


def test_kv_cache_total_and_sliding_window():
    llama = load_config("Llama-3.1-8B")
    assert llama.kv_cache_bytes(128_000, 1, "bf16") == 131072 * 128_000  # 16.8 GB at full context
    assert llama.kv_cache_bytes(4096, 8, "bf16") == 131072 * 4096 * 8
    mistral = load_config("Mistral-7B-v0.1")
    assert mistral.sliding_window == 4096 and mistral.sliding_window_layers == tuple(range(32))
    assert mistral.kv_cache_bytes_per_token("bf16") == 131072  # per token the same as Llama ...
    assert mistral.kv_cache_bytes(1000, 2, "bf16") == 131072 * 1000 * 2
    assert mistral.kv_cache_bytes(32768, 2, "bf16") == 131072 * 4096 * 2  # ... but capped at the window
    # Qwen configs carry sliding_window but use_sliding_window is false: no window
    assert load_config("Qwen2-7B").sliding_window is None
    assert load_config("Qwen2-7B").kv_cache_bytes(100_000) == 57344 * 100_000


# -----------------------------------------------------------------------------
# FLOPs


def test_flops_per_token_by_hand():
    # Llama-3.1-8B at 4096 keys: 2 FLOPs per weight in a matmul (all but the embedding lookup and the
    # 65 RMSNorm vectors) + per layer and head 2 * 128 (q.k) + 2 * 128 (p.v) per key
    matmul = 8_030_261_248 - 128256 * 4096 - 65 * 4096
    attn = 32 * 32 * (2 * 128 + 2 * 128) * 4096
    assert load_config("Llama-3.1-8B").flops_per_token(4096) == 2 * matmul + attn
    # Mistral's window caps the attention term
    m = load_config("Mistral-7B-v0.1")
    assert m.flops_per_token(32768) - m.flops_per_token(4096) == 0
    assert m.flops_per_token(4096) - m.flops_per_token(4095) == 32 * 32 * 512
    # MoE: only the routed experts count; Qwen3-235B-A22B at context 1
    q = load_config("Qwen3-235B-A22B")
    p = q.params()
    norms = 94 * (2 * 4096 + 2 * 128) + 4096
    assert p.matmul_active == p.active - 151936 * 4096 - norms
    assert q.flops_per_token(1) == 2 * p.matmul_active + 94 * 64 * 512


def test_weights_bytes():
    assert load_config("Llama-3.1-8B").weights_bytes("bf16") == 2 * 8_030_261_248
    assert load_config("Llama-3.1-8B").weights_bytes("fp4") == 8_030_261_248 / 2


# -----------------------------------------------------------------------------
# names and parsing


def test_describe_architecture():
    a = describe_architecture("Qwen3MoeForCausalLM")
    assert (a.family, a.is_moe, a.task) == ("Qwen3", True, "causal language modeling")
    assert describe_architecture("LlamaForCausalLM").is_moe is False
    assert describe_architecture("MixtralForCausalLM").is_moe is True
    assert describe_architecture("DeepseekV3ForCausalLM").family == "DeepSeek-V3"
    assert describe_architecture("BertForMaskedLM").task == "masked language modeling"
    assert describe_architecture("WhisperForConditionalGeneration").task == "conditional generation"
    assert describe_architecture("GPT2LMHeadModel").task == "causal language modeling"
    assert "no head" in describe_architecture("LlamaModel").task
    with pytest.raises(TypeError, match="name"):
        describe_architecture(None)
    for bad in ("", "qwen3", "Qwen3 For CausalLM", "Qwen3Moe"):
        with pytest.raises(ValueError, match="name"):
            describe_architecture(bad)


def test_parsed_fields():
    c = load_config("Qwen3-235B-A22B")
    assert (c.family, c.is_moe, c.num_experts, c.num_experts_per_tok, len(c.moe_layers)) == ("Qwen3", True, 128, 8, 94)
    assert c.qk_norm and c.norm_topk_prob and c.head_dim == 128 and c.gqa_group == 16
    d = load_config("DeepSeek-V3")
    assert d.uses_mla and d.moe_layers == tuple(range(3, 61)) and d.shared_expert_intermediate_size == 2048
    assert d.kv_lora_rank == 512 and d.qk_rope_head_dim == 64 and d.q_lora_rank == 1536
    assert load_config("Qwen2-7B").qkv_bias and not load_config("Qwen2-7B").o_bias
    assert load_config("Llama-3.1-8B").rope_scaling["rope_type"] == "llama3"


def test_bad_inputs():
    with pytest.raises(ValueError, match="name"):
        load_config("GPT-5")
    with pytest.raises(TypeError, match="config"):
        ModelConfig.from_hf("config.json")
    with pytest.raises(ValueError, match="architectures"):
        ModelConfig.from_hf({"hidden_size": 8})
    base = json.loads((CONFIG_DIR / "Llama-3.1-8B.json").read_text())
    with pytest.raises(TypeError, match="hidden_size"):
        ModelConfig.from_hf({**base, "hidden_size": None})
    with pytest.raises(ValueError, match="num_key_value_heads"):
        ModelConfig.from_hf({**base, "num_key_value_heads": 5})
    with pytest.raises(ValueError, match="causal"):
        ModelConfig.from_hf({**base, "architectures": ["BertForMaskedLM"]})
    with pytest.raises(ValueError, match="not supported"):
        ModelConfig.from_hf({**base, "architectures": ["GPT2LMHeadModel"]})
    llama = load_config("Llama-3.1-8B")
    with pytest.raises(ValueError, match="context"):
        llama.kv_cache_bytes(0)
    with pytest.raises(TypeError, match="batch"):
        llama.kv_cache_bytes(10, 1.5)
    with pytest.raises(ValueError, match="dtype"):
        llama.kv_cache_bytes_per_token("int3")
    with pytest.raises(ValueError, match="path"):
        ModelConfig.from_json(CONFIG_DIR / "missing.json")


# -----------------------------------------------------------------------------
# the page: calculator, figure, snippet


def test_kv_cache_calculator_shows_the_library_values():
    from chapter2 import calculators

    out = calculators.compute("kv_cache", {"model": "Llama-3.1-8B", "context": "131072", "batch": "8", "dtype": "bf16",
                                           "weights_dtype": "bf16"})
    assert out["per_token"] == "131 kB = 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes"
    assert out["total"].startswith("137 GB")  # 131072 B * 131072 tokens * 8 = 137.4e9 B
    assert out["weights"].startswith("16.1 GB (8.03B parameters)")  # 2 bytes * 8.03e9
    assert out["ratio"] == f"{131072 * 131072 * 8 / (2 * 8_030_261_248):.3g}×"
    assert dict(out["memory"])["KV cache"] == pytest.approx(131072 * 131072 * 8 / 1e9)
    mistral = calculators.compute("kv_cache", {"model": "Mistral-7B-v0.1", "context": "32768"})
    assert mistral["total"].startswith("537 MB")  # capped at the 4096-token window: 131072 * 4096
    assert "sliding window" in mistral["note"]
    deepseek = calculators.compute("kv_cache", {"model": "DeepSeek-V3", "dtype": "fp8"})
    assert deepseek["per_token"] == "35.1 kB = 61 layers x (512 latent + 64 RoPE key) x 1 bytes"
    bad = json.loads(calculators.compute_json("kv_cache", json.dumps({"model": "GPT-5"})))
    assert bad["ok"] is False and bad["field"] == "model"


def test_kv_cache_figure_renders():
    require("matplotlib")
    from chapter2.host.figures import alt_text, render_svg

    svg = render_svg("kv_cache_growth")
    assert svg.startswith("<?xml") and "Mistral-7B-v0.1" in svg
    # alt text quotes numbers computed from the configs: Llama-3.1-8B at 131072 tokens = 17.2 GB
    alt = alt_text("kv_cache_growth")
    assert f"Llama-3.1-8B {131072 * 131072 / 1e9:.3g} GB" in alt
    # the lines that bend inside 1k..128k: Mistral's 4,096-token window and Llama 4's 8,192-token chunks
    assert "(Mistral-7B-v0.1 at 4,096 tokens; Llama-4-Scout-17B-16E at 8,192 tokens)" in alt
    # MLA caches the latent and the RoPE key: 512 + 64 = 576 numbers per layer, not "a 512-wide latent"
    assert "a 512-wide latent and a 64-wide RoPE key, 576 numbers, per layer" in alt


# -----------------------------------------------------------------------------
# every family: published totals of one real model each (sources next to each)


def test_published_totals_of_every_family():
    def p(name):
        return load_config(name).params()

    # gpt-oss model card (arXiv:2508.10925, table 1): gpt-oss-120b 116.83B total, 5.13B active
    # ("the unembedding counts as active, the embedding does not": active_without_lookup)
    assert round(p("gpt-oss-120b").total / 1e7) == 11683 and round(p("gpt-oss-120b").active_without_lookup / 1e7) == 513
    # Llama 4 model card (https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E): 17B active, 109B total;
    # the 109B includes the vision encoder (tests/test_model_families.py adds it), the language model is 107.8B
    assert round(p("Llama-4-Scout-17B-16E").active / 1e9) == 17 and round(p("Llama-4-Scout-17B-16E").total / 1e8) == 1078
    # Gemma 3 technical report (arXiv:2503.19786, table 1): 27B has 25,600M non-embedding parameters
    assert round(p("gemma-3-27b-it").non_embedding / 1e6) == 25_600
    # DeepSeek-V2 paper (arXiv:2405.04434, appendix B): V2-Lite "15.7B total parameters, 2.4B activated"
    # (2.45B without the input embedding; the paper writes 2.4)
    assert round(p("DeepSeek-V2-Lite").total / 1e8) == 157 and 2.4e9 <= p("DeepSeek-V2-Lite").active_without_lookup < 2.5e9
    # Kimi-K2 model card (https://huggingface.co/moonshotai/Kimi-K2-Instruct): "1 trillion total parameters",
    # "32 billion activated parameters"
    assert round(p("Kimi-K2-Instruct").total / 1e12) == 1 and round(p("Kimi-K2-Instruct").active_without_lookup / 1e9) == 32
    # DeepSeek-V3 report: 37B activated, counted the same way
    assert round(p("DeepSeek-V3").active_without_lookup / 1e9) == 37
    # Llama 2 7B: 6.74B parameters (model page https://huggingface.co/meta-llama/Llama-2-7b-hf)
    assert round(p("Llama-2-7b-hf").total / 1e7) == 674
    # Mistral NeMo (https://mistral.ai/news/mistral-nemo): "12B"; 12.2B on its model page
    assert round(p("Mistral-Nemo-Base-2407").total / 1e8) == 122
    # Qwen1.5-MoE-A2.7B model card: "14.3B parameters in total and 2.7B activated parameters"
    assert round(p("Qwen1.5-MoE-A2.7B").total / 1e8) == 143 and round(p("Qwen1.5-MoE-A2.7B").active / 1e8) == 27
    # Gemma report (arXiv:2403.08295, table 2): 7B: 786,432,000 embedding + 7,751,248,896 non-embedding parameters
    assert (p("gemma-7b").embedding, p("gemma-7b").non_embedding) == (786_432_000, 7_751_248_896)
    # Gemma 2 report (arXiv:2408.00118, table 2): 9B: 8,324,201,984 non-embedding parameters
    assert p("gemma-2-9b").non_embedding == 8_324_201_984
    # Phi-3 report (arXiv:2404.14219): phi-3-mini "a 3.8 billion parameter language model"
    assert round(p("Phi-3-mini-4k-instruct").total / 1e8) == 38
    # Phi-3.5-MoE model card: "16x3.8B parameters with 6.6B active parameters"; 41.9B on its model page
    assert round(p("Phi-3.5-MoE-instruct").total / 1e8) == 419 and round(p("Phi-3.5-MoE-instruct").active / 1e8) == 66
    # OLMo 2 7B: 7.3B on its model page (https://huggingface.co/allenai/OLMo-2-1124-7B)
    assert round(p("OLMo-2-1124-7B").total / 1e8) == 73
    # OLMoE paper (arXiv:2409.02060): "1.3B active and 6.9B total parameters"
    assert round(p("OLMoE-1B-7B-0924").total / 1e8) == 69 and round(p("OLMoE-1B-7B-0924").active / 1e8) == 13
    # Granite 3.0 model pages: 8b 8.17B; 1b-a400m "1.3B" total, "400M" active
    assert round(p("granite-3.0-8b-base").total / 1e7) == 817
    assert round(p("granite-3.0-1b-a400m-base").total / 1e8) == 13
    assert round(p("granite-3.0-1b-a400m-base").active / 1e8) == 4
    # Command R model card (https://huggingface.co/CohereForAI/c4ai-command-r-v01): "35 billion parameter"
    assert round(p("c4ai-command-r-v01").total / 1e9) == 35
    # GLM-4.5 announcement (https://z.ai/blog/glm-4.5): GLM-4.5-Air "106 billion total parameters and 12 billion
    # active"; without the embedding and LM head (its next-token-prediction layer is not counted, as in transformers)
    glm = p("GLM-4.5-Air")
    assert round(glm.non_embedding / 1e9) == 106 and round((glm.active - glm.embedding - glm.lm_head) / 1e9) == 12
    # ERNIE 4.5 model card (https://huggingface.co/baidu/ERNIE-4.5-21B-A3B-PT): "21B total parameters and 3B
    # activated"; the card truncates (21.8B, 3.35B)
    assert int(p("ERNIE-4.5-21B-A3B-PT").total / 1e9) == 21 and int(p("ERNIE-4.5-21B-A3B-PT").active / 1e9) == 3
    # SmolLM3: 3.08B on its model page (https://huggingface.co/HuggingFaceTB/SmolLM3-3B)
    assert round(p("SmolLM3-3B").total / 1e7) == 308
    # hybrids. Nemotron 3 Nano report (arXiv:2512.20848) and model card
    # (https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16): 31.6B total, 3.2B active per token,
    # 3.6B with the embeddings (active_without_lookup counts the LM head, not the lookup table)
    nano = p("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert round(nano.total / 1e8) == 316 and round(nano.active_without_lookup / 1e8) == 32
    assert round(nano.active / 1e8) == 36
    # Qwen3-Next model card (https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct): "80B in total and 3B
    # activated"; the card truncates the active count without the embedding and LM head (3.25B)
    nxt = p("Qwen3-Next-80B-A3B-Instruct")
    assert round(nxt.total / 1e9) == 80 and int((nxt.active - nxt.embedding - nxt.lm_head) / 1e9) == 3
    # Phi-4-mini model card (https://huggingface.co/microsoft/Phi-4-mini-instruct): "3.8B parameters"; its partial
    # rotary factor (0.75: RoPE on 96 of each head's 128 numbers) changes no weight and no cached number
    assert round(p("Phi-4-mini-instruct").total / 1e8) == 38
    assert load_config("Phi-4-mini-instruct").kv_cache_bytes_per_token("bf16") == 2 * 32 * 8 * 128 * 2
    # Nemotron-H paper (arXiv:2504.03624, table 1): Nemotron-H-8B, 8B parameters
    assert round(p("Nemotron-H-8B-Base-8K").total / 1e9) == 8
    # Qwen3.5 model cards (https://huggingface.co/Qwen/Qwen3.5-397B-A17B, .../Qwen3.5-27B): 397B total with 17B
    # active, and 27B; the totals include the vision encoder, which params() leaves out (396.3B and 26.9B here);
    # the 27B's ships its vision_config: with its tower (0.46B) the whole release rounds to the card's 27B
    q35 = p("Qwen3.5-397B-A17B")
    assert 396e9 < q35.total < 397e9 and round(q35.active / 1e9) == 17
    assert 26.5e9 < p("Qwen3.5-27B").total < 27e9
    q27 = load_config("Qwen3.5-27B")
    assert not q27.vision_defaulted and round((q27.params().total + q27.vision_params) / 1e9) == 27
    q397 = load_config("Qwen3.5-397B-A17B")  # likewise: 396.3B + its 0.46B tower, the card's 397B
    assert not q397.vision_defaulted and round((q397.params().total + q397.vision_params) / 1e9) == 397
    # Granite 4.0 model card (https://huggingface.co/ibm-granite/granite-4.0-h-tiny): 7B total, 1B active
    # (6.94B and 1.47B here: 4 attention and 36 Mamba-2 layers, 6 of 64 experts and a shared MLP in every layer)
    tiny = p("granite-4.0-h-tiny")
    assert round(tiny.total / 1e9) == 7 and round(tiny.active / 1e9) == 1
    # Jamba 1.5 model card (https://huggingface.co/ai21labs/AI21-Jamba-1.5-Mini): 52B total, 12B active
    # (51.57B and 12.11B here: 4 attention and 28 Mamba-1 layers, 2 of 16 experts in every other layer)
    mini = p("AI21-Jamba-1.5-Mini")
    assert round(mini.total / 1e9) == 52 and round(mini.active / 1e9) == 12
    # Falcon-H1 release (https://huggingface.co/tiiuae/Falcon-H1-0.5B-Instruct): 0.5B, dense (521.4M here)
    falcon = p("Falcon-H1-0.5B-Instruct")
    assert round(falcon.total / 1e8) == 5 and falcon.active == falcon.total
    # Seed-OSS-36B: model.safetensors.index.json of ByteDance-Seed/Seed-OSS-36B-Instruct, 36,151,104,512 parameters
    assert p("Seed-OSS-36B-Instruct").total == 36_151_104_512
    # EXAONE 4.0 model card (https://huggingface.co/LGAI-EXAONE/EXAONE-4.0-32B): "30.95B" without embeddings
    assert round(p("EXAONE-4.0-32B").non_embedding / 1e7) == 3095
    # Apertus model card (https://huggingface.co/swiss-ai/Apertus-8B-Instruct-2509): 8B; 8.05B on its model page
    assert round(p("Apertus-8B-Instruct-2509").total / 1e7) == 805
    # GLM-4-9B-0414: 9.4B on its model page (https://huggingface.co/THUDM/GLM-4-9B-0414)
    assert round(p("GLM-4-9B-0414").total / 1e8) == 94
    # dots.llm1 model card (https://huggingface.co/rednote-hilab/dots.llm1.inst): "14B activated and 142B total
    # parameters"; the card truncates the total (142.77B here; 14.02B active)
    dots = p("dots.llm1.inst")
    assert int(dots.total / 1e9) == 142 and round(dots.active / 1e9) == 14
    # Hunyuan-A13B model card (https://huggingface.co/tencent/Hunyuan-A13B-Instruct): "80 billion total parameters
    # and 13 billion active" (80.39B and 12.75B here: 64 experts, top 8, and a shared MLP in each of 32 layers)
    hy = p("Hunyuan-A13B-Instruct")
    assert round(hy.total / 1e9) == 80 and round(hy.active / 1e9) == 13
    # Hunyuan-MT-7B announcement and model card (https://huggingface.co/tencent/Hunyuan-MT-7B): "7B" parameters;
    # 7.50B here, 6.98B without the tied 0.53B embedding
    mt = p("Hunyuan-MT-7B")
    assert int(mt.total / 1e9) == 7 and round(mt.non_embedding / 1e9) == 7
    # MiniMax-M2 model card (https://huggingface.co/MiniMaxAI/MiniMax-M2): "230 billion total parameters with
    # 10 billion active"; 228.7B, and 9.8B active without the embedding and LM head
    m2 = p("MiniMax-M2")
    assert round(m2.total / 1e10) == 23 and round((m2.active - m2.embedding - m2.lm_head) / 1e9) == 10



def test_fields_left_out_are_reported():
    # gemma-3-27b-it's text_config leaves out the vocabulary, context, eps and the sliding pattern:
    # Gemma3TextConfig's defaults fill them (vocab 262,208, 131,072 positions, one full layer in 6)
    g = load_config("gemma-3-27b-it")
    assert set(g.defaulted) == {"vocab_size", "max_position_embeddings", "rms_norm_eps", "attention_bias",
                                "sliding_window_pattern"}
    assert (g.vocab_size, g.max_position_embeddings, g.kinds.count("full_attention")) == (262_208, 131_072, 10)
    assert g.wrapper == "Gemma3ForConditionalGeneration" and g.tie_word_embeddings  # the outer config ties by default
    assert load_config("Llama-3.1-8B").defaulted == ()
    # Qwen3 with no head_dim: Qwen3Config's 128, not hidden / heads
    q = ModelConfig.from_hf({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "num_attention_heads": 16,
                             "num_key_value_heads": 8})
    assert q.head_dim == 128 and "head_dim" in q.defaulted
    # Mistral with no sliding_window: MistralConfig's 4096; an explicit null means none
    m = ModelConfig.from_hf({"architectures": ["MistralForCausalLM"]})
    assert m.sliding_window == 4096 and "sliding_window" in m.defaulted
    assert ModelConfig.from_hf({"architectures": ["MistralForCausalLM"], "sliding_window": None}).sliding_window is None


# -----------------------------------------------------------------------------
# refusals and validation: the error names the class or the field, the value and what was expected

SUPPORTED = "supported families: Llama, Llama 4, Mistral"


@pytest.mark.parametrize("arch", ["FalconForCausalLM", "DbrxForCausalLM", "ExaoneMoeForCausalLM",
                                  "Lfm2VlForConditionalGeneration", "Zamba2ForCausalLM", "GPT2LMHeadModel",
                                  "LlavaForConditionalGeneration"])
def test_unsupported_architectures_are_refused_by_name_before_any_field(arch):
    # no other field at all: the message is about the class, never a missing field
    with pytest.raises(ValueError, match="not supported") as err:
        ModelConfig.from_hf({"architectures": [arch]})
    assert repr(arch) in str(err.value) and SUPPORTED in str(err.value) and "missing" not in str(err.value)
    # with MoE fields that the old generic "...Moe" path accepted (and counted wrong), still refused
    with pytest.raises(ValueError, match="not supported"):
        ModelConfig.from_hf({"architectures": [arch], "hidden_size": 64, "num_attention_heads": 4,
                             "num_hidden_layers": 2, "vocab_size": 10, "intermediate_size": 8, "num_experts": 4,
                             "num_experts_per_tok": 2, "moe_intermediate_size": 8})
    with pytest.raises(ValueError, match="causal"):
        ModelConfig.from_hf({"architectures": ["BertForMaskedLM"]})


def _raw(name):
    folder = CONFIG_DIR if name in list_configs() else FAMILY_CONFIG_DIR
    return json.loads((folder / f"{name}.json").read_text())


BAD_FIELDS = [
    ("AI21-Jamba-1.5-Mini", {"attn_layer_offset": 8}, ValueError,
     r"\['attn_layer_offset'\] \(8\) must be smaller than attn_layer_period \(8\)"),
    ("AI21-Jamba-1.5-Mini", {"expert_layer_period": 0}, ValueError, r"\['expert_layer_period'\] must be >= 1, got 0"),
    ("AI21-Jamba-1.5-Mini", {"mamba_dt_rank": "half"}, TypeError, r"\['mamba_dt_rank'\] must be a whole number"),
    ("Falcon-H1-0.5B-Instruct", {"mamba_d_head": 32}, ValueError,
     r"\['mamba_d_head'\] x mamba_n_heads \(32 x 24\) must be mamba_d_ssm \(1536\)"),
    ("Falcon-H1-0.5B-Instruct", {"projectors_bias": "no"}, TypeError, r"\['projectors_bias'\] must be true or false"),
    ("Llama-3.1-8B", {"num_key_value_heads": 0}, ValueError, r"\['num_key_value_heads'\] must be >= 1, got 0"),
    ("Llama-3.1-8B", {"head_dim": 0}, ValueError, r"\['head_dim'\] must be >= 1, got 0"),
    ("Llama-3.1-8B", {"hidden_size": None}, TypeError, r"\['hidden_size'\] must be a whole number, got null"),
    ("Llama-3.1-8B", {"hidden_size": 4096.5}, TypeError, r"\['hidden_size'\] must be a whole number, got 4096.5"),
    ("Llama-3.1-8B", {"tie_word_embeddings": "false"}, TypeError,
     r"\['tie_word_embeddings'\] must be true or false .*'false' \(a string\)"),
    ("Llama-3.1-8B", {"max_position_embeddings": "131072"}, TypeError,
     r"\['max_position_embeddings'\] must be a whole number, got '131072'"),
    ("Llama-3.1-8B", {"rms_norm_eps": "1e-5"}, TypeError, r"\['rms_norm_eps'\] must be a number, got '1e-5'"),
    ("Llama-3.1-8B", {"rms_norm_eps": -1}, ValueError, r"\['rms_norm_eps'\] must be a finite number > 0, got -1"),
    ("Llama-3.1-8B", {"rope_theta": "big"}, TypeError, r"\['rope_theta'\] must be a real number"),
    ("DeepSeek-V3", {"first_k_dense_replace": -1}, ValueError, r"\['first_k_dense_replace'\] must be >= 0, got -1"),
    ("DeepSeek-V3", {"n_shared_experts": -2}, ValueError, r"\['n_shared_experts'\] must be >= 0, got -2"),
    ("DeepSeek-V3", {"q_lora_rank": 0}, ValueError, r"\['q_lora_rank'\] must be >= 1, got 0"),
    ("DeepSeek-V3", {"moe_layer_freq": 0}, ValueError, r"\['moe_layer_freq'\] must be >= 1, got 0"),
    ("DeepSeek-V3", {"kv_lora_rank": "512"}, TypeError, r"\['kv_lora_rank'\] must be a whole number, got '512'"),
    ("Qwen3-235B-A22B", {"num_experts_per_tok": 200}, ValueError,
     r"\['num_experts_per_tok'\] \(200\) must be at most the number of routed experts \(128\)"),
    ("Qwen3-235B-A22B", {"decoder_sparse_step": 0}, ValueError, r"\['decoder_sparse_step'\] must be >= 1, got 0"),
    ("Mixtral-8x7B-v0.1", {"num_experts": 4}, ValueError, r"'num_experts' \(4\) and 'num_local_experts' \(8\)"),
    ("gpt-oss-120b", {"layer_types": ["full_attention"] * 35}, ValueError,
     r"\['layer_types'\] must have one entry per layer \(num_hidden_layers = 36\), got 35"),
    ("gpt-oss-120b", {"layer_types": ["local"] * 36}, ValueError, r"\['layer_types'\] entries must be one of .*'local'"),
    ("ERNIE-4.5-21B-A3B-PT", {"moe_layer_end_index": [27]}, TypeError, r"\['moe_layer_end_index'\] must be a layer index"),
    ("OLMoE-1B-7B-0924", {"head_dim": 64}, ValueError, r"\['head_dim'\] must be hidden_size / num_attention_heads"),
]


@pytest.mark.parametrize(("name", "change", "error", "message"), BAD_FIELDS,
                         ids=[f"{n}-{next(iter(c))}" for n, c, _, _ in BAD_FIELDS])
def test_every_field_that_changes_a_number_is_checked(name, change, error, message):
    with pytest.raises(error, match=message):
        ModelConfig.from_hf({**_raw(name), **change})


def test_wrapped_text_config_errors_name_the_path():
    raw = _raw("gemma-3-27b-it")
    with pytest.raises(TypeError, match=r"config\['text_config'\]\['num_key_value_heads'\] must be a whole number"):
        ModelConfig.from_hf({**raw, "text_config": {**raw["text_config"], "num_key_value_heads": "16"}})
    with pytest.raises(TypeError, match=r"config\['text_config'\] must be a JSON object"):
        ModelConfig.from_hf({**raw, "text_config": [1]})
    with pytest.raises(ValueError, match="bidirectional"):
        ModelConfig.from_hf({**raw, "text_config": {**raw["text_config"], "use_bidirectional_attention": True}})


def test_a_file_that_is_not_utf8_or_not_json_is_named(tmp_path):
    bad = tmp_path / "latin1.json"
    bad.write_bytes('{"architectures": ["LlamaForCausalLM"], "_name": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.json' is not UTF-8"):
        ModelConfig.from_json(bad)
    broken = tmp_path / "broken.json"
    broken.write_text('{"architectures": ["LlamaForCausalLM"],}')
    with pytest.raises(ValueError, match=r"broken\.json' is not valid JSON: .* line 1"):
        ModelConfig.from_json(broken)
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"list\.json' must be a JSON object"):
        ModelConfig.from_json(listed)
    with pytest.raises(ValueError, match="config.json text is not valid JSON"):
        ModelConfig.from_text("{")
    assert ModelConfig.from_text(json.dumps(_raw("Qwen3-8B"))).params() == load_config("Qwen3-8B").params()


# -----------------------------------------------------------------------------
# KV cache per layer kind, by hand


def test_kv_cache_per_layer_kind_by_hand():
    # gpt-oss-120b: 36 layers alternate a 128-token window and full attention; 8 KV heads of 64
    g = load_config("gpt-oss-120b")
    per_layer = 2 * 8 * 64 * 2  # K and V, bf16
    assert g.kinds.count("sliding_attention") == g.kinds.count("full_attention") == 18 and g.sliding_window == 128
    assert g.kv_cache_bytes(100_000) == 18 * per_layer * 100_000 + 18 * per_layer * 128
    assert g.kv_cache_bytes(100) == 36 * per_layer * 100  # below the window every layer holds everything
    groups = {x.kind: x for x in g.kv_cache_breakdown(100_000)}
    assert (groups["sliding_attention"].tokens, groups["sliding_attention"].window) == (128, 128)
    assert groups["full_attention"].bytes == 18 * per_layer * 100_000
    # gemma-3-27b-it: 52 layers with a 1,024-token window, 10 global; 16 KV heads of 128
    m = load_config("gemma-3-27b-it")
    per_layer = 2 * 16 * 128 * 2
    assert m.kv_cache_bytes(128_000) == 52 * per_layer * 1024 + 10 * per_layer * 128_000
    # Llama 4 Scout: every 4th layer global (NoPE), the other 36 chunked attention over 8,192-token chunks
    s = load_config("Llama-4-Scout-17B-16E")
    per_layer = 2 * 8 * 128 * 2
    assert s.kinds.count("chunked_attention") == 36 and s.attention_chunk_size == 8192
    assert s.kv_cache_bytes(1_000_000) == 36 * per_layer * 8192 + 12 * per_layer * 1_000_000
    # MLA: the latent and the RoPE key, whatever the head count
    d = load_config("DeepSeek-V2-Lite")
    assert d.kv_cache_bytes_per_token("bf16") == 27 * (512 + 64) * 2
    assert [x.kind for x in d.kv_cache_breakdown(10)] == ["mla"]


def test_chunked_attention_reads_only_its_chunk():
    s = load_config("Llama-4-Scout-17B-16E")
    chunked = s.kinds.index("chunked_attention")
    assert [s.attended_keys(chunked, c) for c in (1, 8192, 8193, 16_384, 16_385)] == [1, 8192, 1, 8192, 1]
    assert s.attended_keys(3, 8193) == 8193  # layer 3 is global
    per_key = 2 * 40 * (128 + 128)
    assert s.attention_flops_per_token(8193) == per_key * (36 * 1 + 12 * 8193)


@pytest.mark.parametrize("name", ["gpt-oss-120b", "Llama-4-Scout-17B-16E", "Mistral-7B-v0.1", "Qwen3-8B", "DeepSeek-V3"])
def test_prefill_attention_is_the_sum_over_positions(name):
    c = load_config(name)
    for prompt in (1, 127, 128, 129, 5000, 20_000):
        brute = sum(c.attention_flops_per_token(t) for t in range(1, prompt + 1))
        assert c.prefill_attention_flops(prompt) == brute
    assert c.prefill_flops(300) == sum(c.flops_per_token(t) for t in range(1, 301))


# -----------------------------------------------------------------------------
# multi-head latent attention: what is cached, and its FLOPs in both forms


def test_mla_absorbed_and_expanded_forms_by_hand():
    d = load_config("DeepSeek-V3")  # 128 heads; kv_lora_rank 512, qk_rope 64, qk_nope 128, v 128
    assert d.kv_cache_elements_per_token(0) == 512 + 64 == 576
    assert d.kv_cache_elements_per_token(0, mla="expanded") == 128 * (128 + 64 + 128) == 40_960
    assert d.attention_flops_per_key() == 2 * 128 * (576 + 512) == 278_528  # scores over 576, sums of 512-wide latents
    assert d.attention_flops_per_key("expanded") == 2 * 128 * (192 + 128) == 81_920
    # decode attention intensity at any context, BF16 cache: FLOPs per key / bytes per key
    assert d.attention_flops_per_key() / (576 * 2) == pytest.approx(241.8, abs=0.05)
    assert d.attention_flops_per_key("expanded") / (40_960 * 2) == 1.0
    # the old mix (expanded FLOPs over latent bytes) gave 81,920 / 1,152 = 71.1 ops/byte for neither kernel
    from chapter2 import roofline

    est = roofline.decode(d, 4096, gpu="H100-SXM", dtype="bf16")
    assert est.attention_intensity == pytest.approx(278_528 * 4096 / (576 * 2 * 4096))
    with pytest.raises(ValueError, match="mla"):
        d.attention_flops_per_key("naive")
    # GQA models ignore the form
    llama = load_config("Llama-3.1-8B")
    assert llama.attention_flops_per_key("expanded") == llama.attention_flops_per_key() == 2 * 32 * 256


def test_roofline_prefill_sums_chunked_attention_exactly():
    """Llama 4's chunked layers restart at every chunk: the prefill sum is not one affine piece."""
    from chapter2 import roofline

    s = load_config("Llama-4-Scout-17B-16E")
    prompt = 20_000
    brute = sum(s.flops_per_token(t) for t in range(1, prompt + 1))
    assert roofline.prompt_flops(s, prompt, logits="all") == brute
    est = roofline.prefill(s, prompt)
    assert est.attention_flops == sum(s.attention_flops_per_token(t) for t in range(1, prompt + 1))


# -----------------------------------------------------------------------------
# the calculators: shipped configs or a pasted config.json


def test_calculators_read_a_pasted_config_like_the_shipped_one():
    from chapter2 import calculators

    text = (CONFIG_DIR / "gpt-oss-120b.json").read_text()
    for name, extra in (("kv_cache", {"context": "100000"}), ("roofline", {}), ("decode_batching", {"batch": "8"}),
                        ("model_config", {})):
        shipped = calculators.compute(name, {"model": "gpt-oss-120b", **extra})
        pasted = calculators.compute(name, {"model": "Llama-3.1-8B", "config_json": text, **extra})  # text wins
        assert {k: v for k, v in pasted.items() if k != "model_info"} == \
               {k: v for k, v in shipped.items() if k != "model_info"}, name
        assert pasted["model_info"].startswith("pasted config.json: gpt-oss (GptOssForCausalLM), 117B parameters")
    kv = calculators.compute("kv_cache", {"config_json": text, "context": "100000"})
    # 18 full layers hold 100,000 tokens, 18 sliding layers 128, each 2 x 8 x 64 values of 2 bytes
    assert kv["layers"] == ("18 full attention x 100,000 tokens x 1,024 values: 3.69 GB; "
                            "18 sliding window (128) x 128 tokens x 1,024 values: 4.72 MB")
    assert kv["total"].startswith(f"{18 * 2048 * (100_000 + 128) / 1e9:.3g} GB")
    assert "MXFP4" in kv["note"] and kv["defaults"].startswith("none")


def test_pasted_config_reports_its_family_defaults_and_errors_inline():
    from chapter2 import calculators

    minimal = json.dumps({"architectures": ["Gemma3ForCausalLM"], "hidden_size": 1152, "num_hidden_layers": 26,
                          "num_attention_heads": 4, "num_key_value_heads": 1, "intermediate_size": 6912})
    out = calculators.compute("model_config", {"config_json": minimal})
    assert out["model_info"].startswith("pasted config.json: Gemma 3 (Gemma3ForCausalLM)")
    assert "vocab_size = 262208" in out["defaults"] and "head_dim = 256" in out["defaults"]
    assert "Gemma3TextConfig defaults" in out["defaults"]
    assert "26 layers: 4 full attention + 22 sliding window (4,096 tokens)" in out["attention"]  # layers 5, 11, 17, 23

    def error(name, raw):
        return json.loads(calculators.compute_json(name, json.dumps(raw)))

    for name in ("kv_cache", "roofline", "decode_batching", "model_config", "moe_coverage"):
        bad = error(name, {"config_json": "{\"architectures\": [\"FalconForCausalLM\"]"})
        assert (bad["ok"], bad["field"]) == (False, "config_json") and "not valid JSON" in bad["message"]
        bad = error(name, {"config_json": "{\"architectures\": [\"FalconForCausalLM\"]}"})
        # one line naming the class and a link to the list of families, not the list itself (issue 29)
        assert bad["field"] == "config_json" and "FalconForCausalLM is of none of the 49 families" in bad["message"]
        assert bad["link"]["href"] == "llm-architecture/#supported-families" and "Qwen3" not in bad["message"]
        bad = error(name, {"config_json": json.dumps({**_raw("Llama-3.1-8B"), "tie_word_embeddings": "false"})})
        assert bad["field"] == "config_json" and "tie_word_embeddings" in bad["message"]
        assert error(name, {"config_json": "   "})["ok"]  # blank: the select decides
    assert error("kv_cache", {"model": "GPT-5"})["field"] == "model"
    assert error("kv_cache", {"config_json": "x" * 40_001})["field"] == "config_json"
    dense = error("moe_coverage", {"config_json": (CONFIG_DIR / "Qwen3-8B.json").read_text()})
    assert dense["field"] == "config_json" and "dense" in dense["message"]


def test_moe_coverage_takes_e_and_k_from_a_config():
    from chapter2 import calculators, moe

    typed = calculators.compute("moe_coverage")
    assert typed["source"] == "typed: E = 128, E_tok = 8"
    kimi = calculators.compute("moe_coverage", {"model": "Kimi-K2-Instruct", "n_tokens": "64"})
    assert kimi["source"].startswith("Kimi-K2-Instruct: E = 384, E_tok = 8 (in 60 of its 61 layers")
    assert kimi["touched"] == f"{384 * (1 - (1 - 8 / 384) ** 64):.1f} of 384"
    assert kimi["touched"] == f"{moe.expected_experts_touched(384, 8, 64):.1f} of 384"


def test_model_config_calculator_breakdown():
    from chapter2 import calculators

    out = calculators.compute("model_config", {"model": "gpt-oss-120b"})
    # gpt-oss model card: 116.83B total, 5.13B active without the embedding
    assert out["params"].startswith("116,829,156,672 total, 5,711,982,912 active per token (5.13B without")
    assert "routed experts 115B (3.58B active)" in out["parts"]
    assert dict(out["bars"])["routed experts"] == pytest.approx(36 * 128 * (2880 * 2 * 2880 + 2 * 2880 + 2880 * 2880 + 2880) / 1e9,
                                                                 rel=1e-3)
    ds = calculators.compute("model_config", {"model": "DeepSeek-V3"})
    assert "multi-head latent attention caches a 512-wide latent + a 64-wide RoPE key per layer" in ds["attention"]
    assert ds["kv"] == "70.3 kB (35,136 values)"  # 61 x 576


def test_hybrid_cache_by_hand():
    # Nemotron 3 Nano: 6 attention layers of 2 KV heads x 128 grow per token; 23 Mamba-2 layers keep a
    # conv state of (64 x 64 + 2 x 8 groups x 128) channels x 4 taps (bf16) and a 64 x 64 x 128 state (fp32)
    nano = load_config("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert nano.kv_cache_bytes_per_token("bf16") == 6 * 2 * 2 * 128 * 2 == 6144
    state = 23 * ((64 * 64 + 2 * 8 * 128) * 4 * 2 + 64 * 64 * 128 * 4)
    assert nano.state_bytes("bf16") == state == 49_364_992
    for context in (1, 131_072):
        assert nano.kv_cache_bytes(context, 2, "bf16") == 2 * (6144 * context + state)
    mamba = next(g for g in nano.kv_cache_breakdown(4096) if g.kind == "mamba2")
    assert (mamba.layers, mamba.per_token, mamba.bytes) == (23, 0, state)
    # Qwen3-Next-80B-A3B: 12 full-attention layers (2 KV heads x 256), 36 gated DeltaNet layers with a conv
    # state of (2 x 16 x 128 + 32 x 128) channels x 4 taps and a 32 x 128 x 128 state (fp32)
    nxt = load_config("Qwen3-Next-80B-A3B-Instruct")
    assert nxt.kv_cache_bytes_per_token("bf16") == 12 * 2 * 2 * 256 * 2
    assert nxt.state_bytes("bf16") == 36 * ((2 * 16 * 128 + 32 * 128) * 4 * 2 + 32 * 128 * 128 * 4)


def test_jamba_and_falcon_h1_by_hand():
    """Jamba 1.5 Mini and Falcon-H1-0.5B from their weight shapes written out, and their caches."""
    jamba = load_config("AI21-Jamba-1.5-Mini")
    h, v, inner, n, rank, k, f = 4096, 65536, 2 * 4096, 16, 256, 4, 14336
    assert jamba.kinds.count("full_attention") == 4 and jamba.kinds.count("mamba1") == 28  # layers 4, 12, 20, 28
    assert jamba.moe_layers == tuple(range(1, 32, 2))
    mamba1 = (h * 2 * inner + inner * k + inner + inner * (rank + 2 * n) + rank * inner + inner + inner * n + inner
              + inner * h + rank + 2 * n)  # in_proj, conv, x_proj, dt_proj, A_log, D, out_proj, dt/B/C norms
    attention = h * 32 * 128 + 2 * h * 8 * 128 + 32 * 128 * h
    mlp = 3 * h * f
    common = 2 * v * h + 32 * 2 * h + h + 4 * attention + 28 * mamba1 + 16 * mlp  # untied head; norms
    p = jamba.params()
    assert p.total == common + 16 * (16 * mlp + 16 * h)
    assert p.active == common + 16 * (2 * mlp + 16 * h)
    # cache: 4 layers of 8 KV heads x 128 grow per token; 28 layers keep I x 4 conv inputs (bf16) and I x 16 (fp32)
    assert jamba.kv_cache_bytes_per_token("bf16") == 4 * 2 * 8 * 128 * 2 == 16_384
    state = 28 * (inner * k * 2 + inner * n * 4)
    assert jamba.state_bytes("bf16") == state == 16_515_072
    for context in (1, 262_144):
        assert jamba.kv_cache_bytes(context, 1, "bf16") == 16_384 * context + state
    # Jamba paper (Lieber et al. 2024, arXiv:2403.19887, table 1): 4GB of KV cache at 256K tokens in 16 bits
    assert jamba.kv_cache_bytes_per_token("bf16") * 262_144 == 4 * 2 ** 30
    assert jamba.state_flops_per_token() == 28 * 5 * inner * n

    falcon = load_config("Falcon-H1-0.5B-Instruct")
    h, v, inner, heads, n, k, f, L = 1024, 32784, 1536, 24, 128, 4, 2048, 36
    assert falcon.attention_layers == falcon.state_layers == tuple(range(L))  # both mixers in every layer
    channels = inner + 2 * n  # x, B, C through the conv (one group)
    mamba2 = h * (inner + channels + heads) + channels * k + channels + 3 * heads + inner * h
    attention = h * 8 * 64 + 2 * h * 2 * 64 + 8 * 64 * h
    p = falcon.params()
    assert p.total == p.active == 2 * v * h + L * (attention + mamba2 + 3 * h * f + 2 * h) + h == 521_411_104
    assert falcon.kv_cache_bytes_per_token("bf16") == L * 2 * 2 * 64 * 2 == 18_432
    state = L * (channels * k * 2 + heads * 64 * n * 4)
    assert falcon.state_bytes("bf16") == state == 28_827_648
    for context in (1, 16_384):
        assert falcon.kv_cache_bytes(context, 2, "bf16") == 2 * (18_432 * context + state)
    groups = {g.kind: g for g in falcon.kv_cache_breakdown(100)}
    assert (groups["full_attention"].layers, groups["mamba2"].layers, groups["mamba2"].bytes) == (L, L, state)


def test_a_pasted_hybrid_config_gives_numbers_in_every_model_calculator():
    """Nemotron 3 Nano's and Qwen3-Next's config.json, pasted: every calculator that takes a config answers, and
    the KV cache calculator's total is the attention KV plus the recurrent states (by hand, see above)."""
    from chapter2.calculators import _registry

    nano = (FAMILY_CONFIG_DIR / "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json").read_text()
    nxt = (FAMILY_CONFIG_DIR / "Qwen3-Next-80B-A3B-Instruct.json").read_text()
    lfm2 = (FAMILY_CONFIG_DIR / "LFM2-1.2B.json").read_text()
    m1 = (FAMILY_CONFIG_DIR / "MiniMax-M1.json").read_text()
    lfm2_moe = (FAMILY_CONFIG_DIR / "LFM2-8B-A1B.json").read_text()
    jamba = (FAMILY_CONFIG_DIR / "AI21-Jamba-1.5-Mini.json").read_text()
    falcon = (FAMILY_CONFIG_DIR / "Falcon-H1-0.5B-Instruct.json").read_text()
    # the calculators that read an LLM config.json (others take a diffusion model's config)
    for name in ("kv_cache", "model_config", "model_diagram", "moe_coverage", "roofline", "decode_batching"):
        for text in (nano, nxt, lfm2, m1, lfm2_moe, jamba, falcon):
            if text in (lfm2, falcon) and name == "moe_coverage":  # dense models: refused by name, inline
                with pytest.raises(_registry.FieldError, match=r"\((LFM2|Falcon-H1)\) is a dense model"):
                    _registry.compute(name, {"config_json": text})
                continue
            assert _registry.compute(name, {"config_json": text})
    out = _registry.compute("kv_cache", {"config_json": nano, "context": "32768", "batch": "1"})
    state = 23 * ((64 * 64 + 2 * 8 * 128) * 4 * 2 + 64 * 64 * 128 * 4)
    from chapter2.format import nbytes
    assert out["total"].startswith(nbytes(6144 * 32768 + state))
    assert "23 Mamba-2" in out["layers"] and "hybrid" in out["note"]
    # LFM2-1.2B and MiniMax-M1 (by hand in test_conv_and_lightning_hybrids_by_hand): the states in the model's dtype
    out = _registry.compute("kv_cache", {"config_json": lfm2, "context": "32768", "batch": "1"})
    assert out["total"].startswith(nbytes(12_288 * 32768 + 122_880))
    assert "10 short convolution x 6,144 state values (fixed, convolution state in BF16)" in out["layers"]
    out = _registry.compute("model_config", {"config_json": m1, "context": "131072"})
    assert "70 lightning attention (no KV cache: a fixed state)" in out["attention"]
    assert "70 lightning attention x 1,048,576 state values (fixed, recurrent state in BF16)" in out["layers"]
    assert out["model_info"].startswith("pasted config.json: MiniMax (MiniMaxM1ForCausalLM), 456B parameters")
    # Jamba 1.5 Mini and Falcon-H1-0.5B (by hand in test_jamba_and_falcon_h1_by_hand)
    out = _registry.compute("kv_cache", {"config_json": jamba, "context": "32768", "batch": "1"})
    assert out["total"].startswith(nbytes(16_384 * 32768 + 16_515_072)) and "28 Mamba-1" in out["layers"]
    out = _registry.compute("kv_cache", {"config_json": falcon, "context": "16384", "batch": "1"})
    assert out["total"].startswith(nbytes(18_432 * 16384 + 28_827_648))
    assert "36 full attention" in out["layers"] and "36 Mamba-2" in out["layers"]
    out = _registry.compute("model_config", {"config_json": falcon})
    assert "a parallel hybrid: each of its 36 layers runs attention and Mamba-2 side by side" in out["model_info"]
    assert "36 full attention (each with a Mamba-2 mixer beside it" in out["attention"]


def test_conv_and_lightning_hybrid_configs_are_checked():
    """A bad layer pattern or a MiniMax option transformers does not build is refused, naming the key and value."""
    for raw, message in (
            ({"architectures": ["MiniMaxM1ForCausalLM"], "num_hidden_layers": 2, "attn_type_list": [0, 2]},
             r"config\['attn_type_list'\] must give 0 \(lightning\) or 1 \(softmax attention\).*\[0, 2\]"),
            ({"architectures": ["MiniMaxForCausalLM"], "sliding_window": 4096},
             r"config\['sliding_window'\] is 4096: not read for MiniMax"),
            ({"architectures": ["MiniMaxM1ForCausalLM"], "shared_intermediate_size": 1024},
             r"config\['shared_intermediate_size'\] is 1024: not read for MiniMax.*shared MLP"),
            ({"architectures": ["Lfm2ForCausalLM"], "num_hidden_layers": 2, "layer_types": ["conv", "mamba"]},
             r"config\['layer_types'\] must list 'conv' or 'full_attention' for each of the 2 layers"),
            ({"architectures": ["Lfm2ForCausalLM"], "num_hidden_layers": 2, "full_attn_idxs": [5]},
             r"config\['full_attn_idxs'\] entries must be in \[0, 1\], got 5"),
            ({"architectures": ["Lfm2ForCausalLM"], "block_ffn_dim_multiplier": "1.0"},
             r"config\['block_ffn_dim_multiplier'\] must be a number > 0 or null, got '1.0'")):
        with pytest.raises(ValueError, match=message):
            ModelConfig.from_hf(raw)
    # LFM2's MLP width: without a multiplier, 2/3 of intermediate_size and no rounding (as Lfm2MLP builds it);
    # block_ff_dim, the older name, wins over intermediate_size
    lfm2 = {"architectures": ["Lfm2ForCausalLM"], "intermediate_size": 300}
    assert ModelConfig.from_hf({**lfm2, "block_ffn_dim_multiplier": None}).intermediate_size == 200
    assert ModelConfig.from_hf(lfm2).intermediate_size == 256  # 200 rounded up to a multiple of 256
    assert ModelConfig.from_hf({**lfm2, "block_ff_dim": 1200, "block_multiple_of": 100}).intermediate_size == 800


def test_conv_and_lightning_hybrids_by_hand():
    """LFM2-1.2B and MiniMax-M1 from their weight shapes written out: counts, the cache at two contexts, decode FLOPs."""
    # LFM2-1.2B: d = 2,048, 16 layers (attention at 2, 5, 8, 10, 12, 14), 32 heads of 64 with 8 KV heads, q/k norms;
    # a short-conv layer: in_proj d -> 3 d, a depthwise conv of 3 taps, out_proj d -> d; MLP 12,288 narrowed to
    # 2/3 = 8,192 in every layer; 65,536 tokens, embedding tied; two norms per layer and a final one
    lfm = load_config("LFM2-1.2B")
    d, hd, v, f = 2048, 64, 65_536, 8192
    conv = 3 * d * d + d * 3 + d * d
    attn = d * 32 * hd + 2 * d * 8 * hd + 32 * hd * d + 2 * hd
    total = v * d + 10 * conv + 6 * attn + 16 * 3 * d * f + 16 * 2 * d + d
    p = lfm.params()
    assert lfm.intermediate_size == 8192 and p.total == p.active == total
    # the LFM2 model cards' table: LFM2-1.2B, 1,170,340,608 parameters (https://huggingface.co/LiquidAI/LFM2-1.2B)
    assert total == 1_170_340_608
    # cache: 6 attention layers of 8 KV heads x 64 grow per token; 10 conv layers keep 3 inputs of 2,048 channels
    assert lfm.kv_cache_bytes_per_token("bf16") == 6 * 2 * 8 * hd * 2 == 12_288
    assert lfm.state_bytes("bf16") == 10 * d * 3 * 2 == 122_880
    for context in (1, 32_768):
        assert lfm.kv_cache_bytes(context, 1, "bf16") == 12_288 * context + 122_880
        # decode: every weight but the norms is a multiply (the tied table once, as the LM head; conv taps too),
        # plus attention over the context in 6 layers; a short convolution keeps no recurrent state to update
        matmul = total - (16 * 2 * d + d + 6 * 2 * hd)
        assert lfm.flops_per_token(context) == 2 * matmul + 6 * 2 * 32 * (hd + hd) * context
    # LFM2-8B-A1B (https://huggingface.co/LiquidAI/LFM2-8B-A1B): "8.3B" total, "1.5B" active; 8.34B and 1.56B here
    # (18 conv and 6 attention layers of d = 2,048; 2 dense MLPs of 7,168, then 4 of 32 experts of 1,792 in 22 layers)
    moe = load_config("LFM2-8B-A1B")
    d = 2048
    total = v * d + 18 * (4 * d * d + 3 * d) + 6 * attn + 2 * 3 * d * 7168 + 22 * (32 * 3 * d * 1792 + 32 * d) \
        + 24 * 2 * d + d
    p = moe.params()
    assert p.total == total and p.active == total - 22 * 28 * 3 * d * 1792
    assert round(p.total / 1e8) == 83 and int(p.active / 1e8) == 15
    assert moe.kv_cache_bytes(4096, 1, "bf16") == 6 * 2 * 8 * hd * 2 * 4096 + 18 * d * 3 * 2
    # MiniMax-M1: d = 6,144, 80 layers, softmax attention every 8th (10 layers), lightning in 70: 64 heads of 128;
    # qkv_proj d -> 3 x 8,192, output_gate d -> 8,192, an RMSNorm over 8,192, out_proj 8,192 -> d; 32 experts of
    # 9,216 (top 2) in every layer; 200,064 tokens, LM head untied
    m1 = load_config("MiniMax-M1")
    d, H, hd, v, f, E = 6144, 64, 128, 200_064, 9216, 32
    light = 3 * d * H * hd + d * H * hd + H * hd * d + H * hd
    attn = d * H * hd + 2 * d * 8 * hd + H * hd * d
    expert = 3 * d * f
    total = 2 * v * d + 70 * light + 10 * attn + 80 * (E * expert + E * d) + 80 * 2 * d + d
    p = m1.params()
    assert p.total == total and p.active == total - 80 * (E - 2) * expert
    # the MiniMax-M1 README (https://github.com/MiniMax-AI/MiniMax-M1): "a total of 456 billion parameters with
    # 45.9 billion parameters activated per token"; the 45.9B counts neither the embedding table nor the LM head
    assert round(p.total / 1e9) == 456 and round((p.active - 2 * v * d) / 1e8) == 459
    # cache: 10 attention layers of 8 KV heads x 128; 70 lightning layers keep a 128 x 128 state per head, kept by
    # transformers in the model's dtype (bf16 here)
    assert m1.kv_cache_bytes_per_token("bf16") == 10 * 2 * 8 * hd * 2 == 40_960
    assert m1.state_bytes("bf16") == 70 * H * hd * hd * 2 == 146_800_640
    assert m1.state_bytes("fp32") == 2 * 146_800_640
    for context in (1, 1_000_000):
        assert m1.kv_cache_bytes(context, 2, "bf16") == 2 * (40_960 * context + 146_800_640)
        # decode: the matmuls of what a token reads (2 of 32 experts, both embedding tables' worth: the LM head),
        # attention over the context in 10 layers, and each lightning state's decay, update and read (5 per number)
        matmul = v * d + 70 * (light - H * hd) + 10 * attn + 80 * (2 * expert + E * d)
        assert m1.flops_per_token(context) == 2 * matmul + 10 * 2 * H * (hd + hd) * context + 70 * 5 * H * hd * hd


# -----------------------------------------------------------------------------
# Whisper, the encoder-decoder (section 2.1)


def test_whisper_large_v3_by_hand():
    """whisper-large-v3 from its weight shapes written out (d = 1,280, 32 + 32 layers, 128 mel bins, FFN 5,120,
    1,500 encoder positions, 448 decoder positions, 51,866 tokens, LM head tied), its cache at two contexts, and
    the FLOPs of each part."""
    w = load_config("whisper-large-v3")
    d, f, v, mel, S, T, L = 1280, 5120, 51_866, 128, 1500, 448, 32
    attention = 4 * d * d + 3 * d  # q, k, v, out_proj; no bias on k
    mlp = d * f + f + f * d + d  # fc1, fc2 with biases
    encoder = (mel * d * 3 + d) + (d * d * 3 + d) + S * d + L * (attention + mlp + 2 * 2 * d) + 2 * d
    decoder = v * d + T * d + L * (2 * attention + mlp + 3 * 2 * d) + 2 * d
    p = w.params()
    assert w.encoder_params() == encoder
    assert p.total == encoder + decoder
    # the published total: 1,543,490,560 (the Hub's count for openai/whisper-large-v3's model.safetensors);
    # the paper (Radford et al. 2022, arXiv:2212.04356, table 1) rounds Large to 1550M
    assert p.total == 1_543_490_560 and round(p.total / 1e7) == 154 and abs(p.total - 1550e6) < 1e7
    # a decoded token reads the decoder, less cross-attention's k and v (applied once to the encoder output)
    assert p.active == decoder - L * (2 * d * d + d)
    assert p.matmul_active == v * d + L * (4 * d * d + 2 * d * d + 2 * d * f)
    # cache: self-attention K and V grow per token; cross-attention K and V of 1,500 positions are fixed
    cross = L * S * 2 * d * 2
    assert w.cross_kv_bytes("bf16") == cross == 245_760_000
    assert w.kv_cache_bytes_per_token("bf16") == L * 2 * d * 2 == 163_840
    for context in (1, 448):
        assert w.kv_cache_bytes(context, 2, "bf16") == 2 * (163_840 * context + cross)
    assert w.kv_cache_bytes(448) == 319_160_320
    groups = {g.kind: g for g in w.kv_cache_breakdown(100)}
    assert (groups["cross_attention"].tokens, groups["cross_attention"].bytes) == (S, cross)
    with pytest.raises(ValueError, match=r"context must be at most max_target_positions \(448\).*got 449"):
        w.kv_cache_bytes(449)
    # FLOPs: the encoder once per 30 s (conv stem over 3,000 then 1,500 frames, 32 layers over 1,500
    # positions, bidirectional attention at 4 d per key); cross K/V once; the decoder per token
    assert w.encoder_flops() == (2 * 3000 * 3 * mel * d + 2 * S * 3 * d * d
                                 + L * (S * 2 * (4 * d * d + 2 * d * f) + 4 * d * S * S))
    assert w.cross_kv_flops() == L * S * 2 * 2 * d * d
    for context in (4, 448):
        assert w.flops_per_token(context) == 2 * p.matmul_active + L * 4 * d * (context + S)
    P = 4  # <|startoftranscript|><|en|><|transcribe|><|notimestamps|>
    assert w.prefill_flops(P) == (w.encoder_flops() + w.cross_kv_flops()
                                  + sum(w.flops_per_token(i) for i in range(1, P + 1)))


def test_whisper_config_is_checked_and_shown_in_the_calculator():
    from chapter2 import calculators
    from chapter2.format import nbytes

    raw = _raw("whisper-large-v3")
    with pytest.raises(ValueError, match=r"config\['decoder_attention_heads'\] \(7\) must divide d_model \(1280\)"):
        ModelConfig.from_hf({**raw, "decoder_attention_heads": 7})
    with pytest.raises(TypeError, match=r"config\['max_source_positions'\] must be a whole number, got '1500'"):
        ModelConfig.from_hf({**raw, "max_source_positions": "1500"})
    with pytest.raises(ValueError, match=r"'num_hidden_layers' \(24\) and 'encoder_layers' \(32\)"):
        ModelConfig.from_hf({**raw, "num_hidden_layers": 24})
    out = calculators.compute("model_config", {"config_json": json.dumps(raw), "context": "131072"})
    assert out["model_info"].startswith("pasted config.json: Whisper (WhisperForConditionalGeneration), 1.54B")
    assert out["params"].startswith("1,543,490,560 total")
    assert "audio encoder 637M (0 active)" in out["parts"]
    assert out["layers"].startswith("Context capped at 448 tokens, not the 131,072 asked: Whisper's decoder holds "
                                    "at most 448 (max_target_positions")
    assert out["layers"].endswith(f"total {nbytes(163_840 * 448 + 245_760_000)}")
    assert "once per 30 s of audio" in out["when"] and "2.27 TFLOPs" in out["when"]


# -----------------------------------------------------------------------------
# multimodal wrappers: the vision tower beside the language model


def test_qwen2_5_vl_7b_by_hand():
    """Qwen2.5-VL-7B: a Qwen2-style language model (q, k, v biases, 28 layers of 28 query and 4 KV heads of 128) and
    a 32-block vision tower of width 1,280 whose merger maps 4 neighbouring patches to the language model's 3,584."""
    q = load_config("Qwen2.5-VL-7B-Instruct")
    h, v, layers, ff, nq, nkv, d = 3584, 152_064, 28, 18_944, 28, 4, 128
    lm = 2 * v * h + h + layers * (h * nq * d + nq * d + 2 * (h * nkv * d + nkv * d) + nq * d * h + 3 * h * ff + 2 * h)
    assert q.params().total == q.params().active == lm
    w, wf, depth, merged = 1280, 3420, 32, 4 * 1280
    tower = (3 * 2 * 14 * 14 * w  # the 3-D patch conv (2 frames x 14 x 14 pixels x 3 channels), no bias
             + depth * (2 * w + 3 * w * w + 3 * w + w * w + w + 3 * w * wf + 2 * wf + w)  # RMSNorms, qkv, proj, MLP
             + w + merged * merged + merged + merged * h + h)  # the merger: RMSNorm, two biased layers
    assert q.vision_params == tower
    # 8.29B on its model page (https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct): language model and tower
    assert round((lm + tower) / 1e7) == 829
    per_token = layers * 2 * nkv * d * 2  # K and V, bf16
    for context in (1, 32_768):
        assert q.kv_cache_bytes(context, 1, "bf16") == per_token * context
    assert q.wrapper == "Qwen2_5_VLForConditionalGeneration" and not q.sliding_window_layers


def test_wrappers_report_their_vision_tower_in_the_calculators():
    from chapter2 import calculators

    text = (FAMILY_CONFIG_DIR / "Qwen2.5-VL-7B-Instruct.json").read_text()
    out = calculators.compute("model_config", {"config_json": text})
    q = load_config("Qwen2.5-VL-7B-Instruct")
    assert f"the vision tower and projector: {q.vision_params:,}" in out["params"]
    assert "the vision tower and its projector add 0.677B" in out["model_info"] and "8.29B in all" in out["model_info"]
    assert out["when"].startswith("the vision tower (677M parameters) runs once per image")
    scout = calculators.compute("kv_cache", {"model": "Llama-4-Scout-17B-16E"})
    assert "109B in all" in scout["model_info"]
    with pytest.raises(TypeError, match=r"config\['vision_config'\]\['depth'\] must be a whole number, got '32'"):
        ModelConfig.from_hf({**_raw("Qwen2.5-VL-7B-Instruct"),
                             "vision_config": {**_raw("Qwen2.5-VL-7B-Instruct")["vision_config"], "depth": "32"}})
    with pytest.raises(TypeError, match=r"config\['vision_config'\] must be a JSON object"):
        ModelConfig.from_hf({**_raw("gemma-3-27b-it"), "vision_config": [1]})


def test_gemma3n_e2b_by_hand_and_pasted_into_the_calculators():
    """Gemma 3n E2B: 30 layers of 2,048 (MLPs of 8,192; 8 query and 2 KV heads of 256, q/k norms), each with AltUp
    (4 copies), LAuReL (rank 64) and its per-layer input (256); a per-layer embedding table of 262,144 x 30 x 256;
    the last 10 layers without k and v, reading the keys and values of layers 18 (sliding) and 19 (full)."""
    g = load_config("gemma-3n-E2B-it")
    h, v, layers, ff, nq, nkv, d, shared, p, vp, n, r = 2048, 262_400, 30, 8192, 8, 2, 256, 10, 256, 262_144, 4, 64
    layer = (2 * h * nq * d + d + 4 * h + 3 * h * ff  # q, o, q's norm, four norms, the MLP
             + (h + n * n + n ** 3 + h * n + h) + (2 * h * r + h) + (2 * h * p + h))  # AltUp, LAuReL, per-layer input
    kv = 2 * h * nkv * d + d  # k, v and k's norm (v's norm has no scale)
    lm = (v * h + layers * layer + (layers - shared) * kv + h  # tied head, final norm
          + vp * layers * p + h * layers * p + p + 2 * (n - 1) * h * h)  # PLE table and projection, AltUp in and out
    assert g.params().total == g.params().active == lm == 4_435_182_688
    assert g.per_layer_embedding_params == vp * layers * p
    # the audio tower: a stem (1 -> 128 -> 32 channels, 3 x 3, frequency 128 -> 64 -> 32), 12 Conformer blocks of 1,536
    a, blocks = 1536, 12
    audio = 128 * 9 + 128 + 32 * 128 * 9 + 32 + 32 * 32 * a + blocks * (24 * a * a + 9 * a + a // 8 + 5 * a)
    embedders = (128 * a + 2 * a + a * h) + (128 * 2048 + 2 * 2048 + 2048 * h)
    assert g.vision_params == audio + embedders and g.towers_uncounted
    cached = [i for i in range(20)]  # 4 of them full (every fifth), 16 sliding over 512 tokens
    assert g.kv_cache_bytes_per_token("bf16") == 2 * len(cached) * nkv * d * 2 == 40_960
    for context in (100, 32_768):
        assert g.kv_cache_bytes(context) == (4 * context + 16 * min(context, 512)) * 2 * nkv * d * 2
    from chapter2 import calculators

    text = (FAMILY_CONFIG_DIR / "gemma-3n-E2B-it.json").read_text()
    out = calculators.compute("model_config", {"config_json": text, "context": 32_768})
    assert out["params"].startswith("4,435,182,688 total") and "both embedders" in out["params"]
    assert "mobilenetv5_300m_enc" in out["model_info"] and "not counted" in out["model_info"]
    assert "the last 10 attend over the keys and values" in out["attention"]
    kv_out = calculators.compute("kv_cache", {"config_json": text})
    assert kv_out["per_token"].startswith("41 kB = 2 (K, V) x 20 of 30 layers")
    assert "the last 10 of 30 layers keep no cache" in kv_out["note"] and "16 of 30 layers keep only" in kv_out["note"]
    # a decode step streams every weight but the per-layer embedding table, a lookup like the (tied) token table
    from chapter2 import roofline

    assert roofline.weight_bytes_touched(g, 1, 2) == 2 * (lm - vp * layers * p)


def _qwen3_vl_tower(d, ff, depth, deepstack, out, patch=16, positions=2304):
    """A Qwen3-VL vision tower written out: the 3-D patch conv with a bias, learned positions, `depth` blocks of two
    LayerNorms, fused qkv and proj and a two-layer MLP (all biased), then the merger and one merger per DeepStack
    level, each a LayerNorm and two biased layers mapping 4 neighbouring patches (4 d) to the language model's width."""
    merged = 4 * d
    blocks = depth * (2 * 2 * d + 3 * d * d + 3 * d + d * d + d + 2 * d * ff + ff + d)
    merger = merged * merged + merged + merged * out + out
    return (3 * 2 * patch * patch * d + d + positions * d + blocks + (2 * d + merger)
            + deepstack * (2 * merged + merger))


def test_qwen3_vl_4b_and_30b_a3b_by_hand():
    """Qwen3-VL: a Qwen3 language model (q/k norms of one head's width) inside its wrapper, whose outer
    tie_word_embeddings ties the head; the vision tower with its DeepStack mergers counted beside it."""
    q = load_config("Qwen3-VL-4B-Instruct")
    h, v, layers, ff, nq, nkv, d = 2560, 151_936, 36, 9728, 32, 8, 128
    layer = h * nq * d + 2 * h * nkv * d + nq * d * h + 2 * d + 3 * h * ff + 2 * h
    lm = v * h + layers * layer + h  # tied: one table
    assert q.params().total == q.params().active == lm and q.params().lm_head == 0
    assert q.vision_params == _qwen3_vl_tower(1024, 4096, 24, 3, h)
    # 4.44B in the model's listings (e.g. https://mixpeek.com/model/Qwen/Qwen3-VL-4B-Instruct: "4.44B parameters")
    assert round((lm + q.vision_params) / 1e7) == 444
    for context in (1, 32_768):
        assert q.kv_cache_bytes(context, 1, "bf16") == layers * 2 * nkv * d * 2 * context

    m = load_config("Qwen3-VL-30B-A3B-Instruct")
    h, layers, nq, nkv, e, k, moe_ff = 2048, 48, 32, 4, 128, 8, 768
    attention = h * nq * d + 2 * h * nkv * d + nq * d * h + 2 * d
    expert = 3 * h * moe_ff
    total = 2 * v * h + h + layers * (attention + e * h + e * expert + 2 * h)  # router: e x h per layer
    assert m.params().total == total
    assert m.params().active == total - layers * (e - k) * expert
    assert m.vision_params == _qwen3_vl_tower(1152, 4304, 27, 3, h)
    # 31.07B in the model's listings (https://free2aitools.com/model/qwen/qwen3-vl-30b-a3b-instruct: 31.07;
    # 31.1B elsewhere), 3B active by its name (3.35B with both embedding tables)
    assert round((total + m.vision_params) / 1e7) == 3107 and round(m.params().active / 1e9) == 3
    for context in (1, 32_768):
        assert m.kv_cache_bytes(context, 1, "bf16") == layers * 2 * nkv * d * 2 * context


def test_a_pasted_qwen3_vl_config_gives_numbers_in_the_calculators():
    from chapter2 import calculators

    text = (FAMILY_CONFIG_DIR / "Qwen3-VL-30B-A3B-Instruct.json").read_text()
    m = load_config("Qwen3-VL-30B-A3B-Instruct")
    out = calculators.compute("model_config", {"config_json": text})
    assert f"the vision tower and projector: {m.vision_params:,}" in out["params"]
    assert "the vision tower and its projector add 0.539B" in out["model_info"] and "31.1B in all" in out["model_info"]
    kv = calculators.compute("kv_cache", {"config_json": text, "context": "32768"})
    assert kv["total"].startswith(f"{48 * 2 * 4 * 128 * 2 * 32_768 / 1e9:.3g} GB")


def _pixtral_tower(text_hidden, d=1024, ff=4096, layers=24, patch=14):
    """Pixtral and Mistral 3's projector written out: a bias-free patch conv, an RMSNorm, blocks of two RMSNorms,
    bias-free q, k, v, o and gate, up, down; then an RMSNorm, the 2 x 2 patch merger (4 d -> d) and two bias-free
    layers to the language model's width."""
    tower = 3 * patch * patch * d + d + layers * (2 * d + 4 * d * d + 3 * d * ff)
    return tower + d + 4 * d * d + d * text_hidden + text_hidden * text_hidden


def test_mistral_3_wrappers_by_hand():
    """Mistral 3: a Mistral (Mistral Small 3.1) or Ministral 3 language model, read through text_config, and a Pixtral
    vision tower with its projector beside it."""
    q = load_config("Mistral-Small-3.1-24B-Instruct-2503")
    h, v, layers, ff, nq, nkv, d = 5120, 131_072, 40, 32_768, 32, 8, 128
    layer = h * nq * d + 2 * h * nkv * d + nq * d * h + 3 * h * ff + 2 * h
    lm = 2 * v * h + layers * layer + h  # its own LM head (the checkpoint's; see test_model_families)
    assert q.family_label == "Mistral" and q.params().total == q.params().active == lm
    assert q.vision_params == _pixtral_tower(h)
    # Mistral Small 3.1 model card (https://huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503): 24B
    assert round((lm + q.vision_params) / 1e9) == 24 and round((lm + q.vision_params) / 1e7) == 2401
    for context in (1, 32_768):  # no sliding window: every layer keeps every token
        assert q.kv_cache_bytes(context, 1, "bf16") == layers * 2 * nkv * d * 2 * context

    m = load_config("Ministral-3-3B-Instruct-2512")
    h, layers, ff = 3072, 26, 9216
    layer = h * nq * d + 2 * h * nkv * d + nq * d * h + 3 * h * ff + 2 * h
    lm = v * h + layers * layer + h  # tied by text_config, as Ministral 3's files do
    assert m.family_label == "Ministral 3" and m.params().total == lm and m.params().lm_head == 0
    assert m.vision_params == _pixtral_tower(h)
    # Ministral 3 3B model card (quoted by NVIDIA Megatron-Bridge's Ministral 3 provider): "3.4B Language Model +
    # 0.4B Vision Encoder"
    assert round(lm / 1e8) == 34 and round(m.vision_params / 1e8) == 4
    for context in (1, 32_768):
        assert m.kv_cache_bytes(context, 1, "bf16") == layers * 2 * nkv * d * 2 * context


def test_a_pasted_mistral_3_config_is_read_and_a_foreign_language_model_refused():
    from chapter2 import calculators

    text = (FAMILY_CONFIG_DIR / "Mistral-Small-3.1-24B-Instruct-2503.json").read_text()
    out = calculators.compute("model_config", {"config_json": text})
    q = load_config("Mistral-Small-3.1-24B-Instruct-2503")
    assert f"the vision tower and projector: {q.vision_params:,}" in out["params"]
    assert "the vision tower and its projector add 0.439B" in out["model_info"] and "24B in all" in out["model_info"]
    raw = _raw("Mistral-Small-3.1-24B-Instruct-2503")
    with pytest.raises(ValueError, match=r"config\['text_config'\]\['model_type'\] must name a language model "
                                         r"Mistral3ForConditionalGeneration is read with \(mistral, ministral3\), got 'llama'"):
        ModelConfig.from_hf({**raw, "text_config": {**raw["text_config"], "model_type": "llama"}})
    with pytest.raises(TypeError, match=r"config\['vision_feature_layer'\] must be a layer index or a list of them"):
        ModelConfig.from_hf({**raw, "vision_feature_layer": "last"})
    assert ModelConfig.from_hf({**raw, "vision_feature_layer": [-1, -2]}).vision_params == \
        q.vision_params + 1024 * 5120  # the projector's first layer reads two vision layers


def test_afm_4_5b_by_hand():
    """AFM-4.5B (Arcee): a Llama-like decoder whose MLP is up, ReLU^2, down (no gate), 20 query and 4 KV heads of 128."""
    a = load_config("AFM-4.5B")
    h, v, layers, ff, nq, nkv, d = 2560, 128_005, 36, 18_432, 20, 4, 128
    layer = h * nq * d + 2 * h * nkv * d + nq * d * h + 2 * h * ff + 2 * h
    total = 2 * v * h + layers * layer + h
    assert a.params().total == a.params().active == total
    # 4.619B in the Hub's metadata (4.6B on the model's listings; "4.5 billion" in its card)
    assert round(total / 1e6) == 4619
    for context in (1, 32_768):
        assert a.kv_cache_bytes(context, 1, "bf16") == layers * 2 * nkv * d * 2 * context
    # a decoded token: 2 FLOPs per matmul weight (no gate) and the attention over its context
    matmul = layers * (layer - 2 * h) + v * h
    assert a.flops_per_token(1) == 2 * matmul + layers * nq * 4 * d * 1
    from chapter2 import calculators

    out = calculators.compute("model_config", {"config_json": (FAMILY_CONFIG_DIR / "AFM-4.5B.json").read_text()})
    assert out["model_info"].startswith("pasted config.json: AFM (Arcee) (ArceeForCausalLM), 4.62B parameters")
