"""Validate every kernel against a float64 oracle at real shapes: `python -m chapter2.host.kernels.validate`.

llm.c's rule: every kernel version is checked against a reference before it is
timed. This module does that on the GPU at the shapes the benchmarks use
(bf16, d = 128, N = 8192; decode over a KV cache of more than 1 GB; a 4096
window over 16k tokens) and at awkward sizes (N = 1025, d = 40 / 59 / 64,
fp16 / fp32). The criterion is the FlashAttention tests' one: the kernel's
largest error against float64 attention is at most twice the error of plain
attention computed in the kernel's precision (scores materialized, softmax in
float32), plus one unit in the last place at 1.0.

The oracle and the plain baseline are computed in chunks of query rows per
head, so a 16k x 16k float64 score matrix never exists at once. Needs torch
and triton only (no numpy). `--size tiny` runs toy shapes, e.g. under
TRITON_INTERPRET=1 on a CPU, to check this script itself.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import torch

from ...devices import device_name
from ._common import interpreting

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}

# (name, B, H_q, H_kv, N, d, dtype, causal, window, fixed tiles or None for autotuned)
FORWARD_CASES = {
    "device": [
        ("prefill bf16 d128 N8192 full GQA", 1, 32, 8, 8192, 128, "bf16", False, None, None),
        ("prefill bf16 d128 N8192 causal GQA", 1, 32, 8, 8192, 128, "bf16", True, None, None),
        ("prefill bf16 d128 N16384 window4096", 1, 8, 8, 16384, 128, "bf16", True, 4096, None),
        ("awkward fp16 d40 N1025 causal", 2, 4, 2, 1025, 40, "fp16", True, None, (64, 64)),
        ("awkward bf16 d59 N1025 window100", 2, 4, 4, 1025, 59, "bf16", True, 100, (64, 64)),
        ("awkward fp32 d64 N97 full (ieee dot)", 1, 4, 1, 97, 64, "fp32", False, None, (64, 64)),
    ],
    "tiny": [
        ("tiny bf16 d64 N130 causal GQA", 1, 4, 2, 130, 64, "bf16", True, None, None),
        ("tiny fp16 d40 N97 window16", 1, 2, 2, 97, 40, "fp16", True, 16, (32, 32)),
        ("tiny fp32 d59 N33 full", 1, 2, 1, 33, 59, "fp32", False, None, None),
    ],
}

# (name, B, H_q, H_kv, S, d, dtype, window, lengths: "full" or "ragged")
DECODE_CASES = {
    "device": [
        ("decode bf16 d128 S32768 B8 GQA (1.07 GB cache)", 8, 32, 8, 32768, 128, "bf16", None, "full"),
        ("decode bf16 d128 S32768 B8 ragged lengths", 8, 32, 8, 32768, 128, "bf16", None, "ragged"),
        ("decode bf16 d128 S32768 window4096", 8, 32, 8, 32768, 128, "bf16", 4096, "ragged"),
        ("decode fp16 d59 S1025 MQA", 3, 8, 1, 1025, 59, "fp16", None, "ragged"),
    ],
    "tiny": [
        ("tiny decode bf16 d64 S130 GQA", 2, 4, 2, 130, 64, "bf16", None, "ragged"),
        ("tiny decode fp32 d40 S97 window20", 2, 4, 1, 97, 40, "fp32", 20, "full"),
    ],
}


def _chunked_attention(q, k, v, *, causal, window, scale, dtype, rows=2048):
    """softmax(q k^T scale + mask) v in `dtype` (softmax at least float32), query rows in chunks.

    q (B, H_q, N_q, d); k, v (B, H_kv, N_k, d). Query row i sits at position
    i + N_k - N_q (so one decode query sees the whole cache).
    """
    b, h_q, n_q, d = q.shape
    h_kv, n_k = k.shape[1], k.shape[2]
    group = h_q // h_kv
    out = torch.empty(q.shape, dtype=torch.float64, device=q.device)
    keys = torch.arange(n_k, device=q.device)[None, :]
    soft = torch.promote_types(dtype, torch.float32)
    for h in range(h_q):
        kh = k[:, h // group].to(dtype)  # (B, N_k, d)
        vh = v[:, h // group].to(dtype)
        for r0 in range(0, n_q, rows):
            qh = q[:, h, r0:r0 + rows].to(dtype)  # (B, r, d)
            scores = (qh @ kh.transpose(-1, -2)) * scale  # (B, r, N_k)
            pos = torch.arange(r0, r0 + qh.shape[1], device=q.device)[:, None] + (n_k - n_q)
            keep = torch.ones((pos.shape[0], n_k), dtype=torch.bool, device=q.device)
            if causal or window is not None:
                keep = keep & (keys <= pos)
            if window is not None:
                keep = keep & (keys > pos - window)
            scores = scores.masked_fill(~keep, float("-inf"))
            weights = torch.softmax(scores.to(soft), dim=-1).to(dtype)
            out[:, h, r0:r0 + rows] = (weights @ vh).double()
    return out


def _compare(out, q, k, v, *, causal, window, scale):
    oracle = _chunked_attention(q, k, v, causal=causal, window=window, scale=scale, dtype=torch.float64)
    plain = _chunked_attention(q, k, v, causal=causal, window=window, scale=scale, dtype=q.dtype)
    err = (out.double() - oracle).abs().max().item()
    err_plain = (plain - oracle).abs().max().item()
    ulp = torch.finfo(q.dtype).eps  # one unit in the last place at 1.0
    return {"max_err": err, "max_err_plain_same_dtype": err_plain, "bound": 2 * err_plain + ulp,
            "ok": bool(err <= 2 * err_plain + ulp and math.isfinite(err))}


def _randn(shape, dtype, device, gen):
    return torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(dtype)


def check_forward(case, device):
    from . import flash_fwd

    name, b, h_q, h_kv, n, d, dtype, causal, window, tiles = case
    gen = torch.Generator(device=device).manual_seed(0)
    dt = DTYPES[dtype]
    q = _randn((b, h_q, n, d), dt, device, gen)
    k = _randn((b, h_kv, n, d), dt, device, gen)
    v = _randn((b, h_kv, n, d), dt, device, gen)
    start = time.perf_counter()
    if tiles is None:
        out = flash_fwd.flash_attention(q, k, v, causal=causal, window=window)
    else:
        out, _ = flash_fwd._forward(q, k, v, causal=causal, window=window, block_m=tiles[0], block_n=tiles[1])
    seconds = time.perf_counter() - start  # includes compilation / autotuning on first use
    report = _compare(out, q, k, v, causal=causal, window=window, scale=1 / math.sqrt(d))
    return {"kernel": "flash_attention", "case": name, "shape": [b, h_q, h_kv, n, d], "dtype": dtype,
            "causal": causal, "window": window, "tiles": tiles, "first_call_s": round(seconds, 3), **report}


def check_decode(case, device):
    from . import flash_decode

    name, b, h_q, h_kv, s, d, dtype, window, lengths = case
    gen = torch.Generator(device=device).manual_seed(1)
    dt = DTYPES[dtype]
    q = _randn((b, h_q, 1, d), dt, device, gen)
    k_cache = _randn((b, h_kv, s, d), dt, device, gen)
    v_cache = _randn((b, h_kv, s, d), dt, device, gen)
    if lengths == "full":
        seqlens = [s] * b
    else:  # spread over [1, s], the last one full
        seqlens = [max(1, (s * (i + 1)) // b - 7 * i) for i in range(b)]
        seqlens[-1] = s
    start = time.perf_counter()
    out = flash_decode.decode_attention(q, k_cache, v_cache, window=window,
                                        cache_seqlens=torch.tensor(seqlens, device=device))
    seconds = time.perf_counter() - start
    reports = []
    for i, length in enumerate(seqlens):  # oracle per sequence: one query at position length - 1
        reports.append(_compare(out[i:i + 1], q[i:i + 1], k_cache[i:i + 1, :, :length], v_cache[i:i + 1, :, :length],
                                causal=True, window=window, scale=1 / math.sqrt(d)))
    worst = max(reports, key=lambda r: r["max_err"] - r["bound"])
    cache_bytes = 2 * k_cache.numel() * k_cache.element_size()
    return {"kernel": "decode_attention", "case": name, "shape": [b, h_q, h_kv, s, d], "dtype": dtype,
            "window": window, "seqlens": seqlens, "kv_cache_bytes": cache_bytes, "first_call_s": round(seconds, 3),
            **{key: worst[key] for key in ("max_err", "max_err_plain_same_dtype", "bound")},
            "ok": all(r["ok"] for r in reports)}


def run(size: str = "device", device: str | None = None) -> list[dict]:
    """Run every check for `size` ('device' or 'tiny'); returns one report per case."""
    if size not in FORWARD_CASES:
        raise ValueError(f"size must be one of {sorted(FORWARD_CASES)}, got {size!r}")
    if device is None:
        device = "cpu" if interpreting() else "cuda"
    results = []
    for case in FORWARD_CASES[size]:
        results.append(_guard(check_forward, case, device))
        _print(results[-1])
    for case in DECODE_CASES[size]:
        results.append(_guard(check_decode, case, device))
        _print(results[-1])
    return results


def _guard(check, case, device):
    """A crash in one case is a failed case, not a crashed script."""
    try:
        return check(case, device)
    except Exception as err:  # noqa: BLE001 - reported, and the case counts as failed
        return {"case": case[0], "ok": False, "error": f"{type(err).__name__}: {err}"}
    finally:
        if device == "cuda":
            torch.cuda.empty_cache()


def _print(r):
    if "error" in r:
        print(f"FAIL  {r['case']}: {r['error']}", flush=True)
        return
    print(f"{'ok  ' if r['ok'] else 'FAIL'}  {r['case']:<48} err {r['max_err']:.3g}  plain {r['max_err_plain_same_dtype']:.3g}"
          f"  bound {r['bound']:.3g}  ({r['first_call_s']} s)", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="device", choices=sorted(FORWARD_CASES))
    parser.add_argument("--json", help="write the reports to this file")
    args = parser.parse_args(argv)
    results = run(args.size)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"size": args.size, "interpreter": interpreting(), "torch": torch.__version__,
                       "device": device_name("cuda" if torch.cuda.is_available() and not interpreting() else "cpu"),
                       "results": results}, fh, indent=1)
    failed = [r["case"] for r in results if not r["ok"]]
    print(f"{len(results) - len(failed)}/{len(results)} kernel checks passed" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
