"""chapter2.sampling against Hugging Face transformers' logits warpers and first principles."""

import math

import numpy as np
import pytest
import torch  # the oracles: a missing torch/transformers is a failure, not a skip
import transformers.generation.logits_process as lp
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter2.sampling import TOP_P_SLACK, probs, sample


def hf_probs(logits, *, temperature=1.0, top_k=None, top_p=1.0, logit_bias=None):
    """The same pipeline built from transformers' processors, in float64 (the order `generate` uses)."""
    scores = torch.tensor(np.asarray(logits, dtype=np.float64)[None, :])
    input_ids = torch.zeros((1, 1), dtype=torch.long)
    if logit_bias:
        scores = lp.SequenceBiasLogitsProcessor([[[t], float(b)] for t, b in logit_bias.items()])(input_ids, scores)
    scores = lp.TemperatureLogitsWarper(float(temperature))(input_ids, scores)
    if top_k is not None:
        scores = lp.TopKLogitsWarper(top_k)(input_ids, scores)
    if top_p < 1.0:
        scores = lp.TopPLogitsWarper(top_p)(input_ids, scores)
    return torch.softmax(scores, dim=-1)[0].numpy()


# ---------------------------------------------------------------------------- oracle: transformers


def test_matches_transformers_warpers_on_random_logits():
    rng = np.random.default_rng(0)
    for _ in range(300):
        vocab = int(rng.integers(1, 60))
        logits = rng.normal(size=vocab) * rng.choice([0.5, 3.0, 30.0])
        temperature = float(rng.choice([0.25, 0.7, 1.0, 1.8]))
        top_k = [None, 1, 3, 10, vocab, vocab + 5][int(rng.integers(6))]
        top_p = float(rng.choice([1.0, 0.95, 0.6, 0.1, rng.uniform(0.01, 1.0)]))
        # transformers stores a sequence bias in float32: use biases that float32 holds exactly
        bias = {int(rng.integers(vocab)): float(np.float32(rng.normal() * 2))} if rng.random() < 0.5 else None
        ours = probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, logit_bias=bias)
        theirs = hf_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, logit_bias=bias)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-14)


def test_top_k_ties_at_the_cut_are_kept_like_transformers():
    logits = [1.0, 2.0, 2.0, 2.0, 0.0]  # k = 2 cuts through a three-way tie: all three stay (strictly-below rule)
    expected = [0, 1 / 3, 1 / 3, 1 / 3, 0]
    np.testing.assert_allclose(probs(logits, top_k=2), expected, atol=1e-15)
    np.testing.assert_allclose(hf_probs(logits, top_k=2), expected, atol=1e-15)


def test_top_p_ties_documented_difference_from_transformers():
    # Three tied tokens of probability ~0.33 each (the others are smaller); p = 0.5 needs two of them.
    logits = [1.0, 2.0, 2.0, 2.0, 0.0]
    ours = probs(logits, top_p=0.5)
    theirs = hf_probs(logits, top_p=0.5)
    np.testing.assert_allclose(ours, [0, 1 / 3, 1 / 3, 1 / 3, 0], atol=1e-15)  # the whole tie group is kept
    assert np.count_nonzero(theirs) == 2  # transformers keeps part of the tie, chosen by its sort order
    assert set(np.flatnonzero(theirs)) < {1, 2, 3}


def test_top_p_exact_boundary_documented_difference_from_transformers():
    logits = np.log([0.5, 0.3, 0.2])  # 0.5 + 0.3 reaches p = 0.8 exactly: two tokens, renormalized
    np.testing.assert_allclose(probs(logits, top_p=0.8), [0.5 / 0.8, 0.3 / 0.8, 0.0], rtol=1e-12)
    assert np.count_nonzero(hf_probs(logits, top_p=0.8)) == 3  # rounding in 1 - p tips transformers over
    np.testing.assert_allclose(probs(logits, top_p=0.8001), [0.5, 0.3, 0.2], rtol=1e-12)
    assert np.count_nonzero(probs(logits, top_p=0.8 + 10 * TOP_P_SLACK)) == 3  # only rounding-sized gaps are absorbed
    np.testing.assert_allclose(probs(logits, top_p=0.5), [1.0, 0.0, 0.0])  # the first token alone reaches 0.5


# ---------------------------------------------------------------------------- first principles


def test_temperature_is_softmax_of_scaled_logits():
    logits = np.array([2.0, 1.0, 0.5, 0.1, -1.0])
    for t in (0.5, 1.0, 2.0):
        e = np.exp(logits / t)
        np.testing.assert_allclose(probs(logits, temperature=t), e / e.sum(), rtol=1e-14)


def test_temperature_zero_is_greedy_with_lowest_index_on_ties():
    np.testing.assert_array_equal(probs([0.1, 3.0, -2.0], temperature=0), [0, 1, 0])
    np.testing.assert_array_equal(probs([3.0, 1.0, 3.0], temperature=0), [1, 0, 0])
    np.testing.assert_array_equal(probs([-np.inf, 5.0, 5.0], temperature=0, top_p=0.3), [0, 1, 0])
    rng = np.random.default_rng(1)
    assert {sample([0.1, 3.0, -2.0], temperature=0, rng=rng) for _ in range(50)} == {1}


def test_top_k_disabled_values_and_large_k():
    logits = np.array([0.3, -1.2, 2.2, 0.9])
    full = probs(logits)
    for k in (None, 0, -1, 4, 100):
        np.testing.assert_array_equal(probs(logits, top_k=k), full)
    np.testing.assert_array_equal(probs(logits, top_k=1), [0, 0, 1, 0])
    e = np.exp([2.2, 0.9])
    np.testing.assert_allclose(probs(logits, top_k=2), [0, 0, e[0] / e.sum(), e[1] / e.sum()], rtol=1e-14)


def test_top_p_tiny_keeps_only_the_most_likely_token():
    np.testing.assert_array_equal(probs([0.3, -1.2, 2.2, 0.9], top_p=1e-9), [0, 0, 1, 0])


def test_top_p_after_top_k_uses_the_renormalized_distribution():
    # After top-k = 2 on log([0.4, 0.4, 0.2]) ties keep 0.4, 0.4 -> 0.5, 0.5; p = 0.5 then needs the tie group.
    np.testing.assert_allclose(probs(np.log([0.4, 0.4, 0.2]), top_k=2, top_p=0.5), [0.5, 0.5, 0.0], rtol=1e-12)
    # log([0.6, 0.3, 0.1]) with k = 2 -> 2/3, 1/3; p = 0.6 is reached by the first token alone.
    np.testing.assert_allclose(probs(np.log([0.6, 0.3, 0.1]), top_k=2, top_p=0.6), [1.0, 0.0, 0.0])


def test_logit_bias_adds_and_bans():
    e3 = math.exp(3.0)
    np.testing.assert_allclose(probs(np.zeros(4), logit_bias={0: 3.0}), [e3 / (e3 + 3), 1 / (e3 + 3), 1 / (e3 + 3), 1 / (e3 + 3)])
    np.testing.assert_allclose(probs(np.zeros(4), logit_bias={1: -np.inf}), [1 / 3, 0, 1 / 3, 1 / 3])
    # bias comes before temperature: greedy sees the biased argmax
    np.testing.assert_array_equal(probs([1.0, 0.0], temperature=0, logit_bias={1: 2.0}), [0, 1])


def test_stable_for_huge_logits_and_minus_inf():
    np.testing.assert_allclose(probs([1e308, -1e308, 1e308]), [0.5, 0, 0.5])
    np.testing.assert_allclose(probs([1000.0, 999.0]), [1 / (1 + math.exp(-1)), 1 / (1 + math.e)], rtol=1e-14)
    np.testing.assert_allclose(probs([1e308, 1e308 * (1 - 1e-15)], temperature=1e-300), [1, 0])
    p = probs([-np.inf, 0.0, -np.inf, 0.0])
    np.testing.assert_array_equal(p, [0, 0.5, 0, 0.5])
    rng = np.random.default_rng(2)
    assert {sample([-np.inf, 0.0, -np.inf, 0.0], rng=rng) for _ in range(200)} == {1, 3}


def test_batched_rows_equal_single_rows():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(2, 3, 11)) * 2
    kw = dict(temperature=0.8, top_k=5, top_p=0.7, logit_bias={4: 1.0})
    batched = probs(logits, **kw)
    for idx in np.ndindex(2, 3):
        np.testing.assert_array_equal(batched[idx], probs(logits[idx], **kw))
    ids = sample(logits, rng=np.random.default_rng(0), **kw)
    assert ids.shape == (2, 3) and ids.dtype == np.int64
    assert all(batched[idx][ids[idx]] > 0 for idx in np.ndindex(2, 3))


def test_sample_frequencies_follow_probs():
    rng = np.random.default_rng(4)
    target = np.array([0.5, 0.3, 0.2, 0.0])
    logits = np.log(np.where(target > 0, target, 1e-300))
    logits[3] = -np.inf
    draws = np.array([sample(logits, rng=rng) for _ in range(20000)])
    counts = np.bincount(draws, minlength=4)
    assert counts[3] == 0
    sigma = np.sqrt(20000 * target * (1 - target))  # binomial standard deviation per count
    assert np.all(np.abs(counts - 20000 * target) <= 5 * sigma + 1e-9)


def test_sample_never_draws_filtered_tokens():
    rng = np.random.default_rng(5)
    logits = [2.0, 1.0, 0.5, 0.1, -1.0]
    assert {sample(logits, top_k=2, rng=rng) for _ in range(500)} == {0, 1}
    assert {sample(logits, top_p=0.5, rng=rng) for _ in range(500)} == {0}


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(logits=[]), ValueError, "vocab_size"),
        (dict(logits=[1.0, np.nan]), ValueError, "NaN"),
        (dict(logits=[1.0, np.inf]), ValueError, r"\+inf"),
        (dict(logits=[-np.inf, -np.inf]), ValueError, "-inf"),
        (dict(logits=["a", "b"]), TypeError, "logits"),
        (dict(logits=[1.0, 2.0], temperature=-0.1), ValueError, "temperature"),
        (dict(logits=[1.0, 2.0], temperature=np.nan), ValueError, "temperature"),
        (dict(logits=[1.0, 2.0], top_k=-2), ValueError, "top_k"),
        (dict(logits=[1.0, 2.0], top_k=1.5), TypeError, "top_k"),
        (dict(logits=[1.0, 2.0], top_p=0.0), ValueError, "top_p"),
        (dict(logits=[1.0, 2.0], top_p=1.5), ValueError, "top_p"),
        (dict(logits=[1.0, 2.0], logit_bias={2: 1.0}), ValueError, "outside the vocabulary"),
        (dict(logits=[1.0, 2.0], logit_bias={-1: 1.0}), ValueError, "outside the vocabulary"),
        (dict(logits=[1.0, 2.0], logit_bias={"a": 1.0}), TypeError, "token ids"),
        (dict(logits=[1.0, 2.0], logit_bias={0: np.nan}), ValueError, "logit_bias"),
        (dict(logits=[1.0, 2.0], logit_bias={0: -np.inf, 1: -np.inf}), ValueError, "bans every"),
        (dict(logits=[1.0, 2.0], logit_bias=[(0, 1.0)]), TypeError, "dict"),
        (dict(logits=[1e308, 1.0], logit_bias={0: 1e308}), ValueError, "overflow"),
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        probs(**kwargs)


def test_sample_requires_a_generator():
    with pytest.raises(TypeError, match="rng"):
        sample([1.0, 2.0], rng=0)


# ---------------------------------------------------------------------------- properties

logit_values = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False), st.just(-np.inf), st.floats(-1e300, 1e300, allow_nan=False)
)


@settings(max_examples=200, deadline=None)
@given(
    logits=st.lists(logit_values, min_size=1, max_size=30).filter(lambda xs: any(np.isfinite(xs))),
    temperature=st.one_of(st.just(0.0), st.floats(1e-6, 100.0)),
    top_k=st.one_of(st.none(), st.integers(-1, 35)),
    top_p=st.floats(1e-6, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_probs_is_a_distribution_and_order_free(logits, temperature, top_k, top_p, seed):
    p = probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
    assert p.dtype == np.float64 and p.shape == (len(logits),)
    assert np.all(p >= 0) and abs(p.sum() - 1.0) < 1e-12
    assert np.all(p[np.isneginf(logits)] == 0)
    # permuting the logits permutes the distribution (ties are treated symmetrically), except
    # greedy, which breaks a tie by position
    if temperature > 0:
        perm = np.random.default_rng(seed).permutation(len(logits))
        p_perm = probs(np.asarray(logits)[perm], temperature=temperature, top_k=top_k, top_p=top_p)
        np.testing.assert_allclose(p_perm, p[perm], rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------------------- the calculator


def test_sampling_calculator_shows_library_values():
    import json

    from chapter2 import calculators

    raw = {"logits": "2.0, 1.0, 0.5, 0.1, -1", "temperature": "0.7", "top_k": "3", "top_p": "0.9", "bias": "3:+2",
           "seed": "5", "n_draws": "10"}
    out = calculators.compute("llm_sampling", raw)
    logits = np.array([2.0, 1.0, 0.5, 0.1, -1.0])
    kw = dict(temperature=0.7, top_k=3, top_p=0.9, logit_bias={3: 2.0})
    expected = probs(logits, **kw)
    assert [label for label, _ in out["probs"]] == [f"tok {i}" for i in range(5)]
    np.testing.assert_array_equal([value for _, value in out["probs"]], expected)
    assert out["kept"] == f"{np.count_nonzero(expected)} of 5"
    draws = [int(t) for t in out["draws"].split(", ")]
    assert len(draws) == 10 and all(expected[t] > 0 for t in draws)
    assert draws == list(sample(np.tile(logits, (10, 1)), rng=np.random.default_rng(5), **kw))
    for field, bad in [("logits", "1, two"), ("logits", "1, nan"), ("logits", ""), ("bias", "3=2"), ("bias", "7:1"),
                       ("bias", "0:-inf 1:-inf 2:-inf 3:-inf 4:-inf")]:
        result = json.loads(calculators.compute_json("llm_sampling", json.dumps({field: bad})))
        assert result["ok"] is False and result["field"] == field, (field, bad, result)
