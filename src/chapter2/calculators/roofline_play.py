"""Calculator of section 2.4 (ops:byte and arithmetic intensity): a roofline to play with.

One GPU's roofline on log-log axes, the memory-bound region left of the ridge and
the compute-bound region right of it shaded, and three workloads of one model
written beside their points: a decode step, its weight matmuls alone, and the
prefill of a prompt. Two sliders move them: the decode batch carries decode
towards the ridge (the weights are read once for every sequence in the batch),
and the context carries prefill past it (a longer prompt is more tokens per
weight read) while it pulls decode back (each sequence reads its own KV cache).

Every number is `chapter2.roofline` (`decode`, `prefill`, `attainable_flops`)
and `chapter2.hardware`; this module picks the inputs and the words. The page
draws the chart for the default inputs at build time (`charts.render`), so it
is there before Python loads.
"""

from __future__ import annotations

from .. import charts, hardware, roofline
from ..format import sig
from ._gpus import CATALOG_OPTIONS
from ._models import MODEL_OPTIONS, shipped
from ._registry import Field, FieldError, Output, calculator

DTYPES = (("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"))
BATCHES = tuple((k, f"{2**k:,}") for k in range(0, 11))  # slider position k: batch 2^k, 1 to 1,024
CONTEXTS = tuple((k, f"{2**k:,}") for k in range(4, 18))  # 16 to 131,072 tokens
X_RANGE, Y_RANGE = (0.1, 1e6), (0.01, 1e4)  # FLOP per byte; TFLOP/s. Fixed, so the points move and the axes do not

PLAY = charts.ChartSpec("intensity (FLOP per byte moved)",
                        "attainable TFLOP/s", x_log=True, y_log=True,
                        x_range=X_RANGE, y_range=Y_RANGE, height=280)


def roof_series(gpu: hardware.GPU, dtype: str) -> dict:
    """The roofline across the chart: the slanted memory roof up to the ridge, then the flat compute roof (TFLOP/s)."""
    ridge = gpu.ops_per_byte(dtype)
    xs = [X_RANGE[0], ridge, X_RANGE[1]]
    ys = [float(roofline.attainable_flops(x, gpu, dtype)) / 1e12 for x in xs]
    return charts.series(f"{gpu.name} roofline, dense {dtype.upper()}", xs, ys, color=-1)


def _where(est: roofline.PhaseEstimate) -> str:
    """'memory bound, 13x below the ridge' or 'compute bound, 2.4x past the ridge'."""
    ratio = est.intensity / est.ridge
    if ratio < 1:
        return f"memory bound, {sig(1 / ratio, 2)}× below the ridge"
    return f"compute bound, {sig(ratio, 2)}× past the ridge"


def play_chart(gpu: hardware.GPU, dtype: str, step: roofline.PhaseEstimate, pre: roofline.PhaseEstimate,
               batch: int, context: int) -> dict:
    """The roofline, the two regions, the ridge, and decode (whole step and weight matmuls) and prefill on it."""
    ridge = gpu.ops_per_byte(dtype)

    def on_roof(x):
        return float(roofline.attainable_flops(x, gpu, dtype)) / 1e12

    points = [
        charts.point(step.intensity, on_roof(step.intensity), f"decode, batch {batch:,}\n{sig(step.intensity, 3)} FLOP/B",
                     color=1, note=True),
        charts.point(step.weights_intensity, on_roof(step.weights_intensity),
                     f"its weight matmuls\n{sig(step.weights_intensity, 3)} FLOP/B", color=4, note=True),
        charts.point(pre.intensity, on_roof(pre.intensity), f"prefill, {context:,} tokens\n{sig(pre.intensity, 3)} FLOP/B",
                     color=2, note=True),
    ]
    return charts.chart(
        [roof_series(gpu, dtype)], points,
        [charts.rule("x", ridge, f"ridge: {sig(ridge, 3)} FLOP/B", bottom=True)],
        summary=(f"Decode with a batch of {batch:,} at {context:,} tokens of context is {_where(step)}; "
                 f"prefill of a {context:,}-token prompt is {_where(pre)}. Intensities in FLOP per byte."),
        bands=[charts.band("x", X_RANGE[0], ridge, "memory bound", color=0),
               charts.band("x", ridge, X_RANGE[1], "compute bound", color=2)])


@calculator(
    "roofline_play",
    title="A roofline to play with: decode and prefill on one GPU",
    fields=[
        Field("gpu", "GPU", "H100-SXM", kind="select", options=CATALOG_OPTIONS),
        Field("dtype", "Weights and math", "fp16", kind="select", options=DTYPES),
        Field("model", "Model (config.json)", "Llama-3.1-8B", kind="select", options=MODEL_OPTIONS),
        Field("batch", "Decode batch (sequences)", 0, kind="range", min=0, max=len(BATCHES) - 1, step=1,
              integer=True, options=BATCHES, unit="log2 of sequences"),
        Field("context", "Context: prompt prefilled, tokens each decode step reads", 10, kind="range",
              min=CONTEXTS[0][0], max=CONTEXTS[-1][0], step=1, integer=True, options=CONTEXTS, unit="log2 of tokens"),
    ],
    outputs=[
        Output("chart", "The GPU's roofline with decode and prefill on it", kind="chart", chart=PLAY),
        Output("decode", "Decode step"),
        Output("prefill", "Prefill"),
    ],
)
def roofline_play_calc(gpu, dtype, model, batch, context):
    """Decode (batch 2^batch, context 2^context) and prefill (one prompt of 2^context tokens) on the roofline."""
    g = hardware.get_gpu(gpu)
    g.peak_flops(dtype)  # a GPU without this data type: ValueError, shown under the form
    b, c = 2**batch, 2**context
    config = shipped(model)
    limit = config.max_position_embeddings
    if limit is not None and c > limit:
        raise FieldError("context", f"Context: {c:,} tokens is more than {model}'s context of {limit:,} tokens")
    step = roofline.decode(config, c, batch=b, gpu=g, dtype=dtype)
    pre = roofline.prefill(config, c, gpu=g, dtype=dtype)
    return {
        "chart": play_chart(g, dtype, step, pre, b, c),
        "decode": (f"{sig(step.intensity, 3)} FLOP/B, {_where(step)} (its weight matmuls alone: "
                   f"{sig(step.weights_intensity, 3)} FLOP/B)"),
        "prefill": f"{sig(pre.intensity, 3)} FLOP/B, {_where(pre)}",
        "numbers": {"gpu": g.key, "model": model, "batch (sequences)": b, "context (tokens)": c,
                    "ops_per_byte (FLOP/B)": float(step.ridge),
                    "decode_intensity (FLOP/B)": float(step.intensity), "decode_bound": step.bound,
                    "decode_weights_intensity (FLOP/B)": float(step.weights_intensity),
                    "decode_over_ridge": float(step.intensity / step.ridge),
                    "decode_ridge_over": float(step.ridge / step.intensity),
                    "prefill_intensity (FLOP/B)": float(pre.intensity), "prefill_bound": pre.bound,
                    "prefill_over_ridge": float(pre.intensity / pre.ridge),
                    "prefill_ridge_over": float(pre.ridge / pre.intensity)},
    }
