"""Calculator of section 2.2 (LLM inference mechanics): prefill and decode, step by step.

Type a prompt; the shipped tiny model (`chapter2/data/tiny_lm`, loaded once
and kept in memory) prefills it in one pass, then decodes `n_steps` tokens one
at a time. Every pass is one line of the table: the tokens that went in, the
KV cache afterwards (one entry per token seen), the five likeliest next tokens
and the one chosen. All of it is `chapter2.stepper.step_through`.
"""

from __future__ import annotations

from .. import stepper
from ..format import nbytes
from ._registry import Field, FieldError, Output, calculator

MAX_STEPS = 24  # a table that fits on a page, and well under 200 ms in CPython
MAX_PROMPT_CHARS = 400
SEED = 0  # draws at temperature > 0 are reproducible: numpy default_rng(0)


@calculator(
    "prefill_decode",
    title="Prefill, then decode: the tiny model one token at a time",
    fields=[
        Field("prompt", "Prompt", "The KV cache stores the keys and values", kind="text", max=MAX_PROMPT_CHARS,
              help="any text; the tiny model was trained on this site's pages"),
        Field("n_steps", "Decode steps", 8, kind="range", min=1, max=MAX_STEPS, step=1, integer=True),
        Field("temperature", "Temperature", 0.0, kind="range", min=0, max=2, step=0.05,
              help="0 = greedy; above 0, seeded draws"),
    ],
    outputs=[
        Output("text", "Prompt and generated text", free_text=True),
        Output("steps", "One line per forward pass", free_text=True),
        Output("cache", "KV cache after the last step"),
        Output("top", "Last step: the model's five likeliest next tokens", kind="bars"),
    ],
)
def prefill_decode_calc(prompt, n_steps, temperature):
    """Prefill the prompt, decode n_steps tokens (stopping early at <|endoftext|>), show every pass."""
    if not prompt.strip():
        raise FieldError("prompt", "Prompt: enter some text (prefill needs at least one token)")
    model, tokenizer = stepper.load()
    n_prompt, context = len(tokenizer.encode(prompt)), model.config.max_position_embeddings
    if context is not None and n_prompt + n_steps > context:
        raise FieldError("prompt", f"Prompt: {n_prompt} tokens + {n_steps} decode steps = {n_prompt + n_steps} "
                                   f"positions, more than the model's context of {context}; shorten the prompt "
                                   f"or decode fewer steps")
    stop = [tokenizer.special_tokens["<|endoftext|>"]] if "<|endoftext|>" in tokenizer.special_tokens else []
    steps = stepper.step_through(model, tokenizer, prompt, n_steps, temperature=temperature, seed=SEED, stop_ids=stop)
    last = steps[-1]
    lines = [stepper.format_step(s) for s in steps]
    if len(steps) < n_steps + 1:
        lines.append(f"stopped: the model chose {last.token_text!r} (end of text) after {len(steps) - 1} decode steps")
    per_token = model.new_cache().bytes_per_token
    served = model.config.kv_cache_bytes(last.cache_length, dtype="bf16")  # what a serving engine would store
    return {
        "text": stepper.generated_text(tokenizer, steps),
        "steps": "\n".join(lines),
        "cache": (f"{last.cache_length} tokens x {per_token:,} B/token = {nbytes(last.cache_bytes)} "
                  f"({model.dtype.name} here; {nbytes(served)} in bf16, as served)"),
        "top": [[repr(c.text), c.prob] for c in last.top],
    }
