"""The KV cache and one decode step of attention (chapter section 2.2.3).

Keys and values of earlier tokens never change, so a decoder computes them
once, during prefill for the prompt and then one token per decode step, and
keeps them in a KV cache. A decode step then only computes the new token's
query, key and value, appends the key and value to the cache, and attends
the one query against every cached key: O(N d) work per step instead of
recomputing O(N^2 d) attention over the whole sequence.

`KVCache` is the one numpy KV cache of the package: the snippets and pages
use it directly, and the numpy transformer (`chapter2.models.transformer`)
keeps its keys and values in it. Per layer it holds a key buffer
(B, H_kv, capacity, d) and a value buffer (B, H_kv, capacity, d_v), the
`(B, H, N, d)` layout of `chapter2.attention`. With grouped-query attention it
stores only the `H_kv` key/value heads, which is why GQA shrinks the cache by
`H_q / H_kv`.

- **Preallocated.** `max_seq_len` positions are allocated up front (a
  "static" cache, as gpt-fast's `KVCache`); appending past them raises.
  `max_seq_len=None` instead grows the buffers by doubling as tokens arrive
  (amortized O(1) copying per token, like a Python list), for a caller that
  does not know the final length.
- **Rolling window.** `windows[layer] = w` (a sliding-window layer, e.g.
  Mistral's) keeps only that layer's last `w` positions: position p is
  written to slot p % w, so its memory stops growing at the window. Slots are
  then not in position order; `positions(layer)` says which position each
  slot holds, and attention masks by those positions
  (`attention(..., q_positions=, k_positions=)`), which keeps windowed
  attention exact.

Typical use (one layer shown; a model calls `append` once per layer per step):

    cache = KVCache(n_layers=1, batch_size=1, n_kv_heads=2, head_dim=64, max_seq_len=256)
    k_all, v_all = cache.append(0, k_prompt, v_prompt)        # prefill: (B, H_kv, N_prompt, d)
    out = attention(q_prompt, k_all, v_all, causal=True)      # (B, H_q, N_prompt, d)
    k_all, v_all = cache.append(0, k_new, v_new)              # decode: (B, H_kv, 1, d)
    out = decode_attention(q_new, k_all, v_all)               # (B, H_q, 1, d)

Serving engines go one step further and allocate the cache in fixed-size
pages shared by many sequences (vLLM's PagedAttention).
"""

from __future__ import annotations

import copy as _copy

import numpy as np

from ._checks import float_array, positive_int
from .attention import attention

__all__ = ["KVCache", "decode_attention"]


class KVCache:
    """Per-layer key/value buffers of shape (B, H_kv, capacity, d) and (B, H_kv, capacity, d_v).

    Attributes: `k[layer]`, `v[layer]` (the whole buffers), `lengths[layer]`
    (positions appended to that layer so far, = the position of its next
    token), `windows` (per layer: its sliding window or None). Layers fill
    independently; `seq_len` (also `len(cache)`) is the length of layer 0 (all
    layers agree between steps). `stored` is the entries each layer holds
    (less than its length once a rolling window is full).
    """

    def __init__(self, n_layers: int, batch_size: int, n_kv_heads: int, head_dim: int, max_seq_len: int | None,
                 *, v_head_dim: int | None = None, dtype=np.float32, windows=None):
        self.n_layers = positive_int("n_layers", n_layers)
        self.batch_size = positive_int("batch_size", batch_size)
        self.n_kv_heads = positive_int("n_kv_heads", n_kv_heads)
        self.head_dim = positive_int("head_dim", head_dim)
        self.v_head_dim = self.head_dim if v_head_dim is None else positive_int("v_head_dim", v_head_dim)
        self.max_seq_len = None if max_seq_len is None else positive_int("max_seq_len", max_seq_len)
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype must be a numpy floating dtype, got {dtype!r}") from None
        if not np.issubdtype(self.dtype, np.floating):
            raise TypeError(f"dtype must be a numpy floating dtype, got {self.dtype}")
        if windows is None:
            windows = [None] * self.n_layers
        if isinstance(windows, str) or not hasattr(windows, "__len__") or len(windows) != self.n_layers:
            raise ValueError(f"windows must list one window (an int or None) per layer, {self.n_layers} in all, "
                             f"got {windows!r}")
        self.windows = tuple(None if w is None else positive_int(f"windows[{i}]", w) for i, w in enumerate(windows))
        # A layer rolls when its window is shorter than what it could otherwise hold.
        self._rolling = tuple(w if w is not None and (self.max_seq_len is None or w < self.max_seq_len) else None
                              for w in self.windows)
        shape = (self.batch_size, self.n_kv_heads)
        capacity = [0 if self.max_seq_len is None else (w or self.max_seq_len) for w in self._rolling]
        self.k = [np.zeros(shape + (c, self.head_dim), dtype=self.dtype) for c in capacity]
        self.v = [np.zeros(shape + (c, self.v_head_dim), dtype=self.dtype) for c in capacity]
        self.lengths = [0] * self.n_layers

    def __repr__(self) -> str:
        return (f"KVCache(layers={self.n_layers}, batch={self.batch_size}, kv_heads={self.n_kv_heads}, "
                f"head_dim={self.head_dim}, max_seq_len={self.max_seq_len}, seq_len={self.seq_len}, dtype={self.dtype})")

    def _layer(self, layer) -> int:
        layer = positive_int("layer", layer, allow_zero=True)
        if layer >= self.n_layers:
            raise ValueError(f"layer must be in [0, {self.n_layers}), got {layer}")
        return layer

    # -- writing -----------------------------------------------------------------

    def append(self, layer: int, k, v, *, return_positions: bool = False):
        """Write k (B, H_kv, n, d) and v (B, H_kv, n, d_v) as the next n positions of `layer`.

        Returns every key and value the n new queries may attend to,
        (B, H_kv, T, d) and (B, H_kv, T, d_v): views (no copies) of what the
        layer holds, in slot order. With `return_positions` also their
        positions (T,), for `attention(..., q_positions=, k_positions=)`.
        One exception: several new tokens that run past a rolling window get
        the held entries plus all n new ones (a copy), since their first
        queries still see keys that this write overwrites.
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
        if self.max_seq_len is not None and start + n > self.max_seq_len:
            raise ValueError(f"KV cache is full: layer {layer} holds {start} of {self.max_seq_len} positions, "
                             f"cannot append {n} more")
        window = self._rolling[layer]
        if window is not None and n > 1 and start + n > window:
            k_old, v_old = self.get(layer)
            pos_old = self.positions(layer)
            out = (np.concatenate([k_old, k.astype(self.dtype, copy=False)], axis=2),
                   np.concatenate([v_old, v.astype(self.dtype, copy=False)], axis=2))
            pos = np.concatenate([pos_old, np.arange(start, start + n, dtype=np.int64)])
            self._write(layer, k, v, start)
        else:
            self._write(layer, k, v, start)
            out, pos = self.get(layer), self.positions(layer)
        return (*out, pos) if return_positions else out

    def _write(self, layer: int, k: np.ndarray, v: np.ndarray, start: int) -> None:
        n = k.shape[2]
        end = start + n
        window = self._rolling[layer]
        self._reserve(layer, end if window is None else min(end, window))
        if window is None:
            self.k[layer][:, :, start:end] = k
            self.v[layer][:, :, start:end] = v
        else:  # only the last `window` of the new entries survive, each in slot position % window
            keep = min(n, window)
            slots = np.arange(end - keep, end) % window
            self.k[layer][:, :, slots] = k[:, :, n - keep:]
            self.v[layer][:, :, slots] = v[:, :, n - keep:]
        self.lengths[layer] = end

    def _reserve(self, layer: int, needed: int) -> None:
        """Grow a layer's buffers (max_seq_len=None) to hold `needed` slots: at least double, at most its window."""
        capacity = self.k[layer].shape[2]
        if needed <= capacity:
            return
        new = max(needed, 2 * capacity)
        if self._rolling[layer] is not None:
            new = min(new, self._rolling[layer])
        for bufs in (self.k, self.v):
            old = bufs[layer]
            bufs[layer] = np.zeros(old.shape[:2] + (new, old.shape[3]), dtype=self.dtype)
            bufs[layer][:, :, :capacity] = old

    # -- reading -----------------------------------------------------------------

    def _held(self, layer: int) -> int:
        window = self._rolling[layer]
        return self.lengths[layer] if window is None else min(self.lengths[layer], window)

    def get(self, layer: int) -> tuple[np.ndarray, np.ndarray]:
        """Views of what `layer` holds, in slot order: (B, H_kv, stored, d), (B, H_kv, stored, d_v)."""
        layer = self._layer(layer)
        n = self._held(layer)
        return self.k[layer][:, :, :n], self.v[layer][:, :, :n]

    def positions(self, layer: int) -> np.ndarray:
        """Positions (stored,) int64 of the entries `get(layer)` returns: 0, 1, ... unless the layer rolls.

        A rolling layer of window w holds the last w positions; slot s holds
        the latest position p < length with p % w == s.
        """
        layer = self._layer(layer)
        n, length, window = self._held(layer), self.lengths[layer], self._rolling[layer]
        slots = np.arange(n, dtype=np.int64)
        if window is None:
            return slots
        return slots + window * ((length - 1 - slots) // window)

    @property
    def seq_len(self) -> int:
        """Positions appended to layer 0 (the position of the next token)."""
        return self.lengths[0]

    def __len__(self) -> int:
        return self.seq_len

    @property
    def stored(self) -> list[int]:
        """Entries each layer holds (its length, capped at its window if it rolls)."""
        return [self._held(i) for i in range(self.n_layers)]

    @property
    def bytes_per_token(self) -> int:
        """Bytes one more position adds while no window is full: layers x B x H_kv x (d + d_v) x itemsize."""
        return self.n_layers * self.batch_size * self.n_kv_heads * (self.head_dim + self.v_head_dim) * self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values held (what the chapter's KV cache arithmetic counts)."""
        per_entry = self.batch_size * self.n_kv_heads * (self.head_dim + self.v_head_dim) * self.dtype.itemsize
        return per_entry * sum(self.stored)

    @property
    def allocated_nbytes(self) -> int:
        """Bytes allocated for all layers' buffers (the whole max_seq_len, or window, when preallocated)."""
        return sum(x.nbytes for x in self.k) + sum(x.nbytes for x in self.v)

    def reset(self) -> None:
        """Forget every cached position (buffers are kept for the next request)."""
        self.lengths = [0] * self.n_layers

    def copy(self) -> KVCache:
        """An independent copy (appending updates a cache in place; copy to branch)."""
        out = _copy.copy(self)
        out.k, out.v, out.lengths = [x.copy() for x in self.k], [x.copy() for x in self.v], list(self.lengths)
        return out


def decode_attention(q, k_cache, v_cache, *, window: int | None = None, scale=None) -> np.ndarray:
    """Attention of one new query against the cache: q (B, H_q, 1, d) -> (B, H_q, 1, d_v).

    The query is the newest position, so it sees every cached key (its own key
    must already be appended), or only the last `window` keys with sliding-window
    attention. Keys must be in position order (a cache that does not roll).
    Equals `attention(q, k_cache, v_cache, causal=True, window=window)`.
    Work is O(N d) per step (O(w d) with a window).
    """
    q, k_cache, v_cache = (float_array(n, a, ndim=4) for n, a in (("q", q), ("k_cache", k_cache), ("v_cache", v_cache)))
    if q.shape[2] != 1:
        raise ValueError(f"decode_attention takes one query per sequence, q must be (B, H_q, 1, d), got {q.shape}")
    if window is not None:
        window = positive_int("window", window)
        k_cache, v_cache = k_cache[:, :, -window:], v_cache[:, :, -window:]  # only the last w keys are visible
    return attention(q, k_cache, v_cache, causal=True, scale=scale)  # the one query sees every key left
