"""Selective state-space models (Mamba) and what hybrid models cost (section 2.5).

Attention compares each token with every earlier one, so prefill costs
O(N^2) and the KV cache grows with N. A state-space model instead carries a
fixed-size state h through the sequence; Mamba (Gu & Dao 2023,
"Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
arXiv:2312.00752) makes the update depend on the input ("selective"):

    A_bar_t = exp(delta_t * A)        zero-order hold for the diagonal A (paper eq. 4)
    B_bar_t = delta_t * B_t           the simplification of the paper's reference scan
                                      (exact ZOH: (delta A)^-1 (exp(delta A) - 1) delta B)
    h_t     = A_bar_t * h_{t-1} + B_bar_t * x_t
    y_t     = C_t . h_t + D * x_t

with, per channel d and state index n, delta_t (the step size, > 0), B_t and
C_t computed from the input. A is diagonal (one decay per channel and state
index) and negative, so exp(delta A) lies in (0, 1]: the state forgets.

Two ways to evaluate the same recurrence:

- `selective_scan` runs it step by step (the recurrent form; decode is one
  step of it, `selective_scan_step`, with constant memory and work per token);
- `selective_scan_chunked` cuts the sequence into chunks: inside a chunk every
  output is a weighted sum over earlier positions with weights
  exp(sum of log-decays between them) (segment sums of delta A, computed with
  cumulative sums), and only the state is carried from chunk to chunk. This is
  the shape of the fast GPU algorithms (the Mamba-2 "SSD" paper, Dao & Gu 2024,
  arXiv:2405.21060, where a scalar decay per head turns each chunk into
  matrix multiplications).

The second half of the module counts what pure attention, pure SSM and hybrid
stacks (a few attention layers among many Mamba layers, as in NVIDIA's
Nemotron-H and Nemotron 3 Nano) spend on sequence mixing: FLOPs and the
memory that grows (KV cache) or stays fixed (SSM state).

Shapes: x and delta (B, L, D) or (L, D); A (D, N); B and C (B, L, N) or
(L, N); D (D,); the state h (B, D, N) or (D, N).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ._checks import dtype_bytes, float_array, positive_int
from .attention import attended_pairs
from .models import ModelConfig, load_config
from .models.layers import NONE
from .models.layers.attention import FullAttention
from .models.layers.mamba2 import Mamba2

# ---------------------------------------------------------------------------------------------
# the selective scan
# ---------------------------------------------------------------------------------------------


def _scan_inputs(x, delta, A, B, C, D, h0):
    """Validate and broadcast to a batch axis: x, delta (b, L, D); A (D, N); B, C (b, L, N)."""
    x = float_array("x", x)
    if x.ndim not in (2, 3):
        raise ValueError(f"x must be (L, D) or (B, L, D), got shape {x.shape}")
    batched = x.ndim == 3
    delta = float_array("delta", delta)
    if delta.shape != x.shape:
        raise ValueError(f"delta must have the shape of x {x.shape}, got {delta.shape}")
    if not np.all(np.isfinite(delta)) or np.any(delta < 0):
        raise ValueError("delta must be finite and >= 0 (a step size, softplus of a projection in Mamba)")
    A = float_array("A", A, ndim=2)
    channels, states = A.shape
    if channels != x.shape[-1]:
        raise ValueError(f"A must be (D={x.shape[-1]}, N), got shape {A.shape}")
    if not np.all(np.isfinite(A)) or np.any(A > 0):
        raise ValueError("A must be finite and <= 0 (a decaying state; Mamba uses A = -exp(A_log))")
    lead = x.shape[:-1]
    B = float_array("B", B)
    C = float_array("C", C)
    for name, arr in (("B", B), ("C", C)):
        if arr.shape != (*lead, states):
            raise ValueError(f"{name} must have shape {(*lead, states)} (positions x state size), got {arr.shape}")
    if D is not None:
        D = float_array("D", D, ndim=1)
        if D.shape != (channels,):
            raise ValueError(f"D must have shape ({channels},), got {D.shape}")
    if h0 is not None:
        h0 = float_array("h0", h0)
        expected = (*x.shape[:-2], channels, states)
        if h0.shape != expected:
            raise ValueError(f"h0 must have shape {expected}, got {h0.shape}")
    if not batched:  # a batch axis of 1, removed again by _finish
        x, delta, B, C = x[None], delta[None], B[None], C[None]
        h0 = None if h0 is None else h0[None]
    return batched, x, delta, A, B, C, D, h0


def discretize(delta, A, B):
    """(A_bar, B_bar) for one position or many: exp(delta A) and delta B, each (..., D, N).

    delta: (..., D); A: (D, N); B: (..., N). Zero-order hold for A (Gu & Dao
    2023, eq. 4); for B the simplification delta * B of the paper's reference
    implementation (exact ZOH would be (delta A)^-1 (exp(delta A) - 1) delta B).
    """
    delta = float_array("delta", delta, min_ndim=1)
    A = float_array("A", A, ndim=2)
    B = float_array("B", B, min_ndim=1)
    if delta.shape[-1] != A.shape[0] or B.shape[-1] != A.shape[1]:
        raise ValueError(f"expected delta (..., D), A (D, N), B (..., N); got {delta.shape}, {A.shape}, {B.shape}")
    return np.exp(delta[..., :, None] * A), delta[..., :, None] * B[..., None, :]


def selective_scan_step(h, x_t, delta_t, A, B_t, C_t, D=None):
    """One decode step of the recurrence: returns (y_t, h_t) from h_{t-1}.

    h: (D, N) or (B, D, N); x_t, delta_t: (D,) or (B, D); B_t, C_t: (N,) or (B, N).
    Work and memory per token do not depend on how many tokens came before.
    """
    h = float_array("h", h)
    x_t = float_array("x_t", x_t)
    delta_t = float_array("delta_t", delta_t)
    A = float_array("A", A, ndim=2)
    B_t = float_array("B_t", B_t)
    C_t = float_array("C_t", C_t)
    lead = h.shape[:-2]
    if h.shape[-2:] != A.shape or x_t.shape != h.shape[:-1] or delta_t.shape != x_t.shape:
        raise ValueError(f"shapes do not match: h {h.shape} must be (..., D, N) with A {A.shape}, "
                         f"x_t and delta_t (..., D), got {x_t.shape} and {delta_t.shape}")
    if B_t.shape != (*lead, A.shape[1]) or C_t.shape != B_t.shape:
        raise ValueError(f"B_t and C_t must have shape {(*lead, A.shape[1])}, got {B_t.shape} and {C_t.shape}")
    a_bar, b_bar = discretize(delta_t, A, B_t)
    h = a_bar * h + b_bar * x_t[..., None]  # (..., D, N)
    y = np.einsum("...dn,...n->...d", h, C_t)
    if D is not None:
        y = y + float_array("D", D, ndim=1) * x_t
    return y, h


# --8<-- [start:selective_scan]
def selective_scan(x, delta, A, B, C, D=None, *, h0=None, return_state=False):
    """The recurrent form: h_t = exp(delta_t A) h_{t-1} + delta_t B_t x_t, y_t = C_t . h_t + D x_t.

    One step per position, vectorized over batch, channels and state. Returns
    y shaped like x, and the final state (B, D, N) / (D, N) if `return_state`.
    """
    batched, x, delta, A, B, C, D, h = _scan_inputs(x, delta, A, B, C, D, h0)
    batch, length, channels = x.shape
    dtype = np.result_type(x, delta, A, B, C)
    if h is None:
        h = np.zeros((batch, channels, A.shape[1]), dtype=dtype)
    y = np.empty((batch, length, channels), dtype=dtype)
    for t in range(length):
        y[:, t], h = selective_scan_step(h, x[:, t], delta[:, t], A, B[:, t], C[:, t], D)
    return _finish(y, h, batched, return_state)
# --8<-- [end:selective_scan]


def segment_sum(log_decay):
    """S[..., t, s] = sum of log_decay[..., r] for s < r <= t, and -inf for s > t.

    log_decay: (..., T) along the last axis. exp(S[t, s]) is how much of the
    state at position s survives to position t. Computed as a masked cumulative
    sum rather than cumsum[t] - cumsum[s], which would subtract two large numbers.
    """
    log_decay = float_array("log_decay", log_decay, min_ndim=1)
    length = log_decay.shape[-1]
    below = np.tril(np.ones((length, length), dtype=bool), k=-1)  # r > s
    repeated = np.where(below, log_decay[..., :, None], 0.0)  # [..., r, s] = log_decay[r] for r > s
    sums = np.cumsum(repeated, axis=-2)  # [..., t, s] = sum over s < r <= t
    return np.where(np.tril(np.ones((length, length), dtype=bool)), sums, -np.inf)


def selective_scan_chunked(x, delta, A, B, C, D=None, *, chunk_size=64, h0=None, return_state=False):
    """The same recurrence evaluated chunk by chunk, the state carried between chunks.

    Inside a chunk of T positions, with a_t = delta_t A (log-decays) and
    u_s = delta_s B_s x_s, unrolling the recurrence gives

        h_t = exp(a_1 + ... + a_t) h_0 + sum_{s <= t} exp(a_{s+1} + ... + a_t) u_s

    so y_t = C_t . h_t is a sum over earlier positions weighted by exp of
    segment sums (`segment_sum`) plus the carried state's contribution. Work per
    chunk is O(T^2 D N) and memory O(T^2 D N): the chunk size trades the
    sequential loop's L steps for L / T larger, parallel ones.
    """
    chunk_size = positive_int("chunk_size", chunk_size)
    batched, x, delta, A, B, C, D, h = _scan_inputs(x, delta, A, B, C, D, h0)
    batch, length, channels = x.shape
    dtype = np.result_type(x, delta, A, B, C)
    if h is None:
        h = np.zeros((batch, channels, A.shape[1]), dtype=dtype)
    y = np.empty((batch, length, channels), dtype=dtype)
    for c0 in range(0, length, chunk_size):
        chunk = slice(c0, min(c0 + chunk_size, length))
        log_decay = delta[:, chunk, :, None] * A  # (b, T, D, N), <= 0
        u = (delta[:, chunk] * x[:, chunk])[..., None] * B[:, chunk, None, :]  # (b, T, D, N)
        decay_from_start = np.cumsum(log_decay, axis=1)  # (b, T, D, N): a_1 + ... + a_t
        seg = segment_sum(np.moveaxis(log_decay, 1, -1))  # (b, D, N, T, T): [t, s]
        weights = np.exp(seg)
        # intra-chunk: y_t = sum_s sum_n C[t, n] exp(seg[t, s]) u[s]
        y_intra = np.einsum("btn,bdnts,bsdn->btd", C[:, chunk], weights, u, optimize=True)
        y_carry = np.einsum("btn,btdn,bdn->btd", C[:, chunk], np.exp(decay_from_start), h, optimize=True)
        y[:, chunk] = y_intra + y_carry
        # state after the chunk's last position T
        h = np.exp(decay_from_start[:, -1]) * h + np.einsum("bdns,bsdn->bdn", weights[..., -1, :], u, optimize=True)
    if D is not None:
        y = y + D * x
    return _finish(y, h, batched, return_state)


def _finish(y, h, batched, return_state):
    if not batched:
        y, h = y[0], h[0]
    return (y, h) if return_state else y


# ---------------------------------------------------------------------------------------------
# cost of sequence mixing: attention, SSM, hybrid
# ---------------------------------------------------------------------------------------------

# Per state element and token, the Mamba-2 recurrence does h = a h + (B x) (a multiply for
# B x, a multiply-add for the update) and y += C h (a multiply-add): 5 FLOPs. The decay a is
# one number per head in Mamba-2 (Dao & Gu 2024), so its exp is negligible per element. The Mamba-2
# layer kind states it once (`models.layers.mamba2.Mamba2.flops_per_state`); this is that number.
SSM_FLOPS_PER_STATE = Mamba2.flops_per_state


@dataclass(frozen=True)
class SlidingWindowSaving:
    """Prefill work of causal attention with and without a window (section 2.5)."""

    n: int
    window: int
    full_pairs: int  # n (n + 1) / 2
    window_pairs: int  # n w - w (w - 1) / 2 once n >= w
    full_approx: float  # n^2 / 2
    window_approx: float  # n w - w^2 / 2

    @property
    def ratio(self) -> float:
        """How many times less work the window does (exact counts); the ideal speedup."""
        return self.full_pairs / self.window_pairs

    @property
    def saved_share(self) -> float:
        return 1.0 - self.window_pairs / self.full_pairs


def sliding_window_saving(n, window) -> SlidingWindowSaving:
    """Scores computed by full causal attention vs a sliding window of w keys, for n tokens.

    Exact counts (`attention.attended_pairs`): n (n + 1) / 2 causal and, once
    n >= w, sum_i min(i + 1, w) = n w - w (w - 1) / 2 windowed; the chapter's
    approximations n^2 / 2 and n w - w^2 / 2 drop the diagonal terms.
    """
    n = positive_int("n", n)
    window = positive_int("window", window)
    w_eff = min(window, n)
    return SlidingWindowSaving(n, window, attended_pairs(n, causal=True), attended_pairs(n, window=window),
                               n * n / 2, n * w_eff - w_eff * w_eff / 2)


@dataclass(frozen=True)
class HybridConfig:
    """The sequence-mixing layers of a model: attention layers and Mamba-2 layers.

    A view of a `ModelConfig` (`from_model`): its attention sizes, and its Mamba-2 layer as the model describes
    it (`mamba`, a `models.layers.mamba2.Mamba2`: heads, state size, groups, convolution), so this holds no number
    of its own; the presets are read from shipped config.json files. MLP / MoE layers are left out: they cost
    the same per token whatever mixes the sequence. `source` says where the numbers come from.
    """

    name: str
    attention_layers: int
    ssm_layers: int
    n_heads: int  # attention query heads
    n_kv_heads: int  # attention key/value heads (grouped-query attention)
    head_dim: int
    mamba: Mamba2  # one Mamba-2 layer's sizes; d_inner = heads x head_dim
    ffn_layers: int = 0  # MLP / MoE layers (not counted in the mixing cost)
    source: str = ""

    @classmethod
    def from_model(cls, config: ModelConfig, name: str | None = None) -> HybridConfig:
        """The mixing layers of a Mamba-2 hybrid read by `ModelConfig` (NemotronH: its "M" and "*" layers;
        its "E" and "-" layers are the MLP / MoE layers; Granite 4.0-H).

        Refused, naming the class: a model with no Mamba-2 layer (a transformer; Jamba's Mamba-1, gated
        DeltaNet, short convolution and lightning attention, whose state and work per token this class's
        Mamba-2 fields do not describe), and a parallel hybrid (Falcon-H1, whose every layer runs attention
        and Mamba-2 side by side: `with_attention_layers` has no layer to trade). `ModelConfig.kv_cache_bytes`
        and the block diagram of 2.2 cover all of them."""
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
        got = f"{config.name!r} ({config.architecture or 'no class'})"
        if config.parallel_state:  # Falcon-H1: its Mamba-2 runs beside the attention of the same layer
            raise ValueError(f"config must be a Mamba-2 hybrid with separate attention and Mamba-2 layers (NemotronH, "
                             f"Granite 4.0-H), got {got}, a parallel hybrid: each layer runs attention and "
                             f"{config.parallel_state} side by side, so no layer can be traded for the other kind")
        if Mamba2.name not in config.kinds:
            others = sorted({config.state_kind(i) for i in config.state_layers})
            raise ValueError(f"config must be a Mamba-2 hybrid (NemotronH such as Nemotron 3 Nano, Granite 4.0-H), "
                             f"got {got} with no Mamba-2 layer"
                             + (f" (its recurrent layers: {', '.join(others)})" if others else ""))
        return cls(name or config.name, attention_layers=len(config.attention_layers),
                   ssm_layers=config.kinds.count(Mamba2.name), n_heads=config.num_attention_heads,
                   n_kv_heads=config.num_key_value_heads, head_dim=config.head_dim, mamba=config.mixer(Mamba2.name),
                   ffn_layers=config.kinds.count(NONE), source=config.source)

    @property
    def mixing_layers(self) -> int:
        return self.attention_layers + self.ssm_layers

    @property
    def total_layers(self) -> int:
        return self.mixing_layers + self.ffn_layers

    @property
    def attention_share(self) -> float:
        """Attention layers as a share of the sequence-mixing layers (attention + SSM), MLP/MoE layers left out.

        This is the share that sets a hybrid's long-context KV cache and attention FLOPs relative to the
        same mixing layers built as all attention. Papers often quote the share among all layers instead
        (`attention_share_of_all_layers`).
        """
        return self.attention_layers / self.mixing_layers

    @property
    def attention_share_of_all_layers(self) -> float:
        """Attention layers as a share of all layers, MLP/MoE layers included (`total_layers`)."""
        return self.attention_layers / self.total_layers

    @property
    def ssm_inner(self) -> int:
        """d_inner: the Mamba-2 layer's heads x head_dim."""
        return self.mamba.inner

    @property
    def ssm_state(self) -> int:
        """N: state numbers per channel."""
        return self.mamba.state_size

    @property
    def conv_kernel(self) -> int:
        """Taps of the causal depthwise convolution before the scan."""
        return self.mamba.kernel

    @property
    def conv_channels(self) -> int:
        """x, B and C go through the convolution (Mamba-2 layout): `Mamba2.conv_channels`."""
        return self.mamba.conv_channels

    def with_mix(self, attention_layers: int, ssm_layers: int) -> HybridConfig:
        """The same layer shapes with another number of attention and Mamba layers."""
        attention_layers = positive_int("attention_layers", attention_layers, allow_zero=True)
        ssm_layers = positive_int("ssm_layers", ssm_layers, allow_zero=True)
        if attention_layers + ssm_layers == 0:
            raise ValueError("a stack needs at least one mixing layer (attention_layers + ssm_layers >= 1)")
        return replace(self, name=f"{self.name} shapes, {attention_layers} attention + {ssm_layers} Mamba",
                       attention_layers=attention_layers, ssm_layers=ssm_layers)

    def with_attention_layers(self, attention_layers: int) -> HybridConfig:
        """The same stack with `attention_layers` of its mixing layers as attention, the rest Mamba."""
        total = self.mixing_layers
        attention_layers = positive_int("attention_layers", attention_layers, allow_zero=True)
        if attention_layers > total:
            raise ValueError(f"attention_layers must be <= {total} (mixing layers), got {attention_layers}")
        return self.with_mix(attention_layers, total - attention_layers)


# Views of shipped config.json files (chapter2/data/configs/families/, each with its `_source`): key -> (the
# shipped config, its name on the page). Nemotron-H-8B: 52 layers = 24 Mamba-2 + 24 MLP + 4 self-attention
# (NVIDIA, "Nemotron-H: A Family of Accurate and Efficient Hybrid Mamba-Transformer Models", arXiv:2504.03624,
# Table 1). Nemotron 3 Nano 30B-A3B: 52 layers = 23 Mamba-2 + 23 MoE + 6 attention
# (hybrid_override_pattern "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME").
_PRESETS = {"nemotron-h-8b": ("Nemotron-H-8B-Base-8K", "Nemotron-H-8B"),
            "nemotron-3-nano": ("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "Nemotron 3 Nano 30B-A3B")}
# The shipped config.json behind each preset (`chapter2.models.load_config`).
PRESET_CONFIGS = {key: config for key, (config, _) in _PRESETS.items()}
HYBRID_PRESETS = {key: HybridConfig.from_model(load_config(config), label) for key, (config, label) in _PRESETS.items()}


def stacks_of(config: ModelConfig) -> dict[str, ModelConfig]:
    """A Mamba-2 hybrid as shipped ("hybrid") and its sequence-mixing layers rebuilt as all attention
    ("attention") or all Mamba-2 ("ssm"), every other size unchanged: three models of the same shapes,
    whose `kv_cache_bytes` (transformers' cache layout: KV plus every conv and recurrent state) compare."""
    HybridConfig.from_model(config)  # refuses what is not a Mamba-2 hybrid
    swap = {"attention": {Mamba2.name: FullAttention.name}, "ssm": {FullAttention.name: Mamba2.name}}
    out = {"attention": None, "hybrid": config, "ssm": None}
    for key, kinds in swap.items():
        out[key] = replace(config, name=f"{config.name}, mixing layers all {'attention' if key == 'attention' else 'Mamba-2'}",
                           layer_types=tuple(kinds.get(k, k) for k in config.kinds))
    return out


@dataclass(frozen=True)
class MixingCost:
    """Sequence-mixing cost of one sequence through all mixing layers of a stack."""

    context: int
    phase: str  # "prefill" (all `context` tokens) or "decode" (one token after `context` - 1)
    attention_flops: float  # QK^T and PV
    ssm_flops: float  # convolution and scan
    kv_cache_bytes: float  # grows with context (capped by a window)
    ssm_state_bytes: float  # fixed: scan state + convolution state

    @property
    def flops(self) -> float:
        return self.attention_flops + self.ssm_flops

    @property
    def memory_bytes(self) -> float:
        return self.kv_cache_bytes + self.ssm_state_bytes


def mixing_cost(config: HybridConfig, context, *, phase: str = "prefill", window=None,
                kv_dtype="bf16", state_dtype="fp32") -> MixingCost:
    """FLOPs and cache/state bytes of the mixing layers for one sequence of `context` tokens.

    Attention layer: 4 d H FLOPs per scored (query, key) pair (QK^T and PV,
    2 FLOPs per multiply-add); prefill scores `attention.attended_pairs`
    pairs, a decode step min(context, w). KV cache: 2 (K and V) x kept tokens x
    H_kv x d x bytes. Mamba-2 layer: per token, 5 FLOPs per state element
    (`SSM_FLOPS_PER_STATE`) over d_inner x N elements plus a depthwise
    convolution of `conv_kernel` taps (2 FLOPs each) over the conv channels;
    state: d_inner x N in `state_dtype` (float32 in Nemotron 3 Nano's config,
    mamba_ssm_cache_dtype) plus (conv_kernel - 1) inputs per conv channel,
    kept in `kv_dtype` (the activation dtype): what the convolution needs, as
    an engine such as vLLM keeps it. transformers' cache keeps conv_kernel
    inputs per channel (one more); `ModelConfig.kv_cache_bytes` counts that layout.
    """
    if not isinstance(config, HybridConfig):
        raise TypeError(f"config must be a HybridConfig, got {type(config).__name__}")
    context = positive_int("context", context)
    if phase not in ("prefill", "decode"):
        raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")
    if window is not None:
        window = positive_int("window", window)
    kv_bytes = dtype_bytes("kv_dtype", kv_dtype)
    state_bytes = dtype_bytes("state_dtype", state_dtype)

    kept = context if window is None else min(context, window)
    pairs = attended_pairs(context, causal=True, window=window) if phase == "prefill" else kept
    tokens = context if phase == "prefill" else 1
    per_attention_layer = 4 * config.head_dim * config.n_heads * pairs
    per_ssm_layer = tokens * (SSM_FLOPS_PER_STATE * config.ssm_inner * config.ssm_state
                              + 2 * config.conv_kernel * config.conv_channels)
    kv_per_layer = 2 * kept * config.n_kv_heads * config.head_dim * kv_bytes
    state_per_layer = (config.ssm_inner * config.ssm_state * state_bytes
                       + (config.conv_kernel - 1) * config.conv_channels * kv_bytes)
    return MixingCost(
        context=context, phase=phase,
        attention_flops=float(config.attention_layers * per_attention_layer),
        ssm_flops=float(config.ssm_layers * per_ssm_layer),
        kv_cache_bytes=float(config.attention_layers * kv_per_layer),
        ssm_state_bytes=float(config.ssm_layers * state_per_layer),
    )


def compare_architectures(config: HybridConfig, context, *, phase: str = "prefill", window=None,
                          kv_dtype="bf16", state_dtype="fp32") -> dict[str, MixingCost]:
    """Pure attention, pure SSM and the hybrid mix of `config`, with the same number of mixing layers.

    With `window`, a fourth entry: every mixing layer sliding-window attention.
    """
    if not isinstance(config, HybridConfig):
        raise TypeError(f"config must be a HybridConfig, got {type(config).__name__}")
    kw = dict(phase=phase, kv_dtype=kv_dtype, state_dtype=state_dtype)
    stacks = {
        "attention": mixing_cost(config.with_attention_layers(config.mixing_layers), context, **kw),
        "ssm": mixing_cost(config.with_attention_layers(0), context, **kw),
        "hybrid": mixing_cost(config, context, **kw),
    }
    if window is not None:
        stacks["sliding window"] = mixing_cost(config.with_attention_layers(config.mixing_layers), context,
                                               window=window, **kw)
    return stacks


__all__ = [
    "discretize", "selective_scan", "selective_scan_step", "selective_scan_chunked", "segment_sum",
    "SSM_FLOPS_PER_STATE", "SlidingWindowSaving", "sliding_window_saving",
    "HybridConfig", "HYBRID_PRESETS", "PRESET_CONFIGS", "stacks_of", "MixingCost", "mixing_cost",
    "compare_architectures",
]
