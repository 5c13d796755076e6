"""The context window budget of one request (chapter section 2.2).

A request holds up to three token sequences, and all of them must fit in the
model's context window (the most positions it attends over, e.g.
`max_position_embeddings` in its config.json):

    input_tokens      the prompt after the chat template: system, messages, tools
    reasoning_tokens  a reasoning model's thinking, generated before the answer
    output tokens     the answer, capped by the request's `max_tokens`

The server has to plan for the worst case, where the output runs all the way
to `max_tokens`, so a request fits when

    input_tokens + reasoning_tokens + max_tokens <= context_window.

Servers reject a request that cannot fit instead of truncating it: vLLM's
OpenAI-compatible server answers with an error that gives the window, the
prompt length and the requested completion length (see its
`_validate_input`, vllm/entrypoints/openai/serving_engine.py). Here the
reasoning sequence is its own term; some APIs count it inside the output cap
instead (OpenAI's `max_completion_tokens` "includes visible output tokens and
reasoning tokens",
https://platform.openai.com/docs/api-reference/chat/create), which is this
function with `reasoning_tokens=0` and the whole generation budget passed as
`max_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import positive_int

__all__ = ["ContextBudget", "context_budget"]


@dataclass(frozen=True)
class ContextBudget:
    """How one request uses the context window (all counts in tokens).

    `total` is the worst case input + reasoning + max_tokens; `remaining` is
    context_window - total (negative: over the window by that many);
    `max_output` is the largest max_tokens that would fit (0 when the input
    and reasoning alone fill the window); `explanation` says it in words.
    """

    context_window: int
    input_tokens: int
    reasoning_tokens: int
    max_tokens: int
    total: int
    remaining: int
    max_output: int
    fits: bool
    explanation: str

    def check(self) -> ContextBudget:
        """Return self if the request fits, else raise ValueError with the explanation."""
        if not self.fits:
            raise ValueError(self.explanation)
        return self


def context_budget(context_window: int, input_tokens: int, max_tokens: int | None,
                   reasoning_tokens: int = 0) -> ContextBudget:
    """Check that input + reasoning + max_tokens fit in `context_window` (see the module docstring).

    `max_tokens=None` means "as many as fit", the default of vLLM's server:
    the output may use the rest of the window.
    """
    for name, value in (("context_window", context_window), ("input_tokens", input_tokens),
                        ("max_tokens", max_tokens), ("reasoning_tokens", reasoning_tokens)):
        if isinstance(value, bool):
            raise TypeError(f"{name} must be an integer number of tokens, got {value!r}")
    context_window = positive_int("context_window", context_window)
    input_tokens = positive_int("input_tokens", input_tokens)
    reasoning_tokens = positive_int("reasoning_tokens", reasoning_tokens, allow_zero=True)
    used_before_output = input_tokens + reasoning_tokens
    room = context_window - used_before_output
    if max_tokens is None:
        max_tokens = max(room, 0)
        if max_tokens == 0:
            return _verdict(context_window, input_tokens, reasoning_tokens, 0)
    max_tokens = positive_int("max_tokens", max_tokens)
    return _verdict(context_window, input_tokens, reasoning_tokens, max_tokens)


def _verdict(window: int, n_in: int, n_reason: int, max_tokens: int) -> ContextBudget:
    total = n_in + n_reason + max_tokens
    remaining = window - total
    max_output = max(window - n_in - n_reason, 0)
    parts = f"{n_in:,} input" + (f" + {n_reason:,} reasoning" if n_reason else "") + f" + {max_tokens:,} max_tokens"
    fits = max_tokens >= 1 and remaining >= 0
    if fits:
        explanation = (f"Fits: {parts} = {total:,} of {window:,} tokens, "
                       f"{remaining:,} to spare in the worst case (output running to max_tokens).")
    elif max_output == 0:
        explanation = (f"Does not fit: the input{' and reasoning' if n_reason else ''} alone "
                       f"({n_in + n_reason:,} tokens) fill the {window:,}-token window and leave no room for output; "
                       f"shorten the prompt{' or the reasoning budget' if n_reason else ''}.")
    else:
        explanation = (f"Does not fit: {parts} = {total:,} tokens, {-remaining:,} more than the {window:,}-token window; "
                       f"lower max_tokens to at most {max_output:,} or shorten the prompt.")
    return ContextBudget(window, n_in, n_reason, max_tokens, total, remaining, max_output, fits, explanation)
