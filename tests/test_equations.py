"""Equations: TeX on the pages, typeset by KaTeX at build time (docs/hooks/equations.py).

A TeX error fails the build naming the page and the formula; facts may stand inside an equation;
the built pages hold KaTeX's HTML and MathML, never raw TeX, and load no script for math. What the
site ships of KaTeX is made for its equations: HTML trimmed where nothing changes, the stylesheet's
rules and the fonts' glyphs that they use, the same bytes at every build.
"""

from __future__ import annotations

import html
import importlib.util
import io
import re
import sys
from collections import Counter
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
STYLESHEET = equations.Build(ROOT).stylesheet  # KaTeX's own, verified


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
    assert hook.on_post_page(raw, page, None) == hook.csp.add_policy(raw, cdn=False)
    monkeypatch.setenv("CHAPTER2_MATH", "sometimes")
    with pytest.raises(PluginError, match="measurement switch"):
        hook._math()
    monkeypatch.delenv("CHAPTER2_MATH")
    assert hook._math() is True


def test_a_single_token_keeps_only_its_html():
    n, n2 = (r["html"] for r in equations.render([("N", False), ("N^2", False)], KATEX_JS))
    assert "<math" in n and "<math" in n2
    one, two = equations.lighter(n, STYLESHEET), equations.lighter(n2, STYLESHEET)
    assert one == '<span class="katex"><span class="mathnormal" style="margin-right:.109em">N</span></span>'  # read as "N"
    assert "<math>" in two and 'aria-hidden="true"' in two  # read from MathML, the HTML hidden
    assert "application/x-tex" not in two and "semantics" not in two and "xmlns" not in two


# formulas that use the constructions of the site's pages: scripts, fractions, roots, big delimiters,
# aligned rows, operators with limits, accents, text, bold, upright names
SAMPLES = [
    (r"O = \operatorname{softmax}\Bigl(\frac{QK^\top}{\sqrt{d_k} }\Bigr) V", True),
    (r"\begin{aligned} m_i &= \max(m_{i-1}, x_i) \\ \ell_i &= \ell_{i-1} e^{m_{i-1} - m_i} + e^{x_i - m_i} \end{aligned}", True),
    (r"\sum_{i=1}^{N} \tilde{A}_{ij} \mathbf{v}_j \approx 2 \times 10^{9}\ \text{FLOPs, or } \mu \geq 0", False),
    (r"\left( \frac{a}{b} \right)^{2} \le \hat{x} \cdot \ell", False),
]


def _text(node, skip) -> str:
    """Text in document order, leaving out the elements `skip` says."""
    if isinstance(node, str):
        return html.unescape(node)
    return "" if skip(node) else "".join(_text(c, skip) for c in node.children)


def _shape(katex_html: str) -> tuple[str, list, list, str]:
    """What a trimmed formula must keep: its text, the classes a stylesheet names, its styles, its MathML's text."""
    root = equations.parse(katex_html)
    math = next((el for el in root.iter() if el.tag == "math"), None)
    visible = [el for el in root.iter() if el.tag != "#root" and not (math and equations._inside(el, math))]
    classes = sorted(c for el in visible for c in el.classes if c in STYLESHEET.classes)
    styles = sorted(equations.STYLE_ZERO.sub(r"\1.", el.attrs["style"]).rstrip(";") for el in visible if "style" in el.attrs)
    return (_text(root, lambda el: el.tag == "math"), classes, styles,
            _text(math, lambda el: el.tag == "annotation") if math else "")


def test_lighter_keeps_the_text_the_classes_that_style_and_the_mathml():
    for (tex, display), result in zip(SAMPLES, equations.render(SAMPLES, KATEX_JS), strict=True):
        full, light = result["html"], equations.lighter(result["html"], STYLESHEET)
        assert len(light) < 0.9 * len(full), tex
        assert _shape(light) == _shape(full), tex
        assert "<math" in light and 'aria-hidden="true"' in light and "annotation" not in light
        assert not re.search(r'class="[^"]*\b(mord|mbin|mrel|mopen|mclose|mpunct|mtight)\b', light)
        assert ("katex-display" in light) == display


def test_a_bare_span_stays_where_a_selector_or_the_painting_would_notice():
    markup = ('<span class="katex"><span class="katex-html" aria-hidden="true"><span class="katex-base">'
              '<span class="mord">a</span><span class="mord"><span class="mathnormal">Q</span></span>b<span class="mord">c</span>'
              '<span class="vlist-t"><span class="vlist-r"><span class="vlist"><span>x</span></span></span></span>'
              '</span></span></span>')
    out = equations.lighter(markup, STYLESHEET)
    assert '<span class="katex-base">a<span><span class="mathnormal">Q</span></span>b<span>c</span>' in out  # text joins no text
    assert '<span class="vlist"><span>x</span></span>' in out  # .vlist>span is styled


def test_fonts_resolve_as_in_a_browser():
    root = equations.parse(
        '<span class="katex"><span class="katex-html"><span class="mathnormal">x</span><span class="mathbf">v</span>'
        '<span class="delimsizing size1">(</span><span class="textit">t</span><span class="boldsymbol">b</span>'
        '<span class="mathrm">softmax</span>2</span></span>')
    faces = {el.text(): STYLESHEET.face_for(*STYLESHEET.computed_font(el)).font for el in root.iter() if el.text()}
    assert faces == {"x": "fonts/KaTeX_Math-Italic.woff2", "v": "fonts/KaTeX_Main-Bold.woff2",
                     "(": "fonts/KaTeX_Size1-Regular.woff2", "t": "fonts/KaTeX_Main-Italic.woff2",
                     "b": "fonts/KaTeX_Math-BoldItalic.woff2", "softmax": "fonts/KaTeX_Main-Regular.woff2",
                     "2": "fonts/KaTeX_Main-Regular.woff2"}
    assert STYLESHEET.face_for("KaTeX_Math", 400, "normal").font == "fonts/KaTeX_Math-Italic.woff2"  # its only style
    assert STYLESHEET.face_for("KaTeX_Main", 600, "normal").font == "fonts/KaTeX_Main-Bold.woff2"
    assert STYLESHEET.face_for("KaTeX_Main", 300, "normal").font == "fonts/KaTeX_Main-Regular.woff2"


def _prepared(pages):
    build = equations.Build(ROOT)
    files = build.prepare(pages)
    return build, files, [build.typeset(page, path) for path, page in pages]


PAGES = [(f"p{i}.md", "".join(_page(tex, display) for tex, display in SAMPLES[i:] + SAMPLES[:i])) for i in range(len(SAMPLES))]


def _formulas(page_html: str) -> list[str]:
    """The typeset formulas of a page: what each arithmatex element holds."""
    out = []
    for start in re.finditer(r'<(span|div) class="arithmatex"[^>]*>', page_html):
        depth = 1
        for m in equations.TOKEN.finditer(page_html, start.end()):
            if m.group(2) and not m.group(4):
                depth += -1 if m.group(1) else 1
            if depth == 0:
                out.append(page_html[start.end():m.start()])
                break
    return out


def _glyphs_are_shipped(css: str, fonts: dict[str, bytes], formulas: list[str]) -> int:
    """Every character the formulas draw is in the shipped font that draws it (read back from the shipped
    stylesheet, as a browser would); returns how many elements with text were checked."""
    from fontTools.ttLib import TTFont

    shipped = equations.Stylesheet(css)
    loaded = {name: set(TTFont(io.BytesIO(data)).getBestCmap()) for name, data in fonts.items()}
    originals = {name: set(TTFont(ROOT / "node_modules/katex/dist/fonts" / name).getBestCmap()) for name in fonts}
    checked = 0
    for markup in formulas:
        for el in equations.parse(markup).iter():
            if el.tag == "#root" or not el.text() or any(a.tag == "math" for a in equations._ancestors(el)):
                continue
            font = shipped.face_for(*shipped.computed_font(el)).font.removeprefix("fonts/")
            wanted = {ord(c) for c in el.text()} & originals[font]  # KaTeX's font lacks some (a zero-width space)
            assert wanted <= loaded[font], (el.text(), font)
            checked += 1
    return checked


def test_the_site_gets_only_the_rules_and_glyphs_its_equations_use():
    build, files, typeset = _prepared(PAGES)
    css = files["assets/vendor/katex/katex.min.css"].decode()
    fonts = {rel.rsplit("/", 1)[1]: data for rel, data in files.items() if rel.endswith(".woff2")}
    assert set(re.findall(r"url\(fonts/([\w.-]+)\)", css)) == set(fonts)  # woff2 only, each shipped, none left over
    assert {"KaTeX_Main-Regular.woff2", "KaTeX_Math-Italic.woff2", "KaTeX_Size2-Regular.woff2"} <= set(fonts)
    assert "KaTeX_Fraktur-Regular.woff2" not in fonts
    assert len(css) < 0.5 * len(STYLESHEET.css) and "fontsize-ensurer" not in css and ".woff)" not in css
    assert _glyphs_are_shipped(css, fonts, [f for page in typeset for f in _formulas(page)]) > 50
    for name, data in fonts.items():
        assert len(data) < 0.7 * len(build.sources[f"{equations.SITE_DIR}/fonts/{name}"].read_bytes()), name


def test_repeated_styles_become_classes_and_class_names_short():
    build, files, typeset = _prepared(PAGES)
    css = files["assets/vendor/katex/katex.min.css"].decode()
    shown = "".join(typeset)
    styles = Counter(re.findall(r' style="([^"]*)"', shown))
    assert build.style_classes and all(n < equations.STYLE_CLASS_MIN * len(PAGES) for n in styles.values())
    for style, name in build.style_classes.items():
        assert f".{name}{{" in css and style.split(";")[0] + "!important" in css
    used = Counter(c for value in re.findall(r' class="([^"]*)"', shown) for c in value.split())
    assert {"katex", "katex-display", "katex-html", "katex-mathml"} <= set(used)
    assert all(re.fullmatch(r"z[a-z]+|z\d+|katex(-display|-html|-mathml)?|arithmatex", c) for c in used), used
    assert "vlist" not in css and ".katex-display>.katex>.katex-html" in css
    assert max(len(build.aliases[c]) for c in build.aliases) <= 3


def test_two_builds_write_the_same_bytes():
    first, second = _prepared(PAGES), _prepared(PAGES)
    assert first[1] == second[1] and first[2] == second[2]


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


# display equations at least, per page (the issue's list: matmul, KV cache, sampling, transformer,
# attention, MoE and its coverage, denoiser passes, tokens, few-step saving, roofline, LLM and image
# bottlenecks, online softmax, decode attention, sliding window, state-space recurrence); section 2.2's
# nine are split between its two pages, inside the model and serving a request
DISPLAY = {"neural-networks": 1, "llm-architecture": 4, "llm-inference": 5, "image-generation": 3, "bottlenecks": 3,
           "attention": 6}


def test_every_equation_is_typeset_and_no_tex_is_left(site_dir):
    css = (site_dir / "assets/vendor/katex/katex.min.css").read_text()
    fonts = set(re.findall(r"url\((fonts/[\w.-]+\.woff2)\)", css))
    assert fonts and {f"fonts/{p.name}" for p in (site_dir / "assets/vendor/katex/fonts").iterdir()} == fonts
    assert not list((site_dir / "assets/vendor/katex").rglob("*.js"))  # no KaTeX script is shipped
    for page in site_dir.rglob("*.html"):
        text = page.read_text()
        name = page.parent.relative_to(site_dir).as_posix()
        spans = re.findall(r'<(span|div) class="arithmatex">(.{0,40})', text)
        assert all(inner.startswith('<span class="katex') for _, inner in spans), (name, spans[:3])
        linked = "assets/vendor/katex/katex.min.css" in text
        assert linked == bool(spans), name
        if name in DISPLAY:
            assert sum(tag == "div" for tag, _ in spans) >= DISPLAY[name], name
        body = re.sub(r"<(script|code|pre|textarea)\b.*?</\1>", "", text.split("<body", 1)[1], flags=re.S)
        visible = html.unescape(re.sub(r"<[^>]+>", "", body))
        for raw in ("\\(", "\\[", "$$", "\\frac", "\\text{", "\\begin{"):
            assert raw not in visible, (name, raw, visible[visible.find(raw) - 80:visible.find(raw) + 80])


def test_the_built_site_ships_every_glyph_its_equations_draw(site_dir):
    katex = site_dir / "assets/vendor/katex"
    css = (katex / "katex.min.css").read_text()
    fonts = {p.name: p.read_bytes() for p in (katex / "fonts").iterdir()}
    formulas = [f for page in site_dir.rglob("*.html") for f in _formulas(page.read_text())]
    assert len(formulas) > 200 and _glyphs_are_shipped(css, fonts, formulas) > 1000
    assert sum(map(len, fonts.values())) < 60_000  # all of KaTeX's woff2 fonts: 260 kB
