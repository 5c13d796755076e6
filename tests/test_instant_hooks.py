"""What the build does for Material's instant navigation (navigation.instant), which swaps a page's content into
the document the browser keeps and runs the content's scripts again (as plain scripts, with their text):

- one Content-Security-Policy for every page (csp.one_policy): the first page's stays in force, so it must allow
  the inline scripts of all pages;
- a stepper's prebuilt steps (a JSON <script>) sit in a <template> (build_site.inert_frames), where nothing runs;
- a page's own script goes into its content (build_site.in_content), where a swap runs it;
- a notebook's inline listener is added once per document (reading.once_per_document).
The browser side is tests/browser/test_instant_navigation.py."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest
from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]
POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def _hook(name: str):
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)  # as MkDocs does while it loads a hook: its folder is importable
    spec = importlib.util.spec_from_file_location(f"c2_{name}_under_test", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sha(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def _page(script: str) -> str:
    return f"<html><head><title>t</title></head><body><article><script>{script}</script></article></body></html>"


def test_every_page_gets_one_policy_that_allows_every_page_s_inline_scripts(tmp_path):
    csp = _hook("csp")
    pages = {"index.html": "var a = 1;", "b/index.html": "var b = 2;"}
    for rel, script in pages.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(csp.add_policy(_page(script), cdn=False), encoding="utf-8")
    (tmp_path / "plain.html").write_text("<html><head></head><body>no policy</body></html>", encoding="utf-8")
    before = {rel: POLICY.search((tmp_path / rel).read_text()).group(1) for rel in pages}
    assert _sha("var b = 2;") not in before["index.html"]  # each page alone allows only its own

    site = csp.one_policy(tmp_path, cdn=False)

    after = {rel: POLICY.findall((tmp_path / rel).read_text()) for rel in pages}
    assert all(found == [site] for found in after.values())  # one meta each, the same
    assert _sha("var a = 1;") in site and _sha("var b = 2;") in site
    assert (tmp_path / "plain.html").read_text() == "<html><head></head><body>no policy</body></html>"
    # nothing else is loosened: the same directives as a page's own policy, hashes aside
    unhashed = lambda p: re.sub(r" ?'sha256-[^']+'", "", p)  # noqa: E731
    assert unhashed(site) == unhashed(before["index.html"])


def test_prebuilt_steps_go_into_a_template_that_holds_the_same_json():
    hook = _hook("build_site")
    frames = {"3": {"out": "<b>x</b> & y"}}
    inline = f'<p>a</p><script type="application/json" data-calc-frames>{json.dumps(frames)}</script><p>b</p>'
    deferred = '<script type="application/json" data-calc-frames data-src="assets/f.json"></script>'
    out = hook.inert_frames(inline)
    found = re.fullmatch(r'<p>a</p><template data-calc-frames><script type="application/json">(.*)</script>'
                         r"</template><p>b</p>", out, re.S)
    assert found and json.loads(found.group(1)) == frames
    assert hook.inert_frames(deferred) == ('<template data-calc-frames data-src="assets/f.json">'
                                           '<script type="application/json"></script></template>')
    assert hook.inert_frames("<script>var a;</script>") == "<script>var a;</script>"  # other scripts stay


def test_a_page_s_own_script_goes_at_the_end_of_its_content():
    hook = _hook("build_site")
    page = "<head></head><body><article><p>x</p></article><footer></footer><script src='site.js'></script></body>"
    assert hook.in_content(page, "<script defer src='r.js'></script>") == (
        "<head></head><body><article><p>x</p><script defer src='r.js'></script>\n</article><footer></footer>"
        "<script src='site.js'></script></body>")
    with pytest.raises(PluginError, match="<article>"):
        hook.in_content("<body><p>x</p></body>", "<script src='r.js'></script>")


def test_a_notebook_s_copy_notice_listener_is_added_once_per_document():
    reading = _hook("reading")
    body = "\ndocument.addEventListener('clipboard-copy', function(e) { show(e); });\n"
    out = reading.once_per_document(f"<p>x</p><script>{body}</script>")
    script = re.fullmatch(r"<p>x</p><script>(.*)</script>", out, re.S).group(1)
    assert script.startswith("\nif (!window.chapter2CopyNotice) {\n  window.chapter2CopyNotice = true;")
    assert body in script and script.rstrip().endswith("}")
    assert reading.once_per_document("<script>var a;</script>") == "<script>var a;</script>"


def test_the_built_site_has_one_policy_and_nothing_a_swap_would_run_by_mistake(site_dir):
    """Every page carries the same policy, which allows every inline script of every page; inside a page's
    content (what a swap runs again, as plain scripts) there is no script with a type other than JavaScript
    except inside a template; the recall page's script is in its content."""
    policies, inline = set(), set()
    for path in site_dir.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        found = POLICY.findall(text)
        if not found:
            continue
        policies.update(found)
        inline.update(re.findall(r"<script>(.*?)</script>", text, re.S))
        start, end = text.find('data-md-component="container"'), text.rfind("</article>")
        content = re.sub(r"<template\b.*?</template>", "", text[start:end], flags=re.S)
        for tag in re.findall(r"<script\b[^>]*>", content):
            typed = re.search(r'\btype="([^"]*)"', tag)
            assert not typed or typed.group(1) in ("module", "text/javascript"), (path, tag)
    assert len(policies) == 1
    site = policies.pop()
    assert inline and all(_sha(s) in site for s in inline)
    recall = (site_dir / "recall" / "index.html").read_text()
    assert recall.find("recall.js") < recall.rfind("</article>")
