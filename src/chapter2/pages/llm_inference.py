"""Facts of section 2.2 LLM inference (docs/llm-inference.md).

Model sizes come from the shipped config.json files (`chapter2.models.load_config`,
counted by `ModelConfig.params()`); the tokenizer is the tiny byte-level BPE the
site ships (`chapter2.tokenizer.tiny`); sampling, attention and MoE numbers come
from `chapter2.sampling`, `chapter2.attention` and `chapter2.moe`. The inputs of
the page's worked examples (the five logits, the LoRA rank, the batch sizes, ...)
are the constants below, and each one the page prints is a fact too.
"""

from __future__ import annotations

import math

import numpy as np

from .. import attention, context, moe, sampling, tokenizer
from ..format import Bytes, Int, Num, Pct, Table, Text, Times
from ..models import FAMILIES, ModelConfig, describe_architecture, list_configs, load_config
from . import Card, Leaf, fact

PAGE = "llm-inference.md"
TITLE = "2.2 LLM inference"

# -- inputs of the worked examples ---------------------------------------------------------
BUDGET_INPUT_TOKENS, BUDGET_MAX_TOKENS, BUDGET_REASONING_TOKENS = 30_000, 8_192, 4_000  # context budget
# Qwen's documentation explains Qwen3's max_position_embeddings of 40,960 as "reserving 32,768 tokens for
# outputs and 8,192 tokens for typical prompts ... and leave adequate room for model thinking"
# (https://qwen.readthedocs.io/en/latest/deployment/vllm.html; also the Qwen3-8B model card,
# https://huggingface.co/Qwen/Qwen3-8B#processing-long-texts).
QWEN3_OUTPUT_RESERVE = 32_768
EXAMPLE_LOGITS = (2.0, 1.0, 0.5, 0.1, -1.0)  # the five-token vocabulary of the sampling example
LOW_TEMPERATURE = 0.5
TOP_K = 2
TOP_P = 0.8
BIAS_TOKEN, BIAS = 3, 2.0
SAMPLING_SETTINGS = (  # (row label, keyword arguments of sampling.probs), in the table's order
    ("softmax (T = 1)", {}),
    (f"T = {LOW_TEMPERATURE:g}", {"temperature": LOW_TEMPERATURE}),
    ("T = 2", {"temperature": 2.0}),
    ("T = 0 (greedy)", {"temperature": 0}),
    (f"top-k, k = {TOP_K}", {"top_k": TOP_K}),
    (f"top-p, p = {TOP_P:g}", {"top_p": TOP_P}),
    (f"bias +{BIAS:g} on token {BIAS_TOKEN}", {"logit_bias": {BIAS_TOKEN: BIAS}}),
)
ARCHITECTURE_EXAMPLE = "Qwen3MoeForCausalLM"
LORA_RANK = 16
CAUSAL_EXAMPLE_TOKENS = 8  # the causal-mask figure's sequence length
CACHE_PROMPT_TOKENS, CACHE_DECODE_TOKENS = 1_000, 1_000  # decoding with and without the KV cache
COVERAGE_MOST, COVERAGE_NEARLY_ALL = 0.9, 0.99  # shares of experts a batch touches
MOE_DECODE_BATCH = 256
# The chapter outline's rule of thumb: "MoE tends to appear above roughly 100B parameters, while small
# models stay dense" (chapter 2, section 2.2.4).
MOE_RULE_OF_THUMB_PARAMS = 100e9
QWEN3_MOE = moe.QWEN3_235B_A22B  # the MoE part of Qwen3-235B-A22B's config.json
LONG_CONTEXT = 131_072  # the long-context KV comparison: one 128k-token sequence
# shipped configs whose layers cache differently (window, chunk, latent), after the all-full Llama 3.1 8B
KV_KIND_EXAMPLES = ("Llama-3.1-8B", "gpt-oss-120b", "gemma-3-27b-it", "Llama-4-Scout-17B-16E", "DeepSeek-V3")


# -- helpers -----------------------------------------------------------------------------------
def _cfg(name: str) -> ModelConfig:
    return load_config(name)


def _decimals(x: float, places: int, unit: str = "") -> Num:
    """`x` rounded to `places` decimals (trailing zeros dropped), as a `Num`."""
    magnitude = math.floor(math.log10(abs(x))) if x else 0
    return Num(x, max(1, magnitude + 1 + places), unit)


def _share(fraction: float, places: int = 1) -> Pct:
    """`fraction` as a percentage with `places` decimals (trailing zeros dropped)."""
    pct = 100 * fraction
    magnitude = math.floor(math.log10(abs(pct))) if pct else 0
    return Pct(fraction, max(1, magnitude + 1 + places))


def _billions(n: int, places: int = 1) -> Num:
    return _decimals(n / 1e9, places)


def _vocab_tables(c: ModelConfig) -> int:
    """Parameters of the embedding table plus the separate LM head."""
    p = c.params()
    return p.embedding + p.lm_head


def _probs(**kwargs) -> np.ndarray:
    return sampling.probs(list(EXAMPLE_LOGITS), **kwargs)


def _top_p_kept() -> int:
    return int((_probs(top_p=TOP_P) > 0).sum())


def _llama_q_proj() -> tuple[int, int]:
    """(n, k) of Llama 3.1 8B's query projection: query heads x head_dim, hidden size."""
    c = _cfg("Llama-3.1-8B")
    return c.num_attention_heads * c.head_dim, c.hidden_size


def _cache_pairs() -> tuple[int, int]:
    """Query-key pairs scored while decoding CACHE_DECODE_TOKENS tokens after the prompt: (with, without cache)."""
    lengths = range(CACHE_PROMPT_TOKENS + 1, CACHE_PROMPT_TOKENS + CACHE_DECODE_TOKENS + 1)
    with_cache = sum(attention.attended_pairs(1, t, causal=True) for t in lengths)
    without = sum(attention.attended_pairs(t, causal=True) for t in lengths)
    return with_cache, without


def _moe_step(n_tokens: int, dtype: str = "bf16") -> moe.MoeDecodeStep:
    s = QWEN3_MOE
    return moe.moe_decode_step(s.n_experts, s.k, n_tokens, expert_params=s.expert_params, n_layers=s.n_layers,
                               dtype=dtype)


def _configs() -> list[ModelConfig]:
    return [_cfg(n) for n in list_configs()]


# -- tokens, context and chat templates ----------------------------------------------------
@fact
def llama_8b_vocab_size() -> Int:
    """Llama 3.1 8B's vocabulary (config.json `vocab_size`)."""
    return Int(_cfg("Llama-3.1-8B").vocab_size)


@fact
def qwen3_8b_vocab_size() -> Int:
    """Qwen3-8B's vocabulary (config.json `vocab_size`)."""
    return Int(_cfg("Qwen3-8B").vocab_size)


@fact
def deepseek_v3_vocab_size() -> Int:
    """DeepSeek-V3's vocabulary (config.json `vocab_size`)."""
    return Int(_cfg("DeepSeek-V3").vocab_size)


@fact
def qwen3_8b_vocab_params_billion() -> Num:
    """Qwen3-8B's embedding table plus its separate LM head, in billions of parameters (`ModelConfig.params()`)."""
    return Num(_vocab_tables(_cfg("Qwen3-8B")) / 1e9, 3)


@fact
def qwen3_8b_total_params_billion() -> Num:
    """Qwen3-8B's total parameters in billions, one decimal (`ModelConfig.params().total`)."""
    return _billions(_cfg("Qwen3-8B").params().total)


@fact
def qwen3_8b_vocab_params_share() -> Pct:
    """Share of Qwen3-8B's parameters in the embedding table and LM head."""
    c = _cfg("Qwen3-8B")
    return Pct(_vocab_tables(c) / c.params().total, 2)


@fact
def qwen3_235b_vocab_params_share() -> Pct:
    """Share of Qwen3-235B-A22B's parameters in the embedding table and LM head (same vocabulary as Qwen3-8B)."""
    c = _cfg("Qwen3-235B-A22B")
    return _share(_vocab_tables(c) / c.params().total)


@fact
def tiny_tokenizer_vocab_size() -> Int:
    """Entries of the site's tiny byte-level BPE tokenizer (`tokenizer.tiny().vocab_size`)."""
    return Int(tokenizer.tiny().vocab_size)


@fact
def tiny_tokens_in_space_the() -> Int:
    """How many tokens the tiny tokenizer makes of `" the"` (one: a common word stays whole)."""
    return Int(len(tokenizer.tiny().encode(" the")))


@fact
def tiny_tokenization_pieces() -> Text:
    """The tiny tokenizer's pieces of `" tokenization"`, quoted as inline code (so a leading space shows), joined by " + "."""
    return Text(" + ".join(f'`"{t}"`' for t in tokenizer.tiny().tokens(" tokenization")))


@fact
def tiny_id_space_the() -> Int:
    """The tiny tokenizer's id of `" the"` (leading space included)."""
    return Int(tokenizer.tiny().encode(" the")[0])


@fact
def tiny_id_the() -> Int:
    """The tiny tokenizer's id of `"the"` (no leading space: another token)."""
    return Int(tokenizer.tiny().encode("the")[0])


@fact
def llama_8b_context_window() -> Int:
    """Llama 3.1 8B's context window in tokens (config.json `max_position_embeddings`)."""
    return Int(_cfg("Llama-3.1-8B").max_position_embeddings)


@fact
def qwen3_8b_context_window() -> Int:
    """Qwen3-8B's context window in tokens (config.json `max_position_embeddings`)."""
    return Int(_cfg("Qwen3-8B").max_position_embeddings)


@fact
def qwen3_output_reserve() -> Int:
    """Tokens of Qwen3's 40,960-token window that Qwen's documentation reserves for the output, thinking included.

    Published number (QWEN3_OUTPUT_RESERVE): https://qwen.readthedocs.io/en/latest/deployment/vllm.html.
    """
    return Int(QWEN3_OUTPUT_RESERVE)


@fact
def qwen3_prompt_reserve() -> Int:
    """The rest of Qwen3-8B's window once the output reserve is set aside: the prompt's share (8,192 in Qwen's docs)."""
    return Int(_cfg("Qwen3-8B").max_position_embeddings - QWEN3_OUTPUT_RESERVE)


@fact
def budget_input_tokens() -> Int:
    """Input tokens of the context-budget example."""
    return Int(BUDGET_INPUT_TOKENS)


@fact
def budget_max_tokens() -> Int:
    """max_tokens of the context-budget example."""
    return Int(BUDGET_MAX_TOKENS)


@fact
def budget_reasoning_tokens() -> Int:
    """Reasoning budget of the context-budget example."""
    return Int(BUDGET_REASONING_TOKENS)


def _budget(convention: str) -> context.ContextBudget:
    return context.context_budget(_cfg("Qwen3-8B").max_position_embeddings, BUDGET_INPUT_TOKENS, BUDGET_MAX_TOKENS,
                                  reasoning_tokens=BUDGET_REASONING_TOKENS, convention=convention)


@fact
def budget_total_inside() -> Int:
    """Tokens the window must hold for the example with reasoning counted inside max_tokens: input + max_tokens."""
    return Int(_budget(context.INSIDE).total)


@fact
def budget_total_on_top() -> Int:
    """Tokens the window must hold for the example with the reasoning budget on top: input + reasoning + max_tokens."""
    return Int(_budget(context.ON_TOP).total)


@fact
def qwen3_8b_budget_inside() -> Text:
    """`context.context_budget`'s verdict on the example in Qwen3-8B's window, reasoning inside max_tokens (default).

    The convention of OpenAI (`max_completion_tokens`), Anthropic (extended thinking) and vLLM; sources in
    `chapter2.context`.
    """
    return Text(_budget(context.INSIDE).explanation)


@fact
def qwen3_8b_budget_on_top() -> Text:
    """`context.context_budget`'s verdict on the same example with the reasoning budget on top of max_tokens.

    The convention of APIs whose max_tokens caps only the answer (e.g. SiliconFlow,
    https://docs.siliconflow.com/en/userguide/capabilities/reasoning).
    """
    return Text(_budget(context.ON_TOP).explanation)


# -- prefill and decode: the KV cache ------------------------------------------------------
@fact
def llama_8b_layers() -> Int:
    """Llama 3.1 8B's transformer blocks (config.json `num_hidden_layers`)."""
    return Int(_cfg("Llama-3.1-8B").num_hidden_layers)


@fact
def llama_8b_kv_heads() -> Int:
    """Llama 3.1 8B's key/value heads (config.json `num_key_value_heads`)."""
    return Int(_cfg("Llama-3.1-8B").num_key_value_heads)


@fact
def llama_8b_head_dim() -> Int:
    """Llama 3.1 8B's head dimension (hidden_size / num_attention_heads)."""
    return Int(_cfg("Llama-3.1-8B").head_dim)


@fact
def llama_8b_kv_bytes_per_token() -> Int:
    """Bytes Llama 3.1 8B's KV cache grows by per token in BF16, exact: 2 x layers x KV heads x head_dim x 2."""
    return Int(_cfg("Llama-3.1-8B").kv_cache_bytes_per_token("bf16"))


@fact
def llama_8b_kv_per_token() -> Bytes:
    """The same per-token KV cache size with an SI prefix (131 kB)."""
    return Bytes(_cfg("Llama-3.1-8B").kv_cache_bytes_per_token("bf16"))


@fact
def llama_8b_kv_full_context() -> Bytes:
    """KV cache of one Llama 3.1 8B sequence at its full context window, BF16 (`kv_cache_bytes`)."""
    c = _cfg("Llama-3.1-8B")
    return Bytes(c.kv_cache_bytes(c.max_position_embeddings, dtype="bf16"))


@fact
def llama_8b_weights_bf16() -> Bytes:
    """Bytes of all of Llama 3.1 8B's weights in BF16 (`weights_bytes`)."""
    return Bytes(_cfg("Llama-3.1-8B").weights_bytes("bf16"))


# -- KV cache per layer kind, and multi-head latent attention ------------------------------------
def _kind_counts(c: ModelConfig) -> str:
    """'18 full + 18 sliding (128)': the attention layers of a config by kind, with windows and chunks."""
    parts = []
    for kind, label, window in (("full_attention", "full", None), ("sliding_attention", "sliding", c.sliding_window),
                                ("chunked_attention", "chunked", c.attention_chunk_size)):
        n = c.kinds.count(kind)
        if n:
            parts.append(f"{n} {label}" + (f" ({window:,})" if window else ""))
    return " + ".join(parts) + (" (MLA)" if c.uses_mla else "")


def _cached_per_layer(c: ModelConfig) -> str:
    """What one layer caches per token: K and V per KV head, or MLA's latent and RoPE key."""
    if c.uses_mla:
        return f"latent {c.kv_lora_rank} + RoPE key {c.qk_rope_head_dim} = {c.kv_cache_elements_per_token(0):,}"
    return f"2 × {c.num_key_value_heads} × {c.head_dim} = {c.kv_cache_elements_per_token(0):,}"


@fact
def long_context_tokens() -> Int:
    """The context of the long-context KV comparison (a 128k-token request), an input of the worked example."""
    return Int(LONG_CONTEXT)


@fact
def kv_layer_kinds_table() -> Table:
    """KV cache of one sequence of LONG_CONTEXT tokens in BF16 for the shipped configs whose layers do not all cache
    the same way (sliding windows, chunked attention, MLA), next to Llama 3.1 8B, and next to what the same model
    would hold if every layer kept every token's per-head K and V (`kv_cache_bytes`, `mla="expanded"`)."""
    rows = []
    for name in KV_KIND_EXAMPLES:
        c = _cfg(name)
        every = c.kv_cache_bytes_per_token("bf16", mla="expanded") * LONG_CONTEXT
        held = c.kv_cache_bytes(LONG_CONTEXT, dtype="bf16")
        rows.append((Text(name), Text(_kind_counts(c)), Text(_cached_per_layer(c)), Bytes(held), Bytes(every),
                     Pct(held / every, 2)))
    header = ("model", "layers by kind (window or chunk)", "cached per token and layer", "KV cache held",
              "if every layer kept per-head K, V of every token", "share")
    return Table(header, tuple(rows), align="lllrrr")


def _deepseek() -> ModelConfig:
    return _cfg("DeepSeek-V3")


@fact
def deepseek_v3_layers() -> Int:
    """DeepSeek-V3's layers (config.json `num_hidden_layers`)."""
    return Int(_deepseek().num_hidden_layers)


@fact
def deepseek_v3_query_heads() -> Int:
    """DeepSeek-V3's attention heads (config.json `num_attention_heads`)."""
    return Int(_deepseek().num_attention_heads)


@fact
def deepseek_v3_kv_heads() -> Int:
    """DeepSeek-V3's config.json `num_key_value_heads` (128): a field MLA does not use for its cache."""
    return Int(_deepseek().num_key_value_heads)


@fact
def deepseek_v3_size_vs_llama_8b() -> Times:
    """DeepSeek-V3's total parameters over Llama 3.1 8B's (`params().total`)."""
    return Times(_deepseek().params().total / _cfg("Llama-3.1-8B").params().total, 2)


@fact
def supported_families() -> Text:
    """The model families `ModelConfig` reads exactly (`chapter2.models.FAMILIES`), as a list of names."""
    return Text(", ".join(f.label for f in FAMILIES))


@fact
def deepseek_v3_kv_lora_rank() -> Int:
    """Width of DeepSeek-V3's compressed key/value latent (config.json `kv_lora_rank`)."""
    return Int(_deepseek().kv_lora_rank)


@fact
def deepseek_v3_qk_rope_head_dim() -> Int:
    """Width of the RoPE key DeepSeek-V3's heads share (config.json `qk_rope_head_dim`)."""
    return Int(_deepseek().qk_rope_head_dim)


@fact
def deepseek_v3_qk_nope_head_dim() -> Int:
    """Width of each head's key part without RoPE, decompressed from the latent (config.json `qk_nope_head_dim`)."""
    return Int(_deepseek().qk_nope_head_dim)


@fact
def deepseek_v3_v_head_dim() -> Int:
    """Width of each head's value, decompressed from the latent (config.json `v_head_dim`)."""
    return Int(_deepseek().v_head_dim)


@fact
def deepseek_v3_mla_cached_per_layer() -> Int:
    """Numbers DeepSeek-V3 caches per token and layer: kv_lora_rank + qk_rope_head_dim (`kv_cache_elements_per_token`)."""
    return Int(_deepseek().kv_cache_elements_per_token(0))


@fact
def deepseek_v3_expanded_per_layer() -> Int:
    """Numbers per token and layer if DeepSeek-V3 cached every head's key (nope + rope) and value:
    heads x (qk_nope + qk_rope + v_head_dim) (`kv_cache_elements_per_token(mla="expanded")`)."""
    return Int(_deepseek().kv_cache_elements_per_token(0, mla="expanded"))


@fact
def deepseek_v3_mla_saving() -> Times:
    """How many times smaller the latent cache is than per-head keys and values (expanded / latent)."""
    d = _deepseek()
    return Times(d.kv_cache_elements_per_token(0, mla="expanded") / d.kv_cache_elements_per_token(0))


@fact
def deepseek_v3_kv_bytes_per_token() -> Int:
    """Bytes DeepSeek-V3's cache grows by per token in BF16: layers x 576 x 2 (`kv_cache_bytes_per_token`)."""
    return Int(_deepseek().kv_cache_bytes_per_token("bf16"))


@fact
def deepseek_v3_kv_vs_llama_8b() -> Pct:
    """DeepSeek-V3's KV bytes per token as a share of Llama 3.1 8B's (both BF16)."""
    return Pct(_deepseek().kv_cache_bytes_per_token("bf16") / _cfg("Llama-3.1-8B").kv_cache_bytes_per_token("bf16"), 2)


@fact
def deepseek_v3_absorbed_flops_per_key() -> Int:
    """FLOPs per cached token and layer in MLA's absorbed form, all heads: 2 H (kv_lora_rank + qk_rope) for the
    scores plus 2 H kv_lora_rank for summing latents (`attention_flops_per_key`)."""
    return Int(_deepseek().attention_flops_per_key("absorbed"))


@fact
def deepseek_v3_expanded_flops_per_key() -> Int:
    """FLOPs per cached token and layer with per-head keys and values: 2 H (qk_nope + qk_rope + v_head_dim)."""
    return Int(_deepseek().attention_flops_per_key("expanded"))


def _attention_intensity(c: ModelConfig, mla: str = "absorbed") -> float:
    """Decode attention's FLOPs per byte of BF16 KV cache read: FLOPs per key / bytes per key, one layer."""
    return c.attention_flops_per_key(mla) / (c.kv_cache_elements_per_token(0, mla=mla) * 2)


@fact
def deepseek_v3_absorbed_intensity() -> Num:
    """DeepSeek-V3 decode attention, absorbed form over the BF16 latent cache: FLOPs per byte read."""
    return Num(_attention_intensity(_deepseek()), 3)


@fact
def deepseek_v3_expanded_intensity() -> Num:
    """DeepSeek-V3 decode attention over a BF16 cache of per-head keys and values: FLOPs per byte read."""
    return Num(_attention_intensity(_deepseek(), "expanded"), 3)


@fact
def deepseek_v3_mixed_intensity() -> Num:
    """The mixed accounting this page used to show: expanded-form FLOPs over latent-cache bytes (per key, BF16)."""
    d = _deepseek()
    return Num(d.attention_flops_per_key("expanded") / (d.kv_cache_elements_per_token(0) * 2), 3)


@fact
def llama_8b_attention_intensity() -> Num:
    """Llama 3.1 8B decode attention: FLOPs per byte of BF16 KV cache read (its GQA group shares each K and V)."""
    return Num(_attention_intensity(_cfg("Llama-3.1-8B")), 3)


# -- sampling ------------------------------------------------------------------------------------
def _three_decimals(p: float) -> Num:
    return _decimals(float(p), 3)


@fact
def sampling_table() -> Table:
    """The five example logits and the distribution `sampling.probs` makes of them under each setting."""
    header = ("settings", *(f"token {i}" for i in range(len(EXAMPLE_LOGITS))))
    rows = [("logits", *(Num(x) for x in EXAMPLE_LOGITS))]
    for label, kwargs in SAMPLING_SETTINGS:
        rows.append((label, *(_three_decimals(p) for p in _probs(**kwargs))))
    return Table(header, tuple(rows))


@fact
def sampling_token0_prob() -> Num:
    """Probability of token 0 (the largest logit) under a plain softmax, T = 1."""
    return Num(float(_probs()[0]), 2)


@fact
def sampling_token0_prob_low_temperature() -> Num:
    """Probability of token 0 at half the temperature (T = 0.5)."""
    return Num(float(_probs(temperature=LOW_TEMPERATURE)[0]), 2)


@fact
def sampling_top_p() -> Num:
    """The example's top-p threshold."""
    return Num(TOP_P)


@fact
def top_p_kept_tokens() -> Int:
    """How many of the five tokens top-p at 0.8 keeps."""
    return Int(_top_p_kept())


@fact
def top_p_tokens_short_of_p() -> Int:
    """The likeliest tokens before the last one top-p keeps (their mass is still below p)."""
    return Int(_top_p_kept() - 1)


@fact
def top_p_mass_short_of_p() -> Num:
    """Softmax mass of the likeliest tokens before the last one top-p keeps: below p, so one more is needed."""
    desc = np.sort(_probs())[::-1]
    return Num(float(desc[: _top_p_kept() - 1].sum()), 3)


@fact
def top_p_last_kept_token() -> Int:
    """The token whose probability carries the kept mass past p: the least likely token top-p keeps."""
    p = _probs(top_p=TOP_P)
    kept = np.flatnonzero(p > 0)
    return Int(int(kept[np.argmin(p[kept])]))


@fact
def logit_bias_offset() -> Num:
    """The logit bias the example adds to token 3."""
    return Num(BIAS)


@fact
def bias_token_logit() -> Num:
    """Token 3's logit before the bias."""
    return Num(EXAMPLE_LOGITS[BIAS_TOKEN])


@fact
def bias_token_biased_logit() -> Num:
    """Token 3's logit after the bias (`sampling.apply_logit_bias`)."""
    return Num(float(sampling.apply_logit_bias(list(EXAMPLE_LOGITS), {BIAS_TOKEN: BIAS})[BIAS_TOKEN]))


@fact
def bias_token_prob() -> Num:
    """Token 3's probability after the bias: now the likeliest token."""
    return Num(float(_probs(logit_bias={BIAS_TOKEN: BIAS})[BIAS_TOKEN]), 3)


# -- 2.2.1 and 2.2.2 architecture and transformer blocks -------------------------------------------
@fact
def example_architecture_family() -> Text:
    """The family `describe_architecture` reads from the class name Qwen3MoeForCausalLM."""
    return Text(describe_architecture(ARCHITECTURE_EXAMPLE).family)


@fact
def example_architecture_is_moe() -> Text:
    """Whether `describe_architecture` reads Qwen3MoeForCausalLM as a mixture of experts ("yes"/"no")."""
    return Text("yes" if describe_architecture(ARCHITECTURE_EXAMPLE).is_moe else "no")


@fact
def example_architecture_task() -> Text:
    """The task `describe_architecture` reads from the class name's head ("ForCausalLM")."""
    return Text(describe_architecture(ARCHITECTURE_EXAMPLE).task)


@fact
def lora_rank() -> Int:
    """The LoRA rank of the example."""
    return Int(LORA_RANK)


@fact
def llama_8b_q_proj_shape() -> Text:
    """Llama 3.1 8B's query projection weight, n x k = (query heads x head_dim) x hidden size."""
    n, k = _llama_q_proj()
    return Text(f"{n:,} × {k:,}")


@fact
def lora_q_proj_params() -> Int:
    """Numbers a rank-16 LoRA adapter trains on the query projection: B (n x r) plus A (r x k)."""
    n, k = _llama_q_proj()
    return Int(LORA_RANK * (n + k))


@fact
def llama_8b_q_proj_params() -> Int:
    """Weights of Llama 3.1 8B's query projection, n x k."""
    n, k = _llama_q_proj()
    return Int(n * k)


@fact
def lora_q_proj_share() -> Pct:
    """The LoRA adapter's size as a share of the query projection: r·(n + k) / (n·k)."""
    n, k = _llama_q_proj()
    return Pct(LORA_RANK * (n + k) / (n * k), 2)


@fact
def model_configs_table() -> Table:
    """Every shipped config: class, layers, hidden size, heads, what one layer caches per token, its layers by
    attention kind, vocabulary, total and active parameters (billions; language model only for the multimodal
    releases). For MLA the KV-heads column says "latent": its cache is one latent per layer, not per-head K and V."""
    rows = []
    for c in _configs():
        p = c.params()
        heads = f"{c.num_attention_heads} / latent" if c.uses_mla else f"{c.num_attention_heads} / {c.num_key_value_heads}"
        rows.append((Text(c.name), Text(f"`{c.architecture}`"), Int(c.num_hidden_layers), Int(c.hidden_size),
                     Text(heads), Text(_cached_per_layer(c)), Text(_kind_counts(c)), Int(c.vocab_size),
                     _billions(p.total), _billions(p.active)))
    header = ("model", "architecture", "layers", "hidden", "query / KV heads", "cached per token and layer",
              "layers by attention kind", "vocabulary", "total (billions)", "active (billions)")
    return Table(header, tuple(rows), align="llrrrllrrr")


@fact
def llama_8b_total_params_billion() -> Num:
    """Llama 3.1 8B's total parameters in billions (`ModelConfig.params().total`)."""
    return Num(_cfg("Llama-3.1-8B").params().total / 1e9, 3)


@fact
def llama_8b_hidden_size() -> Int:
    """Llama 3.1 8B's hidden size D (config.json `hidden_size`)."""
    return Int(_cfg("Llama-3.1-8B").hidden_size)


@fact
def llama_8b_ffn_width() -> Int:
    """Llama 3.1 8B's feed-forward width (config.json `intermediate_size`)."""
    return Int(_cfg("Llama-3.1-8B").intermediate_size)


def _llama_parts(c: ModelConfig) -> list[tuple[str, int]]:
    """Llama 3.1 8B's parameters by part, from the config's sizes (no biases, untied LM head)."""
    h, layers = c.hidden_size, c.num_hidden_layers
    attn = 2 * h * c.num_attention_heads * c.head_dim + 2 * h * c.num_key_value_heads * c.head_dim
    return [
        ("embedding table (V × D)", c.vocab_size * h),
        (f"attention, {layers} blocks (q, k, v, o projections)", layers * attn),
        (f"feed-forward, {layers} blocks (gate, up, down)", layers * 3 * h * c.intermediate_size),
        ("RMSNorm weights", (2 * layers + 1) * h),
        ("LM head (V × D)", c.vocab_size * h),
    ]


@fact
def llama_8b_param_breakdown() -> Table:
    """Where Llama 3.1 8B's parameters sit, part by part, with each part's share of `params().total`.

    The total row is the sum of the parts, and its share is that sum over
    `params().total`: 100 % when the two counts agree (tests/test_pages_llm_inference.py
    asserts they do).
    """
    c = _cfg("Llama-3.1-8B")
    total = c.params().total
    parts = _llama_parts(c)
    rows = [(Text(name), Int(n), _share(n / total)) for name, n in parts]
    summed = sum(n for _, n in parts)
    rows.append((Text("**total**"), Int(summed), _share(summed / total)))
    return Table(("part", "parameters", "share"), tuple(rows))


@fact
def llama_8b_query_heads() -> Int:
    """Llama 3.1 8B's query heads (config.json `num_attention_heads`)."""
    return Int(_cfg("Llama-3.1-8B").num_attention_heads)


@fact
def llama_8b_gqa_group() -> Int:
    """Query heads per K/V head in Llama 3.1 8B (`gqa_group`): how many times smaller GQA makes the KV cache."""
    return Int(_cfg("Llama-3.1-8B").gqa_group)


# -- 2.2.3 attention -------------------------------------------------------------------------------
@fact
def causal_example_tokens() -> Int:
    """Tokens in the causal-mask example."""
    return Int(CAUSAL_EXAMPLE_TOKENS)


@fact
def causal_example_attended_pairs() -> Int:
    """Query-key pairs the causal mask leaves for 8 tokens (`attention.attended_pairs`)."""
    return Int(attention.attended_pairs(CAUSAL_EXAMPLE_TOKENS, causal=True))


@fact
def causal_example_all_pairs() -> Int:
    """All query-key pairs of 8 tokens without a mask (`attention.attended_pairs`, not causal)."""
    return Int(attention.attended_pairs(CAUSAL_EXAMPLE_TOKENS))


@fact
def cache_example_decode_tokens() -> Int:
    """Tokens decoded in the KV cache example."""
    return Int(CACHE_DECODE_TOKENS)


@fact
def cache_example_prompt_tokens() -> Int:
    """Prompt tokens in the KV cache example."""
    return Int(CACHE_PROMPT_TOKENS)


@fact
def cache_example_pairs_with_cache() -> Int:
    """Query-key pairs scored decoding 1,000 tokens after a 1,000-token prompt with the cache: one query per step."""
    return Int(_cache_pairs()[0])


@fact
def cache_example_pairs_without_cache() -> Int:
    """The same without the cache: every step reruns causal attention over the whole sequence."""
    return Int(_cache_pairs()[1])


@fact
def cache_example_pairs_ratio() -> Num:
    """How many times more query-key pairs decoding scores without the KV cache than with it."""
    with_cache, without = _cache_pairs()
    return Num(without / with_cache, 3)


# -- 2.2.4 mixture of experts -------------------------------------------------------------------------
@fact
def qwen3_235b_moe_layers() -> Int:
    """Qwen3-235B-A22B's MoE layers (all of its `num_hidden_layers`; `ModelConfig.moe_layers`)."""
    return Int(len(_cfg("Qwen3-235B-A22B").moe_layers))


@fact
def qwen3_235b_experts() -> Int:
    """Qwen3-235B-A22B's routed experts per layer (config.json `num_experts`)."""
    return Int(_cfg("Qwen3-235B-A22B").num_experts)


@fact
def qwen3_235b_experts_per_token() -> Int:
    """Experts each token uses in Qwen3-235B-A22B (config.json `num_experts_per_tok`)."""
    return Int(_cfg("Qwen3-235B-A22B").num_experts_per_tok)


@fact
def qwen3_235b_total_params_billion() -> Num:
    """Qwen3-235B-A22B's total parameters in billions, one decimal (`ModelConfig.params().total`)."""
    return _billions(_cfg("Qwen3-235B-A22B").params().total)


@fact
def qwen3_235b_active_params_billion() -> Num:
    """Qwen3-235B-A22B's parameters one token uses, in billions, one decimal (`params().active`)."""
    return _billions(_cfg("Qwen3-235B-A22B").params().active)


@fact
def qwen3_235b_active_share() -> Pct:
    """Share of Qwen3-235B-A22B's parameters one token uses (active / total)."""
    p = _cfg("Qwen3-235B-A22B").params()
    return _share(p.active / p.total)


@fact
def qwen3_235b_total_params_rounded() -> Num:
    """Qwen3-235B-A22B's total parameters rounded to whole billions: the "235B" of its name and of the chapter."""
    return Num(round(_cfg("Qwen3-235B-A22B").params().total / 1e9))


@fact
def qwen3_235b_active_params_rounded() -> Num:
    """Qwen3-235B-A22B's active parameters rounded to whole billions: the "A22B" of its name and the chapter's 22B."""
    return Num(round(_cfg("Qwen3-235B-A22B").params().active / 1e9))


@fact
def qwen3_235b_expert_params_million() -> Num:
    """Parameters of one Qwen3-235B-A22B expert (a SwiGLU MLP), in millions (`moe.QWEN3_235B_A22B.expert_params`)."""
    return _decimals(QWEN3_MOE.expert_params / 1e6, 1)


@fact
def qwen3_235b_expert_weight_share() -> Pct:
    """Share of Qwen3-235B-A22B's parameters held by its routed experts."""
    return _share(QWEN3_MOE.total_expert_params / _cfg("Qwen3-235B-A22B").params().total)


@fact
def qwen3_235b_experts_touched_one_token() -> Num:
    """Experts one token touches per layer (`moe.expected_experts_touched` with T = 1: k)."""
    return Num(moe.expected_experts_touched(QWEN3_MOE.n_experts, QWEN3_MOE.k, 1))


@fact
def coverage_most() -> Pct:
    """The first coverage target of the example: 90 % of a layer's experts."""
    return Pct(COVERAGE_MOST)


@fact
def coverage_nearly_all() -> Pct:
    """The second coverage target of the example: 99 % of a layer's experts."""
    return Pct(COVERAGE_NEARLY_ALL)


@fact
def qwen3_235b_tokens_touching_most() -> Int:
    """Smallest batch whose tokens touch 90 % of Qwen3-235B-A22B's experts on average (`moe.tokens_for_coverage`)."""
    return Int(moe.tokens_for_coverage(QWEN3_MOE.n_experts, QWEN3_MOE.k, COVERAGE_MOST))


@fact
def qwen3_235b_tokens_touching_nearly_all() -> Int:
    """Smallest batch whose tokens touch 99 % of Qwen3-235B-A22B's experts on average (`moe.tokens_for_coverage`)."""
    return Int(moe.tokens_for_coverage(QWEN3_MOE.n_experts, QWEN3_MOE.k, COVERAGE_NEARLY_ALL))


@fact
def moe_decode_batch() -> Int:
    """The batch of the MoE decode-step example."""
    return Int(MOE_DECODE_BATCH)


@fact
def qwen3_235b_expert_bytes_one_request() -> Bytes:
    """Expert weights one decode step of a single request reads in BF16, all layers (`moe.moe_decode_step`)."""
    return Bytes(_moe_step(1).bytes_loaded)


@fact
def qwen3_235b_expert_bytes_batch() -> Bytes:
    """Expert weights one decode step of a 256-token batch reads in BF16, all layers (`moe.moe_decode_step`)."""
    return Bytes(_moe_step(MOE_DECODE_BATCH).bytes_loaded)


@fact
def qwen3_235b_expert_share_read_batch() -> Pct:
    """Share of all expert weights a 256-token decode step reads (`MoeDecodeStep.weight_share_loaded`)."""
    return _share(_moe_step(MOE_DECODE_BATCH).weight_share_loaded)


@fact
def qwen3_235b_expert_compute_share() -> Pct:
    """Share of the expert arithmetic each token does: k / E (`MoeDecodeStep.compute_share`)."""
    return _share(_moe_step(MOE_DECODE_BATCH).compute_share, 2)


@fact
def qwen3_235b_expert_compute_saving() -> Num:
    """How many times less expert arithmetic than running every expert: E / k (`MoeDecodeStep.compute_saving`)."""
    return Num(_moe_step(MOE_DECODE_BATCH).compute_saving)


def _named_sizes(configs, places: int, active: bool = False) -> Text:
    def size(c: ModelConfig) -> str:
        p = c.params()
        if active:
            return f"{_billions(p.total, places)}B total, {_billions(p.active, places)}B active"
        return f"{_billions(p.total, places)}B"
    return Text(", ".join(f"{c.name} ({size(c)})" for c in configs))


@fact
def moe_rule_of_thumb_billion() -> Int:
    """The chapter's rule of thumb: MoE tends to appear above roughly this many billion parameters."""
    return Int(round(MOE_RULE_OF_THUMB_PARAMS / 1e9))


@fact
def configs_above_rule() -> Text:
    """The shipped configs above the rule's 100B, largest first, with total parameters in billions (all are MoE)."""
    big = sorted((c for c in _configs() if c.params().total > MOE_RULE_OF_THUMB_PARAMS), key=lambda c: -c.params().total)
    return _named_sizes(big, 0)


@fact
def small_moe_configs() -> Text:
    """The shipped mixtures of experts below the rule's 100B, with total and active parameters in billions."""
    small = [c for c in _configs() if c.is_moe and c.params().total <= MOE_RULE_OF_THUMB_PARAMS]
    return _named_sizes(small, 1, active=True)


@fact
def dense_configs() -> Text:
    """The shipped dense models, with their total parameters in billions (one decimal)."""
    return _named_sizes([c for c in _configs() if not c.is_moe], 1)


LEAVES = (
    Leaf("Input + max_tokens must fit the context window; reasoning counts inside max_tokens",
         "tokens-context-and-chat-templates"),
    Leaf("Prefill reads the prompt in parallel; decode makes one token per forward pass", "prefill-and-decode"),
    Leaf("Sampling: bias, temperature, top-k, top-p", "sampling"),
    Leaf("Attention reads every earlier token, so cache K and V", "223-attention"),
    Leaf("MoE: {{ fact: llm_inference.qwen3_235b_active_params_rounded }}B of "
         "{{ fact: llm_inference.qwen3_235b_total_params_rounded }}B parameters active per token",
         "224-mixture-of-experts"),
)

CARDS = (
    Card("llm-context-reasoning", "tokens-context-and-chat-templates",
         "Do a reasoning model's thinking tokens count against max_tokens, and what must fit in the context window?",
         """Yes, in the common convention (OpenAI's `max_completion_tokens`, Anthropic's extended thinking, vLLM):
         reasoning tokens are generated tokens, so `input + max_tokens ≤ context window` and the reasoning budget
         is part of max_tokens. In Qwen3-8B's {{ fact: llm_inference.qwen3_8b_context_window }}-token window,
         {{ fact: llm_inference.budget_input_tokens }} input tokens with max_tokens
         {{ fact: llm_inference.budget_max_tokens }} need {{ fact: llm_inference.budget_total_inside }} and fit;
         an API that adds the {{ fact: llm_inference.budget_reasoning_tokens }}-token reasoning budget on top
         needs {{ fact: llm_inference.budget_total_on_top }} and rejects it."""),
    Card("llm-prefill-decode", "prefill-and-decode",
         "What do prefill and decode each do, and which latency does each set?",
         """Prefill runs all prompt tokens through the model in parallel, fills the KV cache and yields the first
         token: it sets the time to first token. Decode then makes one token per forward pass, reading the cache
         instead of recomputing the prompt: it sets the time per output token, and so the tokens per second."""),
    Card("llm-kv-bytes", "prefill-and-decode",
         "How much KV cache does one token add in Llama 3.1 8B (BF16)?",
         """`2 × layers × KV heads × head_dim × 2 bytes` = 2 × {{ fact: llm_inference.llama_8b_layers }} ×
         {{ fact: llm_inference.llama_8b_kv_heads }} × {{ fact: llm_inference.llama_8b_head_dim }} × 2 =
         {{ fact: llm_inference.llama_8b_kv_per_token }}. At the full
         {{ fact: llm_inference.llama_8b_context_window }}-token context one sequence needs
         {{ fact: llm_inference.llama_8b_kv_full_context }}, more than the
         {{ fact: llm_inference.llama_8b_weights_bf16 }} of weights."""),
    Card("llm-mla-cache", "prefill-and-decode",
         "What does DeepSeek-V3 cache per token and layer, and why does its attention come close to compute bound?",
         """Multi-head latent attention caches one latent of `kv_lora_rank` =
         {{ fact: llm_inference.deepseek_v3_kv_lora_rank }} numbers plus a shared RoPE key of
         {{ fact: llm_inference.deepseek_v3_qk_rope_head_dim }}: {{ fact: llm_inference.deepseek_v3_mla_cached_per_layer }}
         numbers, not per-head K and V ({{ fact: llm_inference.deepseek_v3_expanded_per_layer }}). Kernels work on the
         latent directly (the absorbed form): {{ fact: llm_inference.deepseek_v3_absorbed_flops_per_key }} FLOPs per
         cached token and layer, about {{ fact: llm_inference.deepseek_v3_absorbed_intensity }} FLOPs per byte,
         against {{ fact: llm_inference.llama_8b_attention_intensity }} for Llama 3.1 8B's grouped-query attention."""),
    Card("llm-sampling-order", "sampling",
         "In which order are logit bias, temperature, top-k and top-p applied, and what is temperature 0?",
         """Logit bias, then temperature, then top-k, then top-p (the order of Hugging Face `generate`).
         Temperature 0 is greedy decoding: always the single likeliest token."""),
    Card("llm-kv-cache-why", "223-attention",
         "Why can attention cache keys and values at all?",
         """The causal mask stops a token from seeing later ones, so earlier keys and values never change. A
         decode step computes only the new token's q, k and v and scores one query against the cache.
         Decoding {{ fact: llm_inference.cache_example_decode_tokens }} tokens after a
         {{ fact: llm_inference.cache_example_prompt_tokens }}-token prompt scores
         {{ fact: llm_inference.cache_example_pairs_ratio }} times fewer query-key pairs with the cache than
         without."""),
    Card("llm-moe", "224-mixture-of-experts",
         "Qwen3-235B-A22B: how many experts does a token use, and why does a large batch still read almost all of them?",
         """{{ fact: llm_inference.qwen3_235b_experts_per_token }} of {{ fact: llm_inference.qwen3_235b_experts }}
         experts per layer, about {{ fact: llm_inference.qwen3_235b_active_params_rounded }}B of
         {{ fact: llm_inference.qwen3_235b_total_params_rounded }}B parameters per token. Each token picks its
         own experts, so a batch of {{ fact: llm_inference.qwen3_235b_tokens_touching_most }} tokens already
         touches {{ fact: llm_inference.coverage_most }} of them: MoE saves compute, and memory only with expert
         parallelism."""),
)
