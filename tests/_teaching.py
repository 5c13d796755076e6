"""Shared by the teaching-structure tests (tests/test_teaching.py, tests/test_teaching_llm.py): reading a page's
Markdown source for its blocks, sentences, sections, collapsed lines and the letters of its math.
"""

from __future__ import annotations

import re
from pathlib import Path

from chapter2.pages import notation

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

FACT = re.compile(r"\{\{\s*fact:\s*[\w.]+\s*\}\}")
INLINE_MATH = re.compile(r"\\\((.+?)\\\)", re.S)
DISPLAY_MATH = re.compile(r"^\$\$\n(.*?)\n\$\$$", re.S | re.M)


def text(page: str) -> str:
    """The Markdown source of docs/`page`."""
    return (DOCS / page).read_text()


def blocks(page: str) -> list[str]:
    """The page's top-level Markdown blocks (separated by blank lines), title excluded."""
    body = text(page).split("\n", 1)[1]
    return [b.strip("\n") for b in re.split(r"\n\s*\n", body) if b.strip()]


def sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences, with links, math and facts reduced to placeholders and the bold
    "Why this matters." lead left out, so that only the prose's own full stops split it."""
    plain = FACT.sub("N", INLINE_MATH.sub("x", re.sub(r"\]\([^)]*\)", "]", paragraph)))
    plain = re.sub(r"\*\*Why this matters\.\*\*", "", plain)
    plain = re.sub(r"\b(\d)\.(\d)", r"\1_\2", plain)  # "Llama 3.1" is not two sentences
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(plain.split())) if s.strip()]


def section(page: str, heading: str) -> str:
    """The page's `## heading` section, up to the next `## ` heading."""
    source = text(page)
    start = source.index(f"\n## {heading}\n")
    nxt = source.find("\n## ", start + 1)
    return source[start:] if nxt < 0 else source[start:nxt]


def collapsed_lines(page: str) -> set[int]:
    """Line numbers inside collapsible blocks: `??? note` blocks (their indented body) and <details> ... </details>."""
    lines = text(page).split("\n")
    inside, in_admonition, in_details = set(), False, False
    for i, line in enumerate(lines):
        if in_details:
            inside.add(i)
            in_details = not line.startswith("</details>")
            continue
        if line.startswith("<details"):
            in_details = True
            inside.add(i)
            continue
        if line.startswith("??? "):
            in_admonition = True
            inside.add(i)
            continue
        if in_admonition:
            if line.strip() and not line.startswith("    "):
                in_admonition = False
            else:
                inside.add(i)
    return inside


def math(page: str) -> list[str]:
    """Every TeX fragment of the page, inline and display, with its facts written as 1."""
    source = FACT.sub("1", text(page))
    return INLINE_MATH.findall(source) + DISPLAY_MATH.findall(source)


def letters(tex: str, *, bold_apart: bool = False) -> set[str]:
    """The single-letter symbols of a TeX fragment: words in \\text{...} and commands left out.

    With `bold_apart`, a bold letter (\\mathbf{A}) is its own symbol, written BOLDA: the bold Mamba letters of
    section 2.5 are not the plain A, B, D (attention weights, batch, hidden size). Without it a bold letter counts
    as the plain one.
    """
    tex = re.sub(r"\\(text|operatorname|mathrm)\{[^{}]*\}(_\{[^{}]*\}|_\w)?", " ", tex)  # names, with their subscripts
    if bold_apart:
        tex = re.sub(r"\\mathbf\{(\w)\}", r"BOLD\1", tex)
    tex = re.sub(r"\\[A-Za-z]+", " ", tex)
    return set(re.findall(r"(?<![A-Za-z])(BOLD[A-Z]|[A-Za-z])(?![A-Za-z])", tex))


def chapter_letters(*, bold_apart: bool = False) -> set[str]:
    """The letters of every symbol in the chapter's notation table (chapter2.pages.notation)."""
    found = set()
    for row in notation.SYMBOLS:
        for symbol in notation.symbols(row.tex):
            found |= letters(symbol, bold_apart=bold_apart)
    return found
