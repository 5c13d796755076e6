"""chapter2.activations against an arbitrary-precision oracle (mpmath) and torch.nn.functional."""

from __future__ import annotations

import warnings

import mpmath
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from chapter2 import activations as act

mpmath.mp.dps = 50
POINTS = np.concatenate([np.linspace(-12, 12, 241), [-1e308, -1e30, -745.2, -40.0, -1e-300, 0.0, 1e-300, 5e-324, 40.0, 1e30, 1e308]])


def _oracle(fn, x):
    return np.array([float(fn(mpmath.mpf(float(v)))) for v in x])


ORACLES = {
    "relu": (act.relu, lambda t: max(t, 0)),
    "silu": (act.silu, lambda t: t / (1 + mpmath.exp(-t))),
    "swish_beta_2.5": (lambda x: act.swish(x, 2.5), lambda t: t / (1 + mpmath.exp(-2.5 * t))),
    "gelu": (act.gelu, lambda t: t / 2 * (1 + mpmath.erf(t / mpmath.sqrt(2)))),
    "gelu_tanh": (lambda x: act.gelu(x, "tanh"),
                  lambda t: t / 2 * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (t + mpmath.mpf("0.044715") * t**3)))),
    "silu_slope": (act.silu_slope, lambda t: mpmath.diff(lambda u: u / (1 + mpmath.exp(-u)), t)),
    "swish_slope_beta_0.5": (lambda x: act.swish_slope(x, 0.5), lambda t: mpmath.diff(lambda u: u / (1 + mpmath.exp(-0.5 * u)), t)),
    "gelu_slope": (act.gelu_slope, lambda t: mpmath.diff(lambda u: u / 2 * (1 + mpmath.erf(u / mpmath.sqrt(2))), t)),
    "gelu_tanh_slope": (lambda x: act.gelu_slope(x, "tanh"),
                        lambda t: mpmath.diff(
                            lambda u: u / 2 * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi) * (u + mpmath.mpf("0.044715") * u**3))), t)),
}


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_float64_matches_arbitrary_precision_oracle(name):
    fn, exact = ORACLES[name]
    x = POINTS if "slope" not in name else POINTS[np.abs(POINTS) < 1e6]  # mpmath.diff needs a sane step
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid-value warnings, ever
        got = fn(x)
    want = _oracle(exact, x)
    assert got.dtype == np.float64 and got.shape == x.shape
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


TORCH = {
    "relu": (act.relu, F.relu),
    "silu": (act.silu, F.silu),
    "gelu": (act.gelu, F.gelu),
    "gelu_tanh": (lambda x: act.gelu(x, "tanh"), lambda t: F.gelu(t, approximate="tanh")),
}


@pytest.mark.parametrize("name", sorted(TORCH))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_torch(name, dtype):
    ours, theirs = TORCH[name]
    # torch evaluates GELU as x/2 (1 + erf), whose 2x overflows to inf above max/2; ours does not (see the oracle test)
    big = np.finfo(dtype).max / 4
    x = np.concatenate([np.random.default_rng(0).normal(scale=4, size=1000), [-big, -1e4, -88.0, 0.0, 88.0, 1e4, big]]).astype(dtype)
    got = ours(x)
    assert got.dtype == dtype
    want = theirs(torch.from_numpy(x)).numpy()
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_swish_family_limits():
    x = np.linspace(-6, 6, 121)
    np.testing.assert_allclose(act.swish(x, 0.0), x / 2)
    np.testing.assert_array_equal(act.swish(x, 1.0), act.silu(x))
    np.testing.assert_allclose(act.swish(x, 60.0), act.relu(x), atol=1e-3)


def test_swiglu_matches_torch_mlp_gate():
    rng = np.random.default_rng(1)
    x, wg, wu = rng.normal(size=(3, 5, 16)), rng.normal(size=(24, 16)), rng.normal(size=(24, 16))
    want = F.silu(torch.from_numpy(x) @ torch.from_numpy(wg).T) * (torch.from_numpy(x) @ torch.from_numpy(wu).T)
    np.testing.assert_allclose(act.swiglu(x, wg, wu), want.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call,match", [
    (lambda: act.swiglu(np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))), "same shape"),
    (lambda: act.swiglu(np.ones((2, 5)), np.ones((4, 3)), np.ones((4, 3))), "d_model = 3"),
    (lambda: act.gelu(np.ones(3), approximate="fast"), "approximate"),
    (lambda: act.swish(np.ones(3), beta=float("nan")), "beta must be finite"),
    (lambda: act.relu(["a", "b"]), "x must be an array of real numbers"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_the_activation_charts_text_gives_silus_true_minimum_not_a_sampled_one():
    """issue 32: the chart samples x every 0.2, so its lowest drawn SiLU point (x = -1.2, -0.2778) is not the
    minimum. SiLU's slope vanishes where 1 + x (1 - sigmoid(x)) = 0, at x = -1 - W(1/e), where silu(x) = x + 1 =
    -W(1/e) (W: Lambert's function): -0.2785 at x = -1.278. GELU's: its slope's root, found here by mpmath."""
    from chapter2 import charts
    from chapter2.calculators import compute, get

    w = float(mpmath.lambertw(1 / mpmath.e))
    silu_x, silu_min = -1 - w, -w
    assert f"{silu_min:.4f}" == "-0.2785" and f"{silu_x:.3f}" == "-1.278"
    gelu_x = float(mpmath.findroot(lambda t: mpmath.ncdf(t) + t * mpmath.npdf(t), -0.75))
    gelu_min = gelu_x * float(mpmath.ncdf(gelu_x))
    calc = get("activations")
    out = compute("activations", {})
    spec = next(o.chart for o in calc.outputs if o.key == "values")
    text = charts.describe(spec, out["values"])
    assert f"SiLU's lowest point: {silu_min:.4f} at x = {silu_x:.3f}" in text
    assert f"GELU's: {gelu_min:.4f} at x = {gelu_x:.3f}" in text
    # the curve itself passes through both minima, so its drawn lowest point is the true one too
    silu = next(s for s in out["values"]["series"] if s["label"] == "SiLU")
    assert min(silu["y"]) == pytest.approx(silu_min, abs=1e-6)  # series keep 6 significant digits
