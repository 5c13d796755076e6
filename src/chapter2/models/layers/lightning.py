"""Lightning attention (MiniMax-01, arXiv:2501.08313; section 2.5): linear attention with a per-head decay."""

from __future__ import annotations

from dataclasses import dataclass

from .recurrent import Mixer

__all__ = ["Lightning"]


@dataclass(frozen=True)
class Lightning(Mixer):
    """One lightning attention layer: `heads` heads of `head_dim` (the attention's), a head_dim x head_dim state per
    head instead of keys and values, kept in the model's dtype (as transformers' MiniMax cache does).

    Weights: qkv_proj h -> 3 H d, output_gate h -> H d, an RMSNorm over H d, out_proj H d -> h; no biases.
    One step: decay S *= lambda (1), add k^T v (2), read q S (2): 5 FLOPs per state number.
    """

    heads: int
    head_dim: int
    state_dtype: str = "model"
    name = "lightning"
    label = "lightning attention"
    flops_per_state = 5
    flat = {"state_dtype": "state_dtype"}

    def weights(self, hidden: int) -> tuple[int, int]:
        h, inner = hidden, self.heads * self.head_dim
        return 3 * h * inner + h * inner + inner * h, inner

    def state(self, hidden: int) -> tuple[int, int]:
        return 0, self.heads * self.head_dim * self.head_dim

    def describe(self, hidden: int) -> str:
        return (f"{self.heads} heads of {self.head_dim}: linear attention, a {self.head_dim} × {self.head_dim} "
                f"state per head instead of K and V")

    @classmethod
    def read(cls, r, sizes: dict) -> Lightning:
        """MiniMax: sized by its attention's heads and head_dim (`sizes`, read before); no keys of its own."""
        return cls(heads=sizes["num_attention_heads"], head_dim=sizes["head_dim"], state_dtype="model")
