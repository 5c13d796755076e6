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
# The outputs below come from the machine that built this site. To get
# yours, download the notebook with the links above and run it where the
# `chapter2` package of this site's repository is installed
# (`pip install -e .` in a clone); it needs only numpy.

# %%
import os
import platform
import time

import numpy as np

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

print(model)
print(f"weights:  {weight_bytes / 1e6:.2f} MB in {model.dtype}")
print(f"KV cache: {kv_bytes_per_token:,} bytes per token")
print(f"machine:  {platform.machine()}, {os.cpu_count()} logical CPUs,"
      f" numpy {np.__version__}")


# %% [markdown]
# ## The machine's roofline
#
# Two measurements, each the best of a few repeats (the least disturbed run):
#
# - **bandwidth**: copying a float32 array far larger than the CPU caches
#   reads it once and writes it once, so the bytes moved are twice its size;
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
    """Bytes/s of a 64 MiB copy (more than the caches): one read + one write per byte."""
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
# read the weights once, write the prompt's keys and values
prefill_bytes = weight_bytes + n_prompt * kv_bytes_per_token
prefill_intensity = prefill_flops / prefill_bytes
prefill_bound = max(prefill_flops / peak, prefill_bytes / bandwidth)

print(f"prompt:    {n_prompt} tokens")
print(f"prefill:   {prefill_s * 1e3:.2f} ms,"
      f" {n_prompt / prefill_s:,.0f} tokens/s,"
      f" {prefill_flops / prefill_s / 1e9:.1f} GFLOP/s")
print(f"intensity: {prefill_intensity:.1f} ops/byte:"
      f" {'compute' if prefill_intensity > ridge else 'memory'} bound here")
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
# every weight and the whole cache, once per step
decode_bytes = weight_bytes + cache.seq_len * kv_bytes_per_token
decode_intensity = decode_flops / decode_bytes
memory_s = decode_bytes / bandwidth
decode_bound = max(decode_flops / peak, memory_s)

print(f"decode:    median {decode_s * 1e3:.3f} ms per token,"
      f" {1 / decode_s:,.0f} tokens/s (context {cache.seq_len})")
print(f"intensity: {decode_intensity:.2f} ops/byte:"
      f" {'compute' if decode_intensity > ridge else 'memory'} bound")
print(f"roofline lower bound: {decode_bound * 1e3:.4f} ms per token"
      f" (bytes / bandwidth: {memory_s * 1e3:.4f} ms)")
print(f"measured / bound:     {decode_s / decode_bound:,.1f}x")
print(f"prefill makes {(n_prompt / prefill_s) * decode_s:.0f}x more"
      " tokens per second than decode")
print("greedy continuation:", repr(tokenizer.decode(generated)))

# %% [markdown]
# ## What the numbers say
#
# - Prefill processes many tokens per pass, so its tokens per second are far
#   higher than decode's: the prompt's tokens share each read of the weights.
# - Decode does about one operation per byte or less, below the ops:byte
#   ratio of any CPU or GPU: on the roofline it is memory bound (the verdict
#   line above), exactly like an LLM on a GPU.
# - This model is tiny: its weights fit in the CPU's caches, and each step is
#   a few dozen small numpy calls whose fixed overhead, not memory traffic,
#   dominates. That is why the measured time per token sits above the
#   bandwidth bound here. For an 8B-parameter model the weights are
#   gigabytes, no cache holds them, and a good GPU implementation gets close
#   to the bound ([section 2.4.2](../../bottlenecks/#242-llm-bottlenecks)
#   works it out for an H100).
