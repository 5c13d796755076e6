r"""Equations: TeX in the pages, typeset at build time with KaTeX, so no script runs in the browser for math.

Pages write TeX with pymdownx.arithmatex (mkdocs.yml, generic output):

    \( ... \)                inline
    $$ ... $$  or  \[ ... \]   display, on lines of their own

A fact may stand inside an equation, `{{ fact: SECTION.NAME }}`: directives.expand_facts writes it
there as `\text{...}`, with TeX's special characters escaped (`tex_text`). TeX's own braces must
never read as a directive: write `} }`, never two closing (or opening) braces in a row.

Each built page's arithmatex spans and divs become KaTeX's HTML (what readers see) plus MathML (what
screen readers read), rendered by node with the npm package katex: every page's formulas at once
(`Build.prepare`, from build_site.on_env), then put into each page (`Build.typeset`). The one change
made to KaTeX's output: the MathML's TeX annotation is dropped (no TeX source left on a page).
Why at build time rather than KaTeX's auto-render in the reader's browser:

- no JavaScript: the equations are there with scripts off, with no flash of raw TeX, and the
  Content-Security-Policy needs nothing new (KaTeX's HTML uses inline style attributes, which
  style-src already allows; its fonts come from the site, font-src 'self');
- strict: a TeX error fails the build, naming the page and the formula, instead of a red
  message on the page that a reader finds;
- lighter: no 270 kB script and its auto-render.

The site serves KaTeX's stylesheet and fonts as the npm package ships them (`site_files`, under
assets/vendor/katex/), each checked against vendor-files.sha256 (the version is pinned exactly in
package.json and `npm ci` checks the tarball). They are the same files on every page, so a reader's
browser caches them across pages, and @font-face makes it fetch only the faces a page draws with, in
the first format it reads (woff2 in every browser the site supports). Page weight is measured by
scripts/bench_math_weight.py (a reader's second page, the cache warm).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

from pyodide_files import verified_vendor_file

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "equations.mjs"
RENDERER = "katex/dist/katex.js"  # node_modules/<this>: run by equations.mjs at build time, never shipped
STYLESHEET = "katex/dist/katex.min.css"
SITE_DIR = "assets/vendor/katex"  # where the stylesheet and its fonts go in the site

# In a page's Markdown (the syntax mkdocs.yml enables): $$...$$, \[...\], \(...\)
SOURCE = re.compile(r"\$\$.+?\$\$|\\\[.+?\\\]|\\\(.+?\\\)", re.S)
# In a built page (arithmatex's generic output): <span class="arithmatex">\(TeX\)</span>, <div ...>\[TeX\]</div>
# (the build marks them `data-search-exclude`: search shows prose, not TeX source; build_site.on_page_content)
TYPESET = re.compile(r'<(span|div) class="arithmatex"(?: data-search-exclude)?>(.*?)</\1>', re.S)
DELIMITERS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}
# KaTeX's MathML keeps the TeX source as an annotation; the pages do not carry it
ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">.*?</annotation>', re.S)
FONT_URL = re.compile(r"url\((fonts/[\w.-]+)\)")

TEX_SPECIAL = {"\\": r"\textbackslash ", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
               "%": r"\%", "_": r"\_", "^": r"\textasciicircum ", "~": r"\textasciitilde ",
               # characters the page layer writes that KaTeX's text mode has no glyph for (strict: an error)
               "\u00d7": r"$\times$", "\u2212": "$-$", "\u2248": r"$\approx$", "\u00a0": "~", "\u202f": r"\,",
               "\u2009": r"\,"}


class EquationError(RuntimeError):
    pass


def site_files(root: Path) -> dict[str, Path]:
    """{site path: verified file}: katex.min.css and every font file it names (woff2, woff, ttf), as shipped."""
    css = verified_vendor_file(root, STYLESHEET)
    files = {f"{SITE_DIR}/katex.min.css": css}
    for font in sorted(set(FONT_URL.findall(css.read_text()))):
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


class Build:
    """One build's equations.

    `prepare` (build_site.on_env, once every page's HTML is there, before any is written) typesets the
    whole site's formulas in one node run; `typeset` (on_post_page) puts them into each page. Without
    `prepare` (a test), `typeset` renders what it meets.
    """

    def __init__(self, root: Path):
        self.katex_js = renderer(root)
        self.html: dict[tuple[str, bool], str] = {}  # (TeX, display) -> KaTeX's HTML and MathML
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
                self.html[key] = ANNOTATION.sub("", result["html"])
        if errors:
            raise EquationError("\n".join(f"{page}: KaTeX cannot typeset {len(e)} equation(s):\n" + "\n".join(e)
                                          for page, e in sorted(errors.items())))

    def prepare(self, pages: list[tuple[str, str]]) -> None:
        """Typeset every formula of [(page path, page HTML)].

        A formula KaTeX refuses raises EquationError naming the page, the formula and KaTeX's message.
        """
        where: dict[tuple[str, bool], list[str]] = {}
        for path, page_html in pages:
            for m in TYPESET.finditer(page_html):
                where.setdefault(_source(m, path), []).append(path)
        self._render(list(where), where)
        self.prepared = True

    def typeset(self, page_html: str, page_path: str) -> str:
        """The page with every equation typeset by KaTeX (prepared, or rendered now when not)."""
        keys = [_source(m, page_path) for m in TYPESET.finditer(page_html)]
        missing = set(keys) - self.html.keys()
        if missing and self.prepared:
            raise EquationError(f"{page_path}: {len(missing)} equation(s) appeared after the pages were read "
                                f"(prepare): {sorted(missing)[:3]}")
        self._render(keys, {key: [page_path] for key in keys})
        return TYPESET.sub(lambda m: f'<{m.group(1)} class="arithmatex">{self.html[_source(m, page_path)]}</{m.group(1)}>',
                           page_html)
