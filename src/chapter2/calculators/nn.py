"""Calculators of section 2.1 (neural networks)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import activations as act
from .. import charts
from ..format import nbytes, number, si
from ..linear import matmul_cost
from ._registry import Field, Output, calculator

DTYPES = (("fp32", "FP32 (4 bytes)"), ("bf16", "BF16 (2 bytes)"), ("fp16", "FP16 (2 bytes)"), ("fp8", "FP8 (1 byte)"))


@calculator(
    "matmul_cost",
    title="Cost of one linear layer",
    fields=[
        Field("m", "Tokens (rows of x)", 1, min=1, max=1e7, integer=True),
        Field("k", "in_features", 4096, min=1, max=1e6, integer=True),
        Field("n", "out_features", 4096, min=1, max=1e6, integer=True),
        Field("dtype", "Data type", "fp16", kind="select", options=DTYPES),
    ],
    outputs=[
        Output("ops", "Operations (2 m k n)"),
        Output("bytes", "Bytes moved (read x and W, write y)"),
        Output("weight_share", "Share of bytes that are weights"),
        Output("intensity", "Arithmetic intensity (ops per byte)"),
    ],
)
def matmul_cost_calc(m, k, n, dtype):
    cost = matmul_cost(m, k, n, dtype)
    weight_bytes = k * n * cost.dtype_bytes
    return {
        "ops": si(cost.ops, "FLOP"),
        "bytes": nbytes(cost.bytes),
        "weight_share": f"{100 * weight_bytes / cost.bytes:.1f} %",
        "intensity": number(cost.intensity, 4),
    }


@calculator(
    "activations",
    title="Activation functions at one point",
    fields=[
        Field("x", "x", 1.0, kind="range", min=-6, max=6, step=0.1),
        Field("beta", "Swish beta", 1.0, kind="range", min=0, max=5, step=0.1),
    ],
    outputs=[
        Output("relu", "ReLU value / slope"),
        Output("silu", "SiLU value / slope"),
        Output("swish", "Swish(beta) value / slope"),
        Output("gelu", "GELU value / slope"),
        Output("gelu_tanh", "GELU (tanh) value / slope"),
        Output("values", "Value f(x), marked at x", kind="chart",
               chart=charts.ChartSpec("x", "f(x)", x_range=(-6, 6), y_range=(-1, 6), height=230)),
        Output("slopes", "Slope f′(x), marked at x", kind="chart",
               chart=charts.ChartSpec("x", "f′(x)", x_range=(-6, 6), y_range=(-0.25, 1.25), height=200)),
    ],
)
def activations_calc(x, beta):
    def pair(value, slope):
        return f"{float(value):.4f} / {float(slope):.4f}"

    return {
        **_activation_charts(x, beta),
        "relu": pair(act.relu(x), act.relu_slope(x)),
        "silu": pair(act.silu(x), act.silu_slope(x)),
        "swish": pair(act.swish(x, beta), act.swish_slope(x, beta)),
        "gelu": pair(act.gelu(x), act.gelu_slope(x)),
        "gelu_tanh": pair(act.gelu(x, "tanh"), act.gelu_slope(x, "tanh")),
    }


# x from -6 to 6 in steps of 0.2, with 0 split into -1e-9 and +1e-9 so that ReLU's slope jumps upright
CHART_X = [v for i in range(61) for v in ((-1e-9, 1e-9) if i == 30 else (round(-6 + 0.2 * i, 10),))]


def _curves(beta):
    """(label, f, f′) of the five activations, Swish at `beta`."""
    return [("ReLU", act.relu, act.relu_slope), ("SiLU", act.silu, act.silu_slope),
            (f"Swish, β = {beta:g}", lambda v: act.swish(v, beta), lambda v: act.swish_slope(v, beta)),
            ("GELU", act.gelu, act.gelu_slope),
            ("GELU (tanh)", lambda v: act.gelu(v, "tanh"), lambda v: act.gelu_slope(v, "tanh"))]


@lru_cache(maxsize=8)
def _lines(beta) -> dict:
    """The curves of both charts over CHART_X: they depend on beta alone, so moving x only moves the markers
    (computed once per beta; the series are never changed after, only drawn)."""
    grid = np.array(CHART_X)
    return {key: tuple(charts.series(c[0], grid, c[which](grid), dash=c[0] == "GELU (tanh)") for c in _curves(beta))
            for key, which in (("values", 1), ("slopes", 2))}


def _activation_charts(x, beta):
    """The five activations and their slopes over the slider's range, the current x marked on every curve."""
    curves = _curves(beta)
    out = {}
    for key, which in (("values", 1), ("slopes", 2)):
        lines = [{**s, "x": list(s["x"]), "y": list(s["y"])} for s in _lines(beta)[key]]  # the caller's own
        points = [charts.point(x, float(c[which](x)), c[0], color=i) for i, c in enumerate(curves)]
        out[key] = charts.chart(lines, points, [charts.rule("x", x, f"x = {x:g}")],
                                summary=f"Swish uses beta = {beta:g}; beta = 1 is SiLU, a large beta approaches ReLU.")
    return out
