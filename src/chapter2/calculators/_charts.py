"""Chart data of the calculators of sections 2.2 and 2.4 (KV cache, MoE, roofline, decode batching).

Kept apart from the calculator modules so each of them only adds an output and
one line. Every number comes from the library (`roofline`, `moe`, `ModelConfig`);
these functions choose the x values and the marks. See `chapter2.charts`.
"""

from __future__ import annotations

import math

from .. import charts, moe, roofline
from ..format import sig

ROOFLINE = charts.ChartSpec("arithmetic intensity (operations per byte)", "attainable FLOP/s (one GPU)",
                            x_log=True, y_log=True, height=260)
DECODE_BATCHING = charts.ChartSpec("decode batch size (sequences)", "intensity (ops per byte)", x_log=True, y_log=True)
KV_CACHE = charts.ChartSpec("context length (tokens per sequence)", "memory (GB)", x_log=True)
MOE = charts.ChartSpec("tokens in the batch (T)", "share of experts (%)", x_log=True, y_range=(0, 100))


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
    """KV cache of the batch, the weights and their sum (GB) against context, from 1k to beyond the chosen context."""
    hi = max(2**17, 2 ** math.ceil(math.log2(context)) * 2)
    lo = min(2**10, 2 ** math.floor(math.log2(context)))
    xs = sorted({round(2 ** (e / 2)) for e in range(2 * int(math.log2(lo)), 2 * int(math.log2(hi)) + 1)} | {context})
    kv = [config.kv_cache_bytes(x, batch, dtype) / 1e9 for x in xs]
    w = weights_bytes / 1e9
    now = config.kv_cache_bytes(context, batch, dtype) / 1e9
    return charts.chart(
        [charts.series(f"KV cache, batch {batch:,}", xs, kv), charts.series("weights", xs, [w] * len(xs), color=-1),
         charts.series("weights + KV cache", xs, [w + k for k in kv], color=2, dash=True)],
        [charts.point(context, now, f"KV cache at {context:,} tokens", color=0),
         charts.point(context, w + now, f"total at {context:,} tokens", color=2)],
        [charts.rule("x", context, f"{context:,} tokens")],
        summary=f"The KV cache passes the weights at {_crossing(config, batch, dtype, weights_bytes)}.")


def _crossing(config, batch, dtype, weights_bytes) -> str:
    """The shortest context at which the batch's KV cache reaches the weights, as words (bisection)."""
    lo, hi = 1, 10**8
    if config.kv_cache_bytes(hi, batch, dtype) < weights_bytes:
        return "no context up to 100M tokens"
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
        [charts.series(f"experts touched (weights loaded), E = {n_experts}, k = {k}", ts, share)],
        [charts.point(n_tokens, now, f"T = {n_tokens:,}: {sig(now, 3)} %", color=0, legend=True)],
        [charts.rule("y", 100 * k / n_experts, f"FLOPs per token: k / E = {sig(100 * k / n_experts, 3)} %")],
        summary="Compute per token stays at k / E of running every expert, while the weights loaded climb "
                "towards all experts as the batch grows.")
