"""Render the chapter map (content: `chapter2.pages.chapter_map`) as mermaid plus a nested list.

The list is the text alternative of the diagrams. The diagrams are small, one for
the chapter's sections and one per section with its leaves in a column, so that
each reads on a phone (a single diagram of every leaf drew 3 px text at 375 px).
Leaves that belong to one idea across sections get a "see also" in the list.
"""

from __future__ import annotations

from chapter2.pages import chapter_map


def render(existing_pages: set[str], from_page: str, leaf_text=lambda text: text) -> str:
    """Markdown: a mermaid flowchart and the same map as a list; `leaf_text` expands the leaves' facts."""
    prefix = "../" * from_page.count("/")
    sections = chapter_map.sections(existing_pages)
    texts = [[leaf_text(leaf.text) for leaf in s.leaves] for s in sections]
    # one small diagram for the chapter's sections, then one per section (its leaves stacked in a column):
    # each is two boxes wide, so it reads on a phone; the ideas shared across sections are in the list below
    lines = ["```mermaid", "flowchart LR", '  ch2["Chapter 2 · Models"]']
    clicks = []
    for i, s in enumerate(sections):
        url = prefix + s.page.removesuffix(".md") + "/"
        lines.append(f'  ch2 --> s{i}["{s.title}"]')
        clicks.append(f'  click s{i} "{url}" "{s.title}"')
    lines += clicks + ["```", ""]
    for i, s in enumerate(sections):
        url = prefix + s.page.removesuffix(".md") + "/"
        lines += ["```mermaid", "flowchart LR", f'  s{i}["{s.title}"]']
        clicks = [f'  click s{i} "{url}" "{s.title}"']
        for j, leaf in enumerate(s.leaves):
            lines.append(f'  s{i} --> s{i}l{j}["`{texts[i][j]}`"]')
            clicks.append(f'  click s{i}l{j} "{url}#{leaf.anchor}" "{texts[i][j]}"')
        lines += clicks + ["```", ""]
    links = chapter_map.idea_links(existing_pages)
    lines += ["The same map as text, with the ideas that link sections (see also):", ""]
    for i, s in enumerate(sections):
        lines.append(f"- [{s.title}]({prefix}{s.page})")
        for j, leaf in enumerate(s.leaves):
            related = [(c, d) for (a, b), (c, d) in links if (a, b) == (i, j)]
            related += [(a, b) for (a, b), (c, d) in links if (c, d) == (i, j)]
            see = "".join(f" (see also: [{texts[c][d]}]({prefix}{sections[c].page}#{sections[c].leaves[d].anchor}))"
                          for c, d in related)
            lines.append(f"    - [{texts[i][j]}]({prefix}{s.page}#{leaf.anchor}){see}")
    return "\n".join(lines) + "\n"
