"""Every snippet runs as `python snippets/NAME.py` in CPython and prints something.

A snippet that states a claim (cached decode equals full recompute, tiled equals
naive attention, ...) also asserts it, so a broken invariant raises instead of
printing "False". `BREAKS` proves each of those asserts bites: it replaces the
package function the snippet checks with one whose result is slightly wrong,
runs the snippet in-process, and requires an AssertionError raised by the
snippet's own code.
"""

import dataclasses
import importlib
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = sorted((ROOT / "snippets").glob("*.py"))


def test_there_are_snippets():
    assert len(SNIPPETS) >= 2


@pytest.mark.parametrize("path", SNIPPETS, ids=lambda p: p.name)
def test_snippet_runs(path):
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), f"{path.name} printed nothing"
    assert "nan" not in proc.stdout.lower().split()


# -----------------------------------------------------------------------------
# the asserts bite


def plus(eps):
    """The original function with `eps` added to its result."""
    return lambda original: lambda *args, **kwargs: original(*args, **kwargs) + eps


def first_plus(eps):
    """The original function with `eps` added to the first of the results it returns."""
    def wrap(original):
        def wrong(*args, **kwargs):
            first, *rest = original(*args, **kwargs)
            return (first + eps, *rest)
        return wrong
    return wrap


def with_args(**changed):
    """The original function called with some keyword arguments replaced."""
    return lambda original: lambda *args, **kwargs: original(*args, **{**kwargs, **changed})


def one_token_short(original):
    """generate() that drops its last token."""
    def wrong(*args, **kwargs):
        result = original(*args, **kwargs)
        return dataclasses.replace(result, tokens=result.tokens[:-1])
    return wrong


# snippet name -> [(dotted path of a function whose result the snippet asserts on, how to break it), ...]
BREAKS = {
    "attention_intensity": [("chapter2.roofline.attention_intensity",
                             lambda f: lambda N, d, *a, **k: f(N, d + 1, *a, **k))],
    "attn_flash_equals_naive": [("chapter2.attention.flash_attention", plus(1e-3))],
    "attn_selective_scan": [("chapter2.ssm.selective_scan_chunked", plus(1e-3))],
    "chat_template": [("chapter2.chat.render_chat", with_args(add_generation_prompt=False))],
    "collapse_linear": [("chapter2.linear.collapse", first_plus(1e-6))],
    "kv_cache_decode": [("chapter2.kv_cache.decode_attention", plus(1e-3))],
    "llm_attention_by_hand": [("chapter2.attention.attention", plus(1e-3))],
    "llm_generate": [("chapter2.models.transformer.Transformer.decode", first_plus(1e-2)),
                     ("chapter2.models.transformer.generate", one_token_short)],
    "ops_per_byte": [("chapter2.hardware.GPU.ops_per_byte", lambda f: lambda self, *a, **k: 1.01 * f(self, *a, **k))],
    "sampling_demo": [("chapter2.sampling.probs", with_args(top_k=None))],
    "swiglu_ffn": [("chapter2.linear.matmul_cost", lambda f: lambda m, k, n, *a, **kw: f(m, k, n + 1, *a, **kw))],
    "tokenize_text": [("chapter2.tokenizer.BPETokenizer.decode", lambda f: lambda self, ids, **k: f(self, ids, **k)[:-1])],
}


def resolve(dotted: str):
    """(owner, attribute name) for a dotted path: a module, then attributes (a class, its method)."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            owner = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:-1]:
            owner = getattr(owner, name)
        getattr(owner, parts[-1])  # it must exist: a moved function is an error here, not a silent pass
        return owner, parts[-1]
    raise ModuleNotFoundError(dotted)


def test_every_snippet_with_an_assert_has_a_break():
    asserting = {p.stem for p in SNIPPETS if re.search(r"^\s*assert\b", p.read_text(), re.MULTILINE)}
    assert asserting == set(BREAKS)


@pytest.mark.parametrize("name,target,breaker", [(n, t, b) for n, cases in BREAKS.items() for t, b in cases],
                         ids=[f"{n}-{t.rsplit('.', 1)[-1]}" for n, cases in BREAKS.items() for t, _ in cases])
def test_snippet_assert_catches_a_broken_invariant(name, target, breaker, monkeypatch):
    path = ROOT / "snippets" / f"{name}.py"
    owner, attr = resolve(target)
    monkeypatch.setattr(owner, attr, breaker(getattr(owner, attr)))
    with pytest.raises(AssertionError) as caught:
        runpy.run_path(str(path), run_name="__main__")
    assert Path(caught.traceback[-1].path) == path, "the snippet's own assert must raise, not the package"
    assert caught.value.args and caught.value.args[0], "a snippet's assert says what broke"
