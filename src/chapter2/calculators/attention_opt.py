"""Calculators of section 2.5 (optimizing attention): sliding-window saving, hybrid-model cost, and
FlashAttention step by step (`flash_stepper`: `chapter2.attention.flash_trace`)."""

from __future__ import annotations

import json
import math
from functools import cache, lru_cache

import numpy as np

from .. import charts, roofline, ssm
from ..attention import attended_pairs, attention_reference, flash_trace
from ..format import Times, counted, nbytes, si, sig
from . import _charts
from ._models import shipped
from ._registry import Field, Output, calculator

PRESETS = tuple((key, cfg.name) for key, cfg in ssm.HYBRID_PRESETS.items())
HYBRID_CACHE = charts.ChartSpec("context length (tokens)", "cache of one sequence (GB)")
STACK_NAMES = (("attention", "all attention"), ("hybrid", "hybrid, as shipped"), ("ssm", "all Mamba-2"))


@cache
def _stacks(preset: str) -> dict:
    """`ssm.stacks_of` the preset's shipped config, built once (frozen configs; their cached counts kept)."""
    return ssm.stacks_of(shipped(ssm.PRESET_CONFIGS[preset]))


def hybrid_cache_chart(preset: str, context: int, dtype: str) -> dict:
    """One sequence's whole cache against context for the preset's real config and its two rebuilds
    (`ssm.stacks_of`): KV of the attention layers in `dtype`, conv states in `dtype`, Mamba-2 states in
    FP32, as transformers keeps them (`ModelConfig.kv_cache_bytes`).

    It does not depend on the mix the reader drags (layers, attention share): kept for the last few inputs,
    as JSON text, so that each call returns data of its own (JSON keeps every float exactly)."""
    return json.loads(_hybrid_cache_json(preset, context, dtype))


@lru_cache(maxsize=8)
def _hybrid_cache_json(preset: str, context: int, dtype: str) -> str:
    stacks = _stacks(preset)
    hi = max(2**17, 2 ** math.ceil(math.log2(context)) * 2)
    xs = sorted({round(hi * i / 64) for i in range(65)} | {context})

    def gb(model, x):
        return (model.kv_cache_bytes(x, 1, dtype) if x else model.state_bytes(dtype)) / 1e9

    lines = [charts.series(name, xs, [gb(stacks[key], x) for x in xs], color=i)
             for i, (key, name) in enumerate(STACK_NAMES)]
    points = [charts.point(context, gb(stacks[key], context), f"{name} at {context:,} tokens", color=i)
              for i, (key, name) in enumerate(STACK_NAMES)]
    at = {key: nbytes(stacks[key].kv_cache_bytes(context, 1, dtype)) for key, _ in STACK_NAMES}
    return json.dumps(charts.chart(lines, points, [charts.rule("x", context, f"{context:,} tokens", bottom=True)],
                                   summary=f"At {context:,} tokens one sequence holds {at['attention']} with every "
                                           f"mixing layer attention, {at['hybrid']} as shipped, and {at['ssm']} with "
                                           f"every mixing layer Mamba-2 (a fixed state, whatever the length)."))
KV_DTYPES = (("bf16", "BF16 (2 bytes)"), ("fp8", "FP8 (1 byte)"), ("fp32", "FP32 (4 bytes)"))


@calculator(
    "sliding_window",
    title="Sliding window vs full causal attention",
    fields=[
        Field("n", "Sequence length N (tokens)", 32768, min=1, max=1e8, integer=True, unit="tokens"),
        Field("w", "Window w (tokens, itself included)", 4096, min=1, max=1e8, integer=True, unit="tokens"),
    ],
    outputs=[
        Output("full", "Full causal: scores computed (about N^2 / 2)"),
        Output("window", "Sliding window: scores computed (about N w - w^2 / 2 once N ≥ w)"),
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
    approx = (f"N w - w^2/2 = {si(saving.window_approx)}" if w < n else
              f"w ≥ N: every query sees all earlier tokens, as without a window, N^2/2 = {si(saving.window_approx)}")
    return {
        "full": f"{si(saving.full_pairs)} (N^2/2 = {si(saving.full_approx)})",
        "window": f"{si(saving.window_pairs)} ({approx})",
        "ratio": str(Times(saving.ratio)),
        "saved": f"{100 * saving.saved_share:.1f} %",
        "bars": [["full causal", float(saving.full_pairs)], ["sliding window", float(saving.window_pairs)]],
        "chart": _window_chart(n, w, saving),
        "numbers": {"sequence_length (tokens)": n, "window (tokens)": w, "full_scores": float(saving.full_pairs),
                    "full_scores_approx": float(saving.full_approx), "window_scores": float(saving.window_pairs),
                    "window_scores_approx": float(saving.window_approx), "work_ratio": float(saving.ratio),
                    "saved (%)": 100 * float(saving.saved_share)},
    }


def _window_chart(n, w, saving):
    """Full causal (N (N+1)/2) and windowed work for N from w/16 to 16 max(N, w), log-log: the window's line
    bends from slope 2 to slope 1 at N = w, so the gap (the saving) keeps growing with N."""
    lo, hi = max(1, min(n, w // 16)), min(10**9, 16 * max(n, w))
    ns = sorted({max(1, round(v)) for v in charts.logspace(lo, hi, 41)} | {min(w, hi), n})  # N itself: on the curve
    full = [attended_pairs(m, causal=True) for m in ns]
    window = [attended_pairs(m, window=w) for m in ns]
    return charts.chart(
        [charts.series("full causal", ns, full), charts.series(f"sliding window, w = {w:,}", ns, window)],
        [charts.point(n, saving.full_pairs, f"full causal at N = {n:,}", color=0),
         charts.point(n, saving.window_pairs, f"window at N = {n:,}", color=1)],
        [charts.rule("x", n, f"N = {n:,}"), charts.rule("x", w, f"w = {w:,}")],
        summary=f"At N = {n:,} the window computes {sig(saving.ratio, 3)} times fewer scores; "
                f"below N = w both are the same.")


@calculator(
    "hybrid_cost",
    title="Hybrid Mamba-attention model: memory and FLOPs of sequence mixing",
    fields=[
        Field("preset", "Layer shapes from", "nemotron-3-nano", kind="select", options=PRESETS),
        Field("layers", "Sequence-mixing layers (attention + Mamba)", 29, min=1, max=1000, integer=True, unit="layers"),
        Field("share", "Attention share of those layers (%)", 21, kind="range", min=0, max=100, step=1, unit="%"),
        Field("context", "Context length (tokens)", 131072, min=1, max=1e8, integer=True, unit="tokens"),
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
        Output("cache_chart", "The real config's whole cache against context, beside its mixing layers rebuilt as "
               "all attention or all Mamba-2 (KV and conv states in the KV dtype, Mamba-2 states in FP32, as "
               "transformers keeps them)", kind="chart", chart=HYBRID_CACHE),
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
        "cache_chart": hybrid_cache_chart(preset, context, kv_dtype),
        "numbers": {"attention_layers": attention_layers, "mamba_layers": layers - attention_layers,
                    "context (tokens)": context, "kv_cache (B)": float(prefill.kv_cache_bytes),
                    "ssm_state (B)": float(prefill.ssm_state_bytes), "memory (B)": float(prefill.memory_bytes),
                    "all_attention_memory (B)": float(all_attention),
                    "memory_vs_all_attention (%)": 100 * prefill.memory_bytes / all_attention,
                    "prefill_mixing (FLOP)": float(prefill.flops), "decode_mixing (FLOP)": float(decode.flops),
                    **{f"{key}_memory (B)": float(stacks[key].memory_bytes) for key in ("attention", "hybrid", "ssm")}},
    }



FLASH_N, FLASH_BLOCK = 16, 4  # keys and queries; block_q = block_k: 4 query blocks, 4 key tiles
NUMBERS = "Numbers: μ, ℓ, acc and the bytes of this step"
FLASH_BYTES = 2  # bytes per number counted: what an FP16 kernel moves (the numbers themselves are float64)


def flash_inputs(seed: int, d: int):
    """The stepper's Q, K, V: (N, d) each, standard normal from numpy's default_rng(seed)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((FLASH_N, d)), rng.standard_normal((FLASH_N, d)), rng.standard_normal((FLASH_N, d))


@calculator(
    "flash_stepper",
    title="FlashAttention, one tile at a time: key tiles stream past one query block",
    fields=[
        Field("seed", "Seed for Q, K and V (random normal)", 0, min=0, max=2**32 - 1, integer=True),
        Field("d", "Head dimension d", 4, kind="select", options=((4, "4"), (8, "8"))),
        Field("q_block", f"Query block (rows of {FLASH_BLOCK})", 1, kind="range", min=0,
              max=FLASH_N // FLASH_BLOCK - 1, step=1, integer=True, unit="block"),
        Field("tiles", "K/V tiles loaded", 0, kind="range", min=0, max=FLASH_N // FLASH_BLOCK, step=1, integer=True,
              stepper=True, help=f"N = {FLASH_N} keys in tiles of {FLASH_BLOCK}", unit="tiles"),
    ],
    outputs=[
        Output("caption", "This step", kind="caption"),
        Output("memory_chart", "Where the data is: GPU memory (HBM) and the chip's own memory (SRAM)", kind="chart",
               chart=_charts.FLASH_MEMORY),
        Output("tiles_chart", "The query block against every key: tiles loaded so far", kind="chart",
               chart=_charts.FLASH_TILES),
        Output("max_chart", "μ, each row's running maximum: the largest score seen so far", kind="chart",
               chart=_charts.FLASH_MAX),
        Output("sum_chart", "ℓ, each row's running sum of weights, rescaled where μ rose", kind="chart",
               chart=_charts.FLASH_SUM),
        Output("bytes_chart", "Bytes moved for this query block: FlashAttention against standard attention", kind="chart",
               chart=_charts.FLASH_BYTES),
        Output("loaded", "This step", free_text=True, details=NUMBERS),  # free_text: a sentence, shown full width
        Output("state", "Running maximum μ, rescale factor, running sum ℓ and accumulator acc, per query row",
               free_text=True, details=NUMBERS),
        Output("bytes", "Bytes moved to or from device memory, this query block", free_text=True, details=NUMBERS),
        Output("check", "Output of the block", free_text=True, details=NUMBERS),
    ],
)
def flash_stepper_calc(seed, d, q_block, tiles):
    """FlashAttention's inner loop for one query block, after `tiles` key tiles (chapter2.attention.flash_trace)."""
    q, k, v = flash_inputs(seed, d)
    trace = flash_trace(q, k, v, q_block=q_block, block_q=FLASH_BLOCK, block_k=FLASH_BLOCK, dtype_bytes=FLASH_BYTES,
                        causal=True)
    step_asked = tiles
    skipped, tiles = tiles > trace.tiles, min(tiles, trace.tiles)  # tiles after the block: the mask skips them
    step = trace.steps[tiles]
    rows = range(trace.q0, trace.q1)
    if tiles == 0:
        loaded = (f"Start: the query block (rows {trace.q0} to {trace.q1 - 1}, {FLASH_BLOCK} x {d} numbers) is "
                  f"loaded; μ = −∞, ℓ = 0 and acc = 0 in every row")
        state = "\n".join(f"q{i}: μ −∞ | ℓ 0 | acc [{', '.join(['0'] * d)}]" for i in rows)
    else:
        loaded = (f"Tile {tiles} of {trace.tiles} this block needs: K and V of keys {step.k0} to {step.k1 - 1} loaded "
                  f"({step.k1 - step.k0} x {d} numbers each); scores S = Q Kᵀ / √{d} computed on chip")
        lines = []
        for r, i in enumerate(rows):
            if tiles == 1:
                m = f"μ −∞ → {_n(step.m_new[r])} | first tile, nothing to rescale"
            elif step.m_new[r] > step.m_old[r]:
                m = f"μ {_n(step.m_old[r])} → {_n(step.m_new[r])} | rescale exp(μ_old − μ_new) = {_n(step.rescale[r])}"
            else:
                m = f"μ {_n(step.m_new[r])}, no new maximum | rescale 1"
            lines.append(f"q{i}: {m} | ℓ {_n(step.l_i[r])} | acc [{', '.join(_n(x) for x in step.acc[r])}]")
        state = "\n".join(lines)
    if skipped:
        loaded = (f"Tiles {trace.tiles + 1} to {FLASH_N // FLASH_BLOCK}: skipped. Every key in them comes after "
                  f"every query of this block (causal mask), so they are never loaded; the block was done "
                  f"after {trace.tiles} tiles")
    per_tile = FLASH_BLOCK * 2 * d * FLASH_BYTES
    bytes_text = (f"FlashAttention: {step.hbm_bytes:,.0f} B (Q block {FLASH_BLOCK * d * FLASH_BYTES} B + "
                  f"{counted(tiles, 'K/V tile')} of {per_tile} B"
                  f"{f' + O block {FLASH_BLOCK * d * FLASH_BYTES} B' if tiles == trace.tiles else ''}); "
                  f"standard attention: {step.standard_bytes:,.0f} B, the same plus S and A written and read back "
                  f"({4 * FLASH_BLOCK * FLASH_BLOCK * FLASH_BYTES} B per tile). Whole attention at N = {FLASH_N}, "
                  f"d = {d}, FP16, no mask: standard {nbytes(roofline.attention_intensity(FLASH_N, d, FLASH_BYTES).bytes)}, "
                  f"FlashAttention {nbytes(_flash_total(d))} (K and V read once per query block)")
    if tiles < trace.tiles:
        check = f"O = acc / ℓ once every tile is in: {trace.tiles - tiles} to go"
    else:
        want = attention_reference(q[None, None], k[None, None], v[None, None], causal=True)[0, 0, trace.q0:trace.q1]
        diff = float(np.abs(trace.out - want).max())  # about 1e-16; its last digits depend on the BLAS
        check = "O = acc / ℓ: " + "; ".join(f"q{i} [{', '.join(_n(x) for x in trace.out[r])}]"
                                            for r, i in enumerate(range(trace.q0, trace.q1)))
        check += (", equal to the reference attention (float64) to 12 decimal places" if diff < 1e-12
                  else ", NOT equal to the reference attention to 12 decimal places")
    return {"numbers": _flash_numbers(trace, step, tiles, step_asked, skipped, d, per_tile, q, k, v),
            "caption": _flash_caption(trace, step_asked, skipped),
            "memory_chart": _charts.flash_memory_chart(trace, tiles, FLASH_N // FLASH_BLOCK,
                                                       step_asked if skipped else None),
            "tiles_chart": _charts.flash_tiles_chart(trace, tiles), "max_chart": _charts.flash_max_chart(trace, tiles),
            "sum_chart": _charts.flash_sum_chart(trace, tiles),
            "loaded": loaded, "state": state,
            "bytes": bytes_text, "bytes_chart": _charts.flash_bytes_chart(trace, tiles), "check": check}


def _flash_numbers(trace, step, tiles, asked, skipped, d, per_tile, q, k, v) -> dict:
    """The stepper's numbers (calculators.NUMBERS): the block, this tile, the running state per row (None for a
    running maximum of −∞, before any key), the bytes, and the output once every tile is in."""
    start = tiles == 0
    rows = [[float(x) if np.isfinite(x) else None for x in m] for m in (step.m_old, step.m_new)]
    out = {"n (tokens)": FLASH_N, "d": d, "block": FLASH_BLOCK, "number_bytes (B)": FLASH_BYTES,
           "q_rows_first": trace.q0, "q_rows_last": trace.q1 - 1, "tiles_asked": asked, "tiles_loaded": tiles,
           "tiles_needed": trace.tiles, "tiles_skipped": "yes" if skipped else "no", "tiles_to_go": trace.tiles - tiles,
           "keys_first": None if start else step.k0, "keys_last": None if start else step.k1 - 1,
           "keys_loaded": 0 if start else step.k1 - step.k0,
           "mu_before": rows[0], "mu_after": rows[1],
           "rescale": None if step.rescale is None else [float(x) for x in step.rescale],
           "l": [float(x) for x in step.l_i], "acc": [[float(x) for x in row] for row in step.acc],
           "flash_bytes (B)": float(step.hbm_bytes), "standard_bytes (B)": float(step.standard_bytes),
           "q_block_bytes (B)": FLASH_BLOCK * d * FLASH_BYTES, "kv_tile_bytes (B)": per_tile,
           "o_block_bytes (B)": FLASH_BLOCK * d * FLASH_BYTES,
           "standard_extra_per_tile (B)": 4 * FLASH_BLOCK * FLASH_BLOCK * FLASH_BYTES,
           "whole_standard (B)": float(roofline.attention_intensity(FLASH_N, d, FLASH_BYTES).bytes),
           "whole_flash (B)": float(_flash_total(d))}
    if tiles == trace.tiles:
        out["output"] = [[float(x) for x in row] for row in trace.out]
    return out


def _flash_caption(trace, t: int, skipped: bool) -> str:
    """One line: what moved between HBM and SRAM at this step, and what the running maximum did."""
    rows = f"q{trace.q0} to q{trace.q1 - 1}"
    if skipped:
        return (f"Tile {t} is skipped: all its keys come after rows {rows} (causal mask), so it never leaves HBM; "
                f"the block was done after tile {trace.tiles}.")
    if t == 0:
        return f"Start: query rows {rows} are copied from HBM into SRAM; no key seen yet."
    step = trace.steps[t]
    if t == 1:
        news = "each row's running maximum and sum start from these scores"
    else:
        jumped = [f"q{trace.q0 + r}" for r in range(len(step.m_new)) if step.m_new[r] > step.m_old[r]]
        news = ("no row finds a larger score, nothing is rescaled" if not jumped else
                f"{' and '.join(jumped) if len(jumped) < 3 else ', '.join(jumped)} "
                f"{'finds' if len(jumped) == 1 else 'find'} a larger score, so earlier sums shrink")
    done = "; the block's output goes back to HBM" if t == trace.tiles else ""
    return f"Tile {t} of {trace.tiles}: K and V of keys {step.k0} to {step.k1 - 1} come into SRAM; {news}{done}."


def _flash_total(d: int) -> int:
    """FlashAttention's bytes over all query blocks: each reads its Q block and every K/V tile, writes its O block."""
    blocks = FLASH_N // FLASH_BLOCK
    return blocks * (FLASH_BLOCK * d + FLASH_N * 2 * d + FLASH_BLOCK * d) * FLASH_BYTES


def _n(x: float) -> str:
    return sig(float(x), 3)
