"""Calculator of section 2.2.4 (mixture of experts): how many experts a decode batch touches.

Uniform routing: each token picks k distinct experts out of E, so a batch of T
tokens touches E (1 - (1 - k/E)^T) experts per layer on average
(`chapter2.moe.expected_experts_touched`). Compute per token stays at k/E of
running every expert; weight traffic climbs towards all experts.
"""

from __future__ import annotations

from .. import moe
from . import _charts
from ._registry import Field, FieldError, Output, calculator

BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@calculator(
    "moe_coverage",
    title="MoE: experts touched by a decode batch",
    fields=[
        Field("n_experts", "Experts per layer (E)", moe.QWEN3_235B_A22B.n_experts, min=1, max=4096, integer=True),
        Field("k", "Experts per token (k)", moe.QWEN3_235B_A22B.k, min=1, max=4096, integer=True),
        Field("n_tokens", "Tokens in the batch (T)", 64, min=1, max=1e7, integer=True),
    ],
    outputs=[
        Output("touched", "Experts touched per layer (expected)"),
        Output("weights_loaded", "Share of expert weights loaded"),
        Output("compute_share", "Share of expert FLOPs per token"),
        Output("batch_for_coverage", "Batch that touches 90 % / 99 % of experts"),
        Output("curve", "Share of experts touched (%) vs batch size", kind="bars"),
        Output("chart", "Share of experts touched against the batch, marked at T", kind="chart", chart=_charts.MOE),
    ],
)
def moe_coverage_calc(n_experts, k, n_tokens):
    """Defaults are Qwen3-235B-A22B: 8 of 128 experts in each of its 94 layers."""
    if k > n_experts:
        raise FieldError("k", f"Experts per token (k): must be at most E = {n_experts}, got {k}")
    touched = moe.expected_experts_touched(n_experts, k, n_tokens)
    if k == n_experts:
        coverage = "1 / 1 tokens (every token uses every expert)"
    else:
        coverage = f"{moe.tokens_for_coverage(n_experts, k, 0.9):,} / {moe.tokens_for_coverage(n_experts, k, 0.99):,} tokens"
    return {
        "touched": f"{touched:.1f} of {n_experts}",
        "weights_loaded": f"{100 * touched / n_experts:.1f} %",
        "compute_share": f"{100 * k / n_experts:.2f} % (k / E = {k} / {n_experts})",
        "batch_for_coverage": coverage,
        "curve": [[f"{t} tok", 100 * moe.expected_experts_touched(n_experts, k, t) / n_experts] for t in BATCHES],
        "chart": _charts.moe_chart(n_experts, k, n_tokens),
    }
