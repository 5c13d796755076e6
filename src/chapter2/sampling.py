"""Turning a logits vector into the next token (chapter section 2.2, "LLM inference mechanics").

At each decode step the model outputs one logit per vocabulary entry. A
sampler reshapes that vector into a probability distribution and draws a
token id from it. The steps run in this fixed order (the order of Hugging Face
`generate` and of the chapter):

1. **logit bias**: add a per-token offset (`{token_id: bias}`); a bias of
   `-inf` bans a token, as OpenAI-style `logit_bias` of -100 effectively does.
2. **temperature** `T`: divide the logits by `T`. `T < 1` sharpens, `T > 1`
   flattens, `T = 0` is greedy decoding (all mass on the argmax; on a tie the
   lowest token id wins, as `numpy.argmax` and `torch.argmax` pick).
3. **top-k**: keep the `k` likeliest tokens. `None`, `0` or `-1` disables it;
   `k >= vocabulary size` keeps everything.
4. **top-p** (nucleus sampling, Holtzman et al. 2020, arXiv:1904.09751): keep
   the smallest set of likeliest tokens whose probabilities add up to at least
   `p`, `p` in (0, 1]; at least one token is always kept.

Ties at a cut-off are kept together. For top-k this is exactly what
transformers' `TopKLogitsWarper` does (it removes only tokens *strictly* below
the k-th largest logit). For top-p it is a deliberate difference:
`TopPLogitsWarper` sorts the logits and keeps part of a tie group, the part
that its sort order happens to put last (on CPU the higher token ids). Keeping
whole tie groups makes the result independent of token order: permuting the
logits permutes the probabilities, and equal logits always get equal
probabilities. A second, smaller difference: transformers tests
`cumsum(ascending) > 1 - p`, which rounding can tip at an exact boundary (it
keeps all three tokens of 0.5/0.3/0.2 for p = 0.8); here a cumulative mass
within `TOP_P_SLACK` of `p` counts as reaching `p`, so that case keeps two,
as exact arithmetic would.

Everything is computed in float64 and is stable for huge logits (the maximum
is subtracted before dividing by T) and for `-inf` entries (probability 0).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ._checks import finite_real, positive_int
from .activations import softmax

__all__ = ["probs", "sample", "apply_logit_bias", "TOP_P_SLACK"]

TOP_P_SLACK = 1e-12  # a cumulative mass within this of p counts as reaching p (absorbs softmax rounding)


# -----------------------------------------------------------------------------
# input checks


def _as_logits(logits) -> np.ndarray:
    """float64 array (..., V); entries finite or -inf; each row has a finite entry."""
    arr = np.asarray(logits)
    if arr.dtype == object or arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"logits must be an array of real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim == 0 or arr.shape[-1] == 0:
        raise ValueError(f"logits must have shape (..., vocab_size) with vocab_size >= 1, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("logits must not contain NaN")
    if (arr == np.inf).any():
        raise ValueError("logits must not contain +inf (use a large finite value)")
    if (arr == -np.inf).all(axis=-1).any():
        raise ValueError("logits: every entry of a row is -inf, so no token can be sampled")
    return arr


def _check_top_k(top_k) -> int | None:
    """None when top-k is disabled (None, 0 or -1), else a positive int."""
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, Integral | np.integer):
        raise TypeError(f"top_k must be an integer or None, got {top_k!r}")
    top_k = int(top_k)
    if top_k in (0, -1):
        return None
    return positive_int("top_k", top_k)


def _check_top_p(top_p) -> float:
    return finite_real("top_p", top_p, low=0.0, low_open=True, high=1.0)


def _check_temperature(temperature) -> float:
    return finite_real("temperature", temperature, low=0.0)


# -----------------------------------------------------------------------------
# the four steps


def apply_logit_bias(logits, logit_bias) -> np.ndarray:
    """Return float64 `logits + bias` for each `{token_id: bias}` entry (step 1).

    Token ids must be integers in [0, vocab_size); biases finite or -inf (ban).
    """
    logits = _as_logits(logits)
    if logit_bias is None:
        return logits
    if not isinstance(logit_bias, dict):
        raise TypeError(f"logit_bias must be a dict {{token_id: bias}} or None, got {type(logit_bias).__name__}")
    vocab = logits.shape[-1]
    out = logits.copy()
    for token, bias in logit_bias.items():
        if isinstance(token, bool) or not isinstance(token, Integral | np.integer):
            raise TypeError(f"logit_bias keys must be integer token ids, got {token!r}")
        if not 0 <= int(token) < vocab:
            raise ValueError(f"logit_bias token id {token} is outside the vocabulary [0, {vocab})")
        if not (isinstance(bias, (int, float, np.number)) and not isinstance(bias, bool)):
            raise TypeError(f"logit_bias[{token}] must be a real number, got {bias!r}")
        if bias != -np.inf:
            finite_real(f"logit_bias[{token}]", bias)  # NaN and +inf are errors; -inf bans the token
        with np.errstate(over="ignore"):  # an overflow to +inf is reported just below
            out[..., int(token)] += float(bias)
    if (out == np.inf).any():
        raise ValueError("logits + logit_bias overflowed to +inf; use smaller values")
    if (out == -np.inf).all(axis=-1).any():
        raise ValueError("logit_bias bans every remaining token of a row, so no token can be sampled")
    return out


def _softmax(logits: np.ndarray, temperature: float) -> np.ndarray:
    """softmax(logits / T) in float64; T = 0 puts all mass on the first argmax (step 2)."""
    if temperature == 0.0:
        out = np.zeros_like(logits)
        np.put_along_axis(out, np.argmax(logits, axis=-1)[..., None], 1.0, axis=-1)
        return out
    # Subtract the max *before* dividing by T: (x - max) / T <= 0 stays finite (or -inf) even for T -> 0,
    # where x / T itself would overflow; softmax then subtracts its (zero) maximum again, harmlessly.
    with np.errstate(over="ignore"):  # (-1e308) - (1e308) -> -inf is fine: exp(-inf) = 0
        z = (logits - logits.max(axis=-1, keepdims=True)) / temperature
    return softmax(z)


def _top_k(p: np.ndarray, z: np.ndarray, k: int | None) -> np.ndarray:
    """Zero every token whose logit is strictly below the k-th largest (ties at the cut are kept) (step 3).

    The cut is taken on the biased logits `z`, not on the probabilities: dividing by T > 0
    keeps the order, and logits that differ slightly cannot collapse to one rounded probability.
    """
    vocab = z.shape[-1]
    if k is None or k >= vocab:
        return p
    kth_largest = np.partition(z, vocab - k, axis=-1)[..., vocab - k : vocab - k + 1]
    return np.where(z >= kth_largest, p, 0.0)


# --8<-- [start:sampling_top_p]
def _top_p(p: np.ndarray, top_p: float) -> np.ndarray:
    """Keep the smallest likeliest set with mass >= top_p, plus ties of its last member (step 4)."""
    if top_p >= 1.0:
        return p
    p = p / p.sum(axis=-1, keepdims=True)  # top-p looks at the distribution left after top-k
    desc = -np.sort(-p, axis=-1)  # (..., V) largest first
    mass_before = np.cumsum(desc, axis=-1) - desc  # mass of the strictly likelier tokens in the sorted list
    n_keep = np.maximum((mass_before < top_p - TOP_P_SLACK).sum(axis=-1, keepdims=True), 1)
    threshold = np.take_along_axis(desc, n_keep - 1, axis=-1)  # probability of the last token kept
    return np.where(p >= threshold, p, 0.0)
# --8<-- [end:sampling_top_p]


# -----------------------------------------------------------------------------
# public API


# --8<-- [start:sampling_probs]
def probs(logits, *, temperature=1.0, top_k=None, top_p=1.0, logit_bias=None) -> np.ndarray:
    """The final sampling distribution over the vocabulary.

    logits: (..., V) array of real numbers (entries may be -inf, never NaN or +inf).
    Returns a float64 array of the same shape, non-negative, each row summing to 1.
    Steps: logit bias, temperature, top-k, top-p (see the module docstring).
    """
    temperature = _check_temperature(temperature)
    top_k = _check_top_k(top_k)
    top_p = _check_top_p(top_p)
    z = apply_logit_bias(logits, logit_bias)
    p = _softmax(z, temperature)
    p = _top_k(p, z, top_k)
    p = _top_p(p, top_p)
    return p / p.sum(axis=-1, keepdims=True)
# --8<-- [end:sampling_probs]


def sample(logits, *, temperature=1.0, top_k=None, top_p=1.0, logit_bias=None, rng):
    """Draw one token id from `probs(...)` using `rng` (a numpy.random.Generator).

    logits (V,) gives an int; logits (..., V) gives an int64 array of shape (...),
    one independent draw per row. Inverse-CDF sampling: a token with probability
    0 is never drawn.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    p = probs(logits, temperature=temperature, top_k=top_k, top_p=top_p, logit_bias=logit_bias)
    rows = p.reshape(-1, p.shape[-1])  # (R, V)
    cdf = np.cumsum(rows, axis=-1)
    u = rng.random(rows.shape[0]) * cdf[:, -1]  # (R,) uniform in [0, total)
    ids = (cdf <= u[:, None]).sum(axis=-1)  # first index with cdf > u
    last_nonzero = rows.shape[-1] - 1 - np.argmax(rows[:, ::-1] > 0, axis=-1)
    ids = np.minimum(ids, last_nonzero)  # guards u rounding up to the total
    if p.ndim == 1:
        return int(ids[0])
    return ids.reshape(p.shape[:-1]).astype(np.int64)
