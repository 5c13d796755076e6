"""CPU benchmark (numpy): tiled FlashAttention vs naive attention, and vs the matmul rate.

For each shape: validate both against float64 attention, then time them, then
measure their peak memory with tracemalloc (numpy reports its buffers to it),
in separate runs so tracing does not slow the timed ones. The numpy matmul
rate at the score product's shape (N x d times d x N per head, float32) is
measured in the same run, so "share of matmul rate" compares like with like on
this CPU. Rates and ratios use the fastest of the runs (medians are recorded
too): on a shared machine the minimum is the least disturbed measurement.

What to expect: naive attention's peak memory grows as N^2 (the score
matrix), the tiled version's as N d; in numpy the tiles cost Python overhead,
so the tiled version is not faster here. Its point on a GPU is memory
traffic, which this suite cannot show; `bench.gpu` does.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from ._harness import copy_bandwidth, time_cpu, write_result

FULL_SHAPES = [(1, 4, n, 64) for n in (512, 1024, 2048)]
QUICK_SHAPES = [(1, 2, 64, 32), (1, 2, 128, 32)]
BLOCK = 64


def peak_bytes(fn) -> int:
    """Peak traced allocation during fn(), in bytes."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def matmul_rate(shape, reps: int) -> dict:
    """FLOP/s of the score product Q K^T at `shape` (B, H, N, d) in float32: a batched (N, d) @ (d, N).

    Rates use the fastest run (the machine's capability, least disturbed by other load).
    """
    import numpy as np

    b, h, n, d = shape
    rng = np.random.default_rng(0)
    q = rng.standard_normal((b * h, n, d), dtype=np.float32)
    k_t = rng.standard_normal((b * h, d, n), dtype=np.float32)
    timing = time_cpu(lambda: q @ k_t, reps=max(reps, 5))
    flops = 2.0 * b * h * n * n * d
    return {"flops": flops, **timing, "flop_per_s": flops / timing["min_s"]}


def bench_shape(shape, causal: bool, reps: int) -> dict:
    import numpy as np

    from ... import attention

    b, h, n, d = shape
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))

    def naive():
        return attention.attention(q, k, v, causal=causal)

    def flash():
        return attention.flash_attention(q, k, v, causal=causal, block_q=BLOCK, block_k=BLOCK)

    oracle = attention.attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), causal=causal)
    errors = {name: float(np.abs(fn().astype(np.float64) - oracle).max()) for name, fn in (("naive", naive), ("flash", flash))}
    t_naive = time_cpu(naive, reps=reps)
    t_flash = time_cpu(flash, reps=reps)
    mem_naive, mem_flash = peak_bytes(naive), peak_bytes(flash)
    pairs = attention.attended_pairs(n, causal=causal)
    flops = 4.0 * b * h * d * pairs  # QK^T and PV, 2 FLOPs per multiply-add
    mm = matmul_rate(shape, reps)
    return {
        "shape": {"B": b, "H": h, "N": n, "d": d}, "causal": causal, "dtype": "float32", "block": BLOCK,
        "flops": flops, "max_err_vs_float64": errors,
        "naive": {**t_naive, "peak_bytes": mem_naive, "flop_per_s": flops / t_naive["min_s"]},
        "flash": {**t_flash, "peak_bytes": mem_flash, "flop_per_s": flops / t_flash["min_s"]},
        "matmul": mm,
        "flash_time_over_naive": t_flash["min_s"] / t_naive["min_s"],
        "flash_memory_over_naive": mem_flash / mem_naive,
        "naive_share_of_matmul_rate": flops / t_naive["min_s"] / mm["flop_per_s"],
        "flash_share_of_matmul_rate": flops / t_flash["min_s"] / mm["flop_per_s"],
    }


def run(out_dir, *, quick: bool = False, shapes=None, reps: int | None = None) -> Path:
    """Run every shape, causal and not; write one JSON file and return its path."""
    shapes = shapes or (QUICK_SHAPES if quick else FULL_SHAPES)
    reps = reps or (2 if quick else 5)
    results = []
    for shape in shapes:
        for causal in (False, True):
            r = bench_shape(shape, causal, reps)
            results.append(r)
            print(f"cpu  N={shape[2]:<5} d={shape[3]:<3} causal={causal!s:<5}  naive {r['naive']['min_s'] * 1e3:8.2f} ms "
                  f"{r['naive']['peak_bytes'] / 1e6:8.1f} MB | flash {r['flash']['min_s'] * 1e3:8.2f} ms "
                  f"{r['flash']['peak_bytes'] / 1e6:8.1f} MB | flash at {100 * r['flash_share_of_matmul_rate']:.1f} % "
                  f"of matmul rate", flush=True)
    largest = max(results, key=lambda r: (r["shape"]["N"], r["causal"]))
    summary = {
        "largest_shape": largest["shape"],
        "flash_memory_over_naive_at_largest": largest["flash_memory_over_naive"],
        "flash_time_over_naive_at_largest": largest["flash_time_over_naive"],
        "max_err_vs_float64": max(max(r["max_err_vs_float64"].values()) for r in results),
    }
    config = {"shapes": [list(s) for s in shapes], "reps": reps, "block": BLOCK, "quick": quick}
    # the memory roof, measured in the same run as the matmul rate (the compute roof)
    copy = {"large": copy_bandwidth((16 if quick else 256) * 2**20, reps)}
    print(f"cpu  numpy copy bandwidth {copy['large']['bytes_per_s'] / 1e9:.1f} GB/s", flush=True)
    return write_result(out_dir, "cpu-attention", "cpu", config, results, summary, extra={"copy": copy})
