"""Render the chapter map (content: `chapter2.pages.chapter_map`) as mermaid plus a nested list.

The list is the text alternative of the diagram. Leaves that belong to one idea
across sections are linked by a dotted edge in the diagram and a "see also" in
the list.
"""

from __future__ import annotations

from chapter2.pages import chapter_map


def render(existing_pages: set[str], from_page: str, leaf_text=lambda text: text) -> str:
    """Markdown: a mermaid flowchart and the same map as a list; `leaf_text` expands the leaves' facts."""
    prefix = "../" * from_page.count("/")
    sections = chapter_map.sections(existing_pages)
    texts = [[leaf_text(leaf.text) for leaf in s.leaves] for s in sections]
    lines = ["```mermaid", "flowchart LR", '  ch2["Chapter 2 · Models"]']
    clicks = []
    for i, s in enumerate(sections):
        url = prefix + s.page.removesuffix(".md") + "/"
        lines.append(f'  ch2 --> s{i}["{s.title}"]')
        clicks.append(f'  click s{i} "{url}" "{s.title}"')
        for j, leaf in enumerate(s.leaves):
            lines.append(f'  s{i} --> s{i}l{j}["{texts[i][j]}"]')
            clicks.append(f'  click s{i}l{j} "{url}#{leaf.anchor}" "{texts[i][j]}"')
    links = chapter_map.idea_links(existing_pages)
    lines += [f"  s{a}l{b} -.- s{c}l{d}" for (a, b), (c, d) in links]
    lines += clicks + ["```", "", "The same map as text:", ""]
    for i, s in enumerate(sections):
        lines.append(f"- [{s.title}]({prefix}{s.page})")
        for j, leaf in enumerate(s.leaves):
            related = [(c, d) for (a, b), (c, d) in links if (a, b) == (i, j)]
            related += [(a, b) for (a, b), (c, d) in links if (c, d) == (i, j)]
            see = "".join(f" (see also: [{texts[c][d]}]({prefix}{sections[c].page}#{sections[c].leaves[d].anchor}))"
                          for c, d in related)
            lines.append(f"    - [{texts[i][j]}]({prefix}{s.page}#{leaf.anchor}){see}")
    return "\n".join(lines) + "\n"
