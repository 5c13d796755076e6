"""Importing a test's oracle (torch, transformers, tokenizers, safetensors, triton, mpmath, ...).

Outside CI a missing oracle skips the tests that need it, so a partial local
install still runs the rest. In CI (the environment variable CI is set, e.g.
CI=true) every oracle is installed by `make setup`, so a missing one is a
failure, never a silent skip; tests/conftest.py treats a missing Chromium the
same way.
"""

from __future__ import annotations

import importlib
import os
import types

import pytest


def in_ci() -> bool:
    return bool(os.environ.get("CI"))


def require(module: str, minversion: str | None = None):
    """Import and return `module`; without it skip (the test, or the module at import time), or fail in CI."""
    try:
        return pytest.importorskip(module, minversion=minversion)
    except pytest.skip.Exception as skipped:
        if in_ci():
            pytest.fail(f"test oracle {module!r} is missing ({skipped.msg}); CI must install it "
                        "(make setup installs the [docs,test,hf,torch] extras)", pytrace=False)
        raise


class _Deferred(types.ModuleType):
    def __getattr__(self, name):
        return getattr(importlib.import_module(self.__name__), name)


def deferred(module: str) -> types.ModuleType:
    """`module` (a helper of tests/), imported when a test first uses one of its names, not when pytest collects
    the file: a run that deselects every test using it (make test-fast leaves out the oracles) does not pay
    for its imports (tests/_diffusers_oracle.py: diffusers, 2 s of CPU in each worker). Its require() calls
    skip or fail the test that first uses it, as they would have skipped or failed the file."""
    return _Deferred(module)
