"""Every public function of the numpy core rejects nonsense with a clear error: a ValueError or TypeError
(a KeyError where its docstring says so) that names the argument and what it got, never a stray
AttributeError, IndexError or "'object' object is not iterable" from deep inside."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

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


def _problem(fn, n_args: int, keywords: list[str]) -> str | None:
    """Why `fn`'s answer to nonsense (object() for every required argument) is not a clear error (None: it is).

    Clear: a ValueError or TypeError (a KeyError only where the docstring documents one) whose message names
    an argument it was given, as a word, and what it got (the value or its type: "object").
    """
    given = [p.name for p in list(inspect.signature(fn).parameters.values())[:n_args]] + keywords
    try:
        fn(*[object()] * n_args, **{k: object() for k in keywords})
    except (ValueError, TypeError, KeyError) as err:
        message = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
        if isinstance(err, KeyError) and "KeyError" not in (fn.__doc__ or ""):
            return f"KeyError, not documented: {message}"
        if not any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) for name in given):
            return f"{type(err).__name__} names none of {given}: {message}"
        if "object" not in message:
            return f"{type(err).__name__} does not say what it got: {message}"
        return None
    except Exception as err:  # noqa: BLE001 - any other exception is the failure being reported
        return f"{type(err).__name__} (expected ValueError or TypeError): {err}"
    return "no error"


MODULES = sorted({fn.__module__ for _, fn, *_ in FUNCTIONS})


@pytest.mark.parametrize("module", MODULES)
def test_nonsense_input_gets_a_clear_error(module):
    """Every public function of the module (one case per module; each function is called)."""
    problems = [f"{name}: {why}" for name, fn, n_args, keywords in FUNCTIONS
                if fn.__module__ == module and (why := _problem(fn, n_args, keywords))]
    assert not problems, "\n".join(problems)


def test_the_contract_bites():
    """What the sweep calls unclear is unclear: a stray error, an error that names no argument or no value."""
    def stray(alpha):
        return len(alpha)

    def unnamed(alpha):
        raise TypeError(f"must be a number, got {type(alpha).__name__}")

    def valueless(alpha):
        raise TypeError("alpha must be a number")

    def undocumented(alpha):
        raise KeyError(f"alpha: no entry {alpha!r}")

    def documented(alpha):
        """Raises KeyError for an unknown name."""
        raise KeyError(f"alpha: no entry {alpha!r}")

    def clear(alpha, *, beta):
        raise ValueError(f"beta must be positive, got {beta!r}")

    for fn in (stray, unnamed, valueless, undocumented):
        assert _problem(fn, 1, []), fn.__name__
    assert _problem(lambda alpha: None, 1, []) == "no error"
    assert _problem(documented, 1, []) is None and _problem(clear, 1, ["beta"]) is None
