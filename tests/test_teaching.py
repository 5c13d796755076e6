"""Teaching structure of sections 2.1, 2.3, 2.4 and 2.5: why first, things to remember last, one notation,
collapsed detail, the pictures of an image pipeline, and ideas linked across the chapter map.

These are structural tests on the Markdown sources (and the page layer); the browser tests measure the
built pages.
"""

from __future__ import annotations

import re

import pytest
from _teaching import DISPLAY_MATH, FACT, INLINE_MATH, ROOT, letters
from _teaching import blocks as _blocks
from _teaching import chapter_letters as _chapter_letters
from _teaching import collapsed_lines as _collapsed_lines
from _teaching import math as _math
from _teaching import section as _section
from _teaching import sentences as _sentences
from _teaching import text as _text

from chapter2 import pages
from chapter2.pages import chapter_map, fact_refs, notation

MY_PAGES = ("neural-networks.md", "image-generation.md", "bottlenecks.md", "attention.md")


def _letters(tex: str) -> set[str]:
    """The symbols of a TeX fragment, a bold letter apart from the plain one (tests/_teaching.py)."""
    return letters(tex, bold_apart=True)


# ------------------------------------------------------------------ why first, things to remember last


@pytest.mark.parametrize("page", MY_PAGES)
def test_page_opens_with_why_an_inference_engineer_should_care(page):
    first = _blocks(page)[0]
    assert first.startswith("**Why this matters.**"), first[:80]
    assert 2 <= len(_sentences(first)) <= 3, _sentences(first)


@pytest.mark.parametrize("page", MY_PAGES)
def test_page_closes_with_three_to_five_things_to_remember(page):
    text = _text(page)
    headings = re.findall(r"^## (.+)$", text, re.M)
    main = [h for h in headings if not h.startswith("Appendix")]
    assert main[-1] == "Things to remember", headings
    assert all(h.startswith("Appendix") for h in headings[headings.index("Things to remember") + 1:])
    section = _section(page, "Things to remember")
    items = re.findall(r"^- ", section, re.M)
    assert 3 <= len(items) <= 5, len(items)
    # every number in the list is a fact (or a symbol inside math), never typed by hand
    plain = INLINE_MATH.sub("", FACT.sub("", section))
    plain = re.sub(r"\]\([^)]*\)", "]", plain)
    for name in ("Llama 3.1 8B", "Mistral 7B", "Mamba-2", "Wan 2.1", "section 2.4", "H100", "FP16", "BF16", "FP8"):
        plain = plain.replace(name, "")
    assert not re.search(r"\d", plain.replace("## Things to remember", "")), plain
    assert len(fact_refs(section)) >= 3


def test_the_last_section_closes_on_the_chapters_through_line():
    section = " ".join(_section("attention.md", "Things to remember").split())
    assert "Prefill is compute bound and decode is memory bound" in section
    assert "FlashAttention changes the bytes of prefill attention, not decode's" in section
    assert "A sliding window changes the \\(N^2\\) term and the KV cache" in section
    assert "State-space layers replace the cache with a fixed state" in section
    # the benchmark instructions sit in an appendix after it, collapsed
    text = _text("attention.md")
    assert text.index("## Things to remember") < text.index("## Appendix: measured on this machine")
    collapsed = _collapsed_lines("attention.md")
    lines = text.split("\n")
    for marker in ("bash scripts/device_check.sh", "<!-- figure: measured_roofline -->", "TRITON_INTERPRET=1"):
        at = next(i for i, line in enumerate(lines) if marker in line)
        assert at in collapsed, marker


# ------------------------------------------------------------------ one notation


def test_no_symbol_has_two_meanings():
    seen: dict[str, str] = {}
    for row in notation.SYMBOLS:
        for symbol in notation.symbols(row.tex):
            assert symbol not in seen, f"{symbol} means both {seen[symbol]!r} and {row.meaning!r}"
            seen[symbol] = row.meaning
        assert row.scope == notation.CHAPTER or re.fullmatch(r"2\.\d", row.scope)
    # bold Mamba letters are kept apart from A, B, D (attention weights, batch, hidden size)
    assert {"A", "B", "D", "\\mathbf{A}", "\\mathbf{B}_t", "\\mathbf{D}"} <= set(seen)
    assert seen["P"] == "parameters (a count)" and seen["A"].startswith("attention weights")


ALLOWED_EXTRA = {"e"}  # Euler's number in exp and e^{-x}


@pytest.mark.parametrize("page", MY_PAGES)
def test_pages_use_only_the_chapters_symbols(page):
    used = set().union(*(_letters(m) for m in _math(page)))
    unknown = used - _chapter_letters(bold_apart=True) - ALLOWED_EXTRA
    assert not unknown, f"{page} uses symbols the notation table does not define: {sorted(unknown)}"


@pytest.mark.parametrize("page", [p for p in MY_PAGES if p != "neural-networks.md"])
def test_section_2_1_local_letters_stay_there(page):
    local = {s for row in notation.SYMBOLS if row.scope == "2.1" for s in notation.symbols(row.tex)}
    used = set().union(*(_letters(m) for m in _math(page)))
    assert not used & local, f"{page} uses 2.1's matmul letters {sorted(used & local)}"


@pytest.mark.parametrize("page", MY_PAGES)
def test_softmax_output_is_never_p(page):
    text = _text(page)
    assert not re.search(r"P\s*=\s*(\\operatorname\{)?softmax", text)
    assert "\\(P\\) in HBM" not in text and "\\(S\\) and\n\\(P\\)" not in text
    # P appears in math only as the parameter count
    for m in _math(page):
        if "P" in _letters(m):
            assert "softmax" not in m, m


@pytest.mark.parametrize("page", MY_PAGES)
def test_each_page_links_the_notation_table_before_its_first_display_equation(page):
    text = _text(page)
    link = text.find("(chapter-map.md#notation)")
    assert link > 0, f"{page} does not link the notation table"
    # the first math that uses one of the chapter's symbols (not only words in \text{...})
    body = FACT.sub("1", text)
    link = body.find("(chapter-map.md#notation)")
    spans = [(m.start(), m.group(1)) for m in INLINE_MATH.finditer(body)]
    spans += [(m.start(), m.group(1)) for m in DISPLAY_MATH.finditer(body)]
    first = min(at for at, tex in spans if _letters(tex))
    assert link < first + 600, f"{page}: the notation link comes long after the first symbol"


def test_the_ssm_snippet_uses_the_chapters_letters():
    source = (ROOT / "snippets" / "attn_selective_scan.py").read_text()
    assert "N, channels, n_state = 512, 16, 8" in source
    assert not re.search(r"^L, D, N =", source, re.M)
    assert "assert h.shape == h_next.shape == (channels, n_state)" in source


def test_attention_snippet_and_steps_say_a_for_the_weights():
    source = (ROOT / "snippets" / "attention_intensity.py").read_text()
    assert '"A = softmax(S)"' in source and "P = softmax" not in source
    assert "P = softmax" not in pages.text("bottlenecks.attention_steps_table")
    assert "P = softmax" not in pages.text("attention.flash_attention_steps_table")


def test_the_bias_is_c_because_b_counts_bytes():
    text = _text("neural-networks.md")
    assert "y = x W^\\top + c" in text and "+ b \\qquad" not in text
    assert "W_2(W_1 x + c_1) + c_2" in text
    assert "for w, c in layers" in (ROOT / "snippets" / "collapse_linear.py").read_text()


# ------------------------------------------------------------------ readable length


@pytest.mark.parametrize("page", MY_PAGES)
def test_source_listings_are_collapsed(page):
    lines = _text(page).split("\n")
    collapsed = _collapsed_lines(page)
    for i, line in enumerate(lines):
        if "--8<--" in line:
            assert i in collapsed, f"{page}:{i + 1}: a source listing outside a collapsible block"


def test_the_attention_count_is_derived_in_full_only_in_2_4():
    assert "{{ fact: bottlenecks.attention_steps_table }}" in _text("bottlenecks.md")
    text = _text("attention.md")
    at = next(i for i, line in enumerate(text.split("\n")) if "attention.flash_attention_steps_table" in line)
    assert at in _collapsed_lines("attention.md")
    assert "counted standard attention step by step" in text  # and it refers to 2.4's count
    assert "(bottlenecks.md#242-llm-bottlenecks)\ncounted standard attention" in text


def test_2_3_previews_the_compute_bound_verdict_before_using_it():
    text = _text("image-generation.md")
    preview = text.index("**compute bound** when")
    first_use = min(m.start() for m in re.finditer(r"compute[ -]bound", text) if m.start() != preview + 2)
    assert preview < first_use
    assert "[Section 2.4](bottlenecks.md#243-image-bottlenecks)" in text[preview - 400:preview + 400]


def test_2_1_previews_prefill_and_decode_before_using_them():
    text = _text("neural-networks.md")
    preview = text.index("**prefill** runs")
    assert preview < text.index("(a decode step)") or preview < text.index("With one token")


# ------------------------------------------------------------------ the image pipeline as pictures


def test_the_new_figures_exist_with_alt_text_and_are_placed():
    from chapter2.host import figures

    figures._discover()
    for name, page, numbers in (
        ("latent_pipeline", "image-generation.md",
         ("1024 × 1024 × 3", "3,145,728 values", "128 × 128 × 16", "64 × 64 grid of 2 × 2 patches", "4,096 tokens")),
        ("guidance_steps", "image-generation.md", ("50 steps × 2 passes = 100 forward passes", "with the prompt")),
        ("image_pipeline", "image-generation.md", ("text encoder once", "runs 50 times", "once with the prompt",
                                                   "50 steps × 2 passes = 100 denoiser passes", "VAE decoder")),
        ("memory_hierarchy", "attention.md", ("HBM: 80 GB", "3.35 TB/s", "50 MiB", "≈ 12 TB/s", "228 KiB",
                                              "29.4 MiB", "≈ 31 TB/s", "256 KiB", "33 MiB")),
    ):
        assert name in figures.REGISTRY
        alt = figures.alt_text(name)
        assert len(alt) > 200
        for n in numbers:
            assert n in alt, (name, n)
        assert re.search(rf"<!-- figure: {name}( hero)? -->", _text(page)), name


def test_the_hero_pictures_count_what_their_pages_count():
    """2.3's pipeline: Qwen-Image's default 50 guided steps, two denoiser passes each, the text encoder and the VAE
    decoder once (diffusers' QwenImagePipeline: num_inference_steps=50, true_cfg_scale with a negative prompt).
    2.5's memories: the H100 SXM's as the page's facts print them (132 SMs x 228 KiB = 29.4 MiB of shared memory,
    132 x 256 KiB = 33 MiB of registers)."""
    from chapter2.host.figures.attention import memory_levels
    from chapter2.host.figures.diffusion import pipeline_counts

    assert pipeline_counts() == {"steps": 50, "passes": 100, "text_encoder": 1, "vae_decode": 1}
    m = memory_levels()
    assert (m["sms"], m["smem"], m["smem_all"], m["regs"], m["regs_all"]) == (
        "132", "228 KiB", f"{132 * 228 / 1024:.1f} MiB", "256 KiB", f"{132 * 256 // 1024} MiB")
    assert (m["hbm"], m["hbm_bw"], m["l2"], m["l2_bw"], m["smem_bw"]) == (
        "80 GB", "3.35 TB/s", "50 MiB", "≈ 12 TB/s", "≈ 31 TB/s")


def test_pipeline_figure_numbers_come_from_the_model():
    from chapter2.host.figures.diffusion import latent_pipeline_sizes

    s = latent_pipeline_sizes()
    # Qwen-Image: VAE 8x per side, 16 latent channels, 2 x 2 patches (its transformer and VAE configs)
    assert (s["latent_side"], s["channels"], s["grid"], s["tokens"]) == (1024 // 8, 16, 1024 // 16, 64 * 64)
    assert s["values_per_token"] == 16 * 2 * 2 and s["pixel_values"] == 12 * s["latent_values"]
    assert str(s["tokens"]) == str(pages.value("image_generation.qwen_image_example_tokens").value)


def test_guided_strip_counts_two_passes_per_step():
    from chapter2.host.figures.diffusion import guided_steps

    steps, passes, drawn = guided_steps()
    assert passes == 2 * steps and drawn[0] == 1 and drawn[-1] == steps


# ------------------------------------------------------------------ one idea across sections


def _leaf(module: str, anchor: str, contains: str):
    s = next(s for s in chapter_map.sections() if s.module == module)
    return next(leaf for leaf in s.leaves if leaf.anchor == anchor and contains in leaf.text)


def test_ideas_link_leaves_across_sections():
    assert _leaf("bottlenecks", "242-llm-bottlenecks", "Prefill").idea == "prefill"
    assert _leaf("bottlenecks", "242-llm-bottlenecks", "Decode").idea == "decode"
    assert _leaf("attention", "decode-attention-stays-memory-bound", "Decode").idea == "decode"
    assert _leaf("attention", "flashattention", "FlashAttention").idea == "attention cost"
    assert _leaf("attention", "sliding-window-attention", "Sliding").idea == "attention cost"
    assert _leaf("neural_networks", "211-linear-layers-and-matmul", "matmul").idea == "arithmetic intensity"
    assert _leaf("bottlenecks", "241-opsbyte-and-arithmetic-intensity", "Ops:byte").idea == "arithmetic intensity"
    sections = [s.module for s in chapter_map.sections()]
    links = {((sections[a], b), (sections[c], d)) for (a, b), (c, d) in chapter_map.idea_links()}
    crossing = {(x[0], y[0]) for x, y in links}
    assert ("bottlenecks", "attention") in crossing  # decode: 2.4 -> 2.5
    assert ("neural_networks", "bottlenecks") in crossing  # arithmetic intensity: 2.1 -> 2.4
