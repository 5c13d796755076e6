"""Facts of the glossary page (docs/glossary.md): the widths of the number formats it defines.

IEEE 754 formats come from numpy's own description of them (`np.finfo`); bfloat16, which numpy lacks, is
FP32 with its mantissa cut to 7 bits (Google's definition, https://cloud.google.com/tpu/docs/bfloat16).
"""

from __future__ import annotations

import numpy as np

from ..format import Int
from . import fact

BF16_MANTISSA_BITS = 7  # bfloat16: FP32's sign and 8 exponent bits, 7 of its 23 mantissa bits


@fact
def fp32_bytes() -> Int:
    """Bytes of one FP32 number (`np.float32` itemsize)."""
    return Int(np.dtype(np.float32).itemsize)


@fact
def fp16_bytes() -> Int:
    """Bytes of one FP16 (or BF16) number (`np.float16` itemsize)."""
    return Int(np.dtype(np.float16).itemsize)


@fact
def fp16_exponent_bits() -> Int:
    """FP16's exponent bits (`np.finfo(np.float16).nexp`)."""
    return Int(np.finfo(np.float16).nexp)


@fact
def fp16_mantissa_bits() -> Int:
    """FP16's stored mantissa bits (`np.finfo(np.float16).nmant`)."""
    return Int(np.finfo(np.float16).nmant)


@fact
def fp32_exponent_bits() -> Int:
    """FP32's exponent bits, which BF16 keeps (`np.finfo(np.float32).nexp`)."""
    return Int(np.finfo(np.float32).nexp)


@fact
def bf16_mantissa_bits() -> Int:
    """BF16's stored mantissa bits (BF16_MANTISSA_BITS): 16 bits less the sign and FP32's exponent bits."""
    return Int(BF16_MANTISSA_BITS)
