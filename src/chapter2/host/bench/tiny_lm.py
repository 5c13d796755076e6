"""Benchmark: the tiny model's prefill and decode on the CPU (numpy), against memory bandwidth.

    python -m chapter2.host.bench.tiny_lm                       # the shipped tiny model, print a table
    python -m chapter2.host.bench.tiny_lm --out result.json     # also write JSON (a folder: a named file in it)

Section 2.2 says decode is memory-bound: each step reads every weight and the
whole KV cache to produce one token, while prefill reads the weights once for
all N prompt tokens. This suite measures, in one run on one CPU:

- **copy bandwidth**: a large numpy copy (bytes read + bytes written over the
  time), the reference a bandwidth-bound step would approach; and a copy the
  size of the model's weights, which fits in the CPU's caches.
- **decode**: median seconds per `Transformer.decode` step after a prompt of
  N tokens; bytes moved per step = the weights a decode step reads (every
  matrix once: the LM head in full, one row of the embedding table) + the KV
  cache read by attention + the new token's K and V written; achieved
  bytes/s and its share of the large-copy bandwidth.
- **prefill**: tokens/s of `Transformer.prefill` of the same N tokens, and its
  ratio to decode tokens/s.

What to expect: a model of about a million parameters is a few MB in float32,
small enough for the CPU's caches, and a decode step is some sixty small numpy
calls whose fixed cost is a large part of the step time. So decode moves its
bytes well below the copy bandwidth: this model is too small to be
bandwidth-bound on a CPU, unlike a multi-GB model on a GPU. Prefill is several
times faster per token because one pass serves N tokens. Benchmarks are not
tests: numbers are reported, never asserted.

JSON: the `chapter2.host.bench` layout (``schema``, ``suite`` = "cpu-tiny-lm",
``provenance`` with date, git commit, numpy version and the CPU model name
from /proc/cpuinfo, ``config``, ``results`` (one record per prompt length),
``summary``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time
from pathlib import Path

from . import SCHEMA
from ._harness import copy_bandwidth, provenance, slug, time_cpu

SUITE = "cpu-tiny-lm"
DEFAULTS = dict(prompt_tokens=(16, 64, 112), decode_steps=16, copy_mib=256, reps=3)


BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def set_blas_threads(n: int) -> None:
    """Limit numpy's BLAS to `n` threads. Works only before numpy is first imported (BLAS reads the
    variables when it loads); small matmuls on a shared machine stall when threads are oversubscribed."""
    if "numpy" in sys.modules:
        raise RuntimeError("set_blas_threads must run before numpy is imported")
    for var in BLAS_THREAD_VARS:
        os.environ[var] = str(n)


# -----------------------------------------------------------------------------
# what a decode step must move


def decode_weight_bytes(model) -> int:
    """Bytes of weights one decode step reads: every tensor once, except the embedding table,
    of which only the token's row is read (with tied embeddings the table is read in full as
    the LM head)."""
    c, w = model.config, model.weights
    table = w["model.embed_tokens.weight"]
    row = table.nbytes // table.shape[0]  # (D,) of the one input token
    total = sum(arr.nbytes for arr in w.values())
    return total + row if c.tie_word_embeddings else total - table.nbytes + row


def decode_bytes(model, cache_length_after: int) -> int:
    """Bytes one decode step moves when the cache holds `cache_length_after` tokens after it:
    weights read + keys and values read by attention (all cached tokens, the new one included)
    + the new token's keys and values written."""
    per_token = model.new_cache().bytes_per_token
    return decode_weight_bytes(model) + cache_length_after * per_token + per_token


# -----------------------------------------------------------------------------
# measurements


def check_decode(model, ids) -> float:
    """Max |decode logits - full prefill logits| at the last position: the cache path is right before timing."""
    import numpy as np

    _, cache = model.prefill(ids[:-1])
    step, _ = model.decode(int(ids[-1]), cache)
    full, _ = model.prefill(ids)
    return float(np.abs(step.astype(np.float64) - full[-1]).max())


def bench_prompt(model, n_prompt: int, decode_steps: int, reps: int, seed: int = 0) -> dict:
    """Prefill tokens/s and decode step time at a prompt of `n_prompt` random token ids."""
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, model.config.vocab_size, size=n_prompt)  # content does not change the work
    prefill = time_cpu(lambda: model.prefill(ids), reps=reps)
    logits, cache0 = model.prefill(ids, max_seq_len=n_prompt + decode_steps)  # no cache growth while timing
    first = int(np.argmax(logits[-1]))
    step_times = []
    for _ in range(reps + 1):  # the first round warms up and is dropped
        cache, token, times = cache0.copy(), first, []
        for _ in range(decode_steps):
            start = time.perf_counter()
            out, cache = model.decode(token, cache)
            times.append(time.perf_counter() - start)
            token = int(np.argmax(out))
        step_times.append(times)
    times = [t for round_ in step_times[1:] for t in round_]
    step_s = statistics.median(times)
    # the cache holds n_prompt + k tokens after decode step k = 1..decode_steps; average the bytes
    moved = statistics.fmean(decode_bytes(model, n_prompt + k) for k in range(1, decode_steps + 1))
    prefill_tps = n_prompt / prefill["median_s"]
    return {
        "prompt_tokens": n_prompt,
        "decode_steps": decode_steps,
        "prefill": {**prefill, "tokens_per_s": prefill_tps},
        "decode": {"median_s": step_s, "min_s": min(times), "steps_timed": len(times), "tokens_per_s": 1.0 / step_s,
                   "bytes_per_step": moved, "bytes_per_s": moved / step_s},
        "prefill_over_decode_tokens_per_s": prefill_tps * step_s,
    }


def run(model_dir=None, *, prompt_tokens=DEFAULTS["prompt_tokens"], decode_steps: int = DEFAULTS["decode_steps"],
        copy_mib: float = DEFAULTS["copy_mib"], reps: int = DEFAULTS["reps"]) -> dict:
    """Measure everything; return the JSON document (not written)."""
    import numpy as np

    from ..._checks import finite_real, positive_int
    from ...models.transformer import load_pretrained
    from ...models import TINY_LM_DIR

    decode_steps, reps = positive_int("decode_steps", decode_steps), positive_int("reps", reps)
    copy_bytes = int(finite_real("copy_mib", copy_mib, low=0, low_open=True) * 2**20)
    prompt_tokens = [positive_int("prompt_tokens", n) for n in prompt_tokens]
    if not prompt_tokens:
        raise ValueError("prompt_tokens must list at least one prompt length")
    folder = Path(TINY_LM_DIR if model_dir is None else model_dir)
    model = load_pretrained(folder)
    context = model.config.max_position_embeddings
    for n in prompt_tokens:
        if context is not None and n + decode_steps > context:
            raise ValueError(f"prompt_tokens {n} + decode_steps {decode_steps} exceeds the model's context of {context}")

    weight_bytes = decode_weight_bytes(model)
    validation = check_decode(model, np.random.default_rng(1).integers(0, model.config.vocab_size, size=8))
    dram = copy_bandwidth(copy_bytes, reps)
    cached = copy_bandwidth(weight_bytes, reps)
    results = [bench_prompt(model, n, decode_steps, reps) for n in prompt_tokens]
    for r in results:
        r["decode"]["share_of_copy_bandwidth"] = r["decode"]["bytes_per_s"] / dram["bytes_per_s"]
        r["decode"]["share_of_model_size_copy_bandwidth"] = r["decode"]["bytes_per_s"] / cached["bytes_per_s"]

    prov = provenance("cpu")  # names the CPU by its model (chapter2.devices.device_name)
    c = model.config
    params = sum(arr.size for arr in model.weights.values())
    return {
        "schema": SCHEMA, "suite": SUITE, "provenance": prov,
        "config": {"model_dir": str(folder), "model": repr(model), "parameters": int(params),
                   "dtype": str(model.dtype), "decode_weight_bytes": weight_bytes,
                   "kv_bytes_per_token": model.new_cache().bytes_per_token, "context": context,
                   "layers": c.num_hidden_layers, "prompt_tokens": prompt_tokens, "decode_steps": decode_steps,
                   "copy_bytes": copy_bytes, "reps": reps,
                   "blas_threads": {var: os.environ.get(var) for var in BLAS_THREAD_VARS}},
        "copy": {"large": dram, "model_size": cached},
        "results": results,
        "summary": {
            "decode_max_abs_err_vs_prefill": validation,
            "copy_bytes_per_s": dram["bytes_per_s"],
            "decode_share_of_copy_bandwidth": {str(r["prompt_tokens"]): r["decode"]["share_of_copy_bandwidth"]
                                               for r in results},
            "prefill_over_decode_tokens_per_s": {str(r["prompt_tokens"]): r["prefill_over_decode_tokens_per_s"]
                                                 for r in results},
        },
    }


# -----------------------------------------------------------------------------
# output


def table(doc: dict) -> str:
    """The results as a short text table."""
    cfg, copy = doc["config"], doc["copy"]
    lines = [
        f"{doc['provenance']['device']['name']} | numpy {doc['provenance']['versions'].get('numpy')} | "
        f"{cfg['model']}",
        f"weights read per decode step {cfg['decode_weight_bytes'] / 1e6:.2f} MB, KV cache "
        f"{cfg['kv_bytes_per_token']:,} B/token; decode logits vs prefill max err "
        f"{doc['summary']['decode_max_abs_err_vs_prefill']:.1e}",
        f"copy bandwidth: {copy['large']['bytes_per_s'] / 1e9:.1f} GB/s ({copy['large']['array_bytes'] / 2**20:.0f} MiB "
        f"arrays), {copy['model_size']['bytes_per_s'] / 1e9:.1f} GB/s at the weights' size",
        f"{'prompt':>6} | {'prefill tok/s':>13} | {'decode ms/step':>14} | {'decode tok/s':>12} | "
        f"{'MB/step':>7} | {'GB/s':>6} | {'of copy BW':>10} | {'prefill/decode':>14}",
    ]
    for r in doc["results"]:
        d = r["decode"]
        lines.append(f"{r['prompt_tokens']:>6} | {r['prefill']['tokens_per_s']:>13,.0f} | {d['median_s'] * 1e3:>14.3f} | "
                     f"{d['tokens_per_s']:>12,.0f} | {d['bytes_per_step'] / 1e6:>7.2f} | {d['bytes_per_s'] / 1e9:>6.2f} | "
                     f"{100 * d['share_of_copy_bandwidth']:>9.1f}% | {r['prefill_over_decode_tokens_per_s']:>13.1f}x")
    return "\n".join(lines)


def save(doc: dict, out) -> Path:
    """Write `doc` as JSON to the file `out`; if `out` is an existing folder, to
    `cpu-tiny-lm-<cpu>-<UTC time>.json` in it (the other suites' naming)."""
    out = Path(out)
    if out.is_dir():
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        out = out / f"{SUITE}-{slug(doc['provenance']['device']['name'])}-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chapter2.host.bench.tiny_lm", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="checkpoint folder (default: the shipped chapter2/data/tiny_lm)")
    parser.add_argument("--prompt-tokens", type=int, nargs="+", default=list(DEFAULTS["prompt_tokens"]),
                        help="prompt lengths to prefill and decode after (default %(default)s)")
    parser.add_argument("--decode-steps", type=int, default=DEFAULTS["decode_steps"], help="(default %(default)s)")
    parser.add_argument("--copy-mib", type=float, default=DEFAULTS["copy_mib"],
                        help="size of each array of the bandwidth copy, MiB (default %(default)s)")
    parser.add_argument("--reps", type=int, default=DEFAULTS["reps"], help="(default %(default)s)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS threads (default 1, like the single-threaded browser; 0 = the library default)")
    parser.add_argument("--out", default=None, help="write JSON to this file (or into this folder); default: print only")
    args = parser.parse_args(argv)
    if args.threads < 0:
        parser.error(f"--threads must be >= 0, got {args.threads}")
    if args.threads:
        set_blas_threads(args.threads)
    try:
        doc = run(args.model, prompt_tokens=args.prompt_tokens, decode_steps=args.decode_steps,
                  copy_mib=args.copy_mib, reps=args.reps)
    except (ValueError, TypeError) as err:
        parser.error(str(err))
    print(table(doc))
    if args.out is not None:
        print(f"wrote {save(doc, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
