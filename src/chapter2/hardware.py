"""The GPU catalog: peak compute, memory bandwidth and memory size (chapter section 2.4.1).

A GPU has two resources that matter for inference: compute, in floating-point
operations per second, and memory bandwidth, in bytes per second. Their ratio
is the hardware's ops:byte ratio,

    ops_per_byte = peak FLOP/s / bandwidth (bytes/s)

the number of operations a kernel must do per byte it moves to keep the
tensor cores busy. An H100 SXM does 989.4 TFLOP/s of dense FP16 against
3.35 TB/s, a ratio of about 295.

Every number lives in one data file, `data/gpus.json`, with the URL it was
read from. Peaks are *dense* tensor-core throughput. Datasheets often headline
2:4 structured-sparsity figures, twice the dense ones (the H100 page says
1,979 TFLOPS of FP16); those are kept apart in `sparse_flops` and never used as
a peak. A calculator can also use a `custom_gpu` built from two numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType

from ._checks import finite_real

__all__ = ["GPU", "GPUS", "MATH_BITS", "OnChip", "TENSOR_DTYPES", "tensor_dtype", "custom_gpu", "get_gpu"]

TERA = 1e12
GIGA = 1e9
KIB = 1024
MIB = 1024**2

# Throughput is quoted per tensor-core dtype; other spellings map onto these keys.
TENSOR_DTYPES = ("fp16", "bf16", "fp8", "fp4")
_DTYPE_ALIASES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float8": "fp8", "fp8_e4m3": "fp8", "e4m3": "fp8",
                  "float4": "fp4", "e2m1": "fp4", "nvfp4": "fp4", "mxfp4": "fp4"}
MATH_BITS = {"fp16": 16, "bf16": 16, "fp8": 8, "fp4": 4}
"""Bits per operand of each tensor-core math dtype (FP4 is E2M1 with block scales: NVFP4 or MXFP4)."""


def tensor_dtype(dtype) -> str:
    """Normalize a math dtype name ('FP16', 'bfloat16', 'fp8', 'nvfp4') to a catalog key, or raise."""
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a string such as 'fp16', got {dtype!r}")
    key = dtype.strip().lower()
    key = _DTYPE_ALIASES.get(key, key)
    if key not in TENSOR_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(TENSOR_DTYPES)}, got {dtype!r}")
    return key


ON_CHIP_FIGURES = ("sms", "shared_memory_per_sm_kib", "l2_cache_mib", "l3_cache_mib", "sram_bandwidth_tb_s")
"""The figures an `on_chip` record of gpus.json may hold (each a value with its source)."""


@dataclass(frozen=True)
class OnChip:
    """The memory hierarchy inside the chip, where the catalog has a source for it (None where it has not).

    `sms`: streaming multiprocessors (AMD: compute units). `shared_memory_per_sm`: the most shared
    memory one SM can give its programs (AMD: LDS per CU), in bytes. `l2_bytes` (and AMD's
    `l3_bytes`, its Infinity Cache): the caches every SM shares. Vendors write these binary sizes as
    KB and MB (228 KB = 233,472 bytes). `sram_bandwidth`: bytes/s of on-chip SRAM, only where a
    source estimates it (vendors do not publish it). `sources` maps each figure present to its URL,
    `not_published` each missing one to the reason.
    """

    sms: int | None = None
    shared_memory_per_sm: float | None = None
    l2_bytes: float | None = None
    l3_bytes: float | None = None
    sram_bandwidth: float | None = None
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    not_published: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    @property
    def shared_memory_total(self) -> float | None:
        """Shared memory of all SMs together in bytes (SMs x per SM), or None if either is missing."""
        if self.sms is None or self.shared_memory_per_sm is None:
            return None
        return self.sms * self.shared_memory_per_sm


@dataclass(frozen=True)
class GPU:
    """One accelerator. `dense_flops` and `sparse_flops` map dtype -> FLOP/s; bandwidth in bytes/s.

    `sources` maps each figure ("memory", "bandwidth", "dense_fp16", ...) to the URL it was read
    from. `other_figures` maps a figure's name to (value, source URL): what another vendor page
    prints for the same GPU, kept for comparison and never used (`note` says why). `on_chip` is
    the memory hierarchy inside the chip (SMs, shared memory, L2), with its own sources.
    """

    key: str
    name: str
    vendor: str
    memory_bytes: float
    bandwidth: float
    dense_flops: MappingProxyType
    sparse_flops: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    unsupported: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    other_figures: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    note: str = ""
    on_chip: OnChip = field(default_factory=OnChip)

    def peak_flops(self, dtype="fp16") -> float:
        """Dense tensor-core peak in FLOP/s for `dtype`; raises ValueError if the GPU lacks it."""
        key = tensor_dtype(dtype)
        if key not in self.dense_flops:
            why = self.unsupported.get(key, "no figure in the catalog")
            raise ValueError(f"{self.key} has no {key.upper()} tensor throughput ({why})")
        return self.dense_flops[key]

    def ops_per_byte(self, dtype="fp16") -> float:
        """The hardware ops:byte ratio: dense peak FLOP/s divided by memory bandwidth in bytes/s."""
        return self.peak_flops(dtype) / self.bandwidth

    def tflops(self, dtype="fp16") -> float:
        return self.peak_flops(dtype) / TERA

    @property
    def bandwidth_tb_s(self) -> float:
        return self.bandwidth / TERA

    @property
    def memory_gb(self) -> float:
        return self.memory_bytes / GIGA


def custom_gpu(tflops, bandwidth_tb_s, memory_gb=80, *, dtype="fp16", name="custom") -> GPU:
    """A GPU from two numbers: dense TFLOP/s for `dtype` and memory bandwidth in TB/s."""
    tflops = finite_real("tflops", tflops, low=0, low_open=True)
    bandwidth_tb_s = finite_real("bandwidth_tb_s", bandwidth_tb_s, low=0, low_open=True)
    memory_gb = finite_real("memory_gb", memory_gb, low=0, low_open=True)
    key = tensor_dtype(dtype)
    flops = {key: tflops * TERA}
    if key in ("fp16", "bf16"):  # the two 16-bit formats run at the same rate on every catalog GPU
        flops = {"fp16": tflops * TERA, "bf16": tflops * TERA}
    return GPU(
        key=name,
        name=name,
        vendor="custom",
        memory_bytes=memory_gb * GIGA,
        bandwidth=bandwidth_tb_s * TERA,
        dense_flops=MappingProxyType(flops),
        sources=MappingProxyType({"all": "entered by the user"}),
    )


def _entry(key: str, raw: dict) -> GPU:
    """Build a GPU from one catalog record, checking that every number has a source."""

    def sourced(path, item):
        if not isinstance(item, dict) or "value" not in item or not str(item.get("source", "")).startswith("http"):
            raise ValueError(f"gpus.json: {key}.{path} needs a value and a source URL")
        return float(item["value"]), item["source"]

    sources = {}
    memory, sources["memory"] = sourced("memory_gb", raw["memory_gb"])
    bandwidth, sources["bandwidth"] = sourced("bandwidth_tb_s", raw["bandwidth_tb_s"])
    dense, sparse = {}, {}
    for table, out, prefix in ((raw["tflops"], dense, "dense"), (raw.get("sparse_tflops", {}), sparse, "sparse")):
        for dtype, item in table.items():
            value, sources[f"{prefix}_{dtype}"] = sourced(f"{prefix}.{dtype}", item)
            out[tensor_dtype(dtype)] = value * TERA
    other = {name: sourced(f"other_figures.{name}", item) for name, item in raw.get("other_figures", {}).items()}
    return GPU(
        on_chip=_on_chip(key, raw.get("on_chip", {}), sourced),
        key=key,
        name=raw["name"],
        vendor=raw["vendor"],
        memory_bytes=memory * GIGA,
        bandwidth=bandwidth * TERA,
        dense_flops=MappingProxyType(dense),
        sparse_flops=MappingProxyType(sparse),
        unsupported=MappingProxyType(dict(raw.get("unsupported", {}))),
        sources=MappingProxyType(sources),
        other_figures=MappingProxyType(other),
        note=str(raw.get("note", "")),
    )


def _on_chip(key: str, raw: dict, sourced) -> OnChip:
    """An `on_chip` record: every figure with a source, every missing one with a reason."""
    unknown = set(raw) - set(ON_CHIP_FIGURES) - {"not_published"}
    if unknown:
        raise ValueError(f"gpus.json: {key}.on_chip has unknown figures {sorted(unknown)}; known: {ON_CHIP_FIGURES}")
    values, sources = {}, {}
    for name in ON_CHIP_FIGURES:
        if name in raw:
            values[name], sources[name] = sourced(f"on_chip.{name}", raw[name])
    missing = dict(raw.get("not_published", {}))
    both = set(values) & set(missing)
    if both:
        raise ValueError(f"gpus.json: {key}.on_chip gives {sorted(both)} and also says they are not published")
    scale = {"shared_memory_per_sm_kib": KIB, "l2_cache_mib": MIB, "l3_cache_mib": MIB, "sram_bandwidth_tb_s": TERA}
    get = {name: (values[name] * scale.get(name, 1) if name in values else None) for name in ON_CHIP_FIGURES}
    return OnChip(
        sms=None if get["sms"] is None else int(get["sms"]),
        shared_memory_per_sm=get["shared_memory_per_sm_kib"],
        l2_bytes=get["l2_cache_mib"],
        l3_bytes=get["l3_cache_mib"],
        sram_bandwidth=get["sram_bandwidth_tb_s"],
        sources=MappingProxyType(sources),
        not_published=MappingProxyType(missing),
    )


def _load_catalog() -> MappingProxyType:
    text = resources.files("chapter2").joinpath("data", "gpus.json").read_text(encoding="utf-8")
    raw = json.loads(text)["gpus"]
    return MappingProxyType({key: _entry(key, entry) for key, entry in raw.items()})


GPUS = _load_catalog()
"""Catalog key (for example 'H100-SXM') -> GPU, read once from data/gpus.json."""


def get_gpu(gpu) -> GPU:
    """A GPU from a catalog key (case-insensitive) or a GPU object."""
    if isinstance(gpu, GPU):
        return gpu
    if not isinstance(gpu, str):
        raise TypeError(f"gpu must be a catalog key such as 'H100-SXM' or a GPU, got {gpu!r}")
    by_lower = {k.lower(): v for k, v in GPUS.items()}
    if gpu.strip().lower() not in by_lower:
        raise ValueError(f"gpu must be one of {', '.join(GPUS)}, got {gpu!r}")
    return by_lower[gpu.strip().lower()]
