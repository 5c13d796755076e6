"""The context window budget of one request (chapter section 2.2).

A request holds up to three token sequences, and all of them must fit in the
model's context window (the most positions it attends over, e.g.
`max_position_embeddings` in its config.json):

    input_tokens      the prompt after the chat template: system, messages, tools
    reasoning         a reasoning model's thinking, generated before the answer
    answer            the visible output

Reasoning tokens are generated tokens: the model samples them one decode step
at a time, exactly like the answer. So the common convention, and the default
here (`convention="inside"`), counts them inside the request's generation cap
`max_tokens`. The server plans for the worst case, where generation runs all
the way to the cap, so a request fits when

    input_tokens + max_tokens <= context_window

and a reasoning budget only says how much of `max_tokens` the thinking may
use; the rest is left for the answer. This is how

- OpenAI counts it: `max_completion_tokens` is "an upper bound for the number
  of tokens that can be generated for a completion, including visible output
  tokens and reasoning tokens"
  (https://platform.openai.com/docs/api-reference/chat/create); the reasoning
  guide says the same of `max_output_tokens` and that reasoning tokens take
  space in the context window (https://platform.openai.com/docs/guides/reasoning).
- Anthropic counts it: with extended thinking, `budget_tokens` must be less
  than `max_tokens` (https://platform.claude.com/docs/en/build-with-claude/extended-thinking),
  the thinking budget is a subset of `max_tokens`, and a request whose prompt
  tokens + `max_tokens` exceed the context window is rejected
  (https://platform.claude.com/docs/en/build-with-claude/context-windows).
- vLLM counts it: its OpenAI-compatible server rejects a request whose prompt
  length + `max_completion_tokens` (or `max_tokens`) exceeds `max_model_len`
  (`OpenAIServing._validate_input`, e.g.
  https://github.com/vllm-project/vllm/blob/v0.9.0/vllm/entrypoints/openai/serving_engine.py),
  and only afterwards splits the generated text into reasoning and answer with
  its reasoning parser (https://docs.vllm.ai/en/latest/features/reasoning_outputs/).

Some APIs instead let `max_tokens` cap only the answer and take a separate
reasoning budget on top of it; SiliconFlow, for one, documents its
`max_tokens` as excluding the chain of thought, sets it with `thinking_budget`,
and counts input, chain of thought and output against the context length
(https://docs.siliconflow.com/en/userguide/capabilities/reasoning). That is
`convention="on_top"`, where a request fits when

    input_tokens + reasoning_tokens + max_tokens <= context_window.

Servers reject a request that cannot fit instead of truncating it (vLLM's
error gives the window, the prompt length and the requested completion
length).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import positive_int

__all__ = ["ContextBudget", "context_budget", "INSIDE", "ON_TOP", "CONVENTIONS"]

INSIDE = "inside"
"""Reasoning counts inside `max_tokens` (OpenAI, Anthropic, vLLM): the default."""
ON_TOP = "on_top"
"""A reasoning budget on top of `max_tokens`, which caps only the answer (e.g. SiliconFlow)."""
CONVENTIONS = (INSIDE, ON_TOP)


@dataclass(frozen=True)
class ContextBudget:
    """How one request uses the context window (all counts in tokens).

    `convention` is "inside" (reasoning counted inside max_tokens) or "on_top"
    (a reasoning budget added to max_tokens). `reasoning_tokens` is the
    reasoning budget. `total` is the worst case the window must hold: input +
    max_tokens ("inside") or input + reasoning + max_tokens ("on_top");
    `remaining` is context_window - total (negative: over the window by that
    many); `max_output` is the largest max_tokens that would fit (0 when the
    input, plus the reasoning budget "on_top", fills the window);
    `answer_tokens` is the room left for the visible answer when the thinking
    uses its whole budget (max_tokens - reasoning "inside", at least 0;
    max_tokens "on_top"); `explanation` says it in words.
    """

    context_window: int
    input_tokens: int
    reasoning_tokens: int
    max_tokens: int
    convention: str
    total: int
    remaining: int
    max_output: int
    answer_tokens: int
    fits: bool
    explanation: str

    def check(self) -> ContextBudget:
        """Return self if the request fits, else raise ValueError with the explanation."""
        if not self.fits:
            raise ValueError(self.explanation)
        return self


def context_budget(context_window: int, input_tokens: int, max_tokens: int | None,
                   reasoning_tokens: int = 0, *, convention: str = INSIDE) -> ContextBudget:
    """Check that a request fits in `context_window` (see the module docstring).

    `convention="inside"` (default): input + max_tokens must fit, and
    `reasoning_tokens` is the part of max_tokens the thinking may use.
    `convention="on_top"`: input + reasoning_tokens + max_tokens must fit.
    `max_tokens=None` means "as many as fit", the default of vLLM's server:
    generation may use the rest of the window.
    """
    for name, value in (("context_window", context_window), ("input_tokens", input_tokens),
                        ("max_tokens", max_tokens), ("reasoning_tokens", reasoning_tokens)):
        if isinstance(value, bool):
            raise TypeError(f"{name} must be an integer number of tokens, got {value!r}")
    if not isinstance(convention, str):
        raise TypeError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    context_window = positive_int("context_window", context_window)
    input_tokens = positive_int("input_tokens", input_tokens)
    reasoning_tokens = positive_int("reasoning_tokens", reasoning_tokens, allow_zero=True)
    if max_tokens is None:
        max_tokens = max(_room(context_window, input_tokens, reasoning_tokens, convention), 0)
        if max_tokens == 0:
            return _verdict(context_window, input_tokens, reasoning_tokens, 0, convention)
    max_tokens = positive_int("max_tokens", max_tokens)
    return _verdict(context_window, input_tokens, reasoning_tokens, max_tokens, convention)


def _room(window: int, n_in: int, n_reason: int, convention: str) -> int:
    """The largest max_tokens that fits (may be <= 0)."""
    return window - n_in - (n_reason if convention == ON_TOP else 0)


def _verdict(window: int, n_in: int, n_reason: int, max_tokens: int, convention: str) -> ContextBudget:
    on_top = convention == ON_TOP
    total = n_in + max_tokens + (n_reason if on_top else 0)
    remaining = window - total
    max_output = max(_room(window, n_in, n_reason, convention), 0)
    answer = max_tokens if on_top else max(max_tokens - n_reason, 0)
    fits = max_tokens >= 1 and remaining >= 0
    if on_top:
        parts = f"{n_in:,} input" + (f" + {n_reason:,} reasoning" if n_reason else "") + f" + {max_tokens:,} max_tokens"
    else:
        parts = f"{n_in:,} input + {max_tokens:,} max_tokens"
    shorten = "shorten the prompt" + (" or the reasoning budget" if on_top and n_reason else "")
    if fits:
        explanation = (f"Fits: {parts} = {total:,} of {window:,} tokens, "
                       f"{remaining:,} to spare in the worst case (generation running to max_tokens).")
    elif max_output == 0:
        both = on_top and n_reason
        what, verbs = ("input and reasoning budget", ("fill", "leave")) if both else ("input", ("fills", "leaves"))
        explanation = (f"Does not fit: the {what} alone ({window - _room(window, n_in, n_reason, convention):,} "
                       f"tokens) {verbs[0]} the {window:,}-token window and {verbs[1]} no room to generate; {shorten}.")
    else:
        explanation = (f"Does not fit: {parts} = {total:,} tokens, {-remaining:,} more than the {window:,}-token "
                       f"window; lower max_tokens to at most {max_output:,} or {shorten}.")
    if not on_top and n_reason:
        if fits and answer:
            explanation += (f" The {n_reason:,} reasoning tokens count inside max_tokens, "
                            f"leaving {answer:,} for the answer.")
        elif fits:
            fix = (f"raise max_tokens above the budget (up to {max_output:,} fits)" if max_output > n_reason
                   else f"lower the budget below {max_tokens:,}")
            explanation += (f" The {n_reason:,}-token reasoning budget is not below max_tokens, so thinking may use "
                            f"all of it and leave no room for the answer; {fix}.")
        elif 0 < max_output <= n_reason:
            explanation += (f" A max_tokens of {max_output:,} is not above the {n_reason:,}-token reasoning budget, "
                            f"so lower the budget too.")
    return ContextBudget(window, n_in, n_reason, max_tokens, convention, total, remaining, max_output, answer,
                         fits, explanation)
