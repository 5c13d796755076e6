"""Section 2.2, first page (inside the model): its facts, against numbers worked out here from the shipped
JSON files and by hand.

Parameter counts are recounted in tests/_llm_configs.py from config.json with the architecture's weight
shapes written out (not with `ModelConfig.params()`), and checked here against published totals where the
model's authors give one.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from _llm_configs import CONFIGS, COUNTS, LLAMA, LLAMA_KV_BYTES_PER_TOKEN, LLAMA_PUBLISHED_PARAMS, QWEN3, QWEN3_MOE
from _llm_configs import assert_leaves_and_cards_name_only_facts, language_model
from _llm_configs import is_moe as _is_moe

from chapter2.models import load_config
from chapter2.pages import llm_architecture as la
from chapter2.pages import neural_networks as nn

PAGE = (Path(__file__).resolve().parents[1] / "docs" / "llm-architecture.md").read_text()
FLAT = " ".join(PAGE.split())  # the page with its line breaks as spaces, for sentences that wrap


def test_hand_counts_match_published_totals():
    """The recount itself, against the model authors' numbers."""
    assert COUNTS["Llama-3.1-8B"][0] == LLAMA_PUBLISHED_PARAMS == 8_030_261_248
    # DeepSeek-V3 technical report (arXiv:2412.19437): 671B total, 37B activated per token
    assert round(COUNTS["DeepSeek-V3"][0] / 1e9) == 671 and 37e9 < COUNTS["DeepSeek-V3"][1] < 38e9
    # Qwen3 model cards: Qwen3-8B 8.2B parameters, 6.95B non-embedding; Qwen3-235B-A22B 235B total, 22B active
    assert round(COUNTS["Qwen3-8B"][0] / 1e8) == 82
    assert round((COUNTS["Qwen3-8B"][0] - 2 * QWEN3["vocab_size"] * QWEN3["hidden_size"]) / 1e7) == 695
    assert round(COUNTS["Qwen3-235B-A22B"][0] / 1e9) == 235 and round(COUNTS["Qwen3-235B-A22B"][1] / 1e9) == 22
    # Mixtral of Experts (arXiv:2401.04088): 47B parameters, 13B active
    assert round(COUNTS["Mixtral-8x7B-v0.1"][0] / 1e9) == 47 and round(COUNTS["Mixtral-8x7B-v0.1"][1] / 1e9) == 13


# -- architecture and transformer blocks --------------------------------------------------------------------
def test_architecture_name_reading():
    assert str(la.example_architecture_family()) == "Qwen3"
    assert str(la.example_architecture_is_moe()) == "yes"
    assert str(la.example_architecture_task()) == "causal language modeling"


def test_lora_on_the_query_projection():
    n = LLAMA["num_attention_heads"] * (LLAMA["hidden_size"] // LLAMA["num_attention_heads"])
    k = LLAMA["hidden_size"]
    assert la.llama_lora_rank().value == 16
    assert str(la.llama_8b_q_proj_shape()) == f"{n:,} × {k:,}" == "4,096 × 4,096"
    assert la.lora_q_proj_params().value == 16 * (n + k) == 131_072
    assert la.llama_8b_q_proj_params().value == n * k == 16_777_216
    assert la.lora_q_proj_share().value == pytest.approx(16 * (n + k) / (n * k))
    assert str(la.lora_q_proj_share()) == "0.78 %"


def test_model_configs_table_rows_are_the_configs_and_hand_counts():
    rows = la.model_configs_table().rows
    assert [r[0].value for r in rows] == sorted(CONFIGS)
    for name, arch, layers, hidden, heads, cached, kinds, vocab, total, active in rows:
        c = CONFIGS[name.value]
        t = language_model(c)
        assert arch.value == f"`{c['architectures'][0]}`"
        assert (layers.value, hidden.value, vocab.value) == (t["num_hidden_layers"], t["hidden_size"], t["vocab_size"])
        nq = t["num_attention_heads"]
        if "kv_lora_rank" in t:  # MLA: one latent and one RoPE key per layer, no per-head K and V
            assert heads.value == f"{nq} / latent"
            assert cached.value == f"latent {t['kv_lora_rank']} + RoPE key {t['qk_rope_head_dim']} = " \
                                   f"{t['kv_lora_rank'] + t['qk_rope_head_dim']}"
        else:
            nkv = t.get("num_key_value_heads", nq)
            d = t.get("head_dim") or t["hidden_size"] // nq
            assert heads.value == f"{nq} / {nkv}"
            assert cached.value == f"2 × {nkv} × {d} = {2 * nkv * d:,}"
        assert (total.value, active.value) == pytest.approx((COUNTS[name.value][0] / 1e9, COUNTS[name.value][1] / 1e9))
        assert sum(int(part.split()[0]) for part in kinds.value.split(" + ")) == t["num_hidden_layers"]
    table = str(la.model_configs_table())
    assert ("| Qwen3-235B-A22B | `Qwen3MoeForCausalLM` | 94 | 4,096 | 64 / 4 | 2 × 4 × 128 = 1,024 | 94 full | "
            "151,936 | 235.1 | 22.2 |") in table
    # DeepSeek-V3 caches 512 + 64 = 576 numbers per layer, not 2 x 128 heads x 128 (technical review, item 2)
    assert ("| DeepSeek-V3 | `DeepseekV3ForCausalLM` | 61 | 7,168 | 128 / latent | latent 512 + RoPE key 64 = 576 | "
            "61 full (MLA) | 129,280 | 671 | 37.6 |") in table
    # gpt-oss-120b's layer_types alternate a 128-token window and full attention (18 each)
    assert "| gpt-oss-120b | `GptOssForCausalLM` | 36 | 2,880 | 64 / 8 | 2 × 8 × 64 = 1,024 | 18 full + 18 sliding (128) |" in table
    # Gemma 3 27B: one global layer in six over 62 layers -> 10 full, 52 with the 1,024-token window
    assert "| 10 full + 52 sliding (1,024) |" in table
    # Llama 4 Scout: no_rope_layers marks every 4th layer global; the other 36 attend in 8,192-token chunks
    assert "| 12 full + 36 chunked (8,192) |" in table


def test_llama_sizes():
    assert la.llama_8b_total_params_billion().value == pytest.approx(LLAMA_PUBLISHED_PARAMS / 1e9)
    assert str(la.llama_8b_total_params_billion()) == "8.03"
    assert nn.llama_8b_hidden_size().value == LLAMA["hidden_size"] and str(nn.llama_8b_hidden_size()) == "4,096"
    assert la.llama_8b_ffn_width().value == LLAMA["intermediate_size"] and str(la.llama_8b_ffn_width()) == "14,336"


def test_llama_parameter_breakdown_adds_up_to_the_model():
    """The page's consistency check: the parts, counted here, add up to the published total and to params()."""
    h, v, layers = LLAMA["hidden_size"], LLAMA["vocab_size"], LLAMA["num_hidden_layers"]
    kv_dim = LLAMA["num_key_value_heads"] * h // LLAMA["num_attention_heads"]
    parts = [v * h, layers * (2 * h * h + 2 * h * kv_dim), layers * 3 * h * LLAMA["intermediate_size"],
             (2 * layers + 1) * h, v * h]
    rows = la.llama_8b_param_breakdown().rows
    assert [r[1].value for r in rows[:-1]] == parts
    assert sum(parts) == LLAMA_PUBLISHED_PARAMS
    # the two ways to count agree: the breakdown's sum and ModelConfig.params().total
    assert load_config("Llama-3.1-8B").params().total == sum(parts)
    total_row = rows[-1]
    assert total_row[1].value == sum(parts)
    assert total_row[2].value == 1.0 and str(total_row[2]) == "100 %"
    for (_, _, share), part in zip(rows[:-1], parts, strict=True):
        assert share.value == pytest.approx(part / LLAMA_PUBLISHED_PARAMS)
    table = str(la.llama_8b_param_breakdown())
    assert "| feed-forward, 32 blocks (gate, up, down) | 5,637,144,576 | 70.2 % |" in table
    assert "| embedding table (vocab × D) | 525,336,576 | 6.5 % |" in table
    assert "MISMATCH" not in table


def test_grouped_query_attention():
    assert la.llama_8b_query_heads().value == LLAMA["num_attention_heads"] == 32
    assert la.llama_8b_gqa_group().value == LLAMA["num_attention_heads"] // LLAMA["num_key_value_heads"] == 4


# -- attention -------------------------------------------------------------------------------------------------
def test_causal_pairs_of_eight_tokens():
    assert la.causal_example_tokens().value == 8
    assert la.causal_example_attended_pairs().value == 8 * 9 // 2 == 36
    assert la.causal_example_all_pairs().value == 64


def test_decoding_with_and_without_the_cache():
    assert la.cache_example_prompt_tokens().value == la.cache_example_decode_tokens().value == 1000
    lengths = range(1001, 2001)  # sequence length at each of the 1,000 decode steps
    with_cache = sum(lengths)  # one query against t keys
    without = sum(t * (t + 1) // 2 for t in lengths)  # causal attention over all t tokens again
    assert la.cache_example_pairs_with_cache().value == with_cache == 1_500_500
    assert la.cache_example_pairs_without_cache().value == without
    assert la.cache_example_pairs_ratio().value == pytest.approx(without / with_cache)
    assert str(la.cache_example_pairs_without_cache()) == "1,168,167,000"
    assert str(la.cache_example_pairs_ratio()) == "779"


def test_multi_head_latent_attention_facts():
    """What MLA caches (kv_lora_rank + qk_rope_head_dim per layer, DeepSeek-V2 paper, arXiv:2405.04434, section 2.1)
    and its FLOPs per cached token in the absorbed form (scores over 576, sums of 512-wide latents, per head) and
    the expanded form (per-head keys of 128 + 64 and values of 128)."""
    ds, llama = CONFIGS["DeepSeek-V3"], LLAMA
    heads, rank, rope = ds["num_attention_heads"], ds["kv_lora_rank"], ds["qk_rope_head_dim"]
    nope, v, layers = ds["qk_nope_head_dim"], ds["v_head_dim"], ds["num_hidden_layers"]
    assert (la.deepseek_v3_kv_lora_rank().value, la.deepseek_v3_qk_rope_head_dim().value) == (512, 64) == (rank, rope)
    assert (la.deepseek_v3_qk_nope_head_dim().value, la.deepseek_v3_v_head_dim().value) == (nope, v) == (128, 128)
    assert la.deepseek_v3_query_heads().value == heads == la.deepseek_v3_kv_heads().value == 128
    assert la.deepseek_v3_layers().value == layers == 61
    assert la.deepseek_v3_mla_cached_per_layer().value == rank + rope == 576
    assert la.deepseek_v3_expanded_per_layer().value == heads * (nope + rope + v) == 40_960
    assert str(la.deepseek_v3_mla_saving()) == "71.1×"  # 40,960 / 576
    assert la.deepseek_v3_kv_bytes_per_token().value == layers * 576 * 2 == 70_272
    assert la.deepseek_v3_kv_vs_llama_8b().value == pytest.approx(70_272 / 131_072) and str(la.deepseek_v3_kv_vs_llama_8b()) == "54 %"
    assert str(la.deepseek_v3_size_vs_llama_8b()) == "84×"  # 671.0B / 8.03B
    assert la.deepseek_v3_absorbed_flops_per_key().value == 2 * heads * (rank + rope) + 2 * heads * rank == 278_528
    assert la.deepseek_v3_expanded_flops_per_key().value == 2 * heads * (nope + rope + v) == 81_920
    assert la.deepseek_v3_absorbed_intensity().value == pytest.approx(278_528 / (576 * 2))
    assert str(la.deepseek_v3_absorbed_intensity()) == "242"
    assert la.deepseek_v3_expanded_intensity().value == 81_920 / (40_960 * 2) == 1.0
    assert str(la.deepseek_v3_mixed_intensity()) == "71.1"  # 81,920 / 1,152: the old mixed accounting
    # Llama 3.1 8B: 2 x 32 heads x (128 + 128) FLOPs per key over 2 x 8 x 128 x 2 bytes
    nq, nkv, d = llama["num_attention_heads"], llama["num_key_value_heads"], 128
    assert la.llama_8b_attention_intensity().value == 2 * nq * 2 * d / (2 * nkv * d * 2) == 4
    # a 32,768-token prefill, compute bound in FP8 either way: the same weight matmuls, attention over
    # P (P + 1) / 2 keys per layer at 278,528 (absorbed) or 81,920 (expanded) FLOPs each; LM head on the last position
    P = 32_768
    matmuls = 2 * load_config("DeepSeek-V3").params().matmul_active * P - (P - 1) * 2 * ds["vocab_size"] * ds["hidden_size"]
    keys = layers * P * (P + 1) // 2
    assert la.deepseek_v3_mla_prefill_tokens().value == P
    ratio = (matmuls + 278_528 * keys) / (matmuls + 81_920 * keys)
    assert la.deepseek_v3_prefill_absorbed_over_expanded().value == pytest.approx(ratio)
    assert str(la.deepseek_v3_prefill_absorbed_over_expanded()) == "2.28×"
    for name in ("deepseek_v3_mla_cached_per_layer", "deepseek_v3_absorbed_flops_per_key", "deepseek_v3_mixed_intensity",
                 "deepseek_v3_expanded_per_layer", "deepseek_v3_prefill_absorbed_over_expanded"):
        assert f"llm_architecture.{name} }}}}" in PAGE, name


def test_supported_families_and_the_config_calculator_are_on_the_page():
    from chapter2.models import FAMILIES

    assert la.supported_families().value.split(", ") == [f.label for f in FAMILIES]
    assert "Gemma 3" in str(la.supported_families()) and "gpt-oss" in str(la.supported_families())
    assert "<!-- calculator: model_config -->" in PAGE


# -- mixture of experts ------------------------------------------------------------------------------------------
E, K, LAYERS = QWEN3_MOE["num_experts"], QWEN3_MOE["num_experts_per_tok"], QWEN3_MOE["num_hidden_layers"]
EXPERT = 3 * QWEN3_MOE["hidden_size"] * QWEN3_MOE["moe_intermediate_size"]


def _touched(tokens):
    return E * (1 - (1 - K / E) ** tokens)


def test_qwen3_moe_sizes():
    total, active = COUNTS["Qwen3-235B-A22B"]
    assert (la.qwen3_235b_moe_layers().value, la.qwen3_235b_experts().value) == (LAYERS, E) == (94, 128)
    assert la.qwen3_235b_experts_per_token().value == K == 8
    assert la.qwen3_235b_total_params_billion().value == pytest.approx(total / 1e9)
    assert la.qwen3_235b_active_params_billion().value == pytest.approx(active / 1e9)
    assert la.qwen3_235b_active_share().value == pytest.approx(active / total)
    assert la.qwen3_235b_expert_params_million().value == pytest.approx(EXPERT / 1e6)
    assert la.qwen3_235b_expert_weight_share().value == pytest.approx(E * LAYERS * EXPERT / total)
    assert str(la.qwen3_235b_total_params_billion()) == "235.1"
    assert str(la.qwen3_235b_active_params_billion()) == "22.2"
    assert str(la.qwen3_235b_active_share()) == "9.4 %"
    assert str(la.qwen3_235b_expert_params_million()) == "18.9"
    assert str(la.qwen3_235b_expert_weight_share()) == "96.6 %"


def test_experts_touched_by_a_batch():
    assert la.qwen3_235b_experts_touched_one_token().value == pytest.approx(K)
    assert la.coverage_most().value == 0.9 and la.coverage_nearly_all().value == 0.99
    assert str(la.coverage_most()) == "90 %" and str(la.coverage_nearly_all()) == "99 %"
    for fact, share in ((la.qwen3_235b_tokens_touching_most, 0.9), (la.qwen3_235b_tokens_touching_nearly_all, 0.99)):
        t = fact().value
        assert _touched(t) / E >= share > _touched(t - 1) / E
    assert (la.qwen3_235b_tokens_touching_most().value, la.qwen3_235b_tokens_touching_nearly_all().value) == (36, 72)


def test_coverage_table_gives_the_curve_in_numbers():
    """The reference table the bars' numbers moved to: B = 1, 2, 4, ... 1,024, each row worked out here."""
    table = la.qwen3_235b_coverage_by_batch()
    assert [row[0].value for row in table.rows] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    for batch, touched, share in table.rows:
        expected = E - E * (15 / 16) ** batch.value  # each token leaves an expert unpicked with probability 120/128
        assert touched.value == pytest.approx(expected) and share.value == pytest.approx(expected / E)
    assert [str(c) for c in table.rows[0][1:]] == ["8", "6.25 %"]  # one token: its own 8 experts, k / E
    assert str(table.rows[4][2]) == "64.39 %"  # 16 tokens: 1 - (15/16)^16 = 0.64393
    assert str(table.rows[-1][2]) == "100 %"


def test_expert_weight_traffic_of_a_decode_step():
    assert la.moe_decode_batch().value == 256
    assert la.qwen3_235b_expert_bytes_one_request().value == pytest.approx(K * EXPERT * 2 * LAYERS)
    assert la.qwen3_235b_expert_bytes_batch().value == pytest.approx(_touched(256) * EXPERT * 2 * LAYERS)
    assert la.qwen3_235b_expert_share_read_batch().value == pytest.approx(_touched(256) / E)
    assert la.qwen3_235b_expert_compute_share().value == K / E
    assert la.qwen3_235b_expert_compute_saving().value == E / K
    assert str(la.qwen3_235b_expert_bytes_one_request()) == "28.4 GB"
    assert str(la.qwen3_235b_expert_bytes_batch()) == "454 GB"
    assert str(la.qwen3_235b_expert_share_read_batch()) == "100 %"
    assert str(la.qwen3_235b_expert_compute_share()) == "6.25 %"
    assert str(la.qwen3_235b_expert_compute_saving()) == "16"


def test_qwen3_moe_rounded_sizes_are_the_names_and_the_chapters():
    """The map leaf, the card and the takeaway quote the chapter's 22B of 235B: the precise counts, rounded."""
    total, active = COUNTS["Qwen3-235B-A22B"]
    named_total, named_active = map(int, re.fullmatch(r"Qwen3-(\d+)B-A(\d+)B", "Qwen3-235B-A22B").groups())
    assert la.qwen3_235b_total_params_rounded().value == round(total / 1e9) == named_total == 235
    assert la.qwen3_235b_active_params_rounded().value == round(active / 1e9) == named_active == 22
    assert (str(la.qwen3_235b_total_params_rounded()), str(la.qwen3_235b_active_params_rounded())) == ("235", "22")


def test_moe_rule_of_thumb_against_the_shipped_configs():
    """The outline's rule (MoE above roughly 100B, small models dense) and the shipped configs that test it."""
    assert la.moe_rule_of_thumb_billion().value == 100
    big = sorted((n for n in CONFIGS if COUNTS[n][0] > 100e9), key=lambda n: -COUNTS[n][0])
    assert big and all(_is_moe(CONFIGS[n]) for n in big), "the page says every shipped config above 100B is MoE"
    assert str(la.configs_above_rule()) == ", ".join(f"{n} ({COUNTS[n][0] / 1e9:,.0f}B)" for n in big)
    assert str(la.configs_above_rule()) == ("Kimi-K2-Instruct (1,026B), DeepSeek-V3 (671B), Qwen3-235B-A22B (235B), "
                                            "gpt-oss-120b (117B), Llama-4-Scout-17B-16E (108B)")
    small_moe = [n for n in CONFIGS if _is_moe(CONFIGS[n]) and COUNTS[n][0] <= 100e9]
    assert str(la.small_moe_configs()) == ", ".join(
        f"{n} ({COUNTS[n][0] / 1e9:.1f}B total, {COUNTS[n][1] / 1e9:.1f}B active)" for n in small_moe)
    assert str(la.small_moe_configs()) == ("DeepSeek-V2-Lite (15.7B total, 2.7B active), "
                                           "Mixtral-8x7B-v0.1 (46.7B total, 12.9B active)")
    dense = [n for n in CONFIGS if not _is_moe(CONFIGS[n])]
    assert all(COUNTS[n][0] < 30e9 for n in dense), "the page says every shipped dense config is well below 100B"
    assert str(la.dense_configs()) == ("Llama-3.1-8B (8B), Mistral-7B-v0.1 (7.2B), Qwen2-7B (7.6B), Qwen3-8B (8.2B), "
                                       "gemma-3-27b-it (27B)")
    assert [s.split(" (")[0] for s in str(la.dense_configs()).split(", ")] == dense
    assert "Every dense one is well below it: {{ fact: llm_architecture.dense_configs }}" in FLAT
    assert "each needs the memory of its total count" in FLAT


def test_leaves_and_cards_only_name_facts_of_this_section():
    assert_leaves_and_cards_name_only_facts(la)


def test_map_and_cards_quote_the_chapters_rounded_qwen3_numbers():
    moe_leaf = next(leaf.text for leaf in la.LEAVES if leaf.anchor == "224-mixture-of-experts")
    moe_card = next(card.answer for card in la.CARDS if card.id == "llm-moe")
    for text in (moe_leaf, moe_card):
        assert "qwen3_235b_active_params_rounded" in text and "qwen3_235b_total_params_rounded" in text
        assert "qwen3_235b_active_params_billion" not in text and "qwen3_235b_total_params_billion" not in text


def test_page_prose_fixes():
    # the worked example shows the precise counts and says the name's numbers are them rounded
    example = FLAT[FLAT.index("**Worked example.** Qwen3-235B-A22B"):FLAT.index("That saving is in compute")]
    for name in ("qwen3_235b_total_params_billion", "qwen3_235b_active_params_billion",
                 "qwen3_235b_total_params_rounded", "qwen3_235b_active_params_rounded"):
        assert f"llm_architecture.{name} }}}}" in example, name
    assert "round these to" in example
    rule = FLAT[FLAT.index("**Where MoE shows up.**"):FLAT.index("<!-- calculator: moe_coverage -->")]
    for name in ("moe_rule_of_thumb_billion", "configs_above_rule", "dense_configs", "small_moe_configs"):
        assert f"llm_architecture.{name} }}}}" in rule, name




# -- checks added by the teaching pass ------------------------------------------------------------------------------
def test_kv_bytes_per_token_of_llama():
    """2 (K and V) x L x H_kv x d x b, from the config: 2 x 32 x 8 x (4096 / 32) x 2 bytes (BF16)."""
    assert (la.llama_8b_layers().value, la.llama_8b_kv_heads().value, la.llama_8b_head_dim().value) == (32, 8, 128)
    assert la.llama_8b_kv_bytes_per_token().value == la.llama_8b_kv_per_token().value == LLAMA_KV_BYTES_PER_TOKEN == 131_072
    assert str(la.llama_8b_kv_bytes_per_token()) == "131,072" and str(la.llama_8b_kv_per_token()) == "131 kB"
    # without GQA (one K/V head per query head) the cache would be G = 32 / 8 times larger
    assert la.llama_8b_gqa_group().value * la.llama_8b_kv_heads().value == LLAMA["num_attention_heads"]


def test_ffn_share_is_the_breakdowns_feed_forward_row():
    ffn = LLAMA["num_hidden_layers"] * 3 * LLAMA["hidden_size"] * LLAMA["intermediate_size"]
    assert la.llama_8b_ffn_share().value == pytest.approx(ffn / LLAMA_PUBLISHED_PARAMS)
    assert str(la.llama_8b_ffn_share()) == "70.2 %"
    row = next(r for r in la.llama_8b_param_breakdown().rows if str(r[0]).startswith("feed-forward"))
    assert str(row[2]) == str(la.llama_8b_ffn_share())


def test_the_cache_is_explained_after_queries_keys_values_heads_and_gqa():
    """The issue's use-before-definition: the KV cache and its bytes per token come after Q, K, V, heads, GQA and
    the causal mask (the old page gave `2 x layers x KV heads x head_dim` about 20 screens before defining them)."""
    first_use = min(FLAT.index("KV bytes per token"), FLAT.index("That is why the **KV cache**"))
    for concept in ("a **query**", "a **key**", "a **value**", "attention **heads**", "(**grouped-query attention**, GQA)",
                    "A **causal mask**"):
        assert FLAT.index(concept) < first_use, concept
    # prefill and decode are the previous page's (2.2a, the chapter's order): linked before the first decode step
    assert FLAT.index("(llm-inference.md)") < FLAT.index("decode step")


def test_block_structure_names_gemmas_extra_norms():
    """Gemma 3 normalizes each sublayer's output too (four norms per block: transformers' Gemma3DecoderLayer
    has input, post-attention, pre-feed-forward and post-feed-forward RMSNorms), so "every modern LLM" was wrong."""
    assert "every modern LLM has the same outline" not in PAGE
    assert "Gemma 3 also normalizes each sublayer's output" in FLAT


def test_moe_equations_use_the_chapters_letters():
    """T is the sampling temperature and E the experts: the coverage formula counts B tokens, not T, and writes no
    expectation operator E[...]; the chosen set is not S (attention scores) and the weights are not w (window)."""
    assert "E \\cdot \\bigl(1 - (1 - E_\\text{tok}/E)^B\\bigr)" in PAGE
    assert "^T" not in PAGE and "\\operatorname{E}[" not in PAGE
    assert "S &= \\text{the } k" not in PAGE and "w_e" not in PAGE and "r &= " not in PAGE
    # the LoRA factors are not B and A (batch, attention weights), the embedding table not E, the vocabulary not V
    assert "W + BA" not in PAGE and "E[\\text{ids}]" not in PAGE and "(N, V)" not in PAGE
    assert "W_\\text{up} W_\\text{down}" in PAGE and "W_\\text{emb}[\\text{ids}]" in PAGE


def test_moe_and_expert_parallelism_divide_memory_and_traffic_they_do_not_save_them():
    """Issue 24: at a production batch an MoE reads as many weight bytes as a dense model of its total size, and
    expert (or tensor) parallelism divides memory and traffic among GPUs; it does not save them. The takeaway, the
    things to remember and the recall card said "saves ... memory ... unless/only with expert parallelism"."""
    card = next(c for c in la.CARDS if c.id == "llm-moe")
    for text in (FLAT, " ".join(card.answer.split())):
        assert not re.search(r"unless expert parallelism|memory only with expert parallelism", text), text[:80]
    assert "divides that memory and traffic among GPUs, it does not save them" in FLAT  # takeaway
    assert "Expert parallelism divides both among GPUs; it does not shrink them" in FLAT  # things to remember
    assert "as many weight bytes as a dense model of its total size" in FLAT
    assert "Expert parallelism divides both among GPUs" in " ".join(card.answer.split()) or (
        "divides both among GPUs" in " ".join(card.answer.split()))
    # the numbers behind it: a batch of 64 tokens, each picking 8 of 128 experts, leaves an expert untouched with
    # probability (1 - 8/128)**64, so it reads almost every expert's weights
    assert 1 - (1 - 8 / 128) ** 64 > 0.98


def test_moe_text_uses_e_tok_for_experts_per_token():
    """The notation table reserves E_tok for experts per token; the text said k."""
    section = FLAT[FLAT.index("## 2.2.4 Mixture of experts"):FLAT.index("## Things to remember")]
    assert "\\(k\\)" not in section and "\\(k =" not in section
    assert "\\(E_\\text{tok}\\)" in section


def test_every_calculator_that_takes_one_llm_and_one_gpu_opens_on_the_running_example():
    """Issue 24: one running example, Llama 3.1 8B on an H100, wherever a single LLM serves (the config reader
    opened on gpt-oss-120b). The mixture-of-experts calculator needs an MoE and opens on its own numbers."""
    from chapter2.calculators import REGISTRY  # every calculator, all modules imported
    from chapter2.calculators._models import MODEL_OPTIONS

    llm_names = {name for name, _ in MODEL_OPTIONS}
    checked = []
    for name, calc in REGISTRY.items():
        for field in calc.fields:
            options = {o[0] for o in (field.options or ())}
            if field.name == "model" and options and options <= llm_names:
                assert field.default == "Llama-3.1-8B", (name, field.default)
                checked.append(name)
            if field.name == "gpu":
                assert field.default == "H100-SXM", (name, field.default)
    assert {"model_config", "kv_cache", "request_timeline"} <= set(checked)


def test_the_routing_example_worked_by_hand():
    """Scores (0, 1.6, 1.1, 0): softmax, keep the two largest, scale them to sum to 1 (Qwen3-MoE's norm_topk_prob)."""
    e = [math.exp(v) for v in (0.0, 1.6, 1.1, 0.0)]
    probs = [v / sum(e) for v in e]
    kept = probs[1] + probs[2]
    assert la.moe_example_experts().value == 4 and la.moe_example_per_token().value == 2
    rows = la.moe_routing_example_table().rows
    for (expert, prob, runs, weight), want in zip(rows, probs, strict=True):
        assert prob.value == pytest.approx(want)
        assert str(runs) == ("runs" if expert.value in (1, 2) else "skipped")
        assert weight.value == pytest.approx(want / kept if expert.value in (1, 2) else 0.0)
    assert "| 1 | 0.5 | runs | 62 % |" in str(la.moe_routing_example_table())
    assert PAGE.index("llm_architecture.moe_routing_example_table") < PAGE.index("E_\\text{tok}")
