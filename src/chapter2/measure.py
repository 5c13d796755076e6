"""Measure the machine that runs this code: a numpy matmul rate and a memory copy rate (section 2.4).

The two numbers of the roofline, for the reader's own device: compute (FLOP/s
of a float32 matrix product) and memory bandwidth (bytes/s of a large array
copy, read + write counted, as `chapter2.host.bench` counts them). Their ratio
is the device's ops:byte ratio, which the "device_roofline" calculator puts on
the same chart as the catalog GPUs.

In the browser this runs in Pyodide: numpy compiled to WebAssembly, one thread,
no optimized BLAS, so the matmul rate is far below what the CPU does with native
numpy; that is what Python in this page can do, and what the chart shows. In
CPython it measures numpy as installed (its BLAS, all its threads):

    python -m chapter2.measure            # from the installed wheel

prints the two numbers to paste into the calculator's two fields.

`measure(budget_s)` stays within about `budget_s` seconds of timing (plus the
array set-up): it sizes the matrix and the copy to the budget, repeats each while
time is left, and keeps the fastest run of each (least disturbed by other work).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._checks import finite_real

__all__ = ["DeviceRates", "measure", "measure_fields", "main"]

MAX_N = 1024  # largest matrix side tried
COPY_BYTES = (32 << 20, 1 << 20)  # largest and smallest array copied (bytes per array)


@dataclass(frozen=True)
class DeviceRates:
    """One measurement: FLOP/s of an n x n float32 matmul, bytes/s of copying one array into another."""

    matmul_flops: float
    copy_bytes_per_s: float
    matmul_n: int
    copy_array_bytes: int
    seconds: float  # wall time the measurement took

    @property
    def ops_per_byte(self) -> float:
        """The device's ops:byte ratio: matmul FLOP/s / copy bytes/s."""
        return self.matmul_flops / self.copy_bytes_per_s


def _best(fn, budget_s: float, min_reps: int = 2) -> float:
    """Fastest of repeated runs of fn() (seconds), repeating while the budget lasts (at least min_reps runs)."""
    best, start, reps = float("inf"), time.perf_counter(), 0
    while reps < min_reps or time.perf_counter() - start < budget_s:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        reps += 1
    return max(best, 1e-9)


def _matmul(budget_s: float) -> tuple[float, int]:
    rng = np.random.default_rng(0)
    n = 64
    while True:  # grow the matrix until one product takes a tenth of the budget's share per run
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        a @ b  # warm-up: the first product starts BLAS threads and touches the memory
        t0 = time.perf_counter()
        a @ b
        if n >= MAX_N or time.perf_counter() - t0 > budget_s / 10:
            break
        n *= 2
    return 2.0 * n**3 / _best(lambda: a @ b, budget_s), n


def _copy(budget_s: float) -> tuple[float, int]:
    size = COPY_BYTES[0]
    while True:  # shrink the arrays on a slow device, so that a few copies fit the budget
        src = np.ones(size // 4, np.float32)  # written once, so every page is mapped before timing
        dst = np.zeros_like(src)
        t0 = time.perf_counter()
        np.copyto(dst, src)
        if size <= COPY_BYTES[1] or time.perf_counter() - t0 < budget_s / 5:
            break
        size //= 2
    return 2.0 * src.nbytes / _best(lambda: np.copyto(dst, src), budget_s), src.nbytes


def measure(budget_s: float = 0.4) -> DeviceRates:
    """Measure this device's matmul rate and copy rate in about `budget_s` seconds (half for each)."""
    budget_s = finite_real("budget_s", budget_s, low=0.0, low_open=True)
    start = time.perf_counter()
    flops, n = _matmul(budget_s / 2)
    copy, nbytes = _copy(budget_s / 2)
    return DeviceRates(flops, copy, n, nbytes, time.perf_counter() - start)


def measure_fields(budget_s: float = 0.4) -> dict:
    """The measurement as the device_roofline calculator's fields: GFLOP/s and GB/s, 4 significant digits."""
    r = measure(budget_s)
    return {"matmul_gflops": float(f"{r.matmul_flops / 1e9:.4g}"), "copy_gb_s": float(f"{r.copy_bytes_per_s / 1e9:.4g}")}


def main(argv=None) -> int:
    """`python -m chapter2.measure [seconds]`: measure natively and print the calculator's two fields."""
    import sys

    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) > 1:
        raise SystemExit("usage: python -m chapter2.measure [seconds of timing, default 2]")
    try:
        budget_s = float(args[0]) if args else 2.0
    except ValueError:
        raise SystemExit(f"seconds must be a number, got {args[0]!r}") from None
    fields = measure_fields(budget_s)
    print(f"numpy {np.__version__}, native (its own BLAS and threads), about {budget_s:g} s of timing")
    print(f"numpy matmul rate (GFLOP/s): {fields['matmul_gflops']:g}")
    print(f"memory copy rate (GB/s):     {fields['copy_gb_s']:g}")
    print("Paste the two numbers into 'Your device on the roofline' (section 2.4).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
