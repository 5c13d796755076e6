"""Calculators shown on the site; see `_registry` for the contract.

Each public submodule (one per chapter section) registers its calculators when it is imported; adding
a module is enough. Importing this package imports none of them: `REGISTRY` (read here) and `get` of a
calculator not registered yet import them all (`load_all`), while the browser's worker imports only the
module of the calculator a page runs (`chapter2._browser.calc`). A submodule is also reachable as an
attribute (`calculators.bottlenecks`), imported on first use.
"""

import importlib

from ._compare import Comparison, compare, ratio_text
from ._registry import (NUMBERS, PASTED, Action, Calculator, Field, FieldError, Output, calculator, compute, compute_json,
                        evaluate, get, load_all, parse_inputs, render_chart)

__all__ = ["NUMBERS", "PASTED", "REGISTRY", "Action", "Calculator", "Comparison", "Field", "FieldError", "Output",
           "calculator", "compare", "compute", "compute_json", "evaluate", "get", "load_all", "parse_inputs",
           "ratio_text", "render_chart"]


def __getattr__(name: str):
    """`REGISTRY`: every calculator, all modules imported; a public submodule: imported now."""
    if name == "REGISTRY":
        return load_all()
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
