"""Section 2.2, second page (serving a request): its facts, against numbers worked out here from the shipped
JSON files and by hand; the page's structure; and the old URL's anchors, which must still land.
"""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import pytest
from _llm_configs import CONFIGS, COUNTS, LLAMA, LLAMA_KV_BYTES_PER_TOKEN, LLAMA_PUBLISHED_PARAMS, QWEN3, QWEN3_MOE, TOKENIZER
from _llm_configs import assert_leaves_and_cards_name_only_facts, language_model
from _oracles import require

from chapter2.pages import llm_architecture as la
from chapter2.pages import llm_inference as li

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "llm-inference.md").read_text()
FLAT = " ".join(PAGE.split())  # the page with its line breaks as spaces, for sentences that wrap


# -- tokens, context and chat templates ---------------------------------------------------------
def test_vocabulary_sizes_are_the_configs():
    assert li.llama_8b_vocab_size().value == LLAMA["vocab_size"] == 128_256
    assert li.qwen3_8b_vocab_size().value == QWEN3["vocab_size"] == 151_936
    assert li.deepseek_v3_vocab_size().value == CONFIGS["DeepSeek-V3"]["vocab_size"] == 129_280
    assert str(li.llama_8b_vocab_size()) == "128,256"


def test_embedding_and_lm_head_share_of_qwen3():
    tables = 2 * QWEN3["vocab_size"] * QWEN3["hidden_size"]  # untied: embedding + LM head
    total = COUNTS["Qwen3-8B"][0]
    assert li.qwen3_8b_vocab_params_billion().value == pytest.approx(tables / 1e9)
    assert li.qwen3_8b_total_params_billion().value == pytest.approx(total / 1e9)
    assert li.qwen3_8b_vocab_params_share().value == pytest.approx(tables / total)
    big = 2 * QWEN3_MOE["vocab_size"] * QWEN3_MOE["hidden_size"]
    assert li.qwen3_235b_vocab_params_share().value == pytest.approx(big / COUNTS["Qwen3-235B-A22B"][0])
    assert str(li.qwen3_8b_vocab_params_billion()) == "1.24"
    assert str(li.qwen3_8b_total_params_billion()) == "8.2"
    assert str(li.qwen3_8b_vocab_params_share()) == "15 %"
    assert str(li.qwen3_235b_vocab_params_share()) == "0.5 %"


def test_tiny_tokenizer_facts_are_its_tokenizer_json():
    vocab = TOKENIZER["model"]["vocab"]
    ids = list(vocab.values()) + [t["id"] for t in TOKENIZER["added_tokens"]]
    assert li.tiny_tokenizer_vocab_size().value == max(ids) + 1 == 1024
    assert str(li.tiny_tokenizer_vocab_size()) == "1,024"
    # byte-level BPE writes a leading space as "Ġ"
    assert li.tiny_id_space_the().value == vocab["Ġthe"] and li.tiny_id_the().value == vocab["the"]
    assert li.tiny_id_space_the().value != li.tiny_id_the().value
    assert li.tiny_tokens_in_space_the().value == 1
    pieces = re.findall(r'`"([^`]+)"`', str(li.tiny_tokenization_pieces()))
    assert str(li.tiny_tokenization_pieces()) == '`" token"` + `"iz"` + `"ation"`'
    assert "".join(pieces) == " tokenization"
    assert all(p.replace(" ", "Ġ") in vocab for p in pieces)
    assert "Ġtokenization" not in vocab


def test_context_windows_and_the_budget_verdict():
    assert li.llama_8b_context_window().value == LLAMA["max_position_embeddings"] == 131_072
    assert li.qwen3_8b_context_window().value == QWEN3["max_position_embeddings"] == 40_960
    # Qwen docs (https://qwen.readthedocs.io/en/latest/deployment/vllm.html): the 40,960 reserves
    # "32,768 tokens for outputs and 8,192 tokens for typical prompts".
    assert li.qwen3_output_reserve().value == 32_768
    assert li.qwen3_prompt_reserve().value == QWEN3["max_position_embeddings"] - 32_768 == 8_192
    window, n_in, cap, think = QWEN3["max_position_embeddings"], 30_000, 8_192, 4_000
    assert (li.budget_input_tokens().value, li.budget_max_tokens().value,
            li.budget_reasoning_tokens().value) == (n_in, cap, think)
    # Reasoning counted inside max_tokens (OpenAI, Anthropic, vLLM): 30,000 + 8,192 = 38,192 <= 40,960.
    assert li.budget_total_inside().value == n_in + cap == 38_192 <= window
    inside = str(li.qwen3_8b_budget_inside())
    assert inside.startswith("Fits")
    assert f"{n_in + cap:,} of {window:,}" in inside and f"{window - n_in - cap:,} to spare" in inside  # 2,768
    assert f"leaving {cap - think:,} for the answer" in inside  # 4,192
    # A reasoning budget on top of max_tokens: 30,000 + 4,000 + 8,192 = 42,192 > 40,960.
    assert li.budget_total_on_top().value == n_in + think + cap == 42_192 > window
    on_top = str(li.qwen3_8b_budget_on_top())
    assert on_top.startswith("Does not fit")
    assert f"{n_in + think + cap:,} tokens" in on_top and f"{n_in + think + cap - window:,} more" in on_top  # 1,232
    assert f"at most {window - n_in - think:,}" in on_top  # 6,960



# -- prefill and decode: the KV cache in use ---------------------------------------------------------------------
def test_llama_kv_cache_at_full_context_and_the_weights_it_outgrows():
    per_token = LLAMA_KV_BYTES_PER_TOKEN  # K and V, BF16, worked out from the config in tests/_llm_configs.py
    assert la.llama_8b_kv_per_token().value == per_token == la.llama_8b_kv_bytes_per_token().value  # 2.2b's, named here
    full = per_token * LLAMA["max_position_embeddings"]
    assert li.llama_8b_kv_full_context().value == full
    assert li.llama_8b_kv_full_context().value > li.llama_8b_weights_bf16().value  # the page's point
    assert str(la.llama_8b_kv_per_token()) == "131 kB"
    assert str(li.llama_8b_kv_full_context()) == "17.2 GB"


def test_weights_are_all_parameters_held_and_the_pass_reads_fewer():
    """One accounting convention with section 2.4 (bottlenecks.md#byte-convention): 16.1 GB holds every parameter in
    BF16 (the published safetensors total), a forward pass reads all but the input embedding table (V x D x 2)."""
    assert li.llama_8b_weights_bf16().value == 2 * LLAMA_PUBLISHED_PARAMS == 16_060_522_496
    read = 2 * (LLAMA_PUBLISHED_PARAMS - LLAMA["vocab_size"] * LLAMA["hidden_size"])
    assert li.llama_8b_weights_read_bf16().value == read
    assert (str(li.llama_8b_weights_bf16()), str(li.llama_8b_weights_read_bf16())) == ("16.1 GB", "15 GB")
    # section 2.4 names these two facts (one rounding for both pages), not copies of its own
    assert "llm_inference.llama_8b_weights_bf16" in (ROOT / "docs" / "bottlenecks.md").read_text()
    # the page says which one it is and links 2.4's convention next to the number
    at = FLAT.index("{{ fact: llm_inference.llama_8b_weights_bf16 }} that hold all of its weights in BF16")
    nearby = FLAT[at:at + 500]
    assert "every parameter at 2 bytes, in decimal GB" in nearby
    assert "{{ fact: llm_inference.llama_8b_weights_read_bf16 }}" in nearby
    assert "(bottlenecks.md#byte-convention)" in nearby


def test_kv_cache_per_layer_kind_at_long_context():
    """Each layer keeps min(context, window) tokens; worked out here from the JSON files (BF16, 2 bytes)."""
    n = 131_072
    assert li.long_context_tokens().value == n
    gpt, gemma = CONFIGS["gpt-oss-120b"], language_model(CONFIGS["gemma-3-27b-it"])
    scout, ds = CONFIGS["Llama-4-Scout-17B-16E"]["text_config"], CONFIGS["DeepSeek-V3"]
    gpt_layer = 2 * gpt["num_key_value_heads"] * gpt["head_dim"] * 2
    windows = [gpt["sliding_window"] if t == "sliding_attention" else n for t in gpt["layer_types"]]
    gemma_layer = 2 * gemma["num_key_value_heads"] * gemma["head_dim"] * 2
    gemma_windows = [n if (i + 1) % gemma["sliding_window_pattern"] == 0 else gemma["sliding_window"]
                     for i in range(gemma["num_hidden_layers"])]
    scout_layer = 2 * scout["num_key_value_heads"] * scout["head_dim"] * 2
    scout_windows = [scout["attention_chunk_size"] if rope else n for rope in scout["no_rope_layers"]]
    ds_latent = (ds["kv_lora_rank"] + ds["qk_rope_head_dim"]) * 2
    ds_heads = ds["num_attention_heads"] * (ds["qk_nope_head_dim"] + ds["qk_rope_head_dim"] + ds["v_head_dim"]) * 2
    want = {
        "Llama-3.1-8B": (131_072 * n * 1, 131_072 * n),
        "gpt-oss-120b": (gpt_layer * sum(windows), gpt_layer * len(windows) * n),
        "gemma-3-27b-it": (gemma_layer * sum(gemma_windows), gemma_layer * len(gemma_windows) * n),
        "Llama-4-Scout-17B-16E": (scout_layer * sum(scout_windows), scout_layer * len(scout_windows) * n),
        "DeepSeek-V3": (ds_latent * ds["num_hidden_layers"] * n, ds_heads * ds["num_hidden_layers"] * n),
    }
    rows = li.kv_layer_kinds_table().rows
    assert [r[0].value for r in rows] == list(want)
    for name, kinds, cached, held, every, share in rows:
        assert (held.value, every.value) == want[name.value], name.value
        assert str(cached) in str(la.model_configs_table()) and str(kinds) in str(la.model_configs_table())
        assert share.value == pytest.approx(held.value / every.value)
    table = str(li.kv_layer_kinds_table())
    assert "| gpt-oss-120b | 18 full + 18 sliding (128) | 2 × 8 × 64 = 1,024 | 4.84 GB | 9.66 GB | 50 % |" in table
    assert "| DeepSeek-V3 | 61 full (MLA) | latent 512 + RoPE key 64 = 576 | 9.21 GB | 655 GB | 1.4 % |" in table



# -- sampling ----------------------------------------------------------------------------------------------
LOGITS = [2.0, 1.0, 0.5, 0.1, -1.0]


def _softmax(z, t=1.0):
    e = [math.exp(x / t) for x in z]
    return [x / sum(e) for x in e]


def _renorm(p):
    return [x / sum(p) for x in p]


def _table_row(label):
    rows = {r[0]: r[1:] for r in li.sampling_table().rows}
    return [c.value for c in rows[label]]


def test_sampling_table_against_a_hand_softmax():
    p = _softmax(LOGITS)
    assert _table_row("logits") == LOGITS
    assert _table_row("softmax (T = 1)") == pytest.approx(p)
    assert _table_row("T = 0.5") == pytest.approx(_softmax(LOGITS, 0.5))
    assert _table_row("T = 2") == pytest.approx(_softmax(LOGITS, 2.0))
    assert _table_row("T = 0 (greedy)") == [1, 0, 0, 0, 0]
    assert _table_row("top_k = 2") == pytest.approx(_renorm(p[:2] + [0, 0, 0]))
    assert _table_row("top_p = 0.8") == pytest.approx(_renorm(p[:3] + [0, 0]))  # 0.559 + 0.205 < 0.8 <= + 0.125
    biased = LOGITS[:3] + [LOGITS[3] + 2] + LOGITS[4:]
    assert _table_row("bias +2 on token 3") == pytest.approx(_softmax(biased))
    table = str(li.sampling_table())
    assert table.startswith("| settings | token 0 | token 1 | token 2 | token 3 | token 4 |")
    assert "| softmax (T = 1) | 0.559 | 0.205 | 0.125 | 0.084 | 0.028 |" in table
    assert "| T = 0.5 | 0.826 | 0.112 | 0.041 | 0.018 | 0.002 |" in table


def test_sampling_prose_numbers():
    p = _softmax(LOGITS)
    assert str(li.sampling_logits()) == "2, 1, 0.5, 0.1, -1"  # LOGITS, as the table's first row prints them
    assert str(li.sampling_logits()).split(", ") == [str(c) for c in li.sampling_table().rows[0][1:]]
    assert li.sampling_token0_prob().value == pytest.approx(p[0])
    assert li.sampling_token0_prob_low_temperature().value == pytest.approx(_softmax(LOGITS, 0.5)[0])
    assert (str(li.sampling_token0_prob()), str(li.sampling_token0_prob_low_temperature())) == ("0.56", "0.83")
    assert li.sampling_top_p().value == 0.8 and str(li.sampling_top_p()) == "0.8"
    assert li.top_p_kept_tokens().value == 3
    assert li.top_p_tokens_short_of_p().value == 2
    assert li.top_p_last_kept_token().value == 2
    assert li.top_p_mass_short_of_p().value == pytest.approx(p[0] + p[1])
    assert li.top_p_mass_short_of_p().value < 0.8 <= p[0] + p[1] + p[2]
    assert str(li.top_p_mass_short_of_p()) == "0.764"
    assert li.logit_bias_offset().value == 2 and li.bias_token_logit().value == 0.1
    assert li.bias_token_biased_logit().value == pytest.approx(2.1) and str(li.bias_token_biased_logit()) == "2.1"
    biased = _softmax(LOGITS[:3] + [2.1] + LOGITS[4:])
    assert li.bias_token_prob().value == pytest.approx(biased[3]) and biased[3] == max(biased)
    assert str(li.bias_token_prob()) == "0.402"



# -- map and cards ---------------------------------------------------------------------------------------------------
def test_leaves_and_cards_only_name_facts_of_this_section():
    assert_leaves_and_cards_name_only_facts(li)


def test_context_leaf_and_card_state_the_common_convention():
    leaf = next(leaf.text for leaf in li.LEAVES if leaf.anchor == "tokens-context-and-chat-templates")
    assert "reasoning counts inside max_tokens" in leaf
    card = next(card.answer for card in li.CARDS if card.id == "llm-context-reasoning")
    assert "`input + max_tokens ≤ context window`" in card
    assert "budget_total_inside" in card and "budget_total_on_top" in card


def test_prefill_decode_card_names_both_latencies():
    card = next(card.answer for card in li.CARDS if card.id == "llm-prefill-decode")
    assert "time to first token" in card and "time per output token" in card and "one token per forward pass" in card


def test_prefill_and_decode_leaves_link_the_same_ideas_in_2_4_and_2_5():
    """The map links 2.2's prefill and decode to 2.4's verdicts (and decode on to 2.5); 2.2's attention leaf, on the
    first page, to 2.5's FlashAttention and sliding window (`Leaf.idea`, drawn by docs/hooks/chapter_map.py)."""
    from chapter2.pages import chapter_map

    ideas = {leaf.idea for leaf in li.LEAVES if leaf.idea}
    assert ideas == {"prefill", "decode"}
    assert {leaf.idea for leaf in la.LEAVES if leaf.idea} == {"attention cost"}
    modules = [s.module for s in chapter_map.sections()]
    linked = {(modules[a], modules[c], chapter_map.sections()[a].leaves[b].idea)
              for (a, b), (c, d) in chapter_map.idea_links()}
    assert ("llm_inference", "bottlenecks", "prefill") in linked
    assert ("llm_inference", "bottlenecks", "decode") in linked and ("bottlenecks", "attention", "decode") in linked
    assert ("llm_architecture", "attention", "attention cost") in linked


def test_cards_and_leaves_go_with_the_page_that_shows_their_facts():
    """The old page's cards, now on two pages: each card's facts are shown on its own page (tests/test_pages.py checks
    that too); the KV card about a full context is this page's, the per-token one the first page's."""
    assert {c.id for c in li.CARDS} == {"llm-context-reasoning", "llm-prefill-decode", "llm-kv-full-context",
                                        "llm-sampling-order"}
    assert {c.id for c in la.CARDS} == {"llm-kv-cache-why", "llm-kv-bytes", "llm-mla-cache", "llm-moe"}
    assert {c.anchor for c in li.CARDS} <= {"tokens-context-and-chat-templates", "prefill-and-decode", "sampling"}



# -- page text: claims the review fixed ------------------------------------------------------------------------------
REASONING_SOURCES = (
    "https://platform.openai.com/docs/api-reference/chat/create",
    "https://platform.openai.com/docs/guides/reasoning",
    "https://platform.claude.com/docs/en/build-with-claude/extended-thinking",
    "https://platform.claude.com/docs/en/build-with-claude/context-windows",
    "https://github.com/vllm-project/vllm/blob/v0.9.0/vllm/entrypoints/openai/serving_engine.py",
    "https://docs.vllm.ai/en/latest/features/reasoning_outputs/",
    "https://docs.siliconflow.com/en/userguide/capabilities/reasoning",
)


def test_page_and_module_cite_the_reasoning_conventions():
    from chapter2 import context

    for url in REASONING_SOURCES:
        assert url in PAGE, url
        assert url in context.__doc__, url
    # the default check is input + max_tokens; the three-term sum is the on-top variant, shown second (TeX, its line
    # breaks and alignment marks left out)
    tex = re.sub(r"\s+|&|\\\\|\\qquad", "", PAGE)
    inside = tex.index(r"\text{input}+\text{max\_tokens}\le\text{contextwindow}")
    on_top = tex.index(r"\text{input}+\text{reasoningbudget}+\text{max\_tokens}\le\text{contextwindow}")
    assert inside < on_top
    assert "reasoningtokens}+" not in tex


def test_chat_template_ends_with_the_assistant_header_only_for_generation():
    assert "Rendered for generation (`add_generation_prompt=True`), it ends with the header of an assistant turn" in FLAT


def test_sampling_order_names_hugging_face_processors():
    """Hugging Face `generate` applies `sequence_bias`, then temperature, top-k, top-p (GenerationMixin._get_logits_processor)."""
    transformers = require("transformers")
    import inspect

    source = inspect.getsource(transformers.generation.utils.GenerationMixin._get_logits_processor)
    order = [source.index(name) for name in ("SequenceBias", "TemperatureLogitsWarper", "TopKLogitsWarper",
                                             "TopPLogitsWarper")]
    assert order == sorted(order)
    assert "`sequence_bias` in Hugging Face `generate`" in FLAT


def test_page_prose_kept_from_the_review():
    assert "time per output token" in FLAT  # decode sets TPOT (tokens per second follows from it)
    assert "with the byte-level BPE that these models use" in FLAT  # the no-out-of-vocabulary claim is BPE's


def test_sampling_and_the_pseudocode_use_the_chapters_letters():
    """k is a mixture of experts' experts per token (first page) and V the attention values: top-k sampling is written
    `top_k`, the vocabulary `vocab`; the softmax output over tokens is p, not the attention weights A."""
    assert "top-k, k =" not in str(li.sampling_table()) and "top_k = 2" in str(li.sampling_table())
    assert "the k likeliest" not in FLAT and "the `top_k` likeliest" in FLAT
    assert "logits (N, V)" not in PAGE and "logits (N, vocab)" in PAGE
    assert "`top_k` and `top_p` then set the probabilities outside their cut to 0" in FLAT and "^T" not in PAGE


# -- the old URL's anchors -------------------------------------------------------------------------------------------
OLD_PAGE_COMMIT = "f1658fe"  # docs/llm-inference.md before section 2.2 became two pages


def _slug(heading: str) -> str:
    from markdown.extensions.toc import slugify

    return slugify(heading, "-")


def test_old_anchors_are_the_headings_of_the_old_page():
    """`OLD_ANCHORS` is the old page's heading ids, read from git history (read-only) where the clone has it."""
    try:
        old = subprocess.run(["git", "show", f"{OLD_PAGE_COMMIT}:docs/llm-inference.md"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"git history without {OLD_PAGE_COMMIT} (a shallow clone): OLD_ANCHORS stays as recorded")
    headings = re.findall(r"^#{1,6} (.+)$", old, re.M)
    assert tuple(_slug(h) for h in headings) == li.OLD_ANCHORS


def test_every_old_anchor_stays_or_is_linked_to_its_new_place():
    """In the Markdown: an anchor that stayed is a heading of this page; one that moved is the id of a link to the
    same anchor on the first page, which is a heading there (MkDocs' strict build checks the link's target)."""
    arch_page = (ROOT / "docs" / la.PAGE).read_text()
    here = {_slug(h) for h in re.findall(r"^#{1,6} (.+?)(?: \{ #[\w-]+ \})?$", PAGE, re.M)}
    here |= set(re.findall(r"^#{1,6} .+\{ #([\w-]+) \}$", PAGE, re.M))
    there = {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", arch_page, re.M)}
    assert set(li.MOVED_ANCHORS) | here >= set(li.OLD_ANCHORS)
    for anchor, target in li.MOVED_ANCHORS.items():
        assert anchor not in here and target == f"llm-architecture.md#{anchor}" and anchor in there
        assert f"]({target}){{ #{anchor} .c2-moved }}" in PAGE, anchor
    assert set(li.OLD_ANCHORS) - set(li.MOVED_ANCHORS) <= here


def _ids(html: str) -> dict[str, str]:
    """id -> the tag that carries it."""
    return {m.group(2): m.group(1) for m in re.finditer(r"<(\w+)\b[^>]*?\bid=\"([^\"]+)\"", html)}


def test_every_old_anchor_lands_on_the_built_site(site_dir):
    """Every heading id of the old page exists on one of the two built pages: on the old URL as a heading, or
    there as a link (class c2-moved) to the same heading of the first page, which the inline script follows; the
    script is allowed by the page's Content-Security-Policy (docs/hooks/csp.py hashes inline scripts)."""
    import base64
    import hashlib

    old = (site_dir / "llm-inference" / "index.html").read_text()
    new = (site_dir / "llm-architecture" / "index.html").read_text()
    old_ids, new_ids = _ids(old), _ids(new)
    for anchor in li.OLD_ANCHORS:
        if anchor not in li.MOVED_ANCHORS:
            assert re.fullmatch(r"h[1-6]", old_ids.get(anchor, "")), f"llm-inference/#{anchor} is not a heading"
            continue
        link = re.search(rf'<a\b[^>]*\bid="{anchor}"[^>]*>', old)
        assert link and 'class="c2-moved"' in link.group(0), anchor
        assert f'href="../llm-architecture/#{anchor}"' in link.group(0), link.group(0)
        assert re.fullmatch(r"h[1-6]", new_ids.get(anchor, "")), f"llm-architecture/#{anchor} is not a heading"
    scripts = re.findall(r"<script>(.*?)</script>", old, re.S)
    follow = [s for s in scripts if "c2-moved" in s]
    assert len(follow) == 1 and "location.replace(link.href)" in follow[0]
    digest = base64.b64encode(hashlib.sha256(follow[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', old).group(1)


# -- issue 24: what a line-by-line technical check found ------------------------------------------------------------
def _note(summary: str) -> str:
    """The closed reference block whose summary starts with `summary` (the page flattened)."""
    start = FLAT.index(f'<details class="note" markdown> <summary>{summary}')
    return FLAT[start:FLAT.index("</details>", start)]


def test_h100_memory_is_80_gib_and_the_sequence_count_an_upper_bound():
    """NVIDIA's "80 GB" H100 has 80 GiB of HBM3 (2**30-byte units): 85.9 decimal GB. vLLM plans with 90 % of it
    by default (`gpu_memory_utilization` = 0.9), so the timeline's sequence count is an upper bound."""
    assert li.h100_memory_gib().value == 80
    assert str(li.h100_memory_gb_decimal()) == "85.9"  # 80 * 1024**3 = 85,899,345,920 bytes
    assert li.h100_memory_gb_decimal().value == pytest.approx(85_899_345_920 / 1e9)
    assert str(li.vllm_gpu_memory_utilization()) == "90 %" and str(li.vllm_memory_held_back()) == "10 %"
    timeline = FLAT.index("<!-- calculator: request_timeline -->")
    assert "upper bound" in FLAT[FLAT.rindex("**A request on a timeline.**", 0, timeline):timeline]
    note = _note("Reference: what \"80 GB\" means")
    for name in ("h100_memory_gib", "h100_memory_gb_decimal", "vllm_gpu_memory_utilization", "vllm_memory_held_back"):
        assert f"llm_inference.{name}" in note, name
    assert "GiB" in note and "gpu_memory_utilization" in note


def test_models_drawn_past_their_window_say_so():
    """Mistral 7B v0.1's config accepts 32,768 tokens but it was trained at 8,192 (paper Table 1); the KV figure
    draws Qwen3-8B to 131,072 tokens, past its config window of 40,960 (YaRN, per its model card)."""
    assert li.mistral_7b_config_context().value == CONFIGS["Mistral-7B-v0.1"]["max_position_embeddings"] == 32_768
    assert li.mistral_7b_trained_context().value == 8_192
    assert QWEN3["max_position_embeddings"] == 40_960 < 131_072 == li.long_context_tokens().value
    note = _note("The cache against context")
    assert "llm_inference.qwen3_8b_context_window" in note and "YaRN" in note
    assert "llm_inference.mistral_7b_config_context" in note and "llm_inference.mistral_7b_trained_context" in note
    assert "trained at" in note


def test_the_kv_calculator_warns_past_the_models_window():
    from chapter2.calculators.kv_cache import kv_cache_calc

    past = kv_cache_calc("Qwen3-8B", "", "", 131_072, 1, "bf16", "bf16")["note"]
    assert "40,960" in past and "beyond" in past
    within = kv_cache_calc("Qwen3-8B", "", "", 40_960, 1, "bf16", "bf16")["note"]
    assert "beyond" not in within


def test_greedy_is_t0_in_openai_and_vllm_and_do_sample_false_in_hugging_face():
    """Hugging Face's temperature warper refuses T = 0 and points to do_sample=False: the page must not call T = 0
    greedy without saying whose convention that is."""
    require("transformers")
    from transformers.generation.logits_process import TemperatureLogitsWarper

    with pytest.raises(ValueError, match="do_sample=False"):
        TemperatureLogitsWarper(0.0)
    assert "\\(T = 0\\) is greedy decoding" not in FLAT and "temperature 0 turns it" not in FLAT
    assert "In the OpenAI API and vLLM, \\(T = 0\\) means greedy decoding" in FLAT
    assert "`do_sample=False`" in FLAT


def test_new_facts_of_the_reference_layer_are_on_the_page():
    for name in ("h100_memory_gib", "h100_memory_gb_decimal", "vllm_gpu_memory_utilization", "vllm_memory_held_back",
                 "mistral_7b_config_context", "mistral_7b_trained_context"):
        assert f"{{{{ fact: llm_inference.{name} }}}}" in PAGE, name


def test_the_sampling_card_says_whose_convention_t0_is():
    card = " ".join(next(c for c in li.CARDS if c.id == "llm-sampling-order").answer.split())
    assert "Temperature 0 is greedy decoding:" not in card
    assert "OpenAI API and vLLM" in card and "`do_sample=False`" in card


# -- the KV cache counted from a tiny example before the symbol ------------------------------------------------
def test_what_one_token_adds_counted_from_the_configs_by_hand():
    """A key and a value per layer, each K/V heads x head_dim numbers: the tiny model (4 layers, 2 K/V heads of 32)
    and Llama 3.1 8B (32 layers, 8 K/V heads of 128), read from their config.json files here."""
    import json

    tiny = json.loads((ROOT / "src" / "chapter2" / "data" / "tiny_lm" / "config.json").read_text())
    assert (tiny["num_hidden_layers"], tiny["num_key_value_heads"], tiny["head_dim"]) == (4, 2, 32)
    assert li.tiny_layers().value == 4 and li.tiny_kv_width().value == 2 * 32 == 64
    assert li.tiny_kv_numbers_per_token().value == 2 * 4 * 64 == 512
    # the stepper's float64 cache is 8 bytes a number: 4,096 B per token, as it prints
    assert li.tiny_kv_numbers_per_token().value * 8 == 4_096
    head_dim = LLAMA["hidden_size"] // LLAMA["num_attention_heads"]
    assert li.llama_8b_kv_width().value == LLAMA["num_key_value_heads"] * head_dim == 8 * 128 == 1_024
    assert li.llama_8b_kv_numbers_per_token().value == 2 * 32 * 1_024 == 65_536
    assert li.bf16_bytes().value == 2
    assert 65_536 * 2 == LLAMA_KV_BYTES_PER_TOKEN  # the 131 kB the page prints beside it
    for name in ("tiny_layers", "tiny_kv_width", "tiny_kv_numbers_per_token", "llama_8b_kv_width",
                 "llama_8b_kv_numbers_per_token", "bf16_bytes"):
        assert f"{{{{ fact: llm_inference.{name} }}}}" in PAGE, name
    # the count comes before the symbol, and keys and values are said in words before either
    assert FLAT.index("llm_inference.tiny_kv_numbers_per_token") < FLAT.index("\\(2 L H_\\text{kv} d b\\)")
    assert FLAT.index("a **key**, a short list of numbers") < FLAT.index("**How big it gets.**")


# -- how servers keep the KV cache: the three workbenches' worked examples, by hand ------------------------------
# Llama 3.1 8B on one H100 SXM (989.4 TFLOP/s of FP16, 3.35 TB/s, 80 GB), from its config.json: 32 layers of 4,096
# (32 heads, 8 KV heads of 128), MLP 14,336, vocabulary 128,256, untied LM head.
L_LAYER = 4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336  # 218,103,808 weights
L_HEAD = 128_256 * 4096  # the LM head, and apart the embedding table: 525,336,576
L_MATMUL = 32 * L_LAYER + L_HEAD  # weights a token multiplies by
L_TOTAL = L_MATMUL + L_HEAD + (2 * 32 + 1) * 4096  # + the embedding table and the norms: 8,030,261,248
L_READ = 2 * (L_TOTAL - L_HEAD)  # FP16 bytes a pass reads: every weight but the embedding table
L_KV = 2 * 32 * 8 * 128 * 2  # 131,072 bytes per token
L_PER_KEY = 4 * 32 * 128 * 32  # score and value FLOPs per key, all heads and layers
L_ACT, L_LOGITS = 2 * 32 * 4096 * 2, 128_256 * 2


def _pass(flops, nbytes):
    return max(flops / 989.4e12, nbytes / 3.35e12)


def _prefill_after(cached, new):
    """(FLOPs, bytes beside the weights) of a pass of `new` prompt tokens after `cached`, the last one's logits."""
    flops = 2 * L_MATMUL * new + L_PER_KEY * sum(range(cached + 1, cached + new + 1)) - (new - 1) * 2 * L_HEAD
    return flops, (cached + new) * L_KV + new * L_ACT + L_LOGITS


def test_paged_blocks_and_the_shared_prefix_by_hand():
    assert L_TOTAL == LLAMA_PUBLISHED_PARAMS == 8_030_261_248  # its safetensors index: 16,060,522,496 bytes
    free = 0.9 * 80e9 - 2 * L_TOTAL  # 55,939,477,504
    block = 16 * L_KV  # 2,097,152
    assert (li.serving_block_size().value, str(li.serving_mean_block_waste())) == (16, "7.5")  # (16 - 1) / 2
    assert li.serving_kv_pool().value == pytest.approx(free) and str(li.serving_kv_pool()) == "55.9 GB"
    assert li.serving_block_bytes().value == block and str(li.serving_block_bytes()) == "2.1 MB"
    assert li.serving_blocks().value == 26_674 == int(free // block)
    assert (li.serving_sequence_tokens().value, li.serving_sequence_blocks().value,
            li.serving_sequence_waste().value) == (3000, 188, 8)  # 3,000 / 16 = 187.5: 188 blocks, 3,008 slots
    assert li.serving_reserved_tokens().value == 2500 + 4096
    assert li.serving_fit_reserved().value == int(free // (6596 * L_KV)) == 64
    assert li.serving_fit_paged().value == int(free // (188 * block)) == 141
    assert li.serving_fit_exact().value == int(free // (3000 * L_KV)) == 142
    assert li.serving_prefix_blocks().value == 2000 // 16 == 125
    assert li.serving_fit_shared().value == int((free - 125 * block) // ((188 - 0.8 * 125) * block)) == 301
    assert str(li.serving_hit_rate()) == "80 %" and li.serving_suffix_tokens().value == 500
    assert (li.serving_prompt_tokens().value, li.serving_prefix_tokens().value, li.serving_output_tokens().value,
            li.serving_max_tokens().value) == (2500, 2000, 500, 4096)


def test_prefix_cache_hit_and_miss_by_hand():
    (miss_f, miss_b), (hit_f, hit_b) = _prefill_after(0, 2500), _prefill_after(2000, 500)
    miss, hit = _pass(miss_f, L_READ + miss_b), _pass(hit_f, L_READ + hit_b)
    assert li.serving_miss_ms().value == pytest.approx(miss * 1e3) and str(li.serving_miss_ms()) == "36.9 ms"
    assert li.serving_hit_ms().value == pytest.approx(hit * 1e3) and str(li.serving_hit_ms()) == "7.65 ms"
    assert str(li.serving_mean_ttft_ms()) == "13.5 ms"  # 0.8 x 7.65 + 0.2 x 36.9
    assert li.serving_mean_ttft_ms().value == pytest.approx((0.8 * hit + 0.2 * miss) * 1e3)
    assert li.serving_prefill_flops_saved().value == pytest.approx(0.8 * (miss_f - hit_f) / miss_f)
    assert str(li.serving_prefill_flops_saved()) == "63 %"


def test_chunked_prefill_by_hand():
    decode_f = 64 * (2 * L_MATMUL + L_PER_KEY * 4096)
    decode_b = 64 * 4096 * L_KV + 64 * (L_ACT + L_LOGITS)

    def step(start, size):  # the decode step and the chunk share one read of the weights
        f, b = _prefill_after(start, size)
        return _pass(decode_f + f, L_READ + decode_b + b)

    chunks = [step(s, 512) for s in range(0, 8192, 512)]
    assert li.chunk_whole_ms().value == pytest.approx(step(0, 8192) * 1e3) and str(li.chunk_whole_ms()) == "134 ms"
    assert li.chunk_ttft_ms().value == pytest.approx(sum(chunks) * 1e3) and str(li.chunk_ttft_ms()) == "240 ms"
    assert li.chunk_steps().value == 16 == len(chunks)
    assert li.chunk_tpot_ms().value == pytest.approx(max(chunks) * 1e3) and str(li.chunk_tpot_ms()) == "15.2 ms"
    plain = _pass(decode_f, L_READ + decode_b)
    assert li.chunk_decode_tpot_ms().value == pytest.approx(plain * 1e3) and str(li.chunk_decode_tpot_ms()) == "14.8 ms"
    assert (li.chunk_prompt_tokens().value, li.chunk_tokens().value, li.chunk_decode_batch().value,
            li.chunk_decode_context().value) == (8192, 512, 64, 4096)


def test_speculative_decoding_by_hand():
    assert (str(li.spec_acceptance()), li.spec_draft_tokens().value) == ("0.8", 3)
    assert str(li.spec_tokens_per_step()) == "2.95"  # 1 + 0.8 + 0.64 + 0.512 = 2.952
    c = (L_LAYER + 2 * 4096**2 + L_HEAD) / L_MATMUL  # a layer, the 2h x h fusion, the LM head it reads
    assert li.spec_llama_drafter_cost().value == pytest.approx(c) and str(li.spec_llama_drafter_cost()) == "0.104"
    plain = (L_READ + 4096 * L_KV + L_ACT + L_LOGITS) / 3.35e12  # memory bound
    verify = (L_READ + 4099 * L_KV + 4 * (L_ACT + L_LOGITS)) / 3.35e12
    assert li.spec_llama_speedup().value == pytest.approx(2.952 * plain / (verify + 3 * c * plain))
    assert str(li.spec_llama_speedup()) == "2.25×"
    by_g = {g: sum(0.8**i for i in range(g + 1)) / (1 + g * c) for g in range(17)}
    assert li.spec_llama_best_draft().value == max(by_g, key=by_g.get) == 6
    assert str(li.spec_llama_best_speedup()) == "2.44×"
    # EAGLE's README lists 0.99B for its LLaMA2-Chat 70B head: one layer (q, o 8,192^2; k, v 8,192 x 1,024; MLP
    # 3 x 8,192 x 28,672) and the 2h x h fusion
    assert round((2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192**2) / 1e9, 2) == 0.99
    assert str(li.eagle_70b_head_billion()) == "0.99"
    assert (str(li.eagle_70b_speedup_low()), str(li.eagle_70b_speedup_high())) == ("2.7×", "3.5×")


def test_deepseek_v3_mtp_by_hand():
    ds = CONFIGS["DeepSeek-V3"]
    h, head, layers = ds["hidden_size"], ds["vocab_size"] * ds["hidden_size"], ds["num_hidden_layers"]
    norms = layers * (2 * h + ds["q_lora_rank"] + ds["kv_lora_rank"]) + h  # in the active count, no matmul
    matmul = COUNTS["DeepSeek-V3"][1] - head - norms  # active less the embedding lookup and the norms
    c = ((matmul - head) / layers + 2 * h * h + head) / matmul
    assert li.deepseek_mtp_cost().value == pytest.approx(c, rel=1e-3) and str(li.deepseek_mtp_cost()) == "0.044"
    assert (str(li.deepseek_mtp_acceptance_low()), str(li.deepseek_mtp_acceptance_high())) == ("85 %", "90 %")
    assert (str(li.deepseek_mtp_tokens_low()), str(li.deepseek_mtp_tokens_high())) == ("1.85", "1.9")  # 1 + a
    assert li.deepseek_mtp_speedup_low().value == pytest.approx(1.85 / (1 + c), rel=1e-3)
    assert li.deepseek_mtp_speedup_high().value == pytest.approx(1.90 / (1 + c), rel=1e-3)
    assert (str(li.deepseek_mtp_speedup_low()), str(li.deepseek_mtp_speedup_high())) == ("1.77×", "1.82×")
    assert li.deepseek_mtp_speedup_low().value < li.deepseek_mtp_measured().value < li.deepseek_mtp_speedup_high().value


def test_the_serving_workbenches_compute_the_pages_worked_examples():
    """The calculators' defaults are the page's worked examples, so the reader opens the workbench on them."""
    from chapter2 import calculators

    blocks = calculators.get("kv_blocks").defaults()
    assert (blocks["model"], blocks["gpu"], blocks["prompt_tokens"], blocks["prefix_tokens"], blocks["output_tokens"],
            blocks["max_tokens"], blocks["block_size"], blocks["hit_rate"], blocks["utilization"]) == (
        li.SERVING_MODEL, li.SERVING_GPU, "2500", "2000", "500", "4096", "16", "0.8", "0.9")
    chunked = calculators.get("chunked_prefill").defaults()
    assert (chunked["prompt_tokens"], chunked["chunk_tokens"], chunked["decode_batch"], chunked["decode_context"]) == (
        "8192", "512", "64", "4096")
    spec = calculators.get("speculative_decoding").defaults()
    assert (spec["acceptance"], spec["draft_tokens"], spec["context"], spec["drafter"]) == ("0.8", "3", "4096", "head")
    out = calculators.compute("kv_blocks")
    assert [v for _, v in out["fit"]] == [li.serving_fit_reserved().value, li.serving_fit_paged().value,
                                          li.serving_fit_shared().value, li.serving_fit_exact().value]


def test_the_serving_paragraph_and_workbenches_are_on_the_page():
    assert "**How servers stretch the cache.**" in PAGE
    for name in ("kv_blocks", "chunked_prefill", "speculative_decoding"):
        assert f"<!-- calculator: {name} -->" in PAGE
    for paper in ("2309.06180", "2312.07104", "2403.02310", "2211.17192", "2401.15077", "2412.19437"):
        assert f"arxiv.org/abs/{paper}" in PAGE
