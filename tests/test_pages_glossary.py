"""Every term the chapter leans on is a tap away (issues 24 and 29).

The glossary's entries live in `chapter2.pages.glossary` (TERMS); docs/hooks/glossary_links.py renders them as
the glossary page, gives every page the `<abbr>` of each abbreviation, and links the first use of every term on
every page to its entry, with the definition as its title. These tests pin the entries (count, the terms the
issues name, plain one-sentence definitions, the facts they quote), the linker on small pages worked by hand,
and, on the built site, that each term's first use in running prose is linked and every link lands.
"""

from __future__ import annotations

import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "hooks"))

import glossary_links  # noqa: E402

from chapter2 import pages  # noqa: E402
from chapter2.pages import glossary as gl  # noqa: E402

GLOSSARY = ROOT / "docs" / "glossary.md"
CONFIGS = ROOT / "src" / "chapter2" / "data" / "configs"

# The terms issue 29 names as missing ("Terms are not a tap away"), and the chapter's vocabulary its glossary
# task lists: each must be an entry (its name) or a form an entry matches.
ISSUE_29_TERMS = ["prefill", "decode", "token", "logits", "ops:byte", "arithmetic intensity", "memory bound",
                  "compute bound", "roofline", "attention", "query", "key", "value", "softmax", "latent", "VAE",
                  "denoiser", "guidance", "FlashAttention", "sliding window", "state-space model", "KV cache"]
CHAPTER_TERMS = ["embedding", "hidden state", "head", "GQA", "MLA", "MoE", "expert", "router", "top-k", "top-p",
                 "temperature", "logit bias", "TTFT", "TPOT", "batch", "HBM", "SRAM", "tensor core", "FLOP",
                 "bandwidth", "tile", "online softmax", "Mamba", "hybrid", "CFG", "few-step", "distillation",
                 "FP16", "BF16", "FP8", "FP4", "SM", "RoPE", "dense"]
# Issue 32's expert findings for the glossary, each with words its entry must contain.
ISSUE_32_FINDINGS = {"decoupled-rope-key": ["RoPE", "latent"],
                     "moe": ["DeepSeek-V3", "dense", "Llama 4", "alternates"],
                     "temperature": ["not every API", "seed"],
                     "autoregressive-image-model": ["per step", "MaskGIT", "VAR"]}


def _entry(term: str):
    return next((t for t in gl.TERMS if t.name.lower() == term.lower() or t.pattern().fullmatch(term)), None)


def test_the_glossary_has_at_least_sixty_entries_with_every_term_the_issues_name():
    assert len(gl.TERMS) >= 60
    missing = [term for term in ISSUE_29_TERMS + CHAPTER_TERMS if _entry(term) is None]
    assert not missing, f"no glossary entry for {missing}"
    anchors = [t.anchor for t in gl.TERMS]
    assert len(anchors) == len(set(anchors))
    for anchor, words in ISSUE_32_FINDINGS.items():
        entry = next(t for t in gl.TERMS if t.anchor == anchor)
        for word in words:
            assert word in entry.definition + entry.example, f"{anchor}: {word!r}"


def test_no_page_calls_temperature_zero_deterministic():
    """Issue 32's finding: temperature 0 removes the draw, not the run-to-run differences of a batched server
    (the glossary's temperature entry says why); 2.2a's takeaway called greedy decoding 'a deterministic argmax'."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert "deterministic argmax" not in text and "temperature 0 is deterministic" not in text, page.name


def test_each_definition_is_one_plain_sentence_and_quotes_only_known_facts():
    known = set(pages.names())
    for t in gl.TERMS:
        plain = pages.FACT_REF.sub("N", t.definition)
        assert plain[0].isupper() or plain[0].isdigit() or plain.startswith("bfloat16"), t.name
        assert plain.endswith(".") and ". " not in plain[:-1], f"{t.name}: one sentence, got {plain!r}"
        assert 8 <= len(plain.split()) <= 45, f"{t.name}: {len(plain.split())} words"
        assert not re.search(r"[*_`\[\]<>]|\\\(", plain), t.name
        assert set(pages.fact_refs(t.definition + t.example)) <= known, t.name


def test_a_term_that_is_not_plain_text_is_refused_by_name():
    with pytest.raises(ValueError, match="Thing: the definition is plain text"):
        gl.Term("Thing", "thing", "A *bold* thing.", "neural-networks.md#21-neural-networks")
    with pytest.raises(ValueError, match="Thing: explained must be"):
        gl.Term("Thing", "thing", "A thing.", "neural-networks.md")
    with pytest.raises(ValueError, match="Thing: abbreviation 'THG'"):
        gl.Term("Thing", "thing", "A thing.", "neural-networks.md#x", abbr=("THG",))


def test_forms_match_whole_words_in_their_one_sense():
    entry = {t.anchor: t for t in gl.TERMS}
    head, weights = entry["head"].pattern(), entry["parameters"].pattern()
    assert head.search("the LM head") is None and head.search("the LM\nhead") is None
    assert head.search("each head attends").group(0) == "head"
    assert weights.search("the attention weights") is None and weights.search("reads the weights")
    assert entry["ttft"].pattern().search("time to\nfirst token").group(0) == "time to\nfirst token"
    assert entry["prefill"].pattern().search("Prefill runs").group(0) == "Prefill"
    assert entry["gqa"].pattern().search("gqa") is None  # abbreviations keep their case
    assert entry["decode"].pattern().search("decoder-only") is None  # a whole word, not part of one


def test_deepseek_v3_keeps_its_first_layers_dense_and_scout_has_experts_everywhere():
    """DeepSeek-V3's config.json: `first_k_dense_replace` = 3 of 61 layers keep a dense MLP (the DeepSeek-V3
    report, section 4.2: "the first three layers"). Llama 4 Scout's text config interleaves MoE layers with a
    step of 1: every layer has experts (Maverick's step of 2 alternates; its config is not shipped)."""
    deepseek = json.loads((CONFIGS / "DeepSeek-V3.json").read_text())
    assert deepseek["first_k_dense_replace"] == 3 and deepseek["num_hidden_layers"] == 61
    assert gl.deepseek_v3_dense_layers().value == 3
    scout = json.loads((CONFIGS / "Llama-4-Scout-17B-16E.json").read_text())
    assert scout["text_config"]["interleave_moe_layer_step"] == 1
    from chapter2.models import load_config

    c = load_config("Llama-4-Scout-17B-16E")
    assert len(c.moe_layers) == c.num_hidden_layers


def test_format_widths_are_numpys_and_bfloat16s():
    """Pinned against the formats' definitions: IEEE 754 binary16 has a 5-bit exponent and a 10-bit stored
    mantissa (2 bytes); binary32 an 8-bit exponent (4 bytes); bfloat16 keeps binary32's exponent and 7 of its
    mantissa bits (1 + 8 + 7 = 16)."""
    assert (gl.fp16_exponent_bits().value, gl.fp16_mantissa_bits().value) == (5, 10)
    assert pages.value("bottlenecks.fp16_bytes").value == 2
    assert (gl.fp32_exponent_bits().value, gl.fp32_bytes().value) == (8, 4)
    assert 1 + gl.fp32_exponent_bits().value + gl.bf16_mantissa_bits().value == 16
    refs = {r for t in gl.TERMS for r in pages.fact_refs(t.definition + t.example)}
    for name in ("glossary.fp32_bytes", "bottlenecks.fp16_bytes", "glossary.fp16_exponent_bits",
                 "glossary.fp16_mantissa_bits", "glossary.fp32_exponent_bits", "glossary.bf16_mantissa_bits",
                 "glossary.deepseek_v3_dense_layers"):
        assert name in refs, name


# Names with digits that are not numbers the page computes (models, GPUs, formats, papers' ids).
NAMES = re.compile(r"Llama 3\.1 8B|Llama 2 7B|Llama 4|Mistral 7B v0\.1|Qwen3-235B-A22B|Nemotron 3 Nano|DeepSeek-V[23]|"
                   r"arXiv:\d+\.\d+|section \d+(\.\d+)*|Mamba-2|HBM\d\w*|\b\d+B\b|\b\d+-bit\b")


def test_every_number_in_the_glossary_is_a_fact_or_part_of_a_name():
    text = GLOSSARY.read_text() + "\n".join(t.name + " " + t.definition + " " + t.example for t in gl.TERMS)
    prose = re.sub(r"\{\{.*?\}\}|\\\(.*?\\\)|\]\([^)]*\)|`[^`]*`", "", text)
    typed = re.findall(r"(?<![\w.:-])\d[\d.,]*(?![\w-])", NAMES.sub("", prose))
    assert not typed, f"every number on the glossary is a fact or part of a name: {typed}"


def test_the_glossary_page_is_rendered_from_the_entries():
    assert "<!-- glossary -->" in GLOSSARY.read_text()
    md = glossary_links.render_glossary("glossary.md")
    assert md.count("<dt id=") == len(gl.TERMS)
    assert "{{" not in md
    kv = next(t for t in gl.TERMS if t.anchor == "kv-cache")
    assert f"Explained in [2.2a · Prefill and decode]({kv.explained})" in md
    assert f"[{kv.name}](#{kv.anchor})" in md.split("\n")[0]  # the index of every term
    abbr = glossary_links.abbreviation_lines()
    assert "*[KV cache]: The keys and values of every earlier token" in abbr
    assert "*[FP16]: 16-bit floating point (IEEE half precision, 5 exponent and 10 mantissa bits): 2 bytes" in abbr


# ------------------------------------------------------------------ the linker, on pages small enough to check by hand

def _links(html: str) -> list[tuple[str, str]]:
    return re.findall(r'<a class="c2-term" href="[^"]*#([\w-]+)" title="[^"]*">([^<]*)</a>', html)


def test_the_first_use_in_running_prose_is_linked_and_nothing_else():
    page = ('<h2 id="x">Prefill and decode</h2>'
            '<p>During <strong>prefill</strong> the model reads the prompt; prefill is fast. '
            '<code>decode</code> is code, <a href="y">decode</a> a link.</p>'
            '<div class="c2-calc"><p>decode in a calculator</p></div>'
            '<figure><p>decode in a figure</p></figure><table><tr><td>decode</td></tr></table>'
            '<ul><li>Then decode, one token at a time; decode again.</li></ul>')
    out = glossary_links.link_first_uses(page, prefix="../")
    assert _links(out) == [("prefill", "prefill"), ("decode", "decode"), ("token", "token")]
    assert '<strong><a class="c2-term" href="../glossary/#prefill"' in out
    assert out.count("c2-term") == 3 and "<code>decode</code>" in out and '<a href="y">decode</a>' in out
    assert "<td>decode</td>" in out and "Prefill and decode</h2>" in out
    definition = next(t for t in gl.TERMS if t.anchor == "prefill").definition
    assert f'title="{definition.replace(chr(39), "&#x27;")}"' in out


def test_an_abbreviation_becomes_the_link_on_first_use_and_stays_after():
    page = ('<p>The <abbr title="old">KV cache</abbr> grows; the <abbr title="old">KV cache</abbr> again.</p>'
            '<h3><abbr title="old">MoE</abbr></h3><p>An <abbr title="old">MoE</abbr> layer.</p>')
    out = glossary_links.link_first_uses(page, prefix="")
    assert _links(out) == [("kv-cache", "KV cache"), ("moe", "MoE")]
    assert out.count('<abbr title="old">') == 2  # the second use in prose, and the heading's
    assert 'href="glossary/#kv-cache"' in out


def test_the_reference_layer_links_a_term_the_running_prose_has_not_yet():
    page = ('<p>Attention first.</p>'
            '<details class="note"><summary>More</summary><p>Attention, and the roofline.</p></details>'
            '<p>The roofline now, and attention again.</p>')
    out = glossary_links.link_first_uses(page, prefix="")
    assert _links(out) == [("attention", "Attention"), ("roofline", "roofline"), ("roofline", "roofline")]


def test_the_earliest_and_longest_form_wins():
    out = glossary_links.link_first_uses("<p>A mixture of experts keeps its experts; the time to\nfirst token.</p>",
                                         prefix="")
    assert _links(out) == [("moe", "mixture of experts"), ("expert", "experts"), ("ttft", "time to\nfirst token")]


# ------------------------------------------------------------------ the built site

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


class _Prose(HTMLParser):
    """Text of the first <article> with, per run, whether it is running prose (outside the hook's skipped
    elements) and whether it sits in a link to the glossary; written apart from the hook, from its rules."""

    SKIP = {"h1", "h2", "h3", "h4", "h5", "h6", "code", "pre", "kbd", "script", "style", "svg", "math", "figure",
            "figcaption", "button", "select", "textarea", "label", "output", "form", "summary", "table", "dt",
            "nav", "sup", "sub", "details"}
    SKIP_CLASSES = {"c2-calc", "c2-snippet", "c2-figure", "c2-chart", "c2-bars", "arithmatex", "katex", "highlight",
                    "headerlink", "mermaid", "c2-chapter-map", "c2-recall", "admonition-title", "c2-nb-download"}
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.runs, self.in_article, self.done = [], [], False, False

    def handle_starttag(self, tag, attrs):
        if self.done or tag in self.VOID:
            return
        if tag == "article" and not self.in_article:
            self.in_article, self.stack = True, [("article", False, False, None)]
            return
        if not self.in_article:
            return
        a = dict(attrs)
        _, skip, prose, link = self.stack[-1]
        classes = set((a.get("class") or "").split())
        term = a.get("href") if tag == "a" and "c2-term" in classes else None
        skip = skip or tag in self.SKIP or bool(classes & self.SKIP_CLASSES) or (tag == "a" and term is None)
        self.stack.append((tag, skip, prose or tag in {"p", "li", "dd"}, link or term))

    def handle_endtag(self, tag):
        if not self.in_article or self.done or tag in self.VOID:
            return
        while self.stack and self.stack.pop()[0] != tag:
            pass
        self.done = not self.stack

    def handle_data(self, data):
        if self.in_article and not self.done and self.stack:
            _, skip, prose, link = self.stack[-1]
            if prose and not skip:
                self.runs.append((data, link))


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in _md_pages() if p != "glossary/index.html"])
def test_each_terms_first_use_in_running_prose_links_to_its_entry(site_dir, page):
    parser = _Prose()
    parser.feed((site_dir / page).read_text())
    text, where = "", []
    for data, link in parser.runs:  # one string of the running prose, and the link each character sits in
        text += data
        where += [link] * len(data)
    bad = []
    taken = [False] * len(text)
    for t in gl.TERMS:
        for m in t.pattern().finditer(text):
            if any(taken[m.start():m.end()]) and where[m.start()] is None:
                continue  # inside an earlier term's longer form (mixture of experts, then experts)
            link = where[m.start()]
            if link is None or not link.endswith(f"glossary/#{t.anchor}"):
                if link is None or "glossary/#" not in link:
                    bad.append(f"{t.name}: …{' '.join(text[max(0, m.start() - 40):m.end() + 20].split())}…")
            for k in range(m.start(), m.end()):
                taken[k] = True
            break
    assert not bad, f"{page}: first uses in running prose without a link to the glossary: {bad}"


def test_every_term_link_and_every_explained_link_lands(site_dir):
    glossary_ids = set(re.findall(r'\bid="([^"]+)"', (site_dir / "glossary" / "index.html").read_text()))
    assert {t.anchor for t in gl.TERMS} <= glossary_ids
    checked = 0
    for page in _md_pages():
        built = site_dir / page
        for href, title in re.findall(r'<a class="c2-term" href="([^"]+)" title="([^"]+)"', built.read_text()):
            target, anchor = href.split("#")
            assert (built.parent / target / "index.html").resolve() == (site_dir / "glossary" / "index.html").resolve()
            assert anchor in glossary_ids and len(title.split()) >= 5, (page, href)
            checked += 1
    assert checked >= 150
    entries = (site_dir / "glossary" / "index.html").read_text()
    assert entries.count('<dt id="') >= 60
    for t in gl.TERMS:
        page, anchor = t.explained.split("#")
        ids = re.findall(r'\bid="([^"]+)"', (site_dir / page.removesuffix(".md") / "index.html").read_text())
        assert anchor in ids, f"{t.name}: {t.explained} does not exist"
        assert f'href="../{page.removesuffix(".md")}/#{anchor}"' in entries, t.name


class _Uses(HTMLParser):
    """Text runs of the first <article> outside code, math, calculators and figures, each with whether a
    definition is at hand there (inside an <abbr title> or a link to the glossary)."""

    SKIP = {"code", "pre", "svg", "math", "script", "style", "figure", "form", "button", "select", "textarea",
            "output", "title"}
    SKIP_CLASSES = {"c2-calc", "c2-snippet", "c2-figure", "c2-chart", "c2-bars", "katex", "katex-display",
                    "arithmatex", "highlight", "headerlink"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.runs, self.in_article, self.done = [], [], False, False

    def handle_starttag(self, tag, attrs):
        if self.done or tag in _Prose.VOID:
            return
        if tag == "article" and not self.in_article:
            self.in_article, self.stack = True, [("article", False, False)]
            return
        if not self.in_article:
            return
        a = dict(attrs)
        skip0, defined0 = self.stack[-1][1:]
        skip = skip0 or tag in self.SKIP or bool(set((a.get("class") or "").split()) & self.SKIP_CLASSES)
        defined = defined0 or (tag == "abbr" and bool(a.get("title"))) or (
            tag == "a" and "glossary/#" in (a.get("href") or ""))
        self.stack.append((tag, skip, defined))

    def handle_endtag(self, tag):
        if not self.in_article or self.done or tag in _Prose.VOID:
            return
        while self.stack and self.stack.pop()[0] != tag:
            pass
        self.done = not self.stack

    def handle_data(self, data):
        if self.in_article and not self.done and self.stack and not self.stack[-1][1]:
            self.runs.append((data, self.stack[-1][2]))


def undefined_abbreviations(html: str) -> list[str]:
    """The abbreviations whose first use in the page's article (anywhere outside code, math, calculators and
    figures: headings and tables too) has no definition at hand, with the text around it."""
    parser = _Uses()
    parser.feed(html)
    seen, bad = set(), []
    for text, defined in parser.runs:
        for t in gl.TERMS:
            for form in t.abbr:
                if form in seen:
                    continue
                m = re.search(rf"(?<![\w/-]){re.escape(form)}(?![\w/-])", text)
                if m:
                    seen.add(form)
                    if not defined:
                        bad.append(f"{form}: …{' '.join(text[max(0, m.start() - 50):m.end() + 30].split())}…")
    return bad


def test_the_abbreviation_checker_catches_a_bare_first_use():
    page = ('<article><p>The <abbr title="the keys and values">KV cache</abbr> grows; the KV cache</p>'
            '<p>MoE and <a href="../glossary/#gqa">GQA</a>, then <code>FP8</code>, FP8</p></article>')
    assert [b.split(":")[0] for b in undefined_abbreviations(page)] == ["MoE", "FP8"]


@pytest.mark.slow
@pytest.mark.parametrize("page", _md_pages())
def test_each_abbreviations_first_use_carries_its_definition(site_dir, page):
    bad = undefined_abbreviations((site_dir / page).read_text())
    assert not bad, f"{page}: first uses without a definition at hand: {bad}"
