"""Calculators shown on the site; see `_registry` for the contract.

Importing this package registers every calculator: each public submodule
(one per chapter section) is imported here, so adding a module is enough.
"""

import importlib
import pkgutil

from ._registry import (REGISTRY, Action, Calculator, Field, FieldError, Output, calculator, compute, compute_json, get,
                        render_chart)

for _module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["REGISTRY", "Action", "Calculator", "Field", "FieldError", "Output", "calculator", "compute", "compute_json", "get",
           "render_chart"]
