"""Shared by the tests of section 2.2's two pages: the shipped config.json files, read with `json`, and
parameter counts worked out from them by hand (the architecture's weight shapes written out, not
`ModelConfig.params()`), checked against published totals in tests/test_pages_llm_architecture.py; Llama 3.1
8B's KV bytes per token, which both pages show; and the check that a page's map leaves and cards name only its
own facts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

from chapter2.pages import FACT_REF

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


def text_config(c: dict) -> dict:
    """The language model's part of a config.json (a multimodal release nests it under text_config)."""
    return c.get("text_config", c)


def language_model(c: dict) -> dict:
    """The language model's config, whole: text_config, with Gemma 3's defaults for what its own leaves out."""
    if c["architectures"][0] == "Gemma3ForConditionalGeneration":
        return {**GEMMA3_TEXT_DEFAULTS, **c["text_config"]}
    return text_config(c)


def count(c: dict) -> tuple[int, int]:
    """(total, active) parameters of a config.json's language model, from the weight shapes of its architecture."""
    arch = c["architectures"][0]
    if arch == "Gemma3ForConditionalGeneration":  # Gemma 3 ties the LM head in the outer config (default true)
        tied = c.get("tie_word_embeddings", True)
    else:
        tied = text_config(c).get("tie_word_embeddings", False)
    c = language_model(c)
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


COUNTS = {name: count(c) for name, c in CONFIGS.items()}

# K and V, in every layer and KV head, one head_dim each, at 2 bytes (BF16)
LLAMA_KV_BYTES_PER_TOKEN = (2 * LLAMA["num_hidden_layers"] * LLAMA["num_key_value_heads"]
                            * (LLAMA["hidden_size"] // LLAMA["num_attention_heads"]) * 2)


def is_moe(c: dict) -> bool:
    c = text_config(c)
    return bool(c.get("num_experts") or c.get("num_local_experts") or c.get("n_routed_experts"))


def assert_leaves_and_cards_name_only_facts(page_module: ModuleType) -> None:
    """A page module's map leaves and card answers cite numbers only as `{{ fact: ... }}` and never a source location
    (`py:`). A fact may be another section's: a number has one home (its section) and every page names it there;
    `tests/test_pages.py` checks that each one quoted is shown on the card's page. The messages say which text:
    pytest does not rewrite the asserts of a helper module."""
    for text in [leaf.text for leaf in page_module.LEAVES] + [card.answer for card in page_module.CARDS]:
        assert "py:" not in text, f"a source location: {text}"
        assert len(re.findall(r"\{\{", text)) == len(FACT_REF.findall(text)), f"a {{{{ that is no fact: {text}"
