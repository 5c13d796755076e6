"""docs/hooks/code_lines.py: each listing line's indentation written on its span, so a wrapped line hangs under
its own text (chapter2.css); the built pages carry it on every indented line. The browser side, that lines wrap
and hang at 375 px, is tests/browser/test_equations_in_browser.py."""

from __future__ import annotations

import html
import re
import sys

from conftest import ROOT

HOOKS = ROOT / "docs" / "hooks"
if str(HOOKS) not in sys.path:
    sys.path.insert(0, str(HOOKS))  # as MkDocs does while it loads the hook

import code_lines  # noqa: E402

LISTING = ('<pre><span></span><code><span id="__span-0-1"><a id="__codelineno-0-1"></a><span class="k">def</span> f():\n'
           '</span><span id="__span-0-2"><a id="__codelineno-0-2"></a><span class="w">        </span>'
           '<span class="k">return</span> 1\n</span><span id="__span-0-3"><span class="sd">   doc</span>\n</span></code></pre>')


def test_each_indented_line_carries_its_leading_spaces():
    out = code_lines.mark_indents(LISTING)
    assert re.findall(r'<span id="__span-0-(\d)"(?: style="--i:(\d+)")?>', out) == [("1", ""), ("2", "8"), ("3", "3")]
    assert re.sub(r' style="--i:\d+"', "", out) == LISTING  # nothing else changes


def test_indent_counts_spaces_of_the_text_not_of_the_markup():
    assert code_lines.indent('<a id="x"></a><span class="w">    </span><span class="n">x</span>') == 4
    assert code_lines.indent('<span class="s">  "a"</span>') == 2
    assert code_lines.indent("x = 1") == 0
    assert code_lines.indent("   ") == 3  # a blank line with spaces: harmless, nothing to wrap


def test_every_indented_line_of_the_built_site_carries_its_indentation(site_dir):
    checked = 0
    for page in site_dir.rglob("index.html"):
        for attrs, body in re.findall(r'<span id="__span-\d+-\d+"([^>]*)>(.*?)(?=<span id="__span-|</code>)', page.read_text(), re.S):
            text = html.unescape(re.sub(r"<[^>]+>", "", body))
            spaces = len(text) - len(text.lstrip(" "))
            assert attrs == (f' style="--i:{spaces}"' if spaces else ""), (page, text[:60], attrs)
            checked += 1
    assert checked > 500
