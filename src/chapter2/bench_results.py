"""Measured benchmark results, read back: roofline points and roofs (chapter sections 2.4 and 2.5).

`python -m chapter2.host.bench cpu|gpu` and `python -m chapter2.host.bench.tiny_lm`
write one JSON file per run (layout in `chapter2.host.bench`). The runs kept as
the site's measured results live in `chapter2/data/bench/`. This module lists
and loads them, keeps the newest run per device and suite, and turns each
measured kernel into a point on its device's roofline:

    intensity      = ops / bytes        (operations per byte of memory traffic)
    achieved FLOP/s = ops / seconds     (the measured time)

Ops and bytes are what the run recorded where it recorded them; where it did
not, they are computed from the recorded shapes with the same formulas the
chapter uses (`chapter2.attention.attended_pairs`, `chapter2.roofline`,
`chapter2.models.ModelConfig.flops_per_token`). Bytes are the minimum traffic
(each tensor read or written once), so an intensity is an upper bound: a
kernel that moves more sits further left. No number is filled in that the run
did not measure.

The roofs of a device (attainable FLOP/s = min(compute roof, intensity x
memory roof)):

- GPU run: the catalog's dense peak for the run's dtype and the catalog
  bandwidth of the detected device (`chapter2.hardware`), plus the device
  copy bandwidth measured in the run, if it measured one.
- CPU run: the numpy float32 matmul rate measured by the ``cpu-attention``
  suite as the compute roof, and the numpy copy bandwidth (large arrays, read
  plus write) as the memory roof, taken from the same run if it recorded one,
  else from the newest ``cpu-tiny-lm`` run on the same CPU (the suites run one
  after the other; each roof says which run it came from).

Only numpy and the standard library are imported (this runs in Pyodide).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path

from . import attention, hardware, roofline
from ._checks import dtype_bytes
from .devices import catalog_gpu, display_name
from .models import TINY_LM_DIR


# ------------------------------------------------------------------ the GPU benchmark's plan
# Defined here, in the numpy core, so pages can quote the goals and shapes without torch;
# `chapter2.host.bench.gpu` runs them. Goals are ratios measured side by side in one run.
GPU_GOALS = {"attention_vs_sdpa_default": 1.0, "decode_vs_copy_bandwidth": 0.8, "window_speedup": 1.8}

# (label, B, H_q, H_kv, N, d): FlashAttention-paper style, B * N = 16k tokens, 2048 wide (H = 16, d = 128)
GPU_SIZES = {
    "device": {
        "attention": [(f"N={n}", 16384 // n, 16, 16, n, 128) for n in (1024, 2048, 4096, 8192, 16384)]
        + [("N=8192 GQA 32/8", 1, 32, 8, 8192, 128)],
        # (label, B, H_q, H_kv, S, d)
        "decode": [("B=8 S=32k GQA 32/8 (1.07 GB)", 8, 32, 8, 32768, 128),
                   ("B=1 S=128k GQA 32/8 (0.54 GB)", 1, 32, 8, 131072, 128)],
        # (label, B, H, N, d, w)
        "window": [("N=16k w=4k", 1, 16, 16384, 128, 4096)],
        "math_max_n": 4096,
    },
    "tiny": {
        "attention": [("N=64", 1, 2, 2, 64, 32), ("N=64 GQA 4/2", 1, 4, 2, 64, 32)],
        "decode": [("B=2 S=128 GQA 4/2", 2, 4, 2, 128, 32)],
        "window": [("N=256 w=64", 1, 2, 256, 32, 64)],
        "math_max_n": 4096,
    },
}


__all__ = [
    "BENCH_DIR",
    "SCHEMA",
    "SUITES",
    "Point",
    "Roof",
    "DeviceRoofline",
    "list_result_files",
    "load_results",
    "check_result",
    "device_key",
    "newest",
    "roofline_points",
    "device_roofs",
    "rooflines",
    "device_roofline",
]

# A path next to the package (not importlib.resources): `chapter2/data` is not a
# package, and a pure-Python wheel installed in Pyodide unpacks to real files.
BENCH_DIR = Path(__file__).resolve().parent / "data" / "bench"
SCHEMA = "chapter2.bench/1"  # the layout `chapter2.host.bench` writes (same string as chapter2.host.bench.SCHEMA)
SUITES = ("cpu-attention", "cpu-tiny-lm", "gpu-attention")


# -----------------------------------------------------------------------------
# loading


def list_result_files(folder=None) -> list[Path]:
    """The result files (`*.json`) in `folder` (default `BENCH_DIR`), sorted by name."""
    return sorted(_folder(folder).glob("*.json"))


def load_results(folder=None) -> list[dict]:
    """Every result in `folder` (default `BENCH_DIR`), parsed and checked, oldest first.

    Each dict is the file's JSON plus one key, ``"file"``, the file's name.
    A file that is not a well-formed result raises ValueError naming it.
    """
    docs = []
    for path in list_result_files(folder):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path.name}: not valid JSON ({err})") from err
        check_result(doc, path.name)
        docs.append({**doc, "file": path.name})
    return sorted(docs, key=_run_order)


def _folder(folder) -> Path:
    if folder is None:
        return BENCH_DIR
    if not isinstance(folder, str | os.PathLike):
        raise TypeError(f"folder must be a path (str or os.PathLike) or None, got {type(folder).__name__}")
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"folder must be an existing directory, got {str(path)!r}")
    return path


def check_result(doc, name: str = "result") -> dict:
    """Raise ValueError unless `doc` is a benchmark result with its provenance; return it.

    Required: ``schema`` = SCHEMA, a known ``suite``, ``provenance`` with an ISO 8601
    ``date``, ``git.commit``, ``versions`` (numpy at least) and ``device`` (``kind``, ``name``),
    ``config`` and a non-empty ``results`` list.
    """
    if not isinstance(doc, dict):
        raise TypeError(f"{name}: doc must be a result, a JSON object (dict), got {type(doc).__name__}")
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{name}: schema must be {SCHEMA!r}, got {doc.get('schema')!r}")
    if doc.get("suite") not in SUITES:
        raise ValueError(f"{name}: suite must be one of {', '.join(SUITES)}, got {doc.get('suite')!r}")
    prov = doc.get("provenance")
    if not isinstance(prov, dict):
        raise ValueError(f"{name}: provenance is missing")
    try:
        _dt.datetime.fromisoformat(prov["date"])
    except (KeyError, TypeError, ValueError) as err:
        raise ValueError(f"{name}: provenance.date must be an ISO 8601 timestamp, got {prov.get('date')!r}") from err
    if not isinstance(prov.get("git"), dict) or "commit" not in prov["git"]:
        raise ValueError(f"{name}: provenance.git.commit is missing")
    if not isinstance(prov.get("versions"), dict) or not prov["versions"].get("numpy"):
        raise ValueError(f"{name}: provenance.versions must name the numpy version at least")
    device = prov.get("device")
    if not isinstance(device, dict) or not device.get("kind") or not device.get("name"):
        raise ValueError(f"{name}: provenance.device must have a kind and a name")
    if not isinstance(doc.get("config"), dict):
        raise ValueError(f"{name}: config is missing")
    if not isinstance(doc.get("results"), list) or not doc["results"]:
        raise ValueError(f"{name}: results must be a non-empty list")
    return doc


def _run_order(doc: dict):
    return (_dt.datetime.fromisoformat(doc["provenance"]["date"]), doc.get("file", ""))


# -----------------------------------------------------------------------------
# devices


def device_key(result: dict) -> str:
    """Which device a result was measured on, as a stable string.

    A GPU is its name ("cuda: NVIDIA H200"). A CPU is its machine type, logical core
    count and platform string: the suites name a CPU differently (the CPU suite by
    its core count, the tiny-LM suite by its /proc/cpuinfo model name), so the name
    alone would split one machine in two.
    """
    device = _checked(result)["provenance"]["device"]
    if device["kind"] == "cuda":
        return f"cuda: {device['name']}"
    prov = result["provenance"]
    return f"{device['kind']}: {device.get('machine')}, {device.get('cpu_count')} logical cores, {prov.get('platform')}"


def _is_interpreter_run(result: dict) -> bool:
    """A gpu suite run under TRITON_INTERPRET=1 times the interpreter, not a device."""
    return result["suite"] == "gpu-attention" and (
        bool(result["config"].get("interpreter")) or result["provenance"]["device"]["kind"] != "cuda")


def newest(results) -> list[dict]:
    """The newest run (by provenance date) for each (device, suite), oldest first.

    Triton-interpreter runs of the gpu suite are left out: they time the interpreter.
    """
    best = {}
    for r in _checked_list(results):
        if _is_interpreter_run(r):
            continue
        key = (device_key(r), r["suite"])
        if key not in best or _run_order(r) >= _run_order(best[key]):
            best[key] = r
    return sorted(best.values(), key=_run_order)


def _checked(result) -> dict:
    if not isinstance(result, dict):
        raise TypeError(f"result must be a dict (one parsed result file), got {type(result).__name__}")
    return check_result(result, result.get("file", "result"))


def _checked_list(results) -> list[dict]:
    if isinstance(results, dict) or not isinstance(results, list | tuple):
        raise TypeError(f"results must be a list of result dicts (from load_results), got {type(results).__name__}")
    return [_checked(r) for r in results]


# -----------------------------------------------------------------------------
# points


@dataclass(frozen=True)
class Point:
    """One measured kernel on a roofline: `intensity` = ops / bytes, `achieved_flops` = ops / seconds.

    `device` is `device_key` of the run, `date` its provenance date (ISO 8601),
    `kernel` the implementation measured (e.g. "flash", "naive", "decode", "triton").
    """

    label: str
    intensity: float
    achieved_flops: float
    device: str
    date: str
    kernel: str = ""
    suite: str = ""
    ops: float = 0.0
    bytes: float = 0.0
    seconds: float = 0.0


def _point(result, label, kernel, ops, nbytes, seconds) -> Point:
    ops, nbytes, seconds = float(ops), float(nbytes), float(seconds)
    if not (ops > 0 and nbytes > 0 and seconds > 0):
        raise ValueError(f"{result.get('file', 'result')}: {label}: ops, bytes and seconds must be > 0, "
                         f"got {ops}, {nbytes}, {seconds}")
    return Point(label=label, intensity=ops / nbytes, achieved_flops=ops / seconds, device=device_key(result),
                 date=result["provenance"]["date"], kernel=kernel, suite=result["suite"], ops=ops, bytes=nbytes,
                 seconds=seconds)


def roofline_points(results) -> list[Point]:
    """Every measured kernel of every result in `results` as a `Point` (interpreter runs give none).

    Per suite (times as each suite reports its own rates):

    - ``cpu-attention``: naive attention and the tiled FlashAttention per shape.
      Ops: the recorded ``flops`` (4 d H B pairs: QK^T and PV). Bytes, from the
      shape at the recorded dtype: naive attention round-trips S and P through
      memory (`roofline.attention_intensity`, 4N^2 + 4Nd elements per head; it
      materializes all N^2 scores even when causal), the tiled version reads Q,
      K, V and writes O once (`roofline.flash_attention_intensity`, 4Nd). Time:
      the fastest run (`min_s`).
    - ``cpu-tiny-lm``: one decode step per prompt length. Bytes: the recorded
      ``bytes_per_step``. Ops: `ModelConfig.flops_per_token` of the model's
      config.json, averaged over the steps as the bytes are (the cache holds
      N + k tokens after step k). Time: the median step.
    - ``gpu-attention``: every variant that ran, per case. Ops and bytes as
      recorded, else from the shape (4 d H_q B pairs; decode reads the KV cache).
      Time: the median (`triton.testing.do_bench`).
    """
    points = []
    for r in _checked_list(results):
        if _is_interpreter_run(r):
            continue
        points += {"cpu-attention": _cpu_attention_points, "cpu-tiny-lm": _tiny_lm_points,
                   "gpu-attention": _gpu_points}[r["suite"]](r)
    return points


def _cpu_attention_points(result) -> list[Point]:
    points = []
    for rec in result["results"]:
        s = rec["shape"]
        b, h, n, d = s["B"], s["H"], s["N"], s["d"]
        heads = b * h
        causal = bool(rec["causal"])
        ops = rec.get("flops") or 4.0 * d * heads * attention.attended_pairs(n, causal=causal)
        element = dtype_bytes("dtype", rec.get("dtype", "float32"))
        traffic = {"naive": heads * roofline.attention_intensity(n, d, element).bytes,
                   "flash": heads * roofline.flash_attention_intensity(n, d, element).bytes}
        names = {"naive": "naive attention", "flash": "tiled FlashAttention"}
        for kernel in ("naive", "flash"):
            label = f"{names[kernel]}, N={n}{' causal' if causal else ''}"
            points.append(_point(result, label, kernel, ops, traffic[kernel], rec[kernel]["min_s"]))
    return points


def _tiny_lm_config(result):
    """The tiny model's ModelConfig, checked against the sizes the run recorded."""
    from .models import ModelConfig

    cfg = result["config"]
    recorded = Path(str(cfg.get("model_dir", "")))
    if (recorded / "config.json").is_file():
        path = recorded / "config.json"
    elif recorded.name == TINY_LM_DIR.name:  # the shipped model, recorded on another machine
        path = TINY_LM_DIR / "config.json"
    else:
        raise ValueError(f"{result.get('file', 'result')}: no config.json for the model at {str(recorded)!r}")
    model = ModelConfig.from_json(path)
    element = dtype_bytes("dtype", cfg.get("dtype", "float32"))
    found = {"parameters": model.params().total, "layers": model.num_hidden_layers,
             "kv_bytes_per_token": model.kv_cache_elements_per_token() * element}
    for key, value in found.items():
        if key in cfg and cfg[key] != value:
            raise ValueError(f"{result.get('file', 'result')}: {path} gives {key} = {value}, the run recorded "
                             f"{cfg[key]}: not the measured model")
    return model


def _tiny_lm_points(result) -> list[Point]:
    model = _tiny_lm_config(result)
    points = []
    for rec in result["results"]:
        n, steps = rec["prompt_tokens"], rec["decode_steps"]
        ops = statistics.fmean(model.flops_per_token(n + k) for k in range(1, steps + 1))
        dec = rec["decode"]
        label = f"tiny LM decode step after {n} tokens"
        points.append(_point(result, label, "decode", ops, dec["bytes_per_step"], dec["median_s"]))
    return points


def _gpu_points(result) -> list[Point]:
    element = dtype_bytes("dtype", result["config"].get("dtype", "bf16"))
    points = []
    for rec in result["results"]:
        s, part = rec["shape"], rec["part"]
        if part == "attention":
            b, h_q, h_kv, n, d = s["B"], s["H_q"], s["H_kv"], s["N"], s["d"]
            causal = bool(rec["causal"])
            ops = rec.get("flops") or 4.0 * b * h_q * d * attention.attended_pairs(n, causal=causal)
            nbytes = rec.get("bytes") or (2 * b * h_q * n * d + 2 * b * h_kv * n * d) * element
            per_variant = {v.get("variant"): (ops, nbytes) for v in rec["variants"]}
            title = f"attention {rec['case']}{' causal' if causal else ''}"
        elif part == "decode":
            b, h_q, h_kv, length, d = s["B"], s["H_q"], s["H_kv"], s["S"], s["d"]
            ops = 4.0 * b * h_q * d * attention.attended_pairs(1, length)  # one query against S keys
            nbytes = rec.get("bytes") or (2 * b * h_kv * length * d + 2 * b * h_q * d) * element
            per_variant = {v.get("variant"): (ops, nbytes) for v in rec["variants"]}
            title = f"decode {rec['case']}"
        elif part == "window":
            b, h, n, d, w = s["B"], s["H"], s["N"], s["d"], rec["window"]
            nbytes = b * h * roofline.flash_attention_intensity(n, d, element).bytes  # Q, K, V read, O written
            pairs = {"triton_causal": rec.get("full_pairs") or attention.attended_pairs(n, causal=True),
                     "triton_window": rec.get("window_pairs") or attention.attended_pairs(n, causal=True, window=w)}
            per_variant = {name: (4.0 * b * h * d * p, nbytes) for name, p in pairs.items()}
            title = f"window {rec['case']}"
        else:
            raise ValueError(f"{result.get('file', 'result')}: unknown gpu part {part!r}")
        for v in rec["variants"]:
            if "error" in v or v.get("variant") not in per_variant:
                continue  # a backend that did not run measured nothing
            ops, nbytes = per_variant[v["variant"]]
            points.append(_point(result, f"{title}: {v['variant']}", v["variant"], ops, nbytes, v["median_s"]))
    return points


# -----------------------------------------------------------------------------
# roofs


@dataclass(frozen=True)
class Roof:
    """One roof: `kind` "compute" (`value` in FLOP/s) or "memory" (bytes/s); `label` says what and from where."""

    kind: str
    value: float
    label: str
    measured: bool
    source: str = ""  # the result file (measured) or the catalog key


def device_roofs(results) -> dict[str, tuple[Roof, ...]]:
    """The roofs of each device in `results` (by `device_key`), from the newest run that records each.

    GPU: catalog dense peak (the run's dtype) and catalog bandwidth, plus the
    measured device copy bandwidth (best of the decode cases). CPU: the measured
    numpy matmul rate (best shape) and the measured numpy copy bandwidth.
    """
    by_device = {}
    for r in sorted(_checked_list(results), key=_run_order, reverse=True):  # newest first
        if not _is_interpreter_run(r):
            by_device.setdefault(device_key(r), []).append(r)
    return {key: _roofs(runs) for key, runs in by_device.items()}


def _roofs(runs: list[dict]) -> tuple[Roof, ...]:
    roofs = []
    gpu_runs = [r for r in runs if r["suite"] == "gpu-attention"]
    if gpu_runs:
        run = gpu_runs[0]
        dtype = run["config"].get("dtype", "bf16")
        gpu = _catalog_gpu(run)
        if gpu is not None:
            roofs.append(Roof("compute", gpu.peak_flops(dtype), f"{gpu.key} dense {dtype.upper()} peak (catalog)",
                              False, gpu.key))
            roofs.append(Roof("memory", gpu.bandwidth, f"{gpu.key} memory bandwidth (catalog)", False, gpu.key))
        copies = [2.0 * rec["kv_cache_bytes"] / rec["copy"]["median_s"] for rec in run["results"]
                  if rec.get("part") == "decode" and "error" not in rec.get("copy", {"error": None})]
        if copies:
            roofs.append(Roof("memory", max(copies), "device copy bandwidth (measured)", True, run.get("file", "")))
        return tuple(roofs)
    matmul = [r for r in runs if r["suite"] == "cpu-attention"]
    if matmul:
        run = matmul[0]
        rate = max(rec["matmul"]["flops"] / rec["matmul"]["min_s"] for rec in run["results"])
        roofs.append(Roof("compute", rate, "numpy float32 matmul (measured)", True, run.get("file", "")))
    copy_runs = matmul[:1] + [r for r in runs if r not in matmul[:1]]  # the matmul run's own copy first, then newest
    for run in copy_runs:
        copy = (run.get("copy") or {}).get("large")
        if copy:
            roofs.append(Roof("memory", copy["bytes_moved"] / copy["median_s"], "numpy copy, large arrays (measured)",
                              True, run.get("file", "")))
            break
    return tuple(roofs)


def _catalog_gpu(run):
    """The catalog entry the run recorded (config.catalog.catalog_key), else the one its device name names."""
    key = (run["config"].get("catalog") or {}).get("catalog_key")
    if key in hardware.GPUS:
        return hardware.GPUS[key]
    return catalog_gpu(run["provenance"]["device"]["name"])


# -----------------------------------------------------------------------------
# per device


@dataclass(frozen=True)
class DeviceRoofline:
    """One device's measured roofline: its roofs and its measured points, with the runs they came from."""

    device: str
    name: str
    dates: tuple[str, ...]  # the runs' dates, YYYY-MM-DD, sorted
    files: tuple[str, ...]
    roofs: tuple[Roof, ...]
    points: tuple[Point, ...]

    @property
    def compute_roofs(self) -> tuple[Roof, ...]:
        return tuple(r for r in self.roofs if r.kind == "compute")

    @property
    def memory_roofs(self) -> tuple[Roof, ...]:
        return tuple(r for r in self.roofs if r.kind == "memory")

    @property
    def is_gpu(self) -> bool:
        return self.device.startswith("cuda:")


def rooflines(results=None) -> list[DeviceRoofline]:
    """One `DeviceRoofline` per device, from the newest run per (device, suite) in `results`
    (default: `load_results()`, the committed runs). GPUs first, then by device key."""
    selected = newest(load_results() if results is None else results)
    groups = {}
    for r in selected:
        groups.setdefault(device_key(r), []).append(r)
    roofs = device_roofs(selected)
    out = []
    for key in sorted(groups, key=lambda k: (not k.startswith("cuda:"), k)):
        runs = groups[key]
        out.append(DeviceRoofline(
            device=key, name=display_name(r["provenance"]["device"] for r in runs),
            dates=tuple(sorted({r["provenance"]["date"][:10] for r in runs})),
            files=tuple(r.get("file", "") for r in runs), roofs=roofs.get(key, ()),
            points=tuple(roofline_points(runs))))
    return out


def device_roofline(kind: str = "cpu", results=None) -> DeviceRoofline:
    """The first `DeviceRoofline` of a device kind ("cpu" or "cuda") in `rooflines(results)` (for pages)."""
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"kind must be 'cpu' or 'cuda', got {kind!r}")
    for panel in rooflines(results):
        if panel.device.startswith(f"{kind}:"):
            return panel
    raise ValueError(f"no {kind} results among the {'committed' if results is None else 'given'} benchmark results")
