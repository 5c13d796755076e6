"""Published measurements beside their roofline bounds (chapter section 2.4).

A roofline time is a lower bound, so a measured speed is at most the bound's
speed. `data/measurements.json` holds measurements read from public sources
(engines' performance tables, kernel papers and READMEs, vendor write-ups),
each with the setup it was measured in. `compare()` puts each beside its bound:

- tokens_per_s_per_sequence: one sequence's decode speed, batch `batch`:
  output tokens / `roofline.request_timeline` total time (prefill included);
- output_tokens_per_s: a server's output throughput: `roofline.serving_throughput`
  at the largest concurrency that fits (the engines ran flat out);
- input_tokens_per_s: a server's prefill throughput: the compute roof over the
  FLOPs per prompt token (`roofline.prefill`, at the row's prompt length or 1),
  with the communication of a batch so large that its latencies vanish
  (`THROUGHPUT_BATCH` prompts per pass);
- kernel_tflops, kernel_bandwidth: one kernel: the GPU's dense peak in the
  row's math dtype, or its memory bandwidth.

ratio = measured / bound. On several GPUs the bound includes the communication
between them (`roofline.PhaseEstimate.time`); `Comparison.bound_without_communication`
is the same bound if the GPUs talked for free, and `communication_share` the
part of the gap between that bound and the measurement which communication
explains. What else separates them: kernels below peak, scheduling and launch
gaps, and memory kept back by the engine. A ratio above 1 means the bound left
out a trick the row names (speculative decoding keeps several tokens per pass).

Two more fractions say which resource a run used: MFU (model FLOPs utilization),
the FLOP/s the measured speed implies (the FLOPs the roofline counts for the same
work, over the measured time) divided by the peak FLOP/s of all the run's GPUs in
its math dtype; and MBU (model bandwidth utilization), the same for bytes against
their memory bandwidth. A decode run is memory bound, so its MBU is near its ratio
and its MFU tiny; a kernel row has only the one its metric measures.

Which GPU figures a bound uses: the catalog's (`hardware.GPUS`), unless the row
names the `system` it ran on and that system's vendor page prints other figures
for the same GPU: TensorRT-LLM's B200 rows ran on a DGX B200, whose page gives
64 TB/s of HBM3e over its 8 GPUs (8 TB/s each, against the HGX datasheet's 7.7
the catalog keeps), and its GB200 rows on GB200 NVL72 GPUs the overview lists
at 192 GB (the catalog's datasheet: 186). `gpu_of` is the GPU a row's bound
used; the page names the system and its figures beside the row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from . import roofline
from .hardware import GIGA, GPU, TERA, get_gpu
from .models import ModelConfig, load_config

__all__ = ["METRICS", "TRICKS", "THROUGHPUT_BATCH", "System", "Measurement", "Comparison", "load", "model", "gpu_of",
           "bound", "bound_without_communication", "compare"]

METRICS = ("tokens_per_s_per_sequence", "output_tokens_per_s", "input_tokens_per_s", "kernel_tflops", "kernel_bandwidth")
TRICKS = ("speculative decoding", "prefix caching")
"""What a row may name as left out of the bound; only such a row may beat it."""

THROUGHPUT_BATCH = 1 << 16
"""Prompts per pass at which an input-throughput bound takes its communication: so many that each
collective's latency, shared by all their tokens, no longer counts (only bytes over bandwidth do)."""


@dataclass(frozen=True)
class System:
    """The system a measurement ran on, where its vendor prints other figures than the catalog's for the same GPU.

    `bandwidth` (bytes/s per GPU) and `memory_bytes` (per GPU) are None where the catalog's figure stands;
    `sources` maps "bandwidth" and "memory" to the URL each was read from.
    """

    name: str
    bandwidth: float | None = None
    memory_bytes: float | None = None
    sources: tuple[tuple[str, str], ...] = ()


def _system(row_id: str, raw: dict | None) -> System | None:
    """A measurement's `system` record: a name, and each figure with its value and source URL."""
    if raw is None:
        return None
    figures, sources = {}, []
    for field_name, key, unit in (("bandwidth_tb_s", "bandwidth", TERA), ("memory_gb", "memory", GIGA)):
        item = raw.get(field_name)
        if item is None:
            continue
        if not str(item.get("source", "")).startswith("https://") or not float(item.get("value", 0)) > 0:
            raise ValueError(f"measurements.json: {row_id}.system.{field_name} needs a positive value and a source URL")
        figures[key] = float(item["value"]) * unit
        sources.append((key, item["source"]))
    return System(name=str(raw["name"]), bandwidth=figures.get("bandwidth"), memory_bytes=figures.get("memory"),
                  sources=tuple(sources))


@dataclass(frozen=True)
class Measurement:
    """One published measurement and its setup (fields as in data/measurements.json)."""

    id: str
    model: str
    gpu: str
    n_gpus: int
    parallel: str
    weight_dtype: str
    dtype: str
    kv_dtype: str
    batch: int | None
    concurrency: int | None
    input_tokens: int | None
    output_tokens: int | None
    engine: str
    metric: str
    unit: str
    value: float
    date: str
    url: str
    table: str
    trick: str | None
    draft_tokens: int | None
    note: str
    system: System | None = None
    measured_model: str | None = None
    """The model the source measured, where the row costs it with another config of the same architecture (the
    perf overview's 'Llama 3.3 70B' rows use Llama 3.1 70B's config.json: same shapes, other weights)."""


@dataclass(frozen=True)
class Comparison:
    """A measurement, its roofline bound in the same unit, and measured / bound.

    `bound` includes the communication between GPUs; `bound_without_communication` is the same bound
    if they talked for free (equal to `bound` on one GPU), and `link` the link(s) the bound used.

    `mfu` and `mbu`: the fractions of the run's peak FLOP/s and memory bandwidth (all its GPUs) the measured speed
    implies, from the FLOPs and bytes the roofline counts for the same work. None where that count is not known: a
    FLOP/s kernel has no MBU, a bandwidth kernel no MFU, a row with a trick neither (its work per token depends on
    what the trick saved), a prefill without its prompt length no MBU.
    """

    measurement: Measurement
    bound: float
    bound_without_communication: float | None = None
    link: str = ""
    mfu: float | None = None
    mbu: float | None = None

    @property
    def ratio(self) -> float:
        return self.measurement.value / self.bound

    @property
    def ratio_without_communication(self) -> float:
        return self.measurement.value / (self.bound_without_communication or self.bound)

    @property
    def communication_share(self) -> float:
        """The part of the time between the bound without communication and the measurement that the
        communication term accounts for: (ratio - ratio without) / (1 - ratio without), 0 on one GPU.

        Times per unit are 1 / rate, so the measured time is 1 / value, the bound's 1 / bound: the
        communication adds 1 / bound - 1 / bound_without of a gap of 1 / value - 1 / bound_without.
        """
        r0, r1 = self.ratio_without_communication, self.ratio
        if r0 >= 1:
            return 0.0
        return (r1 - r0) / (1 - r0)


@cache
def _raw() -> dict:
    text = resources.files("chapter2").joinpath("data", "measurements.json").read_text(encoding="utf-8")
    return json.loads(text)


def load() -> tuple[Measurement, ...]:
    """Every measurement in data/measurements.json, checked: a known metric, a source URL, a trick from TRICKS."""
    rows = []
    for raw in _raw()["measurements"]:
        m = Measurement(**{**raw, "system": _system(raw["id"], raw.get("system"))})
        if m.metric not in METRICS:
            raise ValueError(f"measurements.json: {m.id} has metric {m.metric!r}; known: {METRICS}")
        if not m.url.startswith("https://") or not m.table.strip():
            raise ValueError(f"measurements.json: {m.id} needs a source URL and the table it was read from")
        if m.trick is not None and m.trick not in TRICKS:
            raise ValueError(f"measurements.json: {m.id} names trick {m.trick!r}; known: {TRICKS}")
        rows.append(m)
    return tuple(rows)


@cache
def model(name: str) -> ModelConfig:
    """The model a measurement names: a shipped config, or the config.json fields the data file copies."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a model name from measurements.json, got {name!r}")
    entry = _raw()["models"].get(name)
    if entry is None:
        raise ValueError(f"measurements.json has no model {name!r}; known: {', '.join(_raw()['models'])}")
    if "shipped" in entry:
        return load_config(entry["shipped"])
    return ModelConfig.from_hf(dict(entry["hf"]), name=name)


def gpu_of(m: Measurement) -> GPU:
    """The GPU `m`'s bound uses: the catalog's, with the bandwidth and memory of the system the row ran on where
    that system's vendor prints other figures (`System`)."""
    if not isinstance(m, Measurement):
        raise TypeError(f"m must be a chapter2.measurements.Measurement (from load()), got {type(m).__name__}")
    gpu = get_gpu(m.gpu)
    if m.system is None:
        return gpu
    sources = {**gpu.sources, **dict(m.system.sources)}
    return replace(gpu, bandwidth=m.system.bandwidth or gpu.bandwidth,
                   memory_bytes=m.system.memory_bytes or gpu.memory_bytes, sources=type(gpu.sources)(sources))


def bound(m: Measurement) -> float:
    """The roofline's best case for `m`'s setup, in `m.unit`, communication between GPUs included
    (see the module docstring)."""
    return _bounds(m)[0]


def bound_without_communication(m: Measurement) -> float:
    """The same bound if the GPUs talked for free (what the page showed before communication was costed)."""
    return _bounds(m)[1]


@dataclass(frozen=True)
class _Work:
    """A measurement's bounds in its unit (with and without communication), the link they used, and the FLOPs and
    bytes the roofline counts per unit of work (None for a kernel row: its metric is itself FLOP/s or bytes/s)."""

    bound: float
    bound_without_communication: float
    link: str = ""
    flops_per_unit: float | None = None
    bytes_per_unit: float | None = None


def _bounds(m: Measurement) -> tuple[float, float, str]:
    """(bound with communication, bound without, the link used or '') for `m`, in `m.unit`."""
    w = _work(m)
    return w.bound, w.bound_without_communication, w.link


def _work(m: Measurement) -> _Work:
    """The bounds of `m` in `m.unit`, and the work one unit stands for: one output token of one sequence (the batch
    decodes in lockstep), one output token of a server, one prompt token."""
    if not isinstance(m, Measurement):
        raise TypeError(f"m must be a chapter2.measurements.Measurement (from load()), got {type(m).__name__}")
    gpu = gpu_of(m)
    if m.metric == "kernel_tflops":
        return _Work(gpu.peak_flops(m.dtype) / 1e12, gpu.peak_flops(m.dtype) / 1e12)
    if m.metric == "kernel_bandwidth":
        return _Work(gpu.bandwidth / 1e9, gpu.bandwidth / 1e9)
    setup = dict(gpu=gpu, dtype=m.dtype, weight_dtype=m.weight_dtype, kv_dtype=m.kv_dtype, n_gpus=m.n_gpus,
                 parallel=m.parallel)
    if m.metric == "tokens_per_s_per_sequence":
        prompt = m.input_tokens or 1
        out = m.output_tokens or 2
        timeline = roofline.request_timeline(model(m.model), prompt, out, batch=m.batch or 1, **setup)
        phases = (timeline.prefill, *timeline.decode)  # one sequence's `out` tokens; the batch's come at once
        return _Work(out / timeline.total_time, out / timeline.total_time_without_communication, timeline.prefill.link,
                     sum(p.flops for p in phases) / out, sum(p.bytes for p in phases) / out)
    if m.metric == "input_tokens_per_s":
        pre = roofline.prefill(model(m.model), m.input_tokens or 1, batch=THROUGHPUT_BATCH, **setup)
        talk = pre.communication
        with_talk = max(pre.compute_time, talk.overlapped) + talk.exposed if talk else pre.compute_time
        return _Work(pre.tokens / with_talk, pre.tokens / pre.compute_time, pre.link, pre.flops / pre.tokens,
                     pre.bytes / pre.tokens)
    serving = roofline.serving_throughput(model(m.model), m.input_tokens, m.output_tokens,
                                          concurrency=m.concurrency, **setup)
    tokens = serving.concurrency * serving.output_tokens  # one cycle's output tokens
    return _Work(serving.output_tokens_per_s, serving.output_tokens_per_s_without_communication, serving.link,
                 serving.flops / tokens, serving.bytes / tokens)


def _comparison(m: Measurement) -> Comparison:
    w = _work(m)
    gpu = gpu_of(m)
    peak, bandwidth = gpu.peak_flops(m.dtype) * m.n_gpus, gpu.bandwidth * m.n_gpus
    bounds = (m, w.bound, w.bound_without_communication, w.link)
    if m.metric == "kernel_tflops":
        return Comparison(*bounds, mfu=m.value * 1e12 / peak)
    if m.metric == "kernel_bandwidth":
        return Comparison(*bounds, mbu=m.value * 1e9 / bandwidth)
    if m.trick is not None:  # the work per token depends on what the trick saved, which the row does not give
        return Comparison(*bounds)
    if m.metric == "input_tokens_per_s" and m.input_tokens is None:  # bytes per token need the prompt's length
        return Comparison(*bounds, mfu=m.value * w.flops_per_unit / peak)
    return Comparison(*bounds, mfu=m.value * w.flops_per_unit / peak, mbu=m.value * w.bytes_per_unit / bandwidth)


@cache
def compare() -> tuple[Comparison, ...]:
    """Each measurement beside its bound, with and without communication, and the MFU and MBU its speed implies."""
    return tuple(_comparison(m) for m in load())
