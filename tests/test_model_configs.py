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

from chapter2.models import CONFIG_DIR, ModelConfig, describe_architecture, list_configs, load_config

SHIPPED = ["DeepSeek-V3", "Llama-3.1-8B", "Mistral-7B-v0.1", "Mixtral-8x7B-v0.1", "Qwen2-7B", "Qwen3-235B-A22B", "Qwen3-8B"]


def within(value, published, tol=0.01):
    return abs(value - published) / published <= tol


def test_shipped_configs_are_listed_and_sourced():
    assert list_configs() == SHIPPED
    for name in SHIPPED:
        raw = json.loads((CONFIG_DIR / f"{name}.json").read_text())
        source = raw["_source"]
        assert source.startswith("https://huggingface.co/") and source.endswith("/config.json"), name
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


def _hf_meta_model(name):
    torch = require("torch")
    transformers = require("transformers")
    raw = {k: v for k, v in json.loads((CONFIG_DIR / f"{name}.json").read_text()).items() if not k.startswith("_")}
    raw.pop("quantization_config", None)  # FP8 storage: irrelevant to the count, needs a GPU kernel library
    config = transformers.AutoConfig.for_model(**raw)
    with torch.device("meta"):
        return transformers.AutoModelForCausalLM.from_config(config)


@pytest.mark.parametrize("name", SHIPPED)
def test_totals_match_transformers_model_classes(name):
    model = _hf_meta_model(name)
    total = sum(p.numel() for p in model.parameters())
    # DeepSeek-V3's e_score_correction_bias is a buffer in transformers but a stored weight of the checkpoint
    total += sum(b.numel() for n, b in model.named_buffers() if n.endswith("e_score_correction_bias"))
    config = load_config(name)
    assert config.params().total == total
    # active: drop the experts a token does not use, counted from the real module's expert tensors
    if config.is_moe:
        expert_weights = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
        unused = expert_weights * (config.num_experts - config.num_experts_per_tok) // config.num_experts
        assert config.params().active == total - unused


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
    with pytest.raises(ValueError, match="hidden_size"):
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
    assert out["ratio"] == f"{131072 * 131072 * 8 / (2 * 8_030_261_248):.3g} x"
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
    assert f"Llama-3.1-8B {131072 * 131072 / 1e9:.3g} GB" in alt_text("kv_cache_growth")


TINY = dict(vocab_size=100, hidden_size=48, intermediate_size=80, num_hidden_layers=4, num_attention_heads=6,
            num_key_value_heads=2)
VARIANTS = {
    "llama_biases_tied": ("LlamaConfig", dict(attention_bias=True, mlp_bias=True, tie_word_embeddings=True)),
    "qwen2_moe_shared": ("Qwen2MoeConfig", dict(num_experts=6, num_experts_per_tok=2, moe_intermediate_size=16,
                                                shared_expert_intermediate_size=24, decoder_sparse_step=2)),
    "qwen3_moe_dense_layers": ("Qwen3MoeConfig", dict(num_experts=5, num_experts_per_tok=3, moe_intermediate_size=16,
                                                      mlp_only_layers=[0, 2], head_dim=10)),
    "deepseek_v3_small": ("DeepseekV3Config", dict(n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2,
                                                   moe_intermediate_size=16, first_k_dense_replace=1, q_lora_rank=24,
                                                   kv_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=8,
                                                   v_head_dim=6, n_group=2, topk_group=1)),
    "deepseek_v3_no_q_lora": ("DeepseekV3Config", dict(n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1,
                                                       moe_intermediate_size=16, first_k_dense_replace=2,
                                                       q_lora_rank=None, kv_lora_rank=16, qk_rope_head_dim=4,
                                                       qk_nope_head_dim=8, v_head_dim=6, n_group=2, topk_group=1)),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_variant_layouts_match_transformers(variant):
    """Dialects of config.json as transformers 5 writes them, counted against the real module."""
    torch = require("torch")
    transformers = require("transformers")
    cls_name, extra = VARIANTS[variant]
    hf_config = getattr(transformers, cls_name)(**TINY, **extra)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(hf_config)
    config = ModelConfig.from_hf(hf_config.to_dict())
    total = sum(p.numel() for p in model.parameters())  # shared (tied) tensors are counted once
    total += sum(b.numel() for n, b in model.named_buffers() if n.endswith("e_score_correction_bias"))
    assert config.params().total == total
    if config.is_moe:
        routed = sum(p.numel() for n, p in model.named_parameters() if ".experts." in n)
        unused = routed * (config.num_experts - config.num_experts_per_tok) // config.num_experts
        assert config.params().active == total - unused
