"""chapter2.context: input + max_tokens must fit in the context window, reasoning counted inside max_tokens
(OpenAI, Anthropic, vLLM) unless a reasoning budget comes on top of it."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chapter2 import calculators
from chapter2.context import INSIDE, ON_TOP, context_budget
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


def test_reasoning_counts_inside_max_tokens_by_default():
    """The common convention: reasoning tokens are generated tokens, so only input + max_tokens must fit.

    The old code added the reasoning to max_tokens and rejected this request (6,000 + 8,000 + 10,000 > 16,384).
    """
    b = context_budget(16384, 6000, 10000, reasoning_tokens=8000)
    assert b.convention == INSIDE
    assert (b.fits, b.total, b.remaining, b.max_output, b.answer_tokens) == (True, 16000, 384, 10384, 2000)
    assert "8,000 reasoning tokens count inside max_tokens, leaving 2,000 for the answer" in b.explanation


def test_reasoning_budget_on_top_of_max_tokens():
    b = context_budget(32768, 6000, 4096, reasoning_tokens=8000, convention=ON_TOP)
    assert (b.fits, b.total, b.remaining, b.max_output, b.answer_tokens) == (True, 18096, 14672, 18768, 4096)
    assert "8,000 reasoning" in b.explanation
    tight = context_budget(16384, 6000, 4096, reasoning_tokens=8000, convention=ON_TOP)  # 18,096 > 16,384
    assert (tight.fits, tight.remaining, tight.max_output) == (False, -1712, 2384)
    assert "or the reasoning budget" in tight.explanation


def test_same_request_differs_between_the_conventions():
    """Qwen3-8B's window (config.json max_position_embeddings 40,960), 30,000 input, max_tokens 8,192, 4,000 reasoning."""
    window = load_config("Qwen3-8B").max_position_embeddings
    inside = context_budget(window, 30000, 8192, reasoning_tokens=4000)
    on_top = context_budget(window, 30000, 8192, reasoning_tokens=4000, convention=ON_TOP)
    assert (inside.fits, inside.total, inside.answer_tokens) == (True, 38192, 4192)
    assert (on_top.fits, on_top.total, on_top.remaining) == (False, 42192, -1232)


def test_a_reasoning_budget_that_fills_max_tokens_leaves_no_answer():
    """Anthropic rejects budget_tokens >= max_tokens; here the request fits the window but gets a warning."""
    b = context_budget(40960, 30000, 4000, reasoning_tokens=4000)
    assert (b.fits, b.answer_tokens) == (True, 0)
    assert "leave no room for the answer; raise max_tokens above the budget (up to 10,960 fits)" in b.explanation
    squeezed = context_budget(40960, 39000, None, reasoning_tokens=4000)
    assert (squeezed.max_tokens, squeezed.answer_tokens) == (1960, 0)
    assert "lower the budget below 1,960" in squeezed.explanation
    over = context_budget(40960, 39000, 8192, reasoning_tokens=4000)
    assert not over.fits and "at most 1,960" in over.explanation and "lower the budget too" in over.explanation


def test_input_alone_fills_the_window():
    b = context_budget(4096, 4096, 1)
    assert (b.fits, b.max_output) == (False, 0)
    assert "the input alone (4,096 tokens) fills the 4,096-token window and leaves no room to generate" in b.explanation
    none = context_budget(4096, 4000, None, reasoning_tokens=96, convention=ON_TOP)
    assert (none.fits, none.max_tokens, none.max_output) == (False, 0, 0)
    assert "input and reasoning budget alone (4,096 tokens) fill" in none.explanation
    inside = context_budget(4096, 4000, None, reasoning_tokens=96)  # the budget comes out of the 96 left
    assert (inside.fits, inside.max_tokens, inside.answer_tokens) == (True, 96, 0)


def test_max_tokens_none_takes_the_rest_of_the_window():
    b = context_budget(load_config("Qwen3-8B").max_position_embeddings, 1000, None, reasoning_tokens=500)
    assert b.context_window == 40960  # "max_position_embeddings": 40960 in Qwen/Qwen3-8B config.json
    assert (b.fits, b.max_tokens, b.remaining, b.answer_tokens) == (True, 40960 - 1000, 0, 40960 - 1500)
    top = context_budget(40960, 1000, None, reasoning_tokens=500, convention=ON_TOP)
    assert (top.fits, top.max_tokens, top.remaining) == (True, 40960 - 1500, 0)


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**6), st.integers(0, 10**6))
def test_fits_iff_the_sum_fits(window, n_in, max_tokens, n_reason):
    b = context_budget(window, n_in, max_tokens, reasoning_tokens=n_reason)
    assert b.fits == (n_in + max_tokens <= window)
    assert b.remaining == window - n_in - max_tokens
    assert b.answer_tokens == max(max_tokens - n_reason, 0)
    assert context_budget(window, n_in, b.max_output, n_reason).fits if b.max_output else True
    t = context_budget(window, n_in, max_tokens, reasoning_tokens=n_reason, convention=ON_TOP)
    assert t.fits == (n_in + n_reason + max_tokens <= window)
    assert t.remaining == window - n_in - n_reason - max_tokens
    assert t.answer_tokens == max_tokens
    assert context_budget(window, n_in, t.max_output, n_reason, convention=ON_TOP).fits if t.max_output else True
    assert t.total - b.total == n_reason  # the two conventions differ by exactly the reasoning budget


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(context_window=0, input_tokens=1, max_tokens=1), ValueError, "context_window must be >= 1"),
    (dict(context_window=10, input_tokens=0, max_tokens=1), ValueError, "input_tokens must be >= 1"),
    (dict(context_window=10, input_tokens=1, max_tokens=0), ValueError, "max_tokens must be >= 1"),
    (dict(context_window=10, input_tokens=1, max_tokens=1, reasoning_tokens=-1), ValueError, "reasoning_tokens must be >= 0"),
    (dict(context_window=10.5, input_tokens=1, max_tokens=1), TypeError, "context_window must be an integer"),
    (dict(context_window=10, input_tokens="5", max_tokens=1), TypeError, "input_tokens must be an integer"),
    (dict(context_window=10, input_tokens=1, max_tokens=True), TypeError, "max_tokens must be an integer"),
    (dict(context_window=10, input_tokens=1, max_tokens=1, convention="separate"), ValueError, "convention must be one of"),
    (dict(context_window=10, input_tokens=1, max_tokens=1, convention=1), TypeError, "convention must be one of"),
])
def test_bad_inputs(kwargs, error, match):
    with pytest.raises(error, match=match):
        context_budget(**kwargs)


def test_calculator_shows_the_library_values():
    raw = {"context_window": "32768", "input_tokens": "6000", "reasoning_tokens": "8000", "max_tokens": "4096"}
    out = calculators.compute("context_budget", {**raw, "convention": "on_top"})
    b = context_budget(32768, 6000, 4096, reasoning_tokens=8000, convention=ON_TOP)
    assert out["verdict"] == b.explanation and out["remaining"] == "14,672" and out["max_output"] == "18,768"
    assert out["answer"] == "4,096"
    assert out["shares"] == [["input", 6000 / 32768], ["reasoning", 8000 / 32768], ["answer", 4096 / 32768],
                             ["left free", 14672 / 32768]]
    inside = calculators.compute("context_budget", {**raw, "max_tokens": "20000"})  # the default convention
    assert inside["verdict"].startswith("Fits: 6,000 input + 20,000 max_tokens = 26,000 of 32,768")
    assert inside["answer"] == "12,000"
    assert inside["shares"] == [["input", 6000 / 32768], ["reasoning", 8000 / 32768], ["answer", 12000 / 32768],
                                ["left free", 6768 / 32768]]
    no_answer = calculators.compute("context_budget", raw)  # 8,000 reasoning inside a 4,096 cap
    assert no_answer["answer"].startswith("0") and no_answer["shares"][1] == ["reasoning", 4096 / 32768]
    over = calculators.compute("context_budget", {"context_window": "8192", "input_tokens": "8192"})
    assert over["remaining"].startswith("none: over by") and over["max_output"] == "0 (no room to generate)"
    bad = json.loads(calculators.compute_json("context_budget", json.dumps({"max_tokens": "0"})))
    assert bad["ok"] is False and bad["field"] == "max_tokens"
    bad = json.loads(calculators.compute_json("context_budget", json.dumps({"convention": "both"})))
    assert bad["ok"] is False and bad["field"] == "convention"


def test_calculator_defaults_are_the_pages_example():
    """Defaults: Qwen3-8B's window and the page's request, which fits inside and not on top."""
    assert calculators.compute("context_budget")["verdict"].startswith("Fits: 30,000 input + 8,192 max_tokens")
    assert calculators.compute("context_budget", {"convention": "on_top"})["verdict"].startswith("Does not fit")
