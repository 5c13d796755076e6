"""chapter2.kv_cache: the one numpy KV cache (preallocated or growing, batched, rolling for sliding-window
layers) and one decode step, against full attention, the float64 oracle and torch SDPA."""

import numpy as np
import pytest
from _oracles import require
from _arrays import qkv

from chapter2.attention import attention, attention_reference
from chapter2.kv_cache import KVCache, decode_attention

torch = require("torch")


def sdpa_causal(q, k, v):
    """torch SDPA in float32, square causal (is_causal aligns top-left, which equals ours when N_q == N_k)."""
    tq, tk, tv = (torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)) for x in (q, k, v))
    return torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True,
                                                            enable_gqa=q.shape[1] != k.shape[1]).numpy()


@pytest.mark.parametrize("h_q, h_kv, window", [(4, 4, None), (6, 2, None), (4, 1, 5)])
def test_decoding_token_by_token_equals_full_causal_attention(h_q, h_kv, window):
    n, d, d_v = 23, 16, 12
    q, k, v = qkv(2, h_q, h_kv, n, n, d, d_v=d_v, seed=h_q)
    full = attention_reference(q, k, v, causal=True, window=window)
    cache = KVCache(n_layers=2, batch_size=2, n_kv_heads=h_kv, head_dim=d, v_head_dim=d_v, max_seq_len=32, dtype=np.float64)
    outs = []
    for t in range(n):
        k_all, v_all = cache.append(1, k[:, :, t : t + 1], v[:, :, t : t + 1])
        assert k_all.shape == (2, h_kv, t + 1, d) and np.shares_memory(k_all, cache.k[1])
        outs.append(decode_attention(q[:, :, t : t + 1], k_all, v_all, window=window))
    np.testing.assert_allclose(np.concatenate(outs, axis=2), full, atol=1e-13)
    assert cache.lengths == [0, n]


def test_prefill_then_decode_equals_full_attention():
    n_prompt, n, d = 10, 16, 8
    q, k, v = qkv(1, 4, 2, n, n, d, seed=3, dtype=np.float32)
    cache = KVCache(1, 1, 2, d, max_seq_len=n)
    k_all, v_all = cache.append(0, k[:, :, :n_prompt], v[:, :, :n_prompt])
    outs = [attention(q[:, :, :n_prompt], k_all, v_all, causal=True)]  # prefill
    for t in range(n_prompt, n):  # decode
        k_all, v_all = cache.append(0, k[:, :, t : t + 1], v[:, :, t : t + 1])
        outs.append(decode_attention(q[:, :, t : t + 1], k_all, v_all))
    np.testing.assert_allclose(np.concatenate(outs, axis=2), sdpa_causal(q, k, v), atol=2e-6)
    assert cache.seq_len == n


def test_kv_cache_bookkeeping_and_errors():
    cache = KVCache(3, 2, 4, 8, max_seq_len=5, dtype=np.float16)
    assert cache.allocated_nbytes == 2 * 3 * 2 * 4 * 5 * 8 * 2  # K and V, layers, batch, heads, positions, d, bytes
    assert cache.nbytes == 0  # nothing held yet
    cache.append(0, np.ones((2, 4, 5, 8)), np.ones((2, 4, 5, 8)))
    assert cache.nbytes == 2 * 2 * 4 * 5 * 8 * 2 and cache.stored == [5, 0, 0]  # layer 0 full, the others empty
    with pytest.raises(ValueError, match="full"):
        cache.append(0, np.ones((2, 4, 1, 8)), np.ones((2, 4, 1, 8)))
    with pytest.raises(ValueError, match="k must have shape"):
        cache.append(1, np.ones((2, 3, 1, 8)), np.ones((2, 3, 1, 8)))
    with pytest.raises(ValueError, match="layer"):
        cache.get(3)
    cache.reset()
    assert cache.seq_len == 0 and cache.get(0)[0].shape == (2, 4, 0, 8)
    with pytest.raises(TypeError, match="dtype"):
        KVCache(1, 1, 1, 1, 1, dtype=np.int32)
    with pytest.raises(ValueError, match="n_layers"):
        KVCache(0, 1, 1, 1, 1)


@pytest.mark.parametrize("max_seq_len", [None, 30])
def test_rolling_cache_keeps_windowed_attention_exact(max_seq_len):
    """A sliding-window layer keeps only its last w keys (slot = position % w); masking by the
    positions it reports gives exactly full windowed attention, for a prefill longer than the window
    followed by one-token and several-token steps."""
    n, d, window = 23, 8, 5
    q, k, v = qkv(1, 4, 2, n, n, d, seed=7)
    full = attention_reference(q, k, v, causal=True, window=window)
    cache = KVCache(2, 1, 2, d, max_seq_len, dtype=np.float64, windows=[window, None])
    outs, t = [], 0
    for step in (7, 1, 1, 3, 1, 4, 1, 1, 2, 1, 1):  # 23 positions
        k_all, v_all, pos = cache.append(0, k[:, :, t : t + step], v[:, :, t : t + step], return_positions=True)
        outs.append(attention(q[:, :, t : t + step], k_all, v_all, window=window,
                              q_positions=np.arange(t, t + step), k_positions=pos))
        cache.append(1, k[:, :, t : t + step], v[:, :, t : t + step])
        t += step
        assert cache.stored == [min(t, window), t] and len(cache) == t
        assert sorted(cache.positions(0)) == list(range(max(t - window, 0), t))
    np.testing.assert_allclose(np.concatenate(outs, axis=2), full, atol=1e-12)
    held_k, _ = cache.get(0)
    np.testing.assert_array_equal(held_k, k[:, :, cache.positions(0)])  # slot s holds the key of positions(0)[s]
    assert cache.nbytes == (window + n) * 2 * d * 2 * 8  # entries x kv heads x (d + d_v) x float64
    assert cache.bytes_per_token == 2 * 2 * d * 2 * 8


def test_growing_cache_doubles_and_copies_branch():
    cache = KVCache(1, 1, 1, 4, None)  # max_seq_len None: the buffers grow as tokens arrive
    for t in range(9):
        cache.append(0, np.full((1, 1, 1, 4), t), np.full((1, 1, 1, 4), -t))
    assert cache.k[0].shape[2] == 16 and cache.allocated_nbytes == 2 * 16 * 4 * 4  # 1, 2, 4, 8, 16 slots
    np.testing.assert_array_equal(cache.get(0)[0][0, 0, :, 0], np.arange(9))
    branch = cache.copy()
    branch.append(0, np.ones((1, 1, 1, 4)), np.ones((1, 1, 1, 4)))
    assert len(branch) == 10 and len(cache) == 9
    with pytest.raises(ValueError, match="windows"):
        KVCache(2, 1, 1, 4, 8, windows=[3])


def test_decode_attention_takes_one_query():
    q, k, v = qkv(1, 2, 2, 2, 5, 4)
    with pytest.raises(ValueError, match="one query"):
        decode_attention(q, k, v)
