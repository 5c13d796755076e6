"""The chapter map: one branch per section page, one leaf per idea to remember.

The leaves are defined by each section module (`LEAVES`); a leaf that quotes a
number names the same fact its section page shows, so the map and the pages
cannot disagree. Only sections whose page is part of the site are drawn.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..format import Int
from . import Card, Leaf, fact

# The section pages of the chapter, in order (module names in chapter2.pages).
SECTION_MODULES = ("neural_networks", "llm_inference", "llm_architecture", "image_generation", "bottlenecks",
                   "attention")


# The home page's "start here" path: one stop per section of the chapter (2.2's two pages make one stop, its
# first page opening onto the second), each with the minutes it asks of a newcomer: read the section's
# opening, look at its hero picture, try it once.
START_HERE: tuple[tuple[str, int], ...] = (("neural-networks.md", 3), ("llm-inference.md", 3),
                                           ("image-generation.md", 3), ("bottlenecks.md", 3), ("attention.md", 3))


@fact
def start_here_minutes() -> Int:
    """Minutes of the home page's start-here path: the sum of its stops' minutes (START_HERE)."""
    return Int(sum(minutes for _, minutes in START_HERE))


@dataclass(frozen=True)
class Section:
    title: str            # "2.1 Neural networks"
    page: str             # "neural-networks.md"
    module: str           # "neural_networks": where its facts live
    leaves: tuple[Leaf, ...]
    cards: tuple[Card, ...]


def _section(name: str) -> Section:
    mod: ModuleType = importlib.import_module(f"{__package__}.{name}")
    return Section(mod.TITLE, mod.PAGE, name, tuple(getattr(mod, "LEAVES", ())), tuple(getattr(mod, "CARDS", ())))


def sections(existing_pages: set[str] | None = None) -> list[Section]:
    """The chapter's sections in order; with `existing_pages`, only those whose page exists."""
    out = [_section(name) for name in SECTION_MODULES]
    if existing_pages is None:
        return out
    return [s for s in out if s.page in existing_pages]


def idea_links(existing_pages: set[str] | None = None) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Pairs of (section index, leaf index) whose leaves share an `idea`, each pair once, in map order."""
    seen: dict[str, tuple[int, int]] = {}
    links = []
    for i, s in enumerate(sections(existing_pages)):
        for j, leaf in enumerate(s.leaves):
            if not leaf.idea:
                continue
            if leaf.idea in seen:
                links.append((seen[leaf.idea], (i, j)))
            seen[leaf.idea] = (i, j)
    return links
