"""MkDocs hook: every glossary term a tap away (content: `chapter2.pages.glossary.TERMS`).

- The glossary page: `<!-- glossary -->` in docs/glossary.md becomes every entry, grouped, each with its
  definition, a number from the running example where one helps, and a link to where the site explains it
  (Markdown links, so MkDocs checks that each page and anchor exists).
- Abbreviations: every page's Markdown gets the `*[FORM]: definition` lines of the terms' `abbr` forms, so
  Python-Markdown's `abbr` extension wraps every use of them in an `<abbr title>`.
- First uses: in each page's HTML (not the glossary's), the first use of every term in the running prose
  becomes a link to its glossary entry, with the definition as its `title`. Running prose is text inside
  a paragraph, list item or definition, outside headings, links, code, math, tables, calculators, figures,
  snippets, forms, the chapter map and the recall cards. A closed `<details>` block (the reference layer)
  counts apart: a term its reader meets there before the running prose has used it is linked there too.
  An `<abbr>` whose text is a term's first use is replaced by the link.

Material's `content.tooltips` (mkdocs.yml) shows a `title` as a tooltip on hover and keyboard focus;
docs/assets/chapter2/terms.js makes a first tap on a term's link show it, and a second tap follow the link.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import directives
from markdown.extensions.toc import slugify
from mkdocs.exceptions import PluginError

from chapter2 import pages
from chapter2.pages import chapter_map
from chapter2.pages.glossary import GROUPS, TERMS, Term

GLOSSARY_PAGE = "glossary.md"
GLOSSARY_DIRECTIVE = re.compile(r"^[ \t]*<!--\s*glossary\s*-->[ \t]*$", re.M)
DOCS = Path(__file__).resolve().parents[1]


def definition_text(term: Term, page_path: str = GLOSSARY_PAGE) -> str:
    """The term's definition as plain text, its facts written out."""
    try:
        return pages.FACT_REF.sub(lambda m: pages.text(m.group(1)), term.definition)
    except pages.UnknownFact as err:
        raise PluginError(f"{page_path}: glossary entry {term.name!r}: {err}") from err


# ------------------------------------------------------------------ the glossary page

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)(?:[ \t]*\{[ \t]*#([\w-]+)[^}]*\})?[ \t]*#*[ \t]*$", re.M)


def heading_texts(page: str) -> dict[str, str]:
    """{anchor: heading text} of a page's Markdown headings (explicit `{ #id }` or the toc's slug)."""
    out = {}
    source = re.sub(r"^(```|~~~).*?^\1", "", (DOCS / page).read_text(encoding="utf-8"), flags=re.M | re.S)
    for _, text, explicit in _HEADING.findall(source):
        out[explicit or slugify(text, "-")] = text.strip()
    return out


def explained_label(term: Term) -> str:
    """The link text of where a term is explained: the section's number and the heading's text."""
    page, anchor = term.explained.split("#")
    titles = {s.page: s.title for s in chapter_map.sections()}
    title = titles.get(page, page.removesuffix(".md"))
    text = heading_texts(page).get(anchor, title)
    if text == title or text.split()[0][0].isdigit():
        return text
    return f"{title.split()[0]} · {text}"


def render_glossary(page_path: str) -> str:
    """Markdown of every entry: an index of the terms, then one definition list per group."""
    out = ["<p class=\"c2-glossary-index\" markdown>"
           + " · ".join(f"[{t.name}](#{t.anchor})" for t in sorted(TERMS, key=lambda t: t.name.lower()))
           + "</p>", ""]
    for group, terms in GROUPS:
        out += [f"## {group}", "", '<dl class="c2-glossary" markdown>']
        for t in terms:
            more = f" {t.example}" if t.example else ""
            out += [f'<dt id="{t.anchor}">{html.escape(t.name)}</dt>',
                    '<dd markdown="1">', "",
                    f"{t.definition}{more} Explained in [{explained_label(t)}]({t.explained}).",
                    "", "</dd>"]
        out += ["</dl>", ""]
    try:
        return directives.expand_facts("\n".join(out), page_path)
    except directives.DirectiveError as err:
        raise PluginError(str(err)) from err


def abbreviation_lines() -> str:
    """`*[FORM]: definition` for every form a term carries on each use (Python-Markdown's abbr syntax)."""
    return "\n".join(f"*[{form}]: {definition_text(t)}" for t in TERMS for form in t.abbr)


def on_page_markdown(markdown, page, config, files):
    if not page.file.src_uri.endswith(".md"):
        return markdown  # notebooks: rendered by mkdocs-jupyter
    if GLOSSARY_DIRECTIVE.search(markdown):
        markdown = GLOSSARY_DIRECTIVE.sub(lambda m: render_glossary(page.file.src_uri), markdown)
    return markdown.rstrip("\n") + "\n\n" + abbreviation_lines() + "\n"


# ------------------------------------------------------------------ first uses, linked

TOKEN = re.compile(r"<!--.*?-->|<(script|style|pre|svg|math|textarea)\b.*?</\1\s*>|<[^>]*>|[^<]+", re.S | re.I)
_TAG = re.compile(r"<\s*(/?)\s*([a-zA-Z][\w-]*)")
_CLASS = re.compile(r"""\bclass\s*=\s*["']([^"']*)["']""")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PROSE_TAGS = {"p", "li", "dd"}
SKIP_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6", "a", "code", "kbd", "samp", "script", "style", "svg", "math",
             "pre", "figure", "figcaption", "button", "select", "option", "textarea", "label", "output", "form",
             "summary", "table", "dt", "nav", "sup", "sub"}
SKIP_CLASSES = {"c2-calc", "c2-snippet", "c2-figure", "c2-chart", "c2-bars", "arithmatex", "katex", "highlight",
                "headerlink", "mermaid", "c2-chapter-map", "c2-recall", "admonition-title", "footnote", "c2-moved",
                "c2-nb-download"}


def _link(term: Term, text: str, prefix: str, page_path: str) -> str:
    title = html.escape(definition_text(term, page_path), quote=True)
    return f'<a class="c2-term" href="{prefix}glossary/#{term.anchor}" title="{title}">{text}</a>'


def link_first_uses(content: str, *, prefix: str, page_path: str = "") -> str:
    """The page's HTML with the first use of each term in running prose linked to the glossary (see above)."""
    patterns = [(t, t.pattern()) for t in TERMS]
    linked_main: set[str] = set()
    linked_ref: set[str] = set()
    stack: list[tuple[str, bool, bool, bool]] = [("", False, False, False)]  # (tag, skip, prose, reference)
    tokens = [m.group(0) for m in TOKEN.finditer(content)]
    out: list[str] = []
    i = 0

    def fresh(reference: bool) -> list:
        done = linked_main | linked_ref if reference else linked_main
        return [(t, p) for t, p in patterns if t.anchor not in done]

    def mark(term: Term, reference: bool):
        (linked_ref if reference else linked_main).add(term.anchor)

    while i < len(tokens):
        tok = tokens[i]
        _, skip, prose, reference = stack[-1]
        linkable = prose and not skip
        if tok.startswith("<!--") or tok[:2] == "<!" or tok[:2] == "<?":
            out.append(tok)
        elif tok.startswith("<"):
            m = _TAG.match(tok)
            if m is None:
                out.append(tok)
            elif m.group(1):  # an end tag: close up to its start tag
                name = m.group(2).lower()
                if any(entry[0] == name for entry in stack[1:]):
                    while stack[-1][0] != name:
                        stack.pop()
                    stack.pop()
                out.append(tok)
            else:
                name = m.group(2).lower()
                # an <abbr> (abbr extension) whose text is a term's first use: the link replaces it
                if (name == "abbr" and linkable and i + 2 < len(tokens) and not tokens[i + 1].startswith("<")
                        and tokens[i + 2].lower().startswith("</abbr")):
                    text = tokens[i + 1]
                    term = next((t for t, p in fresh(reference) if p.fullmatch(text)), None)
                    if term is not None:
                        out.append(_link(term, text, prefix, page_path))
                        mark(term, reference)
                        i += 3
                        continue
                whole = tok.endswith("/>") or name in VOID
                if not whole and not re.match(r"<(script|style|pre|svg|math|textarea)\b", tok, re.I):
                    classes = set((_CLASS.search(tok).group(1) if _CLASS.search(tok) else "").split())
                    stack.append((name, skip or name in SKIP_TAGS or bool(classes & SKIP_CLASSES),
                                  prose or name in PROSE_TAGS, reference or name == "details"))
                out.append(tok)
        elif linkable:
            out.append(_link_text(tok, fresh(reference), linked_ref if reference else linked_main, prefix, page_path))
        else:
            out.append(tok)
        i += 1
    return "".join(out)


def _link_text(text: str, candidates: list, linked: set[str], prefix: str, page_path: str) -> str:
    """Link the earliest use of each candidate term in `text` (the longest where two start together)."""
    out, pos = [], 0
    candidates = list(candidates)
    while candidates:
        best = None
        for term, pattern in candidates:
            m = pattern.search(text, pos)
            if m and (best is None or (m.start(), -m.end()) < (best[1].start(), -best[1].end())):
                best = (term, m)
        if best is None:
            break
        term, m = best
        out += [text[pos:m.start()], _link(term, m.group(0), prefix, page_path)]
        linked.add(term.anchor)
        pos = m.end()
        candidates = [(t, p) for t, p in candidates if t is not term]
    out.append(text[pos:])
    return "".join(out)


def on_page_content(html_text, page, config, files):
    if page.file.src_uri == GLOSSARY_PAGE:
        return html_text
    prefix = "../" * page.url.count("/")
    return link_first_uses(html_text, prefix=prefix, page_path=page.file.src_uri)
