r"""Equations: TeX in the pages, typeset at build time with KaTeX, so no script runs in the browser for math.

Pages write TeX with pymdownx.arithmatex (mkdocs.yml, generic output):

    \( ... \)                inline
    $$ ... $$  or  \[ ... \]   display, on lines of their own

A fact may stand inside an equation, `{{ fact: SECTION.NAME }}`: directives.expand_facts writes it
there as `\text{...}`, with TeX's special characters escaped (`tex_text`). TeX's own braces must
never read as a directive: write `} }`, never two closing (or opening) braces in a row.

Each built page's arithmatex spans and divs become KaTeX's HTML (what readers see) plus MathML (what
screen readers read), rendered by node with the npm package katex, once per page (`typeset`).
Why at build time rather than KaTeX's auto-render in the reader's browser:

- no JavaScript: the equations are there with scripts off, with no flash of raw TeX, and the
  Content-Security-Policy needs nothing new (KaTeX's HTML uses inline style attributes, which
  style-src already allows; its fonts come from the site, font-src 'self');
- strict: a TeX error fails the build, naming the page and the formula, instead of a red
  message on the page that a reader finds;
- lighter: a page with equations loads katex.min.css and the fonts it uses (a few tens of kB),
  not also the 270 kB script and its auto-render.

Files: the renderer (katex/dist/katex.js, run at build time, never shipped), the stylesheet and the
woff2 fonts it names are checked against vendor-files.sha256 before use; the version is pinned
exactly in package.json and `npm ci` checks the tarball. The site ships the stylesheet and its woff2
fonts only: every browser the site supports reads woff2, so the woff and ttf fallbacks the
stylesheet also names are never fetched.
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


class EquationError(RuntimeError):
    pass


def site_files(root: Path) -> dict[str, Path]:
    """{site path: verified file}: katex.min.css and every woff2 font it names."""
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


def typeset(page_html: str, page_path: str, katex_js: Path, cache: dict) -> str:
    """The page with every equation typeset by KaTeX. cache: {(TeX, display): HTML}, one per build.

    A formula KaTeX refuses raises EquationError naming the page, the formula and KaTeX's message.
    """
    found = [_source(m, page_path) for m in TYPESET.finditer(page_html)]
    todo = sorted(set(found) - cache.keys())
    if todo:
        errors = []
        for key, result in zip(todo, render(todo, katex_js), strict=True):
            if "error" in result:
                open_, close = ("$$", "$$") if key[1] else DELIMITERS["span"]
                errors.append(f"  {open_} {key[0]} {close}\n    {result['error']}")
            else:
                cache[key] = lighter(result["html"])
        if errors:
            raise EquationError(f"{page_path}: KaTeX cannot typeset {len(errors)} equation(s):\n" + "\n".join(errors))
    return TYPESET.sub(lambda m: f'<{m.group(1)} class="arithmatex">{cache[_source(m, page_path)]}</{m.group(1)}>',
                       page_html)


ANNOTATION = re.compile(r'<annotation encoding="application/x-tex">.*?</annotation>', re.S)
MATHML = re.compile(r'<span class="katex-mathml">(.*?)</span>(?=<span class="katex-html")', re.S)
ONE_TOKEN = re.compile(r'<math[^>]*><semantics><mrow><(mi|mn|mtext)\b[^>]*>([^<]+)</\1></mrow></semantics></math>')


def lighter(katex_html: str) -> str:
    """KaTeX's output, smaller where nothing is lost (each page holds a few hundred formulas).

    - The TeX source that KaTeX repeats as a MathML annotation is left out (nothing here reads it).
    - A formula that is one token (a variable such as N, a Greek letter, an upright name) keeps only
      its HTML, without aria-hidden: the text a screen reader reads there is the token itself, so the
      MathML copy adds nothing. Anything larger keeps MathML for screen readers, the HTML hidden.
    """
    katex_html = ANNOTATION.sub("", katex_html)
    mathml = MATHML.search(katex_html)
    if mathml and ONE_TOKEN.fullmatch(mathml.group(1)):
        katex_html = katex_html.replace(mathml.group(0), "", 1).replace(
            '<span class="katex-html" aria-hidden="true">', '<span class="katex-html">', 1)
    return katex_html


def stylesheet_link(page_url: str) -> str:
    return f'<link rel="stylesheet" href="{"../" * page_url.count("/")}{SITE_DIR}/katex.min.css">'
