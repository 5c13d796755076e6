"""The home page is a front door (issue 29): a promise, the chapter's hero picture, a start-here path through
the five sections, and the chapter map as one compact figure; the package and its wheel on a page of their own.

Expected values are worked out here (the path's minutes, the map's links and threads counted from the leaves),
not copied from the code under test.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "hooks"))

import chapter_map as map_hook  # noqa: E402

from chapter2.pages import chapter_map  # noqa: E402

EXISTING = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("*.md")}
FIVE_SECTIONS = ["neural-networks.md", "llm-inference.md", "image-generation.md", "bottlenecks.md", "attention.md"]


def test_the_start_here_path_is_five_stops_of_three_minutes():
    """One stop per section of the chapter, 2.1 to 2.5 (2.2's first page opens onto its second): 5 x 3 = 15."""
    assert [page for page, _ in chapter_map.START_HERE] == FIVE_SECTIONS
    assert chapter_map.start_here_minutes().value == 5 * 3


def test_home_opens_on_the_hero_then_the_path_then_the_map():
    home = (DOCS / "index.md").read_text()
    hero = home.index("<!-- figure: request_flow hero -->")
    path = home.index("## Start here: {{ fact: chapter_map.start_here_minutes }} minutes")
    the_map = home.index("<!-- chapter-map -->")
    assert hero < path < the_map
    stops = re.findall(r"^\d\. \[[^\]]+\]\(([\w-]+\.md)\)", home[path:the_map], re.M)
    assert stops == FIVE_SECTIONS
    assert "(use-the-code.md)" in home[:hero] and "pip install" not in home and ".whl" not in home
    use = (DOCS / "use-the-code.md").read_text()
    assert "pyodide/chapter2-0.1.0-py3-none-any.whl" in use and "pip install chapter2-0.1.0-py3-none-any.whl" in use
    assert "use-the-code.md" in (ROOT / "mkdocs.yml").read_text()


def test_the_map_is_one_figure_every_leaf_linked_once_no_second_list():
    html = map_hook.render(EXISTING, "index.md")
    assert html.count("<figure") == 1 and "mermaid" not in html and "see also" not in html.lower()
    sections = chapter_map.sections(EXISTING)
    for s in sections:
        slug = s.page.removesuffix(".md")
        assert html.count(f'href="{slug}/"') == 1, s.title  # the card's title
        for leaf in s.leaves:
            assert html.count(f'href="{slug}/#{leaf.anchor}"') >= 1, leaf.text
    links = re.findall(r'<a [^>]*href="[^"]*"', html)
    assert len(links) == len(sections) + sum(len(s.leaves) for s in sections)
    nested = map_hook.render(EXISTING, "notebooks/deeper.md")
    assert 'href="../neural-networks/"' in nested


def test_each_thread_is_named_once_with_the_sections_it_runs_through():
    """An idea shared by leaves of two or more sections gets a tag on each of those leaves and one mention in
    the caption; counted here from the leaves."""
    sections = chapter_map.sections(EXISTING)
    by_idea: dict[str, list[str]] = {}
    for s in sections:
        for leaf in s.leaves:
            if leaf.idea:
                by_idea.setdefault(leaf.idea, [])
                if s.title.split()[0] not in by_idea[leaf.idea]:
                    by_idea[leaf.idea].append(s.title.split()[0])
    shared = {i: w for i, w in by_idea.items() if len(w) > 1}
    assert shared, "the chapter's leaves share no idea: the map has no thread to draw"
    html = map_hook.render(EXISTING, "index.md")
    caption = html[html.index("<figcaption>"):]
    for idea, where in shared.items():
        assert caption.count(f">{idea}</span> ({', '.join(where)})") == 1, idea
        tagged = sum(1 for s in sections for leaf in s.leaves if leaf.idea == idea)
        assert html.count(f">{idea}</span>") == tagged + 1, idea


def test_the_hero_shows_the_tiny_models_own_tokens():
    """The prompt's pieces are the tiny tokenizer's, and the new tokens what the tiny model writes greedily:
    checked against `generate` (prefill, then greedy decode), a path apart from the stepper the figure uses."""
    from chapter2 import stepper
    from chapter2.host.figures import request
    from chapter2.models.transformer import generate

    prompt, new = request.request_tokens()
    assert "".join(prompt) == request.PROMPT and len(prompt) >= 3
    model, tokenizer = stepper.load()
    ids = tokenizer.encode(request.PROMPT)
    out = generate(model, np.array(ids), max_tokens=1 + request.DECODE_STEPS, temperature=0.0,
                   rng=np.random.default_rng(0))
    assert list(new) == [tokenizer.decode([i]) for i in out.tokens]
    assert len(prompt) + request.DECODE_STEPS <= request.SLOTS  # every cache strip has room for what it holds
    from chapter2 import pages

    alt = request._alt()  # the running example's costs, as the pages that pin them print them
    for name in ("llm_inference.llama_8b_weights_read_bf16", "bottlenecks.llama_8b_weight_read_ms"):
        assert pages.text(name) in alt, name
