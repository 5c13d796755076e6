"""Checks and small helpers shared by the kernel wrappers (torch imported here, triton not).

Deliberately free of numpy (unlike `chapter2._checks`), so the kernels, their
validation and the GPU benchmarks run on a machine whose Python has torch and
triton but no numpy.
"""

from __future__ import annotations

import math
import numbers
import os

import torch

SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
MAX_HEAD_DIM = 256  # the padded head dimension must fit a tile in shared memory


def interpreting() -> bool:
    """True when Triton runs kernels in its CPU interpreter (TRITON_INTERPRET=1, read at kernel definition)."""
    return os.environ.get("TRITON_INTERPRET", "0").strip().lower() in ("1", "true", "on", "yes")


def positive_int(name: str, value) -> int:
    """`value` as an int >= 1, or raise naming `name` (bools are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return int(value)


def check_tensor(name: str, x, ndim: int = 4):
    """A floating torch tensor with `ndim` dimensions, or raise naming `name`."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{name} must be float16, bfloat16 or float32, got {x.dtype}")
    if x.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions (B, H, N, d), got shape {tuple(x.shape)}")
    if x.numel() == 0:
        raise ValueError(f"{name} must not be empty, got shape {tuple(x.shape)}")
    return x


def check_device(x, interpret: bool) -> None:
    """Kernels run on CUDA tensors, or on CPU tensors in the interpreter."""
    if x.device.type == "cuda":
        if interpret:
            raise ValueError("the kernels were defined for the interpreter (TRITON_INTERPRET=1): pass CPU tensors")
        return
    if x.device.type == "cpu" and interpret:
        return
    raise ValueError(
        f"tensors on {x.device} need a CUDA GPU, or TRITON_INTERPRET=1 set before the kernels are imported "
        "(see chapter2.host.kernels.use_interpreter) to run them on the CPU"
    )


def check_same(name: str, x, ref, ref_name: str) -> None:
    if x.dtype != ref.dtype:
        raise TypeError(f"{name} must have the dtype of {ref_name} ({ref.dtype}), got {x.dtype}")
    if x.device != ref.device:
        raise ValueError(f"{name} must be on the device of {ref_name} ({ref.device}), got {x.device}")


def check_heads(h_q: int, h_kv: int) -> int:
    """Grouped-query attention: query heads per KV head."""
    if h_q % h_kv:
        raise ValueError(f"query heads ({h_q}) must be a multiple of key/value heads ({h_kv}) for grouped-query attention")
    return h_q // h_kv


def check_head_dim(d: int) -> None:
    if d > MAX_HEAD_DIM:
        raise ValueError(f"head dimension d must be <= {MAX_HEAD_DIM}, got {d}")


def check_window(window) -> int | None:
    """None, or the look-back size w >= 1 (w keys, the query's own position included)."""
    if window is None:
        return None
    return positive_int("window", window)


def check_scale(scale, head_dim: int) -> float:
    """Softmax scale; None means 1/sqrt(d) (Vaswani et al. 2017)."""
    if scale is None:
        return 1.0 / math.sqrt(head_dim)
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a real number or None, got {scale!r}")
    if not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be > 0 and finite, got {scale}")
    return float(scale)


def unit_stride(x):
    """The kernels assume the head dimension is contiguous (vectorized loads)."""
    return x if x.stride(-1) == 1 else x.contiguous()


def padded_head_dim(d: int) -> int:
    """Head dims are padded to a power of two (tl.arange needs one), at least 16 (tl.dot's minimum)."""
    return max(16, 1 << (d - 1).bit_length())


def dot_precision(dtype) -> str:
    """'ieee' for float32 (no silent TF32 on GPUs); 'tf32' is the default and unused for 16-bit inputs."""
    return "ieee" if dtype == torch.float32 else "tf32"


__all__ = [
    "interpreting", "check_tensor", "check_device", "check_same", "check_heads", "check_head_dim",
    "check_window", "check_scale", "unit_stride", "padded_head_dim", "dot_precision", "positive_int",
]
