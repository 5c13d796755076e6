"""Provenance, timing, catalog lookup and JSON output shared by the benchmark suites.

Imports only the standard library at module level: torch, triton, numpy and
the hardware catalog are looked up lazily, and their absence is recorded, not
fatal. Devices are named, and GPUs matched to the catalog, by `chapter2.devices`
(the same functions `chapter2.bench_results` reads the results back with).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from ...devices import catalog_gpu, device_name
from . import SCHEMA


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit() -> dict:
    """Commit of the checkout this package runs from, and whether it has uncommitted changes."""
    here = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=here, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as err:
        return {"commit": None, "dirty": None, "note": f"git unavailable: {err}"}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None, "note": commit.stderr.strip()[:200] or "not a git checkout"}
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def device_info(device: str = "cpu") -> dict:
    """What the numbers were measured on."""
    info = {"kind": device, "machine": platform.machine(), "processor": platform.processor() or None,
            "cpu_count": os.cpu_count(), "triton_interpret": os.environ.get("TRITON_INTERPRET")}
    if device == "cuda":
        import torch

        props = torch.cuda.get_device_properties(0)
        info.update(name=device_name("cuda"), capability=list(torch.cuda.get_device_capability(0)),
                    sm_count=props.multi_processor_count, memory_bytes=props.total_memory,
                    cuda=torch.version.cuda, driver=_nvidia_smi("driver_version"))
    else:
        info["name"] = device_name("cpu")
    return info


def _nvidia_smi(field: str) -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


def provenance(device: str = "cpu") -> dict:
    return {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "git": git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": {p: _version(p) for p in ("chapter2", "numpy", "torch", "triton")},
        "device": device_info(device),
        "argv": sys.argv,
    }


def catalog_peaks(name: str, dtype: str) -> dict:
    """{'catalog_key', 'peak_flops', 'bandwidth', 'ops_per_byte'} for the device named `name`, None where unknown."""
    gpu = catalog_gpu(name)
    peaks = {"catalog_key": getattr(gpu, "key", None), "peak_flops": None, "bandwidth": None, "ops_per_byte": None}
    if gpu is None:
        return peaks
    for field, get in (("peak_flops", lambda: gpu.peak_flops(dtype)), ("bandwidth", lambda: gpu.bandwidth),
                       ("ops_per_byte", lambda: gpu.ops_per_byte(dtype))):
        try:
            peaks[field] = float(get())
        except Exception:  # noqa: BLE001 - a missing figure stays None
            pass
    return peaks


def time_cpu(fn, *, reps: int = 5, warmup: int = 1) -> dict:
    """Wall-clock seconds of fn() on the CPU: median and minimum over `reps` runs after `warmup`."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return {"median_s": statistics.median(times), "min_s": min(times), "reps": reps}


def time_cuda(fn, *, warmup_ms: int = 25, rep_ms: int = 100) -> dict:
    """Median GPU time of fn() from triton.testing.do_bench (CUDA events, L2 flushed between runs)."""
    from triton.testing import do_bench

    median_ms = do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")
    min_ms = do_bench(fn, warmup=0, rep=max(10, rep_ms // 4), return_mode="min")
    return {"median_s": median_ms / 1e3, "min_s": min(min_ms, median_ms) / 1e3, "reps": None}


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "device"


def copy_bandwidth(nbytes: int, reps: int) -> dict:
    """Bytes/s of numpy.copyto between two float32 arrays of `nbytes` each (read + write counted)."""
    import numpy as np

    n = max(1, nbytes // 4)
    src = np.ones(n, np.float32)  # written once, so every page is mapped before timing
    dst = np.zeros(n, np.float32)
    timing = time_cpu(lambda: np.copyto(dst, src), reps=max(reps, 3))
    moved = 2 * src.nbytes
    return {"array_bytes": src.nbytes, "bytes_moved": moved, **timing, "bytes_per_s": moved / timing["median_s"]}


def write_result(out_dir, suite: str, device: str, config: dict, results: list, summary: dict,
                 extra: dict | None = None) -> Path:
    """Write one run as JSON (plus `extra` top-level keys, e.g. a copy bandwidth measured in the run); returns the path."""
    doc = {"schema": SCHEMA, "suite": suite, "provenance": provenance(device), "config": config,
           "results": results, "summary": summary, **(extra or {})}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    name = slug(doc["provenance"]["device"]["name"])
    path = out / f"{suite}-{name}-{stamp}.json"
    n = 1
    while path.exists():
        n += 1
        path = out / f"{suite}-{name}-{stamp}-{n}.json"
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return path


__all__ = ["provenance", "device_info", "git_commit", "catalog_peaks", "time_cpu", "time_cuda",
           "copy_bandwidth", "write_result", "slug"]
