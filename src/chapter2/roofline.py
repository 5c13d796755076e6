"""Arithmetic intensity and the roofline (chapter section 2.4).

An algorithm's arithmetic intensity is the operations it does per byte it
moves to or from memory:

    intensity = ops / bytes

Compare it with the GPU's ops:byte ratio (`chapter2.hardware`). Below the
ratio the kernel is memory bound: the tensor cores wait for data. Above it the
kernel is compute bound. The roofline says the same in one line,

    attainable FLOP/s = min(peak FLOP/s, intensity x bandwidth)

This module computes intensities for a matmul, a matrix-vector product,
attention (the chapter's worked example, step by step) and the two phases of
LLM inference, prefill and decode, with lower-bound times for each. The
model is a `chapter2.models.ModelConfig`, or the name of a shipped config
(`ModelConfig.from_numbers` describes one by plain numbers).

How a forward pass's bytes are counted (the chapter's one convention, which
`chapter2.diffusion` follows for denoiser passes; section 2.4 states it):
the minimum traffic to device memory, every tensor that must cross it read
or written once per pass:

- weights: every weight the pass multiplies by, read once (an untied input
  embedding is a row lookup and is not read in full; an MoE reads the
  experts its tokens pick);
- KV cache: the keys and values of earlier tokens read once, and those of
  the pass's new tokens written once (a sliding-window layer keeps only its
  window);
- activations: the hidden state each of the L blocks reads and writes once
  (2 x L x tokens x hidden numbers), plus the output the pass writes once
  (an LLM's logits: vocab numbers per position that gets logits).
  Everything inside a block (Q, K, V, scores, the MLP's wide intermediate)
  is taken to stay on chip.

Activations are stored at the math dtype. Real kernels move at least this
much, so the times are lower bounds. A model given `from_numbers` has no
hidden or vocabulary size, so its activations count zero.

Three formats are separate (`formats`): the math `dtype` sets the peak; the
weights are stored in `weight_dtype` (bits per weight with their scales:
int4 with group-128 scales 4.125, with zero points too 4.156, NVFP4 4.5, MXFP4 4.25), and the KV cache in
`kv_dtype`. Several GPUs hold the weights `parallel="sharded"` (tensor or
expert parallel) or `"replicated"` (data parallel, a copy each);
`serving_throughput` bounds continuous batching at a given concurrency.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ._checks import dtype_bytes as _dtype_bytes
from ._checks import finite_real, float_array, positive_int
from . import communication
from .hardware import GPU, MATH_BITS, Interconnect, get_gpu, interconnect, tensor_dtype
from .linear import matmul_cost
from .models import ModelConfig, load_config
from .models.layers.mla import mla_form

__all__ = [
    "matmul_intensity",
    "matvec_intensity",
    "attainable_flops",
    "bound",
    "AttentionStep",
    "AttentionCost",
    "attention_intensity",
    "flash_attention_intensity",
    "ATTENTION_ROOFS",
    "AttentionBound",
    "attention_bound",
    "exponential_crossover_head_dim",
    "WEIGHT_FORMATS",
    "KV_FORMATS",
    "DEFAULT_WEIGHTS",
    "PARALLEL",
    "Formats",
    "formats",
    "PhasePart",
    "PhaseEstimate",
    "LOGITS",
    "prompt_flops",
    "weight_bytes_touched",
    "activation_bytes",
    "prefill",
    "decode",
    "decode_critical_batch",
    "prefill_critical_tokens",
    "RequestTimeline",
    "request_timeline",
    "ServingBound",
    "serving_throughput",
]


# --------------------------------------------------------------------------- matmul


def matmul_intensity(m, k, n, dtype="fp16") -> float:
    """Ops per byte of C = A @ B with A (m, k), B (k, n): 2mkn / ((mk + kn + mn) x bytes)."""
    return matmul_cost(m, k, n, dtype).intensity


def matvec_intensity(k, n, dtype="fp16") -> float:
    """Ops per byte of one vector times a (k, n) matrix: about 2 / bytes-per-element (1 in FP16).

    This is decode at batch size 1: every weight is read for a single multiply-add.
    """
    return matmul_cost(1, k, n, dtype).intensity


# --------------------------------------------------------------------------- roofline


def _gpu_and_dtype(gpu, dtype) -> tuple[GPU, str]:
    return get_gpu(gpu), tensor_dtype(dtype)


# --8<-- [start:attainable_flops]
def attainable_flops(intensity, gpu="H100-SXM", dtype="fp16"):
    """The roofline: min(peak FLOP/s, intensity x bandwidth). `intensity` may be an array."""
    g, d = _gpu_and_dtype(gpu, dtype)
    x = np.asarray(float_array("intensity", intensity), dtype=np.float64)
    if not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError("intensity must be finite and >= 0")
    out = np.minimum(g.peak_flops(d), x * g.bandwidth)
    return float(out) if out.ndim == 0 else out
# --8<-- [end:attainable_flops]


def bound(intensity, gpu="H100-SXM", dtype="fp16") -> str:
    """'memory' if intensity is below the GPU's ops:byte ratio, else 'compute'."""
    intensity = finite_real("intensity", intensity, low=0)
    g, d = _gpu_and_dtype(gpu, dtype)
    return "memory" if intensity < g.ops_per_byte(d) else "compute"


# --------------------------------------------------------------------------- attention


@dataclass(frozen=True)
class AttentionStep:
    """One step of attention: what it reads and writes in device memory and how many operations it does."""

    name: str
    reads: str
    writes: str
    read_elements: int
    write_elements: int
    ops: int
    ops_formula: str
    elements_formula: str
    dtype_bytes: float
    on_tensor_cores: bool = False  # a matmul: its operations run on the tensor cores
    exponentials: int = 0  # exponentials the step computes (softmax: one per score), on the special-function units

    @property
    def bytes(self) -> float:
        return (self.read_elements + self.write_elements) * self.dtype_bytes


@dataclass(frozen=True)
class AttentionCost:
    """Attention for one head: sequence length N, head dimension d. `steps` sum to `ops` and `bytes`."""

    variant: str
    N: int
    d: int
    dtype_bytes: float
    steps: tuple[AttentionStep, ...]

    @property
    def ops(self) -> int:
        return sum(s.ops for s in self.steps)

    @property
    def bytes(self) -> float:
        return sum(s.bytes for s in self.steps)

    @property
    def intensity(self) -> float:
        return self.ops / self.bytes

    @property
    def matmul_flops(self) -> int:
        """The two matmuls' operations, 4N^2 d: what the tensor cores do (and what FlashAttention's TFLOP/s count)."""
        return sum(s.ops for s in self.steps if s.on_tensor_cores)

    @property
    def exponentials(self) -> int:
        """Exponentials of the softmax: one per score, N^2 (the online softmax's rescaling adds about N^2 / 64 more
        with 64-key tiles, left out)."""
        return sum(s.exponentials for s in self.steps)


def _attention_args(N, d, dtype_bytes):
    return positive_int("N", N), positive_int("d", d), _dtype_bytes("dtype_bytes", dtype_bytes)


# --8<-- [start:attention_intensity]
def attention_intensity(N, d, dtype_bytes=2) -> AttentionCost:
    """Standard (unfused) attention for one head, the chapter's worked example (section 2.4.2).

    Each step round-trips through device memory:

    1. S = Q K^T  reads Q and K (2Nd elements), does 2N^2 d operations, writes S (N^2).
    2. P = softmax(S) reads S (N^2), does about 3N^2 operations (the chapter's
       count: exponentiate, add to the row sum, divide), writes P (N^2).
    3. O = P V    reads P (N^2) and V (Nd), does 2N^2 d operations, writes O (Nd).

    Elements moved: 2Nd + N^2 + N^2 + N^2 + N^2 + Nd + Nd = 4N^2 + 4Nd, so in
    FP16 (2 bytes) the total is 8N^2 + 8Nd bytes; operations total 4N^2 d + 3N^2.
    At N = 4096, d = 128 the intensity is about 62, far below an H100's 295:
    standard attention is memory bound. `dtype_bytes` is a byte count or a dtype name.
    """
    N, d, b = _attention_args(N, d, dtype_bytes)
    steps = (
        AttentionStep("S = Q K^T", "Q, K", "S", 2 * N * d, N * N, 2 * N * N * d, "2N²d", "2Nd + N²", b, True),
        AttentionStep("P = softmax(S)", "S", "P", N * N, N * N, 3 * N * N, "3N²", "N² + N²", b, exponentials=N * N),
        AttentionStep("O = P V", "P, V", "O", N * N + N * d, N * d, 2 * N * N * d, "2N²d", "N² + Nd + Nd", b, True),
    )
    return AttentionCost("standard", N, d, b, steps)
# --8<-- [end:attention_intensity]


def flash_attention_intensity(N, d, dtype_bytes=2) -> AttentionCost:
    """FlashAttention's ideal traffic: Q, K, V read once and O written once (4Nd elements).

    S and P never leave on-chip memory, so the N^2 terms vanish from the bytes
    while the operations stay 4N^2 d + 3N^2 (the online-softmax rescaling adds
    O(N^2) more, ignored here). Intensity grows like N / 2 instead of levelling
    off near d / 2: at N = 4096, d = 128 it is about 2060, compute bound.
    (This counts each tensor once; a real kernel re-reads K and V once per
    block of queries, which caches soften; Dao et al. 2022, arXiv:2205.14135, Theorem 2.)
    """
    N, d, b = _attention_args(N, d, dtype_bytes)
    steps = (
        AttentionStep("read Q, K, V", "Q, K, V", "", 3 * N * d, 0, 0, "0", "3Nd", b),
        AttentionStep("S = Q K^T (on chip)", "", "", 0, 0, 2 * N * N * d, "2N²d", "0", b, True),
        AttentionStep("P = softmax(S) (on chip)", "", "", 0, 0, 3 * N * N, "3N²", "0", b, exponentials=N * N),
        AttentionStep("O = P V (on chip)", "", "", 0, 0, 2 * N * N * d, "2N²d", "0", b, True),
        AttentionStep("write O", "", "O", 0, N * d, 0, "0", "Nd", b),
    )
    return AttentionCost("flash", N, d, b, steps)


ATTENTION_ROOFS = ("tensor cores", "memory", "exponentials")
"""The three roofs of attention: the matmuls on the tensor cores, the bytes through memory, the softmax's
exponentials on the special-function units."""


@dataclass(frozen=True)
class AttentionBound:
    """Attention's lower-bound time under three roofs (`attention_bound`).

    `tensor_time` = the matmul FLOPs (4N^2 d) / the tensor-core peak in `dtype`; `memory_time` = the bytes /
    bandwidth; `exp_time` = the exponentials (N^2) / the special-function units' rate (None where the catalog
    has no rate for this GPU: the bound then has two roofs). The convention is the one FlashAttention-3 builds:
    the three units work at once, so `time` is the largest of the three, the bound no kernel can beat.
    `serial_time` adds them, the time if nothing overlapped (a reference, not a bound). `limit` names the roof
    that sets `time`. `flops_per_s` counts the matmul FLOPs per second, as FlashAttention's TFLOP/s do.
    """

    cost: AttentionCost
    gpu: GPU
    dtype: str
    tensor_time: float
    memory_time: float
    exp_time: float | None

    @property
    def times(self) -> dict[str, float]:
        out = {"tensor cores": self.tensor_time, "memory": self.memory_time}
        if self.exp_time is not None:
            out["exponentials"] = self.exp_time
        return out

    @property
    def time(self) -> float:
        return max(self.times.values())

    @property
    def serial_time(self) -> float:
        return sum(self.times.values())

    @property
    def limit(self) -> str:
        """The roof that sets `time` (the first of ATTENTION_ROOFS among equals)."""
        times = self.times
        return max(times, key=times.get)

    @property
    def limits(self) -> tuple[str, ...]:
        """Every roof within 1 % of `time`: two when they tie (H100, FP16, d = 64: the matmuls and the exponentials)."""
        return tuple(name for name, t in self.times.items() if t >= 0.99 * self.time)

    @property
    def flops_per_s(self) -> float:
        """The bound as FlashAttention reports speed: matmul FLOPs (4N^2 d per head) / time."""
        return self.cost.matmul_flops / self.time

    @property
    def serial_flops_per_s(self) -> float:
        return self.cost.matmul_flops / self.serial_time


# --8<-- [start:attention_bound]
def attention_bound(cost: AttentionCost, gpu="H100-SXM", dtype="fp16") -> AttentionBound:
    """Attention's three roofs for one head: tensor FLOPs, bytes, and exponentials.

    FlashAttention-3 (Shah et al. 2024, arXiv:2407.08608) points out the third: an H100 SXM does 989 TFLOP/s
    of FP16 matmul but only about 3.9 T exponentials/s, and softmax needs one exponential per score against
    4d matmul FLOPs, so at d = 128 the exponentials take about half the matmul time. The bound takes the
    largest of the three times (the units overlap, as FA3 overlaps them); `cost` is `attention_intensity`
    or `flash_attention_intensity` of N, d (its bytes at that dtype).
    """
    if not isinstance(cost, AttentionCost):
        raise TypeError(f"cost must be an AttentionCost (attention_intensity or flash_attention_intensity), "
                        f"got {type(cost).__name__}")
    g, d = _gpu_and_dtype(gpu, dtype)
    exp_rate = g.exponentials.per_s
    return AttentionBound(cost, g, d, cost.matmul_flops / g.peak_flops(d), cost.bytes / g.bandwidth,
                          None if exp_rate is None else cost.exponentials / exp_rate)
# --8<-- [end:attention_bound]


def exponential_crossover_head_dim(gpu="H100-SXM", dtype="fp16") -> float:
    """The head dimension d at which one score's exponential takes as long as its 4d matmul FLOPs.

    peak / (4 x exponentials per second): below it the exponentials limit attention, above it the tensor
    cores (for long sequences, where memory does not). H100 SXM in FP16: 989.4e12 / (4 x 3.865e12) = 64.
    Raises ValueError for a GPU without an exponential rate in the catalog.
    """
    g, d = _gpu_and_dtype(gpu, dtype)
    return g.peak_flops(d) / (4 * g.exp_rate())


# --------------------------------------------------------------------------- number formats


WEIGHT_FORMATS = MappingProxyType({
    "fp16": 16.0,
    "bf16": 16.0,
    "fp8": 8.0,      # E4M3, one scale per tensor or per output channel: negligible
    "int8": 8.0,     # one scale per output channel: negligible
    "int4": 4.125,   # symmetric int4: 4-bit integers, one 16-bit scale per group of 128 (4 + 16/128)
    "int4_zp": 4.15625,  # asymmetric int4 (GPTQ, AWQ checkpoints): a 4-bit zero point beside each group's
                         # 16-bit scale (4 + (16 + 4)/128)
    "nvfp4": 4.5,    # E2M1, one FP8 E4M3 scale per block of 16 (4 + 8/16)
    "mxfp4": 4.25,   # E2M1, one E8M0 scale per block of 32 (4 + 8/32), OCP Microscaling spec
})
"""Bits per stored weight, scales included, of each weight format `weight_dtype` accepts."""

KV_FORMATS = ("fp16", "bf16", "fp8", "int8")
"""Formats of the KV cache `kv_dtype` accepts (bytes per number: 2, 2, 1, 1)."""

DEFAULT_WEIGHTS = MappingProxyType({"fp16": "fp16", "bf16": "bf16", "fp8": "fp8", "fp4": "nvfp4"})
"""The weight format used when `weight_dtype` is not given: the math dtype's own (FP4 math: NVFP4)."""

PARALLEL = ("sharded", "replicated", "expert", "pipeline")
"""How `n_gpus` hold the weights: "sharded" (tensor parallel: every weight matrix split over the GPUs,
a mixture's experts too), "replicated" (data parallel: a full copy on each GPU, the batch split between
them), "expert" (a mixture of experts: each GPU holds 1/n of the experts and a copy of everything else,
and runs attention for its own 1/n of the batch, as DeepSeek serves V3) or "pipeline" (each GPU holds
1/n of the layers; a pass visits them in turn). What each sends between GPUs: `PhaseEstimate.communication`."""


@dataclass(frozen=True)
class Formats:
    """The number formats of a pass, checked once (`formats`).

    `dtype` is the math: it sets the tensor-core peak and the bytes of activations.
    `expert_bits` and `other_bits` are bits per stored weight (scales included) of
    the routed experts and of every other weight; `weights` names them. `kv_dtype`
    is the KV cache's format. A weight narrower than the math is widened on chip
    as it is read (int4 weights with BF16 math: the W4A16 kernels of AWQ, GPTQ,
    Marlin); a weight wider than the math is refused.
    """

    dtype: str
    weights: str
    expert_bits: float
    other_bits: float
    kv_dtype: str


def _weight_format(name, value) -> tuple[str, float]:
    if not isinstance(value, str) or value.strip().lower() not in WEIGHT_FORMATS:
        raise ValueError(f"{name} must be one of {', '.join(WEIGHT_FORMATS)}, got {value!r}")
    key = value.strip().lower()
    return key, WEIGHT_FORMATS[key]


def formats(dtype="fp16", weight_dtype=None, kv_dtype=None) -> Formats:
    """Check and name the formats of a pass: math `dtype`, stored `weight_dtype`, `kv_dtype`.

    `weight_dtype` is a name from WEIGHT_FORMATS, or a mapping {"experts": ..., "other": ...}
    for a mixture of experts whose routed experts are stored apart (gpt-oss: MXFP4 experts,
    BF16 attention). None: the math dtype's own format (DEFAULT_WEIGHTS). `kv_dtype` None:
    the math dtype's, or FP8 under FP4 math.
    """
    d = tensor_dtype(dtype)
    if weight_dtype is None:
        weight_dtype = DEFAULT_WEIGHTS[d]
    if isinstance(weight_dtype, Mapping):
        if set(weight_dtype) != {"experts", "other"}:
            raise ValueError(f"weight_dtype as a mapping must have the keys 'experts' and 'other', got {sorted(weight_dtype)}")
        (e, eb), (o, ob) = (_weight_format(f"weight_dtype[{k!r}]", weight_dtype[k]) for k in ("experts", "other"))
        name = e if e == o else f"experts {e}, other {o}"
    else:
        e, eb = o, ob = _weight_format("weight_dtype", weight_dtype)
        name = e
    for key, bits in ((e, eb), (o, ob)):
        if math.floor(bits) > MATH_BITS[d]:
            raise ValueError(f"weight_dtype {key!r} is wider than the math dtype {d!r}: {d} math reads weights of "
                             f"at most {MATH_BITS[d]} bits; choose a weight_dtype of {MATH_BITS[d]} bits or fewer")
    if kv_dtype is None:
        kv = "fp8" if d == "fp4" else d
    elif not isinstance(kv_dtype, str) or kv_dtype.strip().lower() not in KV_FORMATS:
        raise ValueError(f"kv_dtype must be one of {', '.join(KV_FORMATS)}, got {kv_dtype!r}")
    else:
        kv = kv_dtype.strip().lower()
    return Formats(d, name, eb, ob, kv)


# --------------------------------------------------------------------------- LLM prefill and decode


def _weights_streamed(model: ModelConfig) -> float:
    """Parameters a forward pass reads in full: all but an untied input embedding and Gemma 3n's per-layer
    embedding table (row lookups)."""
    params = model.params()
    return params.total - (params.embedding if params.lm_head > 0 else 0) - model.per_layer_embedding_params


def _expert_params(model: ModelConfig) -> tuple[float, float]:
    """(one routed expert's parameters summed over layers, all routed experts'); (0, 0) for a dense model."""
    p = model.params()
    n_experts = model.num_experts  # 0 for a dense model
    if n_experts <= 1 or p.total == p.active:
        return 0.0, 0.0
    k = model.routed_experts_per_token / len(model.moe_layers)  # k, or the mean k where it differs per layer
    per_expert = (p.total - p.active) / (n_experts - k)
    return per_expert, n_experts * per_expert


def _touched_bytes(model: ModelConfig, tokens: float, expert_bytes: float, other_bytes: float) -> float:
    """Weight bytes `tokens` tokens read together (see `weight_bytes_touched`); tokens may be fractional."""
    streamed = _weights_streamed(model)
    _, experts = _expert_params(model)
    if experts == 0:
        return streamed * other_bytes
    ks = [model.experts_per_tok_of(i) for i in model.moe_layers]  # each MoE layer's own k (Hunyuan's may differ)
    if len(set(ks)) == 1:
        touched = 1.0 - (1.0 - ks[0] / model.num_experts) ** tokens
    else:  # the mean over layers of each layer's share touched (every layer's experts are the same size)
        touched = sum(ks.count(k) * (1.0 - (1.0 - k / model.num_experts) ** tokens) for k in sorted(set(ks))) / len(ks)
    return (streamed - experts) * other_bytes + experts * touched * expert_bytes


def _held_bytes(model: ModelConfig, f: Formats) -> float:
    """Bytes to hold one copy of every weight in formats `f`."""
    _, experts = _expert_params(model)
    return (model.params().total - experts) * f.other_bits / 8 + experts * f.expert_bits / 8


def weight_bytes_touched(model, tokens, weight_bytes_per_param) -> float:
    """Bytes of weights a step must read to process `tokens` tokens together.

    A dense model reads all its weights. An MoE model reads its shared weights
    plus the experts its tokens pick: with E experts, k per token and routing
    spread evenly, an expert is missed by one token with probability 1 - k/E, so
    it is touched by `tokens` tokens with probability 1 - (1 - k/E)^tokens. One
    token reads exactly the active parameters; a large batch reads nearly all.
    Where k differs by layer (Hunyuan's per-layer moe_topk), each layer's share
    touched uses its own k. An untied input embedding is a row lookup, so it is not counted; nor is Gemma 3n's
    per-layer embedding table (each token reads one row of it).
    """
    model = _model(model)
    tokens = positive_int("tokens", tokens)
    b = finite_real("weight_bytes_per_param", weight_bytes_per_param, low=0, low_open=True)
    return _touched_bytes(model, tokens, b, b)


@dataclass(frozen=True)
class PhasePart:
    """One part of a prefill or a decode step: its FLOPs and the bytes it moves (see `PhaseEstimate.parts`)."""

    name: str
    flops: float
    bytes: float


@dataclass(frozen=True)
class PhaseEstimate:
    """Roofline estimate of one prefill, or one decode step, on `n_gpus` GPUs.

    Bytes follow the module's convention (weights + KV cache + activations,
    each moved once). `time` = max(flops / peak, bytes / bandwidth) is a lower
    bound: no kernel beats the roof. `memory_needed` is the weights held plus the
    KV cache. `dtype` is the math (it sets the peak), `weight_dtype` and `kv_dtype`
    the stored formats. With `parallel="sharded"` the work and the bytes are split
    evenly over `n_gpus` (ideal tensor parallelism): n times the peak and the
    bandwidth. With "replicated" each GPU holds all the weights and ceil(batch / n)
    sequences: `busy_gpus` GPUs work, each reading its own copy. With "expert"
    the work is split evenly and each GPU that has sequences reads its own copy of
    every weight but the routed experts. With "pipeline" the stages run one after
    another, so a pass goes at one GPU's rates (`busy_gpus` is 1). `emitted` is the
    output tokens a decode step yields (batch x accepted tokens with speculative decoding).

    Communication (`communication`, a `chapter2.communication.Communication`; None
    on one GPU and when replicated): what the pass sends between GPUs on `link`.
    The bound adds what cannot overlap the computation and overlaps the rest:

        time = max(compute, memory, overlapped communication) + exposed communication

    Tensor parallelism's 2 all-reduces per layer and a pipeline's hand-offs are
    exposed (the next layer needs their result); expert parallelism's all-to-alls
    are overlapped (DeepSeek computes one half of the batch while the other's
    tokens travel). `communication_s` is all of it; `roofline_time` the time
    without it.
    """

    phase: str
    batch: int
    tokens: int
    flops: float
    attention_flops: float
    weight_bytes: float
    kv_bytes: float
    memory_needed: float
    gpu: GPU
    dtype: str
    n_gpus: int = 1
    activation_bytes: float = 0.0
    weight_dtype: str = ""
    kv_dtype: str = ""
    parallel: str = "sharded"
    busy_gpus: int = 0
    emitted: float = 0.0
    communication: communication.Communication | None = None

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.kv_bytes + self.activation_bytes

    @property
    def parts(self) -> tuple[PhasePart, ...]:
        """The pass in three parts that add up to `flops` and `bytes`.

        - "weights": the weight matmuls (2 FLOPs per weight per token) and the weight bytes;
        - "KV cache": attention's score and value products over the cached keys and values,
          and the KV cache bytes (read, and written for new tokens);
        - "activations": the hidden states between blocks and the output; no FLOPs counted
          (norms, softmax and activation functions are left out of the FLOP count).
        """
        return (PhasePart("weights", self.flops - self.attention_flops, self.weight_bytes),
                PhasePart("KV cache", self.attention_flops, self.kv_bytes),
                PhasePart("activations", 0.0, self.activation_bytes))

    @property
    def attention_flop_share(self) -> float:
        """Attention's share of the FLOPs (its products over the KV cache; the q/k/v/o projections are weights)."""
        return self.attention_flops / self.flops

    @property
    def attention_byte_share(self) -> float:
        """Attention's share of the bytes: the KV cache. In a memory-bound step this share sets its share of the time."""
        return self.kv_bytes / self.bytes

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def weights_intensity(self) -> float:
        """The weight matmuls alone: their FLOPs over the weight bytes (what batching raises)."""
        return (self.flops - self.attention_flops) / self.weight_bytes

    @property
    def attention_intensity(self) -> float:
        """Attention alone: its FLOPs over the KV cache bytes (what batching does not change)."""
        return self.attention_flops / self.kv_bytes

    @property
    def ridge(self) -> float:
        return self.gpu.ops_per_byte(self.dtype)

    @property
    def bound(self) -> str:
        return "memory" if self.intensity < self.ridge else "compute"

    @property
    def _gpus(self) -> int:
        return self.busy_gpus or self.n_gpus

    @property
    def compute_time(self) -> float:
        return self.flops / (self.gpu.peak_flops(self.dtype) * self._gpus)

    @property
    def memory_time(self) -> float:
        return self.bytes / (self.gpu.bandwidth * self._gpus)

    @property
    def roofline_time(self) -> float:
        """max(compute, memory): the bound without communication between GPUs."""
        return max(self.compute_time, self.memory_time)

    @property
    def communication_s(self) -> float:
        """Seconds of collectives this pass runs between GPUs (0 on one GPU or when replicated)."""
        return self.communication.seconds if self.communication else 0.0

    @property
    def link(self) -> str:
        """The link(s) the communication used ('' when there is none)."""
        return self.communication.link if self.communication else ""

    @property
    def time(self) -> float:
        """The lower bound: max(compute, memory, overlapped communication) + exposed communication."""
        if self.communication is None:
            return self.roofline_time
        return max(self.roofline_time, self.communication.overlapped) + self.communication.exposed

    @property
    def limited_by(self) -> str:
        """What sets most of `time`: "compute", "memory" or "communication"."""
        c = self.communication
        talk = (c.exposed + max(0.0, c.overlapped - self.roofline_time)) if c else 0.0
        if talk > self.roofline_time:
            return "communication"
        return "compute" if self.compute_time >= self.memory_time else "memory"

    @property
    def tokens_per_s(self) -> float:
        """Prefill: tokens processed per second. Decode: output tokens per second across the batch."""
        return (self.emitted or self.tokens) / self.time

    @property
    def fits(self) -> bool:
        return self.memory_needed <= self.gpu.memory_bytes * self.n_gpus


def _model(model) -> ModelConfig:
    """The ModelConfig of a shipped config's name, or the ModelConfig itself."""
    if isinstance(model, str):
        return load_config(model)
    if not isinstance(model, ModelConfig):
        raise TypeError(f"model must be a shipped config name or a chapter2.models.ModelConfig "
                        f"(ModelConfig.from_numbers for plain numbers), got {type(model).__name__}")
    return model


LOGITS = ("last", "all")
"""Which prompt positions a prefill computes logits for: "last" (serving: only the last position's
logits pick the first output token) or "all" (scoring a prompt, training-style passes)."""


def _logit_positions(logits, prompt_tokens: int) -> int:
    if logits not in LOGITS:
        raise ValueError(f"logits must be one of {', '.join(map(repr, LOGITS))}, got {logits!r}")
    return 1 if logits == "last" else prompt_tokens


def _lm_head_flops(model: ModelConfig) -> int:
    """FLOPs of the LM head for one position: 2 x vocab x hidden (0 for a model given `from_numbers`)."""
    return 2 * model.vocab_size * model.hidden_size


def prompt_flops(model, prompt_tokens, logits="last", mla="expanded") -> float:
    """FLOPs of a causal prefill of one P-token prompt.

    Position i attends to i keys, so with every position's logits the prompt costs
    sum_{i=1..P} model.flops_per_token(i). A server needs only the last position's
    logits (they pick the first output token), so by default (`logits="last"`) the
    LM head runs once: the sum minus (P - 1) x 2 x vocab x hidden. `logits="all"`
    keeps the LM head at every position (scoring a prompt, training-style passes).
    `mla` is the form of multi-head latent attention (ignored by other models):
    engines run prefill "expanded" (`ModelConfig.attention_flops_per_key`).

    The sum is taken in closed form per layer (`ModelConfig.prefill_flops`): full
    attention, sliding windows and chunked attention each sum their keys exactly.
    """
    model = _model(model)
    P = positive_int("prompt_tokens", prompt_tokens)
    return _prompt_flops(model, P, _logit_positions(logits, P), mla_form(mla))


def _prompt_flops(model: ModelConfig, P: int, logit_positions: int, mla: str) -> float:
    return float(model.prefill_flops(P, mla)) - (P - logit_positions) * _lm_head_flops(model)


def activation_bytes(model, tokens, logit_positions, dtype="fp16") -> float:
    """Activation bytes of one forward pass over `tokens` tokens (the module's convention).

    Each of the L blocks reads its input hidden state and writes its output once:
    2 x L x tokens x hidden numbers; the pass writes vocab logits for each of
    `logit_positions` positions. At `dtype`'s bytes per number. Zero for a model
    given `from_numbers` (no hidden or vocabulary size).
    """
    model = _model(model)
    tokens = positive_int("tokens", tokens)
    logit_positions = positive_int("logit_positions", logit_positions)
    return _activation_bytes(model, tokens, logit_positions, _dtype_bytes("dtype", dtype))


def _activation_bytes(model: ModelConfig, tokens: float, logit_positions: float, per_number: float) -> float:
    hidden = 2 * model.num_hidden_layers * tokens * model.hidden_size
    return float((hidden + logit_positions * model.vocab_size) * per_number)


def _mla_reexpansion_flops(model: ModelConfig, cached: int) -> float:
    """FLOPs to decompress `cached` latent tokens into every head's keys and values, all layers.

    Decode in the expanded form over a latent cache (transformers 5 does this): each
    cached latent goes through kv_b_proj again at every step, 2 x kv_lora_rank x
    heads x (qk_nope + v) FLOPs per token and layer.
    """
    per_token = 2 * model.kv_lora_rank * model.num_attention_heads * (model.qk_nope_head_dim + model.v_head_dim)
    return float(per_token * cached * model.num_hidden_layers)


@dataclass(frozen=True)
class _Setup:
    """Everything a pass needs besides its shape, checked once at a public entry point."""

    model: ModelConfig
    gpu: GPU
    f: Formats
    n_gpus: int
    parallel: str
    link: Interconnect | None = None  # how the GPUs talk; None when they need not (one GPU, or replicated)


def _setup(model, gpu, dtype, weight_dtype, kv_dtype, n_gpus, parallel, link=None) -> _Setup:
    if parallel not in PARALLEL:
        raise ValueError(f"parallel must be one of {', '.join(map(repr, PARALLEL))}, got {parallel!r}")
    g, f = get_gpu(gpu), formats(dtype, weight_dtype, kv_dtype)
    g.peak_flops(f.dtype)  # raises if this GPU has no tensor throughput in that math
    m, n = _model(model), positive_int("n_gpus", n_gpus)
    if parallel == "expert" and not m.moe_layers:
        raise ValueError(f"parallel='expert' needs a mixture of experts; {m.name} has no routed experts "
                         "(use 'sharded', 'replicated' or 'pipeline')")
    talks = n > 1 and parallel != "replicated"
    return _Setup(m, g, f, n, parallel, interconnect(g, link) if talks else None)


def _groups(s: _Setup, batch: int) -> tuple[int, int]:
    """(sequences per group of GPUs that shares one copy of the weights, busy groups)."""
    if s.parallel == "sharded":
        return batch, 1
    per = math.ceil(batch / s.n_gpus)
    return per, math.ceil(batch / per)


def _estimate(s: _Setup, phase, batch, tokens, per_group, emitted, pass_tokens) -> PhaseEstimate:
    """A PhaseEstimate from one group's (flops, attention flops, weight, KV and activation bytes).

    `pass_tokens` is the tokens the pass runs through the model (what its collectives carry).
    """
    _, groups = _groups(s, batch)
    flops, attention, weights, kv, acts = (groups * x for x in per_group)
    held = _held_copies(s)
    busy = {"sharded": s.n_gpus, "replicated": groups, "expert": s.n_gpus, "pipeline": 1}[s.parallel]
    if s.parallel == "expert":  # every GPU with sequences reads its own copy of the weights besides the experts
        weights += (min(s.n_gpus, batch) - 1) * _shared_weight_bytes(s.model, s.f)
    return PhaseEstimate(phase, batch, tokens, flops, attention, weights, kv, held + kv, s.gpu, s.f.dtype, s.n_gpus,
                         acts, s.f.weights, s.f.kv_dtype, s.parallel, busy, emitted, _communication(s, pass_tokens))


def _shared_weight_bytes(model: ModelConfig, f: Formats) -> float:
    """Bytes of every weight a pass reads besides the routed experts (what expert parallelism copies to each GPU)."""
    _, experts = _expert_params(model)
    return (_weights_streamed(model) - experts) * f.other_bits / 8


def _shared_held_bytes(model: ModelConfig, f: Formats) -> float:
    """Bytes to hold every weight besides the routed experts (a copy of them on each GPU under expert parallelism)."""
    _, experts = _expert_params(model)
    return (model.params().total - experts) * f.other_bits / 8


def _held_copies(s: _Setup) -> float:
    """Bytes of weights all the GPUs hold together: one copy, a copy each (replicated), or the experts once and
    the rest on every GPU (expert parallel)."""
    one = _held_bytes(s.model, s.f)
    if s.parallel == "replicated":
        return s.n_gpus * one
    if s.parallel == "expert":
        return one + (s.n_gpus - 1) * _shared_held_bytes(s.model, s.f)
    return one


def _communication(s: _Setup, tokens: float):
    """What a pass of `tokens` tokens sends between GPUs under `s.parallel` (`chapter2.communication`), or None.

    Activations travel at the math dtype's bytes (the module's convention). A model given `from_numbers`
    has no hidden size: its attention width (heads x head_dim) stands in.
    """
    if s.link is None:
        return None
    m, act = s.model, _dtype_bytes("dtype", s.f.dtype)
    hidden = m.hidden_size or m.num_attention_heads * m.head_dim
    if s.parallel == "sharded":
        return communication.tensor_parallel(m.num_hidden_layers, tokens, hidden, act, s.n_gpus, s.link)
    if s.parallel == "expert":
        k = m.routed_experts_per_token / len(m.moe_layers)  # the mean k where it differs by layer
        return communication.expert_parallel(len(m.moe_layers), tokens, k, hidden, act, s.n_gpus, s.link)
    return communication.pipeline_parallel(tokens, hidden, act, s.n_gpus, s.link)


def _prefill(s: _Setup, P: int, batch: int, logit_positions: int, mla: str) -> PhaseEstimate:
    b, _ = _groups(s, batch)
    m, f = s.model, s.f
    group = (b * _prompt_flops(m, P, logit_positions, mla),
             b * float(m.prefill_attention_flops(P, mla)),
             _touched_bytes(m, b * P, f.expert_bits / 8, f.other_bits / 8),
             float(m.kv_cache_bytes(P, b, f.kv_dtype)),  # every kept K and V written once (MLA: the latent)
             _activation_bytes(m, b * P, b * logit_positions, _dtype_bytes("dtype", f.dtype)))
    return _estimate(s, "prefill", batch, batch * P, group, batch * P, batch * P)


def prefill(model, prompt_tokens, *, batch=1, gpu="H100-SXM", dtype="fp16", weight_dtype=None, kv_dtype=None,
            n_gpus=1, parallel="sharded", logits="last", mla="expanded", link=None) -> PhaseEstimate:
    """Prefill `batch` prompts of `prompt_tokens` tokens each: one pass, weights read once.

    FLOPs: token i of a prompt attends to i keys (causal, itself included), and the
    LM head runs on the last position only (`logits="last"`, what a server does) or on
    every position (`logits="all"`): `prompt_flops`. Bytes (the module's convention):
    the weights once, the KV cache written for the prompt's tokens (a sliding-window
    layer keeps only its window; MLA writes its latent), and the activations: every
    block's input and output hidden states and the logits. Its time is a lower bound
    on time to first token (TTFT). Multi-head latent attention is costed in the
    form engines prefill with, `mla="expanded"` (keys and values decompressed per
    head); `mla="absorbed"` costs the decode form instead. `dtype`, `weight_dtype`,
    `kv_dtype`: see `formats`; `n_gpus`, `parallel`: see `PhaseEstimate`. `link`: how the GPUs
    talk, None for the GPU's own (`hardware.interconnect`) or a key of `hardware.LINKS`.
    """
    P, batch = positive_int("prompt_tokens", prompt_tokens), positive_int("batch", batch)
    s = _setup(model, gpu, dtype, weight_dtype, kv_dtype, n_gpus, parallel, link)
    return _prefill(s, P, batch, _logit_positions(logits, P), mla_form(mla))


def _decode(s: _Setup, context: int, batch: int, mla: str, draft: int, accepted: float) -> PhaseEstimate:
    b, _ = _groups(s, batch)
    m, f = s.model, s.f
    q = draft + 1  # positions each sequence runs through the model this step
    attention = sum(float(m.attention_flops_per_token(context + j, mla)) for j in range(q))
    if m.uses_mla and mla == "expanded":
        attention += _mla_reexpansion_flops(m, context - 1)  # the cache holds latents; expand them again
    flops = 2.0 * m.params().matmul_active * q + attention
    group = (b * flops, b * attention,
             _touched_bytes(m, b * q, f.expert_bits / 8, f.other_bits / 8),
             float(m.kv_cache_bytes(context + q - 1, b, f.kv_dtype)),  # context - 1 read, q written
             _activation_bytes(m, b * q, b * q, _dtype_bytes("dtype", f.dtype)))
    return _estimate(s, "decode", batch, batch, group, batch * accepted, batch * q)


def _speculation(draft_tokens, accepted_tokens) -> tuple[int, float]:
    draft = positive_int("draft_tokens", draft_tokens, allow_zero=True)
    if accepted_tokens is None:
        if draft:
            raise ValueError("accepted_tokens must be given with draft_tokens: the mean tokens a step keeps, "
                             f"between 1 and draft_tokens + 1 = {draft + 1}")
        return 0, 1.0
    return draft, finite_real("accepted_tokens", accepted_tokens, low=1, high=draft + 1)


def decode(model, context, *, batch=1, gpu="H100-SXM", dtype="fp16", weight_dtype=None, kv_dtype=None, n_gpus=1,
           parallel="sharded", mla="absorbed", draft_tokens=0, accepted_tokens=None, link=None) -> PhaseEstimate:
    """One decode step for `batch` sequences, each `context` tokens long counting the new one.

    FLOPs: batch x flops_per_token(context). Bytes (the module's convention): the
    weights the batch touches (all of them for a dense model); per sequence, the
    KV cache of the context - 1 earlier tokens read and the new token's K and V
    written (a sliding-window layer reads at most its window); and the
    activations, each block's input and output for one token and its logits.
    Its time is a lower bound on time per output token (TPOT); tokens_per_s
    counts the whole batch.

    Multi-head latent attention decodes `mla="absorbed"` (what FlashMLA, vLLM and
    SGLang run); "expanded" re-expands the cached latents at every step.
    Speculative decoding: each step verifies `draft_tokens` drafted tokens after
    the new one (draft_tokens + 1 positions per sequence: that many times the
    matmul FLOPs, the KV cache still read once) and keeps `accepted_tokens` of
    them on average (1 to draft_tokens + 1), so tokens_per_s counts batch x
    accepted_tokens. The drafter's own cost is not counted (a lower bound).
    `n_gpus`, `parallel`, `link`: see `prefill` and `PhaseEstimate`.
    """
    context, batch = positive_int("context", context), positive_int("batch", batch)
    s = _setup(model, gpu, dtype, weight_dtype, kv_dtype, n_gpus, parallel, link)
    draft, accepted = _speculation(draft_tokens, accepted_tokens)
    return _decode(s, context, batch, mla_form(mla), draft, accepted)


def _smallest(compute_bound, limit: int):
    """Smallest n in [1, limit] with compute_bound(n), for a predicate that stays true once true; None if none."""
    if not compute_bound(limit):
        return None
    lo, hi = 0, 1  # invariant: lo fails (or is 0), hi passes
    while not compute_bound(hi):
        lo, hi = hi, min(2 * hi, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if compute_bound(mid) else (mid, hi)
    return hi


def prefill_critical_tokens(model, *, batch=1, gpu="H100-SXM", dtype="fp16", weight_dtype=None, kv_dtype=None,
                            logits="last", mla="expanded", max_tokens=1 << 24):
    """Shortest prompt whose prefill is compute bound (intensity >= the GPU's ops:byte), or None.

    A prefill reads the weights once for all its tokens, so its intensity grows
    with the prompt: in 16-bit formats the weight matmuls do about one operation
    per byte per token processed together, and the KV cache and activation bytes
    that grow with the prompt pull it down a little. The crossover is therefore
    near the GPU's ops:byte ratio (in tokens, summed over the `batch` prompts of
    the pass: `batch` prompts of P tokens cross at about 1 / batch the length).
    """
    max_tokens = positive_int("max_tokens", max_tokens)
    batch = positive_int("batch", batch)
    s = _setup(model, gpu, dtype, weight_dtype, kv_dtype, 1, "sharded")
    _logit_positions(logits, 1)  # checks `logits`
    mla = mla_form(mla)

    def compute_bound(P):
        est = _prefill(s, P, batch, _logit_positions(logits, P), mla)
        return est.intensity >= est.ridge

    return _smallest(compute_bound, max_tokens)


def decode_critical_batch(model, context, *, gpu="H100-SXM", dtype="fp16", weight_dtype=None, kv_dtype=None,
                          part="step", mla="absorbed", max_batch=1 << 24):
    """Smallest batch at which decode becomes compute bound, or None if it never does.

    Batching multiplies the useful work per weight read, so intensity rises
    with the batch. `part` picks what must turn compute bound:

    - "weights": the weight matmuls alone (FLOPs over weight bytes). For a
      dense FP16 model this happens near batch = ops:byte, about 295 on an
      H100: each weight byte then feeds one multiply-add per sequence.
    - "step": the whole step, KV cache and activation bytes included. Every
      sequence reads its own KV cache, so the step's intensity levels off at
      flops_per_token / (its KV cache bytes + its activation bytes); if that
      ceiling is below the ops:byte ratio, no batch is enough (the answer is None).
    """
    context = positive_int("context", context)
    max_batch = positive_int("max_batch", max_batch)
    if part not in ("step", "weights"):
        raise ValueError(f"part must be 'step' or 'weights', got {part!r}")
    s = _setup(model, gpu, dtype, weight_dtype, kv_dtype, 1, "sharded")
    mla = mla_form(mla)

    def compute_bound(b):
        est = _decode(s, context, b, mla, 0, 1.0)
        return (est.intensity if part == "step" else est.weights_intensity) >= est.ridge

    return _smallest(compute_bound, max_batch)


# --------------------------------------------------------------------------- a request on a timeline


@dataclass(frozen=True, eq=False)
class RequestTimeline:
    """A request (a batch of `batch` identical ones) from arrival to its last output token (`request_timeline`).

    The prefill gives output token 1 (time to first token); decode step k, at context P + k, gives
    token k + 1. For output token k = 1 .. n (index k - 1): `token_times` is when it is ready,
    `contexts` the tokens then in each sequence's KV cache (P + k - 1: token k itself is written by
    the next step) and `kv_bytes` the batch's KV cache then. `decode` holds the n - 1 decode steps.
    `weight_bytes` are the weights in memory (every copy, when replicated), `memory` the GPUs' memory.
    """

    model: ModelConfig
    prompt_tokens: int
    output_tokens: int
    batch: int
    prefill: PhaseEstimate
    decode: tuple[PhaseEstimate, ...]
    token_times: tuple[float, ...]
    contexts: tuple[int, ...]
    kv_bytes: tuple[float, ...]
    weight_bytes: float
    memory: float
    kv_dtype: str
    n_gpus: int = 1
    parallel: str = "sharded"

    @property
    def ttft(self) -> float:
        """Time to first token: the prefill's time."""
        return self.prefill.time

    @property
    def total_time(self) -> float:
        return self.token_times[-1]

    @property
    def total_time_without_communication(self) -> float:
        """The same request if the GPUs talked for free: every phase's `roofline_time` added up."""
        return self.prefill.roofline_time + sum(step.roofline_time for step in self.decode)

    @property
    def memory_left(self) -> float:
        """Memory left for KV caches once the weights are loaded (negative if they do not fit)."""
        return self.memory - self.weight_bytes

    def kv_bytes_per_sequence(self, context) -> float:
        return float(self.model.kv_cache_bytes(positive_int("context", context), 1, self.kv_dtype))

    def capacity(self, context) -> int:
        """How many sequences of `context` tokens fit: floor(memory left / one sequence's KV cache), at least 0.

        Replicated weights: each GPU holds its own copy, and a sequence's cache lives on one GPU,
        so each GPU's room is counted apart.
        """
        per_sequence = self.kv_bytes_per_sequence(context)
        if self.parallel == "replicated":
            per_gpu = (self.memory - self.weight_bytes) / self.n_gpus
            return self.n_gpus * max(0, math.floor(per_gpu / per_sequence))
        return max(0, math.floor(self.memory_left / per_sequence))


def request_timeline(model, prompt_tokens, output_tokens, *, batch=1, gpu="H100-SXM", dtype="fp16",
                     weight_dtype=None, kv_dtype=None, n_gpus=1, parallel="sharded", prefill_mla="expanded",
                     decode_mla="absorbed", link=None) -> RequestTimeline:
    """Prefill, then `output_tokens - 1` decode steps, timed with `prefill` and `decode` (their lower bounds).

    `batch` sequences with the same prompt and output lengths run in lockstep: one prefill of the
    batch's prompts (its time is the time to first token), then one decode step per further output
    token, at context P + 1, P + 2, ..., P + n - 1 (counting the token that goes in). The weights
    take their stored bytes (`weight_dtype`; what `PhaseEstimate.memory_needed` counts), once per
    GPU when replicated. On several GPUs each phase pays for its communication (`PhaseEstimate.time`).
    """
    P, n = positive_int("prompt_tokens", prompt_tokens), positive_int("output_tokens", output_tokens)
    batch = positive_int("batch", batch)
    s = _setup(model, gpu, dtype, weight_dtype, kv_dtype, n_gpus, parallel, link)
    pre = _prefill(s, P, batch, 1, mla_form(prefill_mla))
    dm = mla_form(decode_mla)
    steps = tuple(_decode(s, P + k, batch, dm, 0, 1.0) for k in range(1, n))
    times = [pre.time]
    for step in steps:
        times.append(times[-1] + step.time)
    contexts = tuple(P + k - 1 for k in range(1, n + 1))
    kv = tuple(float(s.model.kv_cache_bytes(c, batch, s.f.kv_dtype)) for c in contexts)
    return RequestTimeline(s.model, P, n, batch, pre, steps, tuple(times), contexts, kv,
                           _held_copies(s), float(s.gpu.memory_bytes * s.n_gpus), s.f.kv_dtype, s.n_gpus, s.parallel)


# --------------------------------------------------------------------------- serving many requests


@dataclass(frozen=True)
class ServingBound:
    """Steady-state throughput bound of continuous batching at `concurrency` requests in flight.

    One cycle: each of the `concurrency` sequences is prefilled (P tokens) and decoded
    (n - 1 steps), the prefills riding along with decode steps (chunked prefill), so the
    cycle reads the weights once per step. `roofline_time` = max(FLOPs / peak, bytes / bandwidth)
    over the whole cycle (compute and memory overlap perfectly); `time` adds the communication
    between GPUs as `PhaseEstimate.time` does (a pipeline's stages work on different sequences at
    once, so its hand-offs overlap too): no schedule is faster. `link` names the link(s) used.
    """

    concurrency: int
    prompt_tokens: int
    output_tokens: int
    flops: float
    bytes: float
    time: float
    bound: str
    gpu: GPU
    n_gpus: int
    roofline_time: float = 0.0
    communication_s: float = 0.0
    link: str = ""

    @property
    def output_tokens_per_s_without_communication(self) -> float:
        """The same cycle if the GPUs talked for free."""
        return self.concurrency * self.output_tokens / (self.roofline_time or self.time)

    @property
    def output_tokens_per_s(self) -> float:
        return self.concurrency * self.output_tokens / self.time

    @property
    def requests_per_s(self) -> float:
        return self.concurrency / self.time


def serving_throughput(model, prompt_tokens, output_tokens, *, concurrency=None, gpu="H100-SXM", dtype="fp16",
                       weight_dtype=None, kv_dtype=None, n_gpus=1, parallel="sharded", prefill_mla="expanded",
                       decode_mla="absorbed", link=None) -> ServingBound:
    """Upper bound on output tokens/s when requests of P in, n out stream through continuous batching.

    At a steady `concurrency` C, the engine runs C sequences at once; a finished one is replaced by a
    new one whose prefill is chunked into the decode steps. Over one cycle of n steps it does
    C prompts' prefill FLOPs and C x (n - 1) decode tokens' FLOPs, and reads the weights once per step
    (n times), every sequence's KV cache once per step and its activations. The time is the roofline
    of the whole cycle. `concurrency` None: the largest C whose KV caches at P + n tokens fit
    beside the weights (`RequestTimeline.capacity`). Replicated weights split C over the GPUs, ceil(C / n)
    sequences each (`PhaseEstimate`). Communication: each of the n - 1 steps carries its C decode tokens
    and a 1 / (n - 1) share of the C prompts' tokens through the collectives of `parallel`.
    """
    P, n = positive_int("prompt_tokens", prompt_tokens), positive_int("output_tokens", output_tokens)
    s = _setup(model, gpu, dtype, weight_dtype, kv_dtype, n_gpus, parallel, link)
    held = _held_bytes(s.model, s.f)
    per_sequence = float(s.model.kv_cache_bytes(P + n, 1, s.f.kv_dtype))
    if concurrency is None:
        if s.parallel == "replicated":
            C = s.n_gpus * math.floor((s.gpu.memory_bytes - held) / per_sequence)
        else:
            C = math.floor((s.gpu.memory_bytes * s.n_gpus - _held_copies(s)) / per_sequence)
        if C < 1:
            raise ValueError(f"no sequence of {P + n} tokens fits beside the weights on {s.n_gpus} x {s.gpu.key}")
    else:
        C = positive_int("concurrency", concurrency)
    pre = _prefill(s, P, C, 1, mla_form(prefill_mla))  # totals over every busy GPU (group)
    dm = mla_form(decode_mla)
    steps = [_decode(s, P + k, C, dm, 0, 1.0) for k in range(1, n)]
    flops = pre.flops + sum(st.flops for st in steps)
    weight_reads = sum(st.weight_bytes for st in steps) if steps else pre.weight_bytes
    nbytes = weight_reads + pre.kv_bytes + pre.activation_bytes + sum(st.kv_bytes + st.activation_bytes for st in steps)
    gpus = s.n_gpus if s.parallel == "pipeline" else pre.busy_gpus  # a pipeline's stages all work at once
    compute, memory = flops / (s.gpu.peak_flops(s.f.dtype) * gpus), nbytes / (s.gpu.bandwidth * gpus)
    roof = max(compute, memory)
    talk = _communication(s, C + C * P / (n - 1) if n > 1 else C * P)  # one step's tokens (n = 1: the prefill)
    if talk is None:
        return ServingBound(C, P, n, flops, nbytes, roof, "compute" if compute >= memory else "memory", s.gpu,
                            s.n_gpus, roof)
    passes = max(n - 1, 1)
    exposed, overlapped = passes * talk.exposed, passes * talk.overlapped
    if s.parallel == "pipeline":
        exposed, overlapped = 0.0, exposed + overlapped
    return ServingBound(C, P, n, flops, nbytes, max(roof, overlapped) + exposed,
                        "compute" if compute >= memory else "memory", s.gpu, s.n_gpus, roof,
                        passes * talk.seconds, talk.link)
