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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import dtype_bytes as _dtype_bytes
from ._checks import finite_real, positive_int
from .hardware import GPU, get_gpu, tensor_dtype
from .linear import matmul_cost
from .models import ModelConfig, load_config

__all__ = [
    "matmul_intensity",
    "matvec_intensity",
    "attainable_flops",
    "bound",
    "AttentionStep",
    "AttentionCost",
    "attention_intensity",
    "flash_attention_intensity",
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
    x = np.asarray(intensity, dtype=np.float64)
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
        AttentionStep("S = Q K^T", "Q, K", "S", 2 * N * d, N * N, 2 * N * N * d, "2N²d", "2Nd + N²", b),
        AttentionStep("P = softmax(S)", "S", "P", N * N, N * N, 3 * N * N, "3N²", "N² + N²", b),
        AttentionStep("O = P V", "P, V", "O", N * N + N * d, N * d, 2 * N * N * d, "2N²d", "N² + Nd + Nd", b),
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
        AttentionStep("S = Q K^T (on chip)", "", "", 0, 0, 2 * N * N * d, "2N²d", "0", b),
        AttentionStep("P = softmax(S) (on chip)", "", "", 0, 0, 3 * N * N, "3N²", "0", b),
        AttentionStep("O = P V (on chip)", "", "", 0, 0, 2 * N * N * d, "2N²d", "0", b),
        AttentionStep("write O", "", "O", 0, N * d, 0, "0", "Nd", b),
    )
    return AttentionCost("flash", N, d, b, steps)


# --------------------------------------------------------------------------- LLM prefill and decode


def weight_bytes_touched(model, tokens, weight_bytes_per_param) -> float:
    """Bytes of weights a step must read to process `tokens` tokens together.

    A dense model reads all its weights. An MoE model reads its shared weights
    plus the experts its tokens pick: with E experts, k per token and routing
    spread evenly, an expert is missed by one token with probability 1 - k/E, so
    it is touched by `tokens` tokens with probability 1 - (1 - k/E)^tokens. One
    token reads exactly the active parameters; a large batch reads nearly all.
    An untied input embedding is a row lookup, so it is not counted.
    """
    model = _model(model)
    tokens = positive_int("tokens", tokens)
    weight_bytes_per_param = finite_real("weight_bytes_per_param", weight_bytes_per_param, low=0, low_open=True)
    p = model.params()
    streamed = _weights_streamed(p)
    n_experts, k = model.num_experts, model.num_experts_per_tok  # 0, 0 for a dense model
    if n_experts <= 1 or p.total == p.active:
        return streamed * weight_bytes_per_param
    per_expert = (p.total - p.active) / (n_experts - k)  # one expert's weights, summed over layers
    touched = 1.0 - (1.0 - k / n_experts) ** tokens
    return (streamed - n_experts * per_expert * (1.0 - touched)) * weight_bytes_per_param


@dataclass(frozen=True)
class PhasePart:
    """One part of a prefill or a decode step: its FLOPs and the bytes it moves (see `PhaseEstimate.parts`)."""

    name: str
    flops: float
    bytes: float


@dataclass(frozen=True)
class PhaseEstimate:
    """Roofline estimate of one prefill, or one decode step, on one GPU.

    Bytes follow the module's convention (weights + KV cache + activations,
    each moved once). `time` = max(flops / peak, bytes / bandwidth) is a lower
    bound: no kernel beats the roof. `memory_needed` is the weights plus the
    KV cache it holds. With `n_gpus` > 1 the work and the bytes are split
    evenly (ideal tensor parallelism, communication ignored): n times the peak
    and the bandwidth.
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
    def compute_time(self) -> float:
        return self.flops / (self.gpu.peak_flops(self.dtype) * self.n_gpus)

    @property
    def memory_time(self) -> float:
        return self.bytes / (self.gpu.bandwidth * self.n_gpus)

    @property
    def time(self) -> float:
        return max(self.compute_time, self.memory_time)

    @property
    def tokens_per_s(self) -> float:
        """Tokens processed per second across the batch (decode: batch / time per step)."""
        return self.tokens / self.time

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


def prompt_flops(model, prompt_tokens, logits="last") -> float:
    """FLOPs of a causal prefill of one P-token prompt.

    Position i attends to i keys, so with every position's logits the prompt costs
    sum_{i=1..P} model.flops_per_token(i). A server needs only the last position's
    logits (they pick the first output token), so by default (`logits="last"`) the
    LM head runs once: the sum minus (P - 1) x 2 x vocab x hidden. `logits="all"`
    keeps the LM head at every position (scoring a prompt, training-style passes).

    The sum is taken in closed form per layer (`ModelConfig.prefill_flops`): full
    attention, sliding windows and chunked attention each sum their keys exactly.
    """
    model = _model(model)
    P = positive_int("prompt_tokens", prompt_tokens)
    skipped = P - _logit_positions(logits, P)  # positions whose logits are not computed
    return _sum_over_prompt(model.flops_per_token, model, P) - skipped * _lm_head_flops(model)


def _sum_over_prompt(f, model: ModelConfig, prompt_tokens) -> float:
    """sum_{i=1..P} f(i) for f = model.flops_per_token or model.attention_flops_per_token, exactly.

    `ModelConfig.prefill_flops` / `prefill_attention_flops` sum each layer's keys in
    closed form: full attention, a sliding window, or Llama 4's chunked attention
    (whose keys fall back to 1 at every chunk start, so f is not piecewise affine).
    """
    P = positive_int("prompt_tokens", prompt_tokens)
    if f == model.attention_flops_per_token:
        return float(model.prefill_attention_flops(P))
    if f == model.flops_per_token:
        return float(model.prefill_flops(P))
    raise ValueError(f"f must be the model's flops_per_token or attention_flops_per_token, got {f!r}")


def _weights_streamed(params) -> float:
    """Parameters a forward pass reads in full: all but an untied input embedding (a row lookup)."""
    return params.total - (params.embedding if params.lm_head > 0 else 0)


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
    per_number = _dtype_bytes("dtype", dtype)
    hidden = 2 * model.num_hidden_layers * tokens * model.hidden_size
    return float((hidden + logit_positions * model.vocab_size) * per_number)


def _phase_setup(model, gpu, dtype, kv_dtype):
    model = _model(model)
    g, d = _gpu_and_dtype(gpu, dtype)
    return model, g, d, _dtype_bytes("dtype", d), d if kv_dtype is None else kv_dtype


def prefill(model, prompt_tokens, *, batch=1, gpu="H100-SXM", dtype="fp16", kv_dtype=None, n_gpus=1,
            logits="last") -> PhaseEstimate:
    """Prefill `batch` prompts of `prompt_tokens` tokens each: one pass, weights read once.

    FLOPs: token i of a prompt attends to i keys (causal, itself included), and the
    LM head runs on the last position only (`logits="last"`, what a server does) or on
    every position (`logits="all"`): `prompt_flops`. Bytes (the module's convention):
    the weights once, the KV cache written for the prompt's tokens (a sliding-window
    layer keeps only its window), and the activations: every block's input and output
    hidden states and the logits. Its time is a lower bound on time to first token (TTFT).
    """
    P, batch = positive_int("prompt_tokens", prompt_tokens), positive_int("batch", batch)
    model, g, d, wb, kv_dtype = _phase_setup(model, gpu, dtype, kv_dtype)
    positions = _logit_positions(logits, P)
    flops = batch * prompt_flops(model, P, logits)
    attention = batch * _sum_over_prompt(model.attention_flops_per_token, model, P)
    kv_bytes = model.kv_cache_bytes(P, batch, kv_dtype)  # every kept K and V written once
    weights = weight_bytes_touched(model, batch * P, wb)
    activations = activation_bytes(model, batch * P, batch * positions, d)
    memory = model.params().total * wb + kv_bytes
    return PhaseEstimate("prefill", batch, batch * P, flops, attention, weights, kv_bytes, memory, g, d,
                         positive_int("n_gpus", n_gpus), activations)


def decode(model, context, *, batch=1, gpu="H100-SXM", dtype="fp16", kv_dtype=None, n_gpus=1) -> PhaseEstimate:
    """One decode step for `batch` sequences, each `context` tokens long counting the new one.

    FLOPs: batch x flops_per_token(context). Bytes (the module's convention): the
    weights the batch touches (all of them for a dense model); per sequence, the
    KV cache of the context - 1 earlier tokens read and the new token's K and V
    written (a sliding-window layer reads at most its window); and the
    activations, each block's input and output for one token and its logits.
    Its time is a lower bound on time per output token (TPOT); tokens_per_s
    counts the whole batch.
    """
    context, batch = positive_int("context", context), positive_int("batch", batch)
    model, g, d, wb, kv_dtype = _phase_setup(model, gpu, dtype, kv_dtype)
    flops = batch * model.flops_per_token(context)
    attention = batch * model.attention_flops_per_token(context)
    kv_bytes = model.kv_cache_bytes(context, batch, kv_dtype)  # a sliding window caps its layers' share
    weights = weight_bytes_touched(model, batch, wb)
    activations = activation_bytes(model, batch, batch, d)
    memory = model.params().total * wb + kv_bytes
    return PhaseEstimate("decode", batch, batch, flops, attention, weights, kv_bytes, memory, g, d,
                         positive_int("n_gpus", n_gpus), activations)


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


def prefill_critical_tokens(model, *, batch=1, gpu="H100-SXM", dtype="fp16", kv_dtype=None, logits="last",
                            max_tokens=1 << 24):
    """Shortest prompt whose prefill is compute bound (intensity >= the GPU's ops:byte), or None.

    A prefill reads the weights once for all its tokens, so its intensity grows
    with the prompt: in 16-bit formats the weight matmuls do about one operation
    per byte per token processed together, and the KV cache and activation bytes
    that grow with the prompt pull it down a little. The crossover is therefore
    near the GPU's ops:byte ratio (in tokens, summed over the `batch` prompts of
    the pass: `batch` prompts of P tokens cross at about 1 / batch the length).
    """
    max_tokens = positive_int("max_tokens", max_tokens)
    model = _model(model)

    def compute_bound(P):
        est = prefill(model, P, batch=batch, gpu=gpu, dtype=dtype, kv_dtype=kv_dtype, logits=logits)
        return est.intensity >= est.ridge

    return _smallest(compute_bound, max_tokens)


def decode_critical_batch(model, context, *, gpu="H100-SXM", dtype="fp16", kv_dtype=None, part="step",
                          max_batch=1 << 24):
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
    model = _model(model)

    def compute_bound(b):
        est = decode(model, context, batch=b, gpu=gpu, dtype=dtype, kv_dtype=kv_dtype)
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
    `weight_bytes` are the weights in memory, `memory` the GPUs' memory.
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

    @property
    def ttft(self) -> float:
        """Time to first token: the prefill's time."""
        return self.prefill.time

    @property
    def total_time(self) -> float:
        return self.token_times[-1]

    @property
    def memory_left(self) -> float:
        """Memory left for KV caches once the weights are loaded (negative if they do not fit)."""
        return self.memory - self.weight_bytes

    def kv_bytes_per_sequence(self, context) -> float:
        return float(self.model.kv_cache_bytes(positive_int("context", context), 1, self.kv_dtype))

    def capacity(self, context) -> int:
        """How many sequences of `context` tokens fit: floor(memory left / one sequence's KV cache), at least 0."""
        return max(0, math.floor(self.memory_left / self.kv_bytes_per_sequence(context)))


def request_timeline(model, prompt_tokens, output_tokens, *, batch=1, gpu="H100-SXM", dtype="fp16", kv_dtype=None,
                     n_gpus=1) -> RequestTimeline:
    """Prefill, then `output_tokens - 1` decode steps, timed with `prefill` and `decode` (their lower bounds).

    `batch` sequences with the same prompt and output lengths run in lockstep: one prefill of the
    batch's prompts (its time is the time to first token), then one decode step per further output
    token, at context P + 1, P + 2, ..., P + n - 1 (counting the token that goes in). The weights
    take params x bytes per parameter of `dtype` (what `PhaseEstimate.memory_needed` counts).
    """
    P, n = positive_int("prompt_tokens", prompt_tokens), positive_int("output_tokens", output_tokens)
    batch, n_gpus = positive_int("batch", batch), positive_int("n_gpus", n_gpus)
    model = _model(model)
    g, d = _gpu_and_dtype(gpu, dtype)
    kv_dtype = d if kv_dtype is None else kv_dtype
    pre = prefill(model, P, batch=batch, gpu=g, dtype=d, kv_dtype=kv_dtype, n_gpus=n_gpus)
    steps = tuple(decode(model, P + k, batch=batch, gpu=g, dtype=d, kv_dtype=kv_dtype, n_gpus=n_gpus)
                  for k in range(1, n))
    times = [pre.time]
    for step in steps:
        times.append(times[-1] + step.time)
    contexts = tuple(P + k - 1 for k in range(1, n + 1))
    kv = tuple(float(model.kv_cache_bytes(c, batch, kv_dtype)) for c in contexts)
    return RequestTimeline(model, P, n, batch, pre, steps, tuple(times), contexts, kv,
                           float(pre.memory_needed - pre.kv_bytes), float(g.memory_bytes * n_gpus), kv_dtype)
