"""Calculator of section 2.2 (LLM inference mechanics): a sampling playground.

Type a logits vector, move the temperature / top-k / top-p sliders, bias a
token, and see the final distribution plus a few seeded draws. Everything is
`chapter2.sampling.probs` and `sample`, the functions the tests check against
Hugging Face transformers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .. import sampling
from ._registry import Field, FieldError, Output, calculator

MAX_TOKENS = 64  # a readable bar chart


@dataclass(frozen=True)
class TextField(Field):
    """A free-text input: `parse` returns the stripped string; the calculator parses it further."""

    kind: str = "text"
    max_length: int = 2000

    def parse(self, raw):
        text = str(raw).strip()
        if len(text) > self.max_length:
            raise FieldError(self.name, f"{self.label}: at most {self.max_length} characters, got {len(text)}")
        return text


def _number(text: str, field: str, label: str, *, allow_minus_inf: bool) -> float:
    word = text.strip().lower().replace("\u2212", "-")  # accept a typographic minus sign
    if allow_minus_inf and word in ("-inf", "-infinity"):
        return -math.inf
    try:
        value = float(word)
    except ValueError:
        raise FieldError(field, f"{label}: {text.strip()!r} is not a number") from None
    if not math.isfinite(value):
        hint = " (-inf is allowed, +inf and nan are not)" if allow_minus_inf else ""
        raise FieldError(field, f"{label}: {text.strip()!r} must be a finite number{hint}")
    return value


def parse_logits(text: str) -> np.ndarray:
    """'2.0, 1.0, 0.5, -inf' -> float64 array; commas and/or spaces separate values."""
    parts = [p for p in re.split(r"[,\s;]+", text) if p]
    if not parts:
        raise FieldError("logits", "Logits: enter at least one number, e.g. 2.0, 1.0, 0.5")
    if len(parts) > MAX_TOKENS:
        raise FieldError("logits", f"Logits: at most {MAX_TOKENS} values, got {len(parts)}")
    values = np.array([_number(p, "logits", "Logits", allow_minus_inf=True) for p in parts])
    if np.isneginf(values).all():
        raise FieldError("logits", "Logits: at least one value must be finite")
    return values


def parse_bias(text: str, vocab_size: int) -> dict[int, float]:
    """'3:+2, 0:-inf' -> {3: 2.0, 0: -inf}; empty text means no bias."""
    bias: dict[int, float] = {}
    for entry in (e for e in re.split(r"[,;\s]+", text) if e):
        token, sep, value = entry.partition(":")
        if not sep or not token.strip().isdigit():
            raise FieldError("bias", f"Logit bias: write token:bias pairs such as 3:+2, got {entry!r}")
        token_id = int(token)
        if token_id >= vocab_size:
            raise FieldError("bias", f"Logit bias: token {token_id} does not exist (tokens are 0 to {vocab_size - 1})")
        if token_id in bias:
            raise FieldError("bias", f"Logit bias: token {token_id} is listed twice")
        bias[token_id] = _number(value, "bias", "Logit bias", allow_minus_inf=True)
    return bias


@calculator(
    "llm_sampling",
    title="Sampling playground: temperature, top-k, top-p and logit bias",
    fields=[
        TextField("logits", "Logits (one per token)", "2.0, 1.0, 0.5, 0.1, -1",
                  help="comma separated; -inf bans a token"),
        Field("temperature", "Temperature", 1.0, kind="range", min=0, max=2, step=0.05, help="0 = greedy"),
        Field("top_k", "Top-k", 0, kind="range", min=0, max=20, step=1, integer=True, help="0 = off", unit="tokens"),
        Field("top_p", "Top-p", 1.0, kind="range", min=0.05, max=1, step=0.05, help="1 = off"),
        TextField("bias", "Logit bias", "", help="token:bias pairs, e.g. 3:+2"),
        Field("seed", "Random seed", 0, min=0, max=2**32 - 1, integer=True),
        Field("n_draws", "Draws", 20, min=1, max=200, integer=True, unit="draws"),
    ],
    outputs=[
        Output("probs", "Probability of each token", kind="bars"),
        Output("kept", "Tokens that can be drawn"),
        Output("entropy", "Entropy of the distribution"),
        Output("draws", "Seeded draws (token ids)"),
    ],
)
def llm_sampling_calc(logits, temperature, top_k, top_p, bias, seed, n_draws):
    """Order: logit bias, temperature, top-k, top-p; then draw with numpy's default_rng(seed)."""
    values = parse_logits(logits)
    logit_bias = parse_bias(bias, len(values))
    banned = np.isneginf(values) | np.isin(np.arange(len(values)), [t for t, b in logit_bias.items() if b == -math.inf])
    if banned.all():
        raise FieldError("bias", "Logit bias: every token is banned, so nothing can be drawn")
    kwargs = dict(temperature=temperature, top_k=top_k or None, top_p=top_p, logit_bias=logit_bias or None)
    p = sampling.probs(values, **kwargs)
    rng = np.random.default_rng(seed)
    draws = sampling.sample(np.broadcast_to(values, (n_draws, len(values))), rng=rng, **kwargs)
    nonzero = p[p > 0]
    entropy = float(-(nonzero * np.log2(nonzero)).sum()) + 0.0  # + 0.0 turns -0.0 into 0.0
    kept = int(np.count_nonzero(p))
    return {
        "probs": [[f"tok {i}", float(x)] for i, x in enumerate(p)],
        "kept": f"{kept} of {len(p)}",
        "entropy": f"{entropy:.3f} bits",
        "draws": ", ".join(str(int(t)) for t in draws),
        "numbers": {"logits": [None if math.isinf(x) else float(x) for x in values],  # None: -inf, a banned token
                    "tokens": list(range(len(p))), "probabilities": [float(x) for x in p], "tokens_kept": kept,
                    "vocabulary": len(p), "entropy (bits)": entropy, "draws": [int(t) for t in draws]},
    }
