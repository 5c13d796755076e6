"""Section 2.1's facts, against numbers worked out here from the configs and first principles."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from chapter2.pages import neural_networks as nn

CONFIGS = Path(__file__).resolve().parents[1] / "src" / "chapter2" / "data" / "configs"
LLAMA = json.loads((CONFIGS / "Llama-3.1-8B.json").read_text())


def test_hidden_sizes_are_the_published_configs():
    assert nn.llama_8b_hidden_size().value == 4096 == LLAMA["hidden_size"]
    assert nn.deepseek_v3_hidden_size().value == 7168
    assert str(nn.llama_8b_hidden_size()) == "4,096"


def test_q_proj_shape_is_heads_times_head_dim_by_hidden():
    n = LLAMA["num_attention_heads"] * (LLAMA["hidden_size"] // LLAMA["num_attention_heads"])
    assert str(nn.q_proj_shape()) == f"{n:,} × {LLAMA['hidden_size']:,}" == "4,096 × 4,096"


def test_one_token_costs_2kn_flops_and_reads_the_weight():
    k = n = 4096
    assert nn.q_proj_decode_ops().value == 2 * k * n
    assert str(nn.q_proj_decode_ops()) == "33.6 MFLOP"
    # (1·k + k·n + 1·n) fp16 elements: the weight dominates, so about one op per byte
    assert nn.q_proj_decode_intensity().value == pytest.approx(2 * k * n / ((k + k * n + n) * 2))
    assert str(nn.q_proj_decode_intensity()) == "1"


def test_prefill_intensity_is_m_over_3():
    m, k, n = 4096, 4096, 4096
    prefill = 2 * m * k * n / ((m * k + k * n + m * n) * 2)
    assert prefill == m / 3
    assert nn.q_proj_prefill_intensity().value == pytest.approx(prefill)
    assert str(nn.q_proj_prefill_intensity()) == "1,365"
    # the table's last row shows the same number the same way
    assert str(nn.q_proj_cost_table().rows[-1][-1]) == "1,365"
    assert nn.prefill_tokens().value == m


def test_cost_table_rows():
    rows = nn.q_proj_cost_table().rows
    assert [r[0].value for r in rows] == [1, 16, 256, 4096]
    for (m, ops, nbytes, intensity) in rows:
        m = m.value
        assert ops.value == 2 * m * 4096 * 4096
        assert nbytes.value == (m * 4096 + 4096 * 4096 + m * 4096) * 2
        assert intensity.value == pytest.approx(ops.value / nbytes.value)
    assert "| 4,096 | 137 GFLOP |" in str(nn.q_proj_cost_table())


def test_silu_minimum_against_the_lambert_w_solution():
    # d/dx x·σ(x) = σ(x)(1 + x(1 - σ(x))) = 0  <=>  1 + x + e^x = 0; solve by bisection
    lo, hi = -2.0, -1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if 1 + mid + math.exp(mid) > 0 else (mid, hi)
    x_star = (lo + hi) / 2
    y_star = x_star / (1 + math.exp(-x_star))
    assert nn.silu_min_x().value == pytest.approx(x_star, abs=1e-4)
    assert nn.silu_min_value().value == pytest.approx(y_star, abs=1e-8)
    assert str(nn.silu_min_value()) == "-0.2785" and str(nn.silu_min_x()) == "-1.278"


def _golden_minimum(f, lo, hi):
    """Minimize a unimodal f on [lo, hi] by golden-section search: no derivative, no scipy."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(200):
        c, d = b - g * (b - a), a + g * (b - a)
        a, b = (a, d) if f(c) < f(d) else (c, b)
    return (a + b) / 2


def test_gelu_and_silu_minima_against_a_derivative_free_search():
    """Issue 24: the page quoted SiLU's minimum at x = -1.28 from a grid; GELU's was missing. GELU(x) = x Phi(x),
    written here with math.erf; SiLU(x) = x / (1 + e^-x)."""
    gelu = lambda x: 0.5 * x * (1 + math.erf(x / math.sqrt(2)))  # noqa: E731
    silu = lambda x: x / (1 + math.exp(-x))  # noqa: E731
    xg, xs = _golden_minimum(gelu, -3, 0), _golden_minimum(silu, -3, 0)
    assert nn.gelu_min_x().value == pytest.approx(xg, abs=1e-6)
    assert float(str(nn.gelu_min_value())) == pytest.approx(gelu(xg), abs=5e-5)
    assert str(nn.gelu_min_value()) == "-0.1700" and str(nn.gelu_min_x()) == "-0.752"
    assert nn.silu_min_x().value == pytest.approx(xs, abs=1e-6)
    page = (Path(__file__).resolve().parents[1] / "docs" / "neural-networks.md").read_text()
    for name in ("silu_min_value", "silu_min_x", "gelu_min_value", "gelu_min_x"):
        assert f"{{{{ fact: neural_networks.{name} }}}}" in page, name


def test_sigmoid_far_left_is_exactly_zero():
    assert nn.sigmoid_of_most_negative().value == 0.0 and str(nn.sigmoid_of_most_negative()) == "0"


# -- the drawn matmul and the layer picture that open the page ---------------------------------------------------
def test_the_drawn_matmul_is_a_3_by_4_times_4_by_2_worked_by_hand():
    from chapter2 import linear

    x, weight, y = linear.matmul_example()
    assert x.shape == (3, 4) and weight.shape == (2, 4)  # W in the PyTorch layout; the picture draws W^T (4, 2)
    # y = x W^T, each cell a row of x dotted with a row of W, worked out by hand
    assert y.tolist() == [[1 + 4 + 0 + 1, 0 + 2 + 0 + 2], [0 + 2 + 0 + 1, 0 + 1 + 3 + 2], [2 + 0 + 0 + 1, 0 + 0 + 1 + 2]]
    assert (nn.example_m().value, nn.example_k().value, nn.example_n().value) == (3, 4, 2)
    assert nn.example_cells().value == 6
    assert nn.example_ops().value == 2 * 3 * 4 * 2 == 6 * (4 + 4) == 48  # a multiply and an add per term


def test_the_figures_say_the_numbers_they_draw():
    from chapter2.host import figures

    figures._discover()
    alt = figures.alt_text("matmul_picture")
    for text in ("3 × 4 matrix x", "4 × 2 weight matrix", "3 × 2 matrix y", "(1, 2, 0, 1)", "1·1 + 2·2 + 0·0 + 1·1 = 6",
                 "Each of the 6 cells", "2 × 3 × 4 × 2 = 48 operations"):
        assert text in alt, text
    alt = figures.alt_text("layer_picture")
    for text in ("input layer of 4", "4 × 4 = 16 weights", "4 × 2 = 8", "hidden state: 4 here, 4,096 in Llama 3.1 8B"):
        assert text in alt, text
    page = (Path(__file__).resolve().parents[1] / "docs" / "neural-networks.md").read_text()
    assert "<!-- figure: matmul_picture hero -->" in page and "<!-- figure: layer_picture -->" in page
    assert page.index("matmul_picture hero") < page.index("**Equation.**"), "the picture comes before the symbols"


def test_activation_examples_against_the_formulas():
    """ReLU max(x, 0); SiLU x / (1 + e^-x); GELU x Φ(x) with Φ(x) = (1 + erf(x / √2)) / 2, at -2, -0.5, 0.5, 2."""
    want = {-2.0: (0, -2 / (1 + math.exp(2))), -0.5: (0, -0.5 / (1 + math.exp(0.5))),
            0.5: (0.5, 0.5 / (1 + math.exp(-0.5))), 2.0: (2, 2 / (1 + math.exp(-2)))}
    rows = nn.activation_examples_table().rows
    assert [r[0].value for r in rows] == list(want)
    for x, relu, silu, gelu_ in rows:
        assert relu.value == want[x.value][0]
        assert silu.value == pytest.approx(want[x.value][1], abs=1e-12)
        assert gelu_.value == pytest.approx(x.value * (1 + math.erf(x.value / math.sqrt(2))) / 2, abs=1e-12)
    assert "| -2 | 0 | -0.238 | -0.0455 |" in str(nn.activation_examples_table())
