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

A third rate matters for attention: the special-function units that compute the
softmax's exponentials are far slower than the tensor cores. `GPU.exponentials`
gives exponentials per second, worked out from the CUDA C++ Programming Guide's
results per clock per SM (16 on Ampere and Hopper) x SMs x clock: 132 x 16 x
1.83 GHz = 3.87 T/s on an H100 SXM, the FlashAttention-3 paper's "3.9 TFLOPS of
special functions" (arXiv:2407.08608) against 989.4 TFLOP/s of FP16 matmul.
Where a GPU's SMs or clock are unpublished, its dense FP16 peak over the SM's
tensor FLOPs per clock stands in for SMs x clock; Blackwell's rate is NVIDIA's
own figure; every other GPU says why it has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType

from ._checks import finite_real

__all__ = ["ARCHITECTURES", "Architecture", "ExpRate", "GPU", "GPUS", "MATH_BITS", "OnChip", "TENSOR_DTYPES", "tensor_dtype",
           "custom_gpu", "get_gpu", "Link", "Interconnect", "LINKS", "INTERCONNECTS", "get_link", "interconnect"]

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


ON_CHIP_FIGURES = ("sms", "shared_memory_per_sm_kib", "l2_cache_mib", "l3_cache_mib", "sram_bandwidth_tb_s",
                   "registers_per_sm_kib", "l2_bandwidth_tb_s")
"""The figures an `on_chip` record of gpus.json may hold (each a value with its source). The first five are
given or explained (`not_published`) for every GPU; the register file and the L2 bandwidth only where the
chapter's running example needs them (the H100 SXM of section 2.5's memory picture)."""


@dataclass(frozen=True)
class OnChip:
    """The memory hierarchy inside the chip, where the catalog has a source for it (None where it has not).

    `sms`: streaming multiprocessors (AMD: compute units). `shared_memory_per_sm`: the most shared
    memory one SM can give its programs (AMD: LDS per CU), in bytes. `l2_bytes` (and AMD's
    `l3_bytes`, its Infinity Cache): the caches every SM shares. Vendors write these binary sizes as
    KB and MB (228 KB = 233,472 bytes). `sram_bandwidth`: bytes/s of on-chip SRAM (the shared memory of
    all SMs together), only where a source estimates it (vendors do not publish it); `l2_bandwidth` the
    same for the L2. `registers_per_sm`: one SM's register file, in bytes. `sources` maps each figure
    present to its URL, `not_published` each missing one to the reason.
    """

    sms: int | None = None
    shared_memory_per_sm: float | None = None
    l2_bytes: float | None = None
    l3_bytes: float | None = None
    sram_bandwidth: float | None = None
    registers_per_sm: float | None = None
    l2_bandwidth: float | None = None
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    not_published: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    @property
    def shared_memory_total(self) -> float | None:
        """Shared memory of all SMs together in bytes (SMs x per SM), or None if either is missing."""
        if self.sms is None or self.shared_memory_per_sm is None:
            return None
        return self.sms * self.shared_memory_per_sm

    @property
    def registers_total(self) -> float | None:
        """Register files of all SMs together in bytes (SMs x per SM), or None if either is missing."""
        if self.sms is None or self.registers_per_sm is None:
            return None
        return self.sms * self.registers_per_sm


@dataclass(frozen=True)
class Architecture:
    """Per-SM, per-clock figures of one GPU architecture (gpus.json "architectures"), each with its source.

    `ex2_per_clock_per_sm`: results per clock per SM of the special-function unit's exp2 (MUFU.EX2), from the
    CUDA C++ Programming Guide's table of arithmetic instruction throughput. `dense_fp16_flops_per_clock_per_sm`:
    the SM's dense FP16 tensor-core FLOPs per clock, from the architecture whitepaper.
    """

    key: str
    name: str
    ex2_per_clock_per_sm: float
    dense_fp16_flops_per_clock_per_sm: float
    sources: MappingProxyType


EXP_METHODS = ("SMs x clock", "tensor peak", "published")
"""How `ExpRate.per_s` was obtained: SMs x clock x the SM's exp2 rate; the dense FP16 peak over the SM's tensor
FLOPs per clock, times the SM's exp2 rate (SMs x clock where they are unpublished); or the vendor's own figure."""


@dataclass(frozen=True)
class ExpRate:
    """Exponentials per second of a GPU's special-function units (attention's softmax runs one per score).

    `per_s` is None where the catalog cannot derive it; `not_derived` then says why. `method` is one of
    EXP_METHODS. `measured_per_s`: an independent measurement, where one is published (kept for comparison).
    """

    per_s: float | None = None
    method: str = ""
    architecture: Architecture | None = None
    sms: int | None = None
    clock_hz: float | None = None
    measured_per_s: float | None = None
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    not_derived: str = ""


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
    exponentials: ExpRate = field(default_factory=lambda: ExpRate(not_derived="a GPU given by two numbers"))

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

    def exp_rate(self) -> float:
        """Exponentials per second of the special-function units; raises ValueError where the catalog has none."""
        if self.exponentials.per_s is None:
            raise ValueError(f"{self.key} has no exponential rate in the catalog ({self.exponentials.not_derived})")
        return self.exponentials.per_s

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
    on_chip = _on_chip(key, raw.get("on_chip", {}), sourced)
    return GPU(
        on_chip=on_chip,
        exponentials=_exponentials(key, raw.get("exponentials"), sourced, on_chip.sms, dense.get("fp16")),
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
    scale = {"shared_memory_per_sm_kib": KIB, "l2_cache_mib": MIB, "l3_cache_mib": MIB, "sram_bandwidth_tb_s": TERA,
             "registers_per_sm_kib": KIB, "l2_bandwidth_tb_s": TERA}
    get = {name: (values[name] * scale.get(name, 1) if name in values else None) for name in ON_CHIP_FIGURES}
    return OnChip(
        sms=None if get["sms"] is None else int(get["sms"]),
        shared_memory_per_sm=get["shared_memory_per_sm_kib"],
        l2_bytes=get["l2_cache_mib"],
        l3_bytes=get["l3_cache_mib"],
        sram_bandwidth=get["sram_bandwidth_tb_s"],
        registers_per_sm=get["registers_per_sm_kib"],
        l2_bandwidth=get["l2_bandwidth_tb_s"],
        sources=MappingProxyType(sources),
        not_published=MappingProxyType(missing),
    )


def _architectures(raw: dict) -> MappingProxyType:
    """The catalog's "architectures": per-SM, per-clock figures, each with a source URL."""
    out = {}
    for key, entry in raw.items():
        if key.startswith("_"):
            continue
        sources, values = {}, {}
        for name in ("ex2_per_clock_per_sm", "dense_fp16_flops_per_clock_per_sm"):
            item = entry.get(name)
            if not isinstance(item, dict) or "value" not in item or not str(item.get("source", "")).startswith("http"):
                raise ValueError(f"gpus.json: architectures.{key}.{name} needs a value and a source URL")
            values[name], sources[name] = float(item["value"]), item["source"]
        out[key] = Architecture(key, entry["name"], values["ex2_per_clock_per_sm"],
                                values["dense_fp16_flops_per_clock_per_sm"], MappingProxyType(sources))
    return MappingProxyType(out)


def _exponentials(key: str, raw, sourced, sms, dense_fp16) -> ExpRate:
    """An "exponentials" record: derived from an architecture (SMs x clock, or the dense FP16 peak), published by
    the vendor, or not derived (with the reason). Exactly one of the three."""
    if not isinstance(raw, dict):
        raise ValueError(f"gpus.json: {key} needs an 'exponentials' record (an architecture, a published rate, "
                         "or 'not_derived' with the reason)")
    kinds = [k for k in ("architecture", "published_t_per_s", "not_derived") if k in raw]
    if len(kinds) != 1:
        raise ValueError(f"gpus.json: {key}.exponentials needs exactly one of 'architecture', 'published_t_per_s' "
                         f"or 'not_derived', got {sorted(raw)}")
    measured = None
    sources = {}
    if "measured_t_per_s" in raw:
        value, sources["measured"] = sourced("exponentials.measured_t_per_s", raw["measured_t_per_s"])
        measured = value * TERA
    if kinds == ["not_derived"]:
        if not str(raw["not_derived"]).strip():
            raise ValueError(f"gpus.json: {key}.exponentials.not_derived must say why")
        return ExpRate(not_derived=str(raw["not_derived"]), measured_per_s=measured, sources=MappingProxyType(sources))
    if kinds == ["published_t_per_s"]:
        value, sources["published"] = sourced("exponentials.published_t_per_s", raw["published_t_per_s"])
        return ExpRate(value * TERA, "published", measured_per_s=measured, sources=MappingProxyType(sources))
    arch = ARCHITECTURES.get(raw["architecture"])
    if arch is None:
        raise ValueError(f"gpus.json: {key}.exponentials names architecture {raw['architecture']!r}; "
                         f"known: {', '.join(ARCHITECTURES)}")
    sources.update(arch.sources)
    if "boost_clock_mhz" in raw:
        if sms is None:
            raise ValueError(f"gpus.json: {key}.exponentials gives a clock but on_chip gives no SM count")
        clock, sources["boost_clock"] = sourced("exponentials.boost_clock_mhz", raw["boost_clock_mhz"])
        clock_hz = clock * 1e6
        per_s = sms * clock_hz * arch.ex2_per_clock_per_sm
        return ExpRate(per_s, "SMs x clock", arch, sms, clock_hz, measured, MappingProxyType(sources))
    if dense_fp16 is None:
        raise ValueError(f"gpus.json: {key}.exponentials needs a clock or a dense FP16 peak")
    sm_clocks = dense_fp16 / arch.dense_fp16_flops_per_clock_per_sm  # SMs x clock, per second
    return ExpRate(sm_clocks * arch.ex2_per_clock_per_sm, "tensor peak", arch, sms, None, measured,
                   MappingProxyType(sources))


def _load_catalog() -> MappingProxyType:
    text = resources.files("chapter2").joinpath("data", "gpus.json").read_text(encoding="utf-8")
    raw = json.loads(text)["gpus"]
    return MappingProxyType({key: _entry(key, entry) for key, entry in raw.items()})


def _load_architectures() -> MappingProxyType:
    text = resources.files("chapter2").joinpath("data", "gpus.json").read_text(encoding="utf-8")
    return _architectures(json.loads(text).get("architectures", {}))


ARCHITECTURES = _load_architectures()
"""Architecture key (for example 'hopper') -> Architecture, read once from data/gpus.json."""


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


# --------------------------------------------------------------------------- links between GPUs
#
# `data/links.json` holds the links between GPUs: each kind of link with the figure its vendor prints, and for
# each catalog GPU its scale-up link (NVLink, Infinity Fabric or PCIe), how many GPUs that link joins (its domain)
# and its scale-out link to other domains (a NIC per GPU). `chapter2.communication` costs collectives on them.

LINK_TOPOLOGIES = ("switch", "mesh", "network")
"""How n GPUs share a link: 'switch' (every GPU reaches any other at its whole per-GPU rate: NVSwitch, a PCIe
switch or the host), 'mesh' (one direct link to each peer, so n GPUs use n - 1 links each: AMD's 8-GPU
platforms) and 'network' (a NIC per GPU, between scale-up domains)."""

LATENCY_CLASSES = ("nvlink", "pcie", "network")


@dataclass(frozen=True)
class Link:
    """One kind of link between GPUs (`data/links.json`).

    `short` is a few words for tables ("NVLink 4"). `bandwidth` is bytes/s one GPU can send while it receives
    as much (one direction): half a vendor's
    "bidirectional" NVLink or PCIe figure (900 GB/s of NVLink 4 is 450 GB/s each way), an InfiniBand rate
    over 8 (400 Gb/s is 50 GB/s). On a 'mesh' it is all `links_per_gpu` links together, and `peer_bandwidth`
    one of them. `hop_latency` is the seconds NCCL's cost model charges per step of a ring over this class of
    link (`latency_class`); `in_switch_reduction` is True where the switches can add the GPUs' data themselves
    (NVLink SHARP) and `in_switch_latency` the time NCCL's model charges for that. `sources` maps each figure to
    its URL.
    """

    key: str
    name: str
    bandwidth: float
    topology: str
    latency_class: str
    hop_latency: float
    in_switch_reduction: bool = False
    in_switch_latency: float = 0.0
    peer_bandwidth: float | None = None
    links_per_gpu: int | None = None
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    note: str = ""
    short: str = ""

    def usable_bandwidth(self, n_gpus: int) -> float:
        """Bytes/s each way one of `n_gpus` GPUs can use: on a mesh only its n - 1 links to the others."""
        if self.topology == "mesh":
            return min(self.links_per_gpu, n_gpus - 1) * self.peer_bandwidth
        return self.bandwidth

    @property
    def bandwidth_gb_s(self) -> float:
        return self.bandwidth / GIGA


@dataclass(frozen=True)
class Interconnect:
    """How one catalog GPU talks to others: its scale-up `link` within a `domain` of GPUs, and its scale-out link.

    `domain` is how many GPUs the scale-up link joins (8 on an HGX board, 72 in an NVL72 rack); GPUs past it
    talk over `scale_out`, one NIC per GPU. `sources` maps "domain" and "scale_out" to URLs; `assumed` maps
    either to the reason it was assumed where no document gave it.
    """

    gpu: str
    link: Link
    domain: int
    scale_out: Link
    sources: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    assumed: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    note: str = ""


def _sourced_url(where: str, item: dict) -> str:
    url = str(item.get("source", ""))
    if not url.startswith("http"):
        raise ValueError(f"links.json: {where} needs a source URL")
    return url


def _link(key: str, raw: dict, latency: dict) -> Link:
    """A Link from its links.json record: the vendor's figure converted to bytes/s each way."""
    topology, cls = raw["topology"], raw["latency_class"]
    if topology not in LINK_TOPOLOGIES or cls not in LATENCY_CLASSES:
        raise ValueError(f"links.json: {key} has topology {topology!r} (known: {LINK_TOPOLOGIES}) and latency class "
                         f"{cls!r} (known: {LATENCY_CLASSES})")
    sources, peer, links = {"latency": latency["source"]}, None, None
    if topology == "mesh":
        item = raw["per_link_bidirectional_gb_s"]
        sources["bandwidth"] = _sourced_url(f"{key}.per_link_bidirectional_gb_s", item)
        peer, links = float(item["value"]) * GIGA / 2, int(raw["links_per_gpu"])
        bandwidth = peer * links
    elif topology == "network":
        item = raw["gbit_s"]
        sources["bandwidth"] = _sourced_url(f"{key}.gbit_s", item)
        bandwidth = float(item["value"]) * GIGA / 8
    else:
        item = raw["bidirectional_gb_s"]
        sources["bandwidth"] = _sourced_url(f"{key}.bidirectional_gb_s", item)
        bandwidth = float(item["value"]) * GIGA / 2
    in_switch = bool(raw.get("in_switch_reduction", False))
    if in_switch:
        sources["in_switch_reduction"] = _sourced_url(f"{key}.in_switch_source", {"source": raw.get("in_switch_source")})
    return Link(key=key, name=raw["name"], bandwidth=bandwidth, topology=topology, latency_class=cls,
                hop_latency=float(latency[cls]) * 1e-6, in_switch_reduction=in_switch,
                in_switch_latency=float(latency["in_switch"]) * 1e-6 if in_switch else 0.0,
                peer_bandwidth=peer, links_per_gpu=links, sources=MappingProxyType(sources), note=str(raw.get("note", "")),
                short=str(raw.get("short") or raw["name"]))


def _interconnect(key: str, raw: dict, links: dict) -> Interconnect:
    """An Interconnect from a links.json `gpus` record: every figure sourced, or assumed with a reason."""
    sources, assumed = {}, {}
    for name in ("domain", "scale_out"):
        item = raw[name]
        if "assumed" in item:
            if not str(item["assumed"]).strip():
                raise ValueError(f"links.json: gpus.{key}.{name} is assumed without a reason")
            assumed[name] = item["assumed"]
        else:
            sources[name] = _sourced_url(f"gpus.{key}.{name}", item)
    for name in (raw["scale_up"], raw["scale_out"]["link"]):
        if name not in links:
            raise ValueError(f"links.json: gpus.{key} names link {name!r}; known: {', '.join(links)}")
    domain = int(raw["domain"]["value"])
    if domain < 1:
        raise ValueError(f"links.json: gpus.{key}.domain must be at least 1")
    return Interconnect(gpu=key, link=links[raw["scale_up"]], domain=domain, scale_out=links[raw["scale_out"]["link"]],
                        sources=MappingProxyType(sources), assumed=MappingProxyType(assumed), note=str(raw.get("note", "")))


def _load_links() -> tuple[MappingProxyType, MappingProxyType]:
    raw = json.loads(resources.files("chapter2").joinpath("data", "links.json").read_text(encoding="utf-8"))
    latency = raw["latency_us"]
    _sourced_url("latency_us", latency)
    links = {key: _link(key, entry, latency) for key, entry in raw["links"].items()}
    interconnects = {key: _interconnect(key, entry, links) for key, entry in raw["gpus"].items()}
    unknown = set(interconnects) - set(GPUS)
    if unknown:
        raise ValueError(f"links.json: gpus {sorted(unknown)} are not in gpus.json")
    return MappingProxyType(links), MappingProxyType(interconnects)


LINKS, INTERCONNECTS = _load_links()
"""LINKS: link key (for example 'nvlink4') -> Link. INTERCONNECTS: catalog GPU key -> Interconnect."""


def get_link(link) -> Link:
    """A Link from a key of LINKS (case-insensitive) or a Link object."""
    if isinstance(link, Link):
        return link
    if not isinstance(link, str):
        raise TypeError(f"link must be a key of chapter2.hardware.LINKS such as 'nvlink4' or a Link, got {link!r}")
    by_lower = {k.lower(): v for k, v in LINKS.items()}
    if link.strip().lower() not in by_lower:
        raise ValueError(f"link must be one of {', '.join(LINKS)}, got {link!r}")
    return by_lower[link.strip().lower()]


def interconnect(gpu, link=None) -> Interconnect:
    """How `gpu` talks to other GPUs: its catalog Interconnect, or with `link` given, that link joining any number.

    A GPU outside the catalog (`custom_gpu`) has no interconnect of its own: give `link`.
    """
    g = get_gpu(gpu)
    if link is not None:
        chosen = get_link(link)
        return Interconnect(gpu=g.key, link=chosen, domain=1 << 20, scale_out=chosen,
                            note=f"{chosen.name} joining every GPU (chosen, not the catalog's)")
    if g.key not in INTERCONNECTS:
        raise ValueError(f"{g.key} has no link in the catalog (data/links.json): choose a link, one of {', '.join(LINKS)}")
    return INTERCONNECTS[g.key]
