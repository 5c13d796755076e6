"""Calculators of section 2.5 (optimizing attention): sliding-window saving and hybrid-model cost."""

from __future__ import annotations

from .. import charts, ssm
from ..attention import attended_pairs
from ..format import nbytes, number, si
from ._registry import Field, Output, calculator

PRESETS = tuple((key, cfg.name) for key, cfg in ssm.HYBRID_PRESETS.items())
KV_DTYPES = (("bf16", "BF16 (2 bytes)"), ("fp8", "FP8 (1 byte)"), ("fp32", "FP32 (4 bytes)"))


@calculator(
    "sliding_window",
    title="Sliding window vs full causal attention",
    fields=[
        Field("n", "Sequence length N (tokens)", 32768, min=1, max=1e8, integer=True),
        Field("w", "Window w (tokens, itself included)", 4096, min=1, max=1e8, integer=True),
    ],
    outputs=[
        Output("full", "Full causal: scores computed (about N^2 / 2)"),
        Output("window", "Sliding window: scores computed (about N w - w^2 / 2)"),
        Output("ratio", "Work ratio, full / window (the ideal speedup)"),
        Output("saved", "Share of attention work saved"),
        Output("bars", "Scores computed", kind="bars"),
        Output("chart", "Scores computed against sequence length N", kind="chart",
               chart=charts.ChartSpec("sequence length N (tokens)", "scores computed", x_log=True, y_log=True)),
    ],
)
def sliding_window_calc(n, w):
    """Prefill attention scores for N tokens with and without a window of w keys."""
    saving = ssm.sliding_window_saving(n, w)
    return {
        "full": f"{si(saving.full_pairs)} (N^2/2 = {si(saving.full_approx)})",
        "window": f"{si(saving.window_pairs)} (N w - w^2/2 = {si(saving.window_approx)})",
        "ratio": f"{number(saving.ratio, 4)}x",
        "saved": f"{100 * saving.saved_share:.1f} %",
        "bars": [["full causal", float(saving.full_pairs)], ["sliding window", float(saving.window_pairs)]],
        "chart": _window_chart(n, w, saving),
    }


def _window_chart(n, w, saving):
    """Full causal (N (N+1)/2) and windowed work for N from w/16 to 16 max(N, w), log-log: the window's line
    bends from slope 2 to slope 1 at N = w, so the gap (the saving) keeps growing with N."""
    lo, hi = max(1, w // 16), min(10**9, 16 * max(n, w))
    ns = sorted({max(1, round(v)) for v in charts.logspace(lo, hi, 41)} | {min(w, hi)})
    full = [attended_pairs(m, causal=True) for m in ns]
    window = [attended_pairs(m, window=w) for m in ns]
    return charts.chart(
        [charts.series("full causal", ns, full), charts.series(f"sliding window, w = {w:,}", ns, window)],
        [charts.point(n, saving.full_pairs, f"full causal at N = {n:,}", color=0),
         charts.point(n, saving.window_pairs, f"window at N = {n:,}", color=1)],
        [charts.rule("x", n, f"N = {n:,}"), charts.rule("x", w, f"w = {w:,}")],
        summary=f"At N = {n:,} the window computes {number(saving.ratio, 4)} times fewer scores; "
                f"below N = w both are the same.")


@calculator(
    "hybrid_cost",
    title="Hybrid Mamba-attention model: memory and FLOPs of sequence mixing",
    fields=[
        Field("preset", "Layer shapes from", "nemotron-3-nano", kind="select", options=PRESETS),
        Field("layers", "Sequence-mixing layers (attention + Mamba)", 29, min=1, max=1000, integer=True),
        Field("share", "Attention share of those layers (%)", 21, kind="range", min=0, max=100, step=1),
        Field("context", "Context length (tokens)", 131072, min=1, max=1e8, integer=True),
        Field("kv_dtype", "KV cache dtype", "bf16", kind="select", options=KV_DTYPES),
    ],
    outputs=[
        Output("mix", "Layers"),
        Output("kv", "KV cache (attention layers)"),
        Output("state", "SSM state (Mamba layers, fp32 scan state)"),
        Output("memory_vs_attention", "Memory vs all-attention"),
        Output("prefill", "Prefill mixing FLOPs (one sequence)"),
        Output("decode", "Decode mixing FLOPs per token at this context"),
        Output("bars", "Cache + state memory per sequence (GB)", kind="bars"),
    ],
)
def hybrid_cost_calc(preset, layers, share, context, kv_dtype):
    """One sequence's cache/state memory and mixing FLOPs for a mix of attention and Mamba-2 layers."""
    attention_layers = round(layers * share / 100)
    config = ssm.HYBRID_PRESETS[preset].with_mix(attention_layers, layers - attention_layers)
    prefill = ssm.mixing_cost(config, context, kv_dtype=kv_dtype)
    decode = ssm.mixing_cost(config, context, phase="decode", kv_dtype=kv_dtype)
    stacks = ssm.compare_architectures(config, context, kv_dtype=kv_dtype)
    all_attention = stacks["attention"].memory_bytes
    return {
        "mix": f"{attention_layers} attention + {layers - attention_layers} Mamba-2",
        "kv": nbytes(prefill.kv_cache_bytes),
        "state": nbytes(prefill.ssm_state_bytes),
        "memory_vs_attention": f"{100 * prefill.memory_bytes / all_attention:.1f} % of {nbytes(all_attention)}",
        "prefill": si(prefill.flops, "FLOP"),
        "decode": si(decode.flops, "FLOP"),
        "bars": [[name, stacks[key].memory_bytes / 1e9]
                 for key, name in (("attention", "all attention"), ("hybrid", "hybrid"), ("ssm", "all Mamba"))],
    }

