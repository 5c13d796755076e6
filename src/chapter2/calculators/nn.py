"""Calculators of section 2.1 (neural networks)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .. import activations as act
from .. import charts
from ..format import nbytes, plain, si
from ..linear import matmul_cost
from ._registry import Field, Output, calculator

DTYPES = (("fp32", "FP32 (4 bytes)"), ("bf16", "BF16 (2 bytes)"), ("fp16", "FP16 (2 bytes)"), ("fp8", "FP8 (1 byte)"))


@calculator(
    "matmul_cost",
    title="Cost of one linear layer",
    fields=[
        Field("m", "Tokens (rows of x)", 1, min=1, max=1e7, integer=True, unit="tokens"),
        Field("k", "in_features", 4096, min=1, max=1e6, integer=True, unit="features"),
        Field("n", "out_features", 4096, min=1, max=1e6, integer=True, unit="features"),
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
        "intensity": plain(cost.intensity),
        "numbers": {"operations (FLOP)": float(cost.ops), "bytes_moved (B)": float(cost.bytes),
                    "weight_bytes (B)": float(weight_bytes), "dtype_bytes (B)": cost.dtype_bytes,
                    "weight_share (%)": 100 * weight_bytes / cost.bytes, "intensity (FLOP/B)": float(cost.intensity)},
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
               chart=charts.ChartSpec("x", "f(x)", x_range=(-6, 6), y_range=(-1, 6), height=230, y_tick_chars=5)),
        Output("slopes", "Slope f′(x), marked at x", kind="chart",
               chart=charts.ChartSpec("x", "f′(x)", x_range=(-6, 6), y_range=(-0.25, 1.25), height=200,
                                      y_tick_chars=5)),
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
        "numbers": {f"{name}_{what}": float(fn(x)) for name, f, slope in _named(beta)
                    for what, fn in (("value", f), ("slope", slope))},
    }


def _named(beta):
    """(number name, f, f′) of the five activations at `beta`, in the outputs' order."""
    return [("relu", act.relu, act.relu_slope), ("silu", act.silu, act.silu_slope),
            ("swish", lambda v: act.swish(v, beta), lambda v: act.swish_slope(v, beta)),
            ("gelu", act.gelu, act.gelu_slope),
            ("gelu_tanh", lambda v: act.gelu(v, "tanh"), lambda v: act.gelu_slope(v, "tanh"))]


# SiLU's and GELU's minima, (x, f(x)): the roots of their slopes (`activations.minimum`)
SILU_MINIMUM = act.minimum(act.silu, act.silu_slope)
GELU_MINIMUM = act.minimum(act.gelu, act.gelu_slope)
# x from -6 to 6 in steps of 0.2, with 0 split into -1e-9 and +1e-9 so that ReLU's slope jumps upright, and the
# two minima's x added, so that the drawn curves (and their text's lowest points) pass through the true minima
CHART_X = sorted([v for i in range(61) for v in ((-1e-9, 1e-9) if i == 30 else (round(-6 + 0.2 * i, 10),))]
                 + [SILU_MINIMUM[0], GELU_MINIMUM[0]])
MINIMA = (f"SiLU's lowest point: {SILU_MINIMUM[1]:.4f} at x = {SILU_MINIMUM[0]:.3f}; "
          f"GELU's: {GELU_MINIMUM[1]:.4f} at x = {GELU_MINIMUM[0]:.3f}.")


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
    # the two near-twins dashed over the curve they follow: Swish (SiLU itself at beta = 1) and GELU's tanh form
    return {key: tuple(charts.series(c[0], grid, c[which](grid), dash=c[0].startswith(("Swish", "GELU (tanh)")))
                       for c in _curves(beta))
            for key, which in (("values", 1), ("slopes", 2))}


def _activation_charts(x, beta):
    """The five activations and their slopes over the slider's range, the current x marked on every curve."""
    curves = _curves(beta)
    out = {}
    for key, which in (("values", 1), ("slopes", 2)):
        lines = [{**s, "x": list(s["x"]), "y": list(s["y"])} for s in _lines(beta)[key]]  # the caller's own
        points = [charts.point(x, float(c[which](x)), c[0], color=i) for i, c in enumerate(curves)]
        minima = f" {MINIMA}" if key == "values" else ""
        out[key] = charts.chart(lines, points, [charts.rule("x", x, f"x = {x:g}")],
                                summary=f"Swish uses beta = {beta:g}; beta = 1 is SiLU, a large beta approaches "
                                        f"ReLU.{minima}")
    return out
