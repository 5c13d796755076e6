"""Each section page reads as an explanation: at most about 1,600 words of running prose, about 3 numbers per 100.

Running prose is the text of `<p>` and `<li>` elements in the page's article that sit outside the reference
layer and the machinery: closed `<details>` blocks (``??? note``), code, tables, figures, forms, calculators,
snippets and typeset math. A word is a whitespace-separated token with a letter or digit in it; a number is a
token that starts with a digit (after any opening bracket or quote). The limits are issue 24's.

Run `python tests/test_reading_limits.py SITE_DIR` to print the table for a built site.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

MAX_WORDS = 1_600
MAX_NUMBERS_PER_100_WORDS = 3.0
SECTION_PAGES = ("neural-networks", "llm-inference", "llm-architecture", "image-generation", "bottlenecks",
                 "attention")

_PROSE = {"p", "li"}
_SKIP_TAGS = {"details", "code", "pre", "table", "figure", "form", "svg", "math", "script", "style", "button",
              "select", "textarea", "output", "nav"}
_SKIP_CLASSES = {"c2-calc", "c2-snippet", "c2-figure", "c2-chart", "c2-bars", "katex", "katex-display",
                 "arithmatex", "highlight", "mermaid", "c2-chapter-map", "c2-recall"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Prose(HTMLParser):
    """Collects the running prose of the first `<article>`: text inside p/li, outside every skipped element."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skipped here or above, prose here or above)
        self.in_article, self.done, self.chunks = False, False, []

    def handle_starttag(self, tag, attrs):
        if self.done:
            return
        if tag == "article" and not self.in_article:
            self.in_article = True
            self.stack = [("article", False, False)]
            return
        if not self.in_article or tag in _VOID:
            return
        classes = set((dict(attrs).get("class") or "").split())
        parent_skip, parent_prose = self.stack[-1][1:] if self.stack else (False, False)
        skip = parent_skip or tag in _SKIP_TAGS or bool(classes & _SKIP_CLASSES)
        self.stack.append((tag, skip, parent_prose or tag in _PROSE))

    def handle_endtag(self, tag):
        if not self.in_article or self.done or tag in _VOID:
            return
        while self.stack:
            top = self.stack.pop()[0]
            if top == tag:
                break
        if not self.stack:
            self.done = True

    def handle_data(self, data):
        if self.in_article and not self.done and self.stack:
            _, skip, prose = self.stack[-1]
            if prose and not skip:
                self.chunks.append(data)


def prose_words(html: str) -> list[str]:
    """The words of an HTML page's running prose (see the module docstring)."""
    parser = _Prose()
    parser.feed(html)
    tokens = " ".join(parser.chunks).split()
    return [t for t in tokens if re.search(r"\w", t)]


def is_number(token: str) -> bool:
    """A token that starts with a digit, after any opening bracket or quote: "8B", "(128", "2.2", "“90"."""
    return bool(re.match(r"[(\[{\"'“‘]*\d", token))


def measure(html: str) -> tuple[int, float]:
    """(words of running prose, numbers per 100 of those words)."""
    words = prose_words(html)
    numbers = sum(is_number(w) for w in words)
    return len(words), (100.0 * numbers / len(words) if words else 0.0)


# -- the counter itself, on a page small enough to count by hand ------------------------------------------------

_SAMPLE = """<html><body><nav><p>menu words here</p></nav><article class="md-content__inner">
<h1>Title is not prose</h1>
<p>One <strong>two</strong> 3 four, (5 six.</p>
<ul><li>seven 8B<br>nine</li></ul>
<details class="note"><summary>s</summary><p>hidden 1 2 3</p></details>
<div class="c2-calc"><p>calc 4 5</p></div>
<p>ten <code>x = 1</code> <span class="katex">N = 4096</span> eleven</p>
<table><tr><td><p>12 13</p></td></tr></table>
<figure><p>caption 14</p></figure>
</article><p>after the article</p></body></html>"""


def test_the_counter_counts_only_running_prose():
    words = prose_words(_SAMPLE)
    assert words == ["One", "two", "3", "four,", "(5", "six.", "seven", "8B", "nine", "ten", "eleven"]
    count, density = measure(_SAMPLE)
    assert count == 11 and density == pytest.approx(100 * 3 / 11)


def test_a_number_is_a_token_starting_with_a_digit():
    assert [is_number(t) for t in ("8B", "(128", "2.2", "“90", "H100", "x", "−3")] == [
        True, True, True, True, False, False, False]


# -- the built site --------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("page", SECTION_PAGES)
def test_section_page_reads_as_an_explanation(site_dir, page):
    words, density = measure((site_dir / page / "index.html").read_text())
    assert words <= MAX_WORDS, f"{page}: {words} words of running prose, more than {MAX_WORDS}"
    assert density <= MAX_NUMBERS_PER_100_WORDS, (
        f"{page}: {density:.1f} numbers per 100 words of running prose, more than {MAX_NUMBERS_PER_100_WORDS}")


if __name__ == "__main__":
    site = Path(sys.argv[1])
    for index in sorted(site.glob("**/index.html")):
        page = index.parent.relative_to(site).as_posix() or "index"
        if page.startswith(("pyodide", "search", "assets", "figures")):
            continue
        n, d = measure(index.read_text())
        print(f"{page:40s} {n:6d} words  {d:4.1f} numbers/100 words")
