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
# # The attention worked example, line by line
#
# Section 2.4.2 of the chapter works out the arithmetic intensity of standard
# attention for one head, with sequence length `N = 4096` and head dimension
# `d = 128` in [FP16](../../glossary/#fp16), and finds it far below what an
# H100 needs to keep its [tensor cores](../../glossary/#tensor-core) busy. This notebook redoes that count one memory access and
# one operation at a time, checks it against
# `chapter2.roofline.attention_intensity`, and then runs the same three steps
# in numpy at a smaller size, measuring the bytes of every array each step
# actually reads and writes.
#
# To run it yourself, download it with the links above into an environment
# where the `chapter2` package of this site's repository is installed
# (`pip install -e .` in a clone).

# %%
from chapter2 import hardware, roofline

N, d = 4096, 128  # the chapter's example: sequence length, head dimension
BYTES = 2         # FP16

cost = roofline.attention_intensity(N, d, BYTES)
print(f"N = {N}, d = {d}, {BYTES} bytes per element")

# %% [markdown]
# ## Each step: what it reads, what it writes, what it computes
#
# Without a fused kernel, each stage of attention is a separate kernel that
# reads its inputs from device memory ([HBM](../../glossary/#hbm)) and writes
# its output back.
#
# 1. `S = Q Kᵀ` reads `Q` and `K` (`N × d` each), writes the `N × N` score
#    matrix `S`, and does a multiply and an add for each of the `d` terms of
#    each of the `N²` dot products.
# 2. `A = softmax(S)` reads `S`, writes the attention weights `A` (`N × N`;
#    the FlashAttention paper and the library's step names call them `P`,
#    which this chapter keeps for parameter counts), and does about three
#    operations per score: exponentiate, add to the row sum, divide.
# 3. `O = A V` reads `A` (`N × N`) and `V` (`N × d`), writes `O` (`N × d`),
#    and again does `2N²d` operations.
#
# Each row of the table is that step's count written out by hand; the cell
# checks every one against the library's `AttentionStep`.

# %%
by_hand = [
    # step,            elements read,  elements written, operations
    ("S = Q K^T",      N * d + N * d,  N * N,            2 * N * N * d),
    ("A = softmax(S)", N * N,          N * N,            3 * N * N),
    ("O = A V",        N * N + N * d,  N * d,            2 * N * N * d),
]

print(f"{'step':<15}{'read':>12}{'written':>12}"
      f"{'bytes':>13}{'operations':>15}")
for (name, read, written, ops), step in zip(by_hand, cost.steps, strict=True):
    library = (step.read_elements, step.write_elements, step.ops)
    assert (read, written, ops) == library, name
    print(f"{name:<15}{read:>12,}{written:>12,}"
          f"{(read + written) * BYTES:>13,}{ops:>15,}")

total_bytes = sum((r + w) * BYTES for _, r, w, _ in by_hand)
total_ops = sum(ops for *_, ops in by_hand)
print(f"{'total':<39}{total_bytes:>13,}{total_ops:>15,}")

# %% [markdown]
# ## Totals
#
# Adding the elements gives `2Nd + N² + N² + N² + N² + Nd + Nd = 4N² + 4Nd`;
# at two bytes each that is `8N² + 8Nd` bytes. The operations add up to
# `4N²d + 3N²`. The cell checks both closed forms against the step-by-step
# sums and against the library.

# %%
assert total_bytes == 8 * N**2 + 8 * N * d == cost.bytes
assert total_ops == 4 * N**2 * d + 3 * N**2 == cost.ops
intensity = total_ops / total_bytes
print(f"bytes      8N² + 8Nd  = {8 * N**2 + 8 * N * d:,}")
print(f"operations 4N²d + 3N² = {4 * N**2 * d + 3 * N**2:,}")
print(f"intensity             = {intensity:.2f} operations per byte")
print(f"library               = {cost.intensity:.2f}")

# %% [markdown]
# ## Against the hardware
#
# The H100's ops:byte ratio is its [dense](../../glossary/#dense) FP16 peak divided by its memory
# bandwidth, both from the package's sourced GPU catalog
# (`src/chapter2/data/gpus.json`). Below that ratio a kernel waits on memory.

# %%
h100 = hardware.GPUS["H100-SXM"]
ridge = h100.ops_per_byte("fp16")
bound = roofline.bound(intensity, "H100-SXM", "fp16")
print(h100.name)
print(f"  {h100.tflops('fp16'):g} TFLOP/s dense FP16"
      f" / {h100.bandwidth_tb_s:g} TB/s = {ridge:.1f} ops per byte")
print(f"attention: {intensity:.1f} ops per byte,"
      f" {ridge / intensity:.1f}x below the ridge: {bound} bound")

memory_s = total_bytes / h100.bandwidth
compute_s = total_ops / h100.peak_flops("fp16")
print(f"moving the bytes at full bandwidth: {memory_s * 1e6:6.1f} µs")
print(f"doing the operations at peak:       {compute_s * 1e6:6.1f} µs")

# %% [markdown]
# The `N²` terms dominate both sums, so for long sequences the intensity
# levels off at `(4N²d + 3N²) ÷ 8N² = (4d + 3) ÷ 8`, about `d ÷ 2` operations
# per byte, whatever `N` is: no sequence length makes standard attention
# compute bound on this GPU. Keeping `S` and `A` on chip, as FlashAttention
# does, removes the `N²` bytes, and its intensity keeps growing with `N`.
# That holds for this shape, `N` queries at once as in a prefill. A decode
# step brings one query per sequence, and its attention stays near the
# grouped-query group size in operations per byte whatever FlashAttention
# does ([section 2.5](../../attention/#decode-attention-stays-memory-bound)).

# %%
print(f"{'N':>7}{'standard':>12}{'FlashAttention':>16}")
for n in (256, 1024, 4096, 16384, 65536):
    std = roofline.attention_intensity(n, d, BYTES).intensity
    flash = roofline.flash_attention_intensity(n, d, BYTES).intensity
    print(f"{n:>7,}{std:>12.1f}{flash:>16,.0f}")
print(f"standard, as N grows: (4d + 3) / 8 = {(4 * d + 3) / 8:g}")

# %% [markdown]
# ## The same steps, run
#
# The counts above are about memory traffic, so here are the three steps run
# in numpy at `N = 512` (small enough to be quick), with each kernel's inputs
# and output measured by their `nbytes`. The softmax is computed in float32
# for accuracy and stored back as FP16, as an FP16 kernel would.

# %%
import numpy as np

n_small = 512
rng = np.random.default_rng(0)
Q, K, V = (rng.standard_normal((n_small, d)).astype(np.float16)
           for _ in range(3))                                # (N, d) each

moved = {}
S = Q @ K.T                                                  # (N, N)
moved["S = Q K^T"] = Q.nbytes + K.nbytes + S.nbytes
S32 = S.astype(np.float32) / np.sqrt(d)
A = np.exp(S32 - S32.max(axis=1, keepdims=True))
A = (A / A.sum(axis=1, keepdims=True)).astype(np.float16)    # (N, N)
moved["A = softmax(S)"] = S.nbytes + A.nbytes
O = A @ V                                                    # (N, d)
moved["O = A V"] = A.nbytes + V.nbytes + O.nbytes
CHAPTER_NAME = {"S = Q K^T": "S = Q K^T", "P = softmax(S)": "A = softmax(S)", "O = P V": "O = A V"}

small = roofline.attention_intensity(n_small, d, BYTES)
print(f"{'step':<15}{'measured':>11}{'formula':>11}   (bytes)")
for step in small.steps:
    name = CHAPTER_NAME[step.name]  # the library's step name, in the chapter's letters
    print(f"{name:<15}{moved[name]:>11,}{step.bytes:>11,.0f}")
total = sum(moved.values())
assert total == 8 * n_small**2 + 8 * n_small * d == small.bytes
print(f"total {total:,} bytes = 8N² + 8Nd at N = {n_small}")

# %% [markdown]
# The result is ordinary attention: compared with a float64 evaluation of the
# same formula, the FP16 output differs only by FP16 rounding.

# %%
S64 = Q.astype(np.float64) @ K.astype(np.float64).T / np.sqrt(d)
A64 = np.exp(S64 - S64.max(axis=1, keepdims=True))
A64 /= A64.sum(axis=1, keepdims=True)
O64 = A64 @ V.astype(np.float64)
err = np.abs(O.astype(np.float64) - O64).max()
eps = np.finfo(np.float16).eps
print(f"max |O_fp16 - O_float64| = {err:.2e}")
print(f"FP16 relative precision  = {eps:.2e}")
assert err < 50 * eps
