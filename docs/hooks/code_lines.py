"""Code listings that wrap on a phone: each line's indentation, so its wrapped continuation hangs under it.

pymdownx.highlight (mkdocs.yml, `line_spans`) puts every line of a listing in a span of its own,
`<span id="__span-B-L">`. chapter2.css makes each such span a block that wraps at the column's edge
(`white-space: pre-wrap`) with a hanging indent; CSS cannot count a line's leading spaces, so the build
writes them on the span, `style="--i:8"`, and the stylesheet hangs the continuation 4 characters in from
where the line's text starts:

    def f(a, b,              def f(a, b,
          c):          ->        c):           (a line wider than the column, wrapped; indent 0)
        return a + b + c     ...

The page's Content-Security-Policy allows inline styles (csp.py), as KaTeX's output needs too.
"""

from __future__ import annotations

import re

# one line's span and its content, up to the next line's span or the end of the listing
LINE = re.compile(r'<span id="(__span-\d+-\d+)">(.*?)(?=<span id="__span-\d+-\d+">|</code>)', re.S)
TAG = re.compile(r"<[^>]+>")


def indent(line_html: str) -> int:
    """Leading spaces of one line's text (its HTML without tags): 8 for '<span class="w">        </span>return'."""
    text = TAG.sub("", line_html)
    return len(text) - len(text.lstrip(" "))


def mark_indents(html: str) -> str:
    """Every indented line span of a page's listings gets style="--i:N" (N its leading spaces); others unchanged."""
    def mark(m: re.Match) -> str:
        n = indent(m.group(2))
        attrs = f'id="{m.group(1)}"' + (f' style="--i:{n}"' if n else "")
        return f"<span {attrs}>{m.group(2)}"
    return LINE.sub(mark, html)
