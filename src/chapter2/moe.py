"""Mixture of experts: top-k routing, and why it saves compute more than memory (chapter section 2.2.4).

An MoE layer replaces the feed-forward network with `E` expert FFNs and a
router. For each token the router scores all experts (a linear layer, then a
softmax), keeps the `k` best and mixes their outputs with the kept weights,
optionally renormalized to sum to 1 (`norm_topk_prob=True` in Qwen3-MoE's
config; Mixtral always renormalizes). One token therefore does the FLOPs of
`k` experts, not `E`.

Memory is another story. In a decode step every token of the batch picks its
own `k` experts, and the GPU must load the weights of every expert that *any*
token picked. With uniform routing, each token picks a uniformly random set of
`k` distinct experts out of `E`. One expert is missed by one token with
probability C(E-1, k) / C(E, k) = (E - k) / E = 1 - k/E; tokens route
independently, so it is missed by all `T` tokens with probability
(1 - k/E)^T, and by linearity of expectation

    E[experts touched] = E * (1 - (1 - k/E)^T)

which is `k` for one token and tends to `E` as the batch grows. For
Qwen3-235B-A22B (`k = 8` of `E = 128`) a batch of about 72 tokens already
touches 99 % of the experts of a layer on average: the step loads nearly all
expert weights while each token still does only 8/128 of the expert FLOPs.
Skewed (popular-expert) routing touches fewer experts; `simulate_experts_touched`
measures it. Spreading experts over GPUs (expert parallelism) is what divides
the weight traffic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._checks import dtype_bytes, finite_real, float_array, positive_int
from .activations import softmax, swiglu

__all__ = [
    "MoeSpec", "Routing", "route", "moe_forward",
    "expected_experts_touched", "tokens_for_coverage", "zipf_popularity", "simulate_experts_touched",
    "MoeDecodeStep", "moe_decode_step",
]


# -----------------------------------------------------------------------------
# published configurations


@dataclass(frozen=True)
class MoeSpec:
    """The MoE part of a model's config.json. Experts are SwiGLU FFNs (gate, up, down projections)."""

    name: str
    n_experts: int  # num_experts / num_local_experts
    k: int  # num_experts_per_tok
    n_layers: int  # MoE layers (num_hidden_layers when every layer is MoE)
    hidden_size: int
    expert_intermediate_size: int  # moe_intermediate_size / intermediate_size
    norm_topk_prob: bool
    source: str

    @classmethod
    def from_config(cls, config, name: str | None = None) -> MoeSpec:
        """The MoE part of a `chapter2.models.ModelConfig` (a view: the numbers stay in the shipped config.json;
        read by attribute, so this module imports no model reader)."""
        if not getattr(config, "is_moe", False):
            raise ValueError(f"config must be a mixture-of-experts ModelConfig, got "
                             f"{getattr(config, 'name', type(config).__name__)!r} (no MoE layer)")
        if not config.mlp_gated:
            raise ValueError(f"config must have gated (SwiGLU) experts as MoeSpec counts them, got {config.name!r} "
                             f"({config.architecture}: up and down projections only)")
        if config.experts_per_tok_by_layer:
            raise ValueError(f"config must route the same k in every MoE layer as MoeSpec counts it, got {config.name!r} "
                             f"(k per layer: {list(config.experts_per_tok_by_layer)})")
        return cls(name or config.name, config.num_experts, config.num_experts_per_tok, len(config.moe_layers),
                   config.hidden_size, config.moe_intermediate_size, config.norm_topk_prob, config.source)

    @property
    def expert_params(self) -> int:
        """Weights of one expert: gate and up (I x D each) plus down (D x I)."""
        return 3 * self.hidden_size * self.expert_intermediate_size

    @property
    def total_expert_params(self) -> int:
        return self.n_experts * self.n_layers * self.expert_params

    @property
    def active_expert_params(self) -> int:
        """Expert weights one token multiplies with (k experts in every MoE layer)."""
        return self.k * self.n_layers * self.expert_params


# The MoE part of two shipped configs, Qwen3-235B-A22B and Mixtral-8x7B, is `chapter2.models.QWEN3_235B_A22B`
# and `chapter2.models.MIXTRAL_8X7B` (views built from their config.json beside `load_config`).


# -----------------------------------------------------------------------------
# routing and the layer


@dataclass(frozen=True)
class Routing:
    """Router decision for T tokens: `experts` (T, k) int64, best first; `weights` (T, k); `probs` (T, E)."""

    experts: np.ndarray
    weights: np.ndarray
    probs: np.ndarray


def _check_k(k, n_experts: int) -> int:
    k = positive_int("k", k)
    if k > n_experts:
        raise ValueError(f"k (experts per token) must be at most the number of experts ({n_experts}), got {k}")
    return k


def route(router_logits, k: int, *, normalize: bool = True, dtype=np.float64) -> Routing:
    """Top-k gating: softmax over all experts, keep the k largest, optionally renormalize.

    router_logits (T, E). Ties go to the lower expert index. normalize=True gives
    Qwen3-MoE with norm_topk_prob=True and Mixtral (their kept weights sum to 1);
    normalize=False keeps the raw softmax probabilities (the default of transformers' Qwen3MoeConfig).
    Computed in `dtype` (float64 here; the numpy transformer passes float32 as transformers does).
    """
    logits = float_array("router_logits", router_logits, ndim=2).astype(dtype)
    if not np.isfinite(logits).all():
        raise ValueError("router_logits must be finite")
    if logits.shape[1] == 0:
        raise ValueError("router_logits must have at least one expert column")
    k = _check_k(k, logits.shape[1])
    if not isinstance(normalize, bool | np.bool_):
        raise TypeError(f"normalize must be True or False, got {normalize!r}")
    probs = softmax(logits)  # (T, E)
    experts = np.argsort(-probs, axis=-1, kind="stable")[:, :k]  # (T, k) best first, lower index on ties
    weights = np.take_along_axis(probs, experts, axis=-1)  # (T, k)
    if normalize:
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return Routing(experts.astype(np.int64), weights, probs)


# --8<-- [start:moe_forward]
def moe_forward(x, router_weight, w_gate, w_up, w_down, *, k: int, normalize: bool = True,
                dtype=np.float64) -> np.ndarray:
    """A sparse MoE block: y_t = sum over the k chosen experts e of weight_{t,e} * FFN_e(x_t).

    x (T, D); router_weight (E, D); w_gate, w_up (E, I, D); w_down (E, D, I) (PyTorch
    Linear layout, out x in), or each of the three a list of E per-expert
    matrices, as a checkpoint stores them (the numpy transformer passes those).
    FFN_e(x) = W_down[e] (silu(W_gate[e] x) * W_up[e] x).
    Each expert runs once on the tokens routed to it (token dispatch), never on all tokens.
    Computed and returned in `dtype` (T, D); the router's softmax in at least float32, as transformers does.
    """
    dtype = _float_dtype(dtype)
    x = float_array("x", x, ndim=2).astype(dtype, copy=False)
    router_weight = float_array("router_weight", router_weight, ndim=2)
    n_tokens, hidden = x.shape
    w_gate, w_up, w_down = _experts("w_gate", w_gate), _experts("w_up", w_up), _experts("w_down", w_down)
    n_experts, inter = len(w_gate), w_gate[0].shape[0]
    if router_weight.shape != (n_experts, hidden):
        raise ValueError(f"router_weight must be (E, D) = {(n_experts, hidden)}, got {router_weight.shape}")
    if len(w_up) != n_experts or any(w.shape != (inter, hidden) for w in (*w_gate, *w_up)):
        raise ValueError(f"w_gate and w_up must both be E = {n_experts} matrices (I, D) with D = {hidden}")
    if len(w_down) != n_experts or any(w.shape != (hidden, inter) for w in w_down):
        raise ValueError(f"w_down must be E = {n_experts} matrices (D, I) = {(hidden, inter)}")
    logits = x @ router_weight.astype(dtype, copy=False).T  # router logits (T, E)
    routing = route(logits, k, normalize=normalize, dtype=np.promote_types(dtype, np.float32))
    out = np.zeros((n_tokens, hidden), dtype=dtype)
    for e in np.unique(routing.experts):  # only experts some token picked are touched
        tokens, slot = np.nonzero(routing.experts == e)  # which tokens chose e, and in which of their k slots
        gate, up, down = (w[e].astype(dtype, copy=False) for w in (w_gate, w_up, w_down))
        ffn = swiglu(x[tokens], gate, up) @ down.T  # (T_e, D)
        out[tokens] += routing.weights[tokens, slot, None].astype(dtype, copy=False) * ffn
    return out
# --8<-- [end:moe_forward]


def _float_dtype(dtype) -> np.dtype:
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be a numpy floating dtype, got {dtype!r}") from None
    if not np.issubdtype(dtype, np.floating):
        raise TypeError(f"dtype must be a numpy floating dtype, got {dtype}")
    return dtype


def _experts(name: str, weights):
    """E expert matrices, from an (E, rows, cols) array or a list of E (rows, cols) arrays (no stacking copy)."""
    if isinstance(weights, list | tuple):
        if not weights:
            raise ValueError(f"{name} must hold at least one expert")
        return [float_array(f"{name}[{e}]", w, ndim=2) for e, w in enumerate(weights)]
    return float_array(name, weights, ndim=3)


# -----------------------------------------------------------------------------
# how many experts a batch touches


def expected_experts_touched(n_experts: int, k: int, n_tokens) -> float:
    """E (1 - (1 - k/E)^T): expected distinct experts one layer loads for T uniformly routed tokens.

    Exact under uniform routing (each token picks k distinct experts uniformly at
    random, independently); derivation in the module docstring. n_tokens may be
    a real number >= 0 (for curves); 0 tokens touch 0 experts.
    """
    n_experts = positive_int("n_experts", n_experts)
    k = _check_k(k, n_experts)
    n_tokens = finite_real("n_tokens", n_tokens, low=0.0)
    if k == n_experts:
        return float(n_experts) if n_tokens > 0 else 0.0
    # (1 - k/E)^T as exp(T log1p(-k/E)), accurate for small k/E and large T
    return n_experts * -math.expm1(n_tokens * math.log1p(-k / n_experts))


def tokens_for_coverage(n_experts: int, k: int, share: float) -> int:
    """Smallest batch T whose expected share of touched experts reaches `share` (0 < share < 1).

    Solves 1 - (1 - k/E)^T >= share: T = ceil(log(1 - share) / log(1 - k/E)).
    """
    n_experts = positive_int("n_experts", n_experts)
    k = _check_k(k, n_experts)
    share = finite_real("share", share, low=0.0, low_open=True)
    if share >= 1.0:
        raise ValueError(f"share must be below 1 (full coverage is only reached in the limit), got {share}")
    if k == n_experts:
        return 1
    t = math.ceil(math.log1p(-share) / math.log1p(-k / n_experts))
    # guard the ceil against rounding at an exact integer solution
    while t > 1 and expected_experts_touched(n_experts, k, t - 1) / n_experts >= share:
        t -= 1
    return max(t, 1)


def zipf_popularity(n_experts: int, exponent: float = 1.0) -> np.ndarray:
    """Skewed expert popularity: p_e proportional to 1 / (e + 1)^exponent, e = 0..E-1 (exponent 0 is uniform)."""
    n_experts = positive_int("n_experts", n_experts)
    exponent = finite_real("exponent", exponent, low=0.0)
    weights = 1.0 / np.arange(1, n_experts + 1, dtype=np.float64) ** exponent
    return weights / weights.sum()


def simulate_experts_touched(n_experts: int, k: int, n_tokens: int, *, popularity=None, trials: int = 100,
                             rng) -> np.ndarray:
    """Route `n_tokens` tokens `trials` times; return the number of distinct experts touched per trial.

    Each token picks k distinct experts: with `popularity` p (E,) (default uniform)
    it samples without replacement proportionally to p, through the Gumbel-top-k
    trick: the k largest of log p_e + Gumbel noise, i.e. a router whose logits
    are log p plus noise. Returns int64 (trials,).
    """
    n_experts = positive_int("n_experts", n_experts)
    k = _check_k(k, n_experts)
    n_tokens = positive_int("n_tokens", n_tokens)
    trials = positive_int("trials", trials)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if popularity is None:
        log_p = np.zeros(n_experts)
    else:
        p = float_array("popularity", popularity, ndim=1)
        if p.shape[0] != n_experts or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
            raise ValueError(f"popularity must be {n_experts} non-negative finite weights with a positive sum")
        if (p > 0).sum() < k:
            raise ValueError(f"popularity must give at least k = {k} experts a positive weight")
        with np.errstate(divide="ignore"):
            log_p = np.log(p / p.sum())
    touched = np.empty(trials, dtype=np.int64)
    for t in range(trials):
        keys = log_p + rng.gumbel(size=(n_tokens, n_experts))  # (T, E) noisy router logits
        chosen = np.argpartition(-keys, k - 1, axis=-1)[:, :k]  # (T, k) top-k per token
        touched[t] = np.count_nonzero(np.bincount(chosen.ravel(), minlength=n_experts))
    return touched


# -----------------------------------------------------------------------------
# compute vs memory in one decode step


@dataclass(frozen=True)
class MoeDecodeStep:
    """Expert weights loaded vs expert FLOPs in one decode step of `n_tokens` tokens (uniform routing).

    experts_touched: expected distinct experts per layer. weight_share_loaded:
    experts_touched / E, the share of expert weights read from memory.
    compute_share: k / E, the share of expert FLOPs each token does compared
    with running every expert. bytes_loaded / flops: expert weights read and
    expert FLOPs (2 per multiply-add) for the whole step, all layers.
    """

    n_experts: int
    k: int
    n_tokens: int
    n_layers: int
    expert_params: int
    dtype_bytes: float
    experts_touched: float
    weight_share_loaded: float
    compute_share: float
    bytes_loaded: float
    flops: float

    @property
    def compute_saving(self) -> float:
        """How many times fewer expert FLOPs than running all E experts: E / k."""
        return 1.0 / self.compute_share

    @property
    def memory_saving(self) -> float:
        """How many times fewer expert weight bytes than loading all E experts: E / experts_touched."""
        return 1.0 / self.weight_share_loaded

    @property
    def ops_per_byte(self) -> float:
        """Arithmetic intensity of the expert matmuls (compare with the GPU's ops:byte ratio)."""
        return self.flops / self.bytes_loaded


def moe_decode_step(n_experts: int, k: int, n_tokens: int, *, expert_params: int, n_layers: int = 1,
                    dtype="bf16") -> MoeDecodeStep:
    """Expert weight traffic vs expert compute for one decode step of a batch of `n_tokens` tokens.

    Bytes: every touched expert's weights are read once per layer,
    experts_touched * expert_params * dtype_bytes * n_layers. FLOPs: each token
    runs k experts, 2 * k * expert_params * n_tokens * n_layers. Uniform routing.
    """
    n_experts = positive_int("n_experts", n_experts)
    k = _check_k(k, n_experts)
    n_tokens = positive_int("n_tokens", n_tokens)
    expert_params = positive_int("expert_params", expert_params)
    n_layers = positive_int("n_layers", n_layers)
    nbytes = dtype_bytes("dtype", dtype)
    touched = expected_experts_touched(n_experts, k, n_tokens)
    return MoeDecodeStep(
        n_experts=n_experts, k=k, n_tokens=n_tokens, n_layers=n_layers, expert_params=expert_params,
        dtype_bytes=nbytes, experts_touched=touched, weight_share_loaded=touched / n_experts,
        compute_share=k / n_experts, bytes_loaded=touched * expert_params * nbytes * n_layers,
        flops=2.0 * k * expert_params * n_tokens * n_layers,
    )
