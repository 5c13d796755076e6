"""Section 2.4 read line by line (issue 32, the expert's findings): the claims of a lower-bound model said as
such, on the page, in its calculators and in its map and recall cards."""

from __future__ import annotations

import re
from pathlib import Path

from chapter2.pages import attention as att
from chapter2.pages import bottlenecks as bn

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "bottlenecks.md").read_text()
FLAT = " ".join(PAGE.split())
ATTENTION = " ".join((ROOT / "docs" / "attention.md").read_text().split())

# What lifts the KV cache's operations per byte above G, whatever "every sequence reads its own" says: a prefix
# several sequences share, read once for all of them; speculative verification, k + 1 queries per cached key;
# multi-head latent attention in its absorbed form, all query heads on one compressed entry.
EXCEPTIONS = ("shared prefix", "speculative", "absorbed")


def _sentences(text: str, phrase: str) -> list[str]:
    """The sentences (or list items) of `text` that contain `phrase`."""
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z*])", text) if phrase in s]


def test_the_kv_caches_intensity_is_never_said_to_stay_fixed_without_its_exceptions():
    """issue 32: "never" for the KV cache's intensity is qualified. Each sequence reads its own cache, so batching
    does not lift attention's operations per byte, except where entries are shared: a common prefix read once for
    the batch, speculative verification (k + 1 queries per cached key), MLA's absorbed form (DeepSeek-V3: 128 query
    heads on one latent entry, 242 operations per byte in BF16, near the H100's 295)."""
    assert "never for the KV cache" not in FLAT
    for page in (FLAT, ATTENTION):
        for phrase in ("whatever the batch", "at any batch", "nothing reuses it"):
            for sentence in _sentences(page, phrase):
                assert "unless" in sentence or "shared" in sentence or "share" in sentence, sentence
    grouped = FLAT[FLAT.index("Reference: grouped-query sharing"):]
    grouped = grouped[:grouped.index("</details>")]
    count = ATTENTION[ATTENTION.index("The count per layer, and why"):]
    count = count[:count.index("</details>")]
    for note in (grouped, count):
        assert all(word in note for word in EXCEPTIONS), note
        assert "{{ fact: llm_architecture.deepseek_v3_absorbed_intensity }}" in note
    decode_card = next(c for c in att.CARDS if c.id == "att-decode").answer
    assert all(word in decode_card for word in EXCEPTIONS)
    leaf = next(leaf for leaf in att.LEAVES if leaf.anchor == "decode-attention-stays-memory-bound")
    assert "unless" in leaf.text


def test_the_calculators_never_names_what_it_assumes():
    """The decode calculators' "never" for the whole step holds for sequences that share no cached entry: the
    line says so (Llama 3.1 8B at 4,096 tokens never crosses the H100's ridge as a plain batch)."""
    from chapter2.calculators import compute

    for name in ("roofline", "decode_batching"):
        line = compute(name, {})["critical"]
        assert "never" in line and "shared prefix" in line and "speculative" in line, line


THRESHOLDS = ("bottlenecks.llama_8b_prefill_crossover_tokens", "bottlenecks.llama_8b_weights_critical_batch",
              "bottlenecks.qwen3_235b_weights_critical_batch", "bottlenecks.llama_8b_decode_tokens_per_s")


def test_thresholds_of_a_lower_bound_model_are_said_as_about():
    """issue 32: 321 tokens, 296 and 3,211 sequences, 215 tokens/s come from a model that counts the minimum
    traffic at peak rates: every place that quotes one (pages, map leaves, recall cards, glossary) says "about"."""
    texts = [p.read_text() for p in (ROOT / "docs").glob("*.md")]
    texts += [p.read_text() for p in (ROOT / "src" / "chapter2" / "pages").glob("*.py")]
    quoted = 0
    for text in texts:
        flat = " ".join(text.replace('"', " ").split())
        for name in THRESHOLDS:
            for m in re.finditer(re.escape("{{ fact: " + name + " }}"), flat):
                quoted += 1
                assert "about" in flat[max(0, m.start() - 45):m.start()], flat[max(0, m.start() - 120):m.end()]
    assert quoted >= 12
    assert bn.llama_8b_prefill_crossover_tokens().value == 321
    assert bn.qwen3_235b_weights_critical_batch().value == 3211


def test_the_calculators_thresholds_say_about():
    from chapter2.calculators import compute

    out = compute("roofline", {})
    assert "about 321 tokens" in out["crossover"], out["crossover"]
    assert "about 296" in out["critical"], out["critical"]
    assert "about 296" in compute("decode_batching", {})["critical"]
