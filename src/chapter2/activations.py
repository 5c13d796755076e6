"""Activation functions (chapter section 2.1.2), numpy reference implementations.

Stacked linear layers collapse into one linear layer, so a nonlinearity sits
between them. Each function here takes an array (or a scalar) and returns an
array of the same shape and floating dtype; each has a `*_slope` twin giving
the derivative, which the section's calculator shows next to the value.

All functions are stable for huge and tiny inputs: no overflow warnings, no
NaN for finite input (the logistic sigmoid is evaluated through exp(-|x|)).
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import finite_real, float_array, function

__all__ = [
    "relu", "relu_slope", "sigmoid", "silu", "silu_slope", "swish", "swish_slope",
    "gelu", "gelu_slope", "swiglu", "softmax", "ACTIVATIONS", "minimum",
]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_C = 0.044715  # the cubic coefficient of Hendrycks & Gimpel (2016), eq. for the tanh form
_erfc_object = np.frompyfunc(math.erfc, 1, 1)


def _normal_cdf(x):
    """Phi(x) = erfc(-x / sqrt 2) / 2 in float64, elementwise.

    numpy has no erf; math.erfc is accurate to double precision, and the erfc
    form keeps full relative precision in the far left tail, where
    (1 + erf(x / sqrt 2)) / 2 would cancel to zero.
    """
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * np.asarray(_erfc_object(-x / math.sqrt(2.0)), dtype=np.float64)


def _as_float(x) -> np.ndarray:
    return float_array("x", x)


def sigmoid(x):
    """Logistic sigmoid 1 / (1 + e^-x), computed without overflow for any finite x."""
    x = _as_float(x)
    z = np.exp(-np.abs(x))  # in (0, 1], never overflows
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z)).astype(x.dtype)


def relu(x):
    """ReLU: max(x, 0). Clips negatives to zero (Nair & Hinton, 2010)."""
    x = _as_float(x)
    return np.maximum(x, 0).astype(x.dtype)


def relu_slope(x):
    """Derivative of ReLU: 1 for x > 0, else 0 (the subgradient 0 is used at x = 0)."""
    x = _as_float(x)
    return (x > 0).astype(x.dtype)


# --8<-- [start:swish]
def swish(x, beta: float = 1.0):
    """Swish: x * sigmoid(beta * x) (Ramachandran et al., 2017).

    beta = 1 is SiLU; as beta grows, Swish approaches ReLU; beta = 0 gives x / 2.
    """
    x = _as_float(x)
    beta = finite_real("beta", beta)
    return (x * sigmoid(_scaled(beta, x))).astype(x.dtype)

# --8<-- [end:swish]


def swish_slope(x, beta: float = 1.0):
    """d/dx [x * s(beta x)] = s(beta x) + beta x s(beta x) (1 - s(beta x))."""
    x = _as_float(x)
    beta = finite_real("beta", beta)
    z = _scaled(beta, x)
    s = sigmoid(z)
    # z s (1 - s) -> 0 as |z| grows; clipping z avoids inf * 0 where s saturates.
    z = np.clip(z, -1000.0, 1000.0)
    return (s + z * s * (1.0 - s)).astype(x.dtype)


def _scaled(beta, x):
    """beta * x, where an overflow to +-inf is harmless (the sigmoid saturates)."""
    with np.errstate(over="ignore"):
        return beta * x


def silu(x):
    """SiLU (sigmoid linear unit): x * sigmoid(x), the activation of Llama and Qwen MLPs."""
    return swish(x, 1.0)


def silu_slope(x):
    """Derivative of SiLU."""
    return swish_slope(x, 1.0)


def gelu(x, approximate: str = "none"):
    """GELU: x * Phi(x), Phi the standard normal CDF (Hendrycks & Gimpel, 2016).

    approximate="none" uses the exact erf form, x/2 (1 + erf(x / sqrt 2));
    approximate="tanh" uses x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
    as in GPT-2 and `torch.nn.functional.gelu(approximate="tanh")`.
    """
    x = _as_float(x)
    if approximate == "none":
        return (x * _normal_cdf(x)).astype(x.dtype)
    if approximate == "tanh":
        # (1 + tanh u) / 2 = sigmoid(2u): the same function, without cancellation as tanh u -> -1
        return (x * sigmoid(2.0 * _gelu_tanh_arg(x))).astype(x.dtype)
    raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")


def gelu_slope(x, approximate: str = "none"):
    """Derivative of GELU (exact: Phi(x) + x phi(x); tanh form by the chain rule)."""
    x = _as_float(x)
    if approximate == "none":
        x64 = x.astype(np.float64)
        cdf = _normal_cdf(x64)
        xc = np.clip(x64, -40.0, 40.0)  # phi(40) underflows to 0 anyway
        pdf = np.exp(-0.5 * xc * xc) / math.sqrt(2.0 * math.pi)
        return (cdf + xc * pdf).astype(x.dtype)
    if approximate == "tanh":
        xc = np.clip(x.astype(np.float64), -40.0, 40.0)  # the slope is 0 or 1 to double precision beyond; avoids x^3 overflow
        s = sigmoid(2.0 * _gelu_tanh_arg(xc))  # = (1 + tanh u) / 2
        du = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_TANH_C * xc * xc)
        slope = s + xc * 2.0 * s * (1.0 - s) * du  # (1 - tanh^2 u) / 2 = 2 s (1 - s)
        return slope.astype(x.dtype)
    raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")


def _gelu_tanh_arg(x):
    xc = np.clip(x, -40.0, 40.0)  # sigmoid(2u) is 0 or 1 to double precision well before |x| = 40
    return _SQRT_2_OVER_PI * (xc + _GELU_TANH_C * xc * xc * xc)


def swiglu(x, w_gate, w_up):
    """SwiGLU feed-forward gate: silu(x W_gate^T) * (x W_up^T) (Shazeer, 2020).

    Weights use the PyTorch / Hugging Face layout (out_features, in_features),
    so `swiglu(x, mlp.gate_proj.weight, mlp.up_proj.weight)` is the gated
    hidden state of a Llama or Qwen MLP, before `down_proj`.
    x: (..., d_model); w_gate, w_up: (d_ff, d_model) -> (..., d_ff).
    """
    x = _as_float(x)
    w_gate = float_array("w_gate", w_gate, ndim=2)
    w_up = float_array("w_up", w_up, ndim=2)
    if w_gate.shape != w_up.shape:
        raise ValueError(f"w_gate and w_up must have the same shape, got {w_gate.shape} and {w_up.shape}")
    if x.shape[-1:] != w_gate.shape[1:]:
        raise ValueError(f"x's last dimension must be d_model = {w_gate.shape[1]} (w_gate is (d_ff, d_model)), got x of shape {x.shape}")
    return silu(x @ w_gate.T) * (x @ w_up.T)


def softmax(x, axis: int = -1):
    """exp(x) / sum(exp(x)) along `axis`: non-negative weights that sum to 1.

    The one softmax of the numpy core: attention weights (`chapter2.attention`),
    router probabilities (`chapter2.moe`) and sampling distributions
    (`chapter2.sampling`) all call it. The maximum along `axis` is subtracted
    first (softmax does not change when every entry moves by the same amount),
    so every exponent is <= 0 and exp never overflows. Entries of -inf (masked
    keys, banned tokens) get weight 0; each slice needs at least one finite entry.
    Returns the input's floating dtype (integers become float64).
    """
    x = _as_float(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


# name -> (value function, slope function, short description); the calculator and figure use this table.
ACTIVATIONS = {
    "relu": (relu, relu_slope, "max(x, 0)"),
    "silu": (silu, silu_slope, "x sigmoid(x)"),
    "swish": (swish, swish_slope, "x sigmoid(beta x)"),
    "gelu": (gelu, gelu_slope, "x Phi(x)"),
    "gelu_tanh": (lambda x: gelu(x, "tanh"), lambda x: gelu_slope(x, "tanh"), "tanh approximation of GELU"),
}


def minimum(fn, slope, lo: float = -3.0, hi: float = 0.0, tol: float = 1e-12) -> tuple[float, float]:
    """(x, fn(x)) where a smooth activation bottoms out: the root of `slope` in [lo, hi], by bisection.

    For SiLU and GELU the slope is negative left of the minimum and positive right of it, on [-3, 0]; a plot on a
    grid (step 0.025) only lands near it. Raises ValueError if the slope does not change sign on [lo, hi].
    """
    fn, slope = function("fn", fn, what="a function of x"), function("slope", slope, what="a function of x")
    lo, hi = finite_real("lo", lo), finite_real("hi", hi)
    s_lo, s_hi = float(slope(lo)), float(slope(hi))
    if not (s_lo < 0 < s_hi):
        raise ValueError(f"slope must go from negative at lo={lo} to positive at hi={hi}, got {s_lo} and {s_hi}")
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if float(slope(mid)) < 0 else (lo, mid)
    x = 0.5 * (lo + hi)
    return x, float(fn(x))
