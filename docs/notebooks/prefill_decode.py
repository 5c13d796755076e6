# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Prefill and decode on your own machine
#
# Section 2.2 splits generation into **prefill**, one parallel pass over the
# whole prompt, and **decode**, one pass per new token. Section 2.4 predicts
# how fast each can be from two numbers of the hardware: its compute rate and
# its memory bandwidth. This notebook measures both numbers on the machine
# that runs it, times the tiny language model shipped with `chapter2` (the
# numpy transformer, trained on this site's text), and puts the measured
# times next to the roofline's lower bounds.
#
# The outputs below were computed when this site was built, on the machine
# that built it; the first cell prints which machine and when. Every sentence
# about a measured number below is printed by code from that number, so it
# holds on a fast machine and a slow one alike. To get your own numbers,
# download the notebook with the links above and run it where the `chapter2`
# package of this site's repository is installed (`pip install -e .` in a
# clone); it needs only numpy. Terms such as KV cache or FLOP/s are defined in
# the [glossary](../../glossary/).

# %%
import datetime
import os
import platform
import time
from pathlib import Path

import numpy as np

from chapter2 import roofline
from chapter2.models import TINY_LM_DIR as MODEL_DIR
from chapter2.models.transformer import load_pretrained
from chapter2.tokenizer import BPETokenizer

model = load_pretrained(MODEL_DIR)  # float32 weights
tokenizer = BPETokenizer.from_file(MODEL_DIR / "tokenizer.json")
c = model.config

weight_bytes = sum(w.nbytes for w in model.weights.values())
# every weight matrix does 2 operations per parameter per token
# (the embedding is tied: it is also the LM head's matrix)
matmul_params = sum(w.size for w in model.weights.values() if w.ndim == 2)
# K and V, per layer and KV head, head_dim values each
kv_bytes_per_token = (2 * c.num_hidden_layers * c.num_key_value_heads
                      * c.head_dim * model.dtype.itemsize)
# bytes follow the chapter's convention (section 2.4, "How this chapter counts bytes"):
# weights, KV cache and activations (each block's input and output, and the logits), each once
def activation_bytes(tokens: int, logit_positions: int) -> float:
    return roofline.activation_bytes(c, tokens, logit_positions, dtype=model.dtype.itemsize)



def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform reports."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def last_level_cache_bytes() -> int | None:
    """The largest CPU cache the OS reports (Linux sysfs), or None."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = f.read_text().strip()
        scale = {"K": 2**10, "M": 2**20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * scale)
    return max(sizes) if sizes else None


run_date = datetime.datetime.now(datetime.UTC)
print(model)
print(f"weights:  {weight_bytes / 1e6:.2f} MB in {model.dtype}")
print(f"KV cache: {kv_bytes_per_token:,} bytes per token")
print(f"machine:  {cpu_model()}, {platform.machine()}, {os.cpu_count()} logical CPUs,"
      f" numpy {np.__version__}")
print(f"run on:   {run_date:%Y-%m-%d %H:%M} UTC")


# %% [markdown]
# ## The machine's roofline
#
# Two measurements, each the best of a few repeats (the least disturbed run):
#
# - **bandwidth**: copying a 64 MiB float32 array, larger than the caches of
#   most CPUs, reads it once and writes it once, so the bytes moved are twice
#   its size (the cell checks this machine's largest cache, where the OS
#   reports it);
# - **compute**: a square float32 matrix multiplication of size `n` does
#   `2n³` floating-point operations (section 2.1.1), through numpy's BLAS;
#   the fastest of a few sizes counts as the peak.
#
# Their ratio is this machine's ops:byte ratio, the same quantity as an
# H100's in section 2.4.1.

# %%
def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def copy_bandwidth() -> float:
    """Bytes/s of a 64 MiB copy (more than most CPUs' caches): one read + one write per byte."""
    src = np.ones(16 * 2**20, dtype=np.float32)
    dst = np.empty_like(src)
    return 2 * src.nbytes / best_time(lambda: np.copyto(dst, src), repeats=5)


bandwidth = copy_bandwidth()

peak = 0.0
for n in (256, 512, 1024):
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    a @ b  # warm up the BLAS threads
    flops = 2 * n**3 / best_time(lambda a=a, b=b: a @ b, repeats=5)
    peak = max(peak, flops)  # FLOP/s
ridge = peak / bandwidth

print(f"memory bandwidth (numpy copy): {bandwidth / 1e9:7.1f} GB/s")
print(f"compute (float32 matmul):      {peak / 1e9:7.1f} GFLOP/s")
print(f"ops:byte ratio of this machine: {ridge:6.1f}")

cache = last_level_cache_bytes()
copy_bytes = 16 * 2**20 * 4
if cache is None:
    print("The OS does not report this CPU's cache sizes, so it is unknown whether"
          " the 64 MiB copy measured memory or a cache.")
elif cache < copy_bytes:
    print(f"The largest cache the OS reports is {cache / 2**20:.0f} MiB, smaller than"
          " the 64 MiB copied: the bandwidth above is memory's.")
else:
    print(f"The largest cache the OS reports is {cache / 2**20:.0f} MiB, not smaller than"
          " the 64 MiB copied: part of the copy may have been served by that cache,"
          " so the bandwidth above may overstate memory's.")

# %% [markdown]
# ### This build's roofline and section 2.5's
#
# Section 2.5 draws its CPU roofline from benchmark runs committed to the
# repository (`chapter2/data/bench/`), not from this build, so its ridge is a
# different measurement from the one above. The cell prints both, each with
# its machine and date. They can differ for three reasons: they may come from
# different machines; on the same machine, other work running at the time
# changes the result (build machines are often shared); and the methods
# differ. Here the copy is 64 MiB (best of 5) and the matmuls are square;
# the committed run copies a larger array (its size is printed below; the
# median of its repeats counts) and times the matmul of attention's score
# product at its benchmark's shapes.

# %%
from chapter2 import bench_results

committed = bench_results.device_roofline("cpu")
c_compute, c_memory = committed.compute_roofs[0], committed.memory_roofs[0]
c_run = next(r for r in bench_results.load_results() if r["file"] == c_memory.source)
print(f"this build:  {cpu_model()} ({os.cpu_count()} logical CPUs), {run_date:%Y-%m-%d}:"
      f" {peak / 1e9:.0f} GFLOP/s, {bandwidth / 1e9:.1f} GB/s, ridge {ridge:.2f}")
print(f"section 2.5: {committed.name}, {', '.join(committed.dates)}:"
      f" {c_compute.value / 1e9:.0f} GFLOP/s, {c_memory.value / 1e9:.1f} GB/s,"
      f" ridge {c_compute.value / c_memory.value:.2f}"
      f" (copy of {c_run['copy']['large']['array_bytes'] / 2**20:.0f} MiB)")

# %% [markdown]
# ## Prefill
#
# One forward pass over the prompt. Its weight matmuls do about
# `2 × (weight-matrix parameters) × (prompt tokens)` operations while reading
# each weight once, so the work per byte grows with the prompt.

# %%
text = (MODEL_DIR / "heldout.txt").read_text()
prompt = tokenizer.encode(text)[:64]
n_prompt = len(prompt)

prefill_s = best_time(lambda: model.prefill(prompt), repeats=5)
prefill_flops = 2 * matmul_params * n_prompt
# read the weights once, write the prompt's keys and values, and the activations
# (logits for the last position only, as a server computes them)
prefill_bytes = weight_bytes + n_prompt * kv_bytes_per_token + activation_bytes(n_prompt, 1)
prefill_intensity = prefill_flops / prefill_bytes
prefill_bound = max(prefill_flops / peak, prefill_bytes / bandwidth)

print(f"prompt:    {n_prompt} tokens")
print(f"prefill:   {prefill_s * 1e3:.2f} ms,"
      f" {n_prompt / prefill_s:,.0f} tokens/s,"
      f" {prefill_flops / prefill_s / 1e9:.1f} GFLOP/s")
print(f"intensity: {prefill_intensity:.1f} ops/byte:"
      f" on the {'compute' if prefill_intensity > ridge else 'memory'} side of this machine's ridge")
print(f"roofline lower bound: {prefill_bound * 1e3:.3f} ms")

# %% [markdown]
# ## Decode
#
# Now the loop of section 2.2: each step feeds one token, reads every weight
# and the whole KV cache, and returns the logits of the next token (greedy
# here). Each step is timed on its own; the median is the time per output
# token.

# %%
logits, cache = model.prefill(prompt, max_seq_len=len(prompt) + 32)  # room for 32 decode steps, allocated now
token = int(np.argmax(logits[-1]))
steps, generated = [], []
for _ in range(32):
    generated.append(token)
    t0 = time.perf_counter()
    logits, cache = model.decode(token, cache)
    steps.append(time.perf_counter() - t0)
    token = int(np.argmax(logits))

decode_s = float(np.median(steps))
decode_flops = 2 * matmul_params
# every weight and the whole cache, once per step, and one token's activations
decode_bytes = weight_bytes + cache.seq_len * kv_bytes_per_token + activation_bytes(1, 1)
decode_intensity = decode_flops / decode_bytes
memory_s = decode_bytes / bandwidth
decode_bound = max(decode_flops / peak, memory_s)

print(f"decode:    median {decode_s * 1e3:.3f} ms per token,"
      f" {1 / decode_s:,.0f} tokens/s (context {cache.seq_len})")
print(f"intensity: {decode_intensity:.2f} ops/byte:"
      f" on the {'compute' if decode_intensity > ridge else 'memory'} side of this machine's ridge")
print(f"roofline lower bound: {decode_bound * 1e3:.4f} ms per token"
      f" (bytes / bandwidth: {memory_s * 1e3:.4f} ms)")
print(f"measured / bound:     {decode_s / decode_bound:,.1f}x")
print("greedy continuation:", repr(tokenizer.decode(generated)))

# %% [markdown]
# ## What the numbers say
#
# The sentences below are printed from this run's measurements.

# %%
OVERHEAD = 2.0  # a phase that takes more than twice its roofline bound is limited by neither roof


def verdict(phase: str, measured_s: float, bound_s: float, intensity: float) -> str:
    """One sentence on what limited a phase: the roof its intensity points to, or overhead."""
    side = "compute" if intensity > ridge else "memory"
    ratio = measured_s / bound_s
    if ratio >= OVERHEAD:
        times = f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"
        return (f"- {phase} took {times} its roofline bound: overhead bound. Its intensity of"
                f" {intensity:.2f} operations per byte puts its bound on the {side} side of this machine's"
                f" ridge ({ridge:.1f}), but neither compute nor memory bandwidth is what it waited on: the time"
                " went to work the roofline does not count, mostly the fixed cost of the few dozen small numpy"
                f" calls of each pass over a tiny model ({weight_bytes / 1e6:.1f} MB of weights).")
    if ratio >= 1:
        return (f"- {phase} took {ratio:.2f}x its roofline bound, close to it: {side} bound"
                f" ({intensity:.2f} operations per byte against this machine's ridge of {ridge:.1f}).")
    return (f"- {phase} took {ratio:.2f}x its roofline 'bound', below it: the {weight_bytes / 1e6:.1f} MB of"
            " weights came from the CPU's caches, faster than the 64 MiB copy that set the bandwidth.")


tokens_ratio = (n_prompt / prefill_s) * decode_s
print(f"- Prefill produced {tokens_ratio:.2f}x decode's tokens per second"
      f" ({n_prompt} tokens in one pass against one token per pass).")
print(verdict("Prefill", prefill_s, prefill_bound, prefill_intensity))
print(verdict("Decode", decode_s, decode_bound, decode_intensity))
if min(prefill_s / prefill_bound, decode_s / decode_bound) >= OVERHEAD:
    print("- Both phases are overhead bound here, so neither the roofline nor shared weight reads explain the"
          " ratio of their speeds: most of each pass is fixed overhead, which prefill spreads over its"
          f" {n_prompt} tokens and decode pays for every token. This is not the memory-bound decode of an LLM"
          " on a GPU.")

# %% [markdown]
# For an 8B-parameter model the weights are gigabytes, no cache holds them,
# and each decode step is a few large matrix-vector products, so a good GPU
# implementation gets close to the bandwidth bound
# ([section 2.4.2](../../bottlenecks/#242-llm-bottlenecks) works it out for an
# H100).
