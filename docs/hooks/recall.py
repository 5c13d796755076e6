"""Render the recall check (content: each section's `CARDS` in `chapter2.pages`).

Each card is a button (the question) with `aria-expanded` controlling a region
(the answer), so it works by keyboard and screen reader; the page script
docs/assets/chapter2/recall.js reveals answers and remembers, in this browser's
localStorage only, which cards were seen and when. Each answer ends with a link
back to the idea's place in its section page; MkDocs' strict anchor validation
checks it. The answers' `{{ fact: }}` references are expanded by the fact pass
of `directives.expand`.
"""

from __future__ import annotations

import html

from chapter2.pages import Card, chapter_map
from chapter2.pages.recall import REVIEW_AFTER_DAYS


def _inline_html(text: str) -> str:
    """Plain text to HTML, with `code` spans."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _sections(existing_pages: set[str]):
    for s in chapter_map.sections(existing_pages):
        if s.cards:
            yield s.title, s.page, s.cards


def _card_html(card: Card, page: str, prefix: str, section: str) -> str:
    q, a = f"recall-{card.id}-q", f"recall-{card.id}-a"
    link = f"{prefix}{page}#{card.anchor}"
    return f"""<div class="c2-recall__card" role="listitem" data-recall-card="{card.id}" markdown>
<p class="c2-recall__q"><button type="button" class="c2-recall__toggle" id="{q}" aria-expanded="false"
 aria-controls="{a}">{_inline_html(card.question)}</button></p>
<div class="c2-recall__a" id="{a}" role="region" aria-labelledby="{q}" hidden markdown>

{card.answer}

[Read it again in {section}]({link}){{ .c2-recall__back }}

</div>
<p class="c2-recall__seen" data-recall-seen hidden></p>
</div>
"""


def render(existing_pages: set[str], from_page: str) -> str:
    """Markdown for the recall check: a progress line, then each existing section's cards.

    The answers' `{{ fact: }}` references are left for the fact pass of `directives.expand`.
    """
    prefix = "../" * from_page.count("/")
    sections = list(_sections(existing_pages))
    total = sum(len(cards) for _, _, cards in sections)
    out = [f"""<div class="c2-recall" data-recall data-review-days="{REVIEW_AFTER_DAYS}" data-recall-total="{total}">
<p class="c2-recall__status" data-recall-status role="status">{total} cards.
Which ones you have seen is kept in this browser only, never sent anywhere.</p>
<p class="c2-recall__tools"><button type="button" class="md-button c2-recall__reset" data-recall-reset
 hidden>Forget my progress</button></p>
</div>
<noscript><p>Without JavaScript every answer is shown below its question.</p>
<style>.c2-recall__a[hidden]{{display:block}}</style></noscript>
"""]
    for title, page, cards in sections:
        out.append(f"\n### {title}\n")
        out.append('<div class="c2-recall__deck" role="list" markdown>')
        out += [_card_html(c, page, prefix, title) for c in cards]
        out.append("</div>\n")
    return "\n".join(out)
