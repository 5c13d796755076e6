"""Render the chapter map (content: `chapter2.pages.chapter_map`) as one compact figure.

The figure is HTML, so it is its own text alternative and needs no second list: a card per section (its
title links to the page), each card listing the section's leaves, the ideas to remember, each a link to where
it is explained. Cards sit in a grid: three a row on a laptop's column (the whole chapter in about one
screen), one a row on a phone. A leaf that belongs to an idea running through several sections (`Leaf.idea`)
carries a tag in that idea's colour, the same in every section, and the caption names each thread once with
the sections it runs through, instead of a "see also" link in both directions.
"""

from __future__ import annotations

import html

from chapter2.charts import PALETTE
from chapter2.pages import chapter_map


def threads(sections) -> dict[str, list[str]]:
    """{idea: the short titles ("2.2a") of the sections it runs through, in order}, for ideas in two or more."""
    seen: dict[str, list[str]] = {}
    for s in sections:
        for leaf in s.leaves:
            if leaf.idea and s.title.split()[0] not in seen.setdefault(leaf.idea, []):
                seen[leaf.idea].append(s.title.split()[0])
    return {idea: where for idea, where in seen.items() if len(where) > 1}


def render(existing_pages: set[str], from_page: str, leaf_text=lambda text: text) -> str:
    """The map as one HTML <figure>; `leaf_text` expands the leaves' facts."""
    e = html.escape
    prefix = "../" * from_page.count("/")
    sections = chapter_map.sections(existing_pages)
    ideas = threads(sections)
    colour = {idea: PALETTE[i % len(PALETTE)] for i, idea in enumerate(ideas)}
    cards = []
    for i, s in enumerate(sections):
        url = prefix + s.page.removesuffix(".md") + "/"
        leaves = []
        for leaf in s.leaves:
            tag = (f' <span class="c2-map__thread" style="--c2-thread: {colour[leaf.idea]}">{e(leaf.idea)}</span>'
                   if leaf.idea in ideas else "")
            leaves.append(f'<li><a href="{url}#{leaf.anchor}">{e(leaf_text(leaf.text))}</a>{tag}</li>')
        cards.append(f'<li class="c2-map__section" style="--c2-section: {PALETTE[i % len(PALETTE)]}">'
                     f'<a class="c2-map__title" href="{url}">{e(s.title)}</a>'
                     f'<ul class="c2-map__leaves">{"".join(leaves)}</ul></li>')
    caption = "The chapter on one page: each card is a section, each line an idea to remember, linked to where it is explained."
    if ideas:
        caption += " Tags follow an idea through the chapter: " + "; ".join(
            f'<span class="c2-map__thread" style="--c2-thread: {colour[idea]}">{e(idea)}</span> ({", ".join(where)})'
            for idea, where in ideas.items()) + "."
    return (f'\n<figure class="c2-chapter-map" id="chapter-map-figure" data-search-exclude>\n'
            f'<ol class="c2-map">{"".join(cards)}</ol>\n'
            f"<figcaption>{caption}</figcaption>\n</figure>\n")
