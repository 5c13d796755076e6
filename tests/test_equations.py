"""Equations: TeX on the pages, typeset by KaTeX at build time (docs/hooks/equations.py).

A TeX error fails the build naming the page and the formula; facts may stand inside an equation;
the built pages hold KaTeX's HTML and MathML, never raw TeX, and load no script for math. The site
ships KaTeX's stylesheet and fonts as the pinned npm package ships them, byte for byte.
"""

from __future__ import annotations

import hashlib
import html
import importlib.util
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from chapter2 import pages

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "docs" / "hooks"
if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))  # as MkDocs does while it loads the hook

import directives  # noqa: E402
import equations  # noqa: E402

KATEX_JS = equations.renderer(ROOT)


def _hook():
    """A fresh copy of the build hook (docs/hooks/build_site.py), as tests/test_build_hook.py loads it."""
    spec = importlib.util.spec_from_file_location("c2_build_site_for_equations", HOOKS / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(tex: str, display: bool = False) -> str:
    tag, (start, end) = ("div", equations.DELIMITERS["div"]) if display else ("span", equations.DELIMITERS["span"])
    return f'<html><head></head><body><p>x <{tag} class="arithmatex">{start}{html.escape(tex)}{end}</{tag}></p></body></html>'


# ------------------------------------------------------------------ the hook


@pytest.mark.parametrize("tex, message", [
    (r"\frac{a}", r"Unexpected end of input"),
    (r"x^{2", r"Expected '}'"),
    (r"\softmax(x)", r"Undefined control sequence"),
    (r"\text{naïve × café}", r"Unrecognized Unicode character"),  # strict: no silent fallback glyphs
])
def test_a_tex_error_fails_the_build_naming_the_page_and_the_formula(tex, message):
    hook = _hook()
    hook._state.update(mode="self-hosted", equations=equations.Build(ROOT))
    page = SimpleNamespace(file=SimpleNamespace(src_uri="attention.md"), url="attention/")
    with pytest.raises(PluginError) as err:
        hook.on_post_page(_page(r"a + b = c") + _page(tex, display=True), page, None)
    text = str(err.value)
    assert "attention.md" in text and tex in text and message in text, text
    assert "a + b = c" not in text  # only the formula KaTeX refused is named


def test_equations_become_katex_html_and_mathml_with_the_stylesheet():
    hook = _hook()
    hook._state.update(mode="self-hosted", equations=equations.Build(ROOT))
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/x.md"), url="notebooks/x/")
    out = hook.on_post_page(_page(r"O = \operatorname{softmax}\Bigl(\frac{QK^\top}{\sqrt{d} }\Bigr) V", display=True),
                            page, None)
    assert '<span class="katex-display">' in out and "<math" in out and 'aria-hidden="true"' in out
    assert "\\frac" not in out and "\\[" not in out  # no TeX left, the annotation included
    assert "annotation" not in out and "<semantics>" in out  # KaTeX's MathML, without its copy of the TeX
    assert '<link rel="stylesheet" href="../../assets/vendor/katex/katex.min.css">' in out
    assert "<script" not in out.split("</head>")[1]  # nothing runs in the browser for math
    plain = hook.on_post_page("<html><head></head><body><p>no math</p></body></html>", page, None)
    assert "katex" not in plain


def test_a_tex_error_found_while_reading_the_pages_names_its_page():
    build = equations.Build(ROOT)
    with pytest.raises(equations.EquationError) as err:
        build.prepare([("neural-networks.md", _page("a + b")), ("attention.md", _page(r"\frac{a}", display=True))])
    text = str(err.value)
    assert "attention.md" in text and r"\frac{a}" in text and "neural-networks.md" not in text, text


def test_the_math_switch_is_a_measurement_switch_only(monkeypatch):
    """CHAPTER2_MATH=off (scripts/bench_math_weight.py) leaves the TeX and links no stylesheet; nothing else is accepted."""
    hook = _hook()
    monkeypatch.setenv("CHAPTER2_MATH", "off")
    assert hook._math() is False
    hook._state.update(mode="self-hosted", math=False)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="attention.md"), url="attention/")
    raw = _page("N^2")
    with_guard = raw.replace("</head>", hook.POPSTATE_GUARD + "\n</head>", 1)  # every page's (build_site.py)
    assert hook.on_post_page(raw, page, None) == hook.csp.add_policy(with_guard, cdn=False)
    monkeypatch.setenv("CHAPTER2_MATH", "sometimes")
    with pytest.raises(PluginError, match="measurement switch"):
        hook._math()
    monkeypatch.delenv("CHAPTER2_MATH")
    assert hook._math() is True


# ------------------------------------------------------------------ facts inside equations


def test_a_fact_inside_an_equation_is_escaped_tex_text():
    seq = pages.text("attention.flash_example_seq_len")
    share = pages.text("attention.hybrid_flops_share_long")
    assert "%" in share  # a TeX comment if not escaped
    text = (r"At \(N = {{ fact: attention.flash_example_seq_len }}\), about {{ fact: attention.hybrid_flops_share_long }}"
            "\n$$\ns = {{ fact: attention.hybrid_flops_share_long }}\n$$\n")
    out = directives.expand_facts(text, "attention.md")
    assert out == (rf"At \(N = \text{{{seq}}}\), about {share}" + "\n$$\ns = \\text{" + share.replace("%", r"\%") + "}\n$$\n")
    results = equations.render([(rf"N = \text{{{seq}}}", False), ("s = \\text{" + share.replace("%", r"\%") + "}", True)],
                               KATEX_JS)
    assert all("html" in r for r in results), results


def test_tex_text_escapes_what_tex_would_read_as_commands():
    tex = equations.tex_text("50 % of a_b {x} & #1 $5 ^~\\ 2×3 − 1 ≈ 2\u00a0kB")
    result = equations.render([(tex, False)], KATEX_JS)[0]
    assert "html" in result, result
    for shown in ("50", "%", "a_b", "{x}", "&amp;", "#1", "$5", "×", "−", "≈", "kB"):
        assert shown in re.sub(r"<[^>]+>", "", result["html"]), shown
    with pytest.raises(equations.EquationError, match="more than one line"):
        equations.tex_text("| a |\n|---|")


def test_double_braces_in_tex_are_refused_with_a_hint():
    with pytest.raises(directives.DirectiveError, match=r"put a space between two braces"):
        directives.expand_facts(r"\(x^{{2}}\)", "attention.md")
    assert directives.expand_facts(r"\(\frac{a}{\sqrt{b} }\)", "attention.md") == r"\(\frac{a}{\sqrt{b} }\)"


def test_code_keeps_tex_syntax_verbatim():
    md = "`\\(x\\)` and\n\n```text\n$$ {{ not a fact }} $$\n```\n"
    assert directives._outside_code(md, lambda t: directives.expand_facts(t, "x.md")) == md


# ------------------------------------------------------------------ the pages


FORMULA = re.compile(r"[×÷·Σ√≈≤≥ᵀ²∞⊙]")


@pytest.mark.parametrize("path", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_no_formula_is_left_in_a_monospace_block(path):
    """Formulas are TeX; ```text blocks hold only pseudocode (the generation loop) or diagrams."""
    for block in re.findall(r"^```text\n(.*?)^```", path.read_text(), re.M | re.S):
        for line in block.splitlines():
            assert not ("=" in line and FORMULA.search(line)), f"{path.name}: a formula in a text block: {line!r}"


# display equations at least, per page (the list: matmul, KV cache, sampling, transformer,
# attention, MoE and its coverage, denoiser passes, tokens, few-step saving, roofline, LLM and image
# bottlenecks, online softmax, decode attention, sliding window, state-space recurrence); section 2.2's
# nine are split between its two pages, inside the model and serving a request
DISPLAY = {"neural-networks": 1, "llm-architecture": 4, "llm-inference": 5, "image-generation": 3, "bottlenecks": 3,
           "attention": 6}


def test_every_equation_is_typeset_and_no_tex_is_left(site_dir):
    for page in site_dir.rglob("*.html"):
        text = page.read_text()
        name = page.parent.relative_to(site_dir).as_posix()
        spans = re.findall(r'<(span|div) class="arithmatex">(.{0,40})', text)
        assert all(inner.startswith('<span class="katex') for _, inner in spans), (name, spans[:3])
        linked = "assets/vendor/katex/katex.min.css" in text
        assert linked == bool(spans), name
        if name in DISPLAY:
            assert sum(tag == "div" for tag, _ in spans) >= DISPLAY[name], name
        assert "application/x-tex" not in text, name
        body = re.sub(r"<(script|code|pre|textarea)\b.*?</\1>", "", text.split("<body", 1)[1], flags=re.S)
        visible = html.unescape(re.sub(r"<[^>]+>", "", body))
        for raw in ("\\(", "\\[", "$$", "\\frac", "\\text{", "\\begin{"):
            assert raw not in visible, (name, raw, visible[visible.find(raw) - 80:visible.find(raw) + 80])


def test_the_site_ships_katexs_stylesheet_and_fonts_as_the_pinned_package_has_them(site_dir):
    """Byte for byte what npm installed, each file's sha256 pinned in vendor-files.sha256, the version exact in
    package.json; every font file the stylesheet names is there (and nothing else of KaTeX, no script)."""
    version = json.loads((ROOT / "package.json").read_text())["dependencies"]["katex"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"katex must be pinned exactly in package.json, got {version!r}"
    assert json.loads((ROOT / "node_modules/katex/package.json").read_text())["version"] == version
    pinned = dict(line.split()[::-1] for line in (HOOKS / "vendor-files.sha256").read_text().splitlines() if line.strip())
    shipped = site_dir / "assets/vendor/katex"
    css = (shipped / "katex.min.css").read_text()
    named = set(re.findall(r"url\((fonts/[\w.-]+)\)", css))
    assert len(named) == 60 and {p.relative_to(shipped).as_posix() for p in shipped.rglob("*") if p.is_file()} == named | {"katex.min.css"}
    for rel in sorted(named | {"katex.min.css"}):
        data = (shipped / rel).read_bytes()
        assert data == (ROOT / "node_modules/katex/dist" / rel).read_bytes(), rel
        assert hashlib.sha256(data).hexdigest() == pinned[f"katex/dist/{rel}"], rel
