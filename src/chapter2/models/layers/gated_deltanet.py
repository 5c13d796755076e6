"""Gated DeltaNet layers (Yang, Kautz & Hatamizadeh 2024, arXiv:2412.06464; section 2.5), as transformers'
Qwen3-Next and Qwen3.5 build them."""

from __future__ import annotations

from dataclasses import dataclass

from .recurrent import Mixer

__all__ = ["GatedDeltaNet"]


@dataclass(frozen=True)
class GatedDeltaNet(Mixer):
    """One gated DeltaNet layer: `key_heads` key heads of `key_dim`, `value_heads` value heads of `value_dim`, a
    key_dim x value_dim state per value head, a causal convolution of `kernel` taps over q, k and v.

    Weights: in_proj_qkvz h -> 2 Hk dk + 2 Hv dv, in_proj_ba h -> 2 Hv, the convolution over 2 Hk dk + Hv dv
    channels (no bias), per value head dt_bias and A_log, an RMSNorm over dv, out_proj Hv dv -> h.
    State: the convolution's last `kernel` inputs per channel, and Hv x dk x dv numbers. One step: decay
    S *= a (1), read S^T k (2), write the delta-rule update k (beta (v - S^T k))^T (2), read q^T S (2): 7 FLOPs
    per state number.
    """

    key_heads: int
    value_heads: int
    key_dim: int
    value_dim: int
    kernel: int
    conv_bias: bool = False
    state_dtype: str = "fp32"
    name = "gated_deltanet"
    label = "gated DeltaNet"
    flops_per_state = 7
    flat = {"linear_num_key_heads": "key_heads", "linear_num_value_heads": "value_heads",
            "linear_key_head_dim": "key_dim", "linear_value_head_dim": "value_dim", "conv_kernel": "kernel",
            "conv_bias": "conv_bias", "state_dtype": "state_dtype"}

    def _channels(self) -> int:
        return 2 * self.key_heads * self.key_dim + self.value_heads * self.value_dim

    def weights(self, hidden: int) -> tuple[int, int]:
        h, hk, hv, dk, dv = hidden, self.key_heads, self.value_heads, self.key_dim, self.value_dim
        channels = self._channels()
        matmul = h * (2 * hk * dk + 2 * hv * dv) + h * 2 * hv + channels * self.kernel + hv * dv * h
        return matmul, 2 * hv + dv + (channels if self.conv_bias else 0)

    def state(self, hidden: int) -> tuple[int, int]:
        return self._channels() * self.kernel, self.value_heads * self.key_dim * self.value_dim

    def describe(self, hidden: int) -> str:
        return (f"{self.key_heads} key heads of {self.key_dim}, {self.value_heads} value heads of {self.value_dim}; "
                f"a {self.key_dim} × {self.value_dim} state per value head, a convolution of {self.kernel} taps")

    @classmethod
    def read(cls, r, sizes: dict | None = None) -> GatedDeltaNet:
        """Qwen3-Next's keys (`linear_*`)."""
        return cls(key_heads=r.int("linear_num_key_heads"), value_heads=r.int("linear_num_value_heads"),
                   key_dim=r.int("linear_key_head_dim"), value_dim=r.int("linear_value_head_dim"),
                   kernel=r.int("linear_conv_kernel_dim"))
