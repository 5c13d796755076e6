"""Triton kernels of section 2.5 against a float64 oracle.

Without a GPU the kernels run in Triton's CPU interpreter. TRITON_INTERPRET=1
must be in force when Triton and the kernels are defined, and another test
module may already have imported Triton without it (transformers imports
triton), so a module-scoped fixture runs every test here inside
`chapter2.host.kernels.interpreter()`, which switches Triton and the kernel modules
to interpreter mode and restores the environment variable afterwards. With
TRITON_INTERPRET=0 and a CUDA device the same tests run on the GPU.

Tolerance in the style of the FlashAttention tests (Dao et al., tests/test_flash_attn.py):
the kernel's largest error against a float64 oracle must be at most twice the
error of plain attention computed in the same precision, plus one unit in the
last place at 1.0 (outputs are convex combinations of v ~ N(0, 1), of order 1).
"""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import chapter2.host.kernels as kernels

INTERPRET = os.environ.get("TRITON_INTERPRET", "1") != "0"  # the interpreter unless explicitly disabled
DEVICE = "cpu" if INTERPRET else "cuda"


@pytest.fixture(scope="module", autouse=True)
def triton_mode():
    if INTERPRET:
        with kernels.interpreter():
            yield
    else:
        yield


def flash_fwd():
    from chapter2.host.kernels import flash_fwd as module

    return module


# reference ---------------------------------------------------------------------------------

def visible(n_q, n_k, causal=False, window=None):
    """Boolean (n_q, n_k) mask from the definitions: causal j <= i; window i - w < j <= i."""
    i = torch.arange(n_q)[:, None]
    j = torch.arange(n_k)[None, :]
    keep = torch.ones(n_q, n_k, dtype=torch.bool)
    if causal or window is not None:
        keep &= j <= i
    if window is not None:
        keep &= j > i - window
    return keep


def plain_attention(q, k, v, keep, scale, dtype):
    """softmax(q k^T * scale) v with the scores materialized, computed in `dtype`.

    float64 gives the oracle; a 16/32-bit dtype gives the same-precision baseline
    (softmax in float32 at least, like the upcast=False reference of the FlashAttention tests).
    """
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)  # query head h reads K/V head h // group
    v = v.repeat_interleave(group, dim=1)
    q, k, v = (x.cpu().to(dtype) for x in (q, k, v))
    scores = (q @ k.transpose(-1, -2)) * scale
    scores = scores.masked_fill(~keep, float("-inf"))
    weights = torch.softmax(scores.to(torch.promote_types(dtype, torch.float32)), dim=-1).to(dtype)
    return weights @ v


def check_against_oracle(out, q, k, v, keep, scale):
    """The FlashAttention-tests criterion: err(kernel) <= 2 err(plain, same dtype) + one ulp."""
    dtype = q.dtype
    oracle = plain_attention(q, k, v, keep, scale, torch.float64)
    baseline = plain_attention(q, k, v, keep, scale, dtype).double()
    err = (out.cpu().double() - oracle).abs().max().item()
    err_plain = (baseline - oracle).abs().max().item()
    ulp = torch.finfo(dtype).eps  # one unit in the last place at 1.0
    assert err <= 2 * err_plain + ulp, f"kernel error {err:.3g} vs plain {dtype} attention {err_plain:.3g}"
    return err


def randn(*shape, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen).to(dtype).to(DEVICE)


# FlashAttention forward --------------------------------------------------------------------

CASES = [
    # (n, d, h_q, h_kv, causal, window)
    (1, 64, 2, 2, False, None),
    (97, 40, 2, 2, False, None),
    (130, 64, 2, 1, False, None),
    (1, 40, 2, 2, True, None),
    (97, 59, 2, 2, True, None),
    (130, 64, 4, 2, True, None),
    (97, 64, 2, 2, False, 16),  # a window implies causal
    (130, 40, 4, 1, True, 50),
    (130, 64, 2, 2, True, 1),  # each token sees only itself
    (130, 59, 2, 1, True, 500),  # window longer than the sequence = causal
]


@pytest.mark.parametrize("n,d,h_q,h_kv,causal,window", CASES)
def test_flash_attention_matches_float64(n, d, h_q, h_kv, causal, window):
    q = randn(1, h_q, n, d, seed=1)
    k = randn(1, h_kv, n, d, seed=2)
    v = randn(1, h_kv, n, d, seed=3)
    out = kernels.flash_attention(q, k, v, causal=causal, window=window)
    assert out.shape == q.shape and out.dtype == q.dtype
    check_against_oracle(out, q, k, v, visible(n, n, causal, window), 1 / math.sqrt(d))


def test_flash_attention_cross_lengths_scale_and_strides():
    """N_q != N_k (no mask), a custom scale, batch 2, and q/k/v viewed from a (B, N, H, d) layout."""
    q = randn(2, 33, 2, 40, seed=4).transpose(1, 2)  # (B, H, N, d) view, not contiguous
    k = randn(2, 97, 2, 40, seed=5).transpose(1, 2)
    v = randn(2, 97, 2, 40, seed=6).transpose(1, 2)
    out = kernels.flash_attention(q, k, v, scale=0.3)
    check_against_oracle(out, q, k, v, visible(33, 97), 0.3)


@pytest.mark.parametrize("block_m,block_n", [(16, 64), (64, 16), (32, 32)])
def test_tile_shapes_do_not_change_the_result(block_m, block_n):
    """Unequal tiles move the edges of the masked and unmasked key segments."""
    n, d, w = 130, 64, 50
    q, k, v = randn(1, 2, n, d, seed=7), randn(1, 1, n, d, seed=8), randn(1, 1, n, d, seed=9)
    out, _ = flash_fwd()._forward(q, k, v, window=w, block_m=block_m, block_n=block_n)
    check_against_oracle(out, q, k, v, visible(n, n, True, w), 1 / math.sqrt(d))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_inputs(dtype):
    n, d = 97, 64
    q, k, v = (randn(1, 2, n, d, dtype=dtype, seed=s) for s in (10, 11, 12))
    out = kernels.flash_attention(q, k, v, causal=True)
    assert out.dtype == dtype
    check_against_oracle(out, q, k, v, visible(n, n, True), 1 / math.sqrt(d))


def test_very_negative_scores_keep_their_softmax():
    """Every score equal and hugely negative (q = 8, k = -8, d = 16: q.k / 4 = -256): softmax is shift
    invariant, so each query averages its visible values. Rows that meet no visible key in their first
    window block must not pin the running maximum at 0 (exp2(-369) would underflow to 0)."""
    n, d, w = 130, 16, 20
    q = torch.full((1, 1, n, d), 8.0, device=DEVICE)
    k = torch.full((1, 1, n, d), -8.0, device=DEVICE)
    v = randn(1, 1, n, d, seed=16)
    out, _ = flash_fwd()._forward(q, k, v, window=w, block_m=32, block_n=32)
    keep = visible(n, n, True, w).double()
    expected = (keep / keep.sum(-1, keepdim=True)) @ v.cpu().double()[0, 0]
    torch.testing.assert_close(out.cpu().double()[0, 0], expected, rtol=0, atol=1e-6)


def blocks_needed(n, block_m, block_n, causal, window):
    """Key blocks holding at least one (query, key) pair the mask lets through, per query block."""
    keep = visible(n, n, causal, window).numpy()
    counts = []
    for m0 in range(0, n, block_m):
        rows = keep[m0:m0 + block_m]
        counts.append(sum(rows[:, j0:j0 + block_n].any() for j0 in range(0, n, block_n)))
    return counts


@pytest.mark.parametrize("causal,window", [(False, None), (True, None), (True, 40), (True, 1)])
def test_key_blocks_outside_the_mask_are_skipped(causal, window):
    """The kernel visits exactly the key blocks with a visible pair: cost ~ N w with a window, not N^2."""
    n, d, bm, bn = 256, 16, 32, 32
    q, k, v = randn(1, 1, n, d, seed=13), randn(1, 1, n, d, seed=14), randn(1, 1, n, d, seed=15)
    _, steps = flash_fwd()._forward(q, k, v, causal=causal, window=window, block_m=bm, block_n=bn, trace=True)
    expected = blocks_needed(n, bm, bn, causal, window)
    assert steps[0, 0].tolist() == expected
    assert flash_fwd().visited_key_blocks(n, window, bm, bn, causal) == expected
    if window is not None:  # (w + block_m) / block_n blocks per query block at most, independent of n
        assert max(expected) <= math.ceil((window - 1 + bm) / bn) + 1


# decode ------------------------------------------------------------------------------------

def decode_oracle(q, k_cache, v_cache, seqlens, window, dtype):
    """Attention of q (B, H, 1, d) over cache rows [max(0, L - w), L) per batch row, in `dtype`."""
    outs = []
    for b, length in enumerate(seqlens):
        first = 0 if window is None else max(0, length - window)
        keep = torch.ones(1, length - first, dtype=torch.bool)
        outs.append(plain_attention(q[b:b + 1], k_cache[b:b + 1, :, first:length], v_cache[b:b + 1, :, first:length],
                                    keep, 1 / math.sqrt(q.shape[-1]), dtype))
    return torch.cat(outs)


DECODE_CASES = [
    # (batch, h_q, h_kv, capacity, d, seqlens, window, num_splits)
    (2, 4, 2, 130, 64, [1, 97], None, 3),
    (2, 8, 1, 130, 40, [130, 64], None, None),
    (1, 2, 2, 97, 59, [97], 16, 2),
    (2, 4, 4, 130, 64, [5, 130], 50, 8),  # more splits than blocks: empty splits must merge to nothing
    (1, 4, 2, 64, 40, [64], None, 1),
]


@pytest.mark.parametrize("batch,h_q,h_kv,capacity,d,seqlens,window,num_splits", DECODE_CASES)
def test_decode_attention_matches_float64(batch, h_q, h_kv, capacity, d, seqlens, window, num_splits):
    q = randn(batch, h_q, 1, d, seed=20)
    k_cache = randn(batch, h_kv, capacity, d, seed=21)
    v_cache = randn(batch, h_kv, capacity, d, seed=22)
    out = kernels.decode_attention(q, k_cache, v_cache, cache_seqlens=torch.tensor(seqlens), window=window,
                                   num_splits=num_splits)
    assert out.shape == q.shape
    oracle = decode_oracle(q, k_cache, v_cache, seqlens, window, torch.float64)
    baseline = decode_oracle(q, k_cache, v_cache, seqlens, window, torch.float32).double()
    err = (out.cpu().double() - oracle).abs().max().item()
    assert err <= 2 * (baseline - oracle).abs().max().item() + torch.finfo(torch.float32).eps


def test_decode_equals_the_last_row_of_prefill():
    """Decoding token N-1 against the cache of the first N tokens = row N-1 of causal prefill."""
    n, d = 97, 64
    q, k, v = randn(1, 4, n, d, seed=30), randn(1, 2, n, d, seed=31), randn(1, 2, n, d, seed=32)
    for window in (None, 20):
        prefill = kernels.flash_attention(q, k, v, causal=True, window=window)
        step = kernels.decode_attention(q[:, :, -1:], k, v, window=window, num_splits=2)
        torch.testing.assert_close(step, prefill[:, :, -1:], rtol=0, atol=2e-6)


def test_decode_half_precision():
    q = randn(2, 4, 1, 64, dtype=torch.bfloat16, seed=40)
    k_cache = randn(2, 2, 80, 64, dtype=torch.bfloat16, seed=41)
    v_cache = randn(2, 2, 80, 64, dtype=torch.bfloat16, seed=42)
    out = kernels.decode_attention(q, k_cache, v_cache, cache_seqlens=50)
    assert out.dtype == torch.bfloat16
    oracle = decode_oracle(q, k_cache, v_cache, [50, 50], None, torch.float64)
    baseline = decode_oracle(q, k_cache, v_cache, [50, 50], None, torch.bfloat16).double()
    err = (out.cpu().double() - oracle).abs().max().item()
    assert err <= 2 * (baseline - oracle).abs().max().item() + torch.finfo(torch.bfloat16).eps


# input checks ------------------------------------------------------------------------------

def test_bad_inputs_raise_clear_errors():
    q, k = randn(1, 4, 8, 16), randn(1, 2, 8, 16)
    with pytest.raises(TypeError, match="q must be a torch.Tensor"):
        kernels.flash_attention(np.zeros((1, 1, 8, 16)), k, k)
    with pytest.raises(ValueError, match="4 dimensions"):
        kernels.flash_attention(q[0], k, k)
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        kernels.flash_attention(randn(1, 3, 8, 16), k, k)
    with pytest.raises(TypeError, match="dtype of q"):
        kernels.flash_attention(q, k.double().float().half(), k)
    with pytest.raises(ValueError, match="window must be >= 1"):
        kernels.flash_attention(q, k, k, window=0)
    with pytest.raises(ValueError, match="as many queries as keys"):
        kernels.flash_attention(q, randn(1, 2, 9, 16), randn(1, 2, 9, 16), causal=True)
    with pytest.raises(ValueError, match="scale must be > 0"):
        kernels.flash_attention(q, k, k, scale=-1.0)
    with pytest.raises(ValueError, match="one new token"):
        kernels.decode_attention(q, k, k)
    with pytest.raises(ValueError, match=r"cache_seqlens must lie in \[1, 8\]"):
        kernels.decode_attention(q[:, :, :1], k, k, cache_seqlens=torch.tensor([9]))
    with pytest.raises(ValueError, match="num_splits must be >= 1"):
        kernels.decode_attention(q[:, :, :1], k, k, num_splits=0)


# packaging and the GPU path ----------------------------------------------------------------

def _run(code, env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


def test_importing_kernels_imports_neither_torch_nor_triton():
    code = "import sys, chapter2.host.kernels; print(sorted(m for m in ('torch', 'triton') if m in sys.modules))"
    result = _run(code, os.environ.copy())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.slow  # Triton compiles every kernel variant in a subprocess, 6 s
def test_kernels_compile_for_hopper():
    """Without a GPU: both kernels compile to sm_90 cubins that fit shared memory, spill at most a
    few bytes of registers; tl.dot of the forward becomes Hopper tensor-core code (wgmma) and the
    key loops are software pipelined."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    code = ("import json; from chapter2.host.kernels.compile_check import all_variants; "
            "print(json.dumps(all_variants(90, quick=True)))")
    result = _run(code, env)
    assert result.returncode == 0, result.stderr[-3000:]
    reports = json.loads(result.stdout.strip().splitlines()[-1])
    assert {r["kernel"] for r in reports} == {"flash_fwd", "flash_decode"}
    for r in reports:
        assert r["fits_shared"] and r["pipelined"] and r["cubin_bytes"] > 0, r
        assert r["spill_bytes"] is not None and r["spill_bytes"] <= 64, r
    assert all(r["wgmma"] for r in reports if r["kernel"] == "flash_fwd")
