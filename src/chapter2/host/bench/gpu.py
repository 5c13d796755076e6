"""GPU benchmarks (torch + triton): FlashAttention forward, decode, sliding window.

Three measurements, each validated before it is timed and each reported as
ratios measured side by side in one run:

1. attention: the Triton forward (`chapter2.host.kernels.flash_attention`) against
   torch SDPA, default dispatch and each backend forced (flash, efficient,
   cudnn, math); TFLOP/s (4 d H pairs FLOPs: QK^T and PV), GB/s (Q, K, V read
   and O written once) and their share of the catalog peak of the detected
   device. Goal reported: Triton >= 1.0x SDPA default.
2. decode: flash-decoding (`decode_attention`) over a KV cache of more than
   1 GB; bytes moved per second against the device-to-device copy bandwidth
   measured in the same run (copy moves 2 bytes per byte copied: read and
   write). Goal reported: >= 0.8x copy bandwidth.
3. window: the Triton forward with a sliding window w against full causal, at
   N = 16k, w = 4k; speedup against the ideal work ratio
   (N^2 / 2) / (N w - w^2 / 2) (exact pair counts). Goal reported: >= 1.8x.

Runs on a CUDA device, or (`--size tiny`) on the CPU under TRITON_INTERPRET=1
to check the harness itself; interpreter timings mean nothing. No numpy
needed: this file imports torch, triton and the standard library only.
"""

from __future__ import annotations

import math
import os
from functools import partial

from ...bench_results import GPU_GOALS as GOALS
from ...bench_results import GPU_SIZES as SIZES
from ...devices import device_name
from ._harness import catalog_peaks, time_cpu, time_cuda, write_result

def _device() -> str:
    import torch

    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        return "cpu"
    if not torch.cuda.is_available():
        raise RuntimeError("the GPU suite needs a CUDA device (or TRITON_INTERPRET=1 with --size tiny)")
    return "cuda"


def _timer(device):
    return time_cuda if device == "cuda" else (lambda fn: time_cpu(fn, reps=2, warmup=1))


def _sdpa(backend=None, **kw):
    """A callable running torch SDPA, optionally with one backend forced."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}

    def call(q, k, v):
        extra = {"enable_gqa": True} if q.shape[1] != k.shape[1] else {}
        if backend is None:
            return F.scaled_dot_product_attention(q, k, v, **kw, **extra)
        with sdpa_kernel(backends[backend]):
            return F.scaled_dot_product_attention(q, k, v, **kw, **extra)

    return call


def _measure(name, fn, reference, timer, *, flops, nbytes, peaks):
    """Validate fn() against `reference` (max |diff|), then time it."""
    try:
        out = fn()
        diff = None if reference is None else float((out.float() - reference.float()).abs().max().item())
        timing = timer(fn)
    except Exception as err:  # noqa: BLE001 - an unavailable backend is a result, not a crash
        return {"variant": name, "error": f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"}
    seconds = timing["median_s"]
    record = {"variant": name, **timing, "max_abs_diff_vs_reference": diff,
              "tflop_per_s": flops / seconds / 1e12 if flops else None, "gb_per_s": nbytes / seconds / 1e9}
    if peaks.get("peak_flops") and flops:
        record["share_of_peak_flops"] = flops / seconds / peaks["peak_flops"]
    if peaks.get("bandwidth"):
        record["share_of_peak_bandwidth"] = nbytes / seconds / peaks["bandwidth"]
    return record


def _causal_pairs(n: int, window: int | None = None) -> int:
    """(query, key) pairs of causal attention: n (n + 1) / 2, or n w - w (w - 1) / 2 with a window w <= n.
    Same closed form as `chapter2.attention.attended_pairs` (tested there); repeated so this file needs no numpy."""
    if window is None or window >= n:
        return n * (n + 1) // 2
    return n * window - window * (window - 1) // 2


def bench_attention(size, device, dtype, peaks):
    import torch

    from ..kernels import flash_fwd

    timer = _timer(device)
    results = []
    for label, b, h_q, h_kv, n, d in SIZES[size]["attention"]:
        gen = torch.Generator(device=device).manual_seed(0)
        q = torch.randn((b, h_q, n, d), generator=gen, device=device, dtype=dtype)
        k = torch.randn((b, h_kv, n, d), generator=gen, device=device, dtype=dtype)
        v = torch.randn((b, h_kv, n, d), generator=gen, device=device, dtype=dtype)
        for causal in (False, True):
            pairs = _causal_pairs(n) if causal else n * n
            flops = 4.0 * b * h_q * d * pairs
            nbytes = (2 * b * h_q * n * d + 2 * b * h_kv * n * d) * q.element_size()
            reference = _sdpa(is_causal=causal)(q, k, v)
            variants = [("triton", partial(flash_fwd.flash_attention, q, k, v, causal=causal))]
            variants.append(("sdpa_default", partial(_sdpa(is_causal=causal), q, k, v)))
            for backend in ("flash", "efficient", "cudnn", "math"):
                if backend == "math" and n > SIZES[size]["math_max_n"]:
                    continue
                variants.append((f"sdpa_{backend}", partial(_sdpa(backend, is_causal=causal), q, k, v)))
            rows = [_measure(name, fn, reference, timer, flops=flops, nbytes=nbytes, peaks=peaks) for name, fn in variants]
            by_name = {r["variant"]: r for r in rows if "error" not in r}
            ratios = {}
            if "triton" in by_name:
                for name, r in by_name.items():
                    if name != "triton":
                        ratios[f"{name}_time_over_triton"] = r["median_s"] / by_name["triton"]["median_s"]
            best = getattr(getattr(flash_fwd, "_attn_fwd_tuned", None), "best_config", None)
            results.append({"case": label, "shape": {"B": b, "H_q": h_q, "H_kv": h_kv, "N": n, "d": d},
                            "causal": causal, "flops": flops, "bytes": nbytes, "variants": rows, "ratios": ratios,
                            "triton_config": str(best) if best is not None else None})
            _print_attention(results[-1])
        del q, k, v, variants  # the partials hold the tensors too
        _free(device)
    return results


def bench_decode(size, device, dtype, peaks):
    import torch

    from ..kernels import flash_decode

    timer = _timer(device)
    results = []
    for label, b, h_q, h_kv, s, d in SIZES[size]["decode"]:
        gen = torch.Generator(device=device).manual_seed(1)
        q = torch.randn((b, h_q, 1, d), generator=gen, device=device, dtype=dtype)
        k_cache = torch.randn((b, h_kv, s, d), generator=gen, device=device, dtype=dtype)
        v_cache = torch.randn((b, h_kv, s, d), generator=gen, device=device, dtype=dtype)
        cache_bytes = 2 * k_cache.numel() * k_cache.element_size()
        nbytes = cache_bytes + 2 * q.numel() * q.element_size()  # read K, V, q; write out
        flops = 4.0 * b * h_q * d * s
        # device copy of as many bytes as the cache holds: bandwidth = 2 x bytes / time (read + write)
        src = torch.empty(cache_bytes // 2, dtype=torch.int16, device=device)
        dst = torch.empty_like(src)
        copy = _measure("device_copy", partial(dst.copy_, src), None, timer, flops=0, nbytes=2 * cache_bytes, peaks=peaks)
        del src, dst
        reference = _sdpa()(q, k_cache, v_cache)
        variants = [
            ("triton_split", partial(flash_decode.decode_attention, q, k_cache, v_cache)),
            ("triton_one_split", partial(flash_decode.decode_attention, q, k_cache, v_cache, num_splits=1)),
            ("sdpa_default", partial(_sdpa(), q, k_cache, v_cache)),
        ] + [(f"sdpa_{name}", partial(_sdpa(name), q, k_cache, v_cache)) for name in ("flash", "efficient", "cudnn")]
        rows = [_measure(name, fn, reference, timer, flops=flops, nbytes=nbytes, peaks=peaks) for name, fn in variants]
        ratios = {}
        if "error" not in copy:
            for r in rows:
                if "error" not in r:
                    ratios[f"{r['variant']}_over_copy_bandwidth"] = r["gb_per_s"] / copy["gb_per_s"]
        splits = flash_decode.default_num_splits(b, h_kv, s, q.device)
        results.append({"case": label, "shape": {"B": b, "H_q": h_q, "H_kv": h_kv, "S": s, "d": d},
                        "kv_cache_bytes": cache_bytes, "bytes": nbytes, "default_num_splits": splits,
                        "copy": copy, "variants": rows, "ratios": ratios})
        _print_decode(results[-1])
        del q, k_cache, v_cache, reference, variants  # the partials hold the tensors too
        _free(device)
    return results


def bench_window(size, device, dtype, peaks):
    import torch

    from ..kernels import flash_fwd

    timer = _timer(device)
    results = []
    for label, b, h, n, d, w in SIZES[size]["window"]:
        gen = torch.Generator(device=device).manual_seed(2)
        q, k, v = (torch.randn((b, h, n, d), generator=gen, device=device, dtype=dtype) for _ in range(3))
        full_pairs, window_pairs = _causal_pairs(n), _causal_pairs(n, w)
        nbytes = 4 * b * h * n * d * q.element_size()
        reference = flash_fwd.flash_attention(q, k, v, causal=True)
        full = _measure("triton_causal", partial(flash_fwd.flash_attention, q, k, v, causal=True), reference, timer,
                        flops=4.0 * b * h * d * full_pairs, nbytes=nbytes, peaks=peaks)
        full_config = getattr(getattr(flash_fwd, "_attn_fwd_tuned", None), "best_config", None)
        window_ref = _window_reference(q, k, v, w)
        windowed = _measure("triton_window", partial(flash_fwd.flash_attention, q, k, v, window=w), window_ref, timer,
                            flops=4.0 * b * h * d * window_pairs, nbytes=nbytes, peaks=peaks)
        window_config = getattr(getattr(flash_fwd, "_attn_fwd_tuned", None), "best_config", None)
        record = {"case": label, "shape": {"B": b, "H": h, "N": n, "d": d}, "window": w,
                  "full_pairs": full_pairs, "window_pairs": window_pairs,
                  "ideal_speedup": full_pairs / window_pairs,
                  "approx_ideal_speedup": (n * n / 2) / (n * w - w * w / 2),
                  "variants": [full, windowed],
                  "configs": {"causal": str(full_config) if full_config else None,
                              "window": str(window_config) if window_config else None}}
        bm, bn = _tiles(window_config)
        record["block_ideal_speedup"] = (sum(flash_fwd.visited_key_blocks(n, None, bm, bn))
                                         / sum(flash_fwd.visited_key_blocks(n, w, bm, bn)))
        record["block_ideal_tiles"] = [bm, bn]
        if "error" not in full and "error" not in windowed:
            record["speedup"] = full["median_s"] / windowed["median_s"]
            record["speedup_over_ideal"] = record["speedup"] / record["ideal_speedup"]
        results.append(record)
        _print_window(record)
        del q, k, v
        _free(device)
    return results


def _window_reference(q, k, v, w):
    """SDPA with an explicit boolean window mask (materialized; fine at benchmark N on a GPU)."""
    import torch

    n = q.shape[2]
    i = torch.arange(n, device=q.device)[:, None]
    j = torch.arange(n, device=q.device)[None, :]
    mask = (j <= i) & (j > i - w)
    return _sdpa(attn_mask=mask)(q, k, v)


def _tiles(config):
    from ..kernels import flash_fwd

    if config is None:
        return flash_fwd.INTERPRETER_CONFIG["BLOCK_M"], flash_fwd.INTERPRETER_CONFIG["BLOCK_N"]
    return config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"]


def _free(device):
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


def _fmt(r, key="tflop_per_s", unit="TFLOP/s"):
    if "error" in r:
        return f"{r['variant']}: n/a ({r['error'][:60]})"
    return f"{r['variant']} {r['median_s'] * 1e3:.3f} ms {r[key]:.1f} {unit}"


def _print_attention(rec):
    print(f"attention {rec['case']:<18} causal={rec['causal']!s:<5} " + " | ".join(_fmt(r) for r in rec["variants"]),
          flush=True)


def _print_decode(rec):
    print(f"decode {rec['case']:<30} " + " | ".join(_fmt(r, "gb_per_s", "GB/s") for r in [rec["copy"], *rec["variants"]]),
          flush=True)


def _print_window(rec):
    speed = f"speedup {rec['speedup']:.2f}x" if "speedup" in rec else "speedup n/a"
    print(f"window {rec['case']:<14} {speed} (ideal {rec['ideal_speedup']:.2f}x, with tiles "
          f"{rec['block_ideal_speedup']:.2f}x) | " + " | ".join(_fmt(r) for r in rec["variants"]), flush=True)


def summarize(attention, decode, window) -> dict:
    """The goals, as measured (reported, never asserted)."""
    summary = {"goals": GOALS}
    ratios = [rec["ratios"]["sdpa_default_time_over_triton"] for rec in attention
              if "sdpa_default_time_over_triton" in rec["ratios"]]
    if ratios:
        summary["attention_vs_sdpa_default"] = {
            "min": min(ratios), "geomean": math.exp(sum(math.log(x) for x in ratios) / len(ratios)),
            "per_case": {f"{rec['case']} causal={rec['causal']}": rec["ratios"].get("sdpa_default_time_over_triton")
                         for rec in attention},
            "met": min(ratios) >= GOALS["attention_vs_sdpa_default"]}
    dec = [rec["ratios"]["triton_split_over_copy_bandwidth"] for rec in decode
           if "triton_split_over_copy_bandwidth" in rec["ratios"]]
    if dec:
        summary["decode_vs_copy_bandwidth"] = {
            "per_case": {rec["case"]: rec["ratios"].get("triton_split_over_copy_bandwidth") for rec in decode},
            "min": min(dec), "met": min(dec) >= GOALS["decode_vs_copy_bandwidth"]}
    win = [rec for rec in window if "speedup" in rec]
    if win:
        summary["window_speedup"] = {
            "per_case": {rec["case"]: {"speedup": rec["speedup"], "ideal": rec["ideal_speedup"],
                                       "block_ideal": rec["block_ideal_speedup"]} for rec in win},
            "min": min(rec["speedup"] for rec in win),
            "met": min(rec["speedup"] for rec in win) >= GOALS["window_speedup"]}
    return summary


def run(out_dir, *, size: str = "device", parts=("attention", "decode", "window"), dtype: str = "bf16"):
    """Run the chosen parts at `size` and write one JSON file; returns its path."""
    import torch

    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    device = _device()
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    name = device_name(device) if device == "cuda" else f"{device_name('cpu')} (Triton interpreter)"
    peaks = catalog_peaks(name, dtype) if device == "cuda" else {"catalog_key": None}
    print(f"device: {name}; catalog entry: {peaks.get('catalog_key')}", flush=True)
    attention = bench_attention(size, device, torch_dtype, peaks) if "attention" in parts else []
    decode = bench_decode(size, device, torch_dtype, peaks) if "decode" in parts else []
    window = bench_window(size, device, torch_dtype, peaks) if "window" in parts else []
    summary = summarize(attention, decode, window)
    results = ([{"part": "attention", **r} for r in attention] + [{"part": "decode", **r} for r in decode]
               + [{"part": "window", **r} for r in window])
    config = {"size": size, "dtype": dtype, "parts": list(parts), "catalog": peaks,
              "interpreter": device == "cpu", "timer": "triton.testing.do_bench median" if device == "cuda" else "perf_counter"}
    return write_result(out_dir, "gpu-attention", device, config, results, summary)
