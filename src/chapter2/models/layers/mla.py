"""Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2; section 2.2.3): keys and values from a cached latent.

DeepSeek-V2 (arXiv:2405.04434, section 2.1): each token's keys and values are compressed into one latent of
`kv_rank` numbers, plus one RoPE key of `rope` numbers shared by all heads; that is what the cache holds,
576 numbers per layer for DeepSeek-V3. Each head's key (`nope` + `rope` wide) and value (`v` wide) are
rebuilt from the latent by kv_b_proj. The query goes through its own latent of `q_rank` (None: one projection).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import LayerKind

__all__ = ["LatentAttention", "MLA_FORMS", "mla_form"]

MLA_FORMS = ("absorbed", "expanded")


@dataclass(frozen=True)
class LatentAttention(LayerKind):
    """One MLA layer's sizes. Its cache and its FLOPs per key depend on the form attention is run in (`mla`):

    - "absorbed" (DeepSeek's inference code, FlashMLA, vLLM, SGLang, transformers 5): the cache holds the latent
      and the RoPE key (kv_rank + rope per token), and each head scores against them with W_UK folded into its
      query and W_UV into its output: d_qk = kv_rank + rope, d_v = kv_rank;
    - "expanded" (transformers 4.x, engines' prefill): every head's key and value decompressed and cached
      (heads x (nope + rope + v) per token), scored at d_qk = nope + rope, d_v = v.
    """

    q_rank: int | None
    kv_rank: int
    rope: int
    nope: int
    v: int
    hidden: int = 0  # the model's width and query heads, and its attention biases (`of`)
    heads: int = 0
    qkv_bias: bool = False  # biases on q_a_proj and kv_a_proj_with_mqa
    o_bias: bool = False
    name = "mla"
    label = "latent (MLA)"
    flat = {"q_lora_rank": "q_rank", "kv_lora_rank": "kv_rank", "qk_rope_head_dim": "rope", "qk_nope_head_dim": "nope",
            "v_head_dim": "v"}

    def weights(self) -> tuple[int, int]:
        """(weights in matmuls, other weights: the latents' norms, biases) of one layer."""
        h, n_q = self.hidden, self.heads
        qk_dim = self.nope + self.rope
        kv_a_out = self.kv_rank + self.rope  # latent + shared RoPE key
        if self.q_rank:  # x -> q latent (q_a_proj) -> per-head q (q_b_proj)
            q = h * self.q_rank + self.q_rank * n_q * qk_dim
            other = self.q_rank + (self.q_rank if self.qkv_bias else 0)  # q_a_layernorm, q_a bias
        else:
            q, other = h * n_q * qk_dim, 0
        kv_a = h * kv_a_out
        kv_b = self.kv_rank * n_q * (self.nope + self.v)
        o = n_q * self.v * h
        other += self.kv_rank + (kv_a_out if self.qkv_bias else 0) + (h if self.o_bias else 0)
        return q + kv_a + kv_b + o, other

    def kv_projection(self) -> tuple[int, int]:
        return 0, 0  # no family shares an MLA layer's cache

    def kv_per_layer(self, mla: str) -> int:
        if mla == "absorbed":
            return self.kv_rank + self.rope
        return self.heads * (self.nope + self.rope + self.v)

    def flops_per_key(self, mla: str) -> int:
        if mla == "absorbed":
            d_qk, d_v = self.kv_rank + self.rope, self.kv_rank
        else:
            d_qk, d_v = self.nope + self.rope, self.v
        return 2 * self.heads * (d_qk + d_v)

    def cache_kind(self, kind: str, mla: str) -> str:
        return self.name if mla == "absorbed" else kind

    def of(self, c) -> LatentAttention:
        """These ranks in the attention of model `c` (its width, heads and biases)."""
        return replace(self, hidden=c.hidden_size, heads=c.num_attention_heads, qkv_bias=c.qkv_bias, o_bias=c.o_bias)

    @classmethod
    def read(cls, r) -> LatentAttention:
        """DeepSeek's keys (q_lora_rank null: the query is one projection); the width and heads come from `of`."""
        nope, rope = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim")
        return cls(q_rank=r.int("q_lora_rank", optional=True, null_is_value=True), kv_rank=r.int("kv_lora_rank"),
                   rope=rope, nope=nope, v=r.int("v_head_dim"))


def mla_form(mla) -> str:
    """`mla` checked: one of `MLA_FORMS` (the one place the form is validated; `ModelConfig` and the roofline call it)."""
    if mla not in MLA_FORMS:
        raise ValueError(f"mla must be one of {', '.join(map(repr, MLA_FORMS))}, got {mla!r}")
    return mla
