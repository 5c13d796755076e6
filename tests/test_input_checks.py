"""Every public function of the numpy core rejects nonsense with ValueError/TypeError, never a stray
AttributeError or IndexError from deep inside (the message then names the argument)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import chapter2

SKIP_PACKAGES = {"host", "calculators"}  # host: torch / triton / matplotlib, outside the numpy core


def _public_functions():
    for info in pkgutil.walk_packages(chapter2.__path__, "chapter2."):
        parts = info.name.split(".")[1:]
        if any(p in SKIP_PACKAGES for p in parts) or parts[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            params = inspect.signature(fn).parameters.values()
            required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            keywords = [p.name for p in params if p.default is p.empty and p.kind == p.KEYWORD_ONLY]
            if required or keywords:
                yield f"{info.name}.{name}", fn, len(required), keywords


FUNCTIONS = sorted(_public_functions(), key=lambda f: f[0])


def test_the_scan_finds_the_api():
    names = {name for name, *_ in FUNCTIONS}
    assert len(names) > 60
    assert {"chapter2.attention.attention", "chapter2.sampling.probs", "chapter2.linear.matmul_cost"} <= names


@pytest.mark.parametrize("fn,n_args,keywords", [f[1:] for f in FUNCTIONS], ids=[f[0] for f in FUNCTIONS])
def test_nonsense_input_gets_a_clear_error(fn, n_args, keywords):
    with pytest.raises((ValueError, TypeError, KeyError)):
        fn(*[object()] * n_args, **{k: object() for k in keywords})
