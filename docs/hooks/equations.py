r"""Equations: TeX in the pages, typeset at build time with KaTeX, so no script runs in the browser for math.

Pages write TeX with pymdownx.arithmatex (mkdocs.yml, generic output):

    \( ... \)                inline
    $$ ... $$  or  \[ ... \]   display, on lines of their own

A fact may stand inside an equation, `{{ fact: SECTION.NAME }}`: directives.expand_facts writes it
there as `\text{...}`, with TeX's special characters escaped (`tex_text`). TeX's own braces must
never read as a directive: write `} }`, never two closing (or opening) braces in a row.

Each built page's arithmatex spans and divs become KaTeX's HTML (what readers see) plus MathML (what
screen readers read), rendered by node with the npm package katex: every page's formulas at once
(`Build.prepare`, from build_site.on_env), then put into each page (`Build.typeset`).
Why at build time rather than KaTeX's auto-render in the reader's browser:

- no JavaScript: the equations are there with scripts off, with no flash of raw TeX, and the
  Content-Security-Policy needs nothing new (KaTeX's HTML uses inline style attributes, which
  style-src already allows; its fonts come from the site, font-src 'self');
- strict: a TeX error fails the build, naming the page and the formula, instead of a red
  message on the page that a reader finds;
- lighter: no 270 kB script and its auto-render.

Page weight. Typeset math may add at most 15 % to a section page's first-visit weight (measured by
scripts/bench_math_weight.py against a build with CHAPTER2_MATH=off). What the site ships is
therefore made from KaTeX's files for this site's equations, at every build:

- the stylesheet (`assets/vendor/katex/katex.min.css`) keeps only the rules whose selectors can match
  the HTML the equations use, and the @font-face of each font they use, woff2 only (every browser
  the site supports reads woff2, so the woff and ttf fallbacks are never fetched);
- each font is subset to the characters drawn in it (fontTools, woff2 via brotli: the `docs` extra),
  from the original woff2 checked against vendor-files.sha256, plus the characters FreeType's
  auto-hinter measures (`AUTOHINT_BLUES`). Which font draws a character is worked out as the browser
  does it: the stylesheet's font rules through the cascade and inheritance, then @font-face matching
  (`Stylesheet.face_for`); tests/browser/test_equations_in_browser.py checks in Chromium that every
  character of every equation is drawn from a KaTeX font;
- KaTeX's HTML is trimmed where the rendering cannot change (`lighter`), styles the site repeats
  become classes and KaTeX's class names short ones (`Build.prepare`).
Every equation of the site was compared in Chromium, before and after, at 1280 and 375 px and in both
colour schemes: the same pixels. A change here should be checked the same way.

Files: the renderer (katex/dist/katex.js, run at build time, never shipped), the stylesheet and the
woff2 fonts it names are checked against vendor-files.sha256 before use; the version is pinned
exactly in package.json and `npm ci` checks the tarball. Two builds of the same tree write the same
bytes (tests/test_equations.py).
"""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from pyodide_files import verified_vendor_file

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "equations.mjs"
RENDERER = "katex/dist/katex.js"  # node_modules/<this>: run by equations.mjs at build time
STYLESHEET = "katex/dist/katex.min.css"
SITE_DIR = "assets/vendor/katex"  # where the stylesheet and its fonts go in the site

# In a page's Markdown (the syntax mkdocs.yml enables): $$...$$, \[...\], \(...\)
SOURCE = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]|\\\(.+?\\\)", re.S)
# In a built page (arithmatex's generic output): <span class="arithmatex">\(TeX\)</span>, <div ...>\[TeX\]</div>
# (the build marks them `data-search-exclude`: search shows prose, not TeX source; build_site.on_page_content)
TYPESET = re.compile(r'<(span|div) class="arithmatex"(?: data-search-exclude)?>(.*?)</\1>', re.S)
DELIMITERS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}

TEX_SPECIAL = {"\\": r"\textbackslash ", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
               "%": r"\%", "_": r"\_", "^": r"\textasciicircum ", "~": r"\textasciitilde ",
               # characters the page layer writes that KaTeX's text mode has no glyph for (strict: an error)
               "\u00d7": r"$\times$", "\u2212": "$-$", "\u2248": r"$\approx$", "\u00a0": "~", "\u202f": r"\,",
               "\u2009": r"\,"}

# Classes the site's own stylesheets and tests name (Material: .katex-html, .katex-display); kept
# even if KaTeX's stylesheet stopped naming them.
SITE_CLASSES = frozenset({"katex", "katex-display", "katex-html", "katex-mathml"})


class EquationError(RuntimeError):
    pass


def site_files(root: Path) -> dict[str, Path]:
    """{site path: verified original}: katex.min.css and every woff2 font it names.

    The site gets files made from these (`Build.write`): the stylesheet trimmed, the fonts subset.
    """
    css = verified_vendor_file(root, STYLESHEET)
    files = {f"{SITE_DIR}/katex.min.css": css}
    for font in sorted(set(re.findall(r"url\((fonts/[\w.-]+\.woff2)\)", css.read_text()))):
        files[f"{SITE_DIR}/{font}"] = verified_vendor_file(root, f"katex/dist/{font}")
    return files


def renderer(root: Path) -> Path:
    """The verified katex.js that equations.mjs runs."""
    return verified_vendor_file(root, RENDERER)


def tex_text(text: str) -> str:
    """Page text (a fact) as it stands inside an equation: upright text, TeX's special characters escaped."""
    if "\n" in text:
        raise EquationError(f"{text[:60]!r}... has more than one line (a table?): it cannot stand inside an equation")
    return r"\text{" + "".join(TEX_SPECIAL.get(c, c) for c in text) + "}"


def render(items: list[tuple[str, bool]], katex_js: Path) -> list[dict]:
    """[(TeX, display?)] -> [{"html": ...} or {"error": ...}], in one node process."""
    node = shutil.which("node")
    if node is None:
        raise EquationError("node is missing: the build typesets the equations with KaTeX in node "
                            "(install Node.js; `make setup` needs it for npm too)")
    proc = subprocess.run([node, str(SCRIPT), str(katex_js)], capture_output=True, text=True, timeout=300,
                          input=json.dumps([{"tex": tex, "display": display} for tex, display in items]))
    if proc.returncode != 0:
        raise EquationError("typesetting the equations with KaTeX failed:\n" + (proc.stderr or proc.stdout)[-3000:])
    results = json.loads(proc.stdout)
    if len(results) != len(items):
        raise EquationError(f"KaTeX returned {len(results)} results for {len(items)} equations")
    return results


def _source(match: re.Match, page_path: str) -> tuple[str, bool]:
    tag, inner = match.group(1), match.group(2).strip()
    start, end = DELIMITERS[tag]
    if not (inner.startswith(start) and inner.endswith(end)):
        raise EquationError(f"{page_path}: unexpected arithmatex output (not {start}...{end}): {inner[:200]!r}")
    return html.unescape(inner[len(start):-len(end)]).strip(), tag == "div"


def stylesheet_link(page_url: str) -> str:
    return f'<link rel="stylesheet" href="{"../" * page_url.count("/")}{SITE_DIR}/katex.min.css">'


# ------------------------------------------------------------------ KaTeX's HTML as a tree
#
# KaTeX writes well-formed markup: every element closed (SVG's <path .../> self-closed), attributes
# quoted, text escaped. A small tokenizer reads it back exactly; nothing else ever goes through it.

TOKEN = re.compile(r"<(/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+(?:=(?:\"[^\"]*\"|'[^']*'))?)*)\s*(/?)>|([^<]+)")
ATTR = re.compile(r"([\w:-]+)(?:=(\"[^\"]*\"|'[^']*'))?")


@dataclass(eq=False)
class Element:
    tag: str
    attrs: dict[str, str]  # name -> value as written (escaped), without quotes
    children: list = field(default_factory=list)  # Element | str (text as written, escaped)
    closed: bool = False  # written <tag/> (SVG)
    parent: Element | None = field(default=None, repr=False)

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def text(self) -> str:
        return html.unescape("".join(c for c in self.children if isinstance(c, str)))

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Element):
                yield from c.iter()


def parse(markup: str) -> Element:
    root = Element("#root", {})
    stack = [root]
    pos = 0
    for m in TOKEN.finditer(markup):
        if m.start() != pos:
            raise EquationError(f"unexpected markup from KaTeX at {pos}: {markup[pos:pos + 80]!r}")
        pos = m.end()
        end, tag, attrs, self_closed, text = m.groups()
        if text is not None:
            stack[-1].children.append(text)
        elif end:
            if stack[-1].tag != tag:
                raise EquationError(f"unbalanced markup from KaTeX: </{tag}> closes <{stack[-1].tag}>")
            stack.pop()
        else:
            el = Element(tag, {k: (v or '""')[1:-1] for k, v in ATTR.findall(attrs)}, closed=bool(self_closed),
                         parent=stack[-1])
            stack[-1].children.append(el)
            if not self_closed:
                stack.append(el)
    if pos != len(markup) or len(stack) != 1:
        raise EquationError(f"unbalanced markup from KaTeX: {markup[:120]!r}")
    return root


def serialize(node) -> str:
    if isinstance(node, str):
        return node
    inner = "".join(serialize(c) for c in node.children)
    if node.tag == "#root":
        return inner
    attrs = "".join(f' {k}="{v.replace(chr(34), "&quot;")}"' for k, v in node.attrs.items())
    return f"<{node.tag}{attrs}/>" if node.closed else f"<{node.tag}{attrs}>{inner}</{node.tag}>"


# ------------------------------------------------------------------ KaTeX's stylesheet

SELECTOR_TOKEN = re.compile(r"\s*>\s*|\s+|\.[\w-]+|:not\(\.[\w-]+\)|::?(?:before|after)|\*|[a-zA-Z][\w-]*")
FONT_PROPS = ("font-family", "font-weight", "font-style")


@dataclass
class Compound:
    tag: str | None = None  # None: any
    classes: frozenset = frozenset()
    not_classes: frozenset = frozenset()

    def matches(self, el: Element) -> bool:
        have = set(el.classes)
        return (self.tag is None or self.tag == el.tag) and self.classes <= have and not (self.not_classes & have)


@dataclass
class Selector:
    text: str
    parts: list  # [Compound, combinator (" " or ">"), Compound, ...]
    pseudo: str | None  # ::before / ::after
    specificity: tuple

    @classmethod
    def parse(cls, text: str) -> Selector:
        parts, current, pseudo, pos = [], Compound(), None, 0
        classes: set = set()
        nots: set = set()
        n_classes = n_tags = 0
        for m in SELECTOR_TOKEN.finditer(text.strip()):
            if m.start() != pos:
                raise EquationError(f"KaTeX's stylesheet has a selector this build cannot read: {text!r}")
            pos, tok = m.end(), m.group(0)
            if tok.strip() in ("", ">"):
                parts += [Compound(current.tag, frozenset(classes), frozenset(nots)), tok.strip() or " "]
                current, classes, nots = Compound(), set(), set()
            elif tok.startswith(":not("):
                nots.add(tok[6:-1])
                n_classes += 1
            elif tok.startswith(":"):
                pseudo = tok.lstrip(":")
                n_tags += 1
            elif tok.startswith("."):
                classes.add(tok[1:])
                n_classes += 1
            elif tok != "*":
                current.tag = tok
                n_tags += 1
        if pos != len(text.strip()):
            raise EquationError(f"KaTeX's stylesheet has a selector this build cannot read: {text!r}")
        parts.append(Compound(current.tag, frozenset(classes), frozenset(nots)))
        return cls(text.strip(), parts, pseudo, (n_classes, n_tags))

    @property
    def compounds(self) -> list[Compound]:
        return self.parts[::2]

    def matches(self, el: Element) -> bool:
        return self._match(len(self.parts) - 1, el)

    def _match(self, i: int, el: Element | None) -> bool:
        if el is None or el.tag == "#root" or not self.parts[i].matches(el):
            return False
        if i == 0:
            return True
        if self.parts[i - 1] == ">":
            return self._match(i - 2, el.parent)
        up = el.parent
        while up is not None:
            if self._match(i - 2, up):
                return True
            up = up.parent
        return False


@dataclass
class Rule:
    selectors: list[Selector]
    declarations: str
    order: int

    def declared(self) -> dict[str, str]:
        out = {}
        for decl in self.declarations.split(";"):
            name, _, value = decl.partition(":")
            if value:
                out[name.strip()] = value.strip()
        return out


@dataclass
class Face:
    family: str
    weight: int
    style: str
    font: str  # fonts/NAME.woff2
    declarations: str


class Stylesheet:
    """katex.min.css read as rules: what its selectors name, the fonts it declares, and a cascade for fonts."""

    def __init__(self, css: str):
        self.css = css
        self.rules: list[Rule] = []
        self.faces: list[Face] = []
        body = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
        for i, (prelude, decls) in enumerate(re.findall(r"([^{}]+)\{([^{}]*)\}", body)):
            prelude = prelude.strip()
            if prelude == "@font-face":
                d = Rule([], decls, i).declared()
                woff2 = re.search(r"url\((fonts/[\w.-]+\.woff2)\)", d["src"])
                if woff2 is None:
                    raise EquationError(f"a KaTeX @font-face without woff2: {decls!r}")
                weight = {"normal": 400, "bold": 700}.get(d.get("font-weight", "normal"), None) or int(d["font-weight"])
                self.faces.append(Face(d["font-family"].strip("'\""), weight, d.get("font-style", "normal"),
                                       woff2.group(1), decls))
            elif prelude.startswith("@"):
                raise EquationError(f"KaTeX's stylesheet has an at-rule this build cannot trim: {prelude!r}")
            else:
                self.rules.append(Rule([Selector.parse(s) for s in prelude.split(",")], decls, i))
        if re.sub(r"([^{}]+)\{([^{}]*)\}", "", body).strip():
            raise EquationError("KaTeX's stylesheet has nesting this build cannot read")
        self.classes = frozenset(c for r in self.rules for s in r.selectors for p in s.compounds
                                 for c in p.classes | p.not_classes) | SITE_CLASSES
        # What unwrapping a <span> could change: a child selector's match, or the children of a flex or table box
        self.child_selectors = [s for r in self.rules for s in r.selectors if ">" in s.parts]
        layout = re.compile(r"display:\s*(?:inline-)?(?:flex|table|grid)|display:\s*table-")
        self.layout_classes = frozenset(c for r in self.rules if layout.search(r.declarations)
                                        for s in r.selectors for c in s.compounds[-1].classes)
        self.generated = [(s, r.declared()["content"]) for r in self.rules for s in r.selectors
                          if s.pseudo and "content" in r.declared()]  # ::before/::after text
        self._font_rules = [(s, r.order, {k: v for k, v in r.declared().items() if k in (*FONT_PROPS, "font")})
                            for r in self.rules for s in r.selectors if s.pseudo is None
                            and any(k in (*FONT_PROPS, "font") for k in r.declared())]

    # -- the cascade, for the three font properties

    @staticmethod
    def _shorthand(value: str) -> dict[str, str]:
        """`font: normal 1.21em KaTeX_Main,math,serif` -> family, weight and style (the shorthand resets both)."""
        words = value.split()
        size = next(i for i, w in enumerate(words) if re.match(r"[\d.]", w))
        out = {"font-weight": "400", "font-style": "normal", "font-family": " ".join(words[size + 1:])}
        for w in words[:size]:
            if w in ("italic", "oblique"):
                out["font-style"] = w
            elif w == "bold" or w.isdigit():
                out["font-weight"] = w
        return out

    def _declared(self, el: Element) -> dict[str, str]:
        best: dict[str, tuple] = {}
        for sel, order, decls in self._font_rules:
            if sel.matches(el):
                expanded = {}
                for k, v in decls.items():
                    expanded.update(self._shorthand(v) if k == "font" else {k: v})
                for k, v in expanded.items():
                    important = v.endswith("!important")
                    key = (important, sel.specificity, order)
                    if k not in best or key > best[k][0]:
                        best[k] = (key, v.removesuffix("!important").strip())
        return {k: v for k, (_, v) in best.items()}

    def computed_font(self, el: Element) -> tuple[str, int, str]:
        """(family, weight, style) the element's text is drawn with: its own rules, else inherited."""
        found: dict[str, str] = {}
        node = el
        while node is not None and len(found) < 3:
            if node.tag != "#root":
                for k, v in self._declared(node).items():
                    found.setdefault(k, v)
            node = node.parent
        if "font-family" not in found:
            raise EquationError(f"no font-family for KaTeX's <{el.tag} class={el.attrs.get('class')!r}>")
        family = found["font-family"].split(",")[0].strip().strip("'\"")
        weight = {"normal": 400, "bold": 700}.get(found.get("font-weight", "400")) or int(found.get("font-weight", "400"))
        return family, weight, found.get("font-style", "normal")

    def face_for(self, family: str, weight: int, style: str) -> Face | None:
        """The @font-face a browser picks (CSS Fonts: style first, then the nearest weight)."""
        faces = [f for f in self.faces if f.family == family]
        if not faces:
            return None
        order = {"italic": ["italic", "oblique", "normal"], "oblique": ["oblique", "italic", "normal"]}.get(
            style, ["normal", "oblique", "italic"])
        style = next(s for s in order if any(f.style == s for f in faces))
        faces = [f for f in faces if f.style == style]

        def rank(f: Face) -> tuple[int, int]:
            w = f.weight
            if 400 <= weight <= 500:  # the weight, up to 500; then lighter; then heavier
                return (0, w - weight) if weight <= w <= 500 else (1, weight - w) if w < weight else (2, w - weight)
            if weight < 400:  # lighter first
                return (0, weight - w) if w <= weight else (1, w - weight)
            return (0, w - weight) if w >= weight else (1, weight - w)  # heavier first

        return min(faces, key=rank)

    # -- what the site needs

    def trimmed(self, used: list[Element], fonts: set[str], aliases: dict[str, str] | None = None) -> str:
        """The stylesheet with only the rules that can match `used` markup and the @font-face of `fonts`,
        its class names written as `aliases` {class: short name} (those the site's HTML uses)."""
        aliases = aliases or {}
        classes = {c for el in used for c in el.classes}
        tags = {el.tag for el in used} | {"body", "html"}
        out = [f"@font-face{{{self._woff2_only(f.declarations)}}}" for f in self.faces if f.font in fonts]
        kept = []
        for rule in self.rules:
            selectors = [re.sub(r"\.([\w-]+)", lambda m: "." + aliases.get(m.group(1), m.group(1)), s.text)
                         for s in rule.selectors
                         if all(p.classes <= classes and (p.tag is None or p.tag in tags) for p in s.compounds)]
            if selectors:
                kept.append((selectors, rule.declarations))
        counters = any("counter-increment" in d for _, d in kept)
        out += [f"{','.join(s)}{{{d}}}" for s, d in kept if counters or not re.fullmatch(r"counter-reset:[^;]*", d)]
        return "".join(out)

    @staticmethod
    def _woff2_only(declarations: str) -> str:
        return re.sub(r"src:[^;}]*", lambda m: "src:" + re.search(r"url\(fonts/[\w.-]+\.woff2\) format\(\"woff2\"\)",
                                                                  m.group(0)).group(0), declarations)


# ------------------------------------------------------------------ lighter HTML

STYLE_ZERO = re.compile(r"(?<![\w.])(-?)0\.(?=\d)")


def _mathml(katex: Element) -> Element | None:
    return next((el for el in katex.iter() if el.tag == "math"), None)


def lighter(katex_html: str, stylesheet: Stylesheet) -> str:
    """KaTeX's output for one formula, smaller where the rendering and what screen readers read stay the same.

    MathML (what screen readers read; its box is clipped to nothing):
    - the TeX source that KaTeX repeats as an annotation is left out (nothing here reads it), and with
      it the <semantics> and outer <mrow> wrappers (<math> is a row itself), and `xmlns` (the HTML
      parser puts <math> and <svg> in their namespaces);
    - a formula that is one token inline (a variable such as N, a Greek letter, a number, an upright
      name) keeps no MathML and no strut: `<span class="katex">` and the token's own span, which a
      screen reader reads as the token. Anything larger keeps MathML, the HTML hidden from screen readers.
    HTML (what readers see):
    - classes that no stylesheet names (KaTeX's atom classes: mord, mbin, mrel, mopen, mclose,
      mpunct, mtight, ...) are dropped, and a <span> left without attributes around text only is
      unwrapped where the page looks the same to the pixel (`_unwrap_if_unseen`);
    - inline styles lose leading zeros and the last semicolon (`height:.6833em`).
    """
    root = parse(katex_html)
    katex = next(el for el in root.children if isinstance(el, Element))
    math = _mathml(katex)
    if math is not None:
        math.attrs.pop("xmlns", None)
        sem = math.children[0] if len(math.children) == 1 and isinstance(math.children[0], Element) else None
        if sem is not None and sem.tag == "semantics":
            kept = [c for c in sem.children if not (isinstance(c, Element) and c.tag.startswith("annotation"))]
            if len(kept) == 1 and isinstance(kept[0], Element) and kept[0].tag == "mrow" and not kept[0].attrs:
                kept = kept[0].children
            math.children = kept
            for c in kept:
                if isinstance(c, Element):
                    c.parent = math
    for el in list(katex.iter()):
        if el.tag == "svg":
            el.attrs.pop("xmlns", None)
        if el.tag != "span" or math is not None and _inside(el, math):
            continue
        if "class" in el.attrs:
            keep = [c for c in el.classes if c in stylesheet.classes]
            if keep:
                el.attrs["class"] = " ".join(keep)
            else:
                del el.attrs["class"]
        if "style" in el.attrs:
            el.attrs["style"] = STYLE_ZERO.sub(r"\1.", el.attrs["style"]).rstrip(";")
    for el in list(katex.iter()):
        if el.tag == "span" and not el.attrs and el.parent is not None and el.parent.tag == "span":
            _unwrap_if_unseen(el, stylesheet)
    single = _single_token(katex, math)
    if single is not None:
        katex.children = single
    return serialize(root)


def _unwrap_if_unseen(el: Element, stylesheet: Stylesheet) -> None:
    """Replace a <span> without attributes that holds only text (or nothing) by its text, where nothing
    could tell: no child selector matches it, its parent is no flex or table box, and its text does not
    join the text beside it (one run of text is laid out a hundredth of a pixel apart from two). A span
    around other elements stays: Chromium then paints the text beside them at another sub-pixel offset."""
    parent = el.parent
    if (any(isinstance(c, Element) for c in el.children) or set(parent.classes) & stylesheet.layout_classes
            or any(s.matches(el) for s in stylesheet.child_selectors)):
        return
    i = next(i for i, c in enumerate(parent.children) if c is el)
    text_before = i > 0 and isinstance(parent.children[i - 1], str)
    text_after = i + 1 < len(parent.children) and isinstance(parent.children[i + 1], str)
    if (text_before or text_after) if el.children else (text_before and text_after):
        return
    parent.children[i:i + 1] = el.children


def _inside(el: Element, ancestor: Element) -> bool:
    while el is not None:
        if el is ancestor:
            return True
        el = el.parent
    return False


ONE_TOKEN = frozenset({"mi", "mn", "mtext"})


def _single_token(katex: Element, math: Element | None) -> list | None:
    """An inline formula of one token: the children of its one base, without the strut; else None."""
    if math is None or "katex" not in katex.classes or math.attrs.get("display") == "block":
        return None
    tokens = [c for c in math.children if not (isinstance(c, str) and not c.strip())]
    if not (len(tokens) == 1 and isinstance(tokens[0], Element) and tokens[0].tag in ONE_TOKEN
            and all(isinstance(c, str) for c in tokens[0].children)):
        return None
    html_part = next(el for el in katex.children if isinstance(el, Element) and "katex-html" in el.classes)
    bases = [c for c in html_part.children if isinstance(c, Element)]
    if len(bases) != 1 or "katex-base" not in bases[0].classes:
        return None
    content = [c for c in bases[0].children if not (isinstance(c, Element) and "katex-strut" in c.classes)]
    for c in content:
        if isinstance(c, Element):
            c.parent = katex
    return content


# ------------------------------------------------------------------ one build


# Two substitutions over the whole site's formulas, each paid for by a few rules in the stylesheet
# (`Build.prepare`):
# - an inline style that many formulas repeat (a space, a strut's height, a script's shift) becomes a
#   class with the same declarations, marked !important: they then win over every rule as the inline
#   style did (no other !important rule reaches KaTeX's inner spans). Only for styles used this often:
STYLE_CLASS_MIN = 6
# - KaTeX's class names become short ones, in the HTML and the stylesheet alike (`vlist-r` -> `zb`),
#   the most used first; the classes in SITE_CLASSES keep their names. z + digits: style classes,
#   z + letters: KaTeX's classes; neither is a class of KaTeX, Material or Pygments.
STYLED_SPAN = re.compile(r'<span(?: class="([^"]*)")? style="([^"]*)"')
CLASS_ATTR = re.compile(r' class="([^"]*)"')


def _short_names(n: int) -> list[str]:
    """z + letters: za ... zz, zaa ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    names: list[str] = []
    width = 1
    while len(names) < n:
        for i in range(len(letters) ** width):
            word = ""
            for _ in range(width):
                i, r = divmod(i, len(letters))
                word = letters[r] + word
            names.append("z" + word)
        width += 1
    return names[:n]


class Build:
    """One build's equations.

    `prepare` (build_site.on_env, once every page's HTML is there, before any is written) typesets
    the whole site's formulas in one node run, and makes the stylesheet and the fonts they need;
    `typeset` (on_post_page) puts them into each page. Without `prepare` (a test), `typeset` renders
    what it meets and keeps inline styles.
    """

    def __init__(self, root: Path):
        self.sources = site_files(root)  # verified originals
        self.katex_js = renderer(root)
        self.stylesheet = Stylesheet(self.sources[f"{SITE_DIR}/katex.min.css"].read_text())
        self.html: dict[tuple[str, bool], str] = {}  # (TeX, display) -> KaTeX's HTML, trimmed (`lighter`)
        self.final: dict[tuple[str, bool], str] = {}  # the same with styles as classes and short names (prepare)
        self.style_classes: dict[str, str] = {}  # inline style -> class name
        self.aliases: dict[str, str] = {}  # KaTeX's class -> short name
        self.prepared = False

    def _render(self, keys: list[tuple[str, bool]], where: dict[tuple[str, bool], list[str]]) -> None:
        todo = sorted(set(keys) - self.html.keys())
        if not todo:
            return
        errors: dict[str, list[str]] = {}
        for key, result in zip(todo, render(todo, self.katex_js), strict=True):
            if "error" in result:
                open_, close = ("$$", "$$") if key[1] else DELIMITERS["span"]
                for page in where[key]:
                    errors.setdefault(page, []).append(f"  {open_} {key[0]} {close}\n    {result['error']}")
            else:
                self.html[key] = lighter(result["html"], self.stylesheet)
        if errors:
            raise EquationError("\n".join(f"{page}: KaTeX cannot typeset {len(e)} equation(s):\n" + "\n".join(e)
                                          for page, e in sorted(errors.items())))

    def prepare(self, pages: list[tuple[str, str]]) -> dict[str, bytes]:
        """Typeset every formula of [(page path, page HTML)]; return the site's KaTeX files {site path: bytes}.

        A formula KaTeX refuses raises EquationError naming the page, the formula and KaTeX's message.
        """
        found = [(path, _source(m, path)) for path, page_html in pages for m in TYPESET.finditer(page_html)]
        where: dict[tuple[str, bool], list[str]] = {}
        for path, key in found:
            where.setdefault(key, []).append(path)
        self._render([key for _, key in found], where)
        weight = {}  # how often each formula appears in the site
        for _, key in found:
            weight[key] = weight.get(key, 0) + 1
        styles: dict[str, int] = {}
        for key, n in weight.items():
            for _, style in STYLED_SPAN.findall(self.html[key]):
                styles[style] = styles.get(style, 0) + n
        frequent = sorted((style for style, n in styles.items() if n >= STYLE_CLASS_MIN), key=lambda s: (-styles[s], s))
        self.style_classes = {style: f"z{i}" for i, style in enumerate(frequent)}
        styled = {key: self._style_classes(self.html[key]) for key in weight}
        classes: dict[str, int] = {}
        for key, n in weight.items():
            for value in CLASS_ATTR.findall(styled[key]):
                for c in value.split():
                    if c not in SITE_CLASSES and c not in self.style_classes.values():
                        classes[c] = classes.get(c, 0) + n
        ranked = sorted(classes, key=lambda c: (-classes[c], c))
        self.aliases = dict(zip(ranked, _short_names(len(ranked)), strict=True))
        self.final = {key: CLASS_ATTR.sub(lambda m: ' class="' + " ".join(self.aliases.get(c, c) for c in m.group(1).split())
                                          + '"', markup) for key, markup in styled.items()}
        self.prepared = True
        return self.site_files()

    def _style_classes(self, markup: str) -> str:
        def sub(m: re.Match) -> str:
            name = self.style_classes.get(m.group(2))
            if name is None:
                return m.group(0)
            return f'<span class="{m.group(1)} {name}"' if m.group(1) else f'<span class="{name}"'
        return STYLED_SPAN.sub(sub, markup)

    def typeset(self, page_html: str, page_path: str) -> str:
        """The page with every equation typeset by KaTeX (prepared, or rendered now when not)."""
        keys = [_source(m, page_path) for m in TYPESET.finditer(page_html)]
        missing = set(keys) - self.html.keys()
        if missing and self.prepared:
            raise EquationError(f"{page_path}: {len(missing)} equation(s) appeared after the pages were read "
                                f"(prepare): {sorted(missing)[:3]}")
        self._render(keys, {key: [page_path] for key in keys})
        shown = self.final if self.prepared else self.html
        return TYPESET.sub(lambda m: f'<{m.group(1)} class="arithmatex">{shown[_source(m, page_path)]}</{m.group(1)}>',
                           page_html)

    def glyphs(self) -> tuple[list[Element], dict[str, set[str]]]:
        """Every element of the typeset formulas, and {font file: characters drawn with it}."""
        elements, chars = [], {}
        for _, markup in sorted(self.html.items()):
            root = parse(markup)
            for el in root.iter():
                if el.tag == "#root":
                    continue
                elements.append(el)
                if el.tag in ("math", "svg") or any(a.tag in ("math", "svg") for a in _ancestors(el)):
                    continue  # MathML is drawn in the browser's math font, not KaTeX's; SVG has no text here
                text = el.text() + self._generated_text(el)
                if not text:
                    continue
                family, weight, style = self.stylesheet.computed_font(el)
                face = self.stylesheet.face_for(family, weight, style)
                if face is None:
                    raise EquationError(f"KaTeX's HTML asks for font {family!r}, which its stylesheet does not declare")
                chars.setdefault(face.font, set()).update(text)
        return elements, chars

    def _generated_text(self, el: Element) -> str:
        """Text a ::before/::after rule writes into the element (an equation number), digits for counters."""
        out = ""
        for selector, content in self.stylesheet.generated:
            if selector.matches(el):
                out += "".join(re.findall(r'"([^"]*)"', content)) + ("0123456789" if "counter(" in content else "")
        return out

    def site_files(self) -> dict[str, bytes]:
        """{site path: bytes}: the stylesheet and the fonts for the formulas typeset so far."""
        elements, chars = self.glyphs()
        classes = "".join(f".{name}{{{';'.join(d + '!important' for d in style.split(';') if d)}}}"
                          for style, name in self.style_classes.items())
        out = {f"{SITE_DIR}/katex.min.css": (
            "/* KaTeX's stylesheet, only what this site's equations use; then the inline styles they repeat, "
            "as classes: docs/hooks/equations.py */\n" + self.stylesheet.trimmed(elements, set(chars), self.aliases)
            + classes).encode()}
        for font, text in sorted(chars.items()):
            out[f"{SITE_DIR}/{font}"] = subset_font(self.sources[f"{SITE_DIR}/{font}"], text)
        return out


def _ancestors(el: Element):
    el = el.parent
    while el is not None:
        yield el
        el = el.parent


# FreeType's auto-hinter (Chromium on Linux hints this way) measures a font's heights (blue zones) and
# stem widths on these characters of each script, once per font; a subset without them would be hinted
# from other heights and draw its glyphs a few shades off. Each subset keeps them, for Latin (also the
# script of symbols and digits) and for any script it draws (FreeType's afblue.dat, and the standard characters o O 0).
AUTOHINT_BLUES = {
    "latin": ("THEZOCQSLUfijkdbhuxzoesncrpqgjy0", None),
    "greek": ("\u0393\u0392\u0395\u0396\u0398\u039f\u03a9\u0394\u039e\u03b2\u03b8\u03b4\u03b6\u03bb\u03be"
              "\u03b1\u03b5\u03b9\u03bf\u03c0\u03c3\u03c4\u03c9\u03b3\u03b7\u03bc\u03c1\u03c6\u03c7\u03c8",
              (0x0370, 0x03FF)),
    "cyrillic": ("\u0411\u0412\u0415\u041f\u0417\u041e\u0421\u042d\u0428\u0445\u043f\u043d\u0448\u0435"
                 "\u0437\u043e\u0441\u0440\u0444\u0443", (0x0400, 0x04FF)),
}


def _autohint_blues(text: str) -> str:
    return "".join(chars for chars, span in AUTOHINT_BLUES.values()
                   if span is None or any(span[0] <= ord(c) <= span[1] for c in text))


def subset_font(woff2: Path, text: str) -> bytes:
    """The woff2 font with only the glyphs for `text` (and .notdef) and the auto-hinter's reference
    characters; hinting and metrics kept; deterministic."""
    try:
        from fontTools import subset
    except ImportError as err:  # pragma: no cover - the docs extra has it
        raise EquationError("fontTools is missing: install the project's `docs` extra (pyproject.toml)") from err
    options = subset.Options()
    options.flavor = "woff2"
    options.recalc_timestamp = False  # the head table's date stays KaTeX's: two builds, the same bytes
    try:
        font = subset.load_font(str(woff2), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted({ord(c) for c in set(text) | set(_autohint_blues(text))}))
        subsetter.subset(font)
        buf = io.BytesIO()
        subset.save_font(font, buf, options)
    except ImportError as err:
        raise EquationError("woff2 needs brotli: install the project's `docs` extra (pyproject.toml)") from err
    return buf.getvalue()
