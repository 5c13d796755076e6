"""The tiny transformer again, in PyTorch (same weights, same prefill/decode API).

The numpy model in `chapter2.models.transformer` is the readable reference; this twin runs
the same computation with torch ops (and on a GPU if given one), with
attention through `torch.nn.functional.scaled_dot_product_attention` and an
explicit boolean mask. Tests check both against Hugging Face transformers.

    model = load_pretrained_torch(folder)                  # or TorchTransformer.from_numpy(np_model)
    logits, cache = model.prefill(ids)                     # (N, vocab) tensor
    logits, cache = model.decode(token, cache)             # (vocab,) tensor

It keeps its own KV cache of torch tensors (`TorchKVCache`, with the numpy
cache's semantics: positions tracked, sliding-window layers trimmed to the window).
Needs torch (imported here at module level: this module lives in `chapter2.host`, outside the numpy core).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
import torch
import torch.nn.functional as F

from ..models.config import ModelConfig
from ..models.rope import inv_frequencies
from ..models.transformer import DENSE_MLP, SUPPORTED, Transformer, _expert_names, load_pretrained, weight_shapes

__all__ = ["TorchTransformer", "TorchKVCache", "load_pretrained_torch"]


@dataclass
class TorchKVCache:
    """Per-layer cached keys/values (H_kv, T, d), their positions (T,), and tokens seen."""

    k: list[torch.Tensor]
    v: list[torch.Tensor]
    positions: list[torch.Tensor]
    windows: list[int | None]
    length: int = 0

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.k + self.v)

    def __len__(self) -> int:
        return self.length


@dataclass
class TorchTransformer:
    """The twin: `config` plus weights as torch tensors by Hugging Face name."""

    config: ModelConfig
    weights: dict[str, torch.Tensor]
    dtype: torch.dtype = torch.float32
    device: str | torch.device = "cpu"
    inv_freq: torch.Tensor = field(init=False)

    def __post_init__(self):
        if self.config.architecture not in SUPPORTED:
            raise ValueError(f"config.architecture must be one of {', '.join(SUPPORTED)}, "
                             f"got {self.config.architecture!r}")
        shapes = weight_shapes(self.config)
        missing = [n for n in shapes if n not in self.weights]
        if missing:
            raise ValueError(f"weights are missing {len(missing)} tensors, e.g. {missing[:3]}")
        self.weights = {n: _tensor(self.weights[n]).to(self.device, self.dtype) for n in shapes}
        c = self.config
        inv_freq = inv_frequencies(c.head_dim, c.rope_theta, c.rope_scaling)  # (d/2,) float64, shared with numpy
        self.inv_freq = torch.tensor(inv_freq, dtype=torch.float64, device=self.device)

    @classmethod
    def from_numpy(cls, model: Transformer, *, dtype=torch.float32, device="cpu") -> TorchTransformer:
        if not isinstance(model, Transformer):
            raise TypeError(f"model must be a numpy Transformer, got {type(model).__name__}")
        return cls(model.config, dict(model.weights), dtype, device)

    # -- inference API -------------------------------------------------------------

    def new_cache(self) -> TorchKVCache:
        c = self.config
        empty = torch.zeros(c.num_key_value_heads, 0, c.head_dim, dtype=self.dtype, device=self.device)
        n = c.num_hidden_layers
        return TorchKVCache([empty] * n, [empty] * n, [torch.zeros(0, dtype=torch.long, device=self.device)] * n,
                            [c.window_of(i) for i in range(n)])

    @torch.no_grad()
    def prefill(self, ids) -> tuple[torch.Tensor, TorchKVCache]:
        """Logits (N, vocab) for the prompt `ids` and a new cache holding it."""
        cache = self.new_cache()
        return self.forward(self._ids(ids), cache), cache

    @torch.no_grad()
    def decode(self, token: int, cache: TorchKVCache) -> tuple[torch.Tensor, TorchKVCache]:
        """Logits (vocab,) after `token`; `cache` is updated in place and returned."""
        if isinstance(token, bool) or not isinstance(token, Integral | np.integer):
            raise TypeError(f"token must be an integer token id, got {token!r}")
        if not isinstance(cache, TorchKVCache):
            raise TypeError(f"cache must be a TorchKVCache, got {type(cache).__name__}")
        return self.forward(self._ids([int(token)]), cache)[0], cache

    @torch.no_grad()
    def forward(self, ids: torch.Tensor, cache: TorchKVCache) -> torch.Tensor:
        c, w = self.config, self.weights
        positions = torch.arange(cache.length, cache.length + ids.numel(), device=self.device)  # (N,)
        angle = positions[:, None].double() * self.inv_freq[None, :]  # (N, d/2)
        angle = torch.cat([angle, angle], dim=-1)  # (N, d)
        cos, sin = angle.cos().to(self.dtype), angle.sin().to(self.dtype)
        h = w["model.embed_tokens.weight"][ids]  # (N, D)
        for i in range(c.num_hidden_layers):
            p = f"model.layers.{i}."
            h = h + self._attention(i, self._norm(h, p + "input_layernorm"), positions, cos, sin, cache)
            h = h + self._mlp(i, self._norm(h, p + "post_attention_layernorm"))
        cache.length += ids.numel()
        h = self._norm(h, "model.norm")
        lm_head = w["model.embed_tokens.weight"] if c.tie_word_embeddings else w["lm_head.weight"]
        return h @ lm_head.T  # (N, vocab)

    # -- blocks ----------------------------------------------------------------------

    def _norm(self, x, name):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.config.rms_norm_eps) * self.weights[name + ".weight"]

    def _linear(self, x, name):
        return F.linear(x, self.weights[name + ".weight"], self.weights.get(name + ".bias"))

    def _attention(self, i, x, positions, cos, sin, cache):
        c, p = self.config, f"model.layers.{i}.self_attn."
        n, d = x.shape[0], c.head_dim
        q = self._linear(x, p + "q_proj").view(n, c.num_attention_heads, d).transpose(0, 1)  # (H_q, N, d)
        k = self._linear(x, p + "k_proj").view(n, c.num_key_value_heads, d).transpose(0, 1)  # (H_kv, N, d)
        v = self._linear(x, p + "v_proj").view(n, c.num_key_value_heads, d).transpose(0, 1)  # (H_kv, N, d)
        if c.qk_norm:
            q, k = self._norm(q, p + "q_norm"), self._norm(k, p + "k_norm")
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        k_all = torch.cat([cache.k[i], k], dim=1)  # (H_kv, T, d)
        v_all = torch.cat([cache.v[i], v], dim=1)
        pos_all = torch.cat([cache.positions[i], positions])  # (T,)
        window = cache.windows[i]
        keep = slice(None) if window is None else slice(-window, None)
        cache.k[i], cache.v[i], cache.positions[i] = k_all[:, keep], v_all[:, keep], pos_all[keep]
        mask = pos_all[None, :] <= positions[:, None]  # (N, T)
        if window is not None:
            mask &= pos_all[None, :] > positions[:, None] - window
        group = c.num_attention_heads // c.num_key_value_heads
        k_rep = k_all.repeat_interleave(group, dim=0)  # (H_q, T, d): head h reads K/V head h // group
        v_rep = v_all.repeat_interleave(group, dim=0)
        out = F.scaled_dot_product_attention(q[None], k_rep[None], v_rep[None], attn_mask=mask)[0]  # (H_q, N, d)
        return self._linear(out.transpose(0, 1).reshape(n, c.num_attention_heads * d), p + "o_proj")

    def _swiglu(self, x, gate, up, down):
        """down(silu(gate x) * up x) for the linear layers named gate, up, down (biases if present)."""
        return self._linear(F.silu(self._linear(x, gate)) * self._linear(x, up), down)

    def _mlp(self, i, x):
        c, p = self.config, f"model.layers.{i}."
        if i not in c.moe_layers:
            return self._swiglu(x, *(p + "mlp." + n for n in DENSE_MLP))
        router, prefix, (gate, up, down) = _expert_names(c, p)
        logits = F.linear(x, self.weights[router])  # (N, E)
        probs = torch.softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
        weights, chosen = torch.topk(probs, c.experts_per_tok_of(i), dim=-1)  # (N, k)
        if c.norm_topk_prob:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e in range(c.num_experts):
            rows, slot = torch.nonzero(chosen == e, as_tuple=True)
            if rows.numel():
                y = self._swiglu(x[rows], f"{prefix}{e}.{gate}", f"{prefix}{e}.{up}", f"{prefix}{e}.{down}")
                out.index_add_(0, rows, weights[rows, slot, None].to(x.dtype) * y)
        return out

    def _ids(self, ids) -> torch.Tensor:
        arr = torch.as_tensor(np.asarray(ids) if not torch.is_tensor(ids) else ids)
        if arr.ndim != 1 or arr.numel() == 0 or arr.dtype.is_floating_point:
            raise ValueError(f"ids must be a non-empty 1-D sequence of integer token ids, "
                             f"got shape {tuple(arr.shape)} {arr.dtype}")
        if arr.min() < 0 or arr.max() >= self.config.vocab_size:
            raise ValueError(f"ids must be in [0, {self.config.vocab_size})")
        return arr.long().to(self.device)


def _tensor(value) -> torch.Tensor:
    return value if torch.is_tensor(value) else torch.as_tensor(np.asarray(value))


def _rope(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


def load_pretrained_torch(folder, *, dtype=torch.float32, device="cpu") -> TorchTransformer:
    """Load a Hugging Face checkpoint folder (via the numpy reader) into the torch twin."""
    return TorchTransformer.from_numpy(load_pretrained(folder, dtype=np.float64 if dtype == torch.float64 else np.float32),
                                       dtype=dtype, device=device)
