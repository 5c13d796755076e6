"""Benchmarks for section 2.5 (not tests): `python -m chapter2.host.bench {cpu,gpu,summary} ...`.

Tests assert correctness; benchmarks measure, side by side in one run, and
report ratios (absolute numbers only next to the device that produced them).
Every kernel is validated against a reference before it is timed.

Suites:

- ``cpu`` (numpy): the tiled `chapter2.attention.flash_attention` against
  naive attention that materializes the N x N scores: time, peak memory
  (tracemalloc) and the FLOP rate as a share of the numpy matmul rate measured
  in the same run.
- ``gpu`` (torch + triton, `bench.gpu`): the Triton FlashAttention forward
  against torch SDPA with each backend (default, flash, efficient, cudnn,
  math): TFLOP/s, GB/s, share of the detected device's catalog peak
  (`chapter2.hardware`), time ratios; decode (flash-decoding) bytes moved per
  second against the device copy bandwidth measured in the same run; sliding
  window speedup over full causal against the ideal work ratio
  (N^2/2) / (N w - w^2/2).
- ``summary DIR``: the stated goals, read from the JSON files in DIR.

Results: one JSON file per suite and run, named
``<suite>-<device>-<UTC time>.json``, in ``bench-results/`` at the current
directory (run from the repository root) or ``--out DIR``. Each file holds
``schema``, ``suite``, ``provenance`` (date, git commit, Python / numpy /
torch / triton versions, platform, device), ``config``, ``results`` (one
record per measurement) and ``summary``.
"""

DEFAULT_OUT = "bench-results"
SCHEMA = "chapter2.bench/1"

__all__ = ["DEFAULT_OUT", "SCHEMA"]
