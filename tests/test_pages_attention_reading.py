"""Section 2.5 read line by line (issue 24): claims about rounding, sizes and Mistral 7B's context, checked on the
page and against what the code and the model's sources say."""

from __future__ import annotations


from pathlib import Path

import numpy as np

from chapter2.attention import attention, flash_attention

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "attention.md").read_text()
FLAT = " ".join(PAGE.split())


def test_flash_attentions_rounding_errors_are_of_the_same_size_not_the_same_errors():
    """Tiled and standard attention in float32 sum in different orders: each differs from float64 by about the
    same amount, yet they differ from each other, so the errors are of the same size, not the same errors."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 256, 64)).astype(np.float32) for _ in range(3))
    exact = attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), causal=True)
    standard = attention(q, k, v, causal=True)
    tiled = flash_attention(q, k, v, causal=True, block_q=32, block_k=32)
    err_standard, err_tiled = np.abs(standard - exact).max(), np.abs(tiled - exact).max()
    assert 0 < err_standard < 1e-5 and 0 < err_tiled < 1e-5
    assert 0.1 < err_tiled / err_standard < 10  # the same size ...
    assert np.abs(tiled - standard).max() > 0  # ... not the same errors
    assert "the rounding errors are those of standard attention" not in FLAT
    assert "rounding errors of the same size as standard attention's, not the same errors" in FLAT


def test_one_size_for_the_4096_token_score_matrix():
    """The 4,096 x 4,096 FP16 score matrix is 33,554,432 bytes: one unit for it on the page (decimal MB, the site's
    convention), not 32 MiB in one place and 33.6 MB in another."""
    assert 4096 * 4096 * 2 == 33_554_432
    assert "attention.one_head_scores_binary" not in PAGE


def test_mistral_7b_v01_context_is_what_its_config_accepts_not_what_it_was_trained_on():
    """Mistral 7B v0.1: config max_position_embeddings 32,768; trained with an 8,192-token context (paper Table 1)."""
    assert "Mistral 7B v0.1's longest context" not in FLAT
    assert "trained at" in FLAT[FLAT.index("## Sliding window attention"):]


def test_mistral_7b_v01s_32768_is_called_a_position_limit_never_the_models_context():
    """issue 32: Mistral 7B v0.1's config.json allows 32,768 positions (max_position_embeddings), but the model was
    trained at 8k (paper Table 1): wherever 2.5 names the 32,768, it says position limit, not the model's limit."""
    from chapter2.pages import attention as att
    from chapter2.pages import llm_inference as li

    assert att.window_long_prompt().value == li.mistral_7b_config_context().value == 32768
    assert li.mistral_7b_trained_context().value == 8192
    assert "the model's limit" not in FLAT and "longest context" not in (att.window_long_prompt.__doc__ or "")
    names = ("{{ fact: attention.window_long_prompt }}", "{{ fact: llm_inference.mistral_7b_config_context }}")
    spots = [i for name in names for i in range(len(FLAT)) if FLAT.startswith(name, i)]
    assert len(spots) >= 4
    for i in spots:  # each mention sits in a sentence that says what the number is
        sentence = FLAT[FLAT.rfind(". ", 0, i) + 2: FLAT.find(". ", i)]
        assert "position" in sentence or "positions" in sentence, sentence
    assert "{{ fact: llm_inference.mistral_7b_trained_context }}" in FLAT[FLAT.index("The saving at growing prompt"):]
