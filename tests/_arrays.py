"""Random inputs shared by the attention tests (tests/test_attention.py, tests/test_kv_cache.py)."""

from __future__ import annotations

import numpy as np


def qkv(b, h_q, h_kv, n_q, n_k, d, d_v=None, *, seed=0, dtype=np.float64):
    """Standard-normal q (b, h_q, n_q, d), k (b, h_kv, n_k, d), v (b, h_kv, n_k, d_v or d), from `seed`."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, h_q, n_q, d)).astype(dtype)
    k = rng.standard_normal((b, h_kv, n_k, d)).astype(dtype)
    v = rng.standard_normal((b, h_kv, n_k, d_v or d)).astype(dtype)
    return q, k, v
