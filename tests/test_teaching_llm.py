"""Teaching structure of section 2.2's two pages: why first, things to remember last, a concept before its use,
one notation, collapsed detail.

Structural tests on the Markdown sources and the page layer. The reading length (at most about 12 screens at
1280 × 900 per page) is measured on the built site with scripts/page_metrics.py, not asserted here.
"""

from __future__ import annotations

import re

import pytest
from _teaching import DISPLAY_MATH, FACT, INLINE_MATH, ROOT
from _teaching import blocks as _blocks
from _teaching import chapter_letters as _chapter_letters
from _teaching import collapsed_lines as _collapsed_lines
from _teaching import letters as _letters
from _teaching import math as _math
from _teaching import section as _section
from _teaching import text as _text

from chapter2.pages import chapter_map, fact_refs

PAGES = ("llm-inference.md", "llm-architecture.md")

# Letters 2.2 uses in its equations beyond the chapter's notation table (chapter2.pages.notation), each with its
# one meaning on these pages. Reported for the table; none of them has another meaning in the chapter.
LOCAL_LETTERS = {
    "g": "a mixture of experts' router probabilities, one per expert",
    "r": "a LoRA adapter's rank",
    "p": "a token's sampling probability",
}
# k is the notation table's matmul inner width, local to section 2.1; a mixture of experts' experts per token is
# E_tok here, as the notation table says (top-k sampling is written `top_k`).
MATMUL_ONLY = "k"


# ------------------------------------------------------------------ two pages, in order


def test_section_2_2_is_two_pages_in_the_chapters_order_serving_first():
    """The chapter's order: the request (tokens, context, prefill and decode, sampling), then the model inside;
    each page has its own label (2.2a, 2.2b) in the navigation, the chapter map and its title."""
    sections = [s for s in chapter_map.sections() if s.title.startswith("2.2")]
    assert [s.page for s in sections] == ["llm-inference.md", "llm-architecture.md"]
    assert [s.title[:4] for s in sections] == ["2.2a", "2.2b"]
    nav = (ROOT / "mkdocs.yml").read_text()
    assert nav.index("llm-inference.md") < nav.index("llm-architecture.md") < nav.index("image-generation.md")
    assert "2.2a " in nav and "2.2b " in nav
    for page, label in zip(PAGES, ("# 2.2a ", "# 2.2b "), strict=True):
        assert _text(page).startswith(label)


# ------------------------------------------------------------------ why first, things to remember last


@pytest.mark.parametrize("page", PAGES)
def test_page_opens_with_why_an_inference_engineer_should_care(page):
    first = _blocks(page)[0]
    assert first.startswith("**Why this matters.**"), first[:80]
    assert "?" in first, "the opening states the question in plain words"
    typed = [w for w in FACT.sub("", first).replace("Llama 3.1 8B", "").split() if re.match(r"[(\[]*\d", w)]
    assert len(fact_refs(first)) + len(typed) <= 1, "at most one number before the terms exist"


@pytest.mark.parametrize("page", PAGES)
def test_page_closes_with_three_to_five_things_to_remember(page):
    text = _text(page)
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[-1] == "Things to remember", headings
    section = _section(page, "Things to remember")
    items = re.findall(r"^- ", section, re.M)
    assert 3 <= len(items) <= 5, len(items)
    # every number in the list is a fact (or a symbol inside math), never typed by hand
    plain = INLINE_MATH.sub("", FACT.sub("", section))
    plain = re.sub(r"\]\([^)]*\)", "]", plain)
    plain = re.sub(r"[A-Za-z]+[0-9][\w.-]*|Llama 3\.1 8B|Llama 3\.1", "", plain)  # names: DeepSeek-V3, Qwen3-235B-A22B
    assert not re.search(r"\d", plain.replace("## Things to remember", "")), plain
    assert len(fact_refs(section)) >= 1  # one headline number at least, not a list of them


# ------------------------------------------------------------------ one notation


@pytest.mark.parametrize("page", PAGES)
def test_pages_use_only_the_chapters_symbols_and_their_own_few(page):
    used = set().union(*(_letters(m) for m in _math(page)))
    unknown = used - _chapter_letters() - set(LOCAL_LETTERS) - {"e"}
    assert not unknown, f"{page} uses symbols neither the notation table nor LOCAL_LETTERS define: {sorted(unknown)}"
    assert not set(LOCAL_LETTERS) & _chapter_letters(), "a local letter the chapter already uses for something else"


@pytest.mark.parametrize("page", PAGES)
def test_no_letter_means_two_things_on_these_pages(page):
    """The old page used T for tokens (T is the temperature), E for the embedding table and an expectation (E counts
    experts), V for the vocabulary (V is the values), S for the chosen experts (S is the scores), w for their
    weights (w is a window), r for both the router and the LoRA rank, B and A for LoRA's factors, q/k/v for one
    token's query, key and value (k counts experts per token) and ε in RMSNorm (ε is 2.3's noise)."""
    maths = _math(page)
    text = "\n".join(maths)
    assert not re.search(r"\^T\b|\bT\s*\\text\{ tokens", text)
    assert "\\operatorname{E}" not in text and "E[" not in text
    assert not re.search(r"\(N, V\)|\(V,\)", text)
    assert not re.search(r"(?<![\\\w])(q|k|v|s|a|o)_(i|j|\{ij\})", text), "one token's vectors are rows Q_i, K_j, V_j"
    assert "\\varepsilon" not in text and "W + BA" not in text
    assert MATMUL_ONLY not in set().union(*(_letters(m) for m in maths)), "experts per token are E_tok, not k"


@pytest.mark.parametrize("page", PAGES)
def test_each_page_links_the_notation_table_before_its_first_display_equation(page):
    text = FACT.sub("1", _text(page))
    link = text.find("(chapter-map.md#notation)")
    assert link > 0, f"{page} does not link the notation table"
    first = min(m.start() for m in DISPLAY_MATH.finditer(text))
    assert link < first


# ------------------------------------------------------------------ readable length


@pytest.mark.parametrize("page", PAGES)
def test_source_listings_and_snippets_are_collapsed(page):
    """Source listings and runnable snippets sit in collapsible blocks. A calculator is in the running text, or in
    a workbench: a collapsible block titled "Workbench: <the question it answers>" (the browser tests open it)."""
    lines = _text(page).split("\n")
    collapsed = _collapsed_lines(page)
    for i, line in enumerate(lines):
        if "--8<--" in line or "<!-- snippet:" in line:
            assert i in collapsed, f"{page}:{i + 1}: outside a collapsible block: {line.strip()}"
        if "<!-- calculator:" in line and i in collapsed:
            opening = next(j for j in range(i, -1, -1) if lines[j].startswith(("<details", "??? ")))
            title = lines[opening + 1] if lines[opening].startswith("<details") else lines[opening]
            assert re.search(r'(<summary>|\?\?\? note ")Workbench: ', title), (
                f"{page}:{i + 1}: a calculator inside a collapsible block that is not a workbench: {title.strip()}")


def test_long_tables_and_side_paths_are_collapsed():
    arch = _text("llm-architecture.md").split("\n")
    serve = _text("llm-inference.md").split("\n")
    for lines, collapsed, marker in (
        (arch, _collapsed_lines("llm-architecture.md"), "llm_architecture.model_configs_table"),
        (arch, _collapsed_lines("llm-architecture.md"), "llm_architecture.deepseek_v3_absorbed_intensity"),
        (arch, _collapsed_lines("llm-architecture.md"), "llm_architecture.deepseek_v3_mixed_intensity"),
        (serve, _collapsed_lines("llm-inference.md"), "platform.openai.com/docs/api-reference"),
    ):
        at = next(i for i, line in enumerate(lines) if marker in line)
        assert at in collapsed, marker
