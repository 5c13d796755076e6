"""Selective scan (Mamba) forms against a float64 loop, and the hybrid-model cost model (section 2.5)."""

import json
import math

import numpy as np
import pytest

from chapter2 import ssm
from chapter2.calculators import FieldError, compute, compute_json
from chapter2.format import nbytes
from chapter2.models import load_config


def scan_loop(x, delta, A, B, C, D=None, h0=None):
    """The recurrence of Gu & Dao 2023 written out scalar by scalar in Python floats (float64)."""
    length, channels = len(x), len(x[0])
    states = len(A[0])
    h = [[0.0] * states for _ in range(channels)] if h0 is None else [list(map(float, row)) for row in h0]
    y = [[0.0] * channels for _ in range(length)]
    for t in range(length):
        for d in range(channels):
            total = 0.0
            for n in range(states):
                a_bar = math.exp(float(delta[t][d]) * float(A[d][n]))
                b_bar = float(delta[t][d]) * float(B[t][n])
                h[d][n] = a_bar * h[d][n] + b_bar * float(x[t][d])
                total += float(C[t][n]) * h[d][n]
            y[t][d] = total + (float(D[d]) * float(x[t][d]) if D is not None else 0.0)
    return np.array(y), np.array(h)


def random_inputs(length=23, channels=5, states=3, batch=None, seed=0):
    rng = np.random.default_rng(seed)
    lead = (length,) if batch is None else (batch, length)
    x = rng.standard_normal((*lead, channels))
    delta = np.log1p(np.exp(rng.standard_normal((*lead, channels))))  # softplus, as in Mamba
    A = -np.exp(rng.standard_normal((channels, states)))  # A = -exp(A_log)
    B = rng.standard_normal((*lead, states))
    C = rng.standard_normal((*lead, states))
    D = rng.standard_normal(channels)
    return x, delta, A, B, C, D


@pytest.mark.parametrize("chunk_size", [1, 4, 7, 23, 64])
def test_sequential_and_chunked_match_the_loop(chunk_size):
    x, delta, A, B, C, D = random_inputs()
    y_ref, h_ref = scan_loop(x, delta, A, B, C, D)
    y_seq, h_seq = ssm.selective_scan(x, delta, A, B, C, D, return_state=True)
    y_chunk, h_chunk = ssm.selective_scan_chunked(x, delta, A, B, C, D, chunk_size=chunk_size, return_state=True)
    np.testing.assert_allclose(y_seq, y_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_seq, h_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y_chunk, y_ref, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(h_chunk, h_ref, rtol=1e-11, atol=1e-11)


def test_batched_inputs_and_initial_state():
    x, delta, A, B, C, _ = random_inputs(batch=2, seed=1)
    h0 = np.random.default_rng(2).standard_normal((2, 5, 3))
    y_seq = ssm.selective_scan(x, delta, A, B, C, h0=h0)
    y_chunk = ssm.selective_scan_chunked(x, delta, A, B, C, h0=h0, chunk_size=5)
    for b in range(2):
        y_ref, _ = scan_loop(x[b], delta[b], A, B[b], C[b], h0=h0[b])
        np.testing.assert_allclose(y_seq[b], y_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(y_chunk[b], y_ref, rtol=1e-11, atol=1e-11)


def test_carrying_the_state_splits_a_sequence():
    """Prefill the first part, keep the state, continue: the same as one pass (what a chunk does)."""
    x, delta, A, B, C, D = random_inputs(length=30, seed=3)
    whole = ssm.selective_scan_chunked(x, delta, A, B, C, D, chunk_size=8)
    first, state = ssm.selective_scan(x[:11], delta[:11], A, B[:11], C[:11], D, return_state=True)
    rest = ssm.selective_scan_chunked(x[11:], delta[11:], A, B[11:], C[11:], D, h0=state, chunk_size=8)
    np.testing.assert_allclose(np.concatenate([first, rest]), whole, rtol=1e-11, atol=1e-11)


def test_decode_steps_reproduce_the_scan():
    x, delta, A, B, C, D = random_inputs(length=12, seed=4)
    h = np.zeros((5, 3))
    steps = []
    for t in range(12):
        y_t, h = ssm.selective_scan_step(h, x[t], delta[t], A, B[t], C[t], D)
        assert h.shape == (5, 3)  # constant memory per token
        steps.append(y_t)
    np.testing.assert_allclose(np.stack(steps), ssm.selective_scan(x, delta, A, B, C, D), rtol=1e-13, atol=1e-13)


def test_constant_input_has_the_geometric_closed_form():
    """One channel, one state, x = B = C = 1, A = -a, constant delta:
    h_t = delta (1 + r + ... + r^t) = delta (1 - r^(t+1)) / (1 - r) with r = exp(-a delta)."""
    length, a, step = 40, 0.7, 0.3
    r = math.exp(-a * step)
    expected = np.array([step * (1 - r ** (t + 1)) / (1 - r) for t in range(length)])
    ones = np.ones((length, 1))
    for y in (ssm.selective_scan(ones, ones * step, [[-a]], ones, ones),
              ssm.selective_scan_chunked(ones, ones * step, [[-a]], ones, ones, chunk_size=16)):
        np.testing.assert_allclose(y[:, 0], expected, rtol=1e-13)


def test_segment_sum_from_its_definition():
    a = np.array([0.5, -1.0, 2.0, -0.25])
    seg = ssm.segment_sum(a)
    for t in range(4):
        for s in range(4):
            if s <= t:
                assert seg[t, s] == pytest.approx(sum(a[s + 1:t + 1]))
            else:
                assert seg[t, s] == -np.inf


def test_chunked_scan_survives_strong_decay():
    """Weights are exp(segment sum), never exp(cumsum[t]) / exp(cumsum[s]), which would be 0 / 0 here."""
    x, delta, A, B, C, D = random_inputs(length=64, seed=5)
    A = A * 1e4  # log-decays of thousands per step
    y_chunk = ssm.selective_scan_chunked(x, delta, A, B, C, D, chunk_size=64)
    assert np.all(np.isfinite(y_chunk))
    np.testing.assert_allclose(y_chunk, ssm.selective_scan(x, delta, A, B, C, D), rtol=1e-10, atol=1e-12)


def test_discretize_is_zero_order_hold_for_A():
    delta = np.array([0.5, 2.0])
    A = np.array([[-1.0, -3.0], [-0.5, -2.0]])
    a_bar, b_bar = ssm.discretize(delta, A, np.array([4.0, 5.0]))
    np.testing.assert_allclose(a_bar, [[math.exp(-0.5), math.exp(-1.5)], [math.exp(-1.0), math.exp(-4.0)]])
    np.testing.assert_allclose(b_bar, [[2.0, 2.5], [8.0, 10.0]])


def test_scan_input_checks():
    x, delta, A, B, C, D = random_inputs()
    with pytest.raises(ValueError, match="delta must be finite and >= 0"):
        ssm.selective_scan(x, -delta, A, B, C)
    with pytest.raises(ValueError, match="A must be finite and <= 0"):
        ssm.selective_scan(x, delta, -A, B, C)
    with pytest.raises(ValueError, match=r"A must be \(D=5, N\)"):
        ssm.selective_scan(x, delta, A[:3], B, C)
    with pytest.raises(ValueError, match="B must have shape"):
        ssm.selective_scan(x, delta, A, B[:, :2], C)
    with pytest.raises(ValueError, match="x must be"):
        ssm.selective_scan(x[0], delta[0], A, B[0], C[0])
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        ssm.selective_scan_chunked(x, delta, A, B, C, chunk_size=0)
    with pytest.raises(TypeError, match="x must be an array of real numbers"):
        ssm.selective_scan(np.array([["a"]]), delta, A, B, C)


# cost model ---------------------------------------------------------------------------------

def brute_force_pairs(n, window=None, causal=True):
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    keep = np.ones((n, n), dtype=bool)
    if causal:
        keep &= j <= i
    if window is not None:
        keep &= j > i - window
    return int(keep.sum())


@pytest.mark.parametrize("n,window", [(1, 1), (100, 1), (100, 30), (100, 100), (30, 100), (257, 64)])
def test_sliding_window_saving_counts_the_mask(n, window):
    saving = ssm.sliding_window_saving(n, window)
    assert (saving.full_pairs, saving.window_pairs) == (brute_force_pairs(n), brute_force_pairs(n, window))


def test_sliding_window_saving_and_its_approximations():
    n, w = 2048, 512
    saving = ssm.sliding_window_saving(n, w)
    assert saving.full_pairs == brute_force_pairs(n)
    assert saving.window_pairs == brute_force_pairs(n, w)
    # exact counts differ from the chapter's approximations by n/2 and w/2 (diagonal terms)
    assert saving.full_pairs - saving.full_approx == n / 2
    assert saving.window_pairs - saving.window_approx == w / 2
    assert saving.ratio == pytest.approx(brute_force_pairs(n) / brute_force_pairs(n, w))
    assert ssm.sliding_window_saving(100, 500).ratio == 1.0  # a window longer than the text saves nothing


# Published layer mixes. Nemotron 3 Nano's hybrid_override_pattern from
# https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16/blob/main/config.json (M Mamba-2, E MoE, * attention);
# Nemotron-H-8B: 24 Mamba-2, 24 MLP, 4 attention of 52 layers, "about 8%" attention (arXiv:2504.03624).
NANO_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"


def test_presets_follow_the_published_layer_mix():
    nano = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    assert (nano.ssm_layers, nano.ffn_layers, nano.attention_layers) == (
        NANO_PATTERN.count("M"), NANO_PATTERN.count("E"), NANO_PATTERN.count("*"))
    assert nano.total_layers == len(NANO_PATTERN) == 52
    h8 = ssm.HYBRID_PRESETS["nemotron-h-8b"]
    assert (h8.ssm_layers, h8.ffn_layers, h8.attention_layers, h8.total_layers) == (24, 24, 4, 52)
    assert round(100 * h8.attention_layers / h8.total_layers) == 8
    assert all(cfg.source for cfg in ssm.HYBRID_PRESETS.values())


def test_attention_share_says_which_layers_it_counts():
    """Two different shares: among the sequence-mixing layers (what the cost comparison uses) and among all
    layers (what papers quote: Nemotron-H-8B's "about 8%" is 4 of 52)."""
    nano = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    assert nano.attention_share == NANO_PATTERN.count("*") / (NANO_PATTERN.count("*") + NANO_PATTERN.count("M")) == 6 / 29
    assert nano.attention_share_of_all_layers == NANO_PATTERN.count("*") / len(NANO_PATTERN) == 6 / 52
    h8 = ssm.HYBRID_PRESETS["nemotron-h-8b"]
    assert round(100 * h8.attention_share_of_all_layers) == 8 and round(100 * h8.attention_share) == 14


def test_memory_of_nemotron_3_nano_from_its_config():
    """Per token: 6 attention layers x (K and V) x 2 KV heads x 128 x 2 bytes (bf16) = 6144 bytes.
    Per Mamba-2 layer: 64 heads x 64 x state 128 in fp32, plus 3 conv inputs x (4096 + 2 x 8 x 128) in bf16."""
    nano = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    cost = ssm.mixing_cost(nano, 10_000)
    assert cost.kv_cache_bytes == 10_000 * 6 * 2 * 2 * 128 * 2
    assert cost.ssm_state_bytes == 23 * (64 * 64 * 128 * 4 + 3 * (4096 + 2 * 8 * 128) * 2)
    # the state does not grow; the cache does
    assert ssm.mixing_cost(nano, 1_000_000).ssm_state_bytes == cost.ssm_state_bytes
    assert ssm.mixing_cost(nano, 1_000_000, window=4096).kv_cache_bytes == 4096 * 6 * 2 * 2 * 128 * 2


def test_flops_scale_quadratically_for_attention_and_linearly_for_ssm():
    nano = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    one_attention = nano.with_mix(1, 0)
    n = 4096
    assert ssm.mixing_cost(one_attention, n).flops == 4 * 128 * 32 * n * (n + 1) / 2
    assert ssm.mixing_cost(one_attention, n, phase="decode").flops == 4 * 128 * 32 * n
    one_mamba = nano.with_mix(0, 1)
    per_token = 5 * 4096 * 128 + 2 * 4 * (4096 + 2 * 8 * 128)
    assert ssm.mixing_cost(one_mamba, n).flops == n * per_token
    assert ssm.mixing_cost(one_mamba, n, phase="decode").flops == per_token
    assert ssm.mixing_cost(one_mamba, 100 * n, phase="decode").flops == per_token


def test_compare_architectures_mixes_the_same_layers():
    nano = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    stacks = ssm.compare_architectures(nano, 65536, window=4096)
    assert set(stacks) == {"attention", "ssm", "hybrid", "sliding window"}
    share = nano.attention_layers / nano.mixing_layers
    assert stacks["hybrid"].kv_cache_bytes == pytest.approx(share * stacks["attention"].kv_cache_bytes)
    assert stacks["hybrid"].attention_flops == pytest.approx(share * stacks["attention"].attention_flops)
    assert stacks["ssm"].kv_cache_bytes == 0 and stacks["attention"].ssm_state_bytes == 0
    assert stacks["sliding window"].attention_flops < stacks["attention"].attention_flops


def test_cost_input_checks():
    nano = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    with pytest.raises(ValueError, match="context must be >= 1"):
        ssm.mixing_cost(nano, 0)
    with pytest.raises(ValueError, match="phase must be"):
        ssm.mixing_cost(nano, 10, phase="train")
    with pytest.raises(TypeError, match="config must be a HybridConfig"):
        ssm.mixing_cost({"layers": 3}, 10)
    with pytest.raises(ValueError, match="attention_layers must be <= 29"):
        nano.with_attention_layers(30)
    with pytest.raises(ValueError, match="window must be >= 1"):
        ssm.sliding_window_saving(10, 0)


# calculators and figure -----------------------------------------------------------------------

def test_sliding_window_calculator():
    out = compute("sliding_window", {"n": "2048", "w": "512"})
    ratio = brute_force_pairs(2048) / brute_force_pairs(2048, 512)
    assert out["ratio"] == f"{ratio:.3g}×"  # 2.29×, three digits as the page's own ratios
    assert out["bars"] == [["full causal", float(brute_force_pairs(2048))],
                           ["sliding window", float(brute_force_pairs(2048, 512))]]
    bad = json.loads(compute_json("sliding_window", json.dumps({"n": "0"})))
    assert bad["ok"] is False and bad["field"] == "n"
    with pytest.raises(FieldError):
        compute("sliding_window", {"w": "1.5"})


def test_hybrid_calculator_defaults_are_nemotron_3_nano():
    out = compute("hybrid_cost")  # 29 mixing layers, 21 % attention -> 6 attention layers
    assert out["mix"] == "6 attention + 23 Mamba-2"
    assert out["kv"] == nbytes(131072 * 6 * 2 * 2 * 128 * 2)
    labels = [label for label, _ in out["bars"]]
    assert labels == ["all attention", "hybrid", "all Mamba"]
    memory = dict(out["bars"])
    assert memory["all attention"] > memory["hybrid"] > memory["all Mamba"] > 0
    all_mamba = compute("hybrid_cost", {"share": "0"})
    assert all_mamba["kv"] == nbytes(0)


def test_scaling_figure_renders_deterministically():
    """Drawn through the registry entry, in the site style (only this figure module is imported)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chapter2.host.figures import REGISTRY
    from chapter2.host.figures import ssm as ssm_figures  # noqa: F401 - registers the figure
    from chapter2.host.figures._style import style

    spec = REGISTRY["attention_vs_ssm_scaling"]

    def svg():
        with style():
            fig = spec.fn()
            buf = io.StringIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
            plt.close(fig)
        return buf.getvalue()

    first = svg()
    assert "<svg" in first and svg() == first
    assert "MB" in spec.alt and "4096" in spec.alt


def test_presets_are_views_of_the_shipped_configs():
    """HybridConfig holds no number of its own: each preset is read from a shipped config.json."""
    from chapter2.models import load_config

    nano = load_config("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert ssm.HYBRID_PRESETS["nemotron-3-nano"] == ssm.HybridConfig.from_model(nano, "Nemotron 3 Nano 30B-A3B")
    pattern = nano.raw["hybrid_override_pattern"]
    preset = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    assert (preset.ssm_layers, preset.attention_layers, preset.ffn_layers) == (
        pattern.count("M"), pattern.count("*"), pattern.count("E"))
    with pytest.raises(ValueError, match=r"Mamba-2 hybrid .* \(Qwen3NextForCausalLM\) with no Mamba-2 layer "
                                         r"\(its recurrent layers: gated_deltanet\)"):
        ssm.HybridConfig.from_model(load_config("Qwen3-Next-80B-A3B-Instruct"))
    with pytest.raises(ValueError, match=r"\(JambaForCausalLM\) with no Mamba-2 layer \(its recurrent layers: mamba1\)"):
        ssm.HybridConfig.from_model(load_config("AI21-Jamba-1.5-Mini"))
    with pytest.raises(ValueError, match=r"\(FalconH1ForCausalLM\), a parallel hybrid: each layer runs attention and "
                                         r"mamba2 side by side"):
        ssm.HybridConfig.from_model(load_config("Falcon-H1-0.5B-Instruct"))
    granite = ssm.HybridConfig.from_model(load_config("granite-4.0-h-tiny"))  # Mamba-2 layers apart: accepted
    types = load_config("granite-4.0-h-tiny").raw["layer_types"]
    assert (granite.ssm_layers, granite.attention_layers) == (types.count("mamba"), types.count("attention"))
    with pytest.raises(TypeError, match="ModelConfig"):
        ssm.HybridConfig.from_model("nemotron")


def test_hybrid_cache_chart_is_the_real_config_and_its_rebuilds():
    """The chart's three curves, by hand from Nemotron 3 Nano's config.json: 29 mixing layers; an attention
    layer caches 2 x 2 KV heads x 128 numbers per token (BF16), a Mamba-2 layer keeps (64 x 64 + 2 x 8 x 128)
    conv channels x 4 taps (BF16) and a 64 x 64 x 128 state (FP32), as transformers' cache holds them."""
    out = compute("hybrid_cost", {"context": "1000"})
    chart = out["cache_chart"]
    per_token = 2 * 2 * 128 * 2
    state = (64 * 64 + 2 * 8 * 128) * 4 * 2 + 64 * 64 * 128 * 4
    expected = {"all attention": 29 * per_token * 1000, "hybrid, as shipped": 6 * per_token * 1000 + 23 * state,
                "all Mamba-2": 29 * state}
    points = {p["label"].split(" at ")[0]: p["y"] for p in chart["points"]}
    assert points == pytest.approx({k: v / 1e9 for k, v in expected.items()}, rel=1e-4)
    ssm_curve = next(s for s in chart["series"] if s["label"] == "all Mamba-2")
    assert ssm_curve["y"] == pytest.approx([29 * state / 1e9] * len(ssm_curve["y"]), rel=1e-4)  # flat in context
    with pytest.raises(ValueError, match="Mamba-2 hybrid"):
        ssm.stacks_of(load_config("Llama-3.1-8B"))
