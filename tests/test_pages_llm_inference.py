"""Section 2.2's facts, against numbers worked out here from the shipped JSON files and by hand.

Parameter counts are recounted below from config.json with the architecture's
weight shapes written out (not with `ModelConfig.params()`), and checked
against published totals where the model's authors give one.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from chapter2.models import load_config
from chapter2.pages import FACT_REF
from chapter2.pages import llm_inference as li

DATA = Path(__file__).resolve().parents[1] / "src" / "chapter2" / "data"
CONFIGS = {p.stem: json.loads(p.read_text()) for p in sorted((DATA / "configs").glob("*.json"))}
LLAMA = CONFIGS["Llama-3.1-8B"]
QWEN3 = CONFIGS["Qwen3-8B"]
QWEN3_MOE = CONFIGS["Qwen3-235B-A22B"]
TOKENIZER = json.loads((DATA / "tiny_lm" / "tokenizer.json").read_text())

# Llama 3.1 8B's model.safetensors.index.json: "total_size": 16060522496 bytes of BF16 weights
# (https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/model.safetensors.index.json), 2 bytes each.
LLAMA_PUBLISHED_PARAMS = 16_060_522_496 // 2


# Gemma 3 27B's text_config leaves these out; the values are Gemma3TextConfig's defaults in transformers
# (its 262,208-entry vocabulary, one global layer in every 6) and Gemma3Config's tied LM head.
GEMMA3_TEXT_DEFAULTS = {"vocab_size": 262_208, "sliding_window_pattern": 6}


def _count(c: dict) -> tuple[int, int]:
    """(total, active) parameters of a config.json, from the weight shapes of its architecture."""
    arch = c["architectures"][0]
    tied = c.get("tie_word_embeddings", False)
    if arch == "Gemma3ForConditionalGeneration":  # the language model only: text_config, outer tie (default true)
        c, tied = {**GEMMA3_TEXT_DEFAULTS, **c["text_config"]}, c.get("tie_word_embeddings", True)
    elif arch == "Llama4ForConditionalGeneration":  # the language model only: text_config
        c = c["text_config"]
        tied = c.get("tie_word_embeddings", False)
    h, vocab, layers = c["hidden_size"], c["vocab_size"], c["num_hidden_layers"]
    tables = vocab * h * (1 if tied else 2)  # embedding + untied LM head
    total = active = tables + h  # + final RMSNorm
    if arch in ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM"):  # multi-head latent attention (DeepSeek-V2, 2.1)
        nq, rope, nope, v = c["num_attention_heads"], c["qk_rope_head_dim"], c["qk_nope_head_dim"], c["v_head_dim"]
        q_rank, kv_rank = c["q_lora_rank"], c["kv_lora_rank"]
        q = h * nq * (nope + rope) if q_rank is None else h * q_rank + q_rank + q_rank * nq * (nope + rope)
        attn = (q  # q_proj, or q_a_proj, q_a_layernorm, q_b_proj
                + h * (kv_rank + rope) + kv_rank + kv_rank * nq * (nope + v)  # kv_a_proj, kv_a_layernorm, kv_b_proj
                + nq * v * h)  # o_proj
        expert = 3 * h * c["moe_intermediate_size"]
        n_exp = c["n_routed_experts"]
        bias = n_exp if arch == "DeepseekV3ForCausalLM" else 0  # V3's router correction bias, one per expert
        for layer in range(layers):
            block = attn + 2 * h
            if layer < c["first_k_dense_replace"]:
                total += block + 3 * h * c["intermediate_size"]
                active += block + 3 * h * c["intermediate_size"]
            else:
                always = c["n_shared_experts"] * expert + n_exp * h + bias  # shared experts, router, its bias
                total += block + always + n_exp * expert
                active += block + always + c["num_experts_per_tok"] * expert
        return total, active
    if arch == "GptOssForCausalLM":  # biases on q, k, v, o; a sink logit per head; experts and router with biases
        nq, nkv, d, width, n_exp = (c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                                    c["intermediate_size"], c["num_local_experts"])
        attn = 2 * h * nq * d + 2 * h * nkv * d + (nq * d + 2 * nkv * d + h) + nq
        expert = 3 * h * width + 2 * width + h  # gate_up (h -> 2 width) with its bias, down (width -> h) with its bias
        block = attn + 2 * h + n_exp * h + n_exp  # + norms, router weight and bias
        return total + layers * (block + n_exp * expert), active + layers * (block + c["num_experts_per_tok"] * expert)
    if arch == "Llama4ForConditionalGeneration":  # every layer MoE here: routed experts + one shared expert
        nq, nkv, d, width, n_exp = (c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                                    c["intermediate_size"], c["num_local_experts"])
        assert c["moe_layers"] == list(range(layers))
        block = 2 * h * nq * d + 2 * h * nkv * d + 2 * h + n_exp * h + 3 * h * width  # attention, norms, router, shared
        return (total + layers * (block + n_exp * 3 * h * width),
                active + layers * (block + c["num_experts_per_tok"] * 3 * h * width))
    if arch == "Gemma3ForConditionalGeneration":  # q/k norms over head_dim; four norms per block
        nq, nkv, d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        block = 2 * h * nq * d + 2 * h * nkv * d + 2 * d + 4 * h + 3 * h * c["intermediate_size"]
        return total + layers * block, active + layers * block
    nq = c["num_attention_heads"]
    nkv = c.get("num_key_value_heads", nq)
    d = c.get("head_dim") or h // nq
    attn = 2 * h * nq * d + 2 * h * nkv * d
    if arch == "Qwen2ForCausalLM":
        attn += nq * d + 2 * nkv * d  # q, k, v biases
    if arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM"):
        attn += 2 * d  # q_norm, k_norm
    n_exp = c.get("num_experts") or c.get("num_local_experts") or 0
    for _ in range(layers):
        block = attn + 2 * h
        if n_exp:
            width = c.get("moe_intermediate_size") or c["intermediate_size"]  # Mixtral: full-width experts
            total += block + n_exp * h + n_exp * 3 * h * width
            active += block + n_exp * h + c["num_experts_per_tok"] * 3 * h * width
        else:
            total += block + 3 * h * c["intermediate_size"]
            active += block + 3 * h * c["intermediate_size"]
    return total, active


COUNTS = {name: _count(c) for name, c in CONFIGS.items()}


def test_hand_counts_match_published_totals():
    """The recount itself, against the model authors' numbers."""
    assert COUNTS["Llama-3.1-8B"][0] == LLAMA_PUBLISHED_PARAMS == 8_030_261_248
    # DeepSeek-V3 technical report (arXiv:2412.19437): 671B total, 37B activated per token
    assert round(COUNTS["DeepSeek-V3"][0] / 1e9) == 671 and 37e9 < COUNTS["DeepSeek-V3"][1] < 38e9
    # Qwen3 model cards: Qwen3-8B 8.2B parameters, 6.95B non-embedding; Qwen3-235B-A22B 235B total, 22B active
    assert round(COUNTS["Qwen3-8B"][0] / 1e8) == 82
    assert round((COUNTS["Qwen3-8B"][0] - 2 * QWEN3["vocab_size"] * QWEN3["hidden_size"]) / 1e7) == 695
    assert round(COUNTS["Qwen3-235B-A22B"][0] / 1e9) == 235 and round(COUNTS["Qwen3-235B-A22B"][1] / 1e9) == 22
    # Mixtral of Experts (arXiv:2401.04088): 47B parameters, 13B active
    assert round(COUNTS["Mixtral-8x7B-v0.1"][0] / 1e9) == 47 and round(COUNTS["Mixtral-8x7B-v0.1"][1] / 1e9) == 13


# -- tokens, context and chat templates ---------------------------------------------------------
def test_vocabulary_sizes_are_the_configs():
    assert li.llama_8b_vocab_size().value == LLAMA["vocab_size"] == 128_256
    assert li.qwen3_8b_vocab_size().value == QWEN3["vocab_size"] == 151_936
    assert li.deepseek_v3_vocab_size().value == CONFIGS["DeepSeek-V3"]["vocab_size"] == 129_280
    assert str(li.llama_8b_vocab_size()) == "128,256"


def test_embedding_and_lm_head_share_of_qwen3():
    tables = 2 * QWEN3["vocab_size"] * QWEN3["hidden_size"]  # untied: embedding + LM head
    total = COUNTS["Qwen3-8B"][0]
    assert li.qwen3_8b_vocab_params_billion().value == pytest.approx(tables / 1e9)
    assert li.qwen3_8b_total_params_billion().value == pytest.approx(total / 1e9)
    assert li.qwen3_8b_vocab_params_share().value == pytest.approx(tables / total)
    big = 2 * QWEN3_MOE["vocab_size"] * QWEN3_MOE["hidden_size"]
    assert li.qwen3_235b_vocab_params_share().value == pytest.approx(big / COUNTS["Qwen3-235B-A22B"][0])
    assert str(li.qwen3_8b_vocab_params_billion()) == "1.24"
    assert str(li.qwen3_8b_total_params_billion()) == "8.2"
    assert str(li.qwen3_8b_vocab_params_share()) == "15 %"
    assert str(li.qwen3_235b_vocab_params_share()) == "0.5 %"


def test_tiny_tokenizer_facts_are_its_tokenizer_json():
    vocab = TOKENIZER["model"]["vocab"]
    ids = list(vocab.values()) + [t["id"] for t in TOKENIZER["added_tokens"]]
    assert li.tiny_tokenizer_vocab_size().value == max(ids) + 1 == 1024
    assert str(li.tiny_tokenizer_vocab_size()) == "1,024"
    # byte-level BPE writes a leading space as "Ġ"
    assert li.tiny_id_space_the().value == vocab["Ġthe"] and li.tiny_id_the().value == vocab["the"]
    assert li.tiny_id_space_the().value != li.tiny_id_the().value
    assert li.tiny_tokens_in_space_the().value == 1
    pieces = re.findall(r'`"([^`]+)"`', str(li.tiny_tokenization_pieces()))
    assert str(li.tiny_tokenization_pieces()) == '`" token"` + `"iz"` + `"ation"`'
    assert "".join(pieces) == " tokenization"
    assert all(p.replace(" ", "Ġ") in vocab for p in pieces)
    assert "Ġtokenization" not in vocab


def test_context_windows_and_the_budget_verdict():
    assert li.llama_8b_context_window().value == LLAMA["max_position_embeddings"] == 131_072
    assert li.qwen3_8b_context_window().value == QWEN3["max_position_embeddings"] == 40_960
    # Qwen docs (https://qwen.readthedocs.io/en/latest/deployment/vllm.html): the 40,960 reserves
    # "32,768 tokens for outputs and 8,192 tokens for typical prompts".
    assert li.qwen3_output_reserve().value == 32_768
    assert li.qwen3_prompt_reserve().value == QWEN3["max_position_embeddings"] - 32_768 == 8_192
    window, n_in, cap, think = QWEN3["max_position_embeddings"], 30_000, 8_192, 4_000
    assert (li.budget_input_tokens().value, li.budget_max_tokens().value,
            li.budget_reasoning_tokens().value) == (n_in, cap, think)
    # Reasoning counted inside max_tokens (OpenAI, Anthropic, vLLM): 30,000 + 8,192 = 38,192 <= 40,960.
    assert li.budget_total_inside().value == n_in + cap == 38_192 <= window
    inside = str(li.qwen3_8b_budget_inside())
    assert inside.startswith("Fits")
    assert f"{n_in + cap:,} of {window:,}" in inside and f"{window - n_in - cap:,} to spare" in inside  # 2,768
    assert f"leaving {cap - think:,} for the answer" in inside  # 4,192
    # A reasoning budget on top of max_tokens: 30,000 + 4,000 + 8,192 = 42,192 > 40,960.
    assert li.budget_total_on_top().value == n_in + think + cap == 42_192 > window
    on_top = str(li.qwen3_8b_budget_on_top())
    assert on_top.startswith("Does not fit")
    assert f"{n_in + think + cap:,} tokens" in on_top and f"{n_in + think + cap - window:,} more" in on_top  # 1,232
    assert f"at most {window - n_in - think:,}" in on_top  # 6,960


# -- prefill and decode ------------------------------------------------------------------------------
def test_llama_kv_cache_per_token_and_at_full_context():
    layers, kv_heads = LLAMA["num_hidden_layers"], LLAMA["num_key_value_heads"]
    head_dim = LLAMA["hidden_size"] // LLAMA["num_attention_heads"]
    per_token = 2 * layers * kv_heads * head_dim * 2  # K and V, BF16
    assert (li.llama_8b_layers().value, li.llama_8b_kv_heads().value, li.llama_8b_head_dim().value) == (32, 8, 128)
    assert li.llama_8b_kv_bytes_per_token().value == per_token == 131_072
    assert li.llama_8b_kv_per_token().value == per_token
    full = per_token * LLAMA["max_position_embeddings"]
    assert li.llama_8b_kv_full_context().value == full
    assert li.llama_8b_weights_bf16().value == 2 * LLAMA_PUBLISHED_PARAMS
    assert li.llama_8b_kv_full_context().value > li.llama_8b_weights_bf16().value  # the page's point
    assert str(li.llama_8b_kv_bytes_per_token()) == "131,072"
    assert str(li.llama_8b_kv_per_token()) == "131 kB"
    assert str(li.llama_8b_kv_full_context()) == "17.2 GB"
    assert str(li.llama_8b_weights_bf16()) == "16.1 GB"


def test_kv_cache_per_layer_kind_at_long_context():
    """Each layer keeps min(context, window) tokens; worked out here from the JSON files (BF16, 2 bytes)."""
    n = 131_072
    assert li.long_context_tokens().value == n
    gpt, gemma = CONFIGS["gpt-oss-120b"], {**GEMMA3_TEXT_DEFAULTS, **CONFIGS["gemma-3-27b-it"]["text_config"]}
    scout, ds = CONFIGS["Llama-4-Scout-17B-16E"]["text_config"], CONFIGS["DeepSeek-V3"]
    gpt_layer = 2 * gpt["num_key_value_heads"] * gpt["head_dim"] * 2
    windows = [gpt["sliding_window"] if t == "sliding_attention" else n for t in gpt["layer_types"]]
    gemma_layer = 2 * gemma["num_key_value_heads"] * gemma["head_dim"] * 2
    gemma_windows = [n if (i + 1) % gemma["sliding_window_pattern"] == 0 else gemma["sliding_window"]
                     for i in range(gemma["num_hidden_layers"])]
    scout_layer = 2 * scout["num_key_value_heads"] * scout["head_dim"] * 2
    scout_windows = [scout["attention_chunk_size"] if rope else n for rope in scout["no_rope_layers"]]
    ds_latent = (ds["kv_lora_rank"] + ds["qk_rope_head_dim"]) * 2
    ds_heads = ds["num_attention_heads"] * (ds["qk_nope_head_dim"] + ds["qk_rope_head_dim"] + ds["v_head_dim"]) * 2
    want = {
        "Llama-3.1-8B": (131_072 * n * 1, 131_072 * n),
        "gpt-oss-120b": (gpt_layer * sum(windows), gpt_layer * len(windows) * n),
        "gemma-3-27b-it": (gemma_layer * sum(gemma_windows), gemma_layer * len(gemma_windows) * n),
        "Llama-4-Scout-17B-16E": (scout_layer * sum(scout_windows), scout_layer * len(scout_windows) * n),
        "DeepSeek-V3": (ds_latent * ds["num_hidden_layers"] * n, ds_heads * ds["num_hidden_layers"] * n),
    }
    rows = li.kv_layer_kinds_table().rows
    assert [r[0].value for r in rows] == list(want)
    for name, kinds, cached, held, every, share in rows:
        assert (held.value, every.value) == want[name.value], name.value
        assert str(cached) in str(li.model_configs_table()) and str(kinds) in str(li.model_configs_table())
        assert share.value == pytest.approx(held.value / every.value)
    table = str(li.kv_layer_kinds_table())
    assert "| gpt-oss-120b | 18 full + 18 sliding (128) | 2 × 8 × 64 = 1,024 | 4.84 GB | 9.66 GB | 50 % |" in table
    assert "| DeepSeek-V3 | 61 full (MLA) | latent 512 + RoPE key 64 = 576 | 9.21 GB | 655 GB | 1.4 % |" in table


def test_multi_head_latent_attention_facts():
    """What MLA caches (kv_lora_rank + qk_rope_head_dim per layer, DeepSeek-V2 paper, arXiv:2405.04434, section 2.1)
    and its FLOPs per cached token in the absorbed form (scores over 576, sums of 512-wide latents, per head) and
    the expanded form (per-head keys of 128 + 64 and values of 128)."""
    ds, llama = CONFIGS["DeepSeek-V3"], LLAMA
    heads, rank, rope = ds["num_attention_heads"], ds["kv_lora_rank"], ds["qk_rope_head_dim"]
    nope, v, layers = ds["qk_nope_head_dim"], ds["v_head_dim"], ds["num_hidden_layers"]
    assert (li.deepseek_v3_kv_lora_rank().value, li.deepseek_v3_qk_rope_head_dim().value) == (512, 64) == (rank, rope)
    assert (li.deepseek_v3_qk_nope_head_dim().value, li.deepseek_v3_v_head_dim().value) == (nope, v) == (128, 128)
    assert li.deepseek_v3_query_heads().value == heads == li.deepseek_v3_kv_heads().value == 128
    assert li.deepseek_v3_layers().value == layers == 61
    assert li.deepseek_v3_mla_cached_per_layer().value == rank + rope == 576
    assert li.deepseek_v3_expanded_per_layer().value == heads * (nope + rope + v) == 40_960
    assert str(li.deepseek_v3_mla_saving()) == "71.1×"  # 40,960 / 576
    assert li.deepseek_v3_kv_bytes_per_token().value == layers * 576 * 2 == 70_272
    assert li.deepseek_v3_kv_vs_llama_8b().value == pytest.approx(70_272 / 131_072) and str(li.deepseek_v3_kv_vs_llama_8b()) == "54 %"
    assert str(li.deepseek_v3_size_vs_llama_8b()) == "84×"  # 671.0B / 8.03B
    assert li.deepseek_v3_absorbed_flops_per_key().value == 2 * heads * (rank + rope) + 2 * heads * rank == 278_528
    assert li.deepseek_v3_expanded_flops_per_key().value == 2 * heads * (nope + rope + v) == 81_920
    assert li.deepseek_v3_absorbed_intensity().value == pytest.approx(278_528 / (576 * 2))
    assert str(li.deepseek_v3_absorbed_intensity()) == "242"
    assert li.deepseek_v3_expanded_intensity().value == 81_920 / (40_960 * 2) == 1.0
    assert str(li.deepseek_v3_mixed_intensity()) == "71.1"  # 81,920 / 1,152: the old mixed accounting
    # Llama 3.1 8B: 2 x 32 heads x (128 + 128) FLOPs per key over 2 x 8 x 128 x 2 bytes
    nq, nkv, d = llama["num_attention_heads"], llama["num_key_value_heads"], 128
    assert li.llama_8b_attention_intensity().value == 2 * nq * 2 * d / (2 * nkv * d * 2) == 4
    for name in ("deepseek_v3_mla_cached_per_layer", "deepseek_v3_absorbed_flops_per_key", "deepseek_v3_mixed_intensity",
                 "deepseek_v3_expanded_per_layer", "kv_layer_kinds_table"):
        assert f"llm_inference.{name} }}}}" in PAGE, name


def test_supported_families_and_the_config_calculator_are_on_the_page():
    from chapter2.models import FAMILIES

    assert li.supported_families().value.split(", ") == [f.label for f in FAMILIES]
    assert "Gemma 3" in str(li.supported_families()) and "gpt-oss" in str(li.supported_families())
    assert "<!-- calculator: model_config -->" in PAGE and "<!-- calculator: kv_cache -->" in PAGE


# -- sampling ----------------------------------------------------------------------------------------------
LOGITS = [2.0, 1.0, 0.5, 0.1, -1.0]


def _softmax(z, t=1.0):
    e = [math.exp(x / t) for x in z]
    return [x / sum(e) for x in e]


def _renorm(p):
    return [x / sum(p) for x in p]


def _table_row(label):
    rows = {r[0]: r[1:] for r in li.sampling_table().rows}
    return [c.value for c in rows[label]]


def test_sampling_table_against_a_hand_softmax():
    p = _softmax(LOGITS)
    assert _table_row("logits") == LOGITS
    assert _table_row("softmax (T = 1)") == pytest.approx(p)
    assert _table_row("T = 0.5") == pytest.approx(_softmax(LOGITS, 0.5))
    assert _table_row("T = 2") == pytest.approx(_softmax(LOGITS, 2.0))
    assert _table_row("T = 0 (greedy)") == [1, 0, 0, 0, 0]
    assert _table_row("top-k, k = 2") == pytest.approx(_renorm(p[:2] + [0, 0, 0]))
    assert _table_row("top-p, p = 0.8") == pytest.approx(_renorm(p[:3] + [0, 0]))  # 0.559 + 0.205 < 0.8 <= + 0.125
    biased = LOGITS[:3] + [LOGITS[3] + 2] + LOGITS[4:]
    assert _table_row("bias +2 on token 3") == pytest.approx(_softmax(biased))
    table = str(li.sampling_table())
    assert table.startswith("| settings | token 0 | token 1 | token 2 | token 3 | token 4 |")
    assert "| softmax (T = 1) | 0.559 | 0.205 | 0.125 | 0.084 | 0.028 |" in table
    assert "| T = 0.5 | 0.826 | 0.112 | 0.041 | 0.018 | 0.002 |" in table


def test_sampling_prose_numbers():
    p = _softmax(LOGITS)
    assert li.sampling_token0_prob().value == pytest.approx(p[0])
    assert li.sampling_token0_prob_low_temperature().value == pytest.approx(_softmax(LOGITS, 0.5)[0])
    assert (str(li.sampling_token0_prob()), str(li.sampling_token0_prob_low_temperature())) == ("0.56", "0.83")
    assert li.sampling_top_p().value == 0.8 and str(li.sampling_top_p()) == "0.8"
    assert li.top_p_kept_tokens().value == 3
    assert li.top_p_tokens_short_of_p().value == 2
    assert li.top_p_last_kept_token().value == 2
    assert li.top_p_mass_short_of_p().value == pytest.approx(p[0] + p[1])
    assert li.top_p_mass_short_of_p().value < 0.8 <= p[0] + p[1] + p[2]
    assert str(li.top_p_mass_short_of_p()) == "0.764"
    assert li.logit_bias_offset().value == 2 and li.bias_token_logit().value == 0.1
    assert li.bias_token_biased_logit().value == pytest.approx(2.1) and str(li.bias_token_biased_logit()) == "2.1"
    biased = _softmax(LOGITS[:3] + [2.1] + LOGITS[4:])
    assert li.bias_token_prob().value == pytest.approx(biased[3]) and biased[3] == max(biased)
    assert str(li.bias_token_prob()) == "0.402"


# -- architecture and transformer blocks --------------------------------------------------------------------
def test_architecture_name_reading():
    assert str(li.example_architecture_family()) == "Qwen3"
    assert str(li.example_architecture_is_moe()) == "yes"
    assert str(li.example_architecture_task()) == "causal language modeling"


def test_lora_on_the_query_projection():
    n = LLAMA["num_attention_heads"] * (LLAMA["hidden_size"] // LLAMA["num_attention_heads"])
    k = LLAMA["hidden_size"]
    assert li.lora_rank().value == 16
    assert str(li.llama_8b_q_proj_shape()) == f"{n:,} × {k:,}" == "4,096 × 4,096"
    assert li.lora_q_proj_params().value == 16 * (n + k) == 131_072
    assert li.llama_8b_q_proj_params().value == n * k == 16_777_216
    assert li.lora_q_proj_share().value == pytest.approx(16 * (n + k) / (n * k))
    assert str(li.lora_q_proj_share()) == "0.78 %"


def _text(c: dict) -> dict:
    """The language model's part of a config.json (a multimodal release nests it under text_config)."""
    return c.get("text_config", c)


def test_model_configs_table_rows_are_the_configs_and_hand_counts():
    rows = li.model_configs_table().rows
    assert [r[0].value for r in rows] == sorted(CONFIGS)
    for name, arch, layers, hidden, heads, cached, kinds, vocab, total, active in rows:
        c = CONFIGS[name.value]
        t = {**GEMMA3_TEXT_DEFAULTS, **_text(c)} if "text_config" in c else c
        assert arch.value == f"`{c['architectures'][0]}`"
        assert (layers.value, hidden.value, vocab.value) == (t["num_hidden_layers"], t["hidden_size"], t["vocab_size"])
        nq = t["num_attention_heads"]
        if "kv_lora_rank" in t:  # MLA: one latent and one RoPE key per layer, no per-head K and V
            assert heads.value == f"{nq} / latent"
            assert cached.value == f"latent {t['kv_lora_rank']} + RoPE key {t['qk_rope_head_dim']} = " \
                                   f"{t['kv_lora_rank'] + t['qk_rope_head_dim']}"
        else:
            nkv = t.get("num_key_value_heads", nq)
            d = t.get("head_dim") or t["hidden_size"] // nq
            assert heads.value == f"{nq} / {nkv}"
            assert cached.value == f"2 × {nkv} × {d} = {2 * nkv * d:,}"
        assert (total.value, active.value) == pytest.approx((COUNTS[name.value][0] / 1e9, COUNTS[name.value][1] / 1e9))
        assert sum(int(part.split()[0]) for part in kinds.value.split(" + ")) == t["num_hidden_layers"]
    table = str(li.model_configs_table())
    assert ("| Qwen3-235B-A22B | `Qwen3MoeForCausalLM` | 94 | 4,096 | 64 / 4 | 2 × 4 × 128 = 1,024 | 94 full | "
            "151,936 | 235.1 | 22.2 |") in table
    # DeepSeek-V3 caches 512 + 64 = 576 numbers per layer, not 2 x 128 heads x 128 (technical review, item 2)
    assert ("| DeepSeek-V3 | `DeepseekV3ForCausalLM` | 61 | 7,168 | 128 / latent | latent 512 + RoPE key 64 = 576 | "
            "61 full (MLA) | 129,280 | 671 | 37.6 |") in table
    # gpt-oss-120b's layer_types alternate a 128-token window and full attention (18 each)
    assert "| gpt-oss-120b | `GptOssForCausalLM` | 36 | 2,880 | 64 / 8 | 2 × 8 × 64 = 1,024 | 18 full + 18 sliding (128) |" in table
    # Gemma 3 27B: one global layer in six over 62 layers -> 10 full, 52 with the 1,024-token window
    assert "| 10 full + 52 sliding (1,024) |" in table
    # Llama 4 Scout: no_rope_layers marks every 4th layer global; the other 36 attend in 8,192-token chunks
    assert "| 12 full + 36 chunked (8,192) |" in table


def test_llama_sizes():
    assert li.llama_8b_total_params_billion().value == pytest.approx(LLAMA_PUBLISHED_PARAMS / 1e9)
    assert str(li.llama_8b_total_params_billion()) == "8.03"
    assert li.llama_8b_hidden_size().value == LLAMA["hidden_size"] and str(li.llama_8b_hidden_size()) == "4,096"
    assert li.llama_8b_ffn_width().value == LLAMA["intermediate_size"] and str(li.llama_8b_ffn_width()) == "14,336"


def test_llama_parameter_breakdown_adds_up_to_the_model():
    """The page's consistency check: the parts, counted here, add up to the published total and to params()."""
    h, v, layers = LLAMA["hidden_size"], LLAMA["vocab_size"], LLAMA["num_hidden_layers"]
    kv_dim = LLAMA["num_key_value_heads"] * h // LLAMA["num_attention_heads"]
    parts = [v * h, layers * (2 * h * h + 2 * h * kv_dim), layers * 3 * h * LLAMA["intermediate_size"],
             (2 * layers + 1) * h, v * h]
    rows = li.llama_8b_param_breakdown().rows
    assert [r[1].value for r in rows[:-1]] == parts
    assert sum(parts) == LLAMA_PUBLISHED_PARAMS
    # the two ways to count agree: the breakdown's sum and ModelConfig.params().total
    assert load_config("Llama-3.1-8B").params().total == sum(parts)
    total_row = rows[-1]
    assert total_row[1].value == sum(parts)
    assert total_row[2].value == 1.0 and str(total_row[2]) == "100 %"
    for (_, _, share), part in zip(rows[:-1], parts, strict=True):
        assert share.value == pytest.approx(part / LLAMA_PUBLISHED_PARAMS)
    table = str(li.llama_8b_param_breakdown())
    assert "| feed-forward, 32 blocks (gate, up, down) | 5,637,144,576 | 70.2 % |" in table
    assert "| embedding table (V × D) | 525,336,576 | 6.5 % |" in table
    assert "MISMATCH" not in table


def test_grouped_query_attention():
    assert li.llama_8b_query_heads().value == LLAMA["num_attention_heads"] == 32
    assert li.llama_8b_gqa_group().value == LLAMA["num_attention_heads"] // LLAMA["num_key_value_heads"] == 4


# -- attention -------------------------------------------------------------------------------------------------
def test_causal_pairs_of_eight_tokens():
    assert li.causal_example_tokens().value == 8
    assert li.causal_example_attended_pairs().value == 8 * 9 // 2 == 36
    assert li.causal_example_all_pairs().value == 64


def test_decoding_with_and_without_the_cache():
    assert li.cache_example_prompt_tokens().value == li.cache_example_decode_tokens().value == 1000
    lengths = range(1001, 2001)  # sequence length at each of the 1,000 decode steps
    with_cache = sum(lengths)  # one query against t keys
    without = sum(t * (t + 1) // 2 for t in lengths)  # causal attention over all t tokens again
    assert li.cache_example_pairs_with_cache().value == with_cache == 1_500_500
    assert li.cache_example_pairs_without_cache().value == without
    assert li.cache_example_pairs_ratio().value == pytest.approx(without / with_cache)
    assert str(li.cache_example_pairs_without_cache()) == "1,168,167,000"
    assert str(li.cache_example_pairs_ratio()) == "779"


# -- mixture of experts ------------------------------------------------------------------------------------------
E, K, LAYERS = QWEN3_MOE["num_experts"], QWEN3_MOE["num_experts_per_tok"], QWEN3_MOE["num_hidden_layers"]
EXPERT = 3 * QWEN3_MOE["hidden_size"] * QWEN3_MOE["moe_intermediate_size"]


def _touched(tokens):
    return E * (1 - (1 - K / E) ** tokens)


def test_qwen3_moe_sizes():
    total, active = COUNTS["Qwen3-235B-A22B"]
    assert (li.qwen3_235b_moe_layers().value, li.qwen3_235b_experts().value) == (LAYERS, E) == (94, 128)
    assert li.qwen3_235b_experts_per_token().value == K == 8
    assert li.qwen3_235b_total_params_billion().value == pytest.approx(total / 1e9)
    assert li.qwen3_235b_active_params_billion().value == pytest.approx(active / 1e9)
    assert li.qwen3_235b_active_share().value == pytest.approx(active / total)
    assert li.qwen3_235b_expert_params_million().value == pytest.approx(EXPERT / 1e6)
    assert li.qwen3_235b_expert_weight_share().value == pytest.approx(E * LAYERS * EXPERT / total)
    assert str(li.qwen3_235b_total_params_billion()) == "235.1"
    assert str(li.qwen3_235b_active_params_billion()) == "22.2"
    assert str(li.qwen3_235b_active_share()) == "9.4 %"
    assert str(li.qwen3_235b_expert_params_million()) == "18.9"
    assert str(li.qwen3_235b_expert_weight_share()) == "96.6 %"


def test_experts_touched_by_a_batch():
    assert li.qwen3_235b_experts_touched_one_token().value == pytest.approx(K)
    assert li.coverage_most().value == 0.9 and li.coverage_nearly_all().value == 0.99
    assert str(li.coverage_most()) == "90 %" and str(li.coverage_nearly_all()) == "99 %"
    for fact, share in ((li.qwen3_235b_tokens_touching_most, 0.9), (li.qwen3_235b_tokens_touching_nearly_all, 0.99)):
        t = fact().value
        assert _touched(t) / E >= share > _touched(t - 1) / E
    assert (li.qwen3_235b_tokens_touching_most().value, li.qwen3_235b_tokens_touching_nearly_all().value) == (36, 72)


def test_expert_weight_traffic_of_a_decode_step():
    assert li.moe_decode_batch().value == 256
    assert li.qwen3_235b_expert_bytes_one_request().value == pytest.approx(K * EXPERT * 2 * LAYERS)
    assert li.qwen3_235b_expert_bytes_batch().value == pytest.approx(_touched(256) * EXPERT * 2 * LAYERS)
    assert li.qwen3_235b_expert_share_read_batch().value == pytest.approx(_touched(256) / E)
    assert li.qwen3_235b_expert_compute_share().value == K / E
    assert li.qwen3_235b_expert_compute_saving().value == E / K
    assert str(li.qwen3_235b_expert_bytes_one_request()) == "28.4 GB"
    assert str(li.qwen3_235b_expert_bytes_batch()) == "454 GB"
    assert str(li.qwen3_235b_expert_share_read_batch()) == "100 %"
    assert str(li.qwen3_235b_expert_compute_share()) == "6.25 %"
    assert str(li.qwen3_235b_expert_compute_saving()) == "16"


def test_qwen3_moe_rounded_sizes_are_the_names_and_the_chapters():
    """The map leaf, the card and the takeaway quote the chapter's 22B of 235B: the precise counts, rounded."""
    total, active = COUNTS["Qwen3-235B-A22B"]
    named_total, named_active = map(int, re.fullmatch(r"Qwen3-(\d+)B-A(\d+)B", "Qwen3-235B-A22B").groups())
    assert li.qwen3_235b_total_params_rounded().value == round(total / 1e9) == named_total == 235
    assert li.qwen3_235b_active_params_rounded().value == round(active / 1e9) == named_active == 22
    assert (str(li.qwen3_235b_total_params_rounded()), str(li.qwen3_235b_active_params_rounded())) == ("235", "22")


def _is_moe(c: dict) -> bool:
    c = _text(c)
    return bool(c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts"))


def test_moe_rule_of_thumb_against_the_shipped_configs():
    """The outline's rule (MoE above roughly 100B, small models dense) and the shipped configs that test it."""
    assert li.moe_rule_of_thumb_billion().value == 100
    big = sorted((n for n in CONFIGS if COUNTS[n][0] > 100e9), key=lambda n: -COUNTS[n][0])
    assert big and all(_is_moe(CONFIGS[n]) for n in big), "the page says every shipped config above 100B is MoE"
    assert str(li.configs_above_rule()) == ", ".join(f"{n} ({COUNTS[n][0] / 1e9:,.0f}B)" for n in big)
    assert str(li.configs_above_rule()) == ("Kimi-K2-Instruct (1,026B), DeepSeek-V3 (671B), Qwen3-235B-A22B (235B), "
                                            "gpt-oss-120b (117B), Llama-4-Scout-17B-16E (108B)")
    small_moe = [n for n in CONFIGS if _is_moe(CONFIGS[n]) and COUNTS[n][0] <= 100e9]
    assert str(li.small_moe_configs()) == ", ".join(
        f"{n} ({COUNTS[n][0] / 1e9:.1f}B total, {COUNTS[n][1] / 1e9:.1f}B active)" for n in small_moe)
    assert str(li.small_moe_configs()) == ("DeepSeek-V2-Lite (15.7B total, 2.7B active), "
                                           "Mixtral-8x7B-v0.1 (46.7B total, 12.9B active)")
    dense = [n for n in CONFIGS if not _is_moe(CONFIGS[n])]
    assert all(COUNTS[n][0] < 30e9 for n in dense), "the page says every shipped dense config is well below 100B"
    assert str(li.dense_configs()) == ("Llama-3.1-8B (8B), Mistral-7B-v0.1 (7.2B), Qwen2-7B (7.6B), Qwen3-8B (8.2B), "
                                       "gemma-3-27b-it (27B)")
    assert [s.split(" (")[0] for s in str(li.dense_configs()).split(", ")] == dense
    assert "Every dense one is well below it: {{ fact: llm_inference.dense_configs }}" in PAGE
    assert "each needs the memory\nof its total count" in PAGE


# -- map and cards ---------------------------------------------------------------------------------------------------
def test_leaves_and_cards_only_name_facts_of_this_section():
    texts = [leaf.text for leaf in li.LEAVES] + [card.answer for card in li.CARDS]
    for text in texts:
        assert "py:" not in text
        assert len(re.findall(r"\{\{", text)) == len(FACT_REF.findall(text))
        assert all(name.startswith("llm_inference.") for name in FACT_REF.findall(text))


def test_map_and_cards_quote_the_chapters_rounded_qwen3_numbers():
    moe_leaf = next(leaf.text for leaf in li.LEAVES if leaf.anchor == "224-mixture-of-experts")
    moe_card = next(card.answer for card in li.CARDS if card.id == "llm-moe")
    for text in (moe_leaf, moe_card):
        assert "qwen3_235b_active_params_rounded" in text and "qwen3_235b_total_params_rounded" in text
        assert "qwen3_235b_active_params_billion" not in text and "qwen3_235b_total_params_billion" not in text


def test_context_leaf_and_card_state_the_common_convention():
    leaf = next(leaf.text for leaf in li.LEAVES if leaf.anchor == "tokens-context-and-chat-templates")
    assert "reasoning counts inside max_tokens" in leaf
    card = next(card.answer for card in li.CARDS if card.id == "llm-context-reasoning")
    assert "`input + max_tokens ≤ context window`" in card
    assert "budget_total_inside" in card and "budget_total_on_top" in card


def test_prefill_decode_card_names_both_latencies():
    card = next(card.answer for card in li.CARDS if card.id == "llm-prefill-decode")
    assert "time to first token" in card and "time per output token" in card and "one token per forward pass" in card


# -- page text: claims the review fixed ------------------------------------------------------------------------------
PAGE = (Path(__file__).resolve().parents[1] / "docs" / "llm-inference.md").read_text()
REASONING_SOURCES = (
    "https://platform.openai.com/docs/api-reference/chat/create",
    "https://platform.openai.com/docs/guides/reasoning",
    "https://platform.claude.com/docs/en/build-with-claude/extended-thinking",
    "https://platform.claude.com/docs/en/build-with-claude/context-windows",
    "https://github.com/vllm-project/vllm/blob/v0.9.0/vllm/entrypoints/openai/serving_engine.py",
    "https://docs.vllm.ai/en/latest/features/reasoning_outputs/",
    "https://docs.siliconflow.com/en/userguide/capabilities/reasoning",
)


def test_page_and_module_cite_the_reasoning_conventions():
    from chapter2 import context

    for url in REASONING_SOURCES:
        assert url in PAGE, url
        assert url in context.__doc__, url
    # the default check is input + max_tokens; the three-term sum is the on-top variant, shown second
    inside = PAGE.index("input_tokens + max_tokens ≤ context_window")
    on_top = PAGE.index("input_tokens + reasoning_budget + max_tokens ≤ context_window")
    assert inside < on_top
    assert "input_tokens + reasoning_tokens + max_tokens ≤ context_window" not in PAGE


def test_page_prose_fixes():
    assert "time per output token" in PAGE  # decode sets TPOT (tokens per second follows from it)
    assert "with the byte-level BPE\nthat these models use" in PAGE  # the no-out-of-vocabulary claim is BPE's
    # the worked example shows the precise counts and says the name's numbers are them rounded
    example = PAGE[PAGE.index("**Worked example.** Qwen3-235B-A22B"):PAGE.index("That saving is in compute")]
    for name in ("qwen3_235b_total_params_billion", "qwen3_235b_active_params_billion",
                 "qwen3_235b_total_params_rounded", "qwen3_235b_active_params_rounded"):
        assert f"llm_inference.{name} }}}}" in example, name
    assert "round these to" in example
    rule = PAGE[PAGE.index("**Where MoE shows up.**"):PAGE.index("**Try it.** Change the number of experts")]
    for name in ("moe_rule_of_thumb_billion", "configs_above_rule", "dense_configs", "small_moe_configs"):
        assert f"llm_inference.{name} }}}}" in rule, name


def test_chat_template_ends_with_the_assistant_header_only_for_generation():
    assert "Rendered for generation (`add_generation_prompt=True`),\nit ends with the header of an assistant turn" in PAGE


def test_sampling_order_names_hugging_face_processors():
    """Hugging Face `generate` applies `sequence_bias`, then temperature, top-k, top-p (GenerationMixin._get_logits_processor)."""
    transformers = pytest.importorskip("transformers")
    import inspect

    source = inspect.getsource(transformers.generation.utils.GenerationMixin._get_logits_processor)
    order = [source.index(name) for name in ("SequenceBias", "TemperatureLogitsWarper", "TopKLogitsWarper",
                                             "TopPLogitsWarper")]
    assert order == sorted(order)
    assert "`sequence_bias` in Hugging Face `generate`" in PAGE
