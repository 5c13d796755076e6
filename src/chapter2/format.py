"""How numbers are shown: the one formatting module of the site and the calculators.

Domain modules (attention, hardware, diffusion, ...) return plain numbers and
dataclasses. The page layer (`chapter2.pages`) wraps the numbers a page shows
in the value types below; each keeps the exact `.value` (what tests assert)
and knows its own text (what the page prints). One rule for significant
digits applies everywhere:

- `sig(x, digits)` rounds to `digits` significant digits (3 by default) but
  never hides the integer part: 295.3 -> "295", 4237.1 -> "4,237",
  0.012345 -> "0.0123", 1.0 -> "1". Trailing zeros are dropped, so there is
  no false precision ("295.3000").
- Integers are exact, with thousands separators: 1,365.
- SI prefixes (k, M, G, T, P, E) for FLOPs and bytes, 3 significant digits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

_SI = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def _finite_or_text(value: float) -> str | None:
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return None


def _real(value: Any, name: str = "value") -> float:
    """`value` (the argument `name` of sig, si, number, ...) as a float, or a TypeError that says so."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}: {value!r}")
    return float(value)


def sig(value: float, digits: int = 3) -> str:
    """`value` with `digits` significant digits, thousands separators, no trailing zeros.

    The integer part is always shown in full (4237.1 with 3 digits is "4,237",
    not "4.24e+03"); digits after the point only as far as `digits` asks.
    Beyond what digits can say in a line (from 10^15 up, or below 10^-6) the
    number is a power of ten in words a reader knows: "5.92 × 10⁻⁹", never
    e-notation.
    """
    bad = _finite_or_text(_real(value))
    if bad is not None:
        return bad
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 15 or magnitude < -6:
        return powers_of_ten(value, digits)
    decimals = max(0, digits - 1 - magnitude)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def powers_of_ten(value: float, digits: int = 3) -> str:
    """`value` as a mantissa of `digits` significant digits times a power of ten: 5.92e-9 -> "5.92 × 10⁻⁹"."""
    value = _real(value)
    bad = _finite_or_text(value)
    if bad is not None:
        return bad
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.{max(1, int(digits)) - 1}e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
    power = f"10{str(int(exponent)).translate(_SUPERSCRIPT)}"
    return power if mantissa == "1" else f"-{power}" if mantissa == "-1" else f"{mantissa} × {power}"


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """1.23e12 -> '1.23 T' + unit; keeps `digits` significant digits."""
    bad = _finite_or_text(_real(value))
    if bad is not None:
        return bad
    for scale, prefix in _SI:
        if abs(value) >= scale:
            return f"{sig(value / scale, digits)} {prefix}{unit}"
    return f"{sig(value, digits)} {unit}".rstrip()


def nbytes(value: float, digits: int = 3) -> str:
    """Bytes with decimal prefixes (GB = 1e9 bytes, as GPU datasheets use)."""
    return si(value, "B", digits)


def number(value: float, digits: int = 4) -> str:
    """A plain number with `digits` significant digits (`sig`): never an exponent, 1e9 -> "1,000,000,000"."""
    return sig(value, digits)


def plain(value: float) -> str:
    """A calculator's number, written as the pages write numbers (`sig`, 3 significant digits): 0.9995 -> "1",
    295.34 -> "295", 1365.3 -> "1,365", 0.01234 -> "0.0123". A number a page names as a fact reads the same in a
    calculator's default output."""
    return sig(_real(value), 3)


def duration(seconds: float) -> str:
    """A time for people, 3 significant digits in the largest unit that reads well:
    4.6e-5 -> "46 µs", 0.00464 -> "4.64 ms", 1.3 -> "1.3 s", 690 -> "11.5 min", 9720 -> "2.7 h"."""
    seconds = _real(seconds, "seconds")
    bad = _finite_or_text(seconds)
    if bad is not None:
        return bad
    for limit, scale, unit in ((1e-3, 1e-6, "µs"), (1, 1e-3, "ms"), (120, 1, "s"), (7200, 60, "min")):
        if abs(seconds) < limit:
            return f"{sig(seconds / scale, 3)} {unit}"
    return f"{sig(seconds / 3600, 3)} h"


def counted(n: int, noun: str) -> str:
    """`n` and the noun, plural unless n is 1: "1 block", "0 cells", "3 K/V tiles" (regular plurals only)."""
    if isinstance(n, bool) or not hasattr(n, "__index__") or n < 0:
        raise TypeError(f"counted: n must be a count (an integer >= 0), got {n!r}")
    if not isinstance(noun, str) or not noun:
        raise TypeError(f"counted: noun must be a non-empty string, got {noun!r}")
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _places(places: Any) -> int:
    if isinstance(places, bool) or not isinstance(places, int) or places < 0:
        raise TypeError(f"places must be a whole number of decimals (an int >= 0), got {type(places).__name__}: "
                        f"{places!r}")
    return places


def decimals(x: float, places: int, unit: str = "") -> Num:
    """`x` rounded to `places` decimals (trailing zeros dropped), as a `Num`: decimals(16.0605, 1) -> "16.1"."""
    x, places = _real(x, "x"), _places(places)
    if not math.isfinite(x):
        raise ValueError(f"x must be a finite number, got {x!r}")
    magnitude = math.floor(math.log10(abs(x))) if x else 0
    return Num(x, max(1, magnitude + 1 + places), unit)


def share(fraction: float, places: int = 1) -> Pct:
    """`fraction` as a percentage with `places` decimals (trailing zeros dropped): share(0.1234) -> "12.3 %"."""
    fraction, places = _real(fraction, "fraction"), _places(places)
    if not math.isfinite(fraction):
        raise ValueError(f"fraction must be a finite number, got {fraction!r}")
    pct = 100 * fraction
    magnitude = math.floor(math.log10(abs(pct))) if pct else 0
    return Pct(fraction, max(1, magnitude + 1 + places))


def billions(n: float, places: int = 1) -> Num:
    """`n` in billions, rounded to `places` decimals (as `decimals`): billions(8_030_261_248) -> "8"."""
    return decimals(_real(n, "n") / 1e9, places)


def _check_config(c: Any) -> None:
    from .models import ModelConfig  # here, not at the top: this module imports with the standard library alone

    if not isinstance(c, ModelConfig):
        raise TypeError(f"c must be a chapter2.models.ModelConfig, got {type(c).__name__}")


def kind_counts(c: Any) -> str:
    """'18 full + 18 sliding (128)': the attention layers of a config by kind, with windows and chunks."""
    _check_config(c)
    parts = []
    for kind, label, window in (("full_attention", "full", None), ("sliding_attention", "sliding", c.sliding_window),
                                ("chunked_attention", "chunked", c.attention_chunk_size)):
        n = c.kinds.count(kind)
        if n:
            parts.append(f"{n} {label}" + (f" ({window:,})" if window else ""))
    return " + ".join(parts) + (" (MLA)" if c.uses_mla else "")


def cached_per_layer(c: Any) -> str:
    """What one layer caches per token: K and V per KV head, or MLA's latent and RoPE key."""
    _check_config(c)
    if c.uses_mla:
        return f"latent {c.kv_lora_rank} + RoPE key {c.qk_rope_head_dim} = {c.kv_cache_elements_per_token(0):,}"
    return f"2 × {c.num_key_value_heads} × {c.head_dim} = {c.kv_cache_elements_per_token(0):,}"


def _check_real(kind: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{kind} value must be a real number, got {type(value).__name__}: {value!r}")


# ------------------------------------------------------------------ page values
class Shown:
    """A value a page shows: `.value` is exact, `str()` is the page text."""

    value: Any

    def __post_init__(self):
        _check_real(type(self).__name__, self.value)

    def __str__(self) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


@dataclass(frozen=True)
class Num(Shown):
    """A number with `digits` significant digits (see `sig`), an optional unit after a space."""

    value: float
    digits: int = 3
    unit: str = ""

    def __str__(self) -> str:
        text = sig(self.value, self.digits)
        return f"{text} {self.unit}" if self.unit else text


@dataclass(frozen=True)
class Int(Shown):
    """An exact integer with thousands separators: 1365 -> "1,365"."""

    value: int
    unit: str = ""

    def __post_init__(self):
        _check_real("Int", self.value)
        if int(self.value) != self.value:
            raise ValueError(f"Int needs a whole number, got {self.value!r}")

    def __str__(self) -> str:
        text = f"{int(self.value):,}"
        return f"{text} {self.unit}" if self.unit else text


@dataclass(frozen=True)
class Pct(Shown):
    """A fraction shown as a percentage: Pct(0.4375) -> "44 %" (digits = significant digits)."""

    value: float
    digits: int = 2

    def __str__(self) -> str:
        return f"{sig(100 * self.value, self.digits)} %"


@dataclass(frozen=True)
class SI(Shown):
    """A quantity with an SI prefix: SI(1.23e12, "FLOP") -> "1.23 TFLOP"."""

    value: float
    unit: str = ""
    digits: int = 3

    def __str__(self) -> str:
        return si(self.value, self.unit, self.digits)


def Bytes(value: float, digits: int = 3) -> SI:  # noqa: N802 - reads like a type on a page
    """Bytes with decimal prefixes: Bytes(16.06e9) -> "16.1 GB"."""
    return SI(value, "B", digits)


@dataclass(frozen=True)
class Times(Shown):
    """A ratio shown as a multiple: Times(2.0) -> "2×"."""

    value: float
    digits: int = 3

    def __str__(self) -> str:
        return f"{sig(self.value, self.digits)}×"


@dataclass(frozen=True)
class Duration(Shown):
    """A time in seconds, shown as `duration` writes it: Duration(0.00464) -> "4.64 ms"."""

    value: float

    def __str__(self) -> str:
        return duration(self.value)


@dataclass(frozen=True)
class Count(Shown):
    """A count of things (parameters) with a scale letter, 3 significant digits, as the calculators write it:
    Count(8_030_261_248) -> "8.03B", Count(956e6) -> "956M", Count(210_000) -> "210k", Count(512) -> "512"."""

    value: float

    def __str__(self) -> str:
        for scale, letter in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
            if abs(self.value) >= scale:
                return f"{sig(self.value / scale, 3)}{letter}"
        return f"{int(self.value):,}" if float(self.value).is_integer() else sig(self.value, 3)


@dataclass(frozen=True)
class Text(Shown):
    """Words (a model name, a verdict) that come from code."""

    value: str

    def __post_init__(self):
        if not isinstance(self.value, str):
            raise TypeError(f"Text value must be a str, got {type(self.value).__name__}: {self.value!r}")

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Table(Shown):
    """A Markdown table. `align` is one of 'l'/'r' per column (default: first left, rest right)."""

    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    align: str = ""

    @property
    def value(self) -> tuple[tuple[Any, ...], ...]:
        return self.rows

    def __post_init__(self):
        if not isinstance(self.header, tuple) or not isinstance(self.rows, tuple):
            raise TypeError("Table header and rows must be tuples (header of str, rows of tuples of cells)")
        for i, row in enumerate(self.rows):
            if len(row) != len(self.header):
                raise ValueError(f"Table row {i} has {len(row)} cells, the header has {len(self.header)}")

    def __str__(self) -> str:
        align = self.align or "l" + "r" * (len(self.header) - 1)
        rule = {"l": "---", "r": "---:", "c": ":---:"}
        lines = ["| " + " | ".join(self.header) + " |",
                 "|" + "|".join(rule[a] for a in align) + "|"]
        lines += ["| " + " | ".join(cell_text(c) for c in row) + " |" for row in self.rows]
        return "\n".join(lines)


def cell_text(cell: Any) -> str:
    """A table cell: Shown values as themselves, ints with separators, floats by `sig`."""
    if isinstance(cell, Shown):
        return str(cell)
    if isinstance(cell, bool):
        return "yes" if cell else "no"
    if isinstance(cell, int):
        return f"{cell:,}"
    if isinstance(cell, float):
        return sig(cell)
    if isinstance(cell, str):
        return cell
    raise TypeError(f"a table cell must be a chapter2.format value, a number or a str, got {type(cell).__name__}")


def show(value: Any) -> str:
    """The page text of a fact's value. Only `Shown` values and plain strings are accepted:
    a bare float would leave its digits to chance."""
    if isinstance(value, Shown):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    raise TypeError(f"a page fact must return a chapter2.format value (Num, Int, Pct, SI, Times, Text, Table) "
                    f"or str, got {type(value).__name__}: {value!r}")
