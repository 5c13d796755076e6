"""The linear layer, y = x W^T + b (chapter section 2.1.1), and what a matmul costs.

Almost all of a model's weights sit in linear layers, so inference time is
mostly matrix multiplication. This module gives the layer itself, the proof
that stacking linear layers without an activation collapses them into one,
and the cost of one matmul: operations, bytes moved and arithmetic intensity.
"""

from __future__ import annotations

from dataclasses import dataclass


from ._checks import as_list, dtype_bytes, float_array, positive_int

__all__ = ["linear", "collapse", "MatmulCost", "matmul_cost", "EXAMPLE_X", "EXAMPLE_WEIGHT", "matmul_example"]


def linear(x, weight, bias=None):
    """y = x W^T + b, with W in the PyTorch layout (out_features, in_features).

    x: (..., in_features) -> (..., out_features).
    """
    x = float_array("x", x, min_ndim=1)
    weight = float_array("weight", weight, ndim=2)
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"x's last dimension ({x.shape[-1]}) must equal weight's in_features ({weight.shape[1]})")
    y = x @ weight.T
    if bias is not None:
        bias = float_array("bias", bias, ndim=1)
        if bias.shape[0] != weight.shape[0]:
            raise ValueError(f"bias must have out_features = {weight.shape[0]} entries, got {bias.shape[0]}")
        y = y + bias
    return y


def collapse(layers):
    """Fold a stack of linear layers [(W1, b1), (W2, b2), ...] into one (W, b).

    Applying layer 1 then layer 2: W2 (W1 x + b1) + b2 = (W2 W1) x + (W2 b1 + b2),
    so any depth of purely linear layers equals a single linear layer.
    """
    layers = as_list("layers", layers, what="a list of (weight, bias) pairs")
    if not layers:
        raise ValueError("layers must hold at least one (weight, bias) pair")
    weight, bias = (float_array("weight", layers[0][0], ndim=2), float_array("bias", layers[0][1], ndim=1))
    for i, (w, b) in enumerate(layers[1:], start=2):
        w = float_array(f"layers[{i - 1}] weight", w, ndim=2)
        if w.shape[1] != weight.shape[0]:
            raise ValueError(f"layer {i} expects {w.shape[1]} inputs but layer {i - 1} gives {weight.shape[0]}")
        weight, bias = w @ weight, w @ bias + float_array(f"layers[{i - 1}] bias", b, ndim=1)
    return weight, bias


@dataclass(frozen=True)
class MatmulCost:
    """Cost of (m, k) @ (k, n): `ops` floating-point operations, `bytes` moved, `intensity` = ops / bytes."""

    m: int
    k: int
    n: int
    dtype_bytes: float
    ops: int
    bytes: float

    @property
    def intensity(self) -> float:
        return self.ops / self.bytes


# --8<-- [start:matmul_cost]
def matmul_cost(m: int, k: int, n: int, dtype="fp16") -> MatmulCost:
    """Operations and minimum bytes moved for C = A @ B with A (m, k), B (k, n).

    Each of the m n outputs takes k multiplies and k adds: 2 m k n operations.
    At the least, A and B are read once and C written once:
    (m k + k n + m n) elements of `dtype` (a name such as 'fp16' or a byte count).
    For a linear layer, m is the number of tokens, k = in_features, n = out_features.
    """
    m, k, n = positive_int("m", m), positive_int("k", k), positive_int("n", n)
    b = dtype_bytes("dtype", dtype)
    return MatmulCost(m, k, n, b, 2 * m * k * n, (m * k + k * n + m * n) * b)
# --8<-- [end:matmul_cost]


# The matmul drawn at the top of section 2.1 (the figure `matmul_picture`): three tokens of four numbers each
# through a layer with two outputs, small integers so that every cell can be checked in one's head.
EXAMPLE_X = ((1, 2, 0, 1), (0, 1, 3, 1), (2, 0, 1, 1))  # (m, k) = (3, 4): one row per token
EXAMPLE_WEIGHT = ((1, 2, 0, 1), (0, 1, 1, 2))  # (n, k) = (2, 4), the PyTorch layout; the picture draws its W^T


def matmul_example():
    """(x, weight, y) of section 2.1's drawn matmul: y = x W^T, (3, 4) times (4, 2) gives (3, 2), as float arrays."""
    x, weight = float_array("x", EXAMPLE_X, ndim=2), float_array("weight", EXAMPLE_WEIGHT, ndim=2)
    return x, weight, linear(x, weight)
