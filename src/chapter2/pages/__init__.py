"""The page layer: every number, table, card and map leaf the site shows, by name.

A page refers to a fact as `{{ fact: SECTION.NAME }}`; the build looks the name
up here and prints `chapter2.format.show(value)`. Pages never compute: no
arithmetic, calls or formatting in Markdown. A section module
(`chapter2.pages.bottlenecks`, ...) holds the facts of one page, each a small
documented function decorated with `@fact`, returning a `chapter2.format`
value (`Num`, `Int`, `Pct`, `SI`, `Times`, `Text`, `Table`) so that tests can
assert the exact number and the page shows it with the site's one rule for
significant digits. `tests/test_pages*.py` pin every fact against an
independent computation.

    docs/bottlenecks.md              ... its ops:byte ratio is {{ fact: bottlenecks.h100_ops_per_byte }} ...
    chapter2/pages/bottlenecks.py    @fact def h100_ops_per_byte() -> Num: ...
    tests/test_pages_bottlenecks.py  assert h100_ops_per_byte().value == approx(989.4e12 / 3.35e12)

The recall cards (`pages.recall`) and the chapter map (`pages.chapter_map`)
are content of this layer too: their numbers are the same facts the section
pages show.
"""

from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass
from collections.abc import Callable

from ..format import show

# The section modules, in chapter order. `summary`-type content (notation, map, cards) comes last.
SECTIONS = ("neural_networks", "llm_architecture", "llm_inference", "image_generation", "bottlenecks", "attention",
            "notation", "chapter_map", "recall", "glossary")

FACT_REF = re.compile(r"\{\{\s*fact:\s*([\w.]+)\s*\}\}")
"""How a page, a card or a map leaf names a fact: `{{ fact: SECTION.NAME }}`."""


@dataclass(frozen=True)
class Leaf:
    """A chapter-map leaf: one idea to remember, linked to its place on the section page.

    `text` may quote facts (`{{ fact: ... }}`); they must be facts the section page shows.
    `idea` groups leaves of different sections that belong to one idea (the map links them).
    """

    text: str
    anchor: str
    idea: str = ""


@dataclass(frozen=True)
class Card:
    """A recall card: a question and a one-paragraph Markdown answer quoting the page's facts.

    `id` is stable: it keys the reader's progress in localStorage.
    """

    id: str
    anchor: str
    question: str
    answer: str

    def __post_init__(self):
        object.__setattr__(self, "answer", " ".join(self.answer.split()))


def fact_refs(text: str) -> list[str]:
    """The fact names a piece of page text refers to, in order."""
    if not isinstance(text, str):
        raise TypeError(f"text must be page text (a str), got {type(text).__name__}")
    return FACT_REF.findall(text)


_FACTS: dict[str, Callable[[], object]] = {}


class UnknownFact(KeyError):
    """A page asked for a fact name that no section module defines."""

    def __str__(self) -> str:
        return str(self.args[0])


def fact(fn: Callable[[], object]) -> Callable[[], object]:
    """Register `fn` as the fact `SECTION.NAME` (module short name, function name).

    The function takes no arguments and is evaluated once per process (facts
    are pure functions of the package's code and data).
    """
    if not callable(fn) or not hasattr(fn, "__module__") or not hasattr(fn, "__name__"):
        raise TypeError(f"fn must be a function of no arguments (what @fact decorates), got {fn!r}")
    section = fn.__module__.rsplit(".", 1)[-1]
    if section not in SECTIONS:
        raise ValueError(f"@fact {fn.__name__}: module {fn.__module__} is not a section of chapter2.pages {SECTIONS}")
    if not (fn.__doc__ or "").strip():
        raise ValueError(f"@fact {section}.{fn.__name__} needs a docstring saying what it is and where it comes from")
    cached = functools.cache(fn)
    _FACTS[f"{section}.{fn.__name__}"] = cached
    return cached


@functools.cache
def _load_sections() -> None:
    for section in SECTIONS:
        importlib.import_module(f"{__name__}.{section}")


def names() -> list[str]:
    """Every fact name, e.g. ['attention.window_pair_share', ...] (sorted)."""
    _load_sections()
    return sorted(_FACTS)


def value(name: str) -> object:
    """The fact's value (a `chapter2.format` value or a string)."""
    _load_sections()
    if not isinstance(name, str):
        raise TypeError(f"name must be a fact name such as 'bottlenecks.h100_ops_per_byte', got {name!r}")
    if name not in _FACTS:
        section = name.split(".", 1)[0]
        near = [n for n in _FACTS if n.startswith(section + ".")]
        hint = f"; {section} defines {', '.join(near)}" if near else f"; sections are {', '.join(SECTIONS)}"
        raise UnknownFact(f"no page fact named {name!r}{hint}")
    return _FACTS[name]()


def text(name: str) -> str:
    """The fact as the page prints it."""
    return show(value(name))
