"""chapter2.linear: y = x W^T + b, the collapse of stacked linear layers, and matmul cost."""

import numpy as np
import pytest
import torch

from chapter2.linear import collapse, linear, matmul_cost


def test_linear_matches_torch():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(2, 7, 12)), rng.normal(size=(5, 12)), rng.normal(size=5)
    want = torch.nn.functional.linear(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b)).numpy()
    np.testing.assert_allclose(linear(x, w, b), want, rtol=1e-12)


def test_stacked_linear_layers_collapse_but_not_with_relu():
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(6, 4)), rng.normal(size=6)), (rng.normal(size=(3, 6)), rng.normal(size=3))]
    x = rng.normal(size=(9, 4))
    w, b = collapse(layers)
    stacked = linear(linear(x, *layers[0]), *layers[1])
    np.testing.assert_allclose(linear(x, w, b), stacked, rtol=1e-12, atol=1e-12)
    with_relu = linear(np.maximum(linear(x, *layers[0]), 0), *layers[1])
    assert np.abs(with_relu - linear(x, w, b)).max() > 0.1


def test_matmul_cost_from_first_principles():
    # one token through a 4096 x 4096 FP16 projection: 2*4096^2 ops; 2 bytes * (4096 + 4096^2 + 4096)
    c = matmul_cost(1, 4096, 4096, "fp16")
    assert c.ops == 2 * 4096 * 4096
    assert c.bytes == 2 * (4096 + 4096 * 4096 + 4096)
    assert c.intensity == pytest.approx(4096 / (4096 + 2), rel=1e-12)  # just under 1
    # square matmul of size n in FP16: 2n^3 / (3 n^2 * 2) = n / 3
    assert matmul_cost(4096, 4096, 4096, "bf16").intensity == pytest.approx(4096 / 3)
    assert matmul_cost(10, 10, 10, 4).bytes == 1200


@pytest.mark.parametrize("args,match", [((0, 4, 4), "m must be >= 1"), ((1, 2.5, 4), "k must be an integer"),
                                        ((1, 4, 4, "fp12"), "dtype must be one of")])
def test_matmul_cost_rejects_bad_input(args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        matmul_cost(*args)


def test_linear_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match="in_features"):
        linear(np.ones((2, 3)), np.ones((4, 5)))
