"""Decode attention against a KV cache, split across programs (flash-decoding), in Triton (section 2.5).

In decode there is one new query per sequence, so the FlashAttention grid
(query blocks x heads) would have only B x H programs, too few to fill a GPU
while the whole KV cache must be read. Flash-decoding (Dao, Haziza, Massa,
Sizov 2023, https://crfm.stanford.edu/2023/10/12/flashdecoding.html) also
splits the cache length across programs:

1. `_decode_split`: program (b, kv head, split) streams its slice of the
   cache and writes a partial result in paper notation: the row maximum m,
   the sum l of exp(score - m) and the unnormalized acc = sum exp(score - m) v.
2. `_decode_reduce`: program (b, query head) merges the splits,
   M = max_s m_s, out = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s.

Decode is memory bound (section 2.4), so each K/V block is loaded once per KV
head: the GROUP query heads that share it (grouped-query attention) sit in the
rows of one tile, padded to 16 rows for tl.dot. The kernel reads each cache
entry once, which is what the benchmark compares with the device's copy
bandwidth.

Sequence lengths may differ per batch row (`cache_seqlens`); a window w keeps
the last w positions, keys j with L - w <= j < L for the new token at
position L - 1 (the same convention as `flash_fwd`).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._common import (check_device, check_head_dim, check_heads, check_same, check_scale, check_tensor,
                      check_window, dot_precision, interpreting, padded_head_dim, positive_int, unit_stride)

INTERPRET = interpreting()  # read once, when the kernels below are defined
LOG2E = 1.4426950408889634


@triton.jit
def _decode_split(Q, K, V, Seqlens, M_part, L_part, Acc_part,
                  stride_qb, stride_qh,
                  stride_kb, stride_kh, stride_kn,
                  stride_vb, stride_vh, stride_vn,
                  n_kv_heads, n_splits, window, qk_scale,
                  GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, HEAD_DIM: tl.constexpr, D_PAD: tl.constexpr,
                  BLOCK_N: tl.constexpr, HAS_WINDOW: tl.constexpr, UPCAST: tl.constexpr,
                  DOT_PRECISION: tl.constexpr):
    pid_bh = tl.program_id(0)
    split = tl.program_id(1)
    b = (pid_bh // n_kv_heads).to(tl.int64)  # 64-bit offsets: caches can exceed 2**31 elements
    h_kv = pid_bh % n_kv_heads

    seqlen = tl.load(Seqlens + b)
    first = 0
    if HAS_WINDOW:
        first = tl.maximum(seqlen - window, 0)
    # this split's slice of [first, seqlen), a whole number of blocks long
    split_len = tl.cdiv(tl.cdiv(seqlen - first, n_splits), BLOCK_N) * BLOCK_N
    start = first + split * split_len
    end = tl.minimum(start + split_len, seqlen)

    rows = tl.arange(0, GROUP_PAD)  # query heads h_kv * GROUP + rows share this K/V head
    offs_d = tl.arange(0, D_PAD)
    row_ok = rows < GROUP
    d_ok = offs_d < HEAD_DIM
    heads = h_kv * GROUP + rows
    q = tl.load(Q + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :],
                mask=row_ok[:, None] & d_ok[None, :], other=0.0)  # (GROUP_PAD, D)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = K + b * stride_kb + h_kv * stride_kh
    v_base = V + b * stride_vb + h_kv * stride_vh

    m_i = tl.zeros([GROUP_PAD], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([GROUP_PAD], dtype=tl.float32)
    acc = tl.zeros([GROUP_PAD, D_PAD], dtype=tl.float32)
    offs_n = tl.arange(0, BLOCK_N)
    for start_n in range(start, end, BLOCK_N):
        cols = start_n + offs_n
        col_ok = cols < end
        k = tl.load(k_base + cols[None, :] * stride_kn + offs_d[:, None],
                    mask=col_ok[None, :] & d_ok[:, None], other=0.0)  # (D, BLOCK_N): K^T tile
        v = tl.load(v_base + cols[:, None] * stride_vn + offs_d[None, :],
                    mask=col_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_N, D)
        if UPCAST:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk = tl.dot(q, k, input_precision=DOT_PRECISION) * qk_scale  # (GROUP_PAD, BLOCK_N), log2 units
        qk = tl.where(col_ok[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))  # finite: every block holds at least one key
        p = tl.math.exp2(qk - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_ij

    # partials laid out (B, H_q, n_splits) and (B, H_q, n_splits, D_PAD), float32
    part = (b * n_kv_heads * GROUP + heads) * n_splits + split
    tl.store(M_part + part, m_i, mask=row_ok)
    tl.store(L_part + part, l_i, mask=row_ok)
    tl.store(Acc_part + part[:, None] * D_PAD + offs_d[None, :], acc, mask=row_ok[:, None])


@triton.jit
def _decode_reduce(M_part, L_part, Acc_part, Out, stride_ob, stride_oh, n_heads, n_splits,
                   HEAD_DIM: tl.constexpr, D_PAD: tl.constexpr, SPLITS_PAD: tl.constexpr):
    pid_bh = tl.program_id(0)
    b = pid_bh // n_heads
    h = pid_bh % n_heads
    splits = tl.arange(0, SPLITS_PAD)
    offs_d = tl.arange(0, D_PAD)
    split_ok = splits < n_splits
    base = pid_bh * n_splits + splits
    m = tl.load(M_part + base, mask=split_ok, other=float("-inf"))
    l = tl.load(L_part + base, mask=split_ok, other=0.0)  # noqa: E741 - the paper's l (softmax denominator)
    acc = tl.load(Acc_part + base[:, None] * D_PAD + offs_d[None, :], mask=split_ok[:, None], other=0.0)
    m_max = tl.max(m, 0)  # finite: the split holding the newest key is never empty
    w = tl.math.exp2(m - m_max)  # 0 for empty splits (m = -inf)
    l_sum = tl.sum(l * w, 0)
    out = tl.sum(acc * w[:, None], 0) / l_sum
    tl.store(Out + b * stride_ob + h * stride_oh + offs_d, out.to(Out.dtype.element_ty), mask=offs_d < HEAD_DIM)


INTERPRETER_CONFIG = {"BLOCK_N": 64}
MAX_SPLITS = 64  # the merge kernel holds every split of a row in one tile
GPU_CONFIGS = [
    triton.Config({"BLOCK_N": 64}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_N": 128}, num_warps=4, num_stages=3),
    triton.Config({"BLOCK_N": 64}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_N": 128}, num_warps=8, num_stages=2),
]
_decode_split_tuned = None if INTERPRET else triton.autotune(
    configs=GPU_CONFIGS, key=["n_splits", "HEAD_DIM", "GROUP", "HAS_WINDOW"],
)(_decode_split)


def default_num_splits(batch: int, kv_heads: int, longest: int, device) -> int:
    """Splits per (sequence, KV head): enough programs for about 8 per SM, each split >= 512 keys, at most 64.

    Many short splits keep the last wave of programs small (a GPU runs a few
    programs per SM at once); the merge costs (d + 2) floats per split and
    query head, under 1 % of the cache read for d = 128 and 512-key splits.
    """
    if device.type == "cuda":
        target = 8 * torch.cuda.get_device_properties(device).multi_processor_count
        wanted, per_split = triton.cdiv(target, batch * kv_heads), 512
    else:  # interpreter: a few splits, so the merge is exercised
        wanted, per_split = triton.cdiv(4, batch * kv_heads), 64
    return max(1, min(wanted, triton.cdiv(longest, per_split), MAX_SPLITS))


def decode_attention(q, k_cache, v_cache, *, cache_seqlens=None, window: int | None = None,
                     scale: float | None = None, num_splits: int | None = None):
    """Attention of one new token per sequence over its KV cache (decode step, section 2.2).

    q: (B, H_q, 1, d); k_cache, v_cache: (B, H_kv, S, d), H_q a multiple of
    H_kv. cache_seqlens: None (all S positions valid), an int, or an int
    tensor (B,) of valid lengths L_b in [1, S]; the new token's key and value
    are expected at position L_b - 1 already. window=w keeps keys
    L_b - w <= j < L_b. num_splits: programs per (sequence, KV head) along the
    cache (default: enough to fill the device). Returns (B, H_q, 1, d).
    """
    check_tensor("q", q)
    check_tensor("k_cache", k_cache)
    check_tensor("v_cache", v_cache)
    check_same("k_cache", k_cache, q, "q")
    check_same("v_cache", v_cache, q, "q")
    check_device(q, INTERPRET)
    batch, h_q, n_new, d = q.shape
    if n_new != 1:
        raise ValueError(f"q must hold one new token per sequence, (B, H_q, 1, d); got shape {tuple(q.shape)}")
    if k_cache.shape != v_cache.shape:
        raise ValueError(f"k_cache and v_cache must have the same shape, got {tuple(k_cache.shape)} and {tuple(v_cache.shape)}")
    if k_cache.shape[0] != batch or k_cache.shape[3] != d:
        raise ValueError(f"k_cache must be (B={batch}, H_kv, S, d={d}), got {tuple(k_cache.shape)}")
    h_kv, capacity = k_cache.shape[1], k_cache.shape[2]
    group = check_heads(h_q, h_kv)
    check_head_dim(d)
    window = check_window(window)
    scale = check_scale(scale, d)
    seqlens, longest = _check_seqlens(cache_seqlens, batch, capacity, q.device)
    if window is not None:
        longest = min(window, longest)  # keys a query reads at most
    if num_splits is None:
        num_splits = default_num_splits(batch, h_kv, longest, q.device)
    num_splits = positive_int("num_splits", num_splits)
    if num_splits > MAX_SPLITS:
        raise ValueError(f"num_splits must be <= {MAX_SPLITS}, got {num_splits}")

    q, k_cache, v_cache = unit_stride(q), unit_stride(k_cache), unit_stride(v_cache)
    d_pad = padded_head_dim(d)
    m_part = torch.empty((batch, h_q, num_splits), dtype=torch.float32, device=q.device)
    l_part = torch.empty_like(m_part)
    acc_part = torch.empty((batch, h_q, num_splits, d_pad), dtype=torch.float32, device=q.device)
    params = dict(
        n_kv_heads=h_kv, n_splits=num_splits, window=window or capacity, qk_scale=scale * LOG2E,
        GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=d, D_PAD=d_pad,
        HAS_WINDOW=window is not None, UPCAST=INTERPRET, DOT_PRECISION=dot_precision(q.dtype),
    )
    args = (q, k_cache, v_cache, seqlens, m_part, l_part, acc_part,
            q.stride(0), q.stride(1), *k_cache.stride()[:3], *v_cache.stride()[:3])
    grid = (batch * h_kv, num_splits)
    if INTERPRET:
        _decode_split[grid](*args, **params, **INTERPRETER_CONFIG)
    else:
        _decode_split_tuned[grid](*args, **params)

    out = torch.empty_like(q)
    _decode_reduce[(batch * h_q,)](m_part, l_part, acc_part, out, out.stride(0), out.stride(1), h_q, num_splits,
                                   HEAD_DIM=d, D_PAD=d_pad, SPLITS_PAD=triton.next_power_of_2(num_splits))
    return out


def _check_seqlens(cache_seqlens, batch: int, capacity: int, device):
    """(lengths as an int32 tensor (B,) on `device`, the longest length), each length in [1, capacity].

    None and ints are checked on the host; a tensor on the GPU costs one device sync to check.
    """
    if cache_seqlens is None or not isinstance(cache_seqlens, torch.Tensor):
        length = capacity if cache_seqlens is None else positive_int("cache_seqlens", cache_seqlens)
        if length > capacity:
            raise ValueError(f"cache_seqlens must lie in [1, {capacity}] (the cache length), got {length}")
        return torch.full((batch,), length, dtype=torch.int32, device=device), length
    if cache_seqlens.dtype.is_floating_point or cache_seqlens.dtype == torch.bool or cache_seqlens.shape != (batch,):
        raise ValueError(f"cache_seqlens must be an integer tensor of shape ({batch},), "
                         f"got {cache_seqlens.dtype} {tuple(cache_seqlens.shape)}")
    lo, hi = int(cache_seqlens.min().item()), int(cache_seqlens.max().item())
    if lo < 1 or hi > capacity:
        raise ValueError(f"cache_seqlens must lie in [1, {capacity}] (the cache length), got min {lo}, max {hi}")
    return cache_seqlens.to(device=device, dtype=torch.int32).contiguous(), hi


__all__ = ["decode_attention", "default_num_splits", "INTERPRET"]
