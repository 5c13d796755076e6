"""Gated short convolutions (Liquid AI's LFM2; section 2.5): a recurrent layer whose state is its last inputs."""

from __future__ import annotations

from dataclasses import dataclass

from .recurrent import Mixer

__all__ = ["ShortConv"]


@dataclass(frozen=True)
class ShortConv(Mixer):
    """One gated short convolution: in_proj h -> 3 h (two gates and the input), a depthwise convolution of
    `kernel` taps over the h channels, out_proj h -> h; with `conv_bias`, biases on all three.
    State: the convolution's last `kernel` inputs of h channels, in the model's dtype; no recurrent state (its
    taps are weights), so a step adds no FLOPs beyond them."""

    kernel: int
    conv_bias: bool = False
    state_dtype: str = "model"
    name = "short_conv"
    label = "short convolution"
    flops_per_state = 0
    flat = {"conv_kernel": "kernel", "conv_bias": "conv_bias", "state_dtype": "state_dtype"}

    def weights(self, hidden: int) -> tuple[int, int]:
        h, k = hidden, self.kernel
        return 3 * h * h + h * k + h * h, (3 * h + h + h if self.conv_bias else 0)

    def state(self, hidden: int) -> tuple[int, int]:
        return hidden * self.kernel, 0

    def describe(self, hidden: int) -> str:
        return f"a gated convolution of {self.kernel} taps over the {hidden:,} channels, no recurrent state"

    @classmethod
    def read(cls, r, sizes: dict | None = None) -> ShortConv:
        """LFM2's keys (its state in the model's dtype, as transformers keeps it)."""
        return cls(kernel=r.int("conv_L_cache"), conv_bias=r.bool("conv_bias"), state_dtype="model")
