"""Every term the chapter leans on is defined where it is used (issue 24).

The glossary page (docs/glossary.md) defines each term; includes/abbreviations.md, appended to every page by
pymdownx.snippets (mkdocs.yml, `auto_append`), wraps each use of a term in an `<abbr>` whose title is its
definition. On the built site, the first use of each term on every page must carry its definition at hand:
inside an `<abbr title>` or a link to the glossary.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ABBREVIATIONS = ROOT / "includes" / "abbreviations.md"
GLOSSARY = ROOT / "docs" / "glossary.md"

# term -> how a use of it is written (case-sensitive; "dense" in lower case, as the pages use the word)
TERMS = {
    "FP16": r"(?<![\w-])FP16(?![\w-])",
    "BF16": r"(?<![\w-])BF16(?![\w-])",
    "FP8": r"(?<![\w-])FP8(?![\w-])",
    "FP4": r"(?<![\w-])FP4(?![\w-])",
    "HBM": r"(?<![\w-])HBM\d?(?![\w-])",
    "SRAM": r"(?<![\w-])SRAM(?![\w-])",
    "SM": r"(?<![\w-])SMs?(?![\w-])",
    "tensor core": r"(?<![\w-])[Tt]ensor[ -]cores?(?![\w])",
    "FLOP": r"(?<![\w/-])FLOPs?(?![\w/])",
    "FLOP/s": r"(?<![\w-])FLOP/s(?![\w])",
    "TTFT": r"(?<![\w-])TTFT(?![\w-])",
    "TPOT": r"(?<![\w-])TPOT(?![\w-])",
    "RoPE": r"(?<![\w-])RoPE(?![\w-])",
    "GQA": r"(?<![\w-])GQA(?![\w-])",
    "MLA": r"(?<![\w-])MLA(?![\w-])",
    "MoE": r"(?<![\w-])MoEs?(?![\w-])",
    "KV cache": r"(?<![\w-])KV\s+cache(?![\w-])",
    "dense": r"(?<![\w-])dense(?![\w-])",
}
GLOSSARY_IDS = {"FP16": "fp16", "BF16": "bf16", "FP8": "fp8", "FP4": "fp4", "HBM": "hbm", "SRAM": "sram",
                "SM": "sm", "tensor core": "tensor-core", "FLOP": "flop", "FLOP/s": "flop", "TTFT": "ttft",
                "TPOT": "tpot", "RoPE": "rope", "GQA": "gqa", "MLA": "mla", "MoE": "moe", "KV cache": "kv-cache",
                "dense": "dense"}

_SKIP_TAGS = {"code", "pre", "svg", "math", "script", "style", "figure", "form", "button", "select", "textarea",
              "output", "title"}
_SKIP_CLASSES = {"c2-calc", "c2-snippet", "c2-figure", "c2-chart", "c2-bars", "katex", "katex-display",
                 "arithmatex", "highlight", "headerlink"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


def abbreviations() -> dict[str, str]:
    """term -> definition, from includes/abbreviations.md (`*[TERM]: definition`)."""
    return dict(re.findall(r"^\*\[(.+?)\]: (.+)$", ABBREVIATIONS.read_text(), re.M))


class _Uses(HTMLParser):
    """Text runs of the first `<article>`, each with whether a definition is at hand (abbr or glossary link)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []
        self.in_article = self.done = False
        self.runs: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        if self.done or tag in _VOID:
            return
        if tag == "article" and not self.in_article:
            self.in_article, self.stack = True, [("article", False, False)]
            return
        if not self.in_article:
            return
        a = dict(attrs)
        skip0, defined0 = self.stack[-1][1:]
        skip = skip0 or tag in _SKIP_TAGS or bool(set((a.get("class") or "").split()) & _SKIP_CLASSES)
        defined = defined0 or (tag == "abbr" and bool(a.get("title"))) or (
            tag == "a" and "glossary" in (a.get("href") or ""))
        self.stack.append((tag, skip, defined))

    def handle_endtag(self, tag):
        if not self.in_article or self.done or tag in _VOID:
            return
        while self.stack and self.stack.pop()[0] != tag:
            pass
        self.done = not self.stack

    def handle_data(self, data):
        if self.in_article and not self.done and self.stack and not self.stack[-1][1]:
            self.runs.append((data, self.stack[-1][2]))


def undefined_first_uses(html: str) -> list[str]:
    """The terms whose first use in the page's article has no definition at hand, with the text around it."""
    parser = _Uses()
    parser.feed(html)
    seen, bad = set(), []
    for text, defined in parser.runs:
        for term, pattern in TERMS.items():
            if term in seen:
                continue
            m = re.search(pattern, text)
            if m:
                seen.add(term)
                if not defined:
                    bad.append(f"{term}: …{' '.join(text[max(0, m.start() - 50):m.end() + 30].split())}…")
    return bad


def _md_pages() -> list[str]:
    """Every Markdown page of the site's navigation, as its built path (notebooks are built by nbconvert)."""
    nav = yaml.safe_load(re.sub(r"!!python/\S+", "", (ROOT / "mkdocs.yml").read_text()))["nav"]
    out = []

    def walk(items):
        for item in items:
            for value in item.values():
                if isinstance(value, list):
                    walk(value)
                elif value.endswith(".md"):
                    out.append("index.html" if value == "index.md" else f"{value[:-3]}/index.html")

    walk(nav)
    return out


def test_every_listed_term_has_an_abbreviation_and_a_glossary_entry():
    abbr = abbreviations()
    glossary = GLOSSARY.read_text()
    for term, anchor in GLOSSARY_IDS.items():
        assert term in abbr and len(abbr[term].split()) >= 5, f"{term}: no definition in {ABBREVIATIONS.name}"
        assert f"{{ #{anchor} }}" in glossary, f"{term}: no glossary entry #{anchor}"


def test_the_checker_catches_a_bare_first_use():
    page = ('<article><p>The <abbr title="the keys and values">KV cache</abbr> grows; the KV cache</p>'
            '<p>MoE and <a href="../glossary/#gqa">GQA</a>, then <code>FP8</code>, FP8</p></article>')
    bad = undefined_first_uses(page)
    assert [b.split(":")[0] for b in bad] == ["MoE", "FP8"]


@pytest.mark.slow
@pytest.mark.parametrize("page", _md_pages())
def test_each_terms_first_use_carries_its_definition(site_dir, page):
    bad = undefined_first_uses((site_dir / page).read_text())
    assert not bad, f"{page}: first uses without a definition at hand: {bad}"


def test_format_widths_are_numpys_and_bfloat16s():
    """Pinned against the formats' definitions: IEEE 754 binary16 has a 5-bit exponent and a 10-bit stored
    mantissa (2 bytes); binary32 an 8-bit exponent (4 bytes); bfloat16 keeps binary32's exponent and 7 of its
    mantissa bits (1 + 8 + 7 = 16)."""
    from chapter2.pages import glossary as gl

    assert (gl.fp16_exponent_bits().value, gl.fp16_mantissa_bits().value, gl.fp16_bytes().value) == (5, 10, 2)
    assert (gl.fp32_exponent_bits().value, gl.fp32_bytes().value) == (8, 4)
    assert 1 + gl.fp32_exponent_bits().value + gl.bf16_mantissa_bits().value == 16
    glossary = GLOSSARY.read_text()
    for name in ("fp32_bytes", "fp16_bytes", "fp16_exponent_bits", "fp16_mantissa_bits", "fp32_exponent_bits",
                 "bf16_mantissa_bits"):
        assert f"{{{{ fact: glossary.{name} }}}}" in glossary, name
    prose = re.sub(r"\{\{.*?\}\}|\\\(.*?\\\)|\{ #[\w-]+ \}|\]\([^)]*\)", "", glossary)
    typed = re.findall(r"(?<![\w.-])\d[\d.,]*(?![\w-])", prose)  # a bare number, not part of a name (FP16, H100)
    assert not typed, f"every number on the glossary is a fact or part of a name: {typed}"
