"""Chart data of the calculators of sections 2.2, 2.4 and 2.5 (KV cache, MoE, roofline, decode batching, steppers).

Kept apart from the calculator modules so each of them only adds an output and
one line. Every number comes from the library (`roofline`, `moe`, `ModelConfig`);
these functions choose the x values and the marks. See `chapter2.charts`.
"""

from __future__ import annotations

import math

from .. import charts, hardware, moe, roofline
from ..format import sig

ROOFLINE = charts.ChartSpec("arithmetic intensity (operations per byte)", "attainable FLOP/s (one GPU)",
                            x_log=True, y_log=True, height=260)
DECODE_BATCHING = charts.ChartSpec("decode batch size (sequences)", "intensity (ops per byte)", x_log=True, y_log=True)
KV_CACHE = charts.ChartSpec("context length (tokens per sequence)", "memory (GB)")
MEMORY_GPU = "H100-SXM"  # the memory line on the KV cache chart
MOE = charts.ChartSpec("tokens in the batch (B)", "share of experts (%)", x_log=True, y_range=(0, 100))
KV_GRID = charts.ChartSpec("position (this pass's tokens in bold below)", "layer", kind="grid")
FLASH_TILES = charts.ChartSpec("key (position), in tiles of keys loaded together", "query row", kind="grid")
FLASH_STATE = charts.ChartSpec("query row", "μ (a score), ℓ (a sum of weights)", height=200)
FLASH_BYTES = charts.ChartSpec("key tiles loaded", "bytes moved, this query block (B)", height=220)
TIMELINE = charts.ChartSpec("time since the request arrived (s)", "KV cache of the batch (GB)", height=250)
GRID_COLUMNS = 40  # the KV grid's columns at most: a longer prompt's first tokens share one column


def _decades(values, pad=2.0):
    """(lo, hi) powers of ten around values, with a factor `pad` of room on each side."""
    return (10.0 ** math.floor(math.log10(min(values) / pad)), 10.0 ** math.ceil(math.log10(max(values) * pad)))


def roof(gpu, dtype, lo, hi, label, *, color=None, dash=False):
    """A roofline from intensity lo to hi: the slanted memory roof up to the ridge, then the flat compute roof."""
    ridge = gpu.ops_per_byte(dtype)
    xs = [lo] + ([ridge] if lo < ridge < hi else []) + [hi]
    ys = [float(roofline.attainable_flops(x, gpu, dtype)) for x in xs]
    return charts.series(label, xs, ys, color=color, dash=dash)


def roofline_chart(gpu, dtype, workloads) -> dict:
    """The GPU's roofline with each workload, [(label, intensity)], as a point on it."""
    ridge = gpu.ops_per_byte(dtype)
    lo, hi = _decades([x for _, x in workloads] + [ridge])
    points = []
    for i, (label, x) in enumerate(workloads, start=1):
        bound = roofline.bound(x, gpu, dtype)
        points.append(charts.point(x, float(roofline.attainable_flops(x, gpu, dtype)),
                                   f"{label}: {sig(x, 3)} ops/byte, {bound} bound", color=i, legend=True))
    return charts.chart([roof(gpu, dtype, lo, hi, f"{gpu.name}, dense {dtype.upper()}")], points,
                        [charts.rule("x", ridge, f"ops:byte {sig(ridge, 3)}", bottom=True)],
                        summary="Left of the ops:byte line a workload is memory bound, right of it compute bound.")


def decode_batching_chart(config, context, gpu, dtype, batch) -> dict:
    """Decode intensity (whole step and weight matmuls alone) against the batch, the GPU's ops:byte as a line."""
    hi = max(1024, batch)
    batches = sorted({round(2 ** (e / 2)) for e in range(0, 2 * math.ceil(math.log2(hi)) + 1)} | {batch})
    steps = [roofline.decode(config, context, batch=b, gpu=gpu, dtype=dtype) for b in batches]
    now = roofline.decode(config, context, batch=batch, gpu=gpu, dtype=dtype)
    return charts.chart(
        [charts.series(f"decode step, {context:,} tokens of context", batches, [s.intensity for s in steps]),
         charts.series("weight matmuls only", batches, [s.weights_intensity for s in steps], dash=True)],
        [charts.point(batch, now.intensity, f"batch {batch:,}: step", color=0),
         charts.point(batch, now.weights_intensity, f"batch {batch:,}: weight matmuls", color=1)],
        [charts.rule("y", now.ridge, f"{gpu.key} ops:byte {sig(now.ridge, 3)}"), charts.rule("x", batch, f"batch {batch:,}")],
        summary="Above the ops:byte line the step is compute bound. The weight matmuls' intensity grows with the "
                "batch; attention over each sequence's own KV cache does not, so the whole step levels off.")


def kv_cache_chart(config, context, batch, dtype, weights_bytes) -> dict:
    """KV cache of the batch, the weights and their sum (GB) against context, from 0 to past the chosen context.

    Linear axes: the cache grows linearly with context (a sliding window or chunked attention bends it),
    and a straight line should look straight. One H100's memory is drawn across (MEMORY_GPU), the
    budget the weights and the cache share.
    """
    hi = config.context_limit or max(2**17, 2 ** math.ceil(math.log2(context)) * 2)  # Whisper: its 448 positions
    xs = sorted({round(hi * i / 64) for i in range(65)} | {context})
    kv = [config.kv_cache_bytes(x, batch, dtype) / 1e9 if x else 0.0 for x in xs]
    w = weights_bytes / 1e9
    now = config.kv_cache_bytes(context, batch, dtype) / 1e9
    gpu = hardware.get_gpu(MEMORY_GPU)
    return charts.chart(
        [charts.series(f"KV cache, batch {batch:,}", xs, kv), charts.series("weights", xs, [w] * len(xs), color=-1),
         charts.series("weights + KV cache", xs, [w + k for k in kv], color=2, dash=True)],
        [charts.point(context, now, f"KV cache at {context:,} tokens", color=0),
         charts.point(context, w + now, f"total at {context:,} tokens", color=2)],
        [charts.rule("x", context, f"{context:,} tokens", bottom=True),
         charts.rule("y", gpu.memory_gb, f"{gpu.key} memory: {sig(gpu.memory_gb, 3)} GB")],
        summary=f"The KV cache passes the weights at {_crossing(config, batch, dtype, weights_bytes)}.")


def _crossing(config, batch, dtype, weights_bytes) -> str:
    """The shortest context at which the batch's KV cache reaches the weights, as words (bisection)."""
    limit = config.context_limit  # Whisper: 448 decoder positions
    lo, hi = 1, limit or 10**8
    if config.kv_cache_bytes(hi, batch, dtype) < weights_bytes:
        return f"no context the model holds (up to {limit:,} tokens)" if limit else "no context up to 100M tokens"
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if config.kv_cache_bytes(mid, batch, dtype) < weights_bytes else (lo, mid)
    return f"{lo:,} tokens per sequence"


def moe_chart(n_experts, k, n_tokens) -> dict:
    """Expected share of experts one layer loads against the batch (uniform routing), and k/E of FLOPs per token."""
    hi = max(1024, 2 ** math.ceil(math.log2(n_tokens)))
    ts = sorted({round(2 ** (e / 3)) for e in range(0, 3 * int(math.log2(hi)) + 1)} | {n_tokens})
    share = [100 * moe.expected_experts_touched(n_experts, k, t) / n_experts for t in ts]
    now = 100 * moe.expected_experts_touched(n_experts, k, n_tokens) / n_experts
    return charts.chart(
        [charts.series(f"experts touched (weights loaded), E = {n_experts}, E_tok = {k}", ts, share)],
        [charts.point(n_tokens, now, f"B = {n_tokens:,}: {sig(now, 3)} %", color=0, legend=True)],
        [charts.rule("y", 100 * k / n_experts, f"FLOPs per token: E_tok / E = {sig(100 * k / n_experts, 3)} %")],
        summary="Compute per token stays at k / E of running every expert, while the weights loaded climb "
                "towards all experts as the batch grows.")


# ------------------------------------------------------------------ steppers


def _token_label(text: str) -> str:
    """A token as a column label: a leading space as '␣', a newline as '↵'."""
    return text.replace("\n", "↵").replace(" ", "␣")


def kv_grid_chart(steps, tokenizer, n_layers: int, bytes_per_position: int, max_steps: int) -> dict:
    """The KV cache after the last of `steps` (stepper.Step records): layers x positions, and the tokens.

    Columns: the prompt's positions, then one per decode step the slider allows, then the chosen
    token's, whose keys and values the next pass computes. The prefill writes the prompt's block in
    one pass; decode step k writes position P + k - 1 (the token chosen before it). A prompt too long
    for GRID_COLUMNS columns has its first tokens share column 0 (labelled '…' and their count).
    """
    last = steps[-1]
    n_prompt, cached = len(steps[0].input_ids), last.cache_length
    tokens = [tokenizer.token_text(t) for t in steps[0].input_ids] + [s.token_text for s in steps]
    width = n_prompt + max_steps + 1
    shared = width - GRID_COLUMNS + 1 if width > GRID_COLUMNS else 0  # prompt positions 0 .. shared - 1: column 0
    positions = ([list(range(shared))] if shared else []) + [[p] for p in range(shared, width)]
    cols = [f"…{len(ps)}" if len(ps) > 1 else _token_label(tokens[ps[0]]) if ps[0] < len(tokens) else ""
            for ps in positions]
    row = [None if ps[0] >= cached else (0, 1.0) if ps[-1] < n_prompt else (1, 1.0) for ps in positions]
    n_prompt_cols = n_prompt - shared + (1 if shared else 0)
    if last.index == 0:
        mark = ("written by this pass (the prefill: every prompt position at once)", 0, n_prompt_cols, 0, n_layers)
    else:
        col = n_prompt_cols + last.index - 1
        mark = (f"written by this pass (decode step {last.index}: one position)", col, col + 1, 0, n_layers)
    n_decoded = cached - n_prompt
    summary = (f"After {'the prefill' if last.index == 0 else f'decode step {last.index}'}: each of the {n_layers} "
               f"layers caches {cached} positions ({n_prompt} from the prompt, written by the prefill in one pass"
               f"{f', and {n_decoded} by decode steps, one each' if n_decoded else ''}), "
               f"{bytes_per_position:,} B per position over all layers. The chosen token {last.token_text!r} is the "
               f"next input; the next pass computes its keys and values.")
    return charts.grid([f"layer {i}" for i in range(n_layers)], cols, [row] * n_layers,
                       keys=[("written by the prefill", 0), ("written by a decode step", 1)],
                       groups=[("prompt", 0, n_prompt_cols), ("decode: one position per step", n_prompt_cols, len(cols))],
                       marks=[mark], label_chars=8, col_text="mark", summary=summary)


def flash_tiles_chart(trace, t: int) -> dict:
    """One query block's rows against every key after `t` key tiles: which tile is loaded, what is accumulated.

    A key seen so far is shaded by its share of the row's softmax over the keys seen so far
    (`FlashStep.weights`, relative to the row's largest, at least 0.1 so that every seen key shows); keys
    not loaded yet are empty; keys the causal mask hides from a row are grey, and tiles wholly after the
    block are marked skipped (never loaded). The tile loaded at this step is outlined (at step 0: the first).
    """
    step = trace.steps[t]
    bk, n_k = trace.block_k, trace.n_k
    rows = [f"q{i}" for i in range(trace.q0, trace.q1)]
    top = step.weights.max(axis=1, keepdims=True)
    cells = []
    for r in range(len(rows)):
        position = trace.q0 + r + trace.offset
        cells.append([(2, 0.45) if trace.causal and j > position else
                      None if j >= step.k1 else
                      (1 if j >= step.k0 else 0, max(0.1, float(step.weights[r, j] / top[r, 0])))
                      for j in range(n_k)])
    groups = [(f"tile {j + 1}" + (" skipped" if j * bk >= trace.visible_k else ""), j * bk, min((j + 1) * bk, n_k))
              for j in range(-(-n_k // bk))]
    if t == 0:
        mark = ("next: tile 1, not loaded yet", 0, min(bk, n_k), 0, len(rows))
    else:
        mark = (f"loaded at this step: tile {t} (K and V of keys {step.k0} to {step.k1 - 1})", step.k0, step.k1, 0, len(rows))
    w = step.weights
    summary = ("Nothing loaded yet: only the query block is on chip." if t == 0 else
               f"After {t} of {trace.tiles} tiles, the largest share per row: "
               + "; ".join(f"{rows[r]} key {int(w[r].argmax())} ({sig(float(w[r].max()), 3)})" for r in range(len(rows)))
               + ". Earlier tiles are gone from chip memory: only μ, ℓ and acc remember them.")
    return charts.grid(rows, [f"k{j}" for j in range(n_k)], cells,
                       keys=[("keys of earlier tiles: share of the row so far (darker: larger)", 0),
                             ("keys of this step's tile", 1),
                             ("masked: after the query's position (causal), never scored", -1)],
                       groups=groups, marks=[mark], label_chars=3, summary=summary)


def flash_state_chart(trace, t: int) -> dict:
    """Per query row after `t` tiles: μ before and after the tile (dots that jump), ℓ before and after (bars),
    and inside ℓ after, the earlier tiles' part once rescaled by exp(μ_old − μ_new) (it shrinks on a jump)."""
    step = trace.steps[t]
    xs = list(range(trace.q0, trace.q1))
    if t == 0:
        return charts.chart([charts.series("ℓ: 0 in every row, μ: −∞ (nothing seen yet)", xs, [0.0] * len(xs),
                                           kind="bars", color=-1)],
                            rules=[charts.rule("y", 0, "ℓ = 0 and μ = −∞ in every row")],
                            summary="Before the first tile: μ = −∞, ℓ = 0 in every row.")
    first = t == 1  # μ before the first tile is −∞: nothing to draw, nothing to rescale
    old_l = trace.steps[t - 1].l_i
    kept = [0.0] * len(xs) if first else [float(f * s) for f, s in zip(step.rescale, old_l, strict=True)]
    series = [charts.series("ℓ before this tile", [x - 0.2 for x in xs], [float(v) for v in old_l], kind="bars",
                            color=-1),
              charts.series("ℓ after this tile", [x + 0.2 for x in xs], [float(v) for v in step.l_i], kind="bars",
                            color=2),
              charts.series("…of which the earlier tiles, rescaled by exp(μ_old − μ_new)", [x + 0.2 for x in xs], kept,
                            kind="bars", color=3)]
    if not first:
        series.append(charts.series("μ before this tile", xs, [float(v) for v in step.m_old], kind="scatter", color=-1))
    series.append(charts.series("μ after this tile", xs, [float(v) for v in step.m_new], kind="scatter", color=1))
    jumped = [f"q{x}" for x, a, b in zip(xs, step.m_old, step.m_new, strict=True) if not first and b > a]
    return charts.chart(series, summary=(f"New maximum in {', '.join(jumped)}: the earlier part of ℓ shrinks by "
                                         "exp(μ_old − μ_new)." if jumped else "No row found a new maximum: nothing "
                                         "is rescaled." if not first else "The first tile sets μ and ℓ."))


def flash_bytes_chart(trace, t: int) -> dict:
    """Bytes this query block has moved to or from device memory after 0 .. T tiles: FlashAttention and standard."""
    xs = list(range(trace.tiles + 1))
    flash = [s.hbm_bytes for s in trace.steps]
    standard = [s.standard_bytes for s in trace.steps]
    now = trace.steps[t]
    return charts.chart(
        [charts.series("FlashAttention: Q block, one K/V tile per step, O block at the end", xs, flash),
         charts.series("standard attention, same rows and keys: also S and A written and read back", xs, standard,
                       dash=True)],
        [charts.point(t, now.hbm_bytes, f"FlashAttention after {t} tiles", color=0),
         charts.point(t, now.standard_bytes, f"standard after {t} tiles", color=1)],
        [charts.rule("x", t, f"{t} tile{'s' if t != 1 else ''}")],
        summary="The two lines differ by the score and probability tiles that standard attention writes to "
                "device memory and reads back: 4 x block x block numbers per tile.")


def timeline_chart(tl, token: int) -> dict:
    """A request on a timeline: the prefill block, one block per decode step, the batch's KV cache under them.

    Token k is marked at its time; the decode step that produced it (for k >= 2) is drawn over the others.
    At most charts.MAX_BLOCKS decode blocks are drawn (a longer output draws one block per run of tokens)
    and the KV line goes through at most about 260 of its points (it is linear between them: one token per step).
    """
    n, times, kv = tl.output_tokens, tl.token_times, [b / 1e9 for b in tl.kv_bytes]
    run = -(-(n - 1) // charts.MAX_BLOCKS) if n > 1 else 1
    lanes = [charts.lane("prefill: time to first token", [0.0, tl.ttft], color=0)]
    if n > 1:
        edges = [times[k] for k in range(0, n - 1, run)] + [times[-1]]
        per = "one block per output token" if run == 1 else f"one block per {run} output tokens"
        lanes.append(charts.lane(f"decode steps: {per} (time per output token)", edges, color=1))
    if token > 1:
        lanes.append(charts.lane(f"the decode step that gave token {token:,}", [times[token - 2], times[token - 1]],
                                 color=2))
    keep = sorted({0, n - 1, token - 1} | set(range(0, n, -(-n // charts.MAX_BLOCKS))))
    xs, ys = [0.0] + [times[k] for k in keep], [0.0] + [kv[k] for k in keep]
    ctx = tl.contexts[token - 1]
    rules = [charts.rule("x", times[token - 1], f"token {token:,}: {_seconds(times[token - 1])}", bottom=True)]
    left = tl.memory_left / 1e9
    if kv[-1] >= 0.25 * left:  # the memory left is on the chart's scale
        rules.append(charts.rule("y", left, f"memory left after the weights: {sig(left, 3)} GB"))
    summary = (f"The prefill takes {_seconds(tl.ttft)}; then {n - 1:,} decode steps of {_seconds(tl.decode[0].time) if n > 1 else '-'}"
               f" to {_seconds(tl.decode[-1].time) if n > 1 else '-'} each; the last token is ready at "
               f"{_seconds(tl.total_time)}. The memory left after the weights, {sig(left, 3)} GB, holds "
               f"{tl.capacity(ctx):,} sequences at token {token:,}'s context of {ctx:,} tokens.")
    return charts.chart([charts.series(f"KV cache of the batch ({tl.batch:,} sequences)", xs, ys, color=3)],
                        [charts.point(times[token - 1], kv[token - 1], f"token {token:,}", color=2)],
                        rules, summary=summary, lanes=lanes)


def _seconds(t: float) -> str:
    """A time for people: '5.12 ms', '0.24 s', '1.56 s'."""
    return f"{sig(t * 1e3, 3)} ms" if t < 0.1 else f"{sig(t, 3)} s"
