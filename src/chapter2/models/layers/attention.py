"""Attention layers (sections 2.2.2 and 2.2.3): which tokens a layer sees, its weights, its KV cache and FLOPs.

A layer's kind (transformers' `layer_types`) says which earlier tokens a token attends to, and so which keys
and values the layer keeps: all of them (`FullAttention`), the last `window` (`SlidingAttention`), or those of
its own chunk (`ChunkedAttention`, Llama 4). Its form says what one key and value cost:
`GroupedQueryAttention` (multi-head, grouped-query and multi-query attention) here, `LatentAttention`
(DeepSeek's MLA) in `mla.py`. `AttentionLayers` is the part of a model that holds the attention layers of one
kind: form x kind x how many.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..part import KVGroup, Part, whole
from . import LayerKind

__all__ = ["AttentionKind", "FullAttention", "SlidingAttention", "ChunkedAttention", "GroupedQueryAttention",
           "AttentionLayers", "ATTENTION_KINDS"]


class AttentionKind(LayerKind):
    """A layer that attends: the tokens it holds in its cache, and the keys one token sees.

    Full attention holds and sees every token; a window (`window` not None) caps both at `window` tokens,
    the newest token included, as transformers counts it.
    """

    @staticmethod
    def tokens_held(context: int, window: int | None) -> int:
        """Tokens the layer keeps for a sequence of `context` tokens (a rolling buffer of `window`)."""
        return context if window is None else min(context, window)

    @staticmethod
    def attended_keys(context: int, window: int | None) -> int:
        """Keys the newest of `context` tokens attends to, itself included."""
        return context if window is None else min(context, window)

    @staticmethod
    def prefill_keys(prompt_tokens: int, window: int | None) -> int:
        """sum over positions 1..P of `attended_keys`: P(P+1)/2 up to the window, then w(w+1)/2 + (P - w) w."""
        P, w = prompt_tokens, window
        if w is None or P <= w:
            return P * (P + 1) // 2
        return w * (w + 1) // 2 + (P - w) * w


class FullAttention(AttentionKind):
    name = "full_attention"
    label = "full attention"


class SlidingAttention(AttentionKind):
    name = "sliding_attention"
    label = "sliding window"


class ChunkedAttention(AttentionKind):
    """Llama 4's chunked attention: a token sees the tokens of its own chunk of `window` so far. transformers'
    cache treats the layer like a window of the chunk size and keeps min(context, chunk): what must be reserved
    per sequence, since a sequence passes through chunk ends (vLLM frees finished chunks and holds fewer)."""

    name = "chunked_attention"
    label = "chunked attention"

    @staticmethod
    def attended_keys(context: int, window: int | None) -> int:
        return context if window is None else (context - 1) % window + 1

    @staticmethod
    def prefill_keys(prompt_tokens: int, window: int | None) -> int:
        """q c(c+1)/2 + r(r+1)/2 for P = q c + r."""
        if window is None:
            return prompt_tokens * (prompt_tokens + 1) // 2
        q, r = divmod(prompt_tokens, window)
        return q * window * (window + 1) // 2 + r * (r + 1) // 2


ATTENTION_KINDS = (FullAttention, SlidingAttention, ChunkedAttention)


@dataclass(frozen=True)
class GroupedQueryAttention:
    """One attention layer's weights: query heads, K/V heads shared by groups of them (grouped-query attention;
    as many as the query heads: multi-head; one: multi-query), each `head_dim` wide.

    q, k, v, o projections (q twice as wide with `output_gate`: Qwen3-Next's sigmoid gate on the output);
    biases on q, k, v (`qkv_bias`) and o (`o_bias`); RMSNorms on q and k (`qk_norm`; their weights span all
    heads with `qk_norm_all_heads`, else one head_dim each); one learned sink logit per query head (`sinks`).
    It caches one key and one value vector per K/V head and token: 2 x kv_heads x head_dim numbers.
    """

    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    qk_norm_all_heads: bool = False
    output_gate: bool = False
    sinks: bool = False

    def weights(self) -> tuple[int, int]:
        """(weights in matmuls, other weights: norms, biases, sinks) of one layer."""
        h, n_q, n_kv, d = self.hidden, self.heads, self.kv_heads, self.head_dim
        q_out = n_q * d * (2 if self.output_gate else 1)
        matmul = h * q_out + 2 * h * n_kv * d + n_q * d * h  # q, k, v, o projections
        if not self.qk_norm:
            norms = 0
        else:
            norms = (n_q + n_kv) * d if self.qk_norm_all_heads else 2 * d
        biases = (q_out + 2 * n_kv * d if self.qkv_bias else 0) + (h if self.o_bias else 0)
        return matmul, norms + biases + (n_q if self.sinks else 0)

    def kv_projection(self) -> tuple[int, int]:
        """(matmul, other) weights of the k and v projections (and k's norm): what a layer that reads an earlier
        layer's keys and values (Gemma 3n's KV sharing) does not have."""
        h, n_kv, d = self.hidden, self.kv_heads, self.head_dim
        norm = (n_kv * d if self.qk_norm_all_heads else d) if self.qk_norm else 0
        return 2 * h * n_kv * d, norm + (2 * n_kv * d if self.qkv_bias else 0)

    def kv_per_layer(self, mla: str) -> int:
        """Numbers one layer caches per token: a key and a value per K/V head."""
        return 2 * self.kv_heads * self.head_dim

    def flops_per_key(self, mla: str) -> int:
        """FLOPs one query token spends per cached key (all heads): 2 d for the score q.k, 2 d for p v."""
        return 2 * self.heads * (self.head_dim + self.head_dim)

    def cache_kind(self, kind: str, mla: str) -> str:
        """The name of this form's cache in `kv_cache_breakdown`: the layer's kind."""
        return kind


@dataclass(frozen=True)
class AttentionLayers(Part):
    """The attention layers of one kind: `layers` of them, `shared` of which read an earlier layer's keys and
    values (no k and v projections, no cache of their own), each seeing `window` tokens (None: all)."""

    form: GroupedQueryAttention
    kind: type[AttentionKind]
    layers: int
    window: int | None = None
    shared: int = 0
    label = "attention"

    @property
    def total(self) -> int:
        return self.layers * sum(self.form.weights()) - self.shared * sum(self.form.kv_projection())

    @property
    def matmul(self) -> int:
        return self.layers * self.form.weights()[0] - self.shared * self.form.kv_projection()[0]

    @property
    def cached(self) -> int:
        """Layers that keep keys and values of their own."""
        return self.layers - self.shared

    def kv_per_token(self, mla: str) -> int:
        return self.cached * self.form.kv_per_layer(mla)

    def kv_numbers(self, context: int, mla: str) -> int:
        return self.cached * self.form.kv_per_layer(mla) * self.kind.tokens_held(context, self.window)

    def kv_groups(self, context: int, per_element, per_state, mla: str) -> tuple[KVGroup, ...]:
        if not self.cached:
            return ()
        per_layer, tokens = self.form.kv_per_layer(mla), self.kind.tokens_held(context, self.window)
        return (KVGroup(self.form.cache_kind(self.kind.name, mla), self.cached, self.window, per_layer, tokens,
                        whole(self.cached * per_layer * tokens * per_element)),)

    def attention_flops(self, context: int, mla: str) -> int:
        return self.form.flops_per_key(mla) * self.layers * self.kind.attended_keys(context, self.window)

    def prefill_attention_flops(self, prompt_tokens: int, mla: str) -> int:
        return self.form.flops_per_key(mla) * self.layers * self.kind.prefill_keys(prompt_tokens, self.window)
