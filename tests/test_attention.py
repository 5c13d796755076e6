"""chapter2.attention against a float64 oracle, torch SDPA and first principles (the KV cache: test_kv_cache.py)."""

import numpy as np
import pytest
import torch  # the oracle: a missing torch is a failure, not a skip
from hypothesis import given, settings
from _arrays import qkv
from hypothesis import strategies as st

from chapter2.attention import (
    TILE_FULL, TILE_MASKED, TILE_SKIPPED, attended_pairs, attention, attention_mask, attention_reference,
    attention_weights, flash_attention, flash_schedule, position_mask,
)

F = torch.nn.functional


def torch_mask(n_q, n_k, *, causal, window):
    """Bottom-right aligned mask built with torch.tril, independent of chapter2.attention_mask."""
    ones = torch.ones(n_q, n_k, dtype=torch.bool)
    if not causal and window is None:
        return None
    offset = n_k - n_q  # query i is position i + offset
    mask = torch.tril(ones, diagonal=offset)  # j <= i + offset
    if window is not None:
        mask &= ~torch.tril(ones, diagonal=offset - window)  # and j > i + offset - window
    return mask


def sdpa(q, k, v, *, causal=False, window=None):
    """torch SDPA in float32; is_causal only for the square causal case (it aligns top-left)."""
    n_q, n_k = q.shape[2], k.shape[2]
    tq, tk, tv = (torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)) for x in (q, k, v))
    gqa = q.shape[1] != k.shape[1]
    if causal and window is None and n_q == n_k:
        return F.scaled_dot_product_attention(tq, tk, tv, is_causal=True, enable_gqa=gqa).numpy()
    mask = torch_mask(n_q, n_k, causal=causal, window=window)
    return F.scaled_dot_product_attention(tq, tk, tv, attn_mask=mask, enable_gqa=gqa).numpy()


# ---------------------------------------------------------------------------- the mask


def test_causal_mask_is_lower_triangular():
    np.testing.assert_array_equal(attention_mask(4, causal=True), np.tril(np.ones((4, 4), dtype=bool)))
    assert attention_mask(3, 5).all()


def test_causal_mask_aligns_queries_with_the_last_keys():
    # 2 queries over 5 keys are positions 3 and 4
    expected = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(attention_mask(2, 5, causal=True), expected)
    np.testing.assert_array_equal(attention_mask(1, 7, causal=True), np.ones((1, 7), dtype=bool))


def test_sliding_window_sees_w_keys_itself_included():
    # w = 2: query i sees keys i-1 and i (the HF convention i - w < j <= i)
    expected = np.array([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 1, 1]], dtype=bool)
    np.testing.assert_array_equal(attention_mask(5, window=2), expected)
    np.testing.assert_array_equal(attention_mask(5, window=5), attention_mask(5, causal=True))
    np.testing.assert_array_equal(attention_mask(5, window=1), np.eye(5, dtype=bool))


def test_attended_pairs_closed_form():
    for n_q in range(1, 9):
        for n_k in range(n_q, 12):
            assert attended_pairs(n_q, n_k) == n_q * n_k
            assert attended_pairs(n_q, n_k, causal=True) == attention_mask(n_q, n_k, causal=True).sum()
            for w in range(1, 14):
                assert attended_pairs(n_q, n_k, window=w) == attention_mask(n_q, n_k, window=w).sum()
    n, w = 10**6, 4096
    assert attended_pairs(n, causal=True) == n * (n + 1) // 2
    assert attended_pairs(n, window=w) == n * w - w * (w - 1) // 2  # the first w-1 rows see fewer keys


# ---------------------------------------------------------------------------- vs the float64 oracle


@pytest.mark.parametrize("causal, window", [(False, None), (True, None), (True, 7), (True, 1)])
@pytest.mark.parametrize("h_q, h_kv", [(4, 4), (4, 2), (6, 1)])
@pytest.mark.parametrize("n_q, n_k", [(1, 1), (19, 19), (5, 33), (1, 20)])
def test_attention_and_flash_equal_oracle_float64(causal, window, h_q, h_kv, n_q, n_k):
    q, k, v = qkv(2, h_q, h_kv, n_q, n_k, 12, d_v=9, seed=n_q * 100 + n_k)
    ref = attention_reference(q, k, v, causal=causal, window=window)
    np.testing.assert_allclose(attention(q, k, v, causal=causal, window=window), ref, rtol=0, atol=1e-13)
    for bq, bk in [(4, 8), (64, 64), (3, 5)]:
        out = flash_attention(q, k, v, causal=causal, window=window, block_q=bq, block_k=bk)
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13)


def test_weights_rows_sum_to_one_and_respect_the_mask():
    q, k, _ = qkv(1, 2, 1, 6, 9, 8)
    w = attention_weights(q, k, window=3)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-14)
    assert np.all(w[..., ~attention_mask(6, 9, window=3)] == 0)


def test_custom_scale():
    q, k, v = qkv(1, 2, 2, 5, 5, 4)
    np.testing.assert_allclose(attention(q, k, v, scale=0.3), attention_reference(q, k, v, scale=0.3), atol=1e-14)
    # scale 0: every visible key gets the same weight, so the output is the mean of the visible values
    out = flash_attention(q, k, v, causal=True, scale=0.0, block_q=2, block_k=2)
    np.testing.assert_allclose(out, np.cumsum(v, axis=2) / np.arange(1, 6)[:, None], atol=1e-14)


def test_flash_lse_is_the_log_normalizer():
    q, k, v = qkv(1, 2, 1, 7, 11, 8)
    _, lse = flash_attention(q, k, v, window=4, block_q=3, block_k=2, return_lse=True)
    scores = np.einsum("bhqd,bhkd->bhqk", q, np.repeat(k, 2, axis=1)) / np.sqrt(8)
    scores = np.where(attention_mask(7, 11, window=4), scores, -np.inf)
    expected = torch.logsumexp(torch.from_numpy(scores), dim=-1).numpy()
    np.testing.assert_allclose(lse, expected, atol=1e-13)


# ---------------------------------------------------------------------------- vs torch SDPA (fp32)


def max_err(x, ref):
    return float(np.abs(np.asarray(x, dtype=np.float64) - ref).max())


@pytest.mark.parametrize(
    "b, h_q, h_kv, n_q, n_k, d, causal, window",
    [
        (2, 3, 3, 1, 1, 40, False, None),
        (2, 4, 2, 97, 97, 59, True, None),
        (1, 4, 4, 97, 97, 40, False, None),
        (1, 4, 1, 97, 97, 59, True, 16),
        (1, 2, 2, 33, 97, 40, True, None),  # chunked prefill: queries are the last 33 positions
        (1, 6, 2, 1, 97, 59, True, 30),  # one decode query against a cache
        (1, 2, 1, 1025, 1025, 40, True, None),
        (1, 2, 2, 1025, 1025, 59, True, 256),
    ],
)
def test_flash_fp32_matches_sdpa(b, h_q, h_kv, n_q, n_k, d, causal, window):
    q, k, v = qkv(b, h_q, h_kv, n_q, n_k, d, seed=n_q + d, dtype=np.float32)
    ref = attention_reference(q, k, v, causal=causal, window=window)  # float64 oracle
    torch_out = sdpa(q, k, v, causal=causal, window=window)
    flash = flash_attention(q, k, v, causal=causal, window=window, block_q=64, block_k=128)
    plain = attention(q, k, v, causal=causal, window=window)
    assert flash.dtype == np.float32 and plain.dtype == np.float32
    # FlashAttention's test rule: at most 2x the error of the same-precision baseline (+ a few ulps of slack)
    baseline = max_err(torch_out, ref)
    assert max_err(flash, ref) <= 2 * baseline + 1e-6
    assert max_err(plain, ref) <= 2 * baseline + 1e-6
    np.testing.assert_allclose(flash, torch_out, atol=2e-5, rtol=0)


def test_gqa_equals_repeat_interleave_in_torch():
    q, k, v = qkv(1, 8, 2, 20, 20, 16, seed=7, dtype=np.float32)
    rep = lambda x: torch.from_numpy(x).repeat_interleave(4, dim=1)  # noqa: E731 (query head h reads K/V head h // 4)
    expected = F.scaled_dot_product_attention(torch.from_numpy(q), rep(k), rep(v), is_causal=True).numpy()
    np.testing.assert_allclose(flash_attention(q, k, v, causal=True, block_q=8, block_k=8), expected, atol=2e-6)
    np.testing.assert_allclose(attention(q, k, v, causal=True), expected, atol=2e-6)


def test_torch_is_causal_aligns_top_left_so_we_pass_an_explicit_mask():
    q, k, v = qkv(1, 1, 1, 2, 5, 8, dtype=np.float32)
    tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
    top_left = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True).numpy()
    # torch: query 0 sees only key 0; ours: query 0 is position 3 and sees keys 0..3
    np.testing.assert_allclose(top_left[0, 0, 0], v[0, 0, 0], atol=1e-6)
    assert max_err(attention(q, k, v, causal=True), top_left) > 1e-2
    np.testing.assert_allclose(attention(q, k, v, causal=True), sdpa(q, k, v, causal=True), atol=2e-6)


def test_float16_inputs_accumulate_in_float32():
    q, k, v = qkv(1, 2, 2, 40, 40, 32, dtype=np.float16)
    out = flash_attention(q, k, v, causal=True, block_q=16, block_k=16)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, attention_reference(q, k, v, causal=True), atol=1e-5)


# ---------------------------------------------------------------------------- the tile schedule


def test_causal_schedule_visits_the_lower_triangle_of_tiles():
    n_blocks = 8
    tiles = flash_schedule(64 * n_blocks, causal=True, block_q=64, block_k=64)
    expected = np.where(np.eye(n_blocks, dtype=bool), TILE_MASKED, np.where(np.tri(n_blocks, dtype=bool), TILE_FULL, TILE_SKIPPED))
    np.testing.assert_array_equal(tiles, expected)
    assert (tiles != TILE_SKIPPED).sum() == n_blocks * (n_blocks + 1) // 2
    assert (flash_schedule(100, 300, block_q=64, block_k=64) == TILE_FULL).all()


def test_window_schedule_is_a_band():
    tiles = flash_schedule(1024, window=128, block_q=128, block_k=128)
    visited = tiles != TILE_SKIPPED
    # query block i (rows 128 i .. 128 i + 127) needs keys from 128 i - 127: blocks i - 1 and i
    np.testing.assert_array_equal(visited, np.eye(8, dtype=bool) | np.eye(8, k=-1, dtype=bool))
    assert (tiles[visited] == TILE_MASKED).all()  # both tiles of the band cut through the window's edges


def test_flash_trace_is_the_schedule():
    q, k, v = qkv(1, 2, 1, 45, 70, 8)
    for kw in [dict(), dict(causal=True), dict(window=9)]:
        trace = []
        flash_attention(q, k, v, block_q=8, block_k=16, trace=trace, **kw)
        traced = np.full_like(flash_schedule(45, 70, block_q=8, block_k=16, **kw), TILE_SKIPPED)
        for i, j, kind in trace:
            traced[i, j] = kind
        np.testing.assert_array_equal(traced, flash_schedule(45, 70, block_q=8, block_k=16, **kw))
        assert len(trace) == len(set((i, j) for i, j, _ in trace))


# ---------------------------------------------------------------------------- properties


@settings(max_examples=60, deadline=None)
@given(
    b=st.integers(1, 2), h_kv=st.integers(1, 3), group=st.integers(1, 3), n_q=st.integers(1, 30),
    extra=st.integers(0, 20), d=st.integers(1, 9), mode=st.sampled_from(["dense", "causal", "window"]),
    window=st.integers(1, 60), block_q=st.integers(1, 33), block_k=st.integers(1, 33), seed=st.integers(0, 1000),
)
def test_flash_equals_oracle_on_random_shapes(b, h_kv, group, n_q, extra, d, mode, window, block_q, block_k, seed):
    q, k, v = qkv(b, h_kv * group, h_kv, n_q, n_q + extra, d, seed=seed)
    kw = {"dense": {}, "causal": {"causal": True}, "window": {"window": window}}[mode]
    ref = attention_reference(q, k, v, **kw)
    np.testing.assert_allclose(flash_attention(q, k, v, block_q=block_q, block_k=block_k, **kw), ref, atol=1e-12)


# ---------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "shapes, kwargs, exc, match",
    [
        (((1, 3, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), {}, ValueError, "multiple of key/value heads"),
        (((1, 2, 4, 8), (1, 2, 4, 6), (1, 2, 4, 8)), {}, ValueError, "head dimension"),
        (((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 5, 8)), {}, ValueError, "same heads and length"),
        (((1, 2, 4, 8), (2, 2, 4, 8), (2, 2, 4, 8)), {}, ValueError, "batch"),
        (((2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), {}, ValueError, "q must have 4 dimensions"),
        (((1, 2, 6, 8), (1, 2, 4, 8), (1, 2, 4, 8)), {"causal": True}, ValueError, "N_q=6 > N_k=4"),
        (((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), {"window": 0}, ValueError, "window"),
        (((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), {"causal": "yes"}, TypeError, "causal"),
        (((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8)), {"scale": np.nan}, TypeError, "scale"),
    ],
)
def test_bad_input_raises(shapes, kwargs, exc, match):
    arrays = [np.zeros(s) for s in shapes]
    for fn in (attention, attention_reference, flash_attention):
        with pytest.raises(exc, match=match):
            fn(*arrays, **kwargs)


def test_bad_blocks_and_lengths_raise():
    q, k, v = qkv(1, 1, 1, 4, 4, 2)
    with pytest.raises(ValueError, match="block_q"):
        flash_attention(q, k, v, block_q=0)
    with pytest.raises(TypeError, match="block_k"):
        flash_schedule(4, block_k=2.5)
    with pytest.raises(ValueError, match="n_q"):
        attention_mask(0)
    with pytest.raises(TypeError, match="trace"):
        flash_attention(q, k, v, trace=())


# ---------------------------------------------------------------------------- explicit positions


def test_position_mask_window_convention():
    # window w: query i sees keys j with i - w < j <= i (w keys, itself included)
    mask = position_mask(np.arange(6), np.arange(6), window=3)
    assert mask[5].tolist() == [False, False, False, True, True, True]
    assert mask[1].tolist() == [True, True, False, False, False, False]
    assert position_mask(np.arange(4), np.arange(4)).sum() == 10  # plain causal: 1 + 2 + 3 + 4
    for n_q, n_k, window in [(5, 9, None), (5, 9, 3), (7, 7, 2)]:  # same as the index mask, bottom-right aligned
        expect = attention_mask(n_q, n_k, causal=True, window=window)
        np.testing.assert_array_equal(position_mask(np.arange(n_k - n_q, n_k), np.arange(n_k), window=window), expect)


def test_explicit_positions_make_key_order_irrelevant():
    """Keys stored out of order (as a rolling cache holds them) give the same output once their positions are given."""
    q, k, v = qkv(2, 4, 2, 3, 9, 8, seed=5)
    expect = attention_reference(q, k, v, causal=True, window=4)
    order = np.random.default_rng(0).permutation(9)
    out = attention(q, k[:, :, order], v[:, :, order], window=4, q_positions=np.arange(6, 9), k_positions=order)
    np.testing.assert_allclose(out, expect, atol=1e-12)
    with pytest.raises(TypeError, match="together"):
        attention(q, k, v, q_positions=np.arange(6, 9))
    with pytest.raises(ValueError, match="N_k = 9"):
        attention(q, k, v, causal=True, q_positions=np.arange(6, 9), k_positions=np.arange(8))
    with pytest.raises(ValueError, match="at least one key"):
        attention(q, k, v, causal=True, q_positions=np.arange(3), k_positions=np.arange(5, 14))
    with pytest.raises(TypeError, match="k_positions"):
        position_mask(np.arange(3), np.linspace(0, 1, 3))


def test_figure_alt_text_facts():
    assert attended_pairs(8, causal=True) == 36  # causal_mask: "36 of the 64 pairs"
    assert attended_pairs(12, causal=True) == 78 and attended_pairs(12, window=4) == 42  # sliding_window_mask
    tiles = flash_schedule(1024, causal=True, block_q=128, block_k=128)  # flash_schedule, left panel
    assert (tiles == TILE_SKIPPED).sum() == 28 and (tiles == TILE_MASKED).sum() == 8
    band = flash_schedule(2048, window=256, block_q=128, block_k=128) != TILE_SKIPPED  # right panel
    assert set(band.sum(axis=1)) == {1, 2, 3}  # "a band two or three wide" (one at the first block)
