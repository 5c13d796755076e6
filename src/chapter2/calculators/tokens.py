"""Calculators of section 2.2 (tokens and the context window)."""

from __future__ import annotations

from ..context import INSIDE, ON_TOP, context_budget
from ..tokenizer import tiny
from ._registry import Field, Output, calculator

_VISIBLE = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def show_tokens(pieces: list[str]) -> str:
    """Tokens between bars, e.g. ['Hello', ',', ' world'] -> '|Hello|,| world|' (newlines and tabs as \\n, \\t)."""
    shown = ["".join(_VISIBLE.get(ch, ch) for ch in piece) for piece in pieces]
    return "|" + "|".join(shown) + "|" if shown else "(no tokens)"


@calculator(
    "tokenizer",
    title="Split text into tokens (the tiny model's byte-level BPE)",
    fields=[
        Field("text", "Text", "The KV cache grows by one token per decode step.", kind="text", max=2000),
    ],
    outputs=[
        Output("count", "Tokens"),
        Output("tokens", "Tokens, separated by |", free_text=True),
        Output("ids", "Token ids"),
    ],
)
def tokenizer_calc(text):
    """Tokenize with the BPE trained on this site's text (about a thousand entries; production vocabularies have over 100,000)."""
    tok = tiny()
    ids = tok.encode(text)
    n_bytes = len(text.encode("utf-8"))
    per_token = f", {n_bytes / len(ids):.2f} bytes per token" if ids else ""
    return {
        "count": f"{len(ids):,} tokens for {len(text):,} characters ({n_bytes:,} UTF-8 bytes{per_token})",
        "tokens": show_tokens([tok.token_text(i) for i in ids]),
        "ids": ", ".join(map(str, ids)) if ids else "(none)",
        "numbers": {"tokens": len(ids), "characters": len(text), "utf8_bytes (B)": n_bytes,
                    "bytes_per_token (B)": n_bytes / len(ids) if ids else None, "token_ids": list(ids),
                    "token_texts": [tok.token_text(i) for i in ids]},
    }


CONVENTION_OPTIONS = (
    (INSIDE, "inside max_tokens (OpenAI, Anthropic, vLLM)"),
    (ON_TOP, "on top of max_tokens (a separate reasoning budget)"),
)


@calculator(
    "context_budget",
    title="Does the request fit in the context window?",
    fields=[
        Field("context_window", "Context window (tokens)", 40960, min=1, max=1e8, integer=True, unit="tokens"),
        Field("input_tokens", "Input tokens (prompt after the chat template)", 30000, min=1, max=1e8, integer=True, unit="tokens"),
        Field("max_tokens", "max_tokens (cap on generated tokens)", 8192, min=1, max=1e8, integer=True, unit="tokens"),
        Field("reasoning_tokens", "Reasoning budget (tokens)", 4000, min=0, max=1e8, integer=True, unit="tokens"),
        Field("convention", "Reasoning counted", INSIDE, kind="select", options=CONVENTION_OPTIONS),
    ],
    outputs=[
        Output("verdict", "Verdict"),
        Output("remaining", "Tokens left in the worst case"),
        Output("max_output", "Largest max_tokens that fits"),
        Output("answer", "Room for the answer after a full reasoning budget"),
        Output("shares", "Fraction of the context window", kind="bars"),
    ],
)
def context_budget_calc(context_window, input_tokens, max_tokens, reasoning_tokens, convention):
    """input + max_tokens must fit in the window, reasoning counted inside max_tokens (the common convention);
    with a reasoning budget on top, input + reasoning + max_tokens must fit (chapter2.context.context_budget)."""
    b = context_budget(context_window, input_tokens, max_tokens, reasoning_tokens=reasoning_tokens,
                       convention=convention)
    thinking = b.reasoning_tokens if convention == ON_TOP else min(b.reasoning_tokens, b.max_tokens)
    return {
        "verdict": b.explanation,
        "remaining": f"{b.remaining:,}" if b.fits else f"none: over by {-b.remaining:,}",
        "max_output": f"{b.max_output:,}" if b.max_output else "0 (no room to generate)",
        "answer": f"{b.answer_tokens:,}" if b.answer_tokens else "0 (the reasoning budget can use all of max_tokens)",
        "shares": [[label, n / b.context_window] for label, n in (
            ("input", b.input_tokens), ("reasoning", thinking), ("answer", b.answer_tokens),
            ("left free", max(b.remaining, 0)))],
        "numbers": {"context_window (tokens)": b.context_window, "input (tokens)": b.input_tokens,
                    "max_tokens (tokens)": b.max_tokens, "reasoning_budget (tokens)": b.reasoning_tokens,
                    "reasoning_counted (tokens)": thinking, "worst_case_total (tokens)": b.total,
                    "remaining (tokens)": b.remaining, "over_the_window (tokens)": max(-b.remaining, 0),
                    "largest_max_tokens (tokens)": b.max_output,
                    "answer (tokens)": b.answer_tokens, "fits": "yes" if b.fits else "no",
                    **{f"share_{key} (fraction)": n / b.context_window for key, n in (
                        ("input", b.input_tokens), ("reasoning", thinking), ("answer", b.answer_tokens),
                        ("left_free", max(b.remaining, 0)))}},
    }
