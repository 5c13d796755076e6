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


def test_prefill_gain_is_the_ratio_of_intensities():
    m, k, n = 4096, 4096, 4096
    prefill = 2 * m * k * n / ((m * k + k * n + m * n) * 2)
    decode = 2 * k * n / ((k + k * n + n) * 2)
    assert nn.q_proj_prefill_gain().value == pytest.approx(prefill / decode)
    assert 1300 < nn.q_proj_prefill_gain().value < 1400
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
