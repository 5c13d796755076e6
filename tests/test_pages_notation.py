"""The chapter's notation table (chapter2.pages.notation), shown on docs/chapter-map.md#notation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chapter2.pages import notation

ROOT = Path(__file__).resolve().parents[1]


def test_symbol_table_lists_every_symbol_once_with_its_sections():
    table = notation.symbol_table()
    assert table.header == ("Symbol", "Meaning", "Sections")
    assert len(table.rows) == len(notation.SYMBOLS)
    text = str(table)
    # the rows the pages lean on, written out
    assert "| \\(P\\) | parameters (a count) | 2.4 |" in text
    assert "| \\(A\\) | attention weights \\(\\operatorname{softmax}(S)\\): each row sums to 1 | 2.2, 2.4, 2.5 |" in text
    assert "| \\(k\\) | a matmul's inner width" in text and "| 2.1 only |" in text  # local to 2.1, and it says so
    assert "| \\(b\\) | bytes per number: 2 in FP16 or BF16, 1 in FP8 | 2.2, 2.4, 2.5 |" in text
    assert "| \\(\\mu_i\\), \\(\\ell_i\\) |" in text and "`m_i`, `l_i` in the paper" in text


def test_symbols_split_and_look_up():
    assert notation.symbols("Q, K, V") == ["Q", "K", "V"]
    assert notation.meaning_of("H_\\text{kv}").meaning == "key/value heads per layer"
    assert notation.meaning_of("c").tex == "x, W, c, y"
    with pytest.raises(KeyError, match="no symbol"):
        notation.meaning_of("Z")


def test_attention_steps_are_renamed_to_the_chapters_letters():
    assert notation.step_name("P = softmax(S)") == "A = softmax(S)"
    assert notation.step_name("O = P V (on chip)") == "O = AV (on chip)"
    assert notation.operands("P, V") == "A, V" and notation.operands("Q, K") == "Q, K"
    with pytest.raises(KeyError):
        notation.step_name("a step the roofline has renamed")


def test_the_map_page_shows_the_table_under_a_notation_heading():
    page = (ROOT / "docs" / "chapter-map.md").read_text()
    at = page.index("## Notation")
    assert "{{ fact: notation.symbol_table }}" in page[at:]


def _math_letters(page: str) -> set[str]:
    """Single letters written in a page's TeX (inline and display), facts and \\text{...} words left out."""
    text = (ROOT / "docs" / page).read_text()
    text = re.sub(r"\{\{.*?\}\}", "", text)
    maths = re.findall(r"\\\((.+?)\\\)|\$\$(.+?)\$\$", text, re.S)
    out = set()
    for inline, display in maths:
        tex = re.sub(r"\\(text|operatorname|mathrm)\{[^}]*\}|\\[A-Za-z]+", " ", inline or display)
        out |= set(re.findall(r"(?<![A-Za-z])([A-Za-z])(?![A-Za-z])", tex))
    return out


@pytest.mark.parametrize("page", ["llm-inference.md", "llm-architecture.md"])
def test_section_2_2_writes_only_symbols_the_table_lists_for_it(page):
    """Issue 24: 2.2.3 writes S, A and O, so the table lists 2.2 for them; experts per token are E_tok (the table's
    symbol), not k, which is section 2.1's matmul width."""
    letters = _math_letters(page)
    assert "k" not in letters, f"{page} writes k; experts per token are E_tok"
    for symbol in ("S", "A", "O"):
        if symbol in letters:
            assert "2.2" in notation.meaning_of(symbol).used_in, symbol
