"""Chart data of the calculators of sections 2.2, 2.4 and 2.5 (KV cache, MoE, roofline, decode batching, steppers).

Kept apart from the calculator modules so each of them only adds an output and
one line. Every number comes from the library (`roofline`, `moe`, `ModelConfig`);
these functions choose the x values and the marks. See `chapter2.charts`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import charts, hardware, moe, roofline
from ..format import sig

ROOFLINE = charts.ChartSpec("arithmetic intensity (operations per byte)", "attainable FLOP/s (one GPU)",
                            x_log=True, y_log=True, height=260)
DECODE_BATCHING = charts.ChartSpec("decode batch size (sequences)", "intensity (ops per byte)", x_log=True, y_log=True)
KV_CACHE = charts.ChartSpec("context length (tokens per sequence)", "memory (GB)")
MEMORY_GPU = "H100-SXM"  # the memory line on the KV cache chart
MOE = charts.ChartSpec("tokens in the batch (B)", "share of experts (%)", x_log=True, y_range=(0, 100))
KV_GRID = charts.ChartSpec("position (this pass's token in bold)", "layer: keys, values", kind="grid")
TOKENS = charts.ChartSpec("", "", kind="canvas")
FLASH_MEMORY = charts.ChartSpec("", "", kind="canvas")
FLASH_TILES = charts.ChartSpec("key (position), in tiles of keys loaded together", "query row", kind="grid")
FLASH_MAX = charts.ChartSpec("query row", "μ (a score)", height=150)
FLASH_SUM = charts.ChartSpec("query row", "ℓ (a sum of weights)", height=150)
FLASH_BYTES = charts.ChartSpec("key tiles loaded", "bytes moved (B)", height=190)
TIMELINE = charts.ChartSpec("time since the request arrived (s)", "KV cache of the batch (GB)", height=250)
GRID_COLUMNS = 40  # the KV grid's columns at most: a longer prompt's first tokens share one column


def bars(pairs) -> list:
    """[label, value] bars, values as floats (chapter2.charts.render_bars draws and rounds them, at build time and in
    the browser alike)."""
    return [[label, float(value)] for label, value in pairs]


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
    """The KV cache after the last of `steps` (stepper.Step records): in each layer a row of keys and a row of
    values, one column per position.

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
    rows = [f"layer {i} {kv}" for i in range(n_layers) for kv in "KV"]
    if last.index == 0:
        mark = ("written by this pass (the prefill: every prompt position at once)", 0, n_prompt_cols, 0, len(rows))
    else:
        col = n_prompt_cols + last.index - 1
        mark = (f"written by this pass (decode step {last.index}: one position)", col, col + 1, 0, len(rows))
    n_decoded = cached - n_prompt
    summary = (f"After {'the prefill' if last.index == 0 else f'decode step {last.index}'}: each of the {n_layers} "
               f"layers caches a key and a value for {cached} positions ({n_prompt} from the prompt, written by the "
               f"prefill in one pass{f', and {n_decoded} by decode steps, one each' if n_decoded else ''}), "
               f"{bytes_per_position:,} B per position over all layers.")
    return charts.grid(rows, cols, [row] * len(rows),
                       keys=[("written by the prefill", 0), ("written by a decode step", 1)],
                       groups=[("prompt", 0, n_prompt_cols), ("decode: one per step", n_prompt_cols, len(cols))],
                       marks=[mark], label_chars=8, col_text="mark", summary=summary)


CHIP_H, CHIP_GAP, CHIP_CHAR = 20, 4, 7.0  # a token chip's height, the gap between chips, a character's width (12-unit text)


def _chip_width(text: str) -> float:
    return 10 + CHIP_CHAR * len(text)


def _chip_rows(widths, width: float = charts.W - 8) -> list[list[int]]:
    """Chips (their widths) laid out in rows of at most `width` units, in order."""
    rows, x = [[]], 0.0
    for i, w in enumerate(widths):
        if rows[-1] and x + w > width:
            rows.append([])
            x = 0.0
        rows[-1].append(i)
        x += w + CHIP_GAP
    return rows


def tokens_chart(steps, tokenizer, max_steps: int) -> dict:
    """The text so far as token chips: the prompt's (cached by the prefill), then one per decode step (cached by
    that step), this pass's input outlined, and the token it chose dashed (the next pass's input, not cached yet).
    The drawing keeps room for the chips still to come (max_steps, at about 4 characters each), so its height
    stays the same while the stepper plays (unless the tokens run longer than that)."""
    last = steps[-1]
    prompt = [_token_label(tokenizer.token_text(t)) for t in steps[0].input_ids]
    generated = [_token_label(s.token_text) for s in steps]  # generated[k] was chosen by pass k
    texts = prompt + generated
    n_prompt, n_cached = len(prompt), last.cache_length
    this_pass = range(0, n_prompt) if last.index == 0 else range(n_cached - 1, n_cached)
    widths = [_chip_width(t) for t in texts]
    layout = _chip_rows(widths)
    room = _chip_rows(widths[:n_prompt] + [_chip_width("····")] * (max_steps + 1))  # the same at every step
    shapes, y = [], 22  # under the line that says what the outlines mean
    for row in layout:
        x = 4.0
        for i in row:
            cached = i < n_cached
            shapes.append(charts.shape(x, y, widths[i], CHIP_H, texts[i],
                                       color=(0 if i < n_prompt else 1) if cached else None, alpha=0.28,
                                       line="thick" if i in this_pass else "solid" if cached else "dashed"))
            x += widths[i] + CHIP_GAP
        y += CHIP_H + CHIP_GAP
    bottom = 22 + max(len(room), len(layout)) * (CHIP_H + CHIP_GAP)
    labels = [charts.label(4, 13, "outlined: this pass's input · dashed: the token it chose")]
    summary = (f"Prompt, {n_prompt} tokens: {' '.join(prompt)}. Generated: "
               f"{' '.join(generated[:-1]) if len(generated) > 1 else 'none yet'}. This pass's input: "
               f"{' '.join(texts[i] for i in this_pass)}; it chose {generated[-1]}, the next input. ␣ is a space, "
               f"↵ a new line.")
    return charts.canvas(bottom + 2, shapes, labels=labels, summary=summary,
                         keys=[("prompt: cached by the prefill", 0), ("generated: cached by a decode step", 1)])


# the memory picture: what each colour means (palette indices)
MOVING, READ, IN_SRAM, NOT_YET = 1, 0, 2, -1


def flash_memory_chart(trace, t: int, n_blocks: int, skipped: int | None = None) -> dict:
    """HBM above, SRAM below: which K/V tile moves from HBM into SRAM at step `t`, what SRAM holds, and, at
    the last tile, the output block written back. HBM holds Q, K, V and O of every position in tiles of
    `trace.block_k` (query blocks of the same size, `n_blocks` of each); tiles moved at earlier steps are
    shaded (their K and V are gone from SRAM since), tiles wholly after the block are skipped.

    `skipped`: a step past the block's last tile (the slider goes on to the last tile of all): that tile
    is outlined in HBM, skipped, and nothing moves; the block is done (`t` is then its last tile).
    """
    bk, q_block = trace.block_k, trace.q_block
    step = trace.steps[t]
    after = skipped is not None
    current = t - 1 if t >= 1 and not after else None  # the K/V tile moving at this step
    done = t == trace.tiles  # the block's output is written at its last tile
    span = [f"{j * bk}–{min((j + 1) * bk, trace.n_k) - 1}" for j in range(n_blocks)]
    gap, x0, cw, ch = 4, 10, (300 - 3 * 4) / 4, 20
    col = [x0 + j * (cw + gap) for j in range(n_blocks)]
    top = 26
    rows = {"Q": top, "K": top + 24, "V": top + 48, "O": top + 72}
    shapes = [charts.shape(4, 20, 312, 104, line="solid")]
    for j in range(n_blocks):
        mine = j == q_block
        q_state = (MOVING if t == 0 else READ) if mine else None
        shapes.append(_memory_cell(col[j], rows["Q"], cw, ch, f"Q {span[j]}", q_state, thick=mine and t == 0))
        if j >= trace.tiles:
            kv_state, line = None, "thick" if after and j == skipped - 1 else "dashed"
        else:
            kv_state = MOVING if j == current else READ if j < t - (0 if after else 1) else NOT_YET
            line = "thick" if j == current else "solid"
        for name in ("K", "V"):
            text = f"{name} {span[j]}" if j < trace.tiles else f"{name}: skipped"
            shapes.append(charts.shape(col[j], rows[name], cw, ch, text, color=kv_state,
                                       alpha=_memory_alpha(kv_state), line=line))
        o_state = (READ if after else MOVING) if mine and done else None
        shapes.append(_memory_cell(col[j], rows["O"], cw, ch, f"O {span[j]}", o_state, thick=mine and done and not after,
                                   dashed=mine and not done))
    # SRAM: the query block, this step's K and V, the running state of each row
    sy, sh = 196, 44
    slot_w = (300 - 3 * gap) / 4
    slot = [x0 + i * (slot_w + gap) for i in range(4)]
    shapes.append(charts.shape(4, sy - 6, 312, sh + 12, line="solid"))
    rows_text = f"q{trace.q0}–q{trace.q1 - 1}"
    shapes.append(charts.shape(slot[0], sy, slot_w, sh, f"Q\n{rows_text}", color=MOVING if t == 0 else IN_SRAM,
                               alpha=0.35, line="thick" if t == 0 else "solid"))
    for i, name in ((1, "K"), (2, "V")):
        if current is None:
            shapes.append(charts.shape(slot[i], sy, slot_w, sh, f"{name}\n{'no tile' if after else 'no tile yet'}",
                                       line="dashed"))
        else:
            shapes.append(charts.shape(slot[i], sy, slot_w, sh, f"{name} {span[current]}\ntile {t}", color=MOVING,
                                       alpha=0.35, line="thick"))
    state = "μ −∞, ℓ 0" if t == 0 else "done:\nO written" if after else "μ, ℓ, acc\nper row"
    shapes.append(charts.shape(slot[3], sy, slot_w, sh, state, color=IN_SRAM, alpha=0.35,
                               line="thick" if done and not after else "solid"))
    arrows = []
    if t == 0:
        x, to = col[q_block] + cw / 2, slot[0] + slot_w / 2
        arrows.append(charts.arrow([(x, 124), (x, 150), (to, 150), (to, sy - 8)], "Q in", color=MOVING, at="last"))
    elif not after:  # down from the tile's column (left of its middle) to between the K and V slots
        x, to = col[current] + cw / 2 - 14, slot[1] + slot_w + gap / 2
        arrows.append(charts.arrow([(x, 124), (x, 146), (to, 146), (to, sy - 8)], "K, V in", color=MOVING, at="last"))
    if done and not after:  # up at the right edge, along under HBM, into the block's O cell (right of its middle)
        src, ox = slot[3] + slot_w / 2, col[q_block] + cw / 2 + 14
        arrows.append(charts.arrow([(src, sy - 8), (src, 133), (ox, 133), (ox, rows["O"] + ch + 2)], "O out",
                                   color=MOVING))
    labels = [charts.label(6, 14, "HBM: the GPU's main memory (large, slow)", bold=True),
              charts.label(6, sy + sh + 22, "SRAM: memory on the chip (small, fast)", bold=True)]
    skip_note = f"; tiles {trace.tiles + 1} to {n_blocks} are skipped (causal mask)" if trace.tiles < n_blocks else ""
    if after:
        now = (f"This step: tile {skipped} holds keys after every row of the block, so it is skipped and nothing "
               f"moves; the block was done after tile {trace.tiles}, its output already written back to HBM.")
    elif t == 0:
        now = f"This step: query block {rows_text} moves from HBM into SRAM; no K or V tile yet."
    else:
        now = (f"This step: K and V of keys {step.k0} to {step.k1 - 1} (tile {t}) move from HBM into SRAM"
               + (f"; tiles 1 to {t - 1} were read at earlier steps and are gone from SRAM" if t > 1 else "")
               + ("; the output block O = acc / ℓ is written back to HBM" if done else "") + ".")
    summary = (f"HBM holds Q, K, V and O of all {trace.n_k} positions in tiles of {bk}{skip_note}. SRAM holds the "
               f"query rows {rows_text}, one K/V tile at a time, and each row's running maximum μ, sum ℓ and "
               f"accumulator acc. {now}")
    return charts.canvas(sy + sh + 30, shapes, arrows, labels, summary=summary,
                         keys=[("moves between HBM and SRAM at this step", MOVING),
                               ("moved at an earlier step (K, V: gone from SRAM since)", READ),
                               ("held in SRAM", IN_SRAM), ("not read yet", NOT_YET)])


def _memory_alpha(state) -> float:
    return {MOVING: 0.45, READ: 0.22, IN_SRAM: 0.35, NOT_YET: 0.1}.get(state, 1.0)


def _memory_cell(x, y, w, h, text, state, *, thick=False, dashed=False) -> dict:
    return charts.shape(x, y, w, h, text, color=state, alpha=_memory_alpha(state),
                        line="thick" if thick else "dashed" if dashed else "solid")


def flash_tiles_chart(trace, t: int) -> dict:
    """One query block's rows against every key after `t` key tiles: which tile is loaded, what is accumulated.

    A key seen so far is shaded by its share of the row's softmax over the keys seen so far
    (`FlashStep.weights`, relative to the row's largest, at least 0.1 so that every seen key shows); keys
    not loaded yet are empty; keys the causal mask hides from a row are grey (a tile all grey is skipped,
    never loaded). The tile loaded at this step is outlined (at step 0: the first). Tiles are labelled in
    full ("tile 3"), the keys under them.
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
    groups = [(f"tile {j + 1}", j * bk, min((j + 1) * bk, n_k)) for j in range(-(-n_k // bk))]
    if t == 0:
        mark = ("next: tile 1, not loaded yet", 0, min(bk, n_k), 0, len(rows))
    else:
        mark = (f"loaded at this step: tile {t} (K and V of keys {step.k0} to {step.k1 - 1})", step.k0, step.k1, 0, len(rows))
    w = step.weights
    summary = ("Nothing loaded yet: only the query block is on chip." if t == 0 else
               f"After {t} of {trace.tiles} tiles, the largest share per row: "
               + "; ".join(f"{rows[r]} key {int(w[r].argmax())} ({sig(float(w[r].max()), 3)})" for r in range(len(rows)))
               + ". Earlier tiles are gone from chip memory: only μ, ℓ and acc remember them.")
    skipped = [j + 1 for j in range(-(-n_k // bk)) if j * bk >= trace.visible_k]
    masked = "masked: after the query's position (causal), never scored" + (
        f"; tile{'s' if len(skipped) > 1 else ''} {' and '.join(map(str, skipped))} all masked, so skipped" if skipped else "")
    return charts.grid(rows, [f"k{j}" for j in range(n_k)], cells,
                       keys=[("keys of earlier tiles: share of the row so far (darker: larger)", 0),
                             ("keys of this step's tile", 1), (masked, -1)],
                       groups=groups, marks=[mark], label_chars=3, summary=summary)


def _flash_rows(trace) -> tuple[list, list]:
    """The x positions of the query rows (0, 1, ...) and their tick labels ("q4", ...)."""
    xs = list(range(trace.q1 - trace.q0))
    return xs, [(x, f"q{trace.q0 + x}") for x in xs]


def flash_max_chart(trace, t: int) -> dict:
    """Each query row's running maximum μ before and after tile `t` (dots; a line where it rose), on axes
    fixed over the block's whole trace so that only the dots move from step to step."""
    xs, ticks = _flash_rows(trace)
    every = np.concatenate([s.m_new for s in trace.steps[1:]])
    every = every[np.isfinite(every)]
    lo, hi = float(every.min()), float(every.max())
    pad = 0.15 * (hi - lo) or 0.5
    frame = dict(x_ticks=ticks, x_range=(-0.6, len(xs) - 0.4), y_range=(lo - pad, hi + pad))
    if t == 0:
        return charts.chart([], rules=[charts.rule("y", (lo + hi) / 2, "no score seen yet: μ = −∞ in every row")],
                            summary="Before the first tile μ is −∞ in every row.", **frame)
    step = trace.steps[t]
    new = [float(v) for v in step.m_new]
    series = []
    if t > 1:
        old = [float(v) for v in step.m_old]
        series.append(charts.series("μ before this tile", xs, old, kind="scatter", color=-1))
        for x, a, b in zip(xs, old, new, strict=True):
            if b > a:
                series.append(charts.series("", [x, x], [a, b], color=1))
    series.append(charts.series("μ after this tile", xs, new, kind="scatter", color=1))
    rose = [f"q{trace.q0 + x}" for x in xs if t > 1 and step.m_new[x] > step.m_old[x]]
    summary = ("The first tile sets μ in every row." if t == 1 else
               f"μ rose in {', '.join(rose)}." if rose else "No row found a larger score: μ stays.")
    return charts.chart(series, summary=summary, **frame)


def flash_sum_chart(trace, t: int) -> dict:
    """Each query row's running sum ℓ before and after tile `t` (bars), and inside ℓ after, the earlier tiles'
    part once rescaled by exp(μ_old − μ_new) (it shrinks where μ rose); axes fixed over the whole trace."""
    xs, ticks = _flash_rows(trace)
    top = max(float(s.l_i.max()) for s in trace.steps)
    frame = dict(x_ticks=ticks, x_range=(-0.6, len(xs) - 0.4), y_range=(0, top * 1.1))
    if t == 0:
        return charts.chart([], rules=[charts.rule("y", top * 0.55, "nothing summed yet: ℓ = 0 in every row")],
                            summary="Before the first tile ℓ is 0 in every row.", **frame)
    step, old = trace.steps[t], trace.steps[t - 1].l_i
    kept = [0.0] * len(xs) if t == 1 else [float(f * s) for f, s in zip(step.rescale, old, strict=True)]
    series = [charts.series("ℓ before this tile", [x - 0.28 for x in xs], [float(v) for v in old], kind="bars",
                            color=-1),
              charts.series("ℓ after this tile", [x + 0.28 for x in xs], [float(v) for v in step.l_i], kind="bars",
                            color=2),
              charts.series("…of which the earlier tiles, rescaled by exp(μ_old − μ_new)", [x + 0.28 for x in xs], kept,
                            kind="bars", color=3)]
    shrunk = [f"q{trace.q0 + x}" for x in xs if t > 1 and step.m_new[x] > step.m_old[x]]
    summary = ("The first tile's weights make ℓ." if t == 1 else
               f"In {', '.join(shrunk)} μ rose: the earlier part of ℓ shrinks by exp(μ_old − μ_new) before this "
               "tile's weights are added." if shrunk else "No row's μ rose: ℓ only grows by this tile's weights.")
    return charts.chart(series, summary=summary, **frame)


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
                "device memory and reads back: 4 x block x block numbers per tile.",
        x_ticks=[(x, str(x)) for x in xs])


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
