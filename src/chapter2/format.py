"""Human-readable numbers for pages and calculators (one place, so the site is consistent)."""

from __future__ import annotations

import math

_SI = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """1.23e12 -> '1.23 T' + unit; keeps `digits` significant digits."""
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf"
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{value / scale:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}".rstrip()


def nbytes(value: float, digits: int = 3) -> str:
    """Bytes with decimal prefixes (GB = 1e9 bytes, as GPU datasheets use)."""
    return si(value, "B", digits)


def number(value: float, digits: int = 4) -> str:
    """A plain number with `digits` significant digits."""
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf"
    return f"{value:.{digits}g}"
