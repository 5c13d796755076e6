"""The KV cache and one decode step of attention (chapter section 2.2.3).

Keys and values of earlier tokens never change, so a decoder computes them
once, during prefill for the prompt and then one token per decode step, and
keeps them in a KV cache. A decode step then only computes the new token's
query, key and value, appends the key and value to the cache, and attends
the one query against every cached key: O(N d) work per step instead of
recomputing O(N^2 d) attention over the whole sequence.

`KVCache` is a preallocated ("static") cache in the `(B, H_kv, N, d)` layout
of `chapter2.attention`, one key and one value buffer per layer, as in
gpt-fast's `KVCache`. With grouped-query attention it stores only the `H_kv`
key/value heads, which is why GQA shrinks the cache by `H_q / H_kv`.

Typical use (one layer shown; a model calls `append` once per layer per step):

    cache = KVCache(n_layers=1, batch_size=1, n_kv_heads=2, head_dim=64, max_seq_len=256)
    k_all, v_all = cache.append(0, k_prompt, v_prompt)        # prefill: (B, H_kv, N_prompt, d)
    out = attention(q_prompt, k_all, v_all, causal=True)      # (B, H_q, N_prompt, d)
    k_all, v_all = cache.append(0, k_new, v_new)              # decode: (B, H_kv, 1, d)
    out = decode_attention(q_new, k_all, v_all)               # (B, H_q, 1, d)
"""

from __future__ import annotations

import numpy as np

from ._checks import float_array, positive_int
from .attention import attention

__all__ = ["KVCache", "decode_attention"]


class KVCache:
    """Preallocated per-layer key/value buffers of shape (B, H_kv, max_seq_len, d).

    Attributes: `k[layer]`, `v[layer]` (the full buffers), `lengths[layer]`
    (how many positions of that layer are filled). Layers fill independently;
    `seq_len` is the filled length of layer 0 (all layers agree between steps).
    """

    def __init__(self, n_layers: int, batch_size: int, n_kv_heads: int, head_dim: int, max_seq_len: int,
                 *, v_head_dim: int | None = None, dtype=np.float32):
        self.n_layers = positive_int("n_layers", n_layers)
        self.batch_size = positive_int("batch_size", batch_size)
        self.n_kv_heads = positive_int("n_kv_heads", n_kv_heads)
        self.head_dim = positive_int("head_dim", head_dim)
        self.v_head_dim = self.head_dim if v_head_dim is None else positive_int("v_head_dim", v_head_dim)
        self.max_seq_len = positive_int("max_seq_len", max_seq_len)
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype must be a numpy floating dtype, got {dtype!r}") from None
        if not np.issubdtype(self.dtype, np.floating):
            raise TypeError(f"dtype must be a numpy floating dtype, got {self.dtype}")
        shape = (self.batch_size, self.n_kv_heads, self.max_seq_len)
        self.k = [np.zeros(shape + (self.head_dim,), dtype=self.dtype) for _ in range(self.n_layers)]
        self.v = [np.zeros(shape + (self.v_head_dim,), dtype=self.dtype) for _ in range(self.n_layers)]
        self.lengths = [0] * self.n_layers

    def _layer(self, layer) -> int:
        layer = positive_int("layer", layer, allow_zero=True)
        if layer >= self.n_layers:
            raise ValueError(f"layer must be in [0, {self.n_layers}), got {layer}")
        return layer

    def append(self, layer: int, k, v) -> tuple[np.ndarray, np.ndarray]:
        """Write k (B, H_kv, n, d) and v (B, H_kv, n, d_v) after the filled part of `layer`.

        Returns views (no copies) of everything cached for that layer so far,
        (B, H_kv, length, d) and (B, H_kv, length, d_v).
        """
        layer = self._layer(layer)
        k = float_array("k", k, ndim=4)
        v = float_array("v", v, ndim=4)
        n = k.shape[2]
        expect_k = (self.batch_size, self.n_kv_heads, n, self.head_dim)
        expect_v = (self.batch_size, self.n_kv_heads, n, self.v_head_dim)
        if k.shape != expect_k or n == 0:
            raise ValueError(f"k must have shape (B, H_kv, n, d) = {expect_k} with n >= 1, got {k.shape}")
        if v.shape != expect_v:
            raise ValueError(f"v must have shape (B, H_kv, n, d_v) = {expect_v}, got {v.shape}")
        start = self.lengths[layer]
        if start + n > self.max_seq_len:
            raise ValueError(f"KV cache is full: layer {layer} holds {start} of {self.max_seq_len} positions, "
                             f"cannot append {n} more")
        self.k[layer][:, :, start : start + n] = k
        self.v[layer][:, :, start : start + n] = v
        self.lengths[layer] = start + n
        return self.get(layer)

    def get(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Views of the filled part of `layer`: (B, H_kv, length, d), (B, H_kv, length, d_v)."""
        layer = self._layer(layer)
        n = self.lengths[layer]
        return self.k[layer][:, :, :n], self.v[layer][:, :, :n]

    @property
    def seq_len(self) -> int:
        """Positions cached in layer 0."""
        return self.lengths[0]

    @property
    def nbytes(self) -> int:
        """Bytes allocated for all layers' keys and values (the full max_seq_len)."""
        return sum(x.nbytes for x in self.k) + sum(x.nbytes for x in self.v)

    def reset(self) -> None:
        """Forget every cached position (buffers are kept for the next request)."""
        self.lengths = [0] * self.n_layers


def decode_attention(q, k_cache, v_cache, *, window: int | None = None, scale=None) -> np.ndarray:
    """Attention of one new query against the cache: q (B, H_q, 1, d) -> (B, H_q, 1, d_v).

    The query is the newest position, so it sees every cached key (its own key
    must already be appended), or only the last `window` keys with sliding-window
    attention. Equals `attention(q, k_cache, v_cache, causal=True, window=window)`.
    Work is O(N d) per step (O(w d) with a window).
    """
    q, k_cache, v_cache = (float_array(n, a, ndim=4) for n, a in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)))
    if q.shape[2] != 1:
        raise ValueError(f"decode_attention takes one query per sequence, q must be (B, H_q, 1, d), got {q.shape}")
    if window is not None:
        window = positive_int("window", window)
        k_cache, v_cache = k_cache[:, :, -window:], v_cache[:, :, -window:]  # only the last w keys are visible
    return attention(q, k_cache, v_cache, causal=True, scale=scale)  # the one query sees every key left
