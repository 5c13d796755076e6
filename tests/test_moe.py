"""chapter2.moe: routing against transformers' Qwen3-MoE and Mixtral blocks, coverage against combinatorics."""

import itertools
import math

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip

from chapter2 import moe
from chapter2.models import MIXTRAL_8X7B, QWEN3_235B_A22B
from chapter2.moe import (
    expected_experts_touched, moe_decode_step, moe_forward, route,
    simulate_experts_touched, tokens_for_coverage, zipf_popularity,
)



# ---------------------------------------------------------------------------- routing vs transformers


def tiny_qwen3_moe_block(norm_topk_prob, seed=0):
    from transformers import Qwen3MoeConfig
    from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeSparseMoeBlock

    config = Qwen3MoeConfig(hidden_size=16, moe_intermediate_size=8, num_experts=6, num_experts_per_tok=2,
                            norm_topk_prob=norm_topk_prob)
    block = Qwen3MoeSparseMoeBlock(config).double()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.5)
    return block


@pytest.mark.parametrize("normalize", [True, False])
def test_moe_forward_matches_qwen3_moe_block(normalize):
    block = tiny_qwen3_moe_block(normalize)
    x = np.random.default_rng(1).standard_normal((2, 9, 16))
    with torch.no_grad():
        expected = block(torch.from_numpy(x)).numpy()
        _, weights, experts = block.gate(torch.from_numpy(x.reshape(-1, 16)))
    gate_up = block.experts.gate_up_proj.detach().numpy()  # (E, 2I, D): gate rows first, then up rows
    w_gate, w_up = gate_up[:, :8], gate_up[:, 8:]
    w_down = block.experts.down_proj.detach().numpy()
    router = block.gate.weight.detach().numpy()
    out = moe_forward(x.reshape(-1, 16), router, w_gate, w_up, w_down, k=2, normalize=normalize)
    # transformers' router takes the softmax in float32, so the match is to float32 precision
    np.testing.assert_allclose(out.reshape(2, 9, 16), expected, rtol=1e-5, atol=2e-6)
    routing = route(x.reshape(-1, 16) @ router.T, 2, normalize=normalize)
    np.testing.assert_array_equal(routing.experts, experts.numpy())
    np.testing.assert_allclose(routing.weights, weights.numpy(), atol=1e-6)  # transformers' router works in float32


def test_route_matches_mixtral_router():
    from transformers import MixtralConfig
    from transformers.models.mixtral.modeling_mixtral import MixtralTopKRouter

    router = MixtralTopKRouter(MixtralConfig(hidden_size=12, num_local_experts=8, num_experts_per_tok=2))
    with torch.no_grad():
        router.weight.copy_(torch.randn(8, 12, generator=torch.Generator().manual_seed(2)))
        x = torch.randn(30, 12, generator=torch.Generator().manual_seed(3))
        logits, weights, experts = router(x)
    routing = route(logits.numpy(), 2)
    np.testing.assert_array_equal(routing.experts, experts.numpy())
    np.testing.assert_allclose(routing.weights, weights.numpy(), atol=1e-6)
    np.testing.assert_allclose(routing.weights.sum(-1), 1.0, atol=1e-15)


def test_router_semantics_in_float32():
    # what the numpy transformer asks of the router: float32, raw or renormalised top-k weights
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4]]))
    routing = route(logits, 2, normalize=False, dtype=np.float32)
    assert routing.experts.tolist() == [[3, 2]] and routing.weights.dtype == np.float32
    np.testing.assert_allclose(routing.weights, [[0.4, 0.3]], rtol=1e-6)  # raw softmax probabilities
    weights = route(logits, 2, normalize=True, dtype=np.float32).weights
    np.testing.assert_allclose(weights, [[4 / 7, 3 / 7]], rtol=1e-6)  # renormalised over the top 2


def test_moe_forward_takes_per_expert_lists_and_a_dtype():
    """The checkpoint layout (one matrix per expert, as the transformer holds them) gives the stacked result."""
    rng = np.random.default_rng(4)
    x, router = rng.standard_normal((5, 6)), rng.standard_normal((4, 6))
    w_gate, w_up, w_down = rng.standard_normal((4, 3, 6)), rng.standard_normal((4, 3, 6)), rng.standard_normal((4, 6, 3))
    stacked = moe_forward(x, router, w_gate, w_up, w_down, k=2)
    listed = moe_forward(x, router, list(w_gate), list(w_up), list(w_down), k=2)
    np.testing.assert_array_equal(listed, stacked)
    single = moe_forward(x, router, list(w_gate), list(w_up), list(w_down), k=2, dtype=np.float32)
    assert single.dtype == np.float32 and stacked.dtype == np.float64
    np.testing.assert_allclose(single, stacked, rtol=1e-4, atol=1e-5)


def test_route_first_principles():
    routing = route(np.log([[0.1, 0.5, 0.15, 0.25]]), 2, normalize=False)
    np.testing.assert_array_equal(routing.experts, [[1, 3]])
    np.testing.assert_allclose(routing.weights, [[0.5, 0.25]])
    np.testing.assert_allclose(route(np.log([[0.1, 0.5, 0.15, 0.25]]), 2).weights, [[2 / 3, 1 / 3]])
    np.testing.assert_array_equal(route(np.zeros((1, 5)), 3).experts, [[0, 1, 2]])  # ties: lower index first


# ---------------------------------------------------------------------------- coverage formula


def brute_force_expected_touched(n_experts, k, n_tokens):
    """Average distinct experts over every equally likely way T tokens can each pick k of E experts."""
    subsets = list(itertools.combinations(range(n_experts), k))
    total = sum(len(set().union(*choice)) for choice in itertools.product(subsets, repeat=n_tokens))
    return total / len(subsets) ** n_tokens


@pytest.mark.parametrize("n_experts, k, n_tokens", [(5, 2, 3), (6, 1, 4), (4, 3, 2), (7, 3, 3)])
def test_formula_equals_enumeration(n_experts, k, n_tokens):
    assert math.isclose(expected_experts_touched(n_experts, k, n_tokens),
                        brute_force_expected_touched(n_experts, k, n_tokens), rel_tol=1e-12)


def test_formula_limits():
    for e, k in [(128, 8), (8, 2), (64, 64), (10, 1)]:
        assert math.isclose(expected_experts_touched(e, k, 1), k, rel_tol=1e-12)  # one token touches its k experts
        assert expected_experts_touched(e, k, 0) == 0
        assert math.isclose(expected_experts_touched(e, k, 10**6), e, rel_tol=1e-12)  # a huge batch touches all
        touched = [expected_experts_touched(e, k, t) for t in range(1, 200)]
        assert all(a <= b for a, b in itertools.pairwise(touched))


def variance_of_touched(n_experts, k, n_tokens):
    """Var[distinct experts] from indicator covariances: one token misses expert e with probability
    q1 = (E-k)/E and misses both e and f with probability r1 = (E-k)(E-k-1) / (E(E-1))."""
    e = n_experts
    q = ((e - k) / e) ** n_tokens
    r = ((e - k) * (e - k - 1) / (e * (e - 1))) ** n_tokens
    return max(e * q * (1 - q) + e * (e - 1) * (r - q * q), 0.0)  # exactly 0 for T = 1, up to rounding


@pytest.mark.parametrize("n_tokens", [1, 4, 16, 64, 256])
def test_formula_matches_simulation(n_tokens):
    trials = 400
    counts = simulate_experts_touched(128, 8, n_tokens, trials=trials, rng=np.random.default_rng(n_tokens))
    expected = expected_experts_touched(128, 8, n_tokens)
    stderr = math.sqrt(variance_of_touched(128, 8, n_tokens) / trials)
    assert abs(counts.mean() - expected) <= 5 * stderr + 1e-9  # 5 standard errors: a seeded, non-flaky check
    assert (counts >= 8).all() and (counts <= 128).all()


def test_simulation_picks_distinct_experts_in_proportion_to_popularity():
    assert (simulate_experts_touched(16, 4, 1, trials=50, rng=np.random.default_rng(0)) == 4).all()
    # k = 1: one token picks expert e with probability p_e, so P(expert 0 touched by the single token) = p_0
    p = zipf_popularity(4, 1.0)
    np.testing.assert_allclose(p, np.array([1, 1 / 2, 1 / 3, 1 / 4]) / (25 / 12))
    hits = simulate_experts_touched(4, 1, 1, popularity=[1, 0, 0, 0], trials=20, rng=np.random.default_rng(1))
    assert (hits == 1).all()
    rng = np.random.default_rng(2)
    # two experts, popularity 0.9 / 0.1, k = 1, T = 3 tokens: both touched unless all three pick the same one
    counts = simulate_experts_touched(2, 1, 3, popularity=[0.9, 0.1], trials=4000, rng=rng)
    p_both = 1 - 0.9**3 - 0.1**3
    assert abs((counts == 2).mean() - p_both) <= 5 * math.sqrt(p_both * (1 - p_both) / 4000)


def test_skewed_routing_touches_fewer_experts():
    rng = np.random.default_rng(3)
    uniform = simulate_experts_touched(128, 8, 64, trials=100, rng=rng).mean()
    skewed = simulate_experts_touched(128, 8, 64, popularity=zipf_popularity(128, 1.2), trials=100, rng=rng).mean()
    assert skewed < uniform - 10
    np.testing.assert_allclose(zipf_popularity(5, 0.0), np.full(5, 0.2))


def test_tokens_for_coverage():
    # 1 - (15/16)^T >= 0.99  <=>  T >= ln(0.01) / ln(15/16) = 71.36
    assert tokens_for_coverage(128, 8, 0.99) == 72
    assert tokens_for_coverage(8, 2, 0.5) == 3  # 1 - 0.75^2 = 0.4375 < 0.5 <= 1 - 0.75^3 = 0.578
    assert tokens_for_coverage(8, 8, 0.999) == 1
    assert tokens_for_coverage(128, 8, 1 - 15 / 16) == 1  # exact boundary: one token covers 8/128


# ---------------------------------------------------------------------------- published configurations


def test_qwen3_235b_a22b_adds_up_to_its_name():
    spec = QWEN3_235B_A22B
    assert (spec.n_experts, spec.k, spec.n_layers) == (128, 8, 94)
    assert spec.expert_params == 3 * 4096 * 1536
    # Non-expert weights from the same config.json: attention (64 query heads, 4 KV heads, head_dim 128),
    # router, norms, untied embedding and LM head (vocab 151936).
    attn = 4096 * 64 * 128 * 2 + 4096 * 4 * 128 * 2 + 2 * 128 + 2 * 4096  # q, o, k, v projections, q/k norms, 2 RMSNorms
    router = 128 * 4096
    per_layer = attn + router
    embed = 2 * 151936 * 4096
    total = spec.total_expert_params + 94 * per_layer + embed + 4096
    active = spec.active_expert_params + 94 * per_layer + embed + 4096
    assert round(total / 1e9) == 235  # "235B parameters" (Qwen3 tech report, arXiv:2505.09388, Table 2)
    assert round(active / 1e9) == 22  # "A22B": 22B activated


def test_mixtral_spec_is_about_47b_total_13b_active():
    # Mixtral paper (arXiv:2401.04088): 47B parameters, 13B active per token; experts dominate both
    assert 44e9 < MIXTRAL_8X7B.total_expert_params < 47e9
    assert 10e9 < MIXTRAL_8X7B.active_expert_params < 13e9


# ---------------------------------------------------------------------------- compute vs memory


def test_moe_decode_step_compute_vs_memory():
    spec = QWEN3_235B_A22B
    one = moe_decode_step(128, 8, 1, expert_params=spec.expert_params, n_layers=94, dtype="bf16")
    assert one.bytes_loaded == 8 * spec.expert_params * 2 * 94  # one token loads exactly its 8 experts
    assert one.flops == 2 * 8 * spec.expert_params * 94
    assert one.compute_saving == 16 and math.isclose(one.memory_saving, 16)
    assert math.isclose(one.ops_per_byte, 1.0)  # 2 FLOPs per 2-byte weight: decode at batch 1 is memory bound
    big = moe_decode_step(128, 8, 1024, expert_params=spec.expert_params, n_layers=94)
    assert big.compute_saving == 16 and big.memory_saving < 1.0001  # all experts loaded, 1/16 of the FLOPs
    assert math.isclose(big.ops_per_byte, 1024 * 8 / big.experts_touched)


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: expected_experts_touched(8, 9, 1), ValueError, "at most the number of experts"),
        (lambda: expected_experts_touched(0, 1, 1), ValueError, "n_experts"),
        (lambda: expected_experts_touched(8, 2, -1), ValueError, "n_tokens"),
        (lambda: tokens_for_coverage(8, 2, 1.0), ValueError, "share"),
        (lambda: route(np.zeros(4), 1), ValueError, "router_logits"),
        (lambda: route(np.zeros((2, 4)), 5), ValueError, "at most"),
        (lambda: route(np.full((2, 4), np.nan), 1), ValueError, "finite"),
        (lambda: simulate_experts_touched(4, 2, 3, rng=0), TypeError, "rng"),
        (lambda: simulate_experts_touched(4, 2, 3, popularity=[1, 0, 0, 0], rng=np.random.default_rng()), ValueError, "k = 2"),
        (lambda: simulate_experts_touched(4, 2, 3, popularity=[1, 1], rng=np.random.default_rng()), ValueError, "popularity"),
        (lambda: moe_decode_step(8, 2, 4, expert_params=0), ValueError, "expert_params"),
        (lambda: moe_decode_step(8, 2, 4, expert_params=10, dtype="fp7"), ValueError, "dtype"),
        (lambda: moe_forward(np.zeros((2, 4)), np.zeros((3, 5)), np.zeros((3, 2, 4)), np.zeros((3, 2, 4)),
                             np.zeros((3, 4, 2)), k=1), ValueError, "router_weight"),
    ],
)
def test_bad_input_raises(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_module_imports_only_numpy_and_stdlib():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(moe))
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    roots |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    # models: the package's config reader (stdlib and numpy only), whose shipped configs the specs are views of
    assert roots <= {"numpy", "math", "dataclasses", "__future__", "_checks", "activations", "models"}


# ---------------------------------------------------------------------------- calculator and figure text


def test_moe_calculator_shows_library_values():
    from chapter2 import calculators

    out = calculators.compute("moe_coverage", {"n_experts": "128", "k": "8", "n_tokens": "64"})
    touched = 128 * (1 - (1 - 8 / 128) ** 64)
    assert out["touched"] == f"{touched:.1f} of 128"
    assert out["batch_for_coverage"] == "36 / 72 tokens"  # ln(0.1)/ln(15/16) = 35.7, ln(0.01)/ln(15/16) = 71.4
    # one picture of the idea: the live chart (a curve over the batch, marked at B), no bars repeating it
    assert "curve" not in out and out["chart"]["points"][0]["x"] == 64


def test_moe_coverage_figure_alt_text_facts():
    assert tokens_for_coverage(128, 8, 0.9) == 36  # "passes 90 percent near 36 tokens"
    assert expected_experts_touched(128, 8, 128) / 128 > 0.999  # "essentially 100 percent from about 100 tokens"


def test_specs_are_views_of_the_shipped_configs():
    from chapter2.models import load_config

    qwen = load_config("Qwen3-235B-A22B")
    assert QWEN3_235B_A22B == moe.MoeSpec.from_config(qwen)
    assert (QWEN3_235B_A22B.n_experts, QWEN3_235B_A22B.k, QWEN3_235B_A22B.n_layers) == (
        qwen.raw["num_experts"], qwen.raw["num_experts_per_tok"], qwen.raw["num_hidden_layers"])
    assert MIXTRAL_8X7B.expert_intermediate_size == load_config("Mixtral-8x7B-v0.1").raw["intermediate_size"]
    with pytest.raises(ValueError, match="mixture-of-experts"):
        moe.MoeSpec.from_config(load_config("Llama-3.1-8B"))
    with pytest.raises(ValueError, match="gated"):
        moe.MoeSpec.from_config(load_config("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"))
