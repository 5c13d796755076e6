"""Mamba-1 layers (Gu & Dao 2023, "Mamba", arXiv:2312.00752; section 2.5), as transformers' Jamba builds them."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .recurrent import Mixer

__all__ = ["Mamba1"]


@dataclass(frozen=True)
class Mamba1(Mixer):
    """One Mamba-1 layer: `d_inner` channels, each with its own state of `state_size` (no heads), dt through a
    rank-`dt_rank` projection, a causal convolution of `kernel` taps.

    Weights: in_proj h -> (x, z) 2 I; the convolution over I; x_proj I -> (dt, B, C); dt_proj R -> I with a
    bias; A_log (a rate per channel and state) and D; out_proj I -> h; RMSNorms on dt, B and C (`dt_norms`,
    Jamba); biases on the convolution (`conv_bias`) and on in_proj and out_proj (`bias`).
    State: the convolution's last `kernel` inputs per channel, and I x state_size numbers (float32: Jamba's scan
    runs in float32). One step counts as Mamba-2's, 5 FLOPs per state number: its discretisation (exp(dt A) and
    dt B, per element here, per head in Mamba-2) is left out like the gates.
    """

    d_inner: int
    state_size: int
    dt_rank: int
    kernel: int
    conv_bias: bool = False
    bias: bool = False
    dt_norms: bool = True
    state_dtype: str = "fp32"
    name = "mamba1"
    label = "Mamba-1"
    flops_per_state = 5
    flat = {"mamba_d_inner": "d_inner", "ssm_state_size": "state_size", "mamba_dt_rank": "dt_rank",
            "conv_kernel": "kernel", "conv_bias": "conv_bias", "mamba_bias": "bias", "mamba_dt_norms": "dt_norms",
            "state_dtype": "state_dtype"}

    def weights(self, hidden: int) -> tuple[int, int]:
        h, inner, n, rank, k = hidden, self.d_inner, self.state_size, self.dt_rank, self.kernel
        matmul = h * 2 * inner + inner * k + inner * (rank + 2 * n) + rank * inner + inner * h
        other = inner + inner * n + inner  # dt_proj's bias, A_log, D
        other += (inner if self.conv_bias else 0) + (2 * inner + h if self.bias else 0)
        return matmul, other + (rank + 2 * n if self.dt_norms else 0)

    def state(self, hidden: int) -> tuple[int, int]:
        return self.d_inner * self.kernel, self.d_inner * self.state_size

    def describe(self, hidden: int) -> str:
        return (f"{self.d_inner:,} channels, each with a state of {self.state_size}, a convolution of {self.kernel} "
                f"taps, dt of rank {self.dt_rank}; {hidden:,} in and out")

    @classmethod
    def read(cls, r, sizes: dict | None = None) -> Mamba1:
        """Jamba's keys: d_inner = mamba_expand x hidden_size; mamba_dt_rank "auto" is ceil(hidden_size / 16), as
        JambaConfig derives it; biases on in_proj and out_proj with mamba_proj_bias."""
        hidden = r.int("hidden_size")
        rank = r.raw("mamba_dt_rank")
        rank = math.ceil(hidden / 16) if rank == "auto" else r.int("mamba_dt_rank")
        return cls(d_inner=r.int("mamba_expand") * hidden, dt_rank=rank, dt_norms=True,
                   state_size=r.int("mamba_d_state"), kernel=r.int("mamba_d_conv"),
                   conv_bias=r.bool("mamba_conv_bias"), bias=r.bool("mamba_proj_bias"), state_dtype="fp32")
