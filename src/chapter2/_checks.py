"""Small input checks shared by the public functions.

Every public function validates its arguments and raises ValueError or
TypeError that names the argument and says what was expected.
"""

from __future__ import annotations

import math
import os
from numbers import Integral, Real

import numpy as np


def positive_int(name: str, value, *, allow_zero: bool = False) -> int:
    """Return `value` as an int, or raise naming `name`."""
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if not isinstance(value, Integral | np.integer):
        if isinstance(value, Real | np.floating) and math.isfinite(value) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    lowest = 0 if allow_zero else 1
    if value < lowest:
        raise ValueError(f"{name} must be >= {lowest}, got {value}")
    return value


def real(name: str, value) -> float:
    """Return `value` as a float (inf and nan pass: the caller decides), or raise TypeError naming `name`."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def finite_real(name: str, value, *, low=None, high=None, low_open=False) -> float:
    """Return `value` as a finite float within [low, high] (or (low, high])."""
    if isinstance(value, bool) or not isinstance(value, Real | np.number):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name} must be {op} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value}")
    return value


def float_array(name: str, value, *, ndim: int | None = None, min_ndim: int | None = None) -> np.ndarray:
    """Return `value` as a floating numpy array, or raise naming `name`."""
    arr = np.asarray(value)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if not np.issubdtype(arr.dtype, np.floating):
        arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape {arr.shape}")
    return arr


DTYPE_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1, "fp4": 0.5, "int4": 0.5}


def dtype_bytes(name: str, dtype) -> float:
    """Bytes per element for a dtype name such as 'fp16' (or a positive number of bytes)."""
    if isinstance(dtype, str):
        key = dtype.lower().replace("float", "fp").replace("bfloat", "bf").replace("bfp", "bf")
        if key not in DTYPE_BYTES:
            raise ValueError(f"{name} must be one of {sorted(DTYPE_BYTES)}, got {dtype!r}")
        return DTYPE_BYTES[key]
    return finite_real(name, dtype, low=0, low_open=True)


def text(name: str, value, *, what: str = "a str") -> str:
    """Return `value` if it is a str, or raise TypeError naming `name` (`what`: the expected value, in words)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__} {value!r}")
    return value


def as_list(name: str, value, *, what: str = "a list") -> list:
    """Return `value` (a list, tuple or other iterable that is not a str, bytes or dict) as a list,
    or raise TypeError naming `name`."""
    if isinstance(value, str | bytes | dict) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__} {value!r}")
    return list(value)


def path(name: str, value) -> os.PathLike | str:
    """Return `value` if it names a file or folder (a str or os.PathLike), or raise TypeError naming `name`."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{name} must be a path (a str or pathlib.Path), got {type(value).__name__} {value!r}")
    return value


def function(name: str, value, *, what: str = "a function"):
    """Return `value` if it can be called, or raise TypeError naming `name`."""
    if not callable(value):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__} {value!r}")
    return value
