"""Calculators of section 2.2: the KV cache next to the weights, and a model's parameters.

Every token in context keeps one key and one value vector per K/V head in
every layer, so the cache grows linearly with context and batch:

    bytes = context * batch * (2 * layers * kv_heads * head_dim) * bytes_per_value

Grouped-query attention shrinks it by sharing K/V heads; a sliding window or
Llama 4's attention chunks cap the context term of their layers; DeepSeek's
multi-head latent attention caches one small latent per layer instead of K and
V. The numbers come from `chapter2.models.ModelConfig`, for a shipped
config.json or one the reader pastes (`_models.pick_model`).
"""

from __future__ import annotations

from .._checks import dtype_bytes
from ..format import Times, nbytes, number
from . import _charts
from ._models import (billions, defaulted, fit_context, kv_breakdown, kv_numbers, model_fields, model_numbers,
                      model_summary, pick_model, state_dtype_text)
from ._registry import Field, Output, calculator

DTYPES = (("bf16", "BF16 / FP16 (2 bytes)"), ("fp8", "FP8 (1 byte)"), ("fp32", "FP32 (4 bytes)"), ("fp4", "FP4 (0.5 byte)"))


def per_token_formula(c, dtype_bytes: float) -> str:
    """The arithmetic behind bytes per token, spelled out for the page."""
    b = number(dtype_bytes, 3)
    if c.uses_mla:
        return f"{c.num_hidden_layers} layers x ({c.kv_lora_rank} latent + {c.qk_rope_head_dim} RoPE key) x {b} bytes"
    layers = len(c.cached_layers)
    attention = f"{layers} layers" if layers == c.num_hidden_layers else f"{layers} attention layers"
    if c.kv_shared_layers:  # Gemma 3n: the last layers read earlier layers' keys and values
        attention = f"{layers} of {c.num_hidden_layers} layers (the last {len(c.kv_shared_layers)} reuse earlier ones')"
    return f"2 (K, V) x {attention} x {c.num_key_value_heads} KV heads x {c.head_dim} x {b} bytes"


@calculator(
    "kv_cache",
    title="KV cache size",
    fields=[
        *model_fields(),
        Field("context", "Context length (tokens per sequence)", 32768, min=1, max=1e8, integer=True, unit="tokens"),
        Field("batch", "Batch (concurrent sequences)", 1, min=1, max=1e6, integer=True, unit="sequences"),
        Field("dtype", "KV cache data type", "bf16", kind="select", options=DTYPES),
        Field("weights_dtype", "Weights data type", "bf16", kind="select", options=DTYPES),
    ],
    outputs=[
        Output("model_info", "Model read"),
        Output("per_token", "KV cache per token (every layer, before windows)"),
        Output("layers", "One sequence's cache, per layer kind"),
        Output("total", "KV cache for the whole batch"),
        Output("weights", "Weights"),
        Output("ratio", "KV cache / weights"),
        Output("note", "Note"),
        Output("defaults", "Fields left out of the config (family defaults used)"),
        Output("memory", "Memory (GB)", kind="bars"),
        Output("chart", "Memory (GB) against context: KV cache beside the weights", kind="chart", chart=_charts.KV_CACHE),
    ],
)
def kv_cache_calc(model, model_id, config_json, context, batch, dtype, weights_dtype):
    """Defaults: Llama-3.1-8B, one 32k-token sequence, BF16."""
    c = pick_model(model, config_json, model_id=model_id)
    context, capped = fit_context(c, context)
    per_token = c.kv_cache_bytes_per_token(dtype)
    kv = c.kv_cache_bytes(context, batch, dtype)
    weights = c.weights_bytes(weights_dtype)
    notes = [capped] if capped else []
    if c.kv_shared_layers:  # Gemma 3n
        notes.append(f"KV sharing: the last {len(c.kv_shared_layers)} of {c.num_hidden_layers} layers keep no cache "
                     f"(each attends over an earlier layer's keys and values)")
    held = [i for i in c.sliding_window_layers if i in c.cached_layers]
    if c.sliding_window and context > c.sliding_window:
        notes.append(f"sliding window: {len(held)} of {c.num_hidden_layers} layers keep only "
                     f"the last {c.sliding_window:,} tokens")
    if c.attention_chunk_size and context > c.attention_chunk_size:
        notes.append(f"chunked attention: {c.kinds.count('chunked_attention')} layers attend within "
                     f"{c.attention_chunk_size:,}-token chunks and hold at most one chunk")
    if c.max_position_embeddings and context > c.max_position_embeddings:
        notes.append(f"context is beyond the model's max_position_embeddings ({c.max_position_embeddings:,})")
    quant = c.raw.get("quantization_config") or {}
    if quant.get("quant_method") in ("fp8", "mxfp4"):
        notes.append(f"the published checkpoint stores {'its weights' if quant['quant_method'] == 'fp8' else 'its experts'}"
                     f" in {quant['quant_method'].upper()}")
    if c.is_hybrid:
        notes.append(f"hybrid: {len(c.state_layers)} recurrent layers add a fixed {nbytes(c.state_bytes(dtype))} per "
                     f"sequence ({', '.join(sorted({state_dtype_text(c, c.kinds[i], dtype) for i in c.state_layers}))}),"
                     f" whatever the context")
    if c.is_moe:
        p = c.params()
        notes.append(f"MoE: all {billions(p.total)} parameters sit in memory, {billions(p.active)} are read per token")
    return {
        "model_info": model_summary(c),
        "per_token": f"{nbytes(per_token)} = {per_token_formula(c, dtype_bytes('dtype', dtype))}",
        "layers": kv_breakdown(c, context, dtype),
        "total": f"{nbytes(kv)} ({context:,} tokens x {batch:,} sequence{'' if batch == 1 else 's'})",
        "weights": f"{nbytes(weights)} ({billions(c.params().total)} parameters)",
        "ratio": str(Times(kv / weights)),
        "note": "; ".join(notes) or "none",
        "defaults": defaulted(c),
        "memory": [["weights", weights / 1e9], ["KV cache", kv / 1e9], ["total", (weights + kv) / 1e9]],
        "chart": _charts.kv_cache_chart(c, context, batch, dtype, weights),
        "numbers": {**model_numbers(c), "context (tokens)": context, "batch (sequences)": batch,
                    "kv_dtype_bytes (B)": dtype_bytes("dtype", dtype),
                    "weights_dtype_bytes (B)": dtype_bytes("weights_dtype", weights_dtype),
                    "kv_cache_per_token (B)": per_token, **kv_numbers(c, context, dtype),
                    "sliding_window_layers_held": len(held), "kv_cache (B)": float(kv),
                    "weights (B)": float(weights), "total_memory (B)": float(weights + kv), "kv_cache_over_weights": kv / weights,
                    **({"recurrent_state (B)": float(c.state_bytes(dtype))} if c.is_hybrid else {})},
    }
