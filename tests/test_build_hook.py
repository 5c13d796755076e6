"""The build hook fails loudly: a broken figure, a tampered Pyodide file, an unknown directive.
And the CDN switch produces a site without self-hosted Pyodide files."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mkdocs.config import load_config
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files

from _oracles import require

ROOT = Path(__file__).resolve().parents[1]


def _hook():
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)  # as MkDocs does while it loads a hook: its folder is importable
    spec = importlib.util.spec_from_file_location("c2_build_site_under_test", ROOT / "docs" / "hooks" / "build_site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def hook_and_config():
    hook = _hook()
    config = load_config(str(ROOT / "mkdocs.yml"))
    config.plugins._current_plugin = None  # set by MkDocs while a real build runs its hooks
    hook.on_config(config)
    yield hook, config
    hook.on_post_build(config)


@pytest.mark.slow  # the build's figure step (every figure drawn), 4 s
def test_a_failing_figure_fails_the_build(hook_and_config, monkeypatch):
    from chapter2.host import figures

    hook, config = hook_and_config
    figures._discover()

    def broken():
        raise RuntimeError("this figure is broken")

    monkeypatch.setitem(figures.REGISTRY, "zz_broken", figures.FigureSpec("zz_broken", "broken", broken))
    with pytest.raises(RuntimeError, match="this figure is broken"):
        hook.on_files(Files([]), config)


@pytest.mark.slow  # copies and hashes the Pyodide distribution, 5 s
def test_a_tampered_pyodide_file_fails_the_build(hook_and_config, tmp_path, monkeypatch):
    hook, config = hook_and_config
    fake_root = tmp_path / "root"
    shutil.copytree(ROOT / "node_modules" / "pyodide", fake_root / "node_modules" / "pyodide")
    with open(fake_root / "node_modules" / "pyodide" / "pyodide.asm.js", "ab") as f:
        f.write(b"\n// tampered\n")
    shutil.copy(ROOT / "pyproject.toml", fake_root / "pyproject.toml")
    shutil.copytree(ROOT / "src", fake_root / "src")
    monkeypatch.setattr(hook, "ROOT", fake_root)
    with pytest.raises(PluginError, match=r"pyodide\.asm\.js.*expected"):
        hook.on_files(Files([]), config)


def test_a_wrong_numpy_wheel_fails_the_build(tmp_path, monkeypatch):
    hook = _hook()
    fake_root = tmp_path / "root"
    shutil.copytree(ROOT / "node_modules" / "pyodide", fake_root / "node_modules" / "pyodide")
    vendor = fake_root / hook.pyodide_files.VENDOR_DIR
    vendor.mkdir(parents=True)
    (vendor / hook.pyodide_files.NUMPY_WHEEL).write_bytes(b"not the official wheel")
    with pytest.raises(hook.pyodide_files.VerificationError, match="official pyodide-lock.json"):
        hook.pyodide_files.numpy_wheel(fake_root)


def test_unknown_directive_targets_fail(hook_and_config):
    hook, _ = hook_and_config
    for text in ["<!-- calculator: no_such_calc -->", "<!-- snippet: no_such_snippet -->", "<!-- figure: no_such_fig -->",
                 "{{ py: no_such_name + 1 }}"]:
        with pytest.raises(hook.directives.DirectiveError):
            hook.directives.expand(text, page_path="x.md", root=ROOT, snippet_cache={})


@pytest.mark.slow  # a whole site build in a subprocess, 14 s
def test_cdn_mode_ships_no_pyodide_core(tmp_path):
    out = tmp_path / "site"
    env = {**os.environ, "CHAPTER2_PYODIDE": "cdn", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    config_js = (out / "assets" / "chapter2" / "config.js").read_text()
    assert '"mode": "cdn"' in config_js and "https://cdn.jsdelivr.net/pyodide/v0.27.7/full/" in config_js
    assert not (out / "pyodide" / "pyodide.asm.wasm").exists()
    assert list((out / "pyodide").glob("chapter2-*.whl"))


@pytest.mark.slow  # mkdocs in a subprocess
def test_bad_pyodide_mode_is_rejected(tmp_path):
    env = {**os.environ, "CHAPTER2_PYODIDE": "sometimes", "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(tmp_path / "s")], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "must be 'self-hosted' or 'cdn'" in proc.stderr


def test_a_tampered_vendored_file_fails_the_build(tmp_path):
    hook = _hook()
    fake_root = tmp_path / "root"
    for rel in ("mermaid/dist/mermaid.esm.min.mjs", "katex/dist/katex.js", "katex/dist/fonts/KaTeX_Main-Regular.woff2"):
        target = fake_root / "node_modules" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((ROOT / "node_modules" / rel).read_bytes() + b"\n")
        with pytest.raises(hook.pyodide_files.VerificationError, match=f"vendored file {rel}"):
            hook.pyodide_files.verified_vendor_file(fake_root, rel)
        assert hook.pyodide_files.verified_vendor_file(ROOT, rel).exists()


def test_every_vendored_file_the_site_ships_is_pinned():
    """mermaid's chunks and KaTeX's fonts are found in node_modules; each must have a pinned sha256, and
    every pinned one must exist (a chunk mermaid imports at run time and the site lacks breaks the diagram)."""
    hook = _hook()
    mermaid = hook.mermaid_files(ROOT)
    katex = hook.equations.site_files(ROOT)
    assert len(mermaid) > 50 and "assets/vendor/mermaid/mermaid.esm.min.mjs" in mermaid
    assert "assets/vendor/katex/katex.min.css" in katex and len(katex) == 61  # the stylesheet, its 20 fonts in 3 formats
    shipped = {p.resolve().relative_to((ROOT / "node_modules").resolve()).as_posix() for p in [*mermaid.values(), *katex.values()]}
    assert shipped | {hook.equations.RENDERER} == set(hook.pyodide_files.vendor_manifest())


def _css_tokens(nodes) -> list:
    """A stylesheet's tokens, nested blocks flattened; whitespace kept except beside `,` `>` `;` `:` and
    braces, and at the ends of a component (where it never changes what a rule means)."""
    out = []
    for node in nodes:
        if node.type == "comment":
            continue
        if node.type in ("qualified-rule", "at-rule"):
            out += [("rule", getattr(node, "at_keyword", None)), *_css_tokens(node.prelude), "{",
                    *_css_tokens(node.content or []), "}"]
        elif node.type in ("function", "() block", "[] block", "{} block"):
            inner = node.arguments if node.type == "function" else node.content
            out += [(node.type, getattr(node, "name", None)), *_css_tokens(inner), "}" if node.type == "{} block" else ")"]
        else:
            out.append("ws" if node.type == "whitespace" else (node.type, node.serialize()))
    out = [tok for i, tok in enumerate(out) if not (tok == "ws" and out[i + 1:i + 2] == ["ws"])]  # (a comment was between)
    kept = []
    for i, tok in enumerate(out):
        near = [out[j] for j in (i - 1, i + 1) if 0 <= j < len(out)]
        if tok == "ws" and (len(near) < 2 or any(t in (("literal", ","), ("literal", ">"), ("literal", ";"), ("literal", ":"), "{", "}")
                                                     or (isinstance(t, tuple) and t[0] in ("rule", "{} block")) for t in near)):
            continue
        kept.append(tok)
    # a declaration list's last `;` is optional
    return [t for i, t in enumerate(kept) if not (t == ("literal", ";") and kept[i + 1:i + 2] == ["}"])]


@pytest.mark.parametrize("name", ["chapter2.css", "recall.css", "notebooks.css"])
def test_served_stylesheets_are_minified_without_changing_a_rule(name):
    tinycss2 = require("tinycss2")
    hook = _hook()
    source = (ROOT / "docs" / "assets" / "chapter2" / name).read_text()
    served = hook.minify_css(source)
    assert len(served) < 0.9 * len(source) and "/*" not in served
    assert _css_tokens(tinycss2.parse_stylesheet(served)) == _css_tokens(tinycss2.parse_stylesheet(source))
    # and the comparison can tell: a descendant combinator lost, or a space inside a value, is another rule
    selector = re.search(r"(?:^|})([^{}@]*[\w\]] [.#\w\[][^{}]*)\{", served)
    value = re.search(r":\s?[^;{}]*?\d\w* \d[^;{}]*[;}]", served)
    assert selector, "no descendant combinator to break"
    for found in (selector, value):
        if found is None:
            continue  # (no value with two numbers in this stylesheet)
        text = found.group(1) if found is selector else found.group(0)
        broken = served.replace(text, text.replace(" ", "", 1) if found is selector else text.replace(" ", "", 2), 1)
        assert broken != served
        assert _css_tokens(tinycss2.parse_stylesheet(broken)) != _css_tokens(tinycss2.parse_stylesheet(source)), text


def test_recall_and_notebook_assets_load_only_where_they_are_used(site_dir):
    recall = (site_dir / "recall" / "index.html").read_text()
    assert 'href="../assets/chapter2/recall.css"' in recall and 'src="../assets/chapter2/recall.js"' in recall
    notebook = (site_dir / "notebooks" / "prefill_decode" / "index.html").read_text()
    assert 'href="../../assets/chapter2/notebooks.css"' in notebook and "recall.css" not in notebook
    for page in ("index.html", "attention/index.html", "neural-networks/index.html"):
        text = (site_dir / page).read_text()
        assert "recall.js" not in text and "recall.css" not in text and "notebooks.css" not in text
    assert "/*" not in (site_dir / "assets" / "chapter2" / "chapter2.css").read_text(), "served stylesheets are minified"


def test_a_page_figure_is_offered_to_phones_as_its_phone_drawing_and_refused_if_unreadable():
    """on_page_content wraps a figure's <img> in a <picture> whose source a narrow screen takes (the phone
    drawing); a figure without one keeps its <img>; a figure whose phone reader would see text under 11 px
    fails the build, naming the page and the figure."""
    from types import SimpleNamespace

    hook = _hook()
    page = SimpleNamespace(file=SimpleNamespace(src_uri="attention.md"))

    def figure(name):
        return (f'<figure class="c2-figure" id="figure-{name}">\n<p><img alt="a &gt; b" loading="lazy" '
                f'src="../figures/{name}.svg" /></p>\n<figcaption>a &gt; b</figcaption>\n</figure>')

    hook._state["figures"] = {"wide": (True, 12.4), "small": (False, 14.7), "tiny": (False, 9.3)}
    html = hook.on_page_content(figure("wide") + figure("small"), page, None, None)
    assert html.count("<picture>") == 1
    assert ('<p><picture><source media="(max-width: 44.9375em)" srcset="../figures/wide.phone.svg"><img alt="a &gt; b" '
            'loading="lazy" src="../figures/wide.svg" /></picture></p>') in html
    assert figure("small") in html
    with pytest.raises(PluginError, match=r"attention\.md: figure 'tiny' shows 9\.3 px text"):
        hook.on_page_content(figure("tiny"), page, None, None)
