"""Facts of section 2.2, second page: serving a request (docs/llm-inference.md).

The page follows one request through the model that the first page of the section opened
(docs/llm-architecture.md, `pages.llm_architecture`): tokens and the vocabulary, the context window and
`max_tokens`, the chat template, prefill and decode with the KV cache in use, and sampling. The page
keeps the section's old URL; its old anchors that moved to the first page are listed in `MOVED_ANCHORS`.

Model sizes come from the shipped config.json files (`chapter2.models.load_config`, counted by
`ModelConfig.params()`); the tokenizer is the tiny byte-level BPE the site ships (`chapter2.tokenizer.tiny`);
sampling numbers come from `chapter2.sampling`. The inputs of the page's worked examples (the five logits,
the budgets, the long context, ...) are the constants below, and each one the page prints is a fact too.
"""

from __future__ import annotations

import json

import numpy as np

from .. import context, sampling, serving, tokenizer
from ..format import (Bytes, Int, Num, Pct, Table, Text, Times, billions, cached_per_layer, decimals, kind_counts,
                      share)
from .._checks import dtype_bytes
from ..models import TINY_LM_DIR, ModelConfig, load_config
from . import Card, Leaf, fact
from .llm_architecture import PAGE as ARCHITECTURE_PAGE

PAGE = "llm-inference.md"
TITLE = "2.2a Serving an LLM request"

# The headings of this page as it was before section 2.2 became two pages (git f1658fe:docs/llm-inference.md),
# by anchor; those that now live on the first page map to their place there. The page keeps an element with each
# moved id, a link to the new place, and a script follows it (tests/test_pages_llm_inference.py, the browser test
# tests/browser/test_moved_anchors.py).
OLD_ANCHORS = ("22-llm-inference", "tokens-context-and-chat-templates", "prefill-and-decode", "sampling",
               "221-and-222-architecture-and-transformer-blocks", "223-attention", "224-mixture-of-experts")
MOVED_ANCHORS = {anchor: f"{ARCHITECTURE_PAGE}#{anchor}" for anchor in OLD_ANCHORS[4:]}

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
    (f"top_k = {TOP_K}", {"top_k": TOP_K}),
    (f"top_p = {TOP_P:g}", {"top_p": TOP_P}),
    (f"bias +{BIAS:g} on token {BIAS_TOKEN}", {"logit_bias": {BIAS_TOKEN: BIAS}}),
)
LONG_CONTEXT = 131_072  # the long-context KV comparison: one 128k-token sequence
# shipped configs whose layers cache differently (window, chunk, latent), after the all-full Llama 3.1 8B
KV_KIND_EXAMPLES = ("Llama-3.1-8B", "gpt-oss-120b", "gemma-3-27b-it", "Llama-4-Scout-17B-16E", "DeepSeek-V3")


# -- helpers -----------------------------------------------------------------------------------
def _vocab_tables(c: ModelConfig) -> int:
    """Parameters of the embedding table plus the separate LM head."""
    p = c.params()
    return p.embedding + p.lm_head


def _probs(**kwargs) -> np.ndarray:
    return sampling.probs(list(EXAMPLE_LOGITS), **kwargs)


def _top_p_kept() -> int:
    return int((_probs(top_p=TOP_P) > 0).sum())


# -- tokens, context and chat templates ----------------------------------------------------
@fact
def llama_8b_vocab_size() -> Int:
    """Llama 3.1 8B's vocabulary (config.json `vocab_size`)."""
    return Int(load_config("Llama-3.1-8B").vocab_size)


@fact
def qwen3_8b_vocab_size() -> Int:
    """Qwen3-8B's vocabulary (config.json `vocab_size`)."""
    return Int(load_config("Qwen3-8B").vocab_size)


@fact
def deepseek_v3_vocab_size() -> Int:
    """DeepSeek-V3's vocabulary (config.json `vocab_size`)."""
    return Int(load_config("DeepSeek-V3").vocab_size)


@fact
def qwen3_8b_vocab_params_billion() -> Num:
    """Qwen3-8B's embedding table plus its separate LM head, in billions of parameters (`ModelConfig.params()`)."""
    return Num(_vocab_tables(load_config("Qwen3-8B")) / 1e9, 3)


@fact
def qwen3_8b_total_params_billion() -> Num:
    """Qwen3-8B's total parameters in billions, one decimal (`ModelConfig.params().total`)."""
    return billions(load_config("Qwen3-8B").params().total)


@fact
def qwen3_8b_vocab_params_share() -> Pct:
    """Share of Qwen3-8B's parameters in the embedding table and LM head."""
    c = load_config("Qwen3-8B")
    return Pct(_vocab_tables(c) / c.params().total, 2)


@fact
def qwen3_235b_vocab_params_share() -> Pct:
    """Share of Qwen3-235B-A22B's parameters in the embedding table and LM head (same vocabulary as Qwen3-8B)."""
    c = load_config("Qwen3-235B-A22B")
    return share(_vocab_tables(c) / c.params().total)


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
    return Int(load_config("Llama-3.1-8B").max_position_embeddings)


@fact
def qwen3_8b_context_window() -> Int:
    """Qwen3-8B's context window in tokens (config.json `max_position_embeddings`)."""
    return Int(load_config("Qwen3-8B").max_position_embeddings)


@fact
def qwen3_output_reserve() -> Int:
    """Tokens of Qwen3's 40,960-token window that Qwen's documentation reserves for the output, thinking included.

    Published number (QWEN3_OUTPUT_RESERVE): https://qwen.readthedocs.io/en/latest/deployment/vllm.html.
    """
    return Int(QWEN3_OUTPUT_RESERVE)


@fact
def qwen3_prompt_reserve() -> Int:
    """The rest of Qwen3-8B's window once the output reserve is set aside: the prompt's share (8,192 in Qwen's docs)."""
    return Int(load_config("Qwen3-8B").max_position_embeddings - QWEN3_OUTPUT_RESERVE)


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
    return context.context_budget(load_config("Qwen3-8B").max_position_embeddings, BUDGET_INPUT_TOKENS, BUDGET_MAX_TOKENS,
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


# -- prefill and decode: the KV cache in use -------------------------------------------------------


def _tiny() -> ModelConfig:
    """The config of the tiny model the page's stepper runs (`chapter2.models.TINY_LM_DIR`)."""
    return ModelConfig.from_json(TINY_LM_DIR / "config.json")


def _kv_width(c: ModelConfig) -> int:
    """Numbers in one token's key (and in its value) in one layer: K/V heads x head dimension."""
    return c.num_key_value_heads * c.head_dim


@fact
def tiny_layers() -> Int:
    """Layers of the tiny model (config.json `num_hidden_layers`): rows of the stepper's cache grid."""
    return Int(_tiny().num_hidden_layers)


@fact
def tiny_kv_width() -> Int:
    """Numbers in one key (and one value) of the tiny model, per token and layer: K/V heads x head dimension."""
    return Int(_kv_width(_tiny()))


@fact
def tiny_kv_numbers_per_token() -> Int:
    """Numbers one token adds to the tiny model's KV cache: a key and a value in every layer
    (`kv_cache_elements_per_token`)."""
    return Int(_tiny().kv_cache_elements_per_token())


@fact
def llama_8b_kv_width() -> Int:
    """Numbers in one key (and one value) of Llama 3.1 8B, per token and layer: 8 K/V heads x 128."""
    return Int(_kv_width(load_config("Llama-3.1-8B")))


@fact
def llama_8b_kv_numbers_per_token() -> Int:
    """Numbers one token adds to Llama 3.1 8B's KV cache: a key and a value in each of its 32 layers."""
    return Int(load_config("Llama-3.1-8B").kv_cache_elements_per_token())


@fact
def bf16_bytes() -> Int:
    """Bytes per number in BF16 (`chapter2._checks.dtype_bytes`)."""
    return Int(int(dtype_bytes("dtype", "bf16")))


@fact
def llama_8b_kv_full_context() -> Bytes:
    """KV cache of one Llama 3.1 8B sequence at its full context window, BF16 (`kv_cache_bytes`)."""
    c = load_config("Llama-3.1-8B")
    return Bytes(c.kv_cache_bytes(c.max_position_embeddings, dtype="bf16"))


@fact
def llama_8b_weights_bf16() -> Bytes:
    """Bytes that hold all of Llama 3.1 8B's parameters in BF16, 2 bytes each, decimal GB (`weights_bytes`):
    what must sit in GPU memory (in FP16 the same bytes). Section 2.4's byte convention names this fact."""
    return Bytes(load_config("Llama-3.1-8B").weights_bytes("bf16"))


@fact
def llama_8b_weights_read_bf16() -> Bytes:
    """Bytes of Llama 3.1 8B's weights one forward pass reads in BF16: every parameter but the input embedding
    table, of which a pass looks up only its tokens' rows (section 2.4's byte convention, which names this fact)."""
    p = load_config("Llama-3.1-8B").params()
    return Bytes((p.total - p.embedding) * 2)


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
        c = load_config(name)
        every = c.kv_cache_bytes_per_token("bf16", mla="expanded") * LONG_CONTEXT
        held = c.kv_cache_bytes(LONG_CONTEXT, dtype="bf16")
        rows.append((Text(name), Text(kind_counts(c)), Text(cached_per_layer(c)), Bytes(held), Bytes(every),
                     Pct(held / every, 2)))
    header = ("model", "layers by kind (window or chunk)", "cached per token and layer", "KV cache held",
              "if every layer kept per-head K, V of every token", "share")
    return Table(header, tuple(rows), align="lllrrr")


# What NVIDIA sells as an "80 GB" H100 is 80 GiB of HBM3: nvidia-smi and cudaGetDeviceProperties report
# 81,559 MiB of it usable (80 GiB less the driver's reservations). The page quotes the nominal size in GiB.
H100_MEMORY_GIB = 80
# vLLM's engine argument gpu_memory_utilization defaults to 0.9: the share of GPU memory the engine plans with
# (https://docs.vllm.ai/en/latest/configuration/engine_args.html, `--gpu-memory-utilization`).
VLLM_GPU_MEMORY_UTILIZATION = 0.9
# Mistral 7B v0.1 was trained with an 8,192-token context (Mistral 7B paper, arXiv:2310.06825, Table 1,
# "context_len 8192"); its config.json still says max_position_embeddings 32,768.
MISTRAL_7B_TRAINED_CONTEXT = 8_192


@fact
def h100_memory_gib() -> Int:
    """An "80 GB" H100's memory in GiB (2**30 bytes): its HBM is 80 GiB (H100_MEMORY_GIB)."""
    return Int(H100_MEMORY_GIB)


@fact
def h100_memory_gb_decimal() -> Num:
    """The same memory in decimal GB (1e9 bytes), three significant digits: 80 x 2**30 / 1e9."""
    return Num(H100_MEMORY_GIB * 2**30 / 1e9, 3)


@fact
def vllm_gpu_memory_utilization() -> Pct:
    """vLLM's default `gpu_memory_utilization`: the share of GPU memory it plans weights and KV cache in."""
    return Pct(VLLM_GPU_MEMORY_UTILIZATION, 2)


@fact
def vllm_memory_held_back() -> Pct:
    """What vLLM's default keeps back from its plan: 1 - gpu_memory_utilization."""
    return Pct(1 - VLLM_GPU_MEMORY_UTILIZATION, 2)


@fact
def mistral_7b_config_context() -> Int:
    """Mistral 7B v0.1's config window (config.json `max_position_embeddings`): what it accepts, not what it was
    trained on."""
    return Int(load_config("Mistral-7B-v0.1").max_position_embeddings)


@fact
def mistral_7b_trained_context() -> Int:
    """The context Mistral 7B v0.1 was trained with (MISTRAL_7B_TRAINED_CONTEXT, paper Table 1)."""
    return Int(MISTRAL_7B_TRAINED_CONTEXT)


# -- how servers keep the KV cache (chapter2.serving) ----------------------------------------------
# The worked examples of the three serving workbenches: Llama 3.1 8B on one H100 SXM in 16-bit numbers, at the
# calculators' defaults (tests/test_pages_llm_inference.py holds the two together).
SERVING_MODEL, SERVING_GPU = "Llama-3.1-8B", "H100-SXM"
SERVING_PROMPT, SERVING_PREFIX, SERVING_OUTPUT, SERVING_MAX_TOKENS = 2_500, 2_000, 500, 4_096
SERVING_HIT_RATE = 0.8
CHUNK_PROMPT, CHUNK_TOKENS, CHUNK_BATCH, CHUNK_CONTEXT = 8_192, 512, 64, 4_096
SPEC_ACCEPTANCE, SPEC_DRAFT_TOKENS, SPEC_CONTEXT = 0.8, 3, 4_096
# Llama 2 70B's config.json (https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json), the target
# of EAGLE's LLaMA2-Chat 70B head: hidden 8,192, MLP 28,672, 80 layers of 64 heads (8 KV heads), vocabulary 32,000.
LLAMA2_70B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
              "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64,
              "num_key_value_heads": 8, "vocab_size": 32000, "tie_word_embeddings": False}
# EAGLE (Li et al. 2024, arXiv:2401.15077, abstract): "For LLaMA2-Chat 70B, EAGLE achieved a latency speedup ratio
# of 2.7x-3.5x" (with a tree of drafts).
EAGLE_70B_SPEEDUP = (2.7, 3.5)
# DeepSeek-V3 (arXiv:2412.19437, section 5.4.3): "the acceptance rate of the second token prediction ranges between
# 85% and 90% ... delivering 1.8 times TPS": one token drafted by its multi-token-prediction module.
DEEPSEEK_MTP_ACCEPTANCE, DEEPSEEK_MTP_SPEEDUP = (0.85, 0.90), 1.8


def _milliseconds(seconds: float) -> Num:
    return Num(seconds * 1e3, 3, "ms")


def _serving_setup() -> dict:
    return dict(gpu=SERVING_GPU, dtype="fp16")


def _paged():
    pool = serving.kv_pool(SERVING_MODEL, **_serving_setup())
    return serving.paged_fit(pool, SERVING_PROMPT + SERVING_OUTPUT, reserved_tokens=SERVING_PROMPT + SERVING_MAX_TOKENS,
                             prefix_tokens=SERVING_PREFIX, hit_rate=SERVING_HIT_RATE)


def _prefix():
    return serving.prefix_cache(SERVING_MODEL, SERVING_PROMPT, SERVING_PREFIX, hit_rate=SERVING_HIT_RATE,
                                **_serving_setup())


def _chunked(chunk: int):
    return serving.chunked_prefill(SERVING_MODEL, CHUNK_PROMPT, chunk, decode_batch=CHUNK_BATCH,
                                   decode_context=CHUNK_CONTEXT, **_serving_setup())


def _speculative():
    return serving.speculative_decode(SERVING_MODEL, SPEC_CONTEXT, draft_tokens=SPEC_DRAFT_TOKENS,
                                      acceptance=SPEC_ACCEPTANCE, drafter_cost=serving.draft_head_cost(SERVING_MODEL),
                                      **_serving_setup())


@fact
def serving_block_size() -> Int:
    """vLLM's block size on CUDA GPUs, in tokens (`serving.VLLM_BLOCK_SIZE`)."""
    return Int(serving.VLLM_BLOCK_SIZE)


@fact
def serving_mean_block_waste() -> Num:
    """Empty slots in a sequence's last block, on average over lengths: (B - 1) / 2 (`mean_last_block_waste`)."""
    return Num(serving.mean_last_block_waste(serving.VLLM_BLOCK_SIZE), 2)


@fact
def serving_kv_pool() -> Bytes:
    """Memory left for KV caches on one H100 beside Llama 3.1 8B's 16-bit weights at vLLM's 0.9 (`kv_pool`)."""
    return Bytes(_paged().pool.free_bytes)


@fact
def serving_block_bytes() -> Bytes:
    """One block of Llama 3.1 8B's cache: 16 tokens x 131,072 bytes (`PagedFit.block_bytes`)."""
    return Bytes(_paged().block_bytes)


@fact
def serving_blocks() -> Int:
    """Blocks in that memory (`PagedFit.total_blocks`)."""
    return Int(_paged().total_blocks)


@fact
def serving_prompt_tokens() -> Int:
    """The worked request's prompt (SERVING_PROMPT), an input."""
    return Int(SERVING_PROMPT)


@fact
def serving_prefix_tokens() -> Int:
    """The system prompt every request opens with (SERVING_PREFIX), an input."""
    return Int(SERVING_PREFIX)


@fact
def serving_output_tokens() -> Int:
    """The worked request's output (SERVING_OUTPUT), an input."""
    return Int(SERVING_OUTPUT)


@fact
def serving_max_tokens() -> Int:
    """The request's max_tokens (SERVING_MAX_TOKENS): what a contiguous allocator reserves beyond the prompt."""
    return Int(SERVING_MAX_TOKENS)


@fact
def serving_sequence_tokens() -> Int:
    """Prompt + output: the tokens the finished sequence holds."""
    return Int(SERVING_PROMPT + SERVING_OUTPUT)


@fact
def serving_sequence_blocks() -> Int:
    """Blocks the finished sequence holds (`PagedFit.blocks_per_sequence`)."""
    return Int(_paged().blocks_per_sequence)


@fact
def serving_sequence_waste() -> Int:
    """Empty slots in its last block (`PagedFit.waste_tokens`)."""
    return Int(_paged().waste_tokens)


@fact
def serving_reserved_tokens() -> Int:
    """What a contiguous allocator reserves per request: prompt + max_tokens."""
    return Int(_paged().reserved_tokens)


@fact
def serving_fit_reserved() -> Int:
    """Sequences that fit reserving prompt + max_tokens each (`PagedFit.sequences_reserved`)."""
    return Int(_paged().sequences_reserved)


@fact
def serving_fit_paged() -> Int:
    """Sequences that fit in blocks (`PagedFit.sequences_paged`)."""
    return Int(_paged().sequences_paged)


@fact
def serving_fit_exact() -> Int:
    """Sequences that would fit with every byte holding a token (`PagedFit.sequences_exact`)."""
    return Int(_paged().sequences_exact)


@fact
def serving_fit_shared() -> Int:
    """Sequences that fit in blocks when 80 % of them share the system prompt's whole blocks (`PagedFit.sequences`)."""
    return Int(_paged().sequences)


@fact
def serving_prefix_blocks() -> Int:
    """The system prompt's whole blocks, shared: floor(2,000 / 16) (`shared_prefix_tokens` / B)."""
    return Int(_paged().shared_tokens // serving.VLLM_BLOCK_SIZE)


@fact
def serving_hit_rate() -> Pct:
    """The share of requests that find the system prompt cached (SERVING_HIT_RATE), an input."""
    return Pct(SERVING_HIT_RATE, 2)


@fact
def serving_suffix_tokens() -> Int:
    """The tokens a prefix-cache hit still computes: the prompt less its cached whole blocks."""
    pc = _prefix()
    return Int(pc.prompt_tokens - pc.cached_tokens)


@fact
def serving_miss_ms() -> Num:
    """Prefill of the whole 2,500-token prompt, lower bound (`PrefixCache.miss`)."""
    return _milliseconds(_prefix().miss.time)


@fact
def serving_hit_ms() -> Num:
    """Prefill of a hit: the last 500 tokens over 2,000 cached (`PrefixCache.hit`)."""
    return _milliseconds(_prefix().hit.time)


@fact
def serving_mean_ttft_ms() -> Num:
    """The mean of the two at an 80 % hit rate (`PrefixCache.ttft`)."""
    return _milliseconds(_prefix().ttft)


@fact
def serving_prefill_flops_saved() -> Pct:
    """The share of prefill FLOPs skipped on average at that hit rate (`PrefixCache.flops_saved`)."""
    return Pct(_prefix().flops_saved, 2)


@fact
def chunk_prompt_tokens() -> Int:
    """The long prompt of the chunked-prefill example (CHUNK_PROMPT), an input."""
    return Int(CHUNK_PROMPT)


@fact
def chunk_tokens() -> Int:
    """Its chunk size (CHUNK_TOKENS), an input."""
    return Int(CHUNK_TOKENS)


@fact
def chunk_decode_batch() -> Int:
    """Sequences already decoding beside it (CHUNK_BATCH), an input."""
    return Int(CHUNK_BATCH)


@fact
def chunk_decode_context() -> Int:
    """Their context, tokens each (CHUNK_CONTEXT), an input."""
    return Int(CHUNK_CONTEXT)


@fact
def chunk_whole_ms() -> Num:
    """The prompt in one step beside the batch: its time to first token, and the running sequences' wait."""
    return _milliseconds(_chunked(CHUNK_PROMPT).ttft)


@fact
def chunk_ttft_ms() -> Num:
    """Its time to first token in chunks of 512 (`ChunkedPrefill.ttft`)."""
    return _milliseconds(_chunked(CHUNK_TOKENS).ttft)


@fact
def chunk_steps() -> Int:
    """Steps that takes: ceil(8,192 / 512)."""
    return Int(len(_chunked(CHUNK_TOKENS).steps))


@fact
def chunk_tpot_ms() -> Num:
    """The running sequences' time per output token meanwhile: the slowest mixed step (`ChunkedPrefill.tpot`)."""
    return _milliseconds(_chunked(CHUNK_TOKENS).tpot)


@fact
def chunk_decode_tpot_ms() -> Num:
    """Their time per output token with no prompt beside them (`ChunkedPrefill.tpot_decode`)."""
    return _milliseconds(_chunked(CHUNK_TOKENS).tpot_decode)


@fact
def spec_acceptance() -> Num:
    """The worked acceptance rate (SPEC_ACCEPTANCE), an input."""
    return Num(SPEC_ACCEPTANCE, 2)


@fact
def spec_draft_tokens() -> Int:
    """Tokens drafted per step (SPEC_DRAFT_TOKENS), an input."""
    return Int(SPEC_DRAFT_TOKENS)


@fact
def spec_tokens_per_step() -> Num:
    """Expected tokens per step at that acceptance and draft length (`expected_tokens_per_step`)."""
    return Num(serving.expected_tokens_per_step(SPEC_ACCEPTANCE, SPEC_DRAFT_TOKENS), 3)


@fact
def spec_llama_drafter_cost() -> Num:
    """c of a one-layer draft head on Llama 3.1 8B, its LM head read too (`draft_head_cost`)."""
    return Num(serving.draft_head_cost(SERVING_MODEL), 3)


@fact
def spec_llama_speedup() -> Times:
    """The speedup of that drafter at 0.8 and 3 drafts, on the roofline (`SpeculativeDecode.speedup`)."""
    return Times(_speculative().speedup, 3)


@fact
def spec_llama_best_draft() -> Int:
    """The draft length with the largest speedup at 0.8 and that cost (`best_draft_tokens`)."""
    return Int(serving.best_draft_tokens(SPEC_ACCEPTANCE, serving.draft_head_cost(SERVING_MODEL)))


@fact
def spec_llama_best_speedup() -> Times:
    """Its speedup by Leviathan et al.'s formula (`leviathan_speedup`)."""
    c = serving.draft_head_cost(SERVING_MODEL)
    return Times(serving.leviathan_speedup(SPEC_ACCEPTANCE, serving.best_draft_tokens(SPEC_ACCEPTANCE, c), c), 3)


@fact
def eagle_70b_head_billion() -> Num:
    """An EAGLE head for Llama 2 70B, billions of weights: one layer and the 2h x h fusion (`draft_head_params`)."""
    return Num(serving.draft_head_params(ModelConfig.from_text(json.dumps(LLAMA2_70B), name="Llama-2-70b")) / 1e9, 2)


@fact
def eagle_70b_speedup_low() -> Times:
    """EAGLE's published latency speedup on LLaMA2-Chat 70B, low end (EAGLE_70B_SPEEDUP)."""
    return Times(EAGLE_70B_SPEEDUP[0], 2)


@fact
def eagle_70b_speedup_high() -> Times:
    """... and high end."""
    return Times(EAGLE_70B_SPEEDUP[1], 2)


@fact
def deepseek_mtp_acceptance_low() -> Pct:
    """DeepSeek-V3's published acceptance of its one drafted token, low end (DEEPSEEK_MTP_ACCEPTANCE)."""
    return Pct(DEEPSEEK_MTP_ACCEPTANCE[0], 2)


@fact
def deepseek_mtp_acceptance_high() -> Pct:
    """... and high end."""
    return Pct(DEEPSEEK_MTP_ACCEPTANCE[1], 2)


@fact
def deepseek_mtp_tokens_low() -> Num:
    """Expected tokens per step at the low acceptance with one draft: 1 + alpha."""
    return Num(serving.expected_tokens_per_step(DEEPSEEK_MTP_ACCEPTANCE[0], 1), 3)


@fact
def deepseek_mtp_tokens_high() -> Num:
    """... and at the high one."""
    return Num(serving.expected_tokens_per_step(DEEPSEEK_MTP_ACCEPTANCE[1], 1), 3)


@fact
def deepseek_mtp_cost() -> Num:
    """c of DeepSeek-V3's MTP module as a one-layer draft head (`draft_head_cost`)."""
    return Num(serving.draft_head_cost("DeepSeek-V3"), 2)


@fact
def deepseek_mtp_speedup_low() -> Times:
    """Leviathan et al.'s speedup at the low acceptance, one draft, that cost."""
    return Times(serving.leviathan_speedup(DEEPSEEK_MTP_ACCEPTANCE[0], 1, serving.draft_head_cost("DeepSeek-V3")), 3)


@fact
def deepseek_mtp_speedup_high() -> Times:
    """... and at the high acceptance."""
    return Times(serving.leviathan_speedup(DEEPSEEK_MTP_ACCEPTANCE[1], 1, serving.draft_head_cost("DeepSeek-V3")), 3)


@fact
def deepseek_mtp_measured() -> Times:
    """DeepSeek-V3's measured tokens per second with MTP against without (DEEPSEEK_MTP_SPEEDUP)."""
    return Times(DEEPSEEK_MTP_SPEEDUP, 2)


# -- sampling ------------------------------------------------------------------------------------
def _three_decimals(p: float) -> Num:
    return decimals(float(p), 3)


@fact
def sampling_table() -> Table:
    """The five example logits and the distribution `sampling.probs` makes of them under each setting."""
    header = ("settings", *(f"token {i}" for i in range(len(EXAMPLE_LOGITS))))
    rows = [("logits", *(Num(x) for x in EXAMPLE_LOGITS))]
    for label, kwargs in SAMPLING_SETTINGS:
        rows.append((label, *(_three_decimals(p) for p in _probs(**kwargs))))
    return Table(header, tuple(rows))


@fact
def sampling_logits() -> Text:
    """The five example logits, token 0 to token 4, printed as the sampling table's first row prints them: the
    worked example states its input in the prose, with the table of every setting in a collapsed block."""
    return Text(", ".join(str(Num(x)) for x in EXAMPLE_LOGITS))


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


# -- the chapter map and the recall cards ------------------------------------------------------------
LEAVES = (
    Leaf("Input + max_tokens must fit the context window; reasoning counts inside max_tokens",
         "tokens-context-and-chat-templates"),
    Leaf("Prefill reads the whole prompt in parallel, fills the KV cache and sets the time to first token",
         "prefill-and-decode", idea="prefill"),
    Leaf("Decode makes one token per forward pass, reading the KV cache", "prefill-and-decode", idea="decode"),
    Leaf("Sampling: bias, temperature, top_k, top_p", "sampling"),
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
    Card("llm-kv-full-context", "prefill-and-decode",
         "How much KV cache does one Llama 3.1 8B sequence at its full context need, next to its weights?",
         """{{ fact: llm_architecture.llama_8b_kv_per_token }} per token (BF16) times
         {{ fact: llm_inference.llama_8b_context_window }} tokens: {{ fact: llm_inference.llama_8b_kv_full_context }},
         more than the {{ fact: llm_inference.llama_8b_weights_bf16 }} that hold all of its weights. What is left
         of GPU memory after the weights decides how many sequences can be served at once."""),
    Card("llm-sampling-order", "sampling",
         "In which order are logit bias, temperature, top_k and top_p applied, and what is temperature 0?",
         """Logit bias, then temperature, then top_k, then top_p (the order of Hugging Face `generate`).
         Greedy decoding, always the single likeliest token, is temperature 0 in the OpenAI API and vLLM; Hugging
         Face `generate` refuses temperature 0 and asks for `do_sample=False`."""),
)
