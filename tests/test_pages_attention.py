"""Section 2.5's facts, against numbers worked out here from the configs, the papers and the result files.

Nothing here calls the package function a fact calls: the expected values are
counted by hand (closed forms, loops over blocks), read from the shipped
config and result JSON, or taken from the published source cited next to them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chapter2 import pages
from chapter2.pages import attention as att
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
    assert att.llama_8b_decode_context().value == 4096
    assert att.llama_8b_decode_attention_share().value == pytest.approx(_llama_attention_share(4096))
    assert att.llama_8b_max_context().value == LLAMA["max_position_embeddings"] == 131072
    assert att.llama_8b_decode_attention_share_at_max_context().value == pytest.approx(_llama_attention_share(131072))
    assert str(att.llama_8b_decode_attention_share()) == "13 %"
    assert str(att.llama_8b_decode_attention_share_at_max_context()) == "82 %"
    assert str(att.llama_8b_max_context()) == "131,072"


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
    assert att.standard_attention_intensity().value == pytest.approx(ops / nbytes)
    assert att.standard_scores_bytes().value == N * N * 2
    assert str(att.standard_attention_bytes()) == "138 MB"
    assert str(att.standard_attention_ops()) == "8.64 GFLOP"
    assert str(att.standard_attention_intensity()) == "62.4"
    assert str(att.standard_scores_bytes()) == "33.6 MB"


def test_flash_attention_moves_only_q_k_v_and_o():
    nbytes = 4 * N * D * 2
    ops = 4 * N * N * D + 3 * N * N
    assert att.flash_attention_bytes().value == nbytes
    assert att.flash_attention_intensity().value == pytest.approx(ops / nbytes) == N / 2 + 3 * N / (8 * D)
    assert att.flash_traffic_reduction().value == pytest.approx((8 * N * N + 8 * N * D) / (8 * N * D)) == N / D + 1
    assert str(att.flash_attention_bytes()) == "4.19 MB"
    assert str(att.flash_attention_intensity()) == "2,060"
    assert str(att.flash_traffic_reduction()) == "33"


def test_flash_attention_steps_table():
    table = att.flash_attention_steps_table()
    assert table.header == ("Step", "Reads", "Writes", "Elements moved", "Bytes", "Operations")
    *steps, total = table.rows
    assert [str(r[0]) for r in steps] == ["read Q, K, V", "S = Q K^T (on chip)", "P = softmax(S) (on chip)",
                                          "O = P V (on chip)", "write O"]
    assert [r[4].value for r in steps] == [3 * N * D * 2, 0, 0, 0, N * D * 2]
    assert [str(c) for c in total] == ["**Total**", "", "", "", f"**{8 * N * D:,}**",
                                       f"**{4 * N * N * D + 3 * N * N:,}**"]
    text = str(table)
    assert "| read Q, K, V | Q, K, V |  | 3Nd = 1,572,864 | 3,145,728 | 0 = 0 |" in text
    assert "| S = Q K^T (on chip) |  |  | 0 = 0 | 0 | 2N²d = 4,294,967,296 |" in text
    assert "| P = softmax(S) (on chip) |  |  | 0 = 0 | 0 | 3N² = 50,331,648 |" in text
    assert "| write O |  | O | Nd = 524,288 | 1,048,576 | 0 = 0 |" in text
    assert text.splitlines()[1] == "|---|---|---|---:|---:|---:|"


def test_h100_verdicts():
    # H100 SXM: 989.4 TFLOP/s dense FP16 (Hopper whitepaper) and 3.35 TB/s (NVIDIA H100 datasheet,
    # https://www.nvidia.com/en-us/data-center/h100/)
    ridge = 989.4e12 / 3.35e12
    assert att.h100_ops_per_byte().value == pytest.approx(ridge)
    assert str(att.h100_ops_per_byte()) == "295"
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


def test_window_pair_share():
    assert (att.pair_share_example_seq_len().value, att.pair_share_example_window().value) == (4096, 1024)
    share = causal_pairs(4096, 1024) / causal_pairs(4096)
    assert att.window_pair_share().value == pytest.approx(share) == pytest.approx(0.4375, abs=1e-4)
    assert str(att.window_pair_share()) == "44 %"


def test_window_saving_table():
    w = MISTRAL["sliding_window"]
    table = att.window_saving_table()
    assert table.header == ("Prompt length N", "Full causal scores", "Window scores", "Work ratio")
    assert [r[0].value for r in table.rows] == [4096, 16384, 131072, 1048576]
    for n, full, window, ratio in table.rows:
        n = n.value
        assert full.value == n * (n + 1) // 2
        assert window.value == n * w - w * (w - 1) // 2  # every n here is >= w
        assert ratio.value == pytest.approx(full.value / window.value)
    text = str(table)
    assert "| 4,096 | 8.39 M | 8.39 M | 1× |" in text
    assert "| 131,072 | 8.59 G | 528 M | 16.3× |" in text
    assert "| 1,048,576 | 550 G | 4.29 G | 128× |" in text


def test_window_saving_and_kv_cache_in_the_text():
    w = MISTRAL["sliding_window"]
    assert (att.window_short_prompt().value, att.window_long_prompt().value) == (4096, 131072)
    assert att.window_saving_at_long_prompt().value == pytest.approx(causal_pairs(131072) / causal_pairs(131072, w))
    assert str(att.window_saving_at_long_prompt()) == "16"
    # K and V, 8 KV heads of 128 (hidden / heads), BF16, 32 layers, at most w tokens per layer
    per_token = 2 * MISTRAL["num_key_value_heads"] * (MISTRAL["hidden_size"] // MISTRAL["num_attention_heads"]) * 2 * 32
    assert att.mistral_7b_kv_cache_short().value == per_token * 4096
    assert att.mistral_7b_kv_cache_long().value == per_token * min(131072, w) == att.mistral_7b_kv_cache_short().value
    assert str(att.mistral_7b_kv_cache_long()) == "537 MB"


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
    assert "At N = 4,096, d = 128 the intensity rises from 62.4 to 2,060 operations per byte" in cards["att-flash"]
    assert "windowed attention scores 44 % of the query-key pairs of full causal attention" in cards["att-window"]
    assert "causal attention scores" not in cards["att-window"]  # it is the window that scores 44 %


def test_hybrids_are_not_said_to_scale_linearly():
    """A hybrid's attention layers still grow as N²: the map and the card must not call hybrids linear."""
    leaf = next(leaf for leaf in att.LEAVES if leaf.anchor == "state-space-models-and-hybrids")
    assert "linearly" in leaf.text and "N²" in leaf.text
    assert not re.search(r"hybrids? (scale|grow)s? linearly", leaf.text, re.I)
    assert "still grow as `N²`" in _cards()["att-ssm"]
    refs = [r for item in (*att.LEAVES, *att.CARDS) for r in fact_refs(getattr(item, "text", "") or item.answer)]
    page = fact_refs((ROOT / "docs" / att.PAGE).read_text())
    assert refs and set(refs) <= set(page)
