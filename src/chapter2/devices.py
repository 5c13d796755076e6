"""Naming the machine a benchmark ran on, and finding its GPU in the catalog (benchmark provenance).

The benchmarks (`chapter2.host.bench`, `chapter2.host.kernels.validate`)
record a device name in every result; the measured results are read back by
`chapter2.bench_results` (numpy core, also in the browser), which looks a
GPU up in `chapter2.hardware` and labels each device's roofline. Both sides
use the functions here, so a device is named one way and matched one way:

- `device_name(kind)`: the name a benchmark records, the GPU's name from
  torch for "cuda", the CPU's model name (``model name`` in /proc/cpuinfo)
  for "cpu".
- `display_name(devices)`: the label of one device's results.
- `catalog_gpu(name)`: the catalog entry a recorded GPU name names.

Standard library only at import (torch and the catalog are imported when asked for).
"""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

__all__ = ["device_name", "display_name", "catalog_gpu"]

_CPUINFO_KEYS = ("model name", "Model", "cpu model")  # x86, ARM boards, MIPS/others


def device_name(kind: str = "cpu") -> str:
    """The name of the device of `kind`: torch's name of CUDA device 0 ("NVIDIA H200"), or the CPU model.

    The CPU model is the ``model name`` of /proc/cpuinfo (Linux), else
    platform.processor(), else the machine type.
    """
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"kind must be 'cpu' or 'cuda', got {kind!r}")
    if kind == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in _CPUINFO_KEYS and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or f"unknown CPU ({os.cpu_count()} logical cores)"


def display_name(devices) -> str:
    """The label of one device's results, from the `provenance.device` records of its runs.

    A GPU is its recorded name. A CPU is its model name with the machine type
    and core count, "AMD EPYC (x86_64, 2 logical cores)"; runs recorded before
    the CPU suite named the model say "CPU <machine> (<n> logical cores)", so
    a model name from any run wins.
    """
    if isinstance(devices, str | dict) or not hasattr(devices, "__iter__"):
        raise TypeError(f"devices must be a list of provenance device records, got {type(devices).__name__}")
    devices = list(devices)
    if not devices or not all(isinstance(d, dict) and d.get("name") for d in devices):
        raise ValueError("devices must be a non-empty list of provenance device records with a name")
    first = devices[0]
    if first.get("kind") == "cuda":
        return first["name"]
    named = [d["name"] for d in devices if not d["name"].startswith("CPU ")]  # the old generic CPU name
    return f"{named[0]} ({first.get('machine')}, {first.get('cpu_count')} logical cores)" if named else first["name"]


def catalog_gpu(name: str):
    """The `chapter2.hardware.GPUS` entry whose model (the key before '-', e.g. 'H200') is a word of `name`,
    or None. Case-insensitive; variants (SXM vs PCIe) are not told apart."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a device name string, got {type(name).__name__}")
    from .hardware import GPUS

    for key, gpu in GPUS.items():
        model = key.split("-")[0]
        if re.search(rf"(?<![A-Za-z0-9]){re.escape(model)}(?![A-Za-z0-9])", name, flags=re.IGNORECASE):
            return gpu
    return None
