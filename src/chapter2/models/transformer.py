"""A tiny decoder-only transformer in numpy (chapter sections 2.2.1 to 2.2.4).

The same computation as Hugging Face's LlamaForCausalLM, MistralForCausalLM,
Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM and
MixtralForCausalLM, written out so each step can be read:

    ids --embed--> h                                   (N, D)
    for each block:
        h = h + attention(rms_norm(h))                 GQA, RoPE, causal mask, KV cache
        h = h + mlp(rms_norm(h))                       SwiGLU, or a mixture of SwiGLU experts
    logits = rms_norm(h) @ lm_head.T                   (N, vocab)

The blocks are the package's one implementation of each: attention is
`chapter2.attention.attention` (masked by position), the cache is
`chapter2.kv_cache.KVCache` (rolling buffers for sliding-window layers), the
mixture of experts is `chapter2.moe.moe_forward` (router `chapter2.moe.route`).

Inference API (one sequence, no batch axis):

    logits, cache = model.prefill(prompt_ids)         # (N, vocab), a KVCache holding N tokens
    logits, cache = model.decode(token, cache)        # (vocab,), cache grown by one
    out = generate(model, prompt_ids, max_tokens=20, stop_ids=(eos,))

`load_pretrained(folder)` reads a Hugging Face checkpoint (config.json and
model.safetensors with the hub's parameter names) with numpy alone, so it
also runs in the browser. Computation is in float32 by default (float64 on
request); the tests compare it with transformers to 1e-4.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from pathlib import Path

import numpy as np

from .._checks import finite_real, float_array, positive_int
from .._checks import path as _path
from ..activations import silu
from ..attention import attention
from ..kv_cache import KVCache
from ..moe import moe_forward
from .config import ModelConfig
from .rope import apply_rope, rope_cos_sin
from .safetensors_reader import load_checkpoint

__all__ = ["Transformer", "Generation", "load_pretrained", "generate", "weight_shapes", "random_weights", "rms_norm"]

DENSE_MLP = ("gate_proj", "up_proj", "down_proj")  # Hugging Face names of the SwiGLU projections
SUPPORTED = ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
             "Qwen3MoeForCausalLM", "MixtralForCausalLM")


# -----------------------------------------------------------------------------
# building blocks (pure functions)


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """x / sqrt(mean(x^2) + eps) * weight over the last axis (Zhang & Sennrich 2019, arXiv:1910.07467)."""
    x, weight, eps = float_array("x", x), float_array("weight", weight), finite_real("eps", eps, low=0)
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


# -----------------------------------------------------------------------------
# parameter names and shapes (the Hugging Face hub layout)


def weight_shapes(config: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter of the checkpoint, by its Hugging Face name, with its shape.

    Linear weights are (out_features, in_features), as nn.Linear stores them.
    """
    _check_supported(config)
    c = config
    d_model, d_head, h_q, h_kv = c.hidden_size, c.head_dim, c.num_attention_heads, c.num_key_value_heads
    shapes = {"model.embed_tokens.weight": (c.vocab_size, d_model)}
    for i in range(c.num_hidden_layers):
        p = f"model.layers.{i}."
        shapes[p + "input_layernorm.weight"] = (d_model,)
        shapes[p + "self_attn.q_proj.weight"] = (h_q * d_head, d_model)
        shapes[p + "self_attn.k_proj.weight"] = (h_kv * d_head, d_model)
        shapes[p + "self_attn.v_proj.weight"] = (h_kv * d_head, d_model)
        shapes[p + "self_attn.o_proj.weight"] = (d_model, h_q * d_head)
        if c.qkv_bias:
            shapes[p + "self_attn.q_proj.bias"] = (h_q * d_head,)
            shapes[p + "self_attn.k_proj.bias"] = (h_kv * d_head,)
            shapes[p + "self_attn.v_proj.bias"] = (h_kv * d_head,)
        if c.o_bias:
            shapes[p + "self_attn.o_proj.bias"] = (d_model,)
        if c.qk_norm:
            shapes[p + "self_attn.q_norm.weight"] = (d_head,)
            shapes[p + "self_attn.k_norm.weight"] = (d_head,)
        shapes[p + "post_attention_layernorm.weight"] = (d_model,)
        if i in c.moe_layers:
            shapes.update(_moe_shapes(c, p))
        else:
            shapes.update(_mlp_shapes(p + "mlp.", DENSE_MLP, d_model, c.intermediate_size, c.mlp_bias))
    shapes["model.norm.weight"] = (d_model,)
    if not c.tie_word_embeddings:
        shapes["lm_head.weight"] = (c.vocab_size, d_model)
    return shapes


def _mlp_shapes(prefix: str, names: tuple[str, str, str], d_model: int, width: int, bias: bool) -> dict:
    gate, up, down = names
    shapes = {f"{prefix}{gate}.weight": (width, d_model), f"{prefix}{up}.weight": (width, d_model),
              f"{prefix}{down}.weight": (d_model, width)}
    if bias:
        shapes.update({f"{prefix}{gate}.bias": (width,), f"{prefix}{up}.bias": (width,), f"{prefix}{down}.bias": (d_model,)})
    return shapes


def _expert_names(config: ModelConfig, layer_prefix: str) -> tuple[str, str, tuple[str, str, str]]:
    """(router name, expert prefix, (gate, up, down) names) of an MoE layer."""
    if config.family == "Mixtral":  # Mixtral's original names: w1 = gate, w3 = up, w2 = down
        return layer_prefix + "block_sparse_moe.gate.weight", layer_prefix + "block_sparse_moe.experts.", ("w1", "w3", "w2")
    return layer_prefix + "mlp.gate.weight", layer_prefix + "mlp.experts.", ("gate_proj", "up_proj", "down_proj")


def _moe_shapes(c: ModelConfig, layer_prefix: str) -> dict:
    router, experts, names = _expert_names(c, layer_prefix)
    shapes = {router: (c.num_experts, c.hidden_size)}
    for e in range(c.num_experts):
        shapes.update(_mlp_shapes(f"{experts}{e}.", names, c.hidden_size, c.moe_intermediate_size, bias=False))
    return shapes


def random_weights(config: ModelConfig, *, seed: int = 0, std: float = 0.02, dtype=np.float32) -> dict[str, np.ndarray]:
    """Random weights for `config` (normal(0, std); norm weights 1 + normal(0, std)), for tiny demos.

    Deterministic for a given seed. Mind the size: a real config would need
    `config.params().total` numbers.
    """
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in weight_shapes(config).items():
        w = rng.normal(0.0, std, size=shape)
        if name.endswith("norm.weight"):
            w += 1.0
        out[name] = w.astype(dtype)
    return out


# -----------------------------------------------------------------------------
# the model


@dataclass(frozen=True)
class Generation:
    """What `generate` returns: the new token ids and why it stopped ("stop" or "length")."""

    tokens: list[int]
    finish_reason: str


class Transformer:
    """The numpy model: `config` (a ModelConfig) plus weights by Hugging Face name.

    Weights are cast to `dtype` (float32 or float64) once, at construction.
    """

    def __init__(self, config: ModelConfig, weights: dict, dtype=np.float32):
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}")
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype}")
        self.config = config
        self.weights = _check_weights(config, weights, self.dtype)
        self._rope_check()

    def _rope_check(self):
        rope_cos_sin(np.arange(1), self.config.head_dim, self.config.rope_theta, self.config.rope_scaling)

    def __repr__(self) -> str:
        c = self.config
        return (f"Transformer({c.architecture}, layers={c.num_hidden_layers}, hidden={c.hidden_size}, "
                f"heads={c.num_attention_heads}/{c.num_key_value_heads}, vocab={c.vocab_size}, dtype={self.dtype})")

    # -- inference API -----------------------------------------------------------

    def new_cache(self, max_seq_len: int | None = None) -> KVCache:
        """An empty cache for one sequence: every layer's K/V heads, rolling for sliding-window layers.

        `max_seq_len` positions are preallocated; None grows the cache as tokens arrive.
        """
        c = self.config
        windows = [c.window_of(i) for i in range(c.num_hidden_layers)]
        return KVCache(c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim, max_seq_len,
                       dtype=self.dtype, windows=windows)

    def prefill(self, ids, *, max_seq_len: int | None = None) -> tuple[np.ndarray, KVCache]:
        """Run the prompt `ids` (1-D ints) in parallel: (logits (N, vocab), a new KV cache of N tokens).

        `max_seq_len`: positions to preallocate in the cache (the prompt plus
        the tokens to decode); None lets the cache grow as it goes.
        """
        ids = self._check_ids(ids)
        cache = self.new_cache(max_seq_len)
        return self.forward(ids, cache), cache

    def decode(self, token: int, cache: KVCache) -> tuple[np.ndarray, KVCache]:
        """One decode step: logits (vocab,) for the token after `token`, and `cache` grown by one.

        The cache is updated in place and returned (use `cache.copy()` to branch).
        """
        if isinstance(token, bool) or not isinstance(token, Integral | np.integer):
            raise TypeError(f"token must be an integer token id, got {token!r}")
        self._check_cache(cache)
        ids = self._check_ids([int(token)])
        return self.forward(ids, cache)[0], cache

    # --8<-- [start:transformer_forward]
    def forward(self, ids: np.ndarray, cache: KVCache) -> np.ndarray:
        """Append the tokens `ids` (N,) after the `cache.seq_len` tokens in `cache`; return logits (N, vocab).

        `prefill` is `forward` on an empty cache; `decode` is `forward` of one token.
        """
        ids = self._check_ids(ids)
        self._check_cache(cache)
        c, w = self.config, self.weights
        positions = np.arange(cache.seq_len, cache.seq_len + len(ids), dtype=np.int64)  # (N,)
        cos, sin = rope_cos_sin(positions, c.head_dim, c.rope_theta, c.rope_scaling, self.dtype)  # (N, d)
        h = w["model.embed_tokens.weight"][ids]  # (N, D)
        for i in range(c.num_hidden_layers):
            p = f"model.layers.{i}."
            x = rms_norm(h, w[p + "input_layernorm.weight"], c.rms_norm_eps)
            h = h + self._attention(i, x, positions, cos, sin, cache)
            x = rms_norm(h, w[p + "post_attention_layernorm.weight"], c.rms_norm_eps)
            h = h + self._mlp(i, x)
        h = rms_norm(h, w["model.norm.weight"], c.rms_norm_eps)
        lm_head = w["model.embed_tokens.weight"] if c.tie_word_embeddings else w["lm_head.weight"]
        return h @ lm_head.T  # (N, vocab)
    # --8<-- [end:transformer_forward]

    # -- blocks ------------------------------------------------------------------

    def _linear(self, x, name):
        y = x @ self.weights[name + ".weight"].T
        bias = self.weights.get(name + ".bias")
        return y if bias is None else y + bias

    def _attention(self, i, x, positions, cos, sin, cache):
        c, p = self.config, f"model.layers.{i}.self_attn."
        n, d = x.shape[0], c.head_dim
        q = self._linear(x, p + "q_proj").reshape(n, c.num_attention_heads, d).transpose(1, 0, 2)  # (H_q, N, d)
        k = self._linear(x, p + "k_proj").reshape(n, c.num_key_value_heads, d).transpose(1, 0, 2)  # (H_kv, N, d)
        v = self._linear(x, p + "v_proj").reshape(n, c.num_key_value_heads, d).transpose(1, 0, 2)  # (H_kv, N, d)
        if c.qk_norm:  # Qwen3: RMSNorm over each head's d features, before RoPE
            q = rms_norm(q, self.weights[p + "q_norm.weight"], c.rms_norm_eps)
            k = rms_norm(k, self.weights[p + "k_norm.weight"], c.rms_norm_eps)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        k_all, v_all, k_positions = cache.append(i, k[None], v[None], return_positions=True)  # (1, H_kv, T, d)
        out = attention(q[None], k_all, v_all, causal=True, window=c.window_of(i),
                        q_positions=positions, k_positions=k_positions)[0]  # (H_q, N, d)
        out = out.transpose(1, 0, 2).reshape(n, c.num_attention_heads * d)  # (N, H_q*d)
        return self._linear(out, p + "o_proj")

    def _mlp(self, i, x):
        c, p = self.config, f"model.layers.{i}."
        if i not in c.moe_layers:  # down(silu(gate x) * up x), with biases if mlp_bias
            gate, up, down = (p + "mlp." + n for n in DENSE_MLP)
            return self._linear(silu(self._linear(x, gate)) * self._linear(x, up), down)
        router, prefix, (gate, up, down) = _expert_names(c, p)
        w = self.weights
        w_gate, w_up, w_down = ([w[f"{prefix}{e}.{name}.weight"] for e in range(c.num_experts)] for name in (gate, up, down))
        return moe_forward(x, w[router], w_gate, w_up, w_down, k=c.experts_per_tok_of(i),
                           normalize=bool(c.norm_topk_prob), dtype=self.dtype)

    def _check_cache(self, cache) -> None:
        c = self.config
        if not isinstance(cache, KVCache):
            raise TypeError(f"cache must be the KVCache returned by prefill or new_cache, got {type(cache).__name__}")
        if (cache.n_layers, cache.batch_size, cache.n_kv_heads, cache.head_dim, cache.v_head_dim, cache.dtype) != (
                c.num_hidden_layers, 1, c.num_key_value_heads, c.head_dim, c.head_dim, self.dtype):
            raise ValueError(f"cache must be a KVCache of this model (from prefill or new_cache), got {cache!r}")

    def _check_ids(self, ids) -> np.ndarray:
        arr = np.asarray(ids)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"ids must be a non-empty 1-D sequence of token ids, got shape {arr.shape}")
        if not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
        if arr.min() < 0 or arr.max() >= self.config.vocab_size:
            raise ValueError(f"ids must be in [0, {self.config.vocab_size}), got min {arr.min()} max {arr.max()}")
        return arr.astype(np.int64)


# -----------------------------------------------------------------------------
# loading and generating


def _check_supported(config: ModelConfig) -> None:
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a chapter2.models.ModelConfig, got {type(config).__name__}")
    if config.architecture not in SUPPORTED:
        raise ValueError(f"config.architecture must be one of {', '.join(SUPPORTED)} for the tiny transformer, "
                         f"got {config.architecture!r} (parameter and KV-cache arithmetic still works on its ModelConfig)")
    if config.raw.get("hidden_act", "silu") != "silu":
        raise ValueError(f"config hidden_act must be 'silu' (SwiGLU), got {config.raw.get('hidden_act')!r}")


def _check_weights(config: ModelConfig, weights: dict, dtype) -> dict[str, np.ndarray]:
    if not isinstance(weights, dict):
        raise TypeError(f"weights must be a dict of name -> array, got {type(weights).__name__}")
    expected = weight_shapes(config)
    missing = [n for n in expected if n not in weights]
    if missing:
        raise ValueError(f"weights are missing {len(missing)} tensors for {config.architecture}, e.g. {missing[:3]}")
    extra = [n for n in weights if n not in expected and not (n == "lm_head.weight" and config.tie_word_embeddings)]
    if extra:
        raise ValueError(f"weights hold {len(extra)} tensors this model does not use, e.g. {extra[:3]}")
    out = {}
    for name, shape in expected.items():
        arr = np.asarray(weights[name])
        if arr.shape != shape:
            raise ValueError(f"weights[{name!r}] must have shape {shape}, got {arr.shape}")
        out[name] = arr.astype(dtype)
    return out


def load_pretrained(folder, *, dtype=np.float32) -> Transformer:
    """Load a Hugging Face checkpoint folder (config.json + model.safetensors or a sharded index).

    Weights stored as F32, F16 or BF16 are read exactly and cast to `dtype`.
    """
    folder = Path(_path("folder", folder))
    if not folder.is_dir():
        raise ValueError(f"folder must be a checkpoint directory, got {str(folder)!r}")
    config = ModelConfig.from_json(folder / "config.json", name=folder.name)
    _check_supported(config)
    return Transformer(config, load_checkpoint(folder), dtype=dtype)


# --8<-- [start:generate]
def generate(model: Transformer, prompt_ids, *, max_tokens: int, stop_ids=(), temperature: float = 0.0,
             top_k=None, top_p: float = 1.0, logit_bias=None, rng=None) -> Generation:
    """Prefill the prompt, then decode one token at a time until a stop token or `max_tokens`.

    Sampling is `chapter2.sampling.sample` (logit bias, temperature, top-k,
    top-p; temperature 0 is greedy). The stop token, if hit, is the last entry
    of `tokens` and `finish_reason` is "stop"; otherwise it is "length".
    `rng` is a numpy Generator (a fresh unseeded one if None).
    """
    from ..sampling import sample

    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a Transformer, got {type(model).__name__}")
    max_tokens = positive_int("max_tokens", max_tokens)
    try:
        stop = {int(s) for s in stop_ids}
    except (TypeError, ValueError):
        raise TypeError(f"stop_ids must be an iterable of token ids, got {stop_ids!r}") from None
    rng = np.random.default_rng() if rng is None else rng
    logits, cache = model.prefill(prompt_ids, max_seq_len=np.size(prompt_ids) + max_tokens)  # all it will hold
    logits = logits[-1]
    tokens: list[int] = []
    while True:
        token = int(sample(logits, temperature=temperature, top_k=top_k, top_p=top_p, logit_bias=logit_bias, rng=rng))
        tokens.append(token)
        if token in stop:
            return Generation(tokens, "stop")
        if len(tokens) == max_tokens:
            return Generation(tokens, "length")
        logits, cache = model.decode(token, cache)
# --8<-- [end:generate]
