"""FlashAttention forward in Triton: causal, sliding window, grouped-query (section 2.5).

One program owns a block of BLOCK_M query rows of one (batch, query head) and
streams the keys and values past it in blocks of BLOCK_N, keeping the softmax
online in paper notation (Dao et al. 2022, arXiv:2205.14135, Algorithm 1, with
the FlashAttention-2 loop order and deferred rescaling, arXiv:2307.08691):

    m_i  running row maximum of the scaled scores
    l_i  running row sum of exp(score - m_i)
    acc  running sum of exp(score - m_i) * v, divided by l_i at the end

so the N x N score matrix never exists in memory: the kernel reads Q, K, V and
writes O once (plus re-reading K, V once per query block).

Masks (the conventions of `chapter2.attention`, the same as Hugging Face transformers):

- causal: query i sees keys j <= i;
- sliding window w: query i sees keys j with i - w < j <= i (w keys, itself
  included); a window implies causal.

Work skipping: the key loop of a query block [m0, m0 + BLOCK_M) runs only over
key blocks that some row of the block can see, [lo, hi), with
lo = m0 - w + 1 and hi = m0 + BLOCK_M (clipped to [0, N)). So causal attention
does about half the blocks of full attention, and a window does about
N / BLOCK_M * (w + BLOCK_M) / BLOCK_N blocks, cost growing as N w instead of
N^2. The range is cut into three segments: a left edge where the window mask
applies, a middle where every (row, key) pair is visible and no mask is
computed, and a right edge (the diagonal and the tail past N) that is masked.

Grouped-query attention: query head h reads key/value head h // (H_q / H_kv);
K and V are never repeated in memory.

Head dims that are not a power of two (40, 59, ...) are padded to the next
power of two inside the kernel with masked loads and stores.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._common import (check_device, check_head_dim, check_heads, check_same, check_scale, check_tensor,
                      check_window, dot_precision, interpreting, padded_head_dim, unit_stride)

INTERPRET = interpreting()  # read once, when the kernels below are defined
LOG2E = 1.4426950408889634  # exp(x) = exp2(x * log2(e)); exp2 is the fast hardware path


@triton.jit
def _key_block_bounds(m0, n_keys, window, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr):
    """Key ranges [lo, full_lo) masked, [full_lo, full_hi) unmasked, [full_hi, hi) masked for rows [m0, m0+BLOCK_M).

    Boundaries of the middle segment are multiples of BLOCK_N; lo is rounded
    down to one. Without a window the left segment is empty (lo = full_lo = 0).
    """
    if CAUSAL:
        hi = tl.minimum(m0 + BLOCK_M, n_keys)
        if HAS_WINDOW:
            lo = tl.maximum(m0 - window + 1, 0) // BLOCK_N * BLOCK_N
            # key j is visible to every row of the block iff m0 + BLOCK_M - w <= j <= m0
            full_lo = tl.cdiv(tl.maximum(m0 + BLOCK_M - window, 0), BLOCK_N) * BLOCK_N
            full_lo = tl.minimum(tl.maximum(full_lo, lo), hi)
        else:
            lo = 0
            full_lo = 0
        full_hi = (m0 + 1) // BLOCK_N * BLOCK_N
        full_hi = tl.minimum(tl.maximum(full_hi, full_lo), hi)
    else:
        lo = 0
        full_lo = 0
        full_hi = n_keys // BLOCK_N * BLOCK_N
        hi = n_keys
    return lo, full_lo, full_hi, hi


# --8<-- [start:attn_fwd_inner]
@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, steps, q, k_base, v_base, stride_kn, stride_vn, offs_m, offs_d,
                    start, end, n_keys, window, qk_scale,
                    HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, EVEN_D: tl.constexpr,
                    MASKED: tl.constexpr, CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr,
                    UPCAST: tl.constexpr, DOT_PRECISION: tl.constexpr):
    """Stream key/value blocks [start, end) past the query tile q (BLOCK_M, D)."""
    offs_n = tl.arange(0, BLOCK_N)
    d_ok = offs_d < HEAD_DIM
    for start_n in range(start, end, BLOCK_N):
        cols = start_n + offs_n
        k_ptrs = k_base + cols[None, :] * stride_kn + offs_d[:, None]  # (D, BLOCK_N): K^T tile
        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :]  # (BLOCK_N, D)
        if MASKED or not EVEN_D:
            col_ok = cols < n_keys
            k = tl.load(k_ptrs, mask=col_ok[None, :] & d_ok[:, None], other=0.0)
            v = tl.load(v_ptrs, mask=col_ok[:, None] & d_ok[None, :], other=0.0)
        else:
            k = tl.load(k_ptrs)
            v = tl.load(v_ptrs)
        if UPCAST:  # interpreter: 16-bit arithmetic is unreliable there, compute in float32
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk = tl.dot(q, k, input_precision=DOT_PRECISION) * qk_scale  # (BLOCK_M, BLOCK_N), log2 units
        if MASKED:
            keep = (cols < n_keys)[None, :]
            if CAUSAL:
                keep = keep & (cols[None, :] <= offs_m[:, None])
            if HAS_WINDOW:
                keep = keep & (cols[None, :] > offs_m[:, None] - window)
            qk = tl.where(keep, qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        m_sub = m_ij
        if MASKED:  # a row may have seen no key yet: subtract 0, not -inf, so exp2 gives 0, not NaN
            m_sub = tl.where(m_ij == float("-inf"), 0.0, m_ij)
        p = tl.math.exp2(qk - m_sub[:, None])
        alpha = tl.math.exp2(m_i - m_sub)  # rescales what was accumulated under the old maximum
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=DOT_PRECISION)
        m_i = m_ij
        steps += 1
    return acc, l_i, m_i, steps
# --8<-- [end:attn_fwd_inner]


@triton.jit
def _attn_fwd(Q, K, V, Out, Steps,
              stride_qb, stride_qh, stride_qn,
              stride_kb, stride_kh, stride_kn,
              stride_vb, stride_vh, stride_vn,
              stride_ob, stride_oh, stride_on,
              n_heads, n_queries, n_keys, window, qk_scale,
              GROUP: tl.constexpr, HEAD_DIM: tl.constexpr, D_PAD: tl.constexpr, EVEN_D: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
              CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr,
              UPCAST: tl.constexpr, DOT_PRECISION: tl.constexpr, TRACE: tl.constexpr):
    start_m = tl.program_id(0)
    if CAUSAL:  # the last query blocks see the most keys: start them first, so the tail of the grid is light
        start_m = tl.num_programs(0) - 1 - start_m
    pid_bh = tl.program_id(1)
    b = (pid_bh // n_heads).to(tl.int64)  # 64-bit offsets: caches can exceed 2**31 elements
    h = pid_bh % n_heads
    h_kv = h // GROUP  # grouped-query attention: GROUP query heads share one K/V head

    m0 = start_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, D_PAD)
    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qn + offs_d[None, :]
    row_ok = offs_m < n_queries
    d_ok = offs_d < HEAD_DIM
    q = tl.load(q_ptrs, mask=row_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_M, D)
    if UPCAST:
        q = q.to(tl.float32)
    k_base = K + b * stride_kb + h_kv * stride_kh
    v_base = V + b * stride_vb + h_kv * stride_vh

    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D_PAD], dtype=tl.float32)
    steps = tl.full([], 0, tl.int32)  # key blocks visited (a tensor: a literal 0 would be a constexpr)

    lo, full_lo, full_hi, hi = _key_block_bounds(m0, n_keys, window, BLOCK_M, BLOCK_N, CAUSAL, HAS_WINDOW)
    if HAS_WINDOW:  # left edge: keys that fall out of the window for the block's last rows (empty otherwise)
        acc, l_i, m_i, steps = _attn_fwd_inner(acc, l_i, m_i, steps, q, k_base, v_base, stride_kn, stride_vn,
                                               offs_m, offs_d, lo, full_lo, n_keys, window, qk_scale,
                                               HEAD_DIM, BLOCK_N, EVEN_D, True, CAUSAL, HAS_WINDOW,
                                               UPCAST, DOT_PRECISION)
    # middle: every row sees every key, no mask
    acc, l_i, m_i, steps = _attn_fwd_inner(acc, l_i, m_i, steps, q, k_base, v_base, stride_kn, stride_vn,
                                           offs_m, offs_d, full_lo, full_hi, n_keys, window, qk_scale,
                                           HEAD_DIM, BLOCK_N, EVEN_D, False, CAUSAL, HAS_WINDOW,
                                           UPCAST, DOT_PRECISION)
    # right edge: the causal diagonal and the tail past n_keys
    acc, l_i, m_i, steps = _attn_fwd_inner(acc, l_i, m_i, steps, q, k_base, v_base, stride_kn, stride_vn,
                                           offs_m, offs_d, full_hi, hi, n_keys, window, qk_scale,
                                           HEAD_DIM, BLOCK_N, EVEN_D, True, CAUSAL, HAS_WINDOW,
                                           UPCAST, DOT_PRECISION)

    l_i = tl.where(l_i == 0.0, 1.0, l_i)  # padding rows past n_queries may see no key
    out = acc / l_i[:, None]
    o_ptrs = Out + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_on + offs_d[None, :]
    tl.store(o_ptrs, out.to(Out.dtype.element_ty), mask=row_ok[:, None] & d_ok[None, :])
    if TRACE:  # how many key blocks this program visited (tests check the window skips the rest)
        tl.store(Steps + pid_bh * tl.num_programs(0) + start_m, steps)


# Fixed tile sizes for the interpreter (it cannot autotune over several configs) and a small
# search space on GPUs: 8 warps (two Hopper warpgroups) with BLOCK_M = 128, as in Triton's
# tutorial 06. For sm_90 each config compiles with at most a few bytes of register spills in
# every mode (`python -m chapter2.host.kernels.compile_check` runs ptxas -v); 128 x 64 with 4 warps
# spilled hundreds of bytes and was dropped.
INTERPRETER_CONFIG = {"BLOCK_M": 64, "BLOCK_N": 64}
GPU_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_warps=8, num_stages=2),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_warps=8, num_stages=2),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=8, num_stages=3),
]
_attn_fwd_tuned = None if INTERPRET else triton.autotune(
    configs=GPU_CONFIGS, key=["n_queries", "n_keys", "HEAD_DIM", "GROUP", "CAUSAL", "HAS_WINDOW"],
)(_attn_fwd)


def flash_attention(q, k, v, *, causal: bool = False, window: int | None = None, scale: float | None = None):
    """Attention softmax(q k^T * scale [+ mask]) v without materializing the scores.

    q: (B, H_q, N_q, d); k, v: (B, H_kv, N_k, d) with H_q a multiple of H_kv
    (grouped-query attention). float16, bfloat16 or float32, on a CUDA device
    (or the CPU under TRITON_INTERPRET=1). Returns (B, H_q, N_q, d) in q's dtype.

    causal: query i sees keys j <= i. window=w: query i sees keys
    i - w < j <= i (implies causal). Both need N_q == N_k. scale defaults to
    1/sqrt(d).
    """
    out, _ = _forward(q, k, v, causal=causal, window=window, scale=scale)
    return out


def _forward(q, k, v, *, causal=False, window=None, scale=None, block_m=None, block_n=None, trace=False):
    """`flash_attention` plus optional fixed tiles and the per-program count of key blocks visited.

    Returns (out, steps) with steps shaped (B, H_q, number of query blocks), or None without `trace`.
    """
    check_tensor("q", q)
    check_tensor("k", k)
    check_tensor("v", v)
    check_same("k", k, q, "q")
    check_same("v", v, q, "q")
    check_device(q, INTERPRET)
    if not isinstance(causal, bool):
        raise TypeError(f"causal must be a bool, got {causal!r}")
    window = check_window(window)
    batch, h_q, n_q, d = q.shape
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    if k.shape[0] != batch or k.shape[3] != d:
        raise ValueError(f"k must be (B={batch}, H_kv, N_k, d={d}), got {tuple(k.shape)}")
    h_kv, n_k = k.shape[1], k.shape[2]
    group = check_heads(h_q, h_kv)
    check_head_dim(d)
    causal = causal or window is not None  # a window implies causal
    if causal and n_q != n_k:
        raise ValueError(f"causal or windowed attention needs as many queries as keys, got N_q={n_q}, N_k={n_k}")
    scale = check_scale(scale, d)

    q, k, v = unit_stride(q), unit_stride(k), unit_stride(v)
    out = torch.empty_like(q)
    d_pad = padded_head_dim(d)
    params = dict(
        n_heads=h_q, n_queries=n_q, n_keys=n_k, window=window if window is not None else n_k,
        qk_scale=scale * LOG2E, GROUP=group, HEAD_DIM=d, D_PAD=d_pad, EVEN_D=d == d_pad, CAUSAL=causal,
        HAS_WINDOW=window is not None, UPCAST=INTERPRET, DOT_PRECISION=dot_precision(q.dtype),
    )
    strides = (*q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *out.stride()[:3])

    if block_m is None and block_n is None and not INTERPRET and not trace:
        def grid(meta):
            return (triton.cdiv(n_q, meta["BLOCK_M"]), batch * h_q)

        _attn_fwd_tuned[grid](q, k, v, out, out, *strides, TRACE=False, **params)
        return out, None

    block_m = block_m or INTERPRETER_CONFIG["BLOCK_M"]
    block_n = block_n or INTERPRETER_CONFIG["BLOCK_N"]
    for name, value in (("block_m", block_m), ("block_n", block_n)):
        if value < 16 or value & (value - 1):
            raise ValueError(f"{name} must be a power of two >= 16, got {value}")
    n_blocks = triton.cdiv(n_q, block_m)
    steps = torch.zeros((batch, h_q, n_blocks), dtype=torch.int32, device=q.device)
    extra = {} if INTERPRET else {"num_warps": 8 if block_m * d_pad >= 128 * 128 else 4, "num_stages": 2}
    _attn_fwd[(n_blocks, batch * h_q)](q, k, v, out, steps, *strides, BLOCK_M=block_m, BLOCK_N=block_n,
                                      TRACE=trace, **params, **extra)
    return out, (steps if trace else None)


def visited_key_blocks(n: int, window: int | None, block_m: int, block_n: int, causal: bool = True) -> list[int]:
    """Key blocks the kernel visits for each query block, from the loop bounds above (host-side mirror).

    Used by tests (against the kernel's own count) and benchmarks (work done).
    """
    w = n if window is None else window
    counts = []
    for m0 in range(0, n, block_m):
        if causal or window is not None:
            hi = min(m0 + block_m, n)
            lo = max(m0 - w + 1, 0) // block_n * block_n
        else:
            lo, hi = 0, n
        counts.append(math.ceil((hi - lo) / block_n))
    return counts


__all__ = ["flash_attention", "visited_key_blocks", "INTERPRET"]
