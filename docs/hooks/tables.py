"""Tables on a phone: a table of three or more columns is read row by row, each cell beside its column's name.

A wide table (the GPU catalog, the pipelines, the bounds beside measurements) is wider than a 375 px
phone's column, and scrolling it sideways hides all but two or three columns at a time. So the build
marks each table of at least STACK_FROM columns (`data-c2-stack`) and writes its column's header text on
every body cell (`data-label`); on a phone chapter2.css lays each row out as a block of "header  value"
lines, and on a wider screen the table is a table. The header row stays in the page (visually hidden on
a phone), so the table reads the same to a screen reader at every width.
"""

from __future__ import annotations

import html
import re

STACK_FROM = 3  # columns: three with a long link (2.3's pipelines and their sources) are already too wide
TABLE = re.compile(r"<table>(.*?)</table>", re.S)
HEAD = re.compile(r"<thead>(.*?)</thead>", re.S)
TH = re.compile(r"<th\b[^>]*>(.*?)</th>", re.S)
ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
TD = re.compile(r"<td\b")
TAG = re.compile(r"<[^>]+>")


def label(cell_html: str) -> str:
    """A header cell's text as an attribute value: tags (abbreviations, links) dropped, quotes escaped."""
    return html.escape(" ".join(html.unescape(TAG.sub("", cell_html)).split()), quote=True)


def _stack(m: re.Match) -> str:
    inner = m.group(1)
    head = HEAD.search(inner)
    labels = [label(th) for th in TH.findall(head.group(1))] if head else []
    if len(labels) < STACK_FROM:
        return m.group(0)

    def row(r: re.Match) -> str:
        cells = iter(labels)
        return "<tr>" + TD.sub(lambda _: f'<td data-label="{next(cells, "")}"', r.group(1)) + "</tr>"

    body = inner[head.end():]
    return "<table data-c2-stack>" + inner[:head.end()] + ROW.sub(row, body) + "</table>"


def mark_tables(page_html: str) -> str:
    """Every Markdown table of STACK_FROM or more columns marked to stack on a phone, its cells labelled."""
    return TABLE.sub(_stack, page_html)
