"""chapter2.context: input + reasoning + max_tokens must fit in the context window."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chapter2 import calculators
from chapter2.context import context_budget
from chapter2.models import load_config


def test_exactly_full_window_fits():
    b = context_budget(8192, 4096, 4096)
    assert (b.fits, b.total, b.remaining, b.max_output) == (True, 8192, 0, 4096)
    assert b.check() is b


def test_one_token_over_does_not_fit():
    b = context_budget(8192, 4097, 4096)
    assert (b.fits, b.total, b.remaining, b.max_output) == (False, 8193, -1, 4095)
    assert "1 more than the 8,192-token window" in b.explanation and "at most 4,095" in b.explanation
    with pytest.raises(ValueError, match="Does not fit"):
        b.check()


def test_reasoning_counts_against_the_same_window():
    # 6,000 + 8,000 + 4,096 = 18,096 of 32,768
    b = context_budget(32768, 6000, 4096, reasoning_tokens=8000)
    assert (b.fits, b.total, b.remaining, b.max_output) == (True, 18096, 14672, 18768)
    assert "8,000 reasoning" in b.explanation
    tight = context_budget(16384, 6000, 4096, reasoning_tokens=8000)  # 18,096 > 16,384
    assert (tight.fits, tight.remaining, tight.max_output) == (False, -1712, 2384)


def test_input_alone_fills_the_window():
    b = context_budget(4096, 4096, 1)
    assert (b.fits, b.max_output) == (False, 0)
    assert "no room for output" in b.explanation
    none = context_budget(4096, 4000, None, reasoning_tokens=96)
    assert (none.fits, none.max_tokens, none.max_output) == (False, 0, 0)


def test_max_tokens_none_takes_the_rest_of_the_window():
    b = context_budget(load_config("Qwen3-8B").max_position_embeddings, 1000, None, reasoning_tokens=500)
    assert b.context_window == 40960  # "max_position_embeddings": 40960 in Qwen/Qwen3-8B config.json
    assert (b.fits, b.max_tokens, b.remaining) == (True, 40960 - 1500, 0)


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**6), st.integers(0, 10**6))
def test_fits_iff_the_sum_fits(window, n_in, max_tokens, n_reason):
    b = context_budget(window, n_in, max_tokens, reasoning_tokens=n_reason)
    assert b.fits == (n_in + n_reason + max_tokens <= window)
    assert b.remaining == window - n_in - n_reason - max_tokens
    assert context_budget(window, n_in, b.max_output, n_reason).fits if b.max_output else True


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(context_window=0, input_tokens=1, max_tokens=1), ValueError, "context_window must be >= 1"),
    (dict(context_window=10, input_tokens=0, max_tokens=1), ValueError, "input_tokens must be >= 1"),
    (dict(context_window=10, input_tokens=1, max_tokens=0), ValueError, "max_tokens must be >= 1"),
    (dict(context_window=10, input_tokens=1, max_tokens=1, reasoning_tokens=-1), ValueError, "reasoning_tokens must be >= 0"),
    (dict(context_window=10.5, input_tokens=1, max_tokens=1), TypeError, "context_window must be an integer"),
    (dict(context_window=10, input_tokens="5", max_tokens=1), TypeError, "input_tokens must be an integer"),
    (dict(context_window=10, input_tokens=1, max_tokens=True), TypeError, "max_tokens must be an integer"),
])
def test_bad_inputs(kwargs, error, match):
    with pytest.raises(error, match=match):
        context_budget(**kwargs)


def test_calculator_shows_the_library_values():
    out = calculators.compute("context_budget", {"context_window": "32768", "input_tokens": "6000",
                                                 "reasoning_tokens": "8000", "max_tokens": "4096"})
    b = context_budget(32768, 6000, 4096, reasoning_tokens=8000)
    assert out["verdict"] == b.explanation and out["remaining"] == "14,672" and out["max_output"] == "18,768"
    assert out["shares"] == [["input", 6000 / 32768], ["reasoning", 8000 / 32768], ["max_tokens", 4096 / 32768],
                             ["left free", 14672 / 32768]]
    over = calculators.compute("context_budget", {"context_window": "8192", "input_tokens": "8192"})
    assert over["remaining"].startswith("none: over by") and over["max_output"] == "0 (no room for output)"
    bad = json.loads(calculators.compute_json("context_budget", json.dumps({"max_tokens": "0"})))
    assert bad["ok"] is False and bad["field"] == "max_tokens"
