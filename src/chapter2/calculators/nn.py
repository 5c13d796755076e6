"""Calculators of section 2.1 (neural networks)."""

from __future__ import annotations

from .. import activations as act
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
    ],
)
def activations_calc(x, beta):
    def pair(value, slope):
        return f"{float(value):.4f} / {float(slope):.4f}"

    return {
        "relu": pair(act.relu(x), act.relu_slope(x)),
        "silu": pair(act.silu(x), act.silu_slope(x)),
        "swish": pair(act.swish(x, beta), act.swish_slope(x, beta)),
        "gelu": pair(act.gelu(x), act.gelu_slope(x)),
        "gelu_tanh": pair(act.gelu(x, "tanh"), act.gelu_slope(x, "tanh")),
    }
