"""Scaled dot-product attention and FlashAttention, in numpy (chapter sections 2.2.3 and 2.5).

Layout is `(B, H, N, d)`, the layout of `torch.nn.functional.scaled_dot_product_attention`:
batch, heads, sequence positions, head dimension. Each query scores every
visible key, the scores are scaled by `1/sqrt(d)` and normalized with a
softmax, and the output is the weighted sum of the values:

    O = softmax(Q K^T * scale + mask) V

Conventions (pinned down by the tests):

- **Grouped-query attention (GQA).** `k` and `v` may have fewer heads than `q`:
  `H_q` must be a multiple of `H_kv`, and query head `h` reads key/value head
  `h // (H_q // H_kv)` (consecutive query heads share one K/V head, like
  `repeat_interleave` and SDPA's `enable_gqa=True`). MQA is `H_kv = 1`.
- **Causal mask with `N_q != N_k`.** The queries are the *last* `N_q`
  positions of the `N_k` keys (bottom-right alignment): query `i` sits at
  position `i + N_k - N_q` and sees keys `j <= i + N_k - N_q`. That is what
  a decode step against a KV cache needs (one query, the newest position,
  sees every cached key). `torch`'s `is_causal=True` aligns top-left instead
  (query `i` sees keys `j <= i`); the two agree only when `N_q == N_k`.
  Causal attention needs `N_q <= N_k`.
- **Sliding window `w`.** Query at position `i` sees keys `j` with
  `i - w < j <= i`: the window is the look-back size, the token itself
  included (the convention of Hugging Face transformers). A window implies
  the causal mask. With `w >= N_k` it equals plain causal attention.
- **Explicit positions.** `attention` and `attention_weights` also take
  `q_positions` (N_q,) and `k_positions` (N_k,): the absolute position of
  every query and key, which then replace the index alignment above (mask
  from `position_mask`). A rolling KV cache needs this: it stores keys out of
  order (position p in slot p % w), so a key's index no longer says its
  position (`chapter2.kv_cache`, and the numpy transformer that uses it).

Three implementations of the same function:

- `attention_reference`: the float64 oracle, a loop over (batch, head, query)
  that lists each query's visible keys from the definition above.
- `attention`: vectorized numpy, materializes the `(N_q, N_k)` score matrix
  (the one masked attention every numpy caller uses, the tiny transformer included).
- `flash_attention`: FlashAttention (Dao et al. 2022, arXiv:2205.14135,
  Algorithm 1; loop order of FlashAttention-2, Dao 2023, arXiv:2307.08691,
  Algorithm 1): tiles of `block_q` queries by `block_k` keys with an online
  softmax, so working memory is O(N d), never O(N^2); key tiles that the mask
  hides completely are never visited. `flash_schedule` returns that tile map.

`flash_trace` records FlashAttention's inner loop for one block of queries, step by step (the
running max, the rescale factor, the running sum and the accumulator after each key tile, and
the bytes moved against standard attention): the site's FlashAttention stepper draws it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import dtype_bytes as _dtype_bytes
from ._checks import float_array, positive_int
from .activations import softmax

__all__ = [
    "attention_mask", "position_mask", "attended_pairs", "attention_weights", "attention", "attention_reference",
    "flash_attention", "flash_schedule", "TILE_SKIPPED", "TILE_MASKED", "TILE_FULL", "FlashStep", "FlashTrace",
    "flash_trace",
]

TILE_SKIPPED, TILE_MASKED, TILE_FULL = 0, 1, 2  # flash_schedule codes: not visited / visited with a mask / visited, no mask


# -----------------------------------------------------------------------------
# input checks


def _check_mask_args(n_q: int, n_k: int, causal, window):
    """Return (causal, window) normalized: a window implies causal; causal needs n_q <= n_k."""
    if not isinstance(causal, bool | np.bool_):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    if window is not None:
        window = positive_int("window", window)
        causal = True
    if causal and n_q > n_k:
        raise ValueError(
            f"causal attention needs at most as many queries as keys (queries are the last N_q positions), "
            f"got N_q={n_q} > N_k={n_k}"
        )
    return bool(causal), window


def _check_qkv(q, k, v):
    """Validate (B, H, N, d) arrays; return them and the GQA group size H_q // H_kv."""
    q = float_array("q", q, ndim=4)
    k = float_array("k", k, ndim=4)
    v = float_array("v", v, ndim=4)
    (b, h_q, _, d), (bk, h_kv, n_k, dk) = q.shape, k.shape
    if bk != b or v.shape[0] != b:
        raise ValueError(f"q, k, v must share the batch size, got {q.shape[0]}, {k.shape[0]}, {v.shape[0]}")
    if dk != d:
        raise ValueError(f"q and k must share the head dimension d, got q {q.shape} and k {k.shape}")
    if v.shape[1] != h_kv or v.shape[2] != n_k:
        raise ValueError(f"k and v must have the same heads and length (B, H_kv, N_k, .), got k {k.shape} and v {v.shape}")
    if n_k == 0 or d == 0 or h_kv == 0:
        raise ValueError(f"k must have at least one key, one head and d >= 1, got shape {k.shape}")
    if h_q % h_kv != 0:
        raise ValueError(f"query heads ({h_q}) must be a multiple of key/value heads ({h_kv}) for grouped-query attention")
    return q, k, v, h_q // h_kv


def _scale(scale, d: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.number)) or not math.isfinite(scale):
        raise TypeError(f"scale must be a finite real number or None, got {scale!r}")
    return float(scale)


# -----------------------------------------------------------------------------
# the mask


def _visible(q_pos: np.ndarray, k_pos: np.ndarray, causal: bool, window) -> np.ndarray:
    """(N_q, N_k) bool from absolute positions: causal j <= i; window w: also j > i - w."""
    q, k = q_pos[:, None], k_pos[None, :]
    visible = np.ones((q.shape[0], k.shape[1]), dtype=bool)
    if causal:
        visible &= k <= q
    if window is not None:
        visible &= k > q - window
    return visible


def attention_mask(n_q: int, n_k: int | None = None, *, causal: bool = False, window: int | None = None) -> np.ndarray:
    """Boolean (n_q, n_k) array, True where query i may attend to key j.

    n_k defaults to n_q. Query i sits at position i + n_k - n_q (bottom-right
    alignment); causal: j <= that position; window w: also j > position - w.
    """
    n_q = positive_int("n_q", n_q)
    n_k = n_q if n_k is None else positive_int("n_k", n_k)
    causal, window = _check_mask_args(n_q, n_k, causal, window)
    return _visible(np.arange(n_q) + (n_k - n_q), np.arange(n_k), causal, window)


def _positions(name: str, value) -> np.ndarray:
    arr = np.asarray(value)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must be an array of integer positions, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of positions, got shape {arr.shape}")
    return arr.astype(np.int64, copy=False)


def position_mask(q_positions, k_positions, *, causal: bool = True, window: int | None = None) -> np.ndarray:
    """Boolean (N_q, N_k) array from explicit positions: the query at position i sees the key at j
    iff j <= i (causal) and i - w < j (window w, which implies causal).

    The keys may come in any order (a rolling KV cache holds position p in slot p % w).
    """
    q_pos, k_pos = _positions("q_positions", q_positions), _positions("k_positions", k_positions)
    if not isinstance(causal, bool | np.bool_):
        raise TypeError(f"causal must be True or False, got {causal!r}")
    window = None if window is None else positive_int("window", window)
    return _visible(q_pos, k_pos, bool(causal) or window is not None, window)


def attended_pairs(n_q: int, n_k: int | None = None, *, causal: bool = False, window: int | None = None) -> int:
    """Number of (query, key) pairs scored: n_q n_k dense, about N^2 / 2 causal, about N w with a window.

    Exact closed form (integers), so it works for lengths far beyond what a mask could hold.
    """
    n_q = positive_int("n_q", n_q)
    n_k = n_q if n_k is None else positive_int("n_k", n_k)
    causal, window = _check_mask_args(n_q, n_k, causal, window)
    if not causal:
        return n_q * n_k
    first = n_k - n_q + 1  # keys seen by the first query; each later query sees one more ...
    if window is None:
        return n_q * first + n_q * (n_q - 1) // 2
    uncapped = min(max(window - first + 1, 0), n_q)  # ... until the window caps it at w
    return uncapped * first + uncapped * (uncapped - 1) // 2 + (n_q - uncapped) * window


# -----------------------------------------------------------------------------
# reference and vectorized attention


# --8<-- [start:attention_reference]
def attention_reference(q, k, v, *, causal=False, window=None, scale=None) -> np.ndarray:
    """The float64 oracle: for each (batch, head, query) list the visible keys and average their values.

    Returns float64 (B, H_q, N_q, d_v). Slow on purpose (Python loop over queries).
    """
    q, k, v, group = _check_qkv(q, k, v)
    (b_size, h_q, n_q, d), n_k = q.shape, k.shape[2]
    causal, window = _check_mask_args(n_q, n_k, causal, window)
    scale = _scale(scale, d)
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    out = np.empty((b_size, h_q, n_q, v.shape[-1]), dtype=np.float64)
    for b in range(b_size):
        for h in range(h_q):
            kv_head = h // group
            for i in range(n_q):
                pos = i + n_k - n_q  # queries are the last n_q positions
                keys = [j for j in range(n_k) if (not causal or j <= pos) and (window is None or j > pos - window)]
                scores = k[b, kv_head, keys] @ q[b, h, i] * scale  # (len(keys),)
                weights = np.exp(scores - scores.max())
                out[b, h, i] = weights @ v[b, kv_head, keys] / weights.sum()
    return out
# --8<-- [end:attention_reference]


def _compute_dtype(*arrays):
    return np.result_type(*arrays, np.float32)  # float16 inputs accumulate in float32, as GPU kernels do


def _mask(n_q: int, n_k: int, causal, window, q_positions, k_positions) -> np.ndarray:
    """The (N_q, N_k) mask of `attention`: from the index alignment, or from explicit positions."""
    if q_positions is None and k_positions is None:
        return attention_mask(n_q, n_k, causal=causal, window=window)
    if q_positions is None or k_positions is None:
        raise TypeError("q_positions and k_positions must be given together (or neither)")
    mask = position_mask(q_positions, k_positions, causal=causal, window=window)
    if mask.shape != (n_q, n_k):
        raise ValueError(f"q_positions and k_positions must have N_q = {n_q} and N_k = {n_k} entries, "
                         f"got {mask.shape[0]} and {mask.shape[1]}")
    if not mask.any(axis=1).all():
        raise ValueError("every query must see at least one key (check q_positions and k_positions)")
    return mask


def _attention_weights(q, k, group: int, causal, window, scale, q_positions, k_positions) -> np.ndarray:
    """`attention_weights` on checked arrays (q, k as `_check_qkv` returns them): no input checks here."""
    (b, h_q, n_q, d), (_, h_kv, n_k, _) = q.shape, k.shape
    mask = _mask(n_q, n_k, causal, window, q_positions, k_positions)  # (N_q, N_k)
    dtype = _compute_dtype(q, k)
    qg = q.astype(dtype, copy=False).reshape(b, h_kv, group, n_q, d)  # (B, H_kv, G, N_q, d): G query heads per K/V head
    scores = qg @ k.astype(dtype, copy=False)[:, :, None].swapaxes(-1, -2) * dtype.type(_scale(scale, d))  # (B, H_kv, G, N_q, N_k)
    scores = np.where(mask, scores, -np.inf)
    return softmax(scores).reshape(b, h_q, n_q, n_k)  # (B, H_q, N_q, N_k)


def attention_weights(q, k, *, causal=False, window=None, scale=None, q_positions=None, k_positions=None) -> np.ndarray:
    """softmax(Q K^T * scale + mask): (B, H_q, N_q, N_k), each row sums to 1 over the visible keys.

    The mask is the index-aligned causal/window mask, or with `q_positions` and
    `k_positions` the one `position_mask` builds from those positions.
    """
    q, k, _, group = _check_qkv(q, k, k)  # v only needs k's shape here
    return _attention_weights(q, k, group, causal, window, scale, q_positions, k_positions)


def attention(q, k, v, *, causal=False, window=None, scale=None, q_positions=None, k_positions=None) -> np.ndarray:
    """Standard attention, O = softmax(Q K^T * scale + mask) V, materializing the score matrix.

    q (B, H_q, N_q, d), k (B, H_kv, N_k, d), v (B, H_kv, N_k, d_v) -> (B, H_q, N_q, d_v),
    in the inputs' precision (at least float32). `q_positions` (N_q,) and
    `k_positions` (N_k,), given together, place queries and keys at explicit
    positions for the causal/window mask (keys in any order, as a rolling KV cache holds them).
    """
    q, k, v, group = _check_qkv(q, k, v)
    b, h_q, n_q, _ = q.shape
    h_kv = k.shape[1]
    p = _attention_weights(q, k, group, causal, window, scale, q_positions, k_positions)  # (B, H_q, N_q, N_k)
    p = p.reshape(b, h_kv, group, n_q, -1)  # (B, H_kv, G, N_q, N_k)
    out = p @ v.astype(p.dtype, copy=False)[:, :, None]  # (B, H_kv, G, N_q, d_v)
    return out.reshape(b, h_q, n_q, v.shape[-1])


# -----------------------------------------------------------------------------
# FlashAttention: tiles, online softmax


def _key_block_range(q0: int, q1: int, offset: int, n_k: int, block_k: int, causal: bool, window):
    """Key blocks [lo, hi) that query rows [q0, q1) can see; blocks outside are skipped.

    Rows sit at positions q0 + offset .. q1 - 1 + offset. The union of their visible keys is
    one interval (windows of consecutive rows overlap), so every block in [lo, hi) has work.
    """
    first_pos, last_pos = q0 + offset, q1 - 1 + offset
    hi = (last_pos // block_k + 1) if causal else -(-n_k // block_k)
    lo = max(first_pos - window + 1, 0) // block_k if window is not None else 0
    return lo, hi


def _tile_is_full(q0, q1, k0, k1, offset, causal, window) -> bool:
    """True when every query row of the tile sees every key of the tile (no mask to apply)."""
    first_pos, last_pos = q0 + offset, q1 - 1 + offset
    if causal and k1 - 1 > first_pos:  # the first row must see the last key
        return False
    if window is not None and k0 <= last_pos - window:  # the last row must see the first key
        return False
    return True


def _check_blocks(block_q, block_k):
    return positive_int("block_q", block_q), positive_int("block_k", block_k)


def flash_schedule(n_q: int, n_k: int | None = None, *, causal=False, window=None, block_q=64, block_k=64) -> np.ndarray:
    """Tile map of `flash_attention`: int8 (ceil(n_q/block_q), ceil(n_k/block_k)).

    Entry [i, j] is TILE_SKIPPED (0) when query block i never visits key block j,
    TILE_MASKED (1) when it visits and applies the mask, TILE_FULL (2) when it
    visits with nothing masked. Same loop bounds as `flash_attention`.
    """
    n_q = positive_int("n_q", n_q)
    n_k = n_q if n_k is None else positive_int("n_k", n_k)
    causal, window = _check_mask_args(n_q, n_k, causal, window)
    block_q, block_k = _check_blocks(block_q, block_k)
    offset = n_k - n_q
    tiles = np.full((-(-n_q // block_q), -(-n_k // block_k)), TILE_SKIPPED, dtype=np.int8)
    for i in range(tiles.shape[0]):
        q0, q1 = i * block_q, min((i + 1) * block_q, n_q)
        lo, hi = _key_block_range(q0, q1, offset, n_k, block_k, causal, window)
        for j in range(lo, hi):
            k0, k1 = j * block_k, min((j + 1) * block_k, n_k)
            tiles[i, j] = TILE_FULL if _tile_is_full(q0, q1, k0, k1, offset, causal, window) else TILE_MASKED
    return tiles


# --8<-- [start:flash_attention]
def flash_attention(q, k, v, *, causal=False, window=None, scale=None, block_q=64, block_k=64,
                    return_lse=False, trace=None):
    """FlashAttention forward: same result as `attention`, computed tile by tile.

    For each block Q_i of `block_q` queries, loop over the visible key blocks
    K_j, V_j (`block_k` keys) keeping per query row the running maximum `m_i`,
    the running softmax denominator `l_i` and the unnormalized output `acc`:

        S    = Q_i K_j^T * scale              (masked entries -inf)
        m    = max(m_i, rowmax(S))
        P    = exp(S - m)
        l_i  = exp(m_i - m) l_i + rowsum(P)
        acc  = exp(m_i - m) acc + P V_j
        m_i  = m
        O_i  = acc / l_i                      after the last block

    Only a (block_q, block_k) score tile exists at a time: O(N d) memory.
    Key blocks that the causal/window mask hides from the whole query block
    are not visited; tiles that the mask does not touch skip the masking.

    return_lse: also return the log-sum-exp L = m_i + log(l_i) of the scaled
    scores, (B, H_q, N_q) (what the paper saves for the backward pass).
    trace: optional list; each visited tile appends (q_block, k_block, kind) with
    kind TILE_MASKED or TILE_FULL (compare with `flash_schedule`).
    """
    q, k, v, group = _check_qkv(q, k, v)
    (b, h_q, n_q, d), (_, h_kv, n_k, _), d_v = q.shape, k.shape, v.shape[-1]
    causal, window = _check_mask_args(n_q, n_k, causal, window)
    block_q, block_k = _check_blocks(block_q, block_k)
    if trace is not None and not isinstance(trace, list):
        raise TypeError(f"trace must be a list or None, got {type(trace).__name__}")
    dtype = _compute_dtype(q, k, v)
    scale = dtype.type(_scale(scale, d))
    offset = n_k - n_q  # queries are the last n_q positions
    qg = q.astype(dtype).reshape(b, h_kv, group, n_q, d)  # (B, H_kv, G, N_q, d): one K/V tile serves G heads
    k, v = k.astype(dtype)[:, :, None], v.astype(dtype)[:, :, None]  # (B, H_kv, 1, N_k, d)
    out = np.empty((b, h_kv, group, n_q, d_v), dtype=dtype)
    lse = np.empty((b, h_kv, group, n_q), dtype=dtype)

    for i in range(-(-n_q // block_q)):
        q0, q1 = i * block_q, min((i + 1) * block_q, n_q)
        q_i = qg[..., q0:q1, :]  # (B, H_kv, G, bq, d)
        m_i = np.full(q_i.shape[:-1], -np.inf, dtype=dtype)  # (B, H_kv, G, bq) running row max
        l_i = np.zeros(q_i.shape[:-1], dtype=dtype)  # (B, H_kv, G, bq) running denominator
        acc = np.zeros(q_i.shape[:-1] + (d_v,), dtype=dtype)  # (B, H_kv, G, bq, d_v)
        lo, hi = _key_block_range(q0, q1, offset, n_k, block_k, causal, window)
        for j in range(lo, hi):
            k0, k1 = j * block_k, min((j + 1) * block_k, n_k)
            s = q_i @ k[..., k0:k1, :].swapaxes(-1, -2) * scale  # (B, H_kv, G, bq, bk)
            full = _tile_is_full(q0, q1, k0, k1, offset, causal, window)
            if not full:
                visible = _visible(np.arange(q0, q1) + offset, np.arange(k0, k1), causal, window)  # (bq, bk), the mask of `attention`
                s = np.where(visible, s, -np.inf)
            m_new = np.maximum(m_i, s.max(axis=-1))
            # A row with no visible key yet has m_new = -inf; use 0 there so exp(-inf - 0) = 0, not NaN.
            m_safe = np.where(np.isfinite(m_new), m_new, dtype.type(0))
            p = np.exp(s - m_safe[..., None])  # (B, H_kv, G, bq, bk)
            alpha = np.exp(m_i - m_safe)  # rescales what was accumulated under the old max
            l_i = alpha * l_i + p.sum(axis=-1)
            acc = alpha[..., None] * acc + p @ v[..., k0:k1, :]
            m_i = m_new
            if trace is not None:
                trace.append((i, j, TILE_FULL if full else TILE_MASKED))
        out[..., q0:q1, :] = acc / l_i[..., None]
        lse[..., q0:q1] = m_i + np.log(l_i)

    out = out.reshape(b, h_q, n_q, d_v)  # (B, H_q, N_q, d_v)
    if return_lse:
        return out, lse.reshape(b, h_q, n_q)
    return out
# --8<-- [end:flash_attention]


# -----------------------------------------------------------------------------
# FlashAttention, one query block step by step


@dataclass(frozen=True, eq=False)
class FlashStep:
    """The state of one query block after `index` key tiles (see `flash_trace`).

    index 0 is the start: Q_i is loaded, no key yet (m = -inf, l_i = 0, acc = 0), keys [0, 0).
    Step t >= 1 has loaded keys [k0, k1) (the t-th K/V tile) and applied, row by row:

        scores  = Q_i K_j^T * scale            (bq, bk)
        m_new   = max(m_old, rowmax(scores))
        rescale = exp(m_old - m_new)           0 on the first tile (nothing accumulated yet)
        p       = exp(scores - m_new)          (bq, bk)
        l_i     = rescale * l_i + rowsum(p)
        acc     = rescale * acc + p V_j        (bq, d_v)

    (`m_new` is the running max m_i after the tile, `l_i` the running sum, `acc` the accumulator.)

    `weights` (bq, N_k) is for display, not part of the algorithm: the softmax over the keys seen so
    far, exp(score - m_new) / l_i, 0 for keys not seen yet; after the last tile it is the attention row.
    `hbm_bytes`: bytes FlashAttention has read from or written to device memory for this block so far
    (Q_i, then K_j and V_j per tile, and O_i after the last one); `standard_bytes`: what standard
    attention moves for the same rows and keys, the same plus its score tile S written and read back
    and its probabilities P written and read back (4 x bq x bk numbers per tile).
    """

    index: int
    k0: int
    k1: int
    scores: np.ndarray | None
    m_old: np.ndarray
    m_new: np.ndarray
    rescale: np.ndarray | None
    p: np.ndarray | None
    l_i: np.ndarray
    acc: np.ndarray
    weights: np.ndarray
    hbm_bytes: float
    standard_bytes: float


@dataclass(frozen=True, eq=False)
class FlashTrace:
    """`flash_trace`'s result: the steps of one query block, rows [q0, q1), and its output."""

    q_block: int
    q0: int
    q1: int
    block_k: int
    n_k: int
    d: int
    d_v: int
    dtype_bytes: float
    steps: tuple[FlashStep, ...]
    causal: bool = False  # keys after a query's position are masked; tiles wholly after the block are skipped
    offset: int = 0  # N_k - N_q: query row i sits at position i + offset

    @property
    def tiles(self) -> int:
        """K/V tiles the block streams through: ceil(N_k / block_k), or with `causal` those up to the block's last row."""
        return len(self.steps) - 1

    @property
    def visible_k(self) -> int:
        """Keys [0, visible_k) some row of the block may see: N_k, or with `causal` up to its last row's position."""
        return min(self.n_k, self.q1 + self.offset) if self.causal else self.n_k

    @property
    def out(self) -> np.ndarray:
        """O_i = acc / l_i after the last tile: (bq, d_v), the block's rows of attention's output."""
        last = self.steps[-1]
        return last.acc / last.l_i[:, None]


# --8<-- [start:flash_trace]
def flash_trace(q, k, v, *, q_block=0, block_q=4, block_k=4, scale=None, dtype_bytes=2, causal=False) -> FlashTrace:
    """FlashAttention's inner loop for one block of queries, recorded after every K/V tile (one head).

    causal=True: query i sits at position i + N_k - N_q and sees keys up to it (the mask a decoder
    uses); a key tile wholly after the block's last row is skipped (never loaded), and in the tile on the
    diagonal the masked scores are -inf (their p is 0).

    q (N_q, d), k (N_k, d), v (N_k, d_v). Query block `q_block` holds rows [q_block x block_q, + block_q);
    the key tiles stream past it in order, `block_k` keys each. Computes in float64, with the updates of
    `flash_attention` (see `FlashStep`); `out` equals attention's rows of those queries.

    Bytes count elements x `dtype_bytes` (a byte count or a dtype name; 2: what an FP16 kernel moves):
    FlashAttention reads Q_i once (bq x d), each K/V tile once (bk x (d + d_v)) and writes O_i once
    (bq x d_v). Standard attention moves the same for these rows and keys plus S and P, each written
    once and read once: 4 x bq x bk numbers per tile, the N x N matrices' share of this block.
    """
    q = float_array("q", q, ndim=2).astype(np.float64)
    k = float_array("k", k, ndim=2).astype(np.float64)
    v = float_array("v", v, ndim=2).astype(np.float64)
    (n_q, d), (n_k, d_k), d_v = q.shape, k.shape, v.shape[-1]
    if d_k != d or v.shape[0] != n_k or 0 in (n_q, n_k, d, d_v):
        raise ValueError(f"q (N_q, d), k (N_k, d) and v (N_k, d_v) must be non-empty and agree, "
                         f"got {q.shape}, {k.shape}, {v.shape}")
    block_q, block_k = _check_blocks(block_q, block_k)
    q_block = positive_int("q_block", q_block, allow_zero=True)
    if q_block * block_q >= n_q:
        raise ValueError(f"q_block must be below {-(-n_q // block_q)} (N_q = {n_q} in blocks of {block_q}), got {q_block}")
    b = _dtype_bytes("dtype_bytes", dtype_bytes)
    scale = _scale(scale, d)
    q0, q1 = q_block * block_q, min((q_block + 1) * block_q, n_q)
    q_i, bq = q[q0:q1], q1 - q0
    if causal is not True and causal is not False:
        raise TypeError(f"causal must be True or False, got {causal!r}")
    if causal and n_q > n_k:
        raise ValueError(f"causal attention needs at most as many queries as keys, got N_q = {n_q} > N_k = {n_k}")
    last_key = q1 - 1 + n_k - n_q if causal else n_k - 1  # the last key any row of the block may see
    tiles = last_key // block_k + 1
    positions = np.arange(q0, q1)[:, None] + (n_k - n_q)  # (bq, 1): each row's position

    m = np.full(bq, -np.inf)
    l_i, acc = np.zeros(bq), np.zeros((bq, d_v))
    seen = np.full((bq, n_k), -np.inf)  # display only: every score seen so far
    flash = standard = bq * d * b  # Q_i read
    steps = [FlashStep(0, 0, 0, None, m, m, None, None, l_i, acc, np.zeros((bq, n_k)), flash, standard)]
    for j in range(tiles):
        k0, k1 = j * block_k, min((j + 1) * block_k, n_k)
        scores = q_i @ k[k0:k1].T * scale  # (bq, bk): on chip
        if causal:
            scores = np.where(np.arange(k0, k1)[None, :] > positions, -np.inf, scores)
        m_new = np.maximum(m, scores.max(axis=1))
        p = np.exp(scores - m_new[:, None])
        rescale = np.exp(m - m_new)  # exp(-inf) = 0 on the first tile
        l_i = rescale * l_i + p.sum(axis=1)
        acc = rescale[:, None] * acc + p @ v[k0:k1]
        seen[:, k0:k1] = scores
        flash += (k1 - k0) * (d + d_v) * b  # K_j, V_j read
        standard += (k1 - k0) * (d + d_v) * b + 4 * bq * (k1 - k0) * b  # ... and S, P written and read back
        if j == tiles - 1:  # O_i written
            flash += bq * d_v * b
            standard += bq * d_v * b
        steps.append(FlashStep(j + 1, k0, k1, scores, m, m_new, rescale, p, l_i, acc,
                               np.exp(seen - m_new[:, None]) / l_i[:, None], flash, standard))
        m = m_new
    return FlashTrace(q_block, q0, q1, block_k, n_k, d, d_v, b, tuple(steps), bool(causal), n_k - n_q)
# --8<-- [end:flash_trace]
