"""One part of a model (section 2.2): its weights, its cache and its FLOPs, as `ModelConfig` sums them.

A model is a tuple of parts (`ModelConfig.parts`): the embedding table, the attention layers of each kind, the
layers of each recurrent kind, the dense MLPs, the routed and shared experts, the routers, the norms, the LM
head, and what a family adds (Gemma 3n's per-layer embeddings, Whisper's encoder). Each part answers for
itself; every total of `ModelConfig` is a sum over the parts, so a part is counted in one place:

    label                the row of `param_breakdown()` it adds into ("attention", "Mamba-2 layers", ...)
    total, active        weights stored, and weights one token reads (a router reads k of its experts)
    matmul               weights one token multiplies by, 2 FLOPs each
    kv_per_token(mla)    numbers the cache grows by per token
    kv_numbers(n, mla)   numbers it caches for a sequence of n tokens (a window caps them)
    fixed_bytes(dtype)   bytes it keeps whatever the context (a recurrent state, a cross-attention cache)
    kv_groups(n, ...)    its lines of `kv_cache_breakdown`
    attention_flops(n)   FLOPs of scores and weighted sums for one token that sees n keys
    step_flops()         FLOPs per token that are neither a weight nor attention (a recurrent step)
    window_flops()       FLOPs once per input, before the first token (an encoder pass)

and from these its `flops_per_token(n)` and `prefill_flops(P)`, in the convention `ModelConfig.flops_per_token`
states. A part that has none of something leaves the default (0, or nothing).

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Part", "KVGroup", "whole"]


def whole(x):
    """`x` as an int when it is whole (byte counts: whole except for 4-bit dtypes)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise TypeError(f"x must be a number, got {type(x).__name__}")
    return int(x) if float(x).is_integer() else float(x)


@dataclass(frozen=True)
class KVGroup:
    """The layers of one kind in `ModelConfig.kv_cache_breakdown()`.

    kind:       "full_attention", "sliding_attention", "chunked_attention" (a token
                sees its own chunk of `window` tokens), "mla" (multi-head latent attention),
                a recurrent kind ("mamba2", "gated_deltanet": a fixed state, `per_token` 0),
                or "cross_attention" (an encoder-decoder's cache of the encoder's positions).
    layers:     how many layers are of this kind.
    window:     the window or chunk in tokens (None: the whole context).
    per_token:  numbers cached per token in one such layer.
    tokens:     tokens each such layer holds at the given context.
    bytes:      the group's cache for one sequence at that context.
    """

    kind: str
    layers: int
    window: int | None
    per_token: int
    tokens: int
    bytes: float
    state: int = 0  # numbers one such layer holds whatever the context (convolution + recurrent state)


@dataclass(frozen=True)
class Part:
    """A part of a model (see the module docstring); subclasses give `label` and what they have."""

    label = ""

    @property
    def total(self) -> int:
        return 0

    @property
    def active(self) -> int:
        return self.total

    @property
    def matmul(self) -> int:
        return 0

    def kv_per_token(self, mla: str) -> int:
        return 0

    def kv_numbers(self, context: int, mla: str) -> int:
        return 0

    def fixed_bytes(self, per_element, per_state):
        """Bytes kept whatever the context, activations at `per_element` bytes, recurrent states at `per_state`."""
        return 0

    def kv_groups(self, context: int, per_element, per_state, mla: str) -> tuple[KVGroup, ...]:
        return ()

    def attention_flops(self, context: int, mla: str) -> int:
        return 0

    def prefill_attention_flops(self, prompt_tokens: int, mla: str) -> int:
        return 0

    def step_flops(self) -> int:
        return 0

    def window_flops(self) -> int:
        return 0

    def flops_per_token(self, context: int, mla: str):
        """FLOPs of this part for one token that sees `context` keys."""
        return 2 * self.matmul + self.attention_flops(context, mla) + self.step_flops()

    def prefill_flops(self, prompt_tokens: int, mla: str):
        """FLOPs of this part in a causal prefill of `prompt_tokens` tokens (and once per input window)."""
        return ((2 * self.matmul + self.step_flops()) * prompt_tokens + self.prefill_attention_flops(prompt_tokens, mla)
                + self.window_flops())
