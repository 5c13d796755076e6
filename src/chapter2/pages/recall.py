"""The recall check: question cards, one per key idea, grouped by section.

Each section module defines its `CARDS`; an answer quotes numbers only as facts
its section page shows. The reader's progress stays in their browser.
"""

from __future__ import annotations

from ..format import Int
from . import fact
from .chapter_map import sections

REVIEW_AFTER_DAYS = 7  # spaced repetition: come back to the cards after a week (the chapter's recall check)


@fact
def review_after_days() -> Int:
    """Days after which the recall page suggests coming back to a card."""
    return Int(REVIEW_AFTER_DAYS)


def all_cards():
    """Every card of every section, in chapter order, as (section, card) pairs."""
    return [(s, c) for s in sections() for c in s.cards]
