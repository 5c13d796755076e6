"""docs/hooks/tables.py: a table of three or more columns marked to read row by row on a phone, each body cell
labelled with its column's header text. The layout itself is checked in a browser
(tests/browser/test_equations_in_browser.py)."""

from __future__ import annotations

import re
import sys

from conftest import ROOT

HOOKS = ROOT / "docs" / "hooks"
if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))  # as MkDocs does while it loads the hook

import tables  # noqa: E402


def _table(heads, rows):
    head = "".join(f"<th>{h}</th>\n" for h in heads)
    body = "".join("<tr>\n" + "".join(f'<td style="text-align: right;">{c}</td>\n' for c in row) + "</tr>\n" for row in rows)
    return f"<table>\n<thead>\n<tr>\n{head}</tr>\n</thead>\n<tbody>\n{body}</tbody>\n</table>"


def test_each_cell_carries_its_columns_name_as_text():
    page = "<p>x</p>" + _table(['GPU', 'Dense <abbr title="16-bit">FP16</abbr> TFLOP/s', 'say "hi" &amp; go'],
                               [["A100", "312", "a"], ["H100", "989.4", "b"]])
    out = tables.mark_tables(page)
    assert out.startswith("<p>x</p><table data-c2-stack>")
    labels = re.findall(r'<td data-label="([^"]*)" style="text-align: right;">', out)
    assert labels == ["GPU", "Dense FP16 TFLOP/s", "say &quot;hi&quot; &amp; go"] * 2
    assert re.sub(r' data-label="[^"]*"| data-c2-stack', "", out) == page  # nothing else changes


def test_a_two_column_table_and_a_table_without_a_header_stay_as_they_are():
    two = _table(["name", "value"], [["a", "1"]])
    headless = "<table>\n<tbody>\n<tr>\n<td>a</td><td>b</td><td>c</td>\n</tr>\n</tbody>\n</table>"
    assert tables.mark_tables(two + headless) == two + headless
    assert tables.STACK_FROM == 3


def test_every_wide_table_of_the_built_site_is_marked_and_labelled(site_dir):
    marked = 0
    for page in site_dir.rglob("index.html"):
        for attrs, inner in re.findall(r"<table([^>]*)>(.*?)</table>", page.read_text(), re.S):
            if 'class="c2-compare__table"' in attrs:
                continue  # a calculator's comparison: it stacks on a phone by its own rules (chapter2.css, @container)
            columns = len(re.findall(r"<th\b", inner.split("</thead>")[0])) if "<thead>" in inner else 0
            assert ("data-c2-stack" in attrs) == (columns >= 3), (page, columns)
            if columns >= 3:
                body = inner.split("</thead>")[1]
                assert len(re.findall(r"<td\b", body)) == len(re.findall(r'<td data-label="', body)) > 0, page
                marked += 1
    assert marked >= 20
