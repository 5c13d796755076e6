"""Section 2.4's facts, against numbers worked out here from the shipped data files and the formulas.

Nothing here calls `chapter2.hardware`, `chapter2.roofline` or `chapter2.diffusion`: the GPU figures
are read from data/gpus.json, the model sizes from the shipped config.json files, and the costs are
the page's own equations written out by hand.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _diffusion_by_hand import (FLUX_DEV_PARAMS, QWEN_IMAGE_PARAMS, WAN_1_3B_PARAMS, WAN_14B_PARAMS, flux_dev_flops,
                                qwen_image_flops, wan_14b_flops)

from chapter2 import measurements
from chapter2.pages import bottlenecks as bn
from chapter2.pages import llm_architecture as la
from chapter2.pages import llm_inference as li
from chapter2.pages import neural_networks as nn

DATA = Path(__file__).resolve().parents[1] / "src" / "chapter2" / "data"
GPUS = json.loads((DATA / "gpus.json").read_text())["gpus"]
LLAMA = json.loads((DATA / "configs" / "Llama-3.1-8B.json").read_text())
QWEN3 = json.loads((DATA / "configs" / "Qwen3-235B-A22B.json").read_text())


def tflops(key, dtype="fp16"):
    return GPUS[key]["tflops"][dtype]["value"]


def tb_s(key):
    return GPUS[key]["bandwidth_tb_s"]["value"]


def ratio(key, dtype="fp16"):
    """Dense TFLOP/s over TB/s: the ops:byte ratio (the 1e12s cancel)."""
    return tflops(key, dtype) / tb_s(key)


# ------------------------------------------------------------------ 2.4.1 ops:byte


def test_the_tiny_example_counts_one_fp16_weight():
    """A weight is 2 bytes in FP16; decode (one sequence) does one multiply and one add with it, 2 operations,
    so 2 / 2 = 1 operation per byte; a 1,024-token prefill does that for every token, 2 x 1,024 = 2,048
    operations, 2,048 / 2 = 1,024 per byte."""
    assert str(bn.fp16_bytes()) == "2"
    assert str(bn.tiny_decode_ops()) == "2" and bn.tiny_decode_intensity().value == 1.0
    assert str(bn.tiny_decode_intensity()) == "1"
    assert str(bn.tiny_prompt_tokens()) == "1,024" and str(bn.tiny_prefill_ops()) == "2,048"
    assert bn.tiny_prefill_intensity().value == 1024 and str(bn.tiny_prefill_intensity()) == "1,024"


def test_the_tiny_prompt_is_the_roofline_charts_default_context():
    """The page points at the chart's prefill point: its context slider starts at 2**10 tokens."""
    from chapter2 import calculators

    context = next(f for f in calculators.get("roofline_play").fields if f.name == "context")
    assert 2 ** context.default == 1024


def test_h100_figures_are_the_datasheets():
    # 989.4 dense FP16: NVIDIA H100 architecture whitepaper; 3.35 TB/s: nvidia.com/en-us/data-center/h100
    assert bn.h100_fp16_tflops().value == pytest.approx(989.4) and str(bn.h100_fp16_tflops()) == "989.4"
    assert bn.h100_bandwidth_tb_s().value == pytest.approx(3.35) and str(bn.h100_bandwidth_tb_s()) == "3.35"


def test_h100_ops_per_byte_is_the_chapters_295():
    assert bn.h100_ops_per_byte().value == pytest.approx(989.4e12 / 3.35e12, rel=1e-12)
    assert str(bn.h100_ops_per_byte()) == "295"


def test_sparse_headline_is_twice_the_dense_peak():
    # nvidia.com/en-us/data-center/h100 prints 1,979 TFLOPS of FP16 "with sparsity"
    assert bn.h100_fp16_sparse_tflops().value == pytest.approx(1979) and str(bn.h100_fp16_sparse_tflops()) == "1,979"
    assert bn.h100_sparse_over_dense().value == pytest.approx(1979 / 989.4)
    assert str(bn.h100_sparse_over_dense()) == "2×"


def test_h200_adds_bandwidth_and_lowers_the_ratio():
    assert bn.h200_bandwidth_tb_s().value == pytest.approx(4.8) and str(bn.h200_bandwidth_tb_s()) == "4.8"
    assert bn.h200_ops_per_byte().value == pytest.approx(989.4 / 4.8) and str(bn.h200_ops_per_byte()) == "206"
    assert bn.h200_ops_per_byte().value < bn.h100_ops_per_byte().value


def test_fp8_doubles_the_h100_ratio():
    assert bn.h100_fp8_ops_per_byte().value == pytest.approx(1978.9 / 3.35) and str(bn.h100_fp8_ops_per_byte()) == "591"
    assert bn.h100_fp8_over_fp16_ops_per_byte().value == pytest.approx(1978.9 / 989.4)
    assert str(bn.h100_fp8_over_fp16_ops_per_byte()) == "2"


def test_gpu_ops_per_byte_table_has_one_row_per_gpu():
    table = bn.gpu_ops_per_byte_table()
    assert table.header == ("GPU", "Memory (GB)", "Bandwidth (TB/s)", "Dense FP16 TFLOP/s", "FP16 ops:byte",
                            "Dense FP8 TFLOP/s", "FP8 ops:byte", "Dense FP4 TFLOP/s", "FP4 ops:byte", "Sources")
    for key, (name, memory, bandwidth, fp16, fp16_ratio, fp8, fp8_ratio, fp4, fp4_ratio, sources) in zip(
            GPUS, table.rows, strict=True):
        assert name.value == GPUS[key]["name"]
        assert memory.value == pytest.approx(GPUS[key]["memory_gb"]["value"])
        assert bandwidth.value == pytest.approx(tb_s(key))
        assert fp16.value == pytest.approx(tflops(key)) and fp16_ratio.value == pytest.approx(ratio(key))
        for dtype, peak, per_byte in (("fp8", fp8, fp8_ratio), ("fp4", fp4, fp4_ratio)):
            if dtype in GPUS[key]["tflops"]:
                assert peak.value == pytest.approx(tflops(key, dtype))
                assert per_byte.value == pytest.approx(ratio(key, dtype))
            else:
                assert str(peak) == str(per_byte) == "n/a"
        # every document a used figure was read from is linked once (sparse headlines are not used)
        used = {v["source"] for k, v in GPUS[key].items() if k in ("memory_gb", "bandwidth_tb_s")}
        used |= {v["source"] for v in GPUS[key]["tflops"].values()}
        assert {u for u in used if f"]({u})" in str(sources)} == used
        assert str(sources).count("](") == len(used)
    # the assertions of the former test_hardware.test_ops_per_byte_table_has_one_row_per_gpu
    lines = str(table).splitlines()
    assert len(lines) == 2 + len(GPUS)
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    h100 = next(line for line in lines if "H100" in line)
    assert "| 295 |" in h100 and "| 989.4 |" in h100
    a100 = next(line for line in lines if "A100" in line)
    assert "| n/a | n/a | [datasheet (PDF)](" in a100
    assert "[product page](https://www.nvidia.com/en-us/data-center/h100/)" in h100 and "[whitepaper](" in h100
    # AMD's CDNA 3 white paper is named as one, and AMD's ROCm blog as a blog, not as a datasheet or a product page
    mi325 = next(line for line in lines if "MI325X" in line)
    assert "[whitepaper](https://www.amd.com/" in mi325 and "datasheet" not in mi325
    mi355 = next(line for line in lines if "MI355X" in line)
    assert "[AMD blog](https://rocm.blogs.amd.com/" in mi355 and "product page](https://rocm" not in mi355


def test_b200_takes_bandwidth_and_flops_from_one_document():
    # NVIDIA Blackwell datasheet, HGX B200 column (per GPU): 180 GB | 7.7 TB/s; FP16/BF16 4.5 PFLOPS with
    # sparsity, so 2,250 dense. The DGX B200 page: 64 TB/s for 8 GPUs, 8 TB/s each (kept apart, not used).
    b200 = GPUS["B200"]
    assert {b200[k]["source"] for k in ("memory_gb", "bandwidth_tb_s")} == {b200["tflops"]["fp16"]["source"]}
    assert bn.b200_bandwidth_tb_s().value == pytest.approx(7.7) and str(bn.b200_bandwidth_tb_s()) == "7.7"
    assert bn.b200_dgx_bandwidth_tb_s().value == pytest.approx(64 / 8) and str(bn.b200_dgx_bandwidth_tb_s()) == "8"
    assert bn.b200_ops_per_byte().value == pytest.approx(2250 / 7.7) and str(bn.b200_ops_per_byte()) == "292"
    assert bn.b200_dgx_ops_per_byte().value == pytest.approx(2250 / 8) and str(bn.b200_dgx_ops_per_byte()) == "281"


# ------------------------------------------------------------------ 2.4.2 LLM bottlenecks

H, V, L = LLAMA["hidden_size"], LLAMA["vocab_size"], LLAMA["num_hidden_layers"]
NQ, NKV = LLAMA["num_attention_heads"], LLAMA["num_key_value_heads"]
D = H // NQ
ATTN = H * NQ * D + 2 * H * NKV * D + NQ * D * H          # q, k, v, o projections
MLP = 3 * H * LLAMA["intermediate_size"]                   # gate, up, down
TOTAL = 2 * V * H + H + L * (ATTN + MLP + 2 * H)           # untied embedding + LM head, norms
MATMUL = V * H + L * (ATTN + MLP)                          # what one token multiplies by (LM head included)
STREAMED = TOTAL - V * H                                   # the embedding is a row lookup, not read in full
KV_PER_TOKEN = 2 * L * NKV * D * 2                         # K and V, every layer, FP16
ACT_PER_TOKEN = 2 * L * H * 2                              # every block's input and output hidden state, FP16
LOGITS = V * 2                                             # one position's logits, FP16
H100_PEAK, H100_BW = 989.4e12, 3.35e12


def llama_flops_per_token(context):
    """2 per weight multiplied, plus q·k and p·v over `context` keys in every layer (4·heads·d per key)."""
    return 2 * MATMUL + 4 * L * NQ * D * context


def llama_phase(flops, nbytes):
    return flops, nbytes, flops / nbytes, max(flops / H100_PEAK, nbytes / H100_BW)


def llama_prefill(prompt=4096, every_position=False):
    """Causal: token i sees i keys. The LM head runs on the last position only, unless every position is scored.
    Bytes: weights once, the prompt's K and V written, every block's hidden states and the logits."""
    positions = prompt if every_position else 1
    flops = sum(llama_flops_per_token(c) for c in range(1, prompt + 1)) - (prompt - positions) * 2 * V * H
    return llama_phase(flops, 2 * STREAMED + prompt * KV_PER_TOKEN + prompt * ACT_PER_TOKEN + positions * LOGITS)


def llama_decode(context=4096, batch=1):
    nbytes = 2 * STREAMED + batch * (context * KV_PER_TOKEN + ACT_PER_TOKEN + LOGITS)
    return llama_phase(batch * llama_flops_per_token(context), nbytes)


def test_fp16_is_two_bytes_and_a_matvec_does_about_one_op_per_byte():
    assert bn.fp16_bytes().value == 2 and str(bn.fp16_bytes()) == "2"
    # section 2.1's q_proj (H x H) for one token, the page's "about 1", named there
    assert nn.q_proj_decode_intensity().value == pytest.approx(2 * H * H / ((H + H * H + H) * 2))
    assert str(nn.q_proj_decode_intensity()) == "1"


def test_llama_parameters_by_hand_are_the_published_8b():
    assert TOTAL == 8_030_261_248  # Meta: "8B"; the safetensors index of Llama-3.1-8B sums to 8,030,261,248


def test_weights_held_and_weights_read_are_two_stated_numbers():
    # One convention per quantity: memory holds every parameter (16.1 GB); a pass reads all but the input embedding
    # table (vocab x hidden), whose rows it only looks up. Both are section 2.2's facts, named here with its rounding.
    held, read = li.llama_8b_weights_bf16(), li.llama_8b_weights_read_bf16()
    assert held.value == 2 * TOTAL and str(held) == "16.1 GB"
    assert read.value == 2 * STREAMED and str(read) == "15 GB"
    assert bn.llama_8b_embedding_bytes().value == 2 * V * H and str(bn.llama_8b_embedding_bytes()) == "1.05 GB"
    assert 2 * TOTAL - 2 * STREAMED == 2 * V * H


def test_phase_table_against_the_equations():
    table = bn.llama_8b_phase_table()
    assert [str(r[0]) for r in table.rows] == ["Prefill (TTFT)", "Decode, batch 1 (TPOT)",
                                               "Decode, batch 64"]
    expected = [llama_prefill(), llama_decode(), llama_decode(batch=64)]
    ridge = 989.4 / 3.35
    for row, (flops, nbytes, intensity, time) in zip(table.rows, expected, strict=True):
        assert row[1].value == pytest.approx(flops)
        assert row[2].value == pytest.approx(nbytes)
        assert row[3].value == pytest.approx(intensity)
        assert row[4].value == ("memory" if intensity < ridge else "compute")
        assert row[5].value == pytest.approx(time * 1e3)
    text = str(table)
    assert "| Prefill (TTFT) | 61.6 TFLOP | 17.7 GB | 3,480 | compute | 62.2 ms |" in text
    assert "| Decode, batch 1 (TPOT) | 17.2 GFLOP | 15.5 GB | 1.1 | memory | 4.64 ms |" in text
    assert "| Decode, batch 64 | 1.1 TFLOP | 49.4 GB | 22.2 | memory | 14.8 ms |" in text
    assert bn.decode_context().value == 4096 and bn.big_batch().value == 64


def test_prefill_is_compute_bound_and_decode_memory_bound():
    assert bn.llama_8b_prefill_intensity().value == pytest.approx(llama_prefill()[2])
    assert str(bn.llama_8b_prefill_intensity()) == "3,480"
    assert bn.llama_8b_decode_intensity().value == pytest.approx(llama_decode()[2])
    assert str(bn.llama_8b_decode_intensity()) == "1.1"


def test_one_matmul_and_a_whole_pass_count_different_bytes():
    # Section 2.1: q_proj (4,096 x 4,096) over 4,096 tokens, input + weight + output: 2·m³ / (3·m²·2) = m / 3.
    m = 4096
    assert H == NQ * D == m
    assert nn.q_proj_prefill_intensity().value == pytest.approx(m / 3) and str(nn.q_proj_prefill_intensity()) == "1,365"
    # the whole pass moves only the hidden state between blocks, and the last logits: 12 % of its bytes
    nbytes = llama_prefill()[1]
    share = (4096 * ACT_PER_TOKEN + LOGITS) / nbytes
    assert bn.llama_8b_prefill_activation_share().value == pytest.approx(share)
    assert str(bn.llama_8b_prefill_activation_share()) == "12 %"


def test_logits_at_every_position_cost_the_lm_head_4095_more_times():
    last, every = llama_prefill(), llama_prefill(every_position=True)
    assert bn.llama_8b_all_logits_extra_flops().value == pytest.approx(4095 * 2 * V * H)
    assert str(bn.llama_8b_all_logits_extra_flops()) == "4.3 TFLOP"
    assert bn.llama_8b_all_logits_extra_share().value == pytest.approx(every[0] / last[0] - 1)
    assert str(bn.llama_8b_all_logits_extra_share()) == "7 %"
    assert bn.llama_8b_all_logits_extra_bytes().value == 4095 * LOGITS
    assert str(bn.llama_8b_all_logits_extra_bytes()) == "1.05 GB"


def test_short_prompts_prefill_memory_bound_below_the_crossover():
    ridge = 989.4 / 3.35
    crossover = next(p for p in range(1, 5000) if llama_prefill(p)[2] >= ridge)
    assert bn.llama_8b_prefill_crossover_tokens().value == crossover == 321
    assert llama_prefill(crossover - 1)[2] < ridge <= llama_prefill(crossover)[2]
    assert bn.llama_8b_weight_read_ms().value == pytest.approx(2 * STREAMED / H100_BW * 1e3)
    assert str(bn.llama_8b_weight_read_ms()) == "4.48 ms"
    # below the crossover a prefill takes about the weight-read time whatever its length
    assert llama_prefill(16)[3] == pytest.approx(2 * STREAMED / H100_BW, rel=0.02)


def test_one_sequence_decodes_at_most_215_tokens_per_second():
    flops, nbytes, _, time = llama_decode()
    assert time == nbytes / H100_BW  # memory bound: the bytes set the time
    assert bn.llama_8b_decode_tokens_per_s().value == pytest.approx(1 / time)
    assert str(bn.llama_8b_decode_tokens_per_s()) == "215"
    assert bn.llama_8b_decode_bytes().value == pytest.approx(nbytes) and str(bn.llama_8b_decode_bytes()) == "15.5 GB"
    assert bn.llama_8b_decode_kv_bytes().value == 4096 * KV_PER_TOKEN and str(bn.llama_8b_decode_kv_bytes()) == "537 MB"
    assert bn.llama_8b_decode_activation_bytes().value == ACT_PER_TOKEN + LOGITS
    assert str(bn.llama_8b_decode_activation_bytes()) == "781 kB"


def test_decode_parts_give_attentions_share_of_flops_and_of_bytes():
    c = 4096
    attn_flops = 4 * L * NQ * D * c
    flops = 2 * MATMUL + attn_flops
    one = 2 * STREAMED + c * KV_PER_TOKEN + ACT_PER_TOKEN + LOGITS
    many = 2 * STREAMED + 64 * (c * KV_PER_TOKEN + ACT_PER_TOKEN + LOGITS)
    assert bn.llama_8b_decode_attention_flop_share().value == pytest.approx(attn_flops / flops)
    assert bn.llama_8b_decode_attention_byte_share().value == pytest.approx(c * KV_PER_TOKEN / one)
    assert bn.llama_8b_decode_attention_byte_share_batched().value == pytest.approx(64 * c * KV_PER_TOKEN / many)
    assert [str(f()) for f in (bn.llama_8b_decode_attention_flop_share, bn.llama_8b_decode_attention_byte_share,
                               bn.llama_8b_decode_attention_byte_share_batched)] == ["13 %", "3.5 %", "70 %"]
    w, kv, act, total = bn.llama_8b_decode_parts_table().rows
    assert w[1].value == pytest.approx(2 * MATMUL) and w[3].value == 2 * STREAMED
    assert w[4].value == pytest.approx(2 * STREAMED / one) and w[5].value == pytest.approx(2 * STREAMED / many)
    assert kv[1].value == attn_flops and kv[2].value == pytest.approx(attn_flops / flops)
    assert kv[3].value == c * KV_PER_TOKEN and kv[5].value == pytest.approx(64 * c * KV_PER_TOKEN / many)
    assert str(act[1]) == "not counted" and act[3].value == ACT_PER_TOKEN + LOGITS
    assert total[1].value == pytest.approx(flops) and total[3].value == pytest.approx(one)
    assert "| KV cache (attention) | 2.15 GFLOP | 13 % | 537 MB | 3.5 % | 70 % |" in str(bn.llama_8b_decode_parts_table())


N, d = 4096, 128


def test_attention_steps_table_lists_every_step_and_the_total():
    table = bn.attention_steps_table()
    rows = table.rows
    # the chapter's notation: the softmax output is A, the attention weights (P is parameters)
    assert [str(r[0]) for r in rows] == ["S = QKᵀ", "A = softmax(S)", "O = AV", "**Total**"]
    assert [(str(r[1]), str(r[2])) for r in rows[:3]] == [("Q, K", "S"), ("S", "A"), ("A, V", "O")]
    elements = [2 * N * d + N * N, N * N + N * N, N * N + N * d + N * d]
    ops = [2 * N * N * d, 3 * N * N, 2 * N * N * d]
    for row, e, o, e_formula, o_formula in zip(rows[:3], elements, ops, ["2Nd + N²", "N² + N²", "N² + Nd + Nd"],
                                                ["2N²d", "3N²", "2N²d"], strict=True):
        assert str(row[3]) == f"{e_formula} = {e:,}"
        assert row[4].value == 2 * e
        assert str(row[5]) == f"{o_formula} = {o:,}"
    assert str(rows[-1][4]) == f"**{8 * N * N + 8 * N * d:,}**"
    assert str(rows[-1][5]) == f"**{4 * N * N * d + 3 * N * N:,}**"
    # the assertions of the former test_roofline.test_attention_table_lists_every_step_and_the_total
    lines = str(table).splitlines()
    assert len(lines) == 2 + 3 + 1
    assert "138,412,032" in lines[-1] and "8,640,266,240" in lines[-1]
    assert "2N²d" in lines[2] and "3N²" in lines[3]


def test_attention_intensity_is_the_books_62():
    assert bn.attention_intensity().value == pytest.approx((4 * N * N * d + 3 * N * N) / (8 * N * N + 8 * N * d))
    assert str(bn.attention_intensity()) == "62.4"
    assert bn.flash_attention_intensity().value == pytest.approx((4 * N * N * d + 3 * N * N) / (8 * N * d))
    assert str(bn.flash_attention_intensity()) == "2,060"


def test_dense_weights_cross_the_ridge_near_the_ops_per_byte():
    # weight matmuls at batch B: B·2·MATMUL FLOPs over 2·STREAMED bytes; smallest B reaching 989.4 / 3.35
    critical = math.ceil((989.4 / 3.35) * STREAMED / MATMUL)
    assert bn.llama_8b_weights_critical_batch().value == critical == 296
    assert str(bn.llama_8b_weights_critical_batch()) == "296"


def test_attention_intensity_in_decode_is_the_gqa_group():
    # per sequence: 4·L·NQ·D·context FLOPs over context·2·L·NKV·D·2 bytes = NQ / NKV
    assert la.llama_8b_gqa_group().value == NQ // NKV == 4
    assert la.llama_8b_attention_intensity().value == pytest.approx(NQ / NKV)
    assert str(la.llama_8b_attention_intensity()) == "4"


def test_decode_step_never_crosses_the_ridge_at_4096_tokens():
    # as the batch grows the step's intensity rises towards flops per sequence / KV bytes per sequence
    ceiling = llama_flops_per_token(4096) / (4096 * KV_PER_TOKEN)
    assert ceiling < 989.4 / 3.35
    assert bn.llama_8b_decode_step_ridge_crossing().value == "never crosses the ridge"


def test_moe_weights_cross_the_ridge_only_at_a_large_batch():
    h, layers, nq, nkv, dh = (QWEN3[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                                  "num_key_value_heads", "head_dim"))
    e, k, v = QWEN3["num_experts"], QWEN3["num_experts_per_tok"], QWEN3["vocab_size"]
    attn = h * nq * dh + 2 * h * nkv * dh + nq * dh * h
    expert, router = 3 * h * QWEN3["moe_intermediate_size"], e * h
    block = attn + 2 * dh + 2 * h + router  # + q/k norms, input and post-attention norms, router
    total = 2 * v * h + h + layers * (block + e * expert)
    active = 2 * v * h + h + layers * (block + k * expert)
    matmul = v * h + layers * (attn + k * expert + router)
    assert total == pytest.approx(235e9, rel=0.01) and active == pytest.approx(22e9, rel=0.03)  # "235B-A22B"
    streamed = total - v * h
    per_expert = (total - active) / (e - k)

    def weights_intensity(batch):
        # an expert is missed by each token with probability 1 - k/e (routing spread evenly)
        untouched = e * per_expert * (1 - k / e) ** batch
        return batch * 2 * matmul / ((streamed - untouched) * 2)

    critical = next(b for b in range(1, 100_000) if weights_intensity(b) >= 989.4 / 3.35)
    assert bn.qwen3_235b_weights_critical_batch().value == critical
    assert str(bn.qwen3_235b_weights_critical_batch()) == "3,211"
    assert bn.qwen_image_over_qwen3_235b_params().value == pytest.approx(QWEN_IMAGE_PARAMS / total)
    assert str(bn.qwen_image_over_qwen3_235b_params()) == "0.09"
    # Issue 32 item 5: compared on active parameters too, Qwen-Image's 20.4B (all run every pass) is about what
    # Qwen3-235B-A22B runs per token (its active count from the weight shapes above).
    assert bn.qwen_image_over_qwen3_235b_active_params().value == pytest.approx(QWEN_IMAGE_PARAMS / active)
    assert str(bn.qwen_image_over_qwen3_235b_active_params()) == "0.92"


# ------------------------------------------------------------------ 2.4.3 image bottlenecks

# (name, denoiser parameters, layers, attention width, latent tokens, hand-derived (FLOPs, attention FLOPs)) from
# the published configs (tests/_diffusion_by_hand.py): FLUX.1-dev at 1024² / 8 / 2 -> 64 x 64 with 512 text tokens;
# Qwen-Image at 1328² -> 83 x 83 with 256; Wan 2.1 (81 frames -> 1 + 80 / 4 = 21 latent frames, 8x VAE, 2x2 patches).
DENOISERS = [
    ("FLUX.1-dev", FLUX_DEV_PARAMS, 57, 3072, 64 * 64, flux_dev_flops(64 * 64)),
    ("Qwen-Image", QWEN_IMAGE_PARAMS, 60, 3072, 83 * 83, qwen_image_flops(83 * 83)),
    ("Wan2.1-T2V-1.3B", WAN_1_3B_PARAMS, 30, 1536, 21 * 30 * 52,
     wan_14b_flops(21 * 30 * 52, d=1536, L=30, ff=8960)),
    ("Wan2.1-T2V-14B", WAN_14B_PARAMS, 40, 5120, 21 * 45 * 80, wan_14b_flops(21 * 45 * 80)),
]


def denoiser(params, layers, width, tokens, flops):
    """(FLOPs, attention's share, bytes, intensity) of one pass. Bytes by section 2.4.2's convention: BF16
    weights read once, each block's input and output hidden states, and the predicted latent (16 channels x a
    2 x 2 patch per token)."""
    total, attention = flops
    nbytes = 2 * (params + 2 * layers * tokens * width + tokens * 16 * 4)
    return total, attention / total, nbytes, total / nbytes


def test_denoiser_pass_table_against_the_equation():
    table = bn.denoiser_pass_table()
    assert table.header == ("Model", "Latent tokens", "FLOPs per pass", "Attention share of FLOPs", "Bytes per pass",
                            "Activations share of bytes", "Intensity", "Bound")
    for row, (name, params, layers, width, tokens, counted) in zip(table.rows, DENOISERS, strict=True):
        flops, share, nbytes, intensity = denoiser(params, layers, width, tokens, counted)
        assert row[0].value == name and row[1].value == tokens
        assert row[2].value == pytest.approx(flops) and row[3].value == pytest.approx(share)
        assert row[4].value == pytest.approx(nbytes) and row[5].value == pytest.approx(1 - 2 * params / nbytes)
        assert row[6].value == pytest.approx(intensity)
        assert intensity > 3 * 989.4 / 3.35  # far above the H100's ridge
        assert row[7].value == "compute"
    text = str(table)
    assert "| FLUX.1-dev | 4,096 | 74.4 TFLOP | 20 % |" in text
    assert "| Wan2.1-T2V-14B | 75,600 | 6.52 PFLOP | 72 % |" in text


def test_every_pass_is_far_above_the_ridge():
    qwen = DENOISERS[1]
    assert bn.qwen_image_pass_intensity().value == pytest.approx(denoiser(*qwen[1:])[3])
    assert str(bn.qwen_image_pass_intensity()) == "2,933"  # the "about 3,000" (was 6,889)
    lowest = min(denoiser(*row[1:])[3] for row in DENOISERS)
    assert bn.denoiser_min_intensity_over_ridge().value == pytest.approx(lowest / (989.4 / 3.35))
    assert str(bn.denoiser_min_intensity_over_ridge()) == "9.4"  # FLUX.1 [dev]'s 2,789 over 295


# ------------------------------------------------------------------ bounds meet measurements

MEASURED = json.loads((DATA / "measurements.json").read_text())["measurements"]
DOC = (Path(__file__).resolve().parents[1] / "docs" / "bottlenecks.md").read_text()


def test_measurements_table_holds_every_row_beside_its_bound():
    table = bn.measurements_table()
    assert bn.measurement_count().value == len(MEASURED) == len(table.rows) >= 20
    for row, raw in zip(table.rows, MEASURED, strict=True):
        named = f"{raw['measured_model']} (costed as {raw['model']})" if raw.get("measured_model") else raw["model"]
        assert row[0].value == named and row[4].value == raw["value"]
        assert row[6].value == pytest.approx(raw["value"] / row[5].value)
        assert raw["url"] in row[11].value and (row[10].value == (raw["trick"] or ""))
        # on one GPU there is no communication to leave out; on several the bound without it is higher
        assert (row[7].value == "–") == (raw["n_gpus"] == 1)
        if raw["n_gpus"] > 1:
            assert row[7].value <= row[6].value + 1e-12 and " on " in row[1].value
    text = str(table)
    # gpt-fast's Llama 2 7B in BF16: 104.9 tokens/s against about 2.039 TB/s / 13.2 GB per token; it uses 68 % of the
    # A100's bandwidth (MBU) and 104.9 x 2 x 6.7e9 / 312e12 = 0.45 % of its FLOP/s (MFU)
    assert ("| Llama-2-7B | A100-SXM, BF16/BF16/BF16, batch 1, 5 in, 200 out | gpt-fast (torch.compile) | tokens/s "
            "| 104.9 | 154 | 0.68 | – | 0.45 % | 68 % |") in text
    # on eight A100s: the bound with its all-reduces (see the next test), and without them eight times one GPU's
    assert "| 8 × A100-SXM on NVLink 3, BF16/BF16/BF16, batch 1, 5 in, 200 out | gpt-fast (torch.compile) |" in text
    # a FLOP/s kernel has no MBU: FA3's 740 of 989.4 TFLOP/s is 75 % MFU
    assert "| 740 | 989 | 0.75 | – | 75 % | – |" in text
    assert "{{ fact: bottlenecks.measurements_table }}" in DOC and "<!-- figure: measured_vs_bound -->" in DOC


def test_the_ratios_the_prose_quotes():
    h, L, ff, V = 4096, 32, 11008, 32000  # Llama 2 7B, config.json
    per_token = 2.039e12 / (2 * (L * (4 * h * h + 3 * h * ff + 2 * h) + h + V * h))
    assert bn.gpt_fast_7b_ratio().value == pytest.approx(104.9 / per_token, rel=0.01)
    assert str(bn.gpt_fast_7b_ratio()) == "0.68"
    # eight GPUs give eight times the bandwidth; gpt-fast measured 328.43 tokens/s
    assert bn.gpt_fast_7b_tp8_ratio_without_communication().value == pytest.approx(328.43 / (8 * per_token), rel=0.01)
    assert str(bn.gpt_fast_7b_tp8_ratio_without_communication()) == "0.27"
    # but each token also waits for 2 all-reduces in each of the 32 layers: a ring of 8 A100s on NVLink 3 (300 GB/s
    # each way), 14 steps of 0.6 us and 7/4 of 4,096 x 2 bytes (the 5-token prefill's 64 add 5 times the bytes)
    each = 14 * 0.6e-6 + 7 / 4 * 8192 / 300e9
    assert bn.gpt_fast_7b_tp8_all_reduces().value == 64
    assert bn.gpt_fast_7b_tp8_all_reduce_us().value == pytest.approx(each * 1e6) and str(bn.gpt_fast_7b_tp8_all_reduce_us()) == "8.45 µs"
    prefill_talk = 64 * (14 * 0.6e-6 + 7 / 4 * 5 * 8192 / 300e9)
    seconds = 200 / (8 * per_token) + prefill_talk + 199 * 64 * each  # about 1 / (8 per_token) a token
    assert bn.gpt_fast_7b_tp8_ratio().value == pytest.approx(328.43 * seconds / 200, rel=0.01)
    assert str(bn.gpt_fast_7b_tp8_ratio()) == "0.44"
    assert bn.flashmla_bandwidth_ratio().value == pytest.approx(3000 / 3350) and str(bn.flashmla_bandwidth_ratio()) == "0.9"
    # Llama 3.1 405B (126 layers, hidden 16,384, MLP 53,248, 8 KV heads of 128, vocab 128,256) in FP8 on eight
    # H200s (4.8 TB/s each): about 1 byte per weight read per token
    h, L, ff, V, kv = 16384, 126, 53248, 128256, 8 * 128
    read = L * (2 * h * h + 2 * h * kv + 3 * h * ff + 2 * h) + h + V * h
    # and 2 all-reduces in each of the 126 layers of each pass: a ring of 8 on NVLink 4, 14 steps of 0.6 us and
    # 7/4 of 16,384 one-byte numbers at 450 GB/s each way (the bound: a 1-token prompt, then one decode step)
    talk = 2 * 126 * (14 * 0.6e-6 + 7 / 4 * 16384 / 450e9)
    assert bn.medusa_405b_ratio().value == pytest.approx(108 * (read / (8 * 4.8e12) + talk), rel=0.01)
    assert str(bn.medusa_405b_ratio()) == "1.37"
    low, high = str(bn.serving_ratio_range()).split(" to ")
    assert float(low) < float(high) < 1
    for name in ("measurement_count", "gpt_fast_7b_ratio", "gpt_fast_7b_tp8_ratio", "flashmla_bandwidth_ratio",
                 "serving_ratio_range", "medusa_405b_ratio", "gpt_fast_7b_tp8_ratio_without_communication",
                 "gpt_fast_7b_tp8_all_reduces", "gpt_fast_7b_tp8_all_reduce_us", "multi_gpu_row_count",
                 "communication_gap_share_median", "communication_gap_share_max"):
        assert f"bottlenecks.{name} }}}}" in DOC, name


def test_how_much_of_the_gap_communication_explains():
    # A row's share: of the time between the bound that lets the GPUs talk for free and the measurement, the part
    # the communication term accounts for. Worked from each row's three rates (per unit time is 1 / rate).
    multi = [c for c in measurements.compare() if c.measurement.n_gpus > 1 and c.measurement.trick is None]
    shares = sorted((1 / c.bound - 1 / c.bound_without_communication)
                    / (1 / c.measurement.value - 1 / c.bound_without_communication) for c in multi)
    assert bn.multi_gpu_row_count().value == len(multi) == 11  # 5 gpt-fast rows, 6 TensorRT-LLM rows (DeepSeek's is a trick row)
    assert bn.communication_gap_share_median().value == pytest.approx(shares[5])
    assert bn.communication_gap_share_max().value == pytest.approx(shares[-1])
    # the largest is the eight-GPU Llama 2 7B at batch 1, whose 64 all-reduces per token are all latency
    worst = max(multi, key=lambda c: c.communication_share)
    assert worst.measurement.id == "gpt-fast-7b-tp8"
    assert (str(bn.communication_gap_share_median()), str(bn.communication_gap_share_max())) == ("9.2 %", "24 %")


def test_link_catalog_and_nccl_check_tables():
    links = bn.links_table()
    assert len(links.rows) == len(json.loads((DATA / "links.json").read_text())["links"])
    by_name = {row[0].value: row for row in links.rows}
    nvlink4 = by_name["NVLink 4"]
    assert nvlink4[1].value == 450 and nvlink4[3].value == pytest.approx(0.6) and nvlink4[4].value == "yes"
    assert "H100-SXM (8)" in nvlink4[5].value and "H200-SXM (8)" in nvlink4[5].value
    nvlink5 = by_name["NVLink 5"]
    assert nvlink5[1].value == 900 and "GB200 (72)" in nvlink5[5].value and "B200 (8)" in nvlink5[5].value
    assert by_name["PCIe Gen4"][1].value == 32 and by_name["PCIe Gen4"][3].value == pytest.approx(1.0)
    ndr = by_name["InfiniBand NDR"]
    assert ndr[1].value == 50 and ndr[2].value == "a NIC per GPU"
    assert (bn.hgx_domain_gpus().value, bn.nvl72_domain_gpus().value) == (8, 72)
    # published bus bandwidths over the link each way: NCCL's ring on 8 H100s 370 of 450, its NVLink SHARP 480
    check = {row[0].value: row for row in bn.nccl_check_table().rows}
    assert check["8 H100s, ring (NVLink SHARP off)"][4].value == pytest.approx(370 / 450)
    assert check["8 H100s, NVLink SHARP"][4].value == pytest.approx(480 / 450)
    assert check["8 B300s, ring (NVLink SHARP off)"][4].value == pytest.approx(695 / 900)
    assert check["16 H800s, DeepEP dispatch (InfiniBand)"][4].value == pytest.approx(43 / 50)
    assert bn.h100_ring_share_of_nvlink().value == pytest.approx(370 / 450) and str(bn.h100_ring_share_of_nvlink()) == "82 %"
    for name in ("links_table", "nccl_check_table", "hgx_domain_gpus", "nvl72_domain_gpus", "h100_ring_share_of_nvlink"):
        assert f"bottlenecks.{name} }}}}" in DOC, name


def test_expected_ranges_and_the_leave_one_out_errors():
    # the efficiency of a setup: measured / bound of its rows; compute-bound kernels by hand from the catalog's peaks
    kernels = {"FlashMLA 580": 580 / 989.4, "FlashMLA 660": 660 / 989.4, "FA3 FP16": 740 / 989.4,
               "FA3 FP8": 1200 / 1978.9}
    rows = {str(r[0]): [str(c) for c in r] for r in bn.efficiency_table().rows}
    assert rows["kernel, compute bound"] == ["kernel, compute bound", "4", "59 % to 75 %", "64 %"]
    assert min(kernels.values()) == pytest.approx(0.586, abs=1e-3) and max(kernels.values()) == pytest.approx(0.748, abs=1e-3)
    assert rows["kernel, memory bound"][2] == "90 %"  # FlashMLA's 3,000 of 3,350 GB/s, alone in its setup
    # leave-one-out, re-done here from the comparisons: each row's bound x the median ratio of the other rows of its
    # setup (metric, and one GPU or several), kernels of the other kind standing in for the lone memory-bound one
    import statistics

    from chapter2 import measurements

    comps = [c for c in measurements.compare() if c.measurement.trick is None
             and c.measurement.metric != "input_tokens_per_s"]

    def key(c):
        m = c.measurement
        return (m.metric, m.n_gpus > 1) if not m.metric.startswith("kernel") else (m.metric, False)

    def errors(with_talk):
        def bound(c):
            return c.bound if with_talk else c.bound_without_communication

        out = []
        for c in comps:
            others = [o.measurement.value / bound(o) for o in comps if key(o) == key(c) and o is not c]
            if not others:
                others = [o.measurement.value / bound(o) for o in comps
                          if o.measurement.metric.startswith("kernel") and o is not c]
            out.append(abs(bound(c) * statistics.median(others) - c.measurement.value) / c.measurement.value)
        return out

    with_talk, free_talk = errors(True), errors(False)
    assert bn.loo_median_error().value == pytest.approx(statistics.median(with_talk))
    assert bn.loo_worst_error().value == pytest.approx(max(with_talk))
    assert bn.loo_median_error_without_communication().value == pytest.approx(statistics.median(free_talk))
    assert bn.loo_worst_error_without_communication().value == pytest.approx(max(free_talk))
    assert max(with_talk) < max(free_talk)  # counting communication makes multi-GPU runs more alike
    assert bn.loo_row_count().value == len(with_talk) == 30
    worst, second = bn.loo_table().rows[:2]
    assert str(worst[-1]) == str(bn.loo_worst_error()) and str(worst[1]).startswith("8 × ")  # several GPUs
    assert str(second[1]).startswith("8 × ") and "The two\nworst misses are runs on several GPUs." in DOC
    # the prediction in the row's unit: Qwen3-235B on 8 x B200, its bound x the median share of the other servers
    # on several GPUs
    others = [c.measurement.value / c.bound for c in comps if key(c) == ("output_tokens_per_s", True)
              and c.measurement.id != "trtllm-qwen3-235b-b200-tp8-fp4"]
    qwen = next(c for c in comps if c.measurement.id == "trtllm-qwen3-235b-b200-tp8-fp4")
    assert len(others) == 5 and str(worst[3]) == f"{round(qwen.bound * statistics.median(others)):,} tokens/s"
    for name in ("loo_median_error", "loo_worst_error", "loo_row_count", "efficiency_table", "loo_table",
                 "loo_median_error_without_communication", "loo_worst_error_without_communication"):
        assert f"bottlenecks.{name} }}}}" in DOC, name


def test_the_catalog_table_has_an_fp4_column():
    """issue 32 item 5: the catalog table adds FP4. By hand from the datasheets: the HGX B200's 18 PFLOPS of sparse
    FP4 is 9,000 dense over 7.7 TB/s, 1,169 ops per byte; the GB300's 15 PFLOPS dense NVFP4 over 8 TB/s, 1,875;
    Hopper has no FP4 (n/a)."""
    text = str(bn.gpu_ops_per_byte_table())
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")] for line in text.splitlines()
            if line.startswith("| NVIDIA")}
    b200 = rows["NVIDIA B200 (HGX B200, per GPU)"]
    assert b200[7:9] == ["9,000", "1,169"], b200
    gb300 = rows["NVIDIA GB300 (GB300 NVL72, per Blackwell Ultra GPU)"]
    assert gb300[7:9] == ["15,000", "1,875"], gb300
    assert rows["NVIDIA H100 SXM5 80GB"][7:9] == ["n/a", "n/a"]
