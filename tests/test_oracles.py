"""tests/_oracles.require: a missing oracle skips locally and fails in CI; no test skips one silently."""

import json
import re
from pathlib import Path

import pytest
from _oracles import require

MISSING = "chapter2_no_such_oracle"


def test_require_returns_the_module(monkeypatch):
    monkeypatch.setenv("CI", "true")
    assert require("json") is json


def test_missing_oracle_fails_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=f"{MISSING}.*CI must install it"):
        require(MISSING)


def test_missing_oracle_skips_without_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=MISSING):
        require(MISSING)


def test_too_old_oracle_fails_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="json"):
        require("json", minversion="999")


def test_tests_import_oracles_through_require():
    """No test calls pytest.importorskip (or skips) on its own: it would skip silently in CI."""
    here = Path(__file__).resolve().parent
    offenders = [f"{path.name}:{n}" for path in sorted(here.glob("*.py")) if path.name != "_oracles.py"
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                 if re.search(r"pytest\.importorskip\(", line)]
    assert offenders == []
