"""Calculator of section 2.2 (KV cache): how much memory the cache takes next to the weights.

Every token in context keeps one key and one value vector per K/V head in
every layer, so the cache grows linearly with context and batch:

    bytes = context * batch * (2 * layers * kv_heads * head_dim) * bytes_per_value

Grouped-query attention shrinks it by sharing K/V heads, a sliding window
caps the context term, and DeepSeek's multi-head latent attention caches one
small latent per layer instead. The numbers come from the shipped config.json
files through `chapter2.models.ModelConfig`.
"""

from __future__ import annotations

from .._checks import dtype_bytes
from ..format import nbytes, number
from ..models import list_configs, load_config
from . import _charts
from ._registry import Field, FieldError, Output, calculator

DTYPES = (("bf16", "BF16 / FP16 (2 bytes)"), ("fp8", "FP8 (1 byte)"), ("fp32", "FP32 (4 bytes)"), ("fp4", "FP4 (0.5 byte)"))


def _label(name: str) -> str:
    c = load_config(name)
    if c.uses_mla:
        return f"{name} (MLA, {c.num_hidden_layers} layers)"
    return f"{name} ({c.num_hidden_layers} layers, {c.num_key_value_heads} KV heads of {c.head_dim})"


MODELS = tuple((name, _label(name)) for name in list_configs())


def per_token_formula(name: str, dtype_bytes: float) -> str:
    """The arithmetic behind bytes per token, spelled out for the page."""
    c = load_config(name)
    b = number(dtype_bytes, 3)
    if c.uses_mla:
        return f"{c.num_hidden_layers} layers x ({c.kv_lora_rank} latent + {c.qk_rope_head_dim} RoPE key) x {b} bytes"
    return f"2 (K, V) x {c.num_hidden_layers} layers x {c.num_key_value_heads} KV heads x {c.head_dim} x {b} bytes"


def billions(count: int) -> str:
    return f"{number(count / 1e9, 3)}B"


@calculator(
    "kv_cache",
    title="KV cache size",
    fields=[
        Field("model", "Model (config.json)", "Llama-3.1-8B", kind="select", options=MODELS),
        Field("context", "Context length (tokens per sequence)", 32768, min=1, max=1e8, integer=True),
        Field("batch", "Batch (concurrent sequences)", 1, min=1, max=1e6, integer=True),
        Field("dtype", "KV cache data type", "bf16", kind="select", options=DTYPES),
        Field("weights_dtype", "Weights data type", "bf16", kind="select", options=DTYPES),
    ],
    outputs=[
        Output("per_token", "KV cache per token"),
        Output("total", "KV cache for the whole batch"),
        Output("weights", "Weights"),
        Output("ratio", "KV cache / weights"),
        Output("note", "Note"),
        Output("memory", "Memory (GB)", kind="bars"),
        Output("chart", "Memory (GB) against context: KV cache beside the weights", kind="chart", chart=_charts.KV_CACHE),
    ],
)
def kv_cache_calc(model, context, batch, dtype, weights_dtype):
    """Defaults: Llama-3.1-8B, one 32k-token sequence, BF16."""
    if model not in dict(MODELS):
        raise FieldError("model", f"Model: choose one of {', '.join(dict(MODELS))}")
    c = load_config(model)
    per_token = c.kv_cache_bytes_per_token(dtype)
    kv = c.kv_cache_bytes(context, batch, dtype)
    weights = c.weights_bytes(weights_dtype)
    notes = []
    if c.sliding_window and context > c.sliding_window:
        notes.append(f"sliding window: each layer keeps only the last {c.sliding_window:,} tokens")
    if c.max_position_embeddings and context > c.max_position_embeddings:
        notes.append(f"context is beyond the model's max_position_embeddings ({c.max_position_embeddings:,})")
    quant = c.raw.get("quantization_config") or {}
    if quant.get("quant_method") == "fp8":
        notes.append("the published checkpoint stores its weights in FP8")
    if c.is_moe:
        p = c.params()
        notes.append(f"MoE: all {billions(p.total)} parameters sit in memory, {billions(p.active)} are read per token")
    return {
        "per_token": f"{nbytes(per_token)} = {per_token_formula(model, dtype_bytes('dtype', dtype))}",
        "total": f"{nbytes(kv)} ({context:,} tokens x {batch:,} sequences)",
        "weights": f"{nbytes(weights)} ({billions(c.params().total)} parameters)",
        "ratio": f"{number(kv / weights, 3)} x",
        "note": "; ".join(notes) or "none",
        "memory": [["weights", weights / 1e9], ["KV cache", kv / 1e9], ["total", (weights + kv) / 1e9]],
        "chart": _charts.kv_cache_chart(c, context, batch, dtype, weights),
    }
