"""The KV cache of the tiny transformer (chapter section 2.2, "LLM inference mechanics").

Prefill computes the keys and values of every prompt token once and stores
them; each decode step then computes K and V for the one new token only,
appends them, and attends over everything stored. Without the cache every
step would recompute K and V for all earlier tokens.

Layout per layer: `k` and `v` of shape (H_kv, T, d) (grouped-query attention
stores only the K/V heads, not the query heads) and `positions` (T,), the
absolute position of each stored entry (RoPE is applied before caching, so a
stored key never changes). A sliding-window layer keeps only its last
`window` entries, a rolling buffer: the memory stops growing at the window.

Kept deliberately simple: appending concatenates arrays. Serving engines
preallocate the cache in fixed-size pages instead (vLLM's PagedAttention).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["LayerKV", "KVCache"]


@dataclass
class LayerKV:
    """Cached keys and values of one attention layer."""

    k: np.ndarray  # (H_kv, T, d)
    v: np.ndarray  # (H_kv, T, d)
    positions: np.ndarray  # (T,) int64
    window: int | None = None

    @classmethod
    def empty(cls, kv_heads: int, head_dim: int, dtype, window: int | None = None) -> "LayerKV":
        return cls(np.zeros((kv_heads, 0, head_dim), dtype), np.zeros((kv_heads, 0, head_dim), dtype),
                   np.zeros(0, np.int64), window)

    def append(self, k: np.ndarray, v: np.ndarray, positions: np.ndarray):
        """Add new entries; return (k, v, positions) of everything the new queries may need.

        The returned arrays hold the old and the new entries (all of them, so
        that a prefill longer than the window still sees each query's full
        window); the stored arrays are then trimmed to the last `window`.
        """
        k_all = np.concatenate([self.k, k], axis=1)  # (H_kv, T + N, d)
        v_all = np.concatenate([self.v, v], axis=1)
        pos_all = np.concatenate([self.positions, positions])
        keep = slice(None) if self.window is None else slice(-self.window, None)
        self.k, self.v, self.positions = k_all[:, keep], v_all[:, keep], pos_all[keep]
        return k_all, v_all, pos_all

    @property
    def nbytes(self) -> int:
        return self.k.nbytes + self.v.nbytes


@dataclass
class KVCache:
    """Per-layer KV caches of one sequence plus the number of tokens seen.

    `length` is the number of tokens processed so far (= the position of the
    next token); `stored` is the number of entries held per layer (smaller
    than `length` once a sliding window is full); `nbytes` is the memory the
    keys and values take.
    """

    layers: list[LayerKV]
    length: int = 0
    dtype: np.dtype = field(default=np.dtype(np.float32))

    @classmethod
    def empty(cls, num_layers: int, kv_heads: int, head_dim: int, dtype=np.float32, windows=None) -> "KVCache":
        windows = windows or [None] * num_layers
        return cls([LayerKV.empty(kv_heads, head_dim, dtype, w) for w in windows], 0, np.dtype(dtype))

    def __len__(self) -> int:
        return self.length

    @property
    def stored(self) -> list[int]:
        """Entries held in each layer."""
        return [layer.k.shape[1] for layer in self.layers]

    @property
    def nbytes(self) -> int:
        """Bytes of all cached keys and values (positions not counted)."""
        return sum(layer.nbytes for layer in self.layers)

    @property
    def bytes_per_token(self) -> int:
        """Bytes one more token adds (before any window is full): 2 * layers * H_kv * d * itemsize."""
        return sum(2 * layer.k.shape[0] * layer.k.shape[2] for layer in self.layers) * self.dtype.itemsize

    def copy(self) -> "KVCache":
        """An independent copy (decode updates a cache in place)."""
        layers = [LayerKV(lay.k.copy(), lay.v.copy(), lay.positions.copy(), lay.window) for lay in self.layers]
        return KVCache(layers, self.length, self.dtype)
