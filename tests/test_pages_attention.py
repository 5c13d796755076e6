"""Section 2.5's facts, against numbers worked out here from the configs, the papers and the result files.

Nothing here calls the package function a fact calls: the expected values are
counted by hand (closed forms, loops over blocks), read from the shipped
config and result JSON, or taken from the published source cited next to them.
"""

from __future__ import annotations

import math

import json
import re
from pathlib import Path

import pytest

from chapter2 import pages
from chapter2.hardware import GPUS
from chapter2.pages import attention as att
from chapter2.pages import bottlenecks as bn
from chapter2.pages import llm_architecture as la
from chapter2.pages import llm_inference as li
from chapter2.pages import fact_refs

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "chapter2" / "data"
LLAMA = json.loads((DATA / "configs" / "Llama-3.1-8B.json").read_text())
MISTRAL = json.loads((DATA / "configs" / "Mistral-7B-v0.1.json").read_text())
BENCH = {p.name.split("-2026")[0]: json.loads(p.read_text()) for p in sorted((DATA / "bench").glob("*.json"))}
TINY_LM = json.loads((DATA / "tiny_lm" / "config.json").read_text())

N, D = 4096, 128  # the worked example: one head, FP16 (2 bytes)


def causal_pairs(n: int, w: int | None = None) -> int:
    """(query, key) pairs of causal attention, counted query by query: query i sees min(i + 1, w) keys."""
    if w is None or w >= n:
        return n * (n + 1) // 2
    return w * (w + 1) // 2 + (n - w) * w


# ------------------------------------------------------------------ introduction


def test_doubling_the_prompt_quadruples_prefill_pairs():
    assert att.prefill_work_doubling_factor().value == pytest.approx(causal_pairs(8192) / causal_pairs(4096))
    assert str(att.prefill_work_doubling_factor()) == "4"


def test_doubling_the_context_doubles_the_kv_cache_read():
    assert "sliding_window" not in LLAMA  # every layer keeps every token
    assert att.decode_kv_read_doubling_factor().value == 2.0
    assert str(att.decode_kv_read_doubling_factor()) == "2×"


def _llama_attention_share(context: int) -> float:
    h, layers, heads, kv = LLAMA["hidden_size"], LLAMA["num_hidden_layers"], LLAMA["num_attention_heads"], \
        LLAMA["num_key_value_heads"]
    d = h // heads
    per_layer = h * heads * d + 2 * h * kv * d + heads * d * h + 3 * h * LLAMA["intermediate_size"]  # q, k, v, o, MLP
    matmul_params = layers * per_layer + h * LLAMA["vocab_size"]  # plus the LM head
    attention = layers * heads * 2 * (d + d) * context  # q·k and p·V per key
    return attention / (2 * matmul_params + attention)


def test_llama_decode_attention_share():
    assert bn.decode_context().value == 4096
    assert bn.llama_8b_decode_attention_flop_share().value == pytest.approx(_llama_attention_share(4096))
    assert li.llama_8b_context_window().value == LLAMA["max_position_embeddings"] == 131072
    assert att.llama_8b_decode_attention_share_at_max_context().value == pytest.approx(_llama_attention_share(131072))
    assert str(bn.llama_8b_decode_attention_flop_share()) == "13 %"
    assert str(att.llama_8b_decode_attention_share_at_max_context()) == "82 %"
    assert str(li.llama_8b_context_window()) == "131,072"


def _llama_decode_bytes(context: int, batch: int = 1) -> tuple[int, int]:
    """(other bytes, KV cache bytes) of one Llama 3.1 8B decode step in FP16/BF16, from config.json by hand.

    The step reads every weight but the input embedding (a row lookup; the LM head is a separate matrix, untied)
    and, per sequence, the K and V of all `context` tokens (the new one's written); the activations of the
    chapter's byte convention (section 2.4, `chapter2.roofline`) are each block's input and output hidden state
    and the logits, per sequence. 2 bytes each."""
    h, layers, heads, kv, vocab = (LLAMA["hidden_size"], LLAMA["num_hidden_layers"], LLAMA["num_attention_heads"],
                                   LLAMA["num_key_value_heads"], LLAMA["vocab_size"])
    d = h // heads
    assert LLAMA["tie_word_embeddings"] is False
    per_layer = h * heads * d + 2 * h * kv * d + heads * d * h + 3 * h * LLAMA["intermediate_size"] + 2 * h  # + 2 norms
    weights = (layers * per_layer + vocab * h + h) * 2  # layers, LM head, final norm
    activations = batch * (2 * layers * h + vocab) * 2
    cache = batch * context * layers * 2 * kv * d * 2
    return weights + activations, cache


def test_llama_decode_attention_byte_share():
    """Decode is memory bound, so the page also gives attention's share of the bytes: the KV cache read."""
    for fact, context, batch in ((bn.llama_8b_decode_attention_byte_share, 4096, 1),
                                 (att.llama_8b_decode_attention_byte_share_at_max_context, 131072, 1),
                                 (bn.llama_8b_decode_attention_byte_share_batched, 4096, 64)):
        weights, cache = _llama_decode_bytes(context, batch)
        assert fact().value == pytest.approx(cache / (weights + cache)), fact.__name__
    assert bn.big_batch().value == 64
    # H100 SXM, 80 GB (https://www.nvidia.com/en-us/data-center/h100/): the batched step's weights and caches fit
    assert sum(_llama_decode_bytes(4096, 64)) < 80e9
    assert [str(f()) for f in (bn.llama_8b_decode_attention_byte_share,
                               att.llama_8b_decode_attention_byte_share_at_max_context,
                               bn.llama_8b_decode_attention_byte_share_batched)] == ["3.5 %", "53 %", "70 %"]
    # the point of the paragraph: at batch 1 and 4,096 tokens attention's byte share is far below its FLOP share
    assert bn.llama_8b_decode_attention_byte_share().value < bn.llama_8b_decode_attention_flop_share().value / 3


def test_decode_attention_intensity_is_the_gqa_group():
    """Per layer and sequence: H_q x 4d x N operations on 2 x H_kv x d x N x 2 bytes (FP16/BF16) = H_q / H_kv."""
    heads, kv, layers = LLAMA["num_attention_heads"], LLAMA["num_key_value_heads"], LLAMA["num_hidden_layers"]
    d = LLAMA["hidden_size"] // heads
    for n, batch in ((4096, 1), (131072, 1), (4096, 64)):
        ops = batch * layers * heads * 4 * d * n
        nbytes = batch * layers * 2 * kv * d * n * 2
        assert ops / nbytes == heads / kv == 4
    assert la.llama_8b_gqa_group().value == heads // kv == 4
    assert la.llama_8b_attention_intensity().value == pytest.approx(heads / kv)
    assert str(la.llama_8b_attention_intensity()) == "4"
    assert la.llama_8b_attention_intensity().value < bn.h100_ops_per_byte().value / 50
    assert att.llama_8b_decode_programs_unsplit().value == 1 * kv == 8  # batch 1 x KV heads


# ------------------------------------------------------------------ FlashAttention


def test_worked_example_inputs():
    assert (att.flash_example_seq_len().value, att.flash_example_head_dim().value) == (N, D)
    assert str(att.flash_example_seq_len()) == "4,096"


def test_standard_attention_round_trips_the_scores():
    # 2Nd + N² (S = QKᵀ) + 2N² (softmax) + N² + 2Nd (O = PV) elements, 2 bytes each; 4N²d + 3N² operations
    nbytes = (4 * N * N + 4 * N * D) * 2
    ops = 4 * N * N * D + 3 * N * N
    assert att.standard_attention_bytes().value == nbytes
    assert att.standard_attention_ops().value == ops
    assert bn.attention_intensity().value == pytest.approx(ops / nbytes)
    assert att.standard_scores_bytes().value == N * N * 2
    assert str(att.standard_attention_bytes()) == "138 MB"
    assert str(att.standard_attention_ops()) == "8.64 GFLOP"
    assert str(bn.attention_intensity()) == "62.4"
    assert str(att.standard_scores_bytes()) == "33.6 MB"


def test_flash_attention_moves_only_q_k_v_and_o():
    nbytes = 4 * N * D * 2
    ops = 4 * N * N * D + 3 * N * N
    assert att.flash_attention_bytes().value == nbytes
    assert bn.flash_attention_intensity().value == pytest.approx(ops / nbytes) == N / 2 + 3 * N / (8 * D)
    assert att.flash_traffic_reduction().value == pytest.approx((8 * N * N + 8 * N * D) / (8 * N * D)) == N / D + 1
    assert str(att.flash_attention_bytes()) == "4.19 MB"
    assert str(bn.flash_attention_intensity()) == "2,060"
    assert str(att.flash_traffic_reduction()) == "33"


def test_flash_attention_steps_table():
    table = att.flash_attention_steps_table()
    assert table.header == ("Step", "Reads", "Writes", "Elements moved", "Bytes", "Operations")
    *steps, total = table.rows
    # the chapter's notation: the softmax output is A (attention weights); P is parameters
    assert [str(r[0]) for r in steps] == ["read Q, K, V", "S = QKᵀ (on chip)", "A = softmax(S) (on chip)",
                                          "O = AV (on chip)", "write O"]
    assert [r[4].value for r in steps] == [3 * N * D * 2, 0, 0, 0, N * D * 2]
    assert [str(c) for c in total] == ["**Total**", "", "", "", f"**{8 * N * D:,}**",
                                       f"**{4 * N * N * D + 3 * N * N:,}**"]
    text = str(table)
    assert "| read Q, K, V | Q, K, V |  | 3Nd = 1,572,864 | 3,145,728 | 0 |" in text
    assert "| S = QKᵀ (on chip) |  |  | 0 | 0 | 2N²d = 4,294,967,296 |" in text
    assert "| A = softmax(S) (on chip) |  |  | 0 | 0 | 3N² = 50,331,648 |" in text
    assert "| write O |  | O | Nd = 524,288 | 1,048,576 | 0 |" in text
    assert "0 = 0" not in text  # a step that moves or computes nothing shows a plain 0
    assert text.splitlines()[1] == "|---|---|---|---:|---:|---:|"


def test_h100_verdicts():
    # H100 SXM: 989.4 TFLOP/s dense FP16 (Hopper whitepaper) and 3.35 TB/s (NVIDIA H100 datasheet,
    # https://www.nvidia.com/en-us/data-center/h100/)
    ridge = 989.4e12 / 3.35e12
    assert bn.h100_ops_per_byte().value == pytest.approx(ridge)
    assert str(bn.h100_ops_per_byte()) == "295"
    standard = (4 * N * N * D + 3 * N * N) / ((4 * N * N + 4 * N * D) * 2)
    flash = (4 * N * N * D + 3 * N * N) / (4 * N * D * 2)
    assert standard < ridge < flash
    assert str(att.standard_attention_bound()) == "memory bound"
    assert str(att.flash_attention_bound()) == "compute bound"


def _tiles(n: int, tile: int, w: int | None = None) -> tuple[int, int, int]:
    """(visited, masked, total) tiles of causal (or windowed) attention, query block by query block."""
    blocks = -(-n // tile)
    visited = masked = 0
    for i in range(blocks):
        q0, q1 = i * tile, min(n, (i + 1) * tile) - 1  # first and last query of the block
        lo = 0 if w is None else max(0, q0 - w + 1)  # first key any query of the block sees
        for j in range(lo // tile, q1 // tile + 1):
            k0, k1 = j * tile, min(n, (j + 1) * tile) - 1
            visited += 1
            every_pair_visible = k1 <= q0 and (w is None or k0 > q1 - w)
            masked += not every_pair_visible
    return visited, masked, blocks * blocks


def test_causal_tile_schedule():
    assert str(att.tile_shape()) == "128 × 128"
    assert att.causal_tiles_seq_len().value == 1024
    visited, masked, total = _tiles(1024, 128)
    assert (visited, masked, total) == (36, 8, 64)  # a triangle of 8 × 9 / 2 tiles, the 8 diagonal ones masked
    assert att.causal_tiles_visited().value == visited
    assert att.causal_tiles_masked().value == masked
    assert att.causal_tiles_total().value == total


def test_window_tile_schedule():
    assert (att.window_tiles_window().value, att.window_tiles_seq_len().value) == (256, 2048)
    visited, _, total = _tiles(2048, 128, 256)
    assert (visited, total) == (1 + 2 + 14 * 3, 256)  # one block, then two, then three per query block
    assert att.window_tiles_visited().value == visited
    assert att.window_tiles_total().value == total
    assert att.causal_tiles_visited_at_window_length().value == _tiles(2048, 128)[0] == 16 * 17 // 2


def test_the_page_describes_the_figure_it_shows():
    """The tile counts on the page are those of the `flash_schedule` figure's panels."""
    from chapter2.host import figures
    from chapter2.host.figures import attention as _attention_figures  # noqa: F401 - registers flash_schedule

    alt = figures.REGISTRY["flash_schedule"].alt
    assert "128 by 128 positions per tile" in alt
    assert f"causal attention over {att.causal_tiles_seq_len().value} tokens" in alt
    assert f"the {att.causal_tiles_masked().value} diagonal tiles" in alt
    assert f"the {att.causal_tiles_total().value - att.causal_tiles_visited().value} tiles above the diagonal" in alt
    assert f"a sliding window of {att.window_tiles_window().value} over {att.window_tiles_seq_len().value} tokens" in alt


# ------------------------------------------------------------------ sliding window


def test_mistral_window_from_its_config():
    assert att.mistral_7b_window().value == MISTRAL["sliding_window"] == 4096
    assert att.mistral_7b_layers().value == MISTRAL["num_hidden_layers"] == 32
    assert att.mistral_7b_reach().value == 32 * 4096
    assert str(att.mistral_7b_reach()) == "131,072"
    assert li.mistral_7b_config_context().value == MISTRAL["max_position_embeddings"] == 32768


def test_window_pair_share():
    assert (att.pair_share_example_seq_len().value, att.pair_share_example_window().value) == (4096, 1024)
    share = causal_pairs(4096, 1024) / causal_pairs(4096)
    assert att.window_pair_share().value == pytest.approx(share) == pytest.approx(0.4375, abs=1e-4)
    assert str(att.window_pair_share()) == "44 %"


def test_window_saving_table():
    w = MISTRAL["sliding_window"]
    table = att.window_saving_table()
    assert table.header == ("Prompt length N", "Full causal scores", "Window scores", "Work ratio")
    assert [r[0].value for r in table.rows] == [4096, 16384, 32768, 131072, 1048576]
    for n, full, window, ratio in table.rows:
        n = n.value
        assert full.value == n * (n + 1) // 2
        assert window.value == n * w - w * (w - 1) // 2  # every n here is >= w
        assert ratio.value == pytest.approx(full.value / window.value)
    text = str(table)
    assert "| 4,096 | 8.39 M | 8.39 M | 1× |" in text
    assert "| 32,768 | 537 M | 126 M | 4.27× |" in text
    assert "| 131,072 | 8.59 G | 528 M | 16.3× |" in text
    assert "| 1,048,576 | 550 G | 4.29 G | 128× |" in text


def test_window_saving_and_kv_cache_in_the_text():
    """The Mistral examples stay within the model's own context (config.json max_position_embeddings)."""
    w, longest = MISTRAL["sliding_window"], MISTRAL["max_position_embeddings"]
    assert (att.window_short_prompt().value, att.window_long_prompt().value) == (4096, longest) == (4096, 32768)
    assert att.window_saving_at_long_prompt().value == pytest.approx(causal_pairs(longest) / causal_pairs(longest, w))
    assert str(att.window_saving_at_long_prompt()) == "4.27"  # the table's 32,768 row says 4.27× too
    # K and V, 8 KV heads of 128 (hidden / heads), BF16, 32 layers, at most w tokens per layer
    per_token = 2 * MISTRAL["num_key_value_heads"] * (MISTRAL["hidden_size"] // MISTRAL["num_attention_heads"]) * 2 * 32
    assert att.mistral_7b_kv_cache_short().value == per_token * 4096
    assert att.mistral_7b_kv_cache_long().value == per_token * min(longest, w) == att.mistral_7b_kv_cache_short().value
    assert att.mistral_7b_kv_cache_long_without_window().value == per_token * longest
    assert str(att.mistral_7b_kv_cache_long()) == "537 MB"
    assert str(att.mistral_7b_kv_cache_long_without_window()) == "4.29 GB"


def test_the_page_quotes_mistral_only_within_its_context():
    """Every Mistral 7B length the page's prose quotes is at most max_position_embeddings; longer table rows
    are said to be hypothetical."""
    page = (ROOT / "docs" / att.PAGE).read_text()
    section = page[page.index("## Sliding window attention"):page.index("## State-space models")]
    for name in ("window_long_prompt", "window_short_prompt"):
        assert f"attention.{name}" in section
        assert getattr(att, name)().value <= MISTRAL["max_position_embeddings"]
    assert "hypothetical" in section and "llm_inference.mistral_7b_config_context" in section


# ------------------------------------------------------------------ hybrids

# Nemotron 3 Nano 30B-A3B, https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16/blob/main/config.json:
# hybrid_override_pattern (M Mamba-2, E MoE, * attention), 32 query / 2 KV heads of 128, Mamba-2 with 64 heads of 64,
# state 128, 8 groups, convolution of 4; Mamba state in FP32 (mamba_ssm_cache_dtype), activations BF16.
PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
HEADS, KV_HEADS, HEAD_DIM = 32, 2, 128
INNER, STATE, GROUPS, CONV = 64 * 64, 128, 8, 4


def test_nemotron_layers_from_its_pattern():
    assert att.nemotron_nano_layers().value == len(PATTERN) == 52
    assert att.nemotron_nano_mamba_layers().value == PATTERN.count("M") == 23
    assert att.nemotron_nano_moe_layers().value == PATTERN.count("E") == 23
    assert att.nemotron_nano_attention_layers().value == PATTERN.count("*") == 6
    assert att.nemotron_nano_mixing_layers().value == 29
    assert (att.nemotron_nano_kv_heads().value, att.nemotron_nano_head_dim().value) == (KV_HEADS, HEAD_DIM)
    assert att.nemotron_nano_attention_share().value == pytest.approx(6 / 29)
    assert str(att.nemotron_nano_attention_share()) == "21 %"
    assert att.nemotron_nano_attention_share_of_all_layers().value == pytest.approx(6 / 52)
    assert str(att.nemotron_nano_attention_share_of_all_layers()) == "12 %"


def test_the_page_says_which_layers_the_attention_share_counts():
    """21 % is 6 of the 29 sequence-mixing layers (the table's stacks), not of all 52 layers: the page and the
    card say so, and the page gives the share among all layers too."""
    page = (ROOT / "docs" / att.PAGE).read_text()
    at = page.index("{{ fact: attention.nemotron_nano_attention_share }}")
    before = page[at - 300:at]
    assert "sequence-mixing layers" in before and "attention.nemotron_nano_mixing_layers" in before
    assert "attention.nemotron_nano_attention_share_of_all_layers" in page
    card = next(c for c in att.CARDS if c.id == "att-ssm").answer
    assert "share of its sequence-mixing layers" in card


def _stack(attention_layers: int, mamba_layers: int, n: int) -> tuple[float, float, float]:
    """(FLOPs, memory bytes, state bytes) of one prefill of n tokens through the mixing layers."""
    conv_channels = INNER + 2 * GROUPS * STATE
    attention_flops = 4 * HEAD_DIM * HEADS * causal_pairs(n)  # q·k and p·V, 2 FLOPs per multiply-add
    mamba_flops = n * (5 * INNER * STATE + 2 * CONV * conv_channels)  # scan: 5 FLOPs per state element
    kv = 2 * n * KV_HEADS * HEAD_DIM * 2
    state = INNER * STATE * 4 + (CONV - 1) * conv_channels * 2
    return (attention_layers * attention_flops + mamba_layers * mamba_flops,
            attention_layers * kv + mamba_layers * state, mamba_layers * state)


def _cell(flops: float, memory: float) -> str:
    from chapter2.format import nbytes, si

    return f"{si(flops, 'FLOP')} / {nbytes(memory)}"


def test_hybrid_cost_table():
    table = att.hybrid_cost_table()
    assert table.header[0] == "Context" and len(table.header) == 4
    assert [r[0].value for r in table.rows] == [4096, 131072, 1048576]
    for row in table.rows:
        n = row[0].value
        expected = [_stack(29, 0, n), _stack(6, 23, n), _stack(0, 29, n)]
        assert [str(c) for c in row[1:]] == [_cell(f, m) for f, m, _ in expected]
    text = str(table)
    assert "| 4,096 | 3.99 TFLOP / 122 MB | 1.08 TFLOP / 74.2 MB | 317 GFLOP / 61.9 MB |" in text
    assert "| 1,048,576 | 261 PFLOP / 31.1 GB | 54.1 PFLOP / 6.49 GB | 81.2 TFLOP / 61.9 MB |" in text


def test_hybrid_shares_in_the_text():
    assert (att.hybrid_short_context().value, att.hybrid_long_context().value) == (4096, 1048576)
    assert att.mamba_stack_memory().value == _stack(0, 29, 4096)[1] == _stack(0, 29, 1048576)[1]
    assert str(att.mamba_stack_memory()) == "61.9 MB"
    _, hybrid_memory, hybrid_state = _stack(6, 23, 4096)
    assert att.hybrid_state_share_short().value == pytest.approx(hybrid_state / hybrid_memory)
    assert att.hybrid_memory_saving_short().value == pytest.approx(1 - hybrid_memory / _stack(29, 0, 4096)[1])
    long_hybrid, long_attention = _stack(6, 23, 1048576), _stack(29, 0, 1048576)
    assert att.hybrid_memory_share_long().value == pytest.approx(long_hybrid[1] / long_attention[1])
    assert att.hybrid_flops_share_long().value == pytest.approx(long_hybrid[0] / long_attention[0])
    assert [str(f()) for f in (att.hybrid_state_share_short, att.hybrid_memory_saving_short,
                               att.hybrid_memory_share_long, att.hybrid_flops_share_long)] == \
        ["66 %", "39 %", "21 %", "21 %"]


# Whole model, per token, worked from the same config.json (hidden 2,688, vocab 131,072): every weight a token
# multiplies. Attention layer: q 2,688 x 4,096, k and v 2,688 x 256 each, o 4,096 x 2,688. Mamba-2 layer: in_proj
# 2,688 x (2 x 4,096 + 2 x 8 x 128 + 64 heads), out_proj 4,096 x 2,688 (its convolution is in `_stack`). MoE layer:
# 6 of 128 routed experts and the shared one, each an up and a down projection (relu2, no gate), 1,856 and 3,712
# wide, and a 2,688 x 128 router. The LM head runs once, on the last position (a server's prefill).
HIDDEN, VOCAB = 2688, 131072
ATTENTION_PROJ = HIDDEN * (HEADS * HEAD_DIM + 2 * KV_HEADS * HEAD_DIM) + HEADS * HEAD_DIM * HIDDEN
MAMBA_PROJ = HIDDEN * (2 * INNER + 2 * GROUPS * STATE + 64) + INNER * HIDDEN
MOE_ACTIVE = 6 * (HIDDEN * 1856 * 2) + HIDDEN * 3712 * 2 + HIDDEN * 128


def _whole(attention_layers: int, mamba_layers: int, n: int) -> float:
    """FLOPs of one whole-model prefill of n tokens: the mixing of `_stack`, every projection and expert a token
    multiplies (2 FLOPs per multiply-add), and the LM head once."""
    weights = attention_layers * ATTENTION_PROJ + mamba_layers * MAMBA_PROJ + 23 * MOE_ACTIVE
    return _stack(attention_layers, mamba_layers, n)[0] + 2 * n * weights + 2 * HIDDEN * VOCAB


def test_the_hybrid_shares_say_they_count_the_mixing_alone_and_the_whole_model_is_given_beside_them():
    """issue 32: the 21 % of FLOPs counts attention against the scan alone. Over the whole model (the mixers'
    projections, the MoE layers' experts, the LM head) a hybrid prefill costs 99.9 % of the all-attention one at
    4,096 tokens and 22.6 % at 1,048,576; the memory share stays (projections and experts hold no cache)."""
    table = att.hybrid_whole_model_table()
    assert [r[0].value for r in table.rows] == [4096, 131072, 1048576]
    for row in table.rows:
        n = row[0].value
        whole = [_whole(29, 0, n), _whole(6, 23, n), _whole(0, 29, n)]
        assert [c.value for c in row[1:4]] == pytest.approx(whole, rel=1e-12)
        assert row[4].value == pytest.approx(whole[1] / whole[0], rel=1e-12)
        assert row[5].value == pytest.approx(_stack(6, 23, n)[0] / _stack(29, 0, n)[0], rel=1e-12)
    assert _whole(6, 23, 4096) / _whole(29, 0, 4096) == pytest.approx(0.99897, abs=1e-5)
    assert att.hybrid_whole_flops_share_short().value == pytest.approx(_whole(6, 23, 4096) / _whole(29, 0, 4096))
    assert att.hybrid_whole_flops_share_long().value == pytest.approx(
        _whole(6, 23, 1048576) / _whole(29, 0, 1048576))
    assert [str(att.hybrid_whole_flops_share_short()), str(att.hybrid_whole_flops_share_long())] == ["100 %", "23 %"]
    page = (ROOT / "docs" / att.PAGE).read_text()
    flat = " ".join(page.split())
    at = flat.index("{{ fact: attention.hybrid_flops_share_long }}")
    note = flat[at:at + 1200]
    assert "mixing alone" in note and "attention.hybrid_whole_flops_share_long" in note
    assert "{{ fact: attention.hybrid_whole_model_table }}" in flat


# ------------------------------------------------------------------ measured kernels


def test_cpu_roofs_from_the_committed_results():
    cpu, tiny = BENCH["cpu-attention-cpu-x86-64-2-logical-cores"], BENCH["cpu-tiny-lm-amd-epyc"]
    device = tiny["provenance"]["device"]
    assert str(att.cpu_bench_device()) == f"{device['name']} ({device['machine']}, {device['cpu_count']} logical cores)" \
        == "AMD EPYC (x86_64, 2 logical cores)"
    assert str(att.cpu_bench_dates()) == ", ".join(sorted(r["provenance"]["date"][:10] for r in (cpu, tiny)))
    rate = max(r["matmul"]["flops"] / r["matmul"]["min_s"] for r in cpu["results"])
    assert att.cpu_matmul_rate().value == pytest.approx(rate)
    copy = cpu["copy"]["large"]
    assert att.cpu_copy_bandwidth().value == pytest.approx(copy["bytes_moved"] / copy["median_s"])
    assert str(att.cpu_matmul_rate()) == "223 GFLOP/s" and str(att.cpu_copy_bandwidth()) == "37.6 GB/s"


def test_cpu_ridge_is_the_committed_runs_ratio():
    cpu = BENCH["cpu-attention-cpu-x86-64-2-logical-cores"]
    rate = max(r["matmul"]["flops"] / r["matmul"]["min_s"] for r in cpu["results"])
    copy = cpu["copy"]["large"]
    assert att.cpu_ridge().value == pytest.approx(rate / (copy["bytes_moved"] / copy["median_s"]))
    assert str(att.cpu_ridge()) == "5.94"


def test_the_page_explains_why_the_notebook_ridge_differs():
    page = (ROOT / "docs" / att.PAGE).read_text()
    at = page.index("{{ fact: attention.cpu_ridge }}")
    after = page[at:at + 700]
    assert "notebooks/prefill_decode.py" in after and "each time the site is built" in after


def test_the_page_does_not_overstate_what_the_interpreter_checks():
    """The Triton interpreter runs programs serially on the CPU: it checks numerics at the tested shapes,
    not races, GPU dot precision or speed."""
    page = (ROOT / "docs" / att.PAGE).read_text()
    assert not re.search(r"interpreter (proves|guarantees)|proves the kernels", page, re.I)
    section = " ".join(page[page.index("## Appendix: measured on this machine"):].split())
    for phrase in ("one after another on the CPU", "races between programs", "full float32", "and speed"):
        assert phrase in section, phrase


def test_tiny_lm_decode_intensity():
    c, tiny = TINY_LM, BENCH["cpu-tiny-lm-amd-epyc"]
    h, heads, kv, d, layers = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                               c["num_hidden_layers"])
    matmul = layers * (2 * h * heads * d + 2 * h * kv * d + 3 * h * c["intermediate_size"]) + h * c["vocab_size"]
    lowest = float("inf")
    for rec in tiny["results"]:
        n, steps = rec["prompt_tokens"], rec["decode_steps"]
        ops = sum(2 * matmul + layers * heads * 4 * d * (n + k) for k in range(1, steps + 1)) / steps
        lowest = min(lowest, ops / rec["decode"]["bytes_per_step"])
    assert att.tiny_lm_decode_intensity().value == pytest.approx(lowest)
    assert str(att.tiny_lm_decode_intensity()) == "0.5"


def test_gpu_benchmark_goals():
    # the goals and the window case chapter2/host/bench/gpu.py's docstring states: Triton >= 1.0x SDPA's default,
    # decode >= 0.8x copy bandwidth, window speedup >= 1.8x at N = 16k, w = 4k
    assert att.goal_attention_vs_sdpa().value == 1.0 and str(att.goal_attention_vs_sdpa()) == "1×"
    assert att.goal_decode_vs_copy().value == 0.8 and str(att.goal_decode_vs_copy()) == "0.8×"
    assert att.goal_window_speedup().value == 1.8 and str(att.goal_window_speedup()) == "1.8×"
    assert (att.window_bench_seq_len().value, att.window_bench_window().value) == (16384, 4096)
    n, w = 16384, 4096
    assert att.window_bench_ideal_speedup().value == pytest.approx((n * (n + 1) / 2) / (n * w - w * (w - 1) / 2))
    assert str(att.window_bench_ideal_speedup()) == "2.29×"


# ------------------------------------------------------------------ map and cards


def _cards() -> dict:
    return {c.id: " ".join(re.sub(r"\{\{\s*fact:\s*([\w.]+)\s*\}\}", lambda m: pages.text(m.group(1)), c.answer).split())
            for c in att.CARDS}


def test_cards_quote_the_page_numbers():
    cards = _cards()
    assert "In the prefill-shaped example N = 4,096, d = 128 the intensity rises from 62.4 to 2,060 operations per byte" \
        in cards["att-flash"]
    assert "never reach GPU memory" in cards["att-flash"]
    assert "windowed attention scores 44 % of the query-key pairs of full causal attention" in cards["att-window"]
    assert "causal attention scores" not in cards["att-window"]  # it is the window that scores 44 %


def _page_text() -> str:
    """The page with every fact replaced by its text, whitespace collapsed."""
    page = (ROOT / "docs" / att.PAGE).read_text()
    return " ".join(re.sub(r"\{\{\s*fact:\s*([\w.]+)\s*\}\}", lambda m: pages.text(m.group(1)), page).split())


def test_flashattention_is_compute_bound_only_in_prefill():
    """'Memory bound to compute bound' holds for prefill; decode attention stays near the GQA group in ops:byte."""
    text = _page_text()
    for m in re.finditer(r"memory bound to compute bound", text):
        assert "prefill" in text[max(0, m.start() - 60):m.start()], text[m.start() - 200:m.end()]
    assert "In BF16 that is about \\(G\\) operations per byte whatever the context or the batch" in text
    assert "decode attention runs at 4 operations per byte, far below the H100's 295" in text
    assert "What flash-decoding changes is parallelism, not intensity" in text
    assert "stays at \\(G\\)" in text


def test_review_pass_statements():
    """Statements corrected in review, each against its source or computation."""
    text = _page_text()
    # the H100 verdicts are about the prefill-shaped worked example
    at = text.index("standard attention is memory bound and FlashAttention is compute bound")
    assert "In this prefill-shaped example" in text[at - 120:at]
    # FlashAttention keeps the scores and weights out of HBM (they do exist, tile by tile, in on-chip SRAM)
    assert "never writes scores or weights to HBM" in text and "computes each tile's scores in SRAM" in text
    # it reduces bytes, not the number of scored pairs
    assert "cheaper per pair" not in text and "FlashAttention cuts the bytes attention moves" in text
    # Mamba's B-bar: the page's Δ·B is the reference scan's simplification, as chapter2.ssm computes it
    import numpy as np

    from chapter2 import ssm
    delta, A, B = np.array([0.5, 2.0]), -np.ones((2, 3)), np.array([1.0, 2.0, 3.0])
    assert np.allclose(ssm.discretize(delta, A, B)[1], delta[:, None] * B[None, :])
    assert "simplified zero-order hold" in text


def test_measured_intensities_match_the_page():
    """Naive attention in float32 levels off just below d/4 (d/8 causal: it still stores all N² scores); the
    tiled version grows as N/4 (about N/8 causal). Computed from the committed CPU run's shapes and FLOPs."""
    cpu = BENCH["cpu-attention-cpu-x86-64-2-logical-cores"]
    for rec in cpu["results"]:
        b, h, n, d = (rec["shape"][k] for k in "BHNd")
        ops = rec["flops"]
        naive = ops / (b * h * (4 * n * n + 4 * n * d) * 4)
        tiled = ops / (b * h * 4 * n * d * 4)
        if rec["causal"]:
            assert 0.8 * d / 8 < naive < d / 8 and tiled == pytest.approx((n + 1) / 8)
        else:
            assert 0.8 * d / 4 < naive < d / 4 and tiled == pytest.approx(n / 4)
    text = _page_text()
    assert "levels off just below \\(d/4\\) in float32 (\\(d/8\\) when causal" in text
    assert "grows as \\(N/4\\) (\\(N/8\\) when causal)" in text


def test_decode_share_is_given_in_bytes_as_well_as_flops():
    text = _page_text()
    assert "Attention is 13 % of the FLOPs of a Llama 3.1 8B decode step at a 4,096-token context" in text
    assert "the KV cache is only 3.5 % of the step's bytes at 4,096 tokens" in text
    assert "with 64 sequences of 4,096 tokens the KV cache is 70 % of the bytes" in text
    assert "at long context, attention is most of the work" not in text  # the old conclusion from FLOPs alone
    assert "reading the KV cache takes half or more of a decode step's time" in text
    assert min(att.llama_8b_decode_attention_byte_share_at_max_context().value,
               bn.llama_8b_decode_attention_byte_share_batched().value) >= 0.5


def test_the_flash_decoding_paragraph_matches_the_kernel():
    """What the page says about host/kernels/flash_decode.py is what its source does."""
    source = (ROOT / "src" / "chapter2" / "host" / "kernels" / "flash_decode.py").read_text()
    assert "grid = (batch * h_kv, num_splits)" in source  # (sequence x KV head) x splits
    assert "_decode_reduce[(batch * h_q,)]" in source  # the merge: one program per (sequence, query head)
    assert "multi_processor_count" in source  # splits chosen from the SM count
    assert "m_part = torch.empty((batch, h_q, num_splits), dtype=torch.float32" in source
    text = _page_text()
    assert "runs a grid of (sequence × KV head) × splits" in text
    assert "one program per (sequence, query head), merges the partials" in text
    # the running maximum and sum in the chapter's notation (mu, ell: m counts tokens), the kernel's m_part, l_part
    assert "writes a partial \\((\\mu, \\ell, \\mathrm{acc})\\) in float32" in text


def test_leaves_state_the_outline_claims_exactly():
    leaves = {leaf.anchor: leaf.text for leaf in att.LEAVES}
    assert "no N×N matrix in GPU memory" in leaves["flashattention"]  # tiles of S do live in (on-chip) memory
    assert "exact result" in leaves["flashattention"] and "SRAM" in leaves["flashattention"]
    assert "parallelism, not intensity" in leaves["decode-attention-stays-memory-bound"]
    assert leaves["sliding-window-attention"] == "Sliding window: N·w instead of N², and a KV cache capped at w tokens"
    assert "fixed-size state" in leaves["state-space-models-and-hybrids"]
    assert "still cost N² in prefill" in leaves["state-space-models-and-hybrids"]  # their KV cache grows as N
    page = (ROOT / "docs" / att.PAGE).read_text()
    assert "### Decode attention stays memory bound" in page  # the anchor the new leaf and card point to


def test_decode_card():
    card = _cards()["att-decode"]
    assert "Llama 3.1 8B in BF16 that is 4 (G = 4), whatever the batch, far below the H100's 295" in card
    assert "it does not change the intensity" in card


def test_hybrids_are_not_said_to_scale_linearly():
    """A hybrid's attention layers still grow as N²: the map and the card must not call hybrids linear."""
    leaf = next(leaf for leaf in att.LEAVES if leaf.anchor == "state-space-models-and-hybrids")
    assert "linear" in leaf.text and "N²" in leaf.text
    assert not re.search(r"hybrids? (scale|grow)s? linearly", leaf.text, re.I)
    assert "prefill work still grows as `N²` and their KV cache as `N`" in _cards()["att-ssm"]
    refs = [r for item in (*att.LEAVES, *att.CARDS) for r in fact_refs(getattr(item, "text", "") or item.answer)]
    page = fact_refs((ROOT / "docs" / att.PAGE).read_text())
    assert refs and set(refs) <= set(page)


# ------------------------------------------------------------------ the memory hierarchy (sourced in gpus.json)


def test_h100_on_chip_memory_in_the_text():
    # H100 SXM5: 132 SMs and a 50 MB L2 (H100 architecture whitepaper, comparison table); up to 228 KB of shared
    # memory per SM (Hopper tuning guide); NVIDIA's KB and MB here are binary (228 KB = 233,472 bytes)
    assert att.h100_sms().value == 132 and str(att.h100_sms()) == "132"
    assert str(att.h100_shared_memory_per_sm()) == "228 KiB"
    assert att.h100_shared_memory_total().value == pytest.approx(132 * 228 / 1024)  # MiB
    assert str(att.h100_shared_memory_total()) == "29.4 MiB"
    assert str(att.h100_l2()) == "50 MiB"
    assert att.h100_memory_gb().value == 80 and str(att.h100_memory_gb()) == "80"
    # 80e9 bytes of HBM over 132 x 228 x 1024 bytes of shared memory: 2,596, shown to two digits
    assert 80e9 / (132 * 228 * 1024) == pytest.approx(2596, abs=1)
    assert att.h100_hbm_over_shared_memory().value == 2600 and str(att.h100_hbm_over_shared_memory()) == "2,600"


def test_h100_memory_picture_numbers():
    # Hopper tuning guide: 64K 32-bit registers per SM = 256 KiB; 132 of them: 33 MiB. FlashAttention-3 (Shah et
    # al. 2024, arXiv:2407.08608), Table 1: SMEM 31 TB/s per GPU, L2 12 TB/s; HBM 3.35 TB/s (nvidia.com H100 page)
    assert str(att.h100_registers_per_sm()) == "256 KiB" and 65536 * 4 == 256 * 1024
    assert att.h100_registers_total().value == pytest.approx(132 * 256 / 1024) and str(att.h100_registers_total()) == "33 MiB"
    assert str(att.h100_sram_bandwidth_tb_s()) == "31" and str(att.h100_l2_bandwidth_tb_s()) == "12"
    assert att.h100_sram_over_hbm().value == pytest.approx(31 / 3.35) and str(att.h100_sram_over_hbm()) == "9×"


def test_the_online_softmax_tiny_example_by_hand():
    """Scores 2, 1 | 3, 0 in two tiles. After tile 1: maximum 2, sum e^0 + e^-1 = 1.3679. Tile 2 raises the maximum
    to 3: the old sum becomes 1.3679 x e^-1 = 0.5032, plus e^0 + e^-3 = 1.0498, 1.5530; all four at once:
    e^-1 + e^-2 + e^0 + e^-3 = 0.3679 + 0.1353 + 1 + 0.0498 = 1.5530, the same."""
    e = math.e
    assert 1 + 1 / e == pytest.approx(1.3679, abs=1e-4) and (1 + 1 / e) / e == pytest.approx(0.5032, abs=1e-4)
    assert 1 / e + e**-2 + 1 + e**-3 == pytest.approx(1.5530, abs=1e-4)
    rows = [[str(c) for c in r] for r in att.online_example_table().rows]
    assert rows == [
        ["tile 1", "2, 1", "2", "e⁰ + e⁻¹ = 1.37"],
        ["tile 2", "3, 0", "3 (it rose)", "1.37 × e⁻¹ + e⁰ + e⁻³ = 0.503 + 1.05 = 1.55"],
        ["all four at once", "2, 1, 3, 0", "3", "e⁻¹ + e⁻² + e⁰ + e⁻³ = 1.55"],
    ]
    assert att.online_example_sum().value == pytest.approx(1 / e + e**-2 + 1 + e**-3)
    assert str(att.online_example_sum()) == "1.55"


def test_tiles_fit_one_sm_and_the_scores_do_not_fit_all_of_them():
    tile = 128 * 128 * 2  # 128 rows of head dimension 128 in FP16
    assert att.flash_tile_bytes().value == tile / 1024 == 32 and str(att.flash_tile_bytes()) == "32 KiB"
    assert str(att.flash_three_tiles_bytes()) == "96 KiB" and 3 * tile <= 228 * 1024
    scores = N * N * 2
    assert scores > 132 * 228 * 1024  # more than all 132 SMs' shared memory together
    assert scores == att.standard_scores_bytes().value and str(att.standard_scores_bytes()) == "33.6 MB"


def test_sram_bandwidth_is_the_flashattention_papers_estimate():
    # Dao et al. 2022 (arXiv:2205.14135), section 2.1: the A100's on-chip SRAM "with bandwidth estimated around
    # 19TB/s"; A100 80GB SXM HBM: 2,039 GB/s (NVIDIA A100 datasheet)
    assert att.a100_sram_bandwidth_tb_s().value == 19 and str(att.a100_sram_bandwidth_tb_s()) == "19"
    assert str(att.a100_hbm_bandwidth_tb_s()) == "2.039"
    assert att.a100_sram_over_hbm().value == pytest.approx(19 / 2.039)
    assert str(att.a100_sram_over_hbm()) == "9×"  # one digit: the 19 TB/s is "around"


def test_memory_hierarchy_table_rows():
    table = att.memory_hierarchy_table()
    rows = {str(r[0]): [str(c) for c in r] for r in table.rows}
    assert table.header[:5] == ("GPU", "SMs", "Shared memory per SM", "All SMs", "L2 cache")
    a100, h100 = rows["A100-SXM"], rows["H100-SXM"]
    assert a100[1:7] == ["108", "164 KiB", f"{108 * 164 / 1024:.1f} MiB", "40 MiB", "≈ 19 TB/s", "80 GB, 2.039 TB/s"]
    assert h100[1:7] == ["132", "228 KiB", "29.4 MiB", "50 MiB", "≈ 31 TB/s", "80 GB, 3.35 TB/s"]  # FlashAttention-3, Table 1
    # ROCm GPU specifications: MI300X, 304 CUs, 64 KiB LDS, L2 32 MiB (4 per XCD), L3 (Infinity Cache) 256 MiB
    assert rows["MI300X"][1:5] == ["304 CUs", "64 KiB (LDS)", "19 MiB", "32 MiB (+ 256 MiB L3)"]
    # the B200's datasheet gives no on-chip figure: nothing is filled in
    assert rows["B200"][1:5] == ["–"] * 4
    # MI355X: 256 CUs of 160 KiB LDS (ROCm GPU specifications): 40 MiB in all
    assert rows["MI355X"][1:5] == ["256 CUs", "160 KiB (LDS)", "40 MiB", "32 MiB (+ 256 MiB L3)"]
    assert len(table.rows) == len(GPUS) and len(table.header) == 7
    sources = str(att.memory_hierarchy_sources())
    assert "A100-SXM [whitepaper](https://images.nvidia.com/" in sources
    assert "[FlashAttention paper](https://arxiv.org/abs/2205.14135)" in sources
    assert "H100-SXM [whitepaper]" in sources and "[FlashAttention-3 paper](https://arxiv.org/abs/2407.08608)" in sources
    assert "B200" not in sources  # no on-chip figure, no source
    assert "MI300X [ROCm specs](https://rocm.docs.amd.com/en/latest/reference/gpu-specs.html)" in sources
    assert "H20 [zangshuxian.com](https://zangshuxian.com/" in sources  # a third-party page is named by its site


def test_vocabulary_comes_before_the_first_kernel_words():
    """Block/tile, program, grid, SM, HBM and SRAM are defined (a list of terms) before FlashAttention uses them."""
    page = (ROOT / "docs" / att.PAGE).read_text()
    defs = page.index("## The GPU's memory hierarchy")
    flash = page.index("## FlashAttention")
    block = page[defs:flash]
    for term in ("- **HBM**:", "- **SM**:", "- **SRAM (shared memory) and L2**:", "- **Block, tile**:",
                 "- **Program, grid**:"):
        assert term in block, term
    assert "thread block" in block  # program = CUDA thread block
    for word in ("program", "grid", "SRAM", "tile"):  # first used inside the definitions, not before
        assert defs < page.index(word) < flash, word
    assert "{{ fact: attention.memory_hierarchy_table }}" in block


def test_memory_card_quotes_the_sourced_numbers():
    card = _cards()["att-memory"]
    assert "up to 228 KiB per SM on an H100, 29.4 MiB over all its SMs, against 80 GB of HBM" in card
    assert "about 19 TB/s, some 9× its HBM bandwidth" in card


# --------------------------------------------------------------------------- the third roof: exponentials

H100_EXP = 132 * 16 * 1.83e9  # CUDA guide: 16 exp2 per clock per SM (9.0) x 132 SMs x 1.83 GHz; FA3 says 3.9 T/s
B200_EXP = 5e12  # NVIDIA: 5 TeraExponentials/s for Blackwell


def test_the_running_texts_two_shares_are_worked_by_hand():
    # per score at d = 128: the matmuls do 4 x 128 = 512 FLOPs, the softmax one exponential
    assert round(H100_EXP / 1e12, 1) == 3.9  # the FlashAttention-3 paper's figure
    assert att.h100_exp_rate().value == pytest.approx(H100_EXP / 1e12)
    assert att.h100_exp_share().value == pytest.approx((1 / H100_EXP) / (512 / 989.4e12))
    assert str(att.h100_exp_share()) == "50 %"
    assert att.b200_exp_share().value == pytest.approx((1 / B200_EXP) / (512 / 2.25e15))
    assert str(att.b200_exp_share()) == "88 %"
    assert att.roofs_head_dim().value == 128
    assert att.roofs_seq_len().value == 16384  # FA3's benchmark length: 4Nd x 2 bytes, far under the FLOPs' time


def test_crossover_head_dims_are_peak_over_four_times_the_rate():
    assert att.h100_exp_crossover_fp16().value == pytest.approx(989.4e12 / (4 * H100_EXP))
    assert str(att.h100_exp_crossover_fp16()) == "64"
    assert str(att.h100_exp_crossover_fp8()) == "128"  # FP8: 1,978.9 TFLOP/s, the same exponentials
    assert att.b200_exp_crossover_fp16().value == pytest.approx(2.25e15 / (4 * B200_EXP))


def test_exp_roof_table_rows_by_gpu_and_head_dim():
    table = att.exp_roof_table()
    rows = {str(r[0]): [str(c) for c in r] for r in table.rows}
    # d = 64 in FP16 on an H100: 256 FLOPs per score at 989.4 TFLOP/s take as long as one exponential: both limit
    assert rows["H100 SXM"][1:] == ["3.86", "SMs × clock × 16", "64", "128", "both / matmuls / matmuls"]
    assert rows["H200 SXM"][2] == "FP16 peak ÷ 4,096 × 16"
    # B200: d* = 2.25e15 / (4 x 5e12) = 112.5, so at d = 64 the exponentials limit
    assert rows["B200"][2:] == ["NVIDIA's figure", "112", "225", "exponentials / matmuls / matmuls"]
    assert rows["A100 SXM"][3:5] == ["32", "no FP8"]  # 312e12 / (4 x 2.436e12) = 32
    assert "NVIDIA L40S 48GB" in str(att.no_exp_rate_gpus()) and "H100" not in str(att.no_exp_rate_gpus())


def test_flashattention3_rows_stay_under_their_three_roof_bound():
    # FlashAttention-3 (arXiv:2407.08608) Figure 5, FP16 forward at 16k tokens, no causal mask: 497, 648, 756
    # TFLOP/s at d = 64, 128, 256; the abstract's 740 (FP16) and about 1,200 (FP8). Bounds worked by hand: at d >= 64
    # in FP16 the tensor roof (989.4) is never below the exponential roof (4d x 3.865e12), so the bound is 989.4;
    # in FP8 at d = 256 it is the FP8 peak, 1,978.9.
    bound = {("fp16", 64): min(989.4e12, 256 * H100_EXP), ("fp16", 128): 989.4e12, ("fp16", 256): 989.4e12}
    bound[("fp8", 256)] = min(1978.9e12, 1024 * H100_EXP)
    rows = att.fa3_rows_table().rows
    assert [(r[1].value, r[2].value) for r in rows] == [(64, 497), (128, 648), (256, 756), (256, 740), (256, 1200)]
    for label, dtype, d, measured, _ in att.FA3_ROWS:
        assert measured <= bound[(dtype, d)] / 1e12, label
    for row, (_, dtype, d, measured, _) in zip(rows, att.FA3_ROWS, strict=True):
        assert row[3].value == pytest.approx(bound[(dtype, d)] / 1e12)
        assert row[4].value == pytest.approx(measured / (bound[(dtype, d)] / 1e12))
        assert "arxiv.org/abs/2407.08608" in str(row[0])


def test_flashattention3_sits_near_the_no_overlap_speed():
    # no overlap: time = 4N^2 d / peak + N^2 / rate + 8Nd / bandwidth (FP16 bytes: Q, K, V read, O written)
    n = 16384

    def serial(d):
        seconds = 4 * n * n * d / 989.4e12 + n * n / H100_EXP + 2 * 4 * n * d / 3.35e12
        return 4 * n * n * d / seconds / 1e12

    gaps = [abs(measured / serial(d) - 1) for measured, d in ((497, 64), (648, 128), (756, 256))]
    assert att.fa3_serial_gap().value == pytest.approx(max(gaps))
    assert max(gaps) < 0.03
    assert att.fa3_fp8_d64_bound().value == pytest.approx(256 * H100_EXP / 1e12)  # 989, below FA3's 1,200
