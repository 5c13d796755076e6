"""The page layer's contract: pages name facts, facts are tested, map and cards quote the pages.

Each section's numbers are pinned against independent computations in
tests/test_pages_<section>.py; this file checks the wiring of all of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chapter2 import format as fmt
from chapter2 import pages
from chapter2.pages import chapter_map, fact_refs, glossary
from chapter2.pages.recall import all_cards

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES_MD = sorted(DOCS.glob("*.md"))
SECTIONS = chapter_map.sections()


def _page_refs(path: Path) -> list[str]:
    return fact_refs(path.read_text())


def _all_refs() -> set[str]:
    refs = {r for p in PAGES_MD for r in _page_refs(p)}
    for s in SECTIONS:
        refs |= {r for leaf in s.leaves for r in fact_refs(leaf.text)}
        refs |= {r for card in s.cards for r in fact_refs(card.answer)}
    refs |= {r for t in glossary.TERMS for r in fact_refs(t.definition + t.example)}  # the glossary's entries
    return refs


@pytest.mark.parametrize("path", PAGES_MD, ids=lambda p: p.name)
def test_pages_only_name_facts(path):
    """No expression, call or formatting in Markdown: the only double-brace form is {{ fact: NAME }}."""
    text = path.read_text()
    for m in re.finditer(r"\{\{(.*?)\}\}", text, re.S):
        assert re.fullmatch(r"\s*fact:\s*[a-z_]+\.[a-z0-9_]+\s*", m.group(1)), f"{path.name}: {m.group(0)!r}"


def test_every_reference_names_a_fact():
    known = set(pages.names())
    missing = sorted(_all_refs() - known)
    assert not missing, f"pages, leaves or cards refer to unknown facts: {missing}"


def test_every_fact_is_shown_somewhere():
    unused = sorted(set(pages.names()) - _all_refs())
    assert not unused, f"facts no page, leaf or card shows (delete them or show them): {unused}"


def _render_problem(name: str) -> str | None:
    """What is wrong with fact `name` as page text (None: nothing)."""
    value = pages.value(name)
    if not isinstance(value, (fmt.Shown, str, int)):
        return f"{name} returns {type(value).__name__}"
    text = pages.text(name)
    if not text or "nan" in text.split() or "inf" in text.split() or "{{" in text:
        return f"{name} shows {text!r}"
    return None


@pytest.mark.parametrize("section", sorted({n.split(".", 1)[0] for n in pages.names()}))
def test_every_fact_renders_as_page_text(section):
    """Every fact of the section (one case per section, not per fact): a format value, a str or an int,
    shown as text with no nan, inf or braces."""
    problems = [p for n in pages.names() if n.split(".", 1)[0] == section and (p := _render_problem(n))]
    assert not problems, "\n".join(problems)


def test_every_fact_has_a_unit_test():
    """A fact is unit-tested when a tests/test_pages_*.py file names it (calls or asserts it)."""
    tested = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_pages_*.py"))
    untested = [n for n in pages.names() if not re.search(rf"\b{n.split('.', 1)[1]}\b", tested)]
    assert not untested, f"facts without a test in tests/test_pages_*.py: {untested}"


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.module)
def test_leaves_and_cards_quote_facts_their_page_shows(section):
    """The map, the cards and the pages cannot contradict each other: a number is one fact, shown on its page."""
    shown = set(_page_refs(DOCS / section.page))
    for item in [*section.leaves, *section.cards]:
        text = getattr(item, "text", None) or item.answer
        for ref in fact_refs(text):
            assert ref in shown, f"{section.page}: {ref} is quoted by the map or a card but not shown on the page"


def test_cards_have_unique_stable_ids():
    ids = [c.id for _, c in all_cards()]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids), "ids are localStorage keys and HTML ids"


def test_unknown_fact_names_the_section_and_what_it_defines():
    with pytest.raises(pages.UnknownFact, match="neural_networks.nope.*defines"):
        pages.value("neural_networks.nope")
    with pytest.raises(TypeError, match="fact name"):
        pages.value(42)


def test_facts_need_a_docstring_and_a_section_module():
    def undocumented():
        return fmt.Int(1)

    undocumented.__module__ = "chapter2.pages.neural_networks"
    with pytest.raises(ValueError, match="docstring"):
        pages.fact(undocumented)
    undocumented.__doc__ = "documented"
    undocumented.__module__ = "somewhere.else"
    with pytest.raises(ValueError, match="not a section"):
        pages.fact(undocumented)


def test_one_home_per_fact_name():
    """A fact has one home: no two sections define a fact of the same name (a page names another section's
    fact there, with its one rounding, instead of keeping a copy that could drift)."""
    homes: dict[str, list[str]] = {}
    for name in pages.names():
        section, short = name.split(".", 1)
        homes.setdefault(short, []).append(section)
    twice = {short: sections for short, sections in homes.items() if len(sections) > 1}
    assert not twice, f"facts defined in several sections: {twice}"


def test_page_modules_share_constants_not_helpers():
    """A section module imports from another section module only its constants (UPPER_CASE names, such as the
    worked example's sizes); a helper two pages use (rounding, a config's text) lives in chapter2.format. The
    summary modules are not sections of the chapter: the notation is the chapter's symbols as data, which every page
    writes in (its `step_name` and `operands` translate the roofline's step names into it), and the map and the
    recall page gather the sections."""
    import ast

    section_modules = set(pages.SECTIONS) - {"notation", "chapter_map", "recall", "glossary"}
    borrowed = []
    for path in sorted((ROOT / "src" / "chapter2" / "pages" / f"{m}.py") for m in section_modules):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level != 1:
                continue
            if node.module in section_modules:
                borrowed += [f"{path.stem}: {node.module}.{a.name}" for a in node.names if not a.name.isupper()]
            elif node.module is None:
                borrowed += [f"{path.stem}: {a.name}" for a in node.names if a.name in section_modules]
    assert not borrowed, f"helpers imported from another page's module: {borrowed}"
