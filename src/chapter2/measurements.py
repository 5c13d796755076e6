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
  FLOPs per prompt token (`roofline.prefill`, at the row's prompt length or 1);
- kernel_tflops, kernel_bandwidth: one kernel: the GPU's dense peak in the
  row's math dtype, or its memory bandwidth.

ratio = measured / bound. What separates them: kernels below peak, scheduling
and launch gaps, communication between GPUs (which the bound ignores), and
memory kept back by the engine. A ratio above 1 means the bound left out a
trick the row names (speculative decoding keeps several tokens per pass).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from . import roofline
from .hardware import get_gpu
from .models import ModelConfig, load_config

__all__ = ["METRICS", "TRICKS", "Measurement", "Comparison", "load", "model", "bound", "compare"]

METRICS = ("tokens_per_s_per_sequence", "output_tokens_per_s", "input_tokens_per_s", "kernel_tflops", "kernel_bandwidth")
TRICKS = ("speculative decoding", "prefix caching")
"""What a row may name as left out of the bound; only such a row may beat it."""


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


@dataclass(frozen=True)
class Comparison:
    """A measurement, its roofline bound in the same unit, and measured / bound."""

    measurement: Measurement
    bound: float

    @property
    def ratio(self) -> float:
        return self.measurement.value / self.bound


@cache
def _raw() -> dict:
    text = resources.files("chapter2").joinpath("data", "measurements.json").read_text(encoding="utf-8")
    return json.loads(text)


def load() -> tuple[Measurement, ...]:
    """Every measurement in data/measurements.json, checked: a known metric, a source URL, a trick from TRICKS."""
    rows = []
    for raw in _raw()["measurements"]:
        m = Measurement(**raw)
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


def bound(m: Measurement) -> float:
    """The roofline's best case for `m`'s setup, in `m.unit` (see the module docstring)."""
    if not isinstance(m, Measurement):
        raise TypeError(f"m must be a chapter2.measurements.Measurement (from load()), got {type(m).__name__}")
    gpu = get_gpu(m.gpu)
    if m.metric == "kernel_tflops":
        return gpu.peak_flops(m.dtype) / 1e12
    if m.metric == "kernel_bandwidth":
        return gpu.bandwidth / 1e9
    setup = dict(gpu=gpu, dtype=m.dtype, weight_dtype=m.weight_dtype, kv_dtype=m.kv_dtype, n_gpus=m.n_gpus,
                 parallel=m.parallel)
    if m.metric == "tokens_per_s_per_sequence":
        prompt = m.input_tokens or 1
        out = m.output_tokens or 2
        timeline = roofline.request_timeline(model(m.model), prompt, out, batch=m.batch or 1, **setup)
        return out / timeline.total_time
    if m.metric == "input_tokens_per_s":
        pre = roofline.prefill(model(m.model), m.input_tokens or 1, **setup)
        return pre.tokens / pre.compute_time
    serving = roofline.serving_throughput(model(m.model), m.input_tokens, m.output_tokens,
                                          concurrency=m.concurrency, **setup)
    return serving.output_tokens_per_s


@cache
def compare() -> tuple[Comparison, ...]:
    """Each measurement beside its bound."""
    return tuple(Comparison(m, bound(m)) for m in load())
