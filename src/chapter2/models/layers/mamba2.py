"""Mamba-2 layers (Dao & Gu 2024, "Transformers are SSMs", arXiv:2405.21060; section 2.5), as transformers'
NemotronH mixer builds them (also Granite 4.0-H's and Falcon-H1's)."""

from __future__ import annotations

from dataclasses import dataclass

from .recurrent import Mixer

__all__ = ["Mamba2", "STATE_DTYPES"]

STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}  # mamba_ssm_cache_dtype -> ours


@dataclass(frozen=True)
class Mamba2(Mixer):
    """One Mamba-2 layer: `heads` heads of `head_dim` channels (I = heads x head_dim), a state of `state_size`
    per channel, B and C shared by `groups` groups, a causal convolution of `kernel` taps.

    Weights: in_proj h -> (z, x, B, C, dt) = 2 I + 2 G N + H; the depthwise convolution over x, B and C
    (I + 2 G N channels); per head dt_bias, A_log and D; a gated RMSNorm over I (`norm`); out_proj I -> h.
    Biases: on the convolution (`conv_bias`), on in_proj (`bias`) and on out_proj (`out_bias`, None: as in_proj).
    State: the convolution's last `kernel` inputs per channel, and heads x head_dim x state_size numbers.
    One step: decay h *= a (1), add (dt x) B (2), read y += C h (2): 5 FLOPs per state number.
    """

    heads: int
    head_dim: int
    state_size: int
    groups: int
    kernel: int
    conv_bias: bool = False
    bias: bool = False
    norm: bool = True
    out_bias: bool | None = None
    state_dtype: str = "fp32"
    name = "mamba2"
    label = "Mamba-2"
    flops_per_state = 5
    flat = {"mamba_num_heads": "heads", "mamba_head_dim": "head_dim", "ssm_state_size": "state_size",
            "n_groups": "groups", "conv_kernel": "kernel", "conv_bias": "conv_bias", "mamba_bias": "bias",
            "mamba_norm": "norm", "mamba_out_bias": "out_bias", "state_dtype": "state_dtype"}

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        """Channels of the convolution: x, B and C go through it."""
        return self.inner + 2 * self.groups * self.state_size

    def weights(self, hidden: int) -> tuple[int, int]:
        h, heads, inner = hidden, self.heads, self.inner
        proj_out = 2 * inner + 2 * self.groups * self.state_size + heads
        channels = self.conv_channels
        matmul = h * proj_out + channels * self.kernel + inner * h
        other = 3 * heads + (channels if self.conv_bias else 0) + (inner if self.norm else 0)
        out_bias = self.bias if self.out_bias is None else self.out_bias
        return matmul, other + (proj_out if self.bias else 0) + (h if out_bias else 0)

    def state(self, hidden: int) -> tuple[int, int]:
        return self.conv_channels * self.kernel, self.inner * self.state_size

    def describe(self, hidden: int) -> str:
        groups = "1 group shares" if self.groups == 1 else f"{self.groups} groups share"
        return (f"{self.heads} heads of {self.head_dim}, a state of {self.state_size} per channel "
                f"({groups} B and C), a convolution of {self.kernel} taps; {hidden:,} in and out")

    @classmethod
    def read(cls, r, sizes: dict | None = None) -> Mamba2:
        """NemotronH's keys; its recurrent state in `mamba_ssm_cache_dtype` (float32 in Nemotron 3 Nano)."""
        dtype = r.raw("mamba_ssm_cache_dtype")
        if not isinstance(dtype, str) or dtype not in STATE_DTYPES:
            raise ValueError(f"{r.name('mamba_ssm_cache_dtype')} must be one of {sorted(STATE_DTYPES)}, got {dtype!r}")
        return cls(heads=r.int("mamba_num_heads"), head_dim=r.int("mamba_head_dim"), state_size=r.int("ssm_state_size"),
                   groups=r.int("n_groups"), kernel=r.int("conv_kernel"), conv_bias=r.bool("use_conv_bias"),
                   bias=r.bool("use_bias"), state_dtype=STATE_DTYPES[dtype])

    @classmethod
    def read_mamba_keys(cls, r, inner: int, inner_is: str) -> Mamba2:
        """Sized by the `mamba_*` keys of Granite 4.0-H and Falcon-H1: `inner` channels in mamba_n_heads heads of
        mamba_d_head ("auto": inner / heads; `inner_is` says what `inner` must equal). State in float32."""
        heads = r.int("mamba_n_heads")
        head_dim = inner // heads if r.raw("mamba_d_head") == "auto" else r.int("mamba_d_head")
        if head_dim * heads != inner:
            raise ValueError(f"{r.name('mamba_d_head')} x mamba_n_heads ({head_dim} x {heads}) must be {inner_is}")
        return cls(heads=heads, head_dim=head_dim, state_size=r.int("mamba_d_state"), groups=r.int("mamba_n_groups"),
                   kernel=r.int("mamba_d_conv"), conv_bias=r.bool("mamba_conv_bias"), bias=r.bool("mamba_proj_bias"),
                   state_dtype="fp32")
