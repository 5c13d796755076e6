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


def test_a_page_marks_one_hero_a_figure_or_a_calculator(hook_and_config):
    """`hero` after a figure's or a calculator's name marks the page's one hero (data-hero="true"); a hero figure
    loads at once (no loading=lazy: it is in the first screen). Two heroes on a page, or a snippet as a hero, fail
    the build, naming the page."""
    hook, _ = hook_and_config
    expand = hook.directives.expand
    fig = expand("<!-- figure: causal_mask hero -->\n\n<!-- figure: sliding_window_mask -->", page_path="x.md",
                 root=ROOT, snippet_cache={})
    hero, other = fig.split("<figure")[1:]
    assert 'id="figure-causal_mask" data-hero="true"' in hero and "loading=lazy" not in hero
    assert "data-hero" not in other and "{ loading=lazy }" in other
    calc = expand("<!-- calculator: activations hero -->", page_path="x.md", root=ROOT, snippet_cache={})
    assert re.search(r'<div class="c2-calc" id="calculator-activations" [^>]*data-hero="true"', calc)
    assert "data-hero" not in expand("<!-- calculator: activations -->", page_path="x.md", root=ROOT, snippet_cache={})
    with pytest.raises(hook.directives.DirectiveError, match=r"x\.md: 2 heroes \(causal_mask, activations\)"):
        expand("<!-- figure: causal_mask hero -->\n<!-- calculator: activations hero -->", page_path="x.md", root=ROOT,
               snippet_cache={})
    with pytest.raises(hook.directives.DirectiveError, match="snippet 'collapse_linear' marked hero"):
        expand("<!-- snippet: collapse_linear hero -->", page_path="x.md", root=ROOT, snippet_cache={})


def test_the_cdn_is_jsdelivr_s_pyodide_unless_a_mirror_is_named(monkeypatch):
    """What a CDN-mode build writes into config.js and its CSP (build_site.py, csp.py). The CDN build itself
    (no Pyodide core shipped, config.js naming the CDN) is checked once, with a stand-in CDN on 127.0.0.1,
    by tests/browser/test_cdn_mode.py, which also loads Pyodide from it."""
    _hook()  # its folder importable, as MkDocs makes it
    import pyodide_files

    monkeypatch.delenv("CHAPTER2_PYODIDE_CDN", raising=False)
    assert pyodide_files.cdn_url() == "https://cdn.jsdelivr.net/pyodide/v0.27.7/full/"
    monkeypatch.setenv("CHAPTER2_PYODIDE_CDN", "http://127.0.0.1:8000/pyodide/v0.27.7/full")
    assert pyodide_files.cdn_url() == "http://127.0.0.1:8000/pyodide/v0.27.7/full/"


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
    hero = figure("wide").replace('class="c2-figure" id=', 'class="c2-figure" data-hero="true" id=')  # md_in_html's order
    assert "<picture>" in hook.on_page_content(hero, page, None, None), "a hero figure gets its phone drawing too"
    with pytest.raises(PluginError, match=r"attention\.md: figure 'tiny' shows 9\.3 px text"):
        hook.on_page_content(figure("tiny"), page, None, None)


def test_a_control_that_does_not_apply_is_rendered_hidden_and_ignored():
    """Field.show_when: the custom GPU's two numbers apply only to the custom GPU. The form renders them `hidden`
    (the defaults name the H100) with what the runtime needs to show them; compute neither checks nor uses them
    until they apply (a negative peak is refused only once the GPU is custom; 500 TFLOP/s over 2 TB/s is 250)."""
    from chapter2 import calculators

    html = _hook().directives.render_calculator("ops_per_byte")
    for name in ("custom_tflops", "custom_tb_s"):
        wrapper = re.search(rf'<div class="c2-calc__field[^"]*"([^>]*)><label for="c2-ops_per_byte-{name}"', html)
        assert wrapper and wrapper.group(1) == ' data-show-field="gpu" data-show-value="custom" hidden', name
    assert calculators.compute("ops_per_byte", {"custom_tflops": "-5"})["ratio"].startswith("295 ")
    with pytest.raises(calculators.FieldError) as refused:
        calculators.compute("ops_per_byte", {"gpu": "custom", "custom_tflops": "-5"})
    assert refused.value.field == "custom_tflops"
    custom = calculators.compute("ops_per_byte", {"gpu": "custom", "custom_tflops": "500", "custom_tb_s": "2"})
    assert custom["ratio"].startswith("250 operations per byte")
    with pytest.raises(ValueError, match="show_when"):
        calculators.calculator("bad_show_when", title="t", outputs=[], fields=[
            calculators.Field("a", "A", 1, show_when=("nope", "x"))])(lambda a: {})


def test_a_model_select_follows_a_pasted_config():
    """Field.paste: the select carries the name of its text area and a hidden "pasted" option (the runtime shows it
    as "pasted: <name>"); "pasted" with nothing pasted asks for the text."""
    from chapter2 import calculators

    html = _hook().directives.render_calculator("kv_cache")
    select = re.search(r'<select id="c2-kv_cache-model" name="model" data-paste="config_json">(.*?)</select>', html)
    assert select and select.group(1).endswith('<option value="pasted" hidden>pasted config.json</option>')
    with pytest.raises(calculators.FieldError) as empty:
        calculators.compute("kv_cache", {"model": "pasted"})
    assert empty.value.field == "config_json"
    llama = (ROOT / "src" / "chapter2" / "data" / "configs" / "Llama-3.1-8B.json").read_text()
    assert calculators.compute("kv_cache", {"model": "pasted", "config_json": llama})["per_token"].startswith("131 kB")


def test_the_moe_calculator_s_typed_experts_apply_only_while_typed():
    """moe_coverage: E and E_tok are typed only while the select says so; with a model chosen they are hidden and
    ignored (an E of 0, refused when typed, no longer stops Qwen3-235B-A22B's own 8 of 128)."""
    from chapter2 import calculators

    html = _hook().directives.render_calculator("moe_coverage")
    for name in ("n_experts", "k"):
        wrapper = re.search(rf'<div class="c2-calc__field[^"]*"([^>]*)><label for="c2-moe_coverage-{name}"', html)
        assert wrapper and wrapper.group(1) == ' data-show-field="model" data-show-value="custom"', name  # shown
    chosen = calculators.compute("moe_coverage", {"model": "Qwen3-235B-A22B", "n_experts": "0"})
    assert chosen["compute_share"] == "6.25 % (E_tok / E = 8 / 128)"
    with pytest.raises(calculators.FieldError):
        calculators.compute("moe_coverage", {"n_experts": "0"})
