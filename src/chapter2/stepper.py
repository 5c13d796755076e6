"""Prefill, then decode one token at a time, and watch the KV cache grow (chapter section 2.2).

Generation has two phases (section 2.2, "LLM inference mechanics"):

- **prefill** runs all N prompt tokens through the model in one forward pass.
  It fills the KV cache with N entries per layer and yields the logits of the
  token after the prompt.
- **decode** then runs one token per forward pass: the token just chosen goes
  in, its keys and values are appended to the cache (N + 1, N + 2, ...
  entries), and one logits vector comes out, from which the next token is
  chosen.

`step_through` records every pass: the tokens that went in, the cache length
and bytes afterwards (bytes = length x `KVCache.bytes_per_token`, which is
2 x layers x KV heads x head_dim x bytes per number, 8 bytes here: see
`DTYPE`), the five likeliest next tokens with the model's probabilities
(softmax of the logits, temperature 1), and the token chosen with the
sampling settings (`chapter2.sampling`, the same calls as
`chapter2.models.transformer.generate`, so the chosen tokens equal
`generate`'s for the same settings and seed).

    model, tokenizer = load()                       # the shipped tiny model (cached)
    steps = step_through(model, tokenizer, "The KV cache", 8)
    print("\\n".join(format_step(s) for s in steps))

Pure numpy and the standard library, so it runs in the browser (Pyodide).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import sampling
from ._checks import positive_int
from .format import counted, nbytes
from .models import TINY_LM_DIR
from .models.transformer import Transformer, load_pretrained
from .tokenizer import BPETokenizer

__all__ = ["DTYPE", "TOP_N", "Candidate", "Step", "load", "step_through", "iter_steps", "format_step",
           "generated_ids", "generated_text"]

TOP_N = 5  # candidates recorded per step

# float64 by default: CPython (BLAS) and the browser (numpy without BLAS) sum in different orders, and in
# float32 that shows at the 7th digit: enough to flip a rounded probability or a near-tie between two tokens.
# In float64 both runtimes agree to about 1e-15, so the page shows what the tests checked.
DTYPE = np.float64

_LOADED: dict[tuple[Path, str], tuple[Transformer, BPETokenizer]] = {}  # (folder, dtype) -> loaded once


# -----------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class Candidate:
    """One possible next token: its id, its text (as `BPETokenizer.token_text` shows it) and probability."""

    token: int
    text: str
    prob: float


@dataclass(frozen=True)
class Step:
    """One forward pass.

    `index` 0 is the prefill, 1, 2, ... the decode steps. `input_ids` are the
    tokens that went through the model in this pass (the whole prompt for the
    prefill, the one token chosen by the previous pass for a decode step).
    `input_text` is their text. `cache_length` and `cache_bytes` describe the KV cache after the pass.
    `top` holds the `TOP_N` likeliest next tokens under the model's
    distribution (softmax of the logits at temperature 1), likeliest first;
    `token` is the next token actually chosen with the sampling settings.
    """

    index: int
    input_ids: tuple[int, ...]
    cache_length: int
    cache_bytes: int
    top: tuple[Candidate, ...]
    token: int
    token_text: str
    input_text: str

    @property
    def phase(self) -> str:
        return "prefill" if self.index == 0 else "decode"


# -----------------------------------------------------------------------------
# loading


def load(folder=None, *, dtype=DTYPE) -> tuple[Transformer, BPETokenizer]:
    """(model, tokenizer) from a checkpoint folder (config.json, model.safetensors, tokenizer.json).

    `folder` None means the shipped tiny model, `chapter2.models.TINY_LM_DIR` (looked up
    at call time). Each folder is read once per process and kept in memory, so
    repeated calls (a calculator recomputing on every slider move) are fast.
    The model computes, and keeps its KV cache, in `dtype` (float64 or float32).
    """
    folder = Path(TINY_LM_DIR if folder is None else folder).resolve()
    key = (folder, np.dtype(dtype).name)
    if key not in _LOADED:
        if not (folder / "tokenizer.json").is_file():
            raise ValueError(f"folder must hold a checkpoint with tokenizer.json, got {str(folder)!r}")
        model = load_pretrained(folder, dtype=dtype)
        tokenizer = BPETokenizer.from_file(folder / "tokenizer.json")
        if tokenizer.vocab_size > model.config.vocab_size:
            raise ValueError(f"tokenizer has {tokenizer.vocab_size} ids but the model only "
                             f"{model.config.vocab_size} logits (folder {str(folder)!r})")
        _LOADED[key] = (model, tokenizer)
    return _LOADED[key]


# -----------------------------------------------------------------------------
# stepping


def _top_candidates(tokenizer, logits: np.ndarray) -> tuple[Candidate, ...]:
    """The TOP_N likeliest tokens of softmax(logits), likeliest first (ties: lower id first)."""
    p = sampling.probs(logits, temperature=1.0)  # (V,) float64
    order = np.argsort(-p, kind="stable")[:TOP_N]
    return tuple(Candidate(int(i), _text(tokenizer, int(i)), float(p[i])) for i in order)


def _text(tokenizer, token: int) -> str:
    """A token's text; ids the model has but the tokenizer lacks (padding rows) show as <id N>."""
    return tokenizer.token_text(token) if token in tokenizer.id_to_token else f"<id {token}>"


def _check_inputs(model, tokenizer, prompt, n_steps) -> tuple[list[int], int]:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a chapter2 Transformer (see load()), got {type(model).__name__}")
    if not isinstance(tokenizer, BPETokenizer):
        raise TypeError(f"tokenizer must be a BPETokenizer (see load()), got {type(tokenizer).__name__}")
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    if prompt == "":
        raise ValueError("prompt must be non-empty text (prefill needs at least one token)")
    n_steps = positive_int("n_steps", n_steps, allow_zero=True)
    prompt_ids = tokenizer.encode(prompt)
    context = model.config.max_position_embeddings
    if context is not None and len(prompt_ids) + n_steps > context:
        raise ValueError(f"prompt is {len(prompt_ids)} tokens; with n_steps={n_steps} decode steps that is "
                         f"{len(prompt_ids) + n_steps} positions, more than the model's context of {context}")
    if max(prompt_ids) >= model.config.vocab_size:
        raise ValueError(f"tokenizer gives id {max(prompt_ids)}, outside the model's vocabulary of {model.config.vocab_size}")
    return prompt_ids, n_steps


# --8<-- [start:step_through]
def step_through(model: Transformer, tokenizer: BPETokenizer, prompt: str, n_steps: int, *,
                 temperature: float = 0.0, top_k=None, top_p: float = 1.0, seed: int = 0,
                 stop_ids=()) -> list[Step]:
    """Prefill `prompt`, then run `n_steps` decode steps; return one `Step` per forward pass.

    The result has n_steps + 1 records (fewer if a token in `stop_ids` is
    chosen first: the stepper stops there, as `generate` does), and
    n_steps + 1 chosen tokens: the prefill chooses the first, each decode step
    feeds the previous choice and chooses the next. Tokens are drawn with
    `chapter2.sampling.sample` (temperature 0 = greedy) from
    `numpy.random.default_rng(seed)`, so they equal
    `generate(model, ids, max_tokens=n_steps + 1, ..., rng=default_rng(seed))`.
    The prompt plus the decoded tokens must fit the model's context
    (`max_position_embeddings`).
    """
    return list(iter_steps(model, tokenizer, prompt, n_steps, temperature=temperature, top_k=top_k, top_p=top_p,
                           seed=seed, stop_ids=stop_ids))


def iter_steps(model: Transformer, tokenizer: BPETokenizer, prompt: str, n_steps: int, *,
               temperature: float = 0.0, top_k=None, top_p: float = 1.0, seed: int = 0, stop_ids=()):
    """`step_through`, one record at a time: an iterator of the same `Step` records.

    The inputs are checked now; each forward pass runs when its record is asked for (the prefill
    with the first), so a reader stepping forward costs one decode step per step. Asking for
    fewer than all gives the first records of `step_through` with the same arguments.
    """
    prompt_ids, n_steps = _check_inputs(model, tokenizer, prompt, n_steps)
    settings = dict(temperature=temperature, top_k=top_k, top_p=top_p)
    sampling.probs(np.zeros(1), **settings)  # check the sampling settings before the prefill runs
    rng = np.random.default_rng(positive_int("seed", seed, allow_zero=True))
    try:
        stop = {int(s) for s in stop_ids}
    except (TypeError, ValueError):
        raise TypeError(f"stop_ids must be an iterable of token ids, got {stop_ids!r}") from None
    return _passes(model, tokenizer, prompt, prompt_ids, n_steps, settings, rng, stop)


def _passes(model, tokenizer, prompt, prompt_ids, n_steps, settings, rng, stop):
    logits, cache = model.prefill(prompt_ids, max_seq_len=len(prompt_ids) + n_steps)  # (N, V): one pass over the whole prompt
    logits = logits[-1]  # (V,): only the last position predicts the next token
    input_ids, input_text = tuple(prompt_ids), prompt
    for index in range(n_steps + 1):
        token = int(sampling.sample(logits, rng=rng, **settings))
        step = Step(index, input_ids, cache.seq_len, cache.nbytes, _top_candidates(tokenizer, logits),
                    token, _text(tokenizer, token), input_text)
        yield step
        if token in stop or index == n_steps:
            return
        logits, cache = model.decode(token, cache)  # (V,): one token in, the cache grows by one
        input_ids, input_text = (token,), step.token_text
# --8<-- [end:step_through]


# -----------------------------------------------------------------------------
# presenting


def _check_steps(steps) -> None:
    if not isinstance(steps, list | tuple) or not steps or not all(isinstance(s, Step) for s in steps):
        raise ValueError(f"steps must be the non-empty list of Step records returned by step_through, got {steps!r:.80}")


def generated_ids(steps: list[Step]) -> list[int]:
    """The chosen tokens, in order (one per step)."""
    _check_steps(steps)
    return [s.token for s in steps]


def generated_text(tokenizer: BPETokenizer, steps: list[Step]) -> str:
    """The prompt followed by the generated tokens, decoded together (so split characters join up)."""
    if not isinstance(tokenizer, BPETokenizer):
        raise TypeError(f"tokenizer must be a chapter2.tokenizer.BPETokenizer, got {type(tokenizer).__name__}")
    _check_steps(steps)
    return tokenizer.decode([*steps[0].input_ids, *generated_ids(steps)])


def format_step(step: Step) -> str:
    """One line of the step table: what went in, the cache afterwards, the top candidates, the choice.

    "prefill 7 tokens | cache 7 tok, 14.3 kB | next: ' the' 0.31, ' a' 0.12, ... | chose ' the'"
    "decode 1: ' the' | cache 8 tok, 16.4 kB | next: ' model' 0.42, ... | chose ' model'"
    Sizes use decimal prefixes (kB = 1000 bytes), probabilities two decimals.
    """
    if not isinstance(step, Step):
        raise TypeError(f"step must be a Step from step_through, got {type(step).__name__}")
    n = len(step.input_ids)
    head = f"prefill {counted(n, 'token')}" if step.index == 0 else f"decode {step.index}: {step.input_text!r}"
    top = ", ".join(f"{c.text!r} {c.prob:.2f}" for c in step.top)
    return (f"{head} | cache {step.cache_length} tok, {nbytes(step.cache_bytes)} | next: {top} "
            f"| chose {step.token_text!r}")
