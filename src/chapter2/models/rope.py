"""Rotary position embedding, RoPE (Su et al. 2021, arXiv:2104.09864).

Attention scores only see positions through q and k, so RoPE rotates them:
the feature pairs of a head are rotated by an angle proportional to the
token's position, with a different frequency per pair. The dot product of a
rotated query and key then depends only on their distance.

Pairing convention: the one of Hugging Face transformers (`rotate_half`),
which pairs feature i with feature i + d/2 (not neighbours 2i, 2i+1):

    inv_freq[i] = theta ** (-2i / d)                       i = 0 .. d/2 - 1
    angle[p, i] = p * inv_freq[i],  duplicated to width d: [angle, angle]
    rope(x)     = x * cos(angle) + rotate_half(x) * sin(angle)
    rotate_half([x1, x2]) = [-x2, x1]                       (halves of width d/2)

Scaling schemes (config.json `rope_scaling`): None (plain RoPE), "linear"
(positions divided by `factor`) and "llama3" (Llama 3.1's frequency-dependent
scaling: long wavelengths slowed down by `factor`, short ones kept, a smooth
blend between). Others (yarn, dynamic, longrope) raise ValueError.
"""

from __future__ import annotations

import math

import numpy as np

from .._checks import float_array

from .._checks import finite_real, positive_int

__all__ = ["inv_frequencies", "rope_cos_sin", "rotate_half", "apply_rope", "SUPPORTED_SCALING"]

SUPPORTED_SCALING = (None, "linear", "llama3")


def inv_frequencies(head_dim: int, theta: float, scaling: dict | None = None) -> np.ndarray:
    """The d/2 rotation frequencies (radians per position), float64, scaled per `scaling`."""
    head_dim = positive_int("head_dim", head_dim)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even for RoPE, got {head_dim}")
    theta = finite_real("theta", theta, low=1.0, low_open=True)
    inv_freq = theta ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)  # (d/2,)
    kind = None if scaling is None else scaling.get("rope_type", scaling.get("type"))
    if kind in (None, "default"):
        return inv_freq
    if kind == "linear":
        return inv_freq / finite_real("rope_scaling['factor']", scaling["factor"], low=0, low_open=True)
    if kind == "llama3":
        return _llama3(inv_freq, scaling)
    raise ValueError(f"rope_scaling type {kind!r} is not supported; supported: plain RoPE, 'linear', 'llama3'")


def _llama3(inv_freq: np.ndarray, s: dict) -> np.ndarray:
    """Llama 3.1 RoPE scaling (the rule of Meta's reference code, `apply_scaling`).

    Wavelength 2*pi/f compared with the original context L (8192 for Llama 3.1):
    wavelength > L / low_freq_factor    -> f / factor   (slow, long-range pairs are stretched)
    wavelength < L / high_freq_factor   -> f            (fast, local pairs untouched)
    in between: blend (1 - t) f / factor + t f, t = (L / wavelength - low) / (high - low).
    """
    factor = finite_real("rope_scaling['factor']", s["factor"], low=0, low_open=True)
    low = finite_real("rope_scaling['low_freq_factor']", s["low_freq_factor"], low=0, low_open=True)
    high = finite_real("rope_scaling['high_freq_factor']", s["high_freq_factor"], low=low, low_open=True)
    original = finite_real("rope_scaling['original_max_position_embeddings']", s["original_max_position_embeddings"],
                           low=0, low_open=True)
    wavelength = 2 * math.pi / inv_freq
    t = (original / wavelength - low) / (high - low)
    blended = (1 - t) * inv_freq / factor + t * inv_freq
    out = np.where(wavelength > original / low, inv_freq / factor, inv_freq)
    medium = (wavelength <= original / low) & (wavelength >= original / high)
    return np.where(medium, blended, out)


def rope_cos_sin(positions, head_dim: int, theta: float, scaling: dict | None = None, dtype=np.float32):
    """cos and sin tables of shape (N, head_dim) for integer `positions` (N,).

    Angles are computed in float64 and rounded once to `dtype`.
    """
    positions = np.asarray(positions)
    if positions.ndim != 1 or not np.issubdtype(positions.dtype, np.integer) or (positions < 0).any():
        raise ValueError(f"positions must be a 1-D array of non-negative integers, got {positions!r}")
    angle = positions.astype(np.float64)[:, None] * inv_frequencies(head_dim, theta, scaling)[None, :]  # (N, d/2)
    angle = np.concatenate([angle, angle], axis=-1)  # (N, d)
    return np.cos(angle).astype(dtype), np.sin(angle).astype(dtype)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """[x1, x2] -> [-x2, x1] over the last axis (halves of width d/2)."""
    return _rotate_half(_even_last("x", x))


def _even_last(name: str, x) -> np.ndarray:
    x = float_array(name, x, min_ndim=1)
    if x.shape[-1] % 2:
        raise ValueError(f"{name}'s last dimension (head_dim) must be even for RoPE, got {x.shape[-1]}")
    return x


def _rotate_half(x: np.ndarray) -> np.ndarray:
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate x (..., N, d) by the (N, d) tables: x cos + rotate_half(x) sin."""
    x, cos, sin = _even_last("x", x), float_array("cos", cos), float_array("sin", sin)
    return x * cos + _rotate_half(x) * sin
