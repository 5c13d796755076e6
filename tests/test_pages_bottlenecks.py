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

from chapter2.pages import bottlenecks as bn

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


def test_h100_figures_are_the_datasheets():
    # 989.4 dense FP16: NVIDIA H100 architecture whitepaper; 3.35 TB/s: nvidia.com/en-us/data-center/h100
    assert bn.h100_fp16_tflops().value == pytest.approx(989.4) and str(bn.h100_fp16_tflops()) == "989.4"
    assert bn.h100_bandwidth_tb_s().value == pytest.approx(3.35) and str(bn.h100_bandwidth_tb_s()) == "3.35"


def test_h100_ops_per_byte_is_the_chapters_295():
    assert bn.h100_ops_per_byte().value == pytest.approx(989.4e12 / 3.35e12, rel=1e-12)
    assert str(bn.h100_ops_per_byte()) == "295"
    assert bn.h100_ops_per_byte_one_decimal().value == pytest.approx(989.4 / 3.35)
    assert str(bn.h100_ops_per_byte_one_decimal()) == "295.3"


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
                            "Dense FP8 TFLOP/s", "FP8 ops:byte")
    for key, (name, memory, bandwidth, fp16, fp16_ratio, fp8, fp8_ratio) in zip(GPUS, table.rows, strict=True):
        assert name.value == GPUS[key]["name"]
        assert memory.value == pytest.approx(GPUS[key]["memory_gb"]["value"])
        assert bandwidth.value == pytest.approx(tb_s(key))
        assert fp16.value == pytest.approx(tflops(key)) and fp16_ratio.value == pytest.approx(ratio(key))
        if "fp8" in GPUS[key]["tflops"]:
            assert fp8.value == pytest.approx(tflops(key, "fp8"))
            assert fp8_ratio.value == pytest.approx(ratio(key, "fp8"))
        else:
            assert str(fp8) == str(fp8_ratio) == "n/a"
    # the assertions of the former test_hardware.test_ops_per_byte_table_has_one_row_per_gpu
    lines = str(table).splitlines()
    assert len(lines) == 2 + len(GPUS)
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    h100 = next(line for line in lines if "H100" in line)
    assert "| 295 |" in h100 and "| 989.4 |" in h100
    a100 = next(line for line in lines if "A100" in line)
    assert a100.endswith("| n/a | n/a |")


# ------------------------------------------------------------------ 2.4.2 LLM bottlenecks

H, V, L = LLAMA["hidden_size"], LLAMA["vocab_size"], LLAMA["num_hidden_layers"]
NQ, NKV = LLAMA["num_attention_heads"], LLAMA["num_key_value_heads"]
D = H // NQ
ATTN = H * NQ * D + 2 * H * NKV * D + NQ * D * H          # q, k, v, o projections
MLP = 3 * H * LLAMA["intermediate_size"]                   # gate, up, down
TOTAL = 2 * V * H + H + L * (ATTN + MLP + 2 * H)           # untied embedding + LM head, norms
MATMUL = V * H + L * (ATTN + MLP)                          # what one token multiplies by
STREAMED = TOTAL - V * H                                   # the embedding is a row lookup, not read in full
KV_PER_TOKEN = 2 * L * NKV * D * 2                         # K and V, every layer, FP16
H100_PEAK, H100_BW = 989.4e12, 3.35e12


def llama_flops_per_token(context):
    """2 per weight multiplied, plus q·k and p·v over `context` keys in every layer (4·heads·d per key)."""
    return 2 * MATMUL + 4 * L * NQ * D * context


def llama_phase(flops, nbytes):
    return flops, nbytes, flops / nbytes, max(flops / H100_PEAK, nbytes / H100_BW)


def llama_prefill(prompt=4096):
    flops = sum(llama_flops_per_token(c) for c in range(1, prompt + 1))  # causal: token i sees i keys
    return llama_phase(flops, 2 * STREAMED + prompt * KV_PER_TOKEN)


def llama_decode(context=4096, batch=1):
    return llama_phase(batch * llama_flops_per_token(context), 2 * STREAMED + batch * context * KV_PER_TOKEN)


def test_fp16_is_two_bytes_and_a_matvec_does_about_one_op_per_byte():
    assert bn.fp16_bytes().value == 2 and str(bn.fp16_bytes()) == "2"
    assert bn.llama_8b_matvec_intensity().value == pytest.approx(2 * H * H / ((H + H * H + H) * 2))
    assert str(bn.llama_8b_matvec_intensity()) == "1"


def test_llama_parameters_by_hand_are_the_published_8b():
    assert TOTAL == 8_030_261_248  # Meta: "8B"; the safetensors index of Llama-3.1-8B sums to 8,030,261,248


def test_phase_table_against_the_equations():
    table = bn.llama_8b_phase_table()
    assert [str(r[0]) for r in table.rows] == ["Prefill, 4,096 tokens (TTFT)", "Decode step, batch 1 (TPOT)",
                                               "Decode step, batch 64"]
    expected = [llama_prefill(), llama_decode(), llama_decode(batch=64)]
    ridge = 989.4 / 3.35
    for row, (flops, nbytes, intensity, time) in zip(table.rows, expected, strict=True):
        assert row[1].value == pytest.approx(flops)
        assert row[2].value == pytest.approx(nbytes)
        assert row[3].value == pytest.approx(intensity)
        assert row[4].value == ("memory" if intensity < ridge else "compute")
        assert row[5].value == pytest.approx(time * 1e3)
    text = str(table)
    assert "| Prefill, 4,096 tokens (TTFT) | 65.9 TFLOP | 15.5 GB | 4,237 | compute | 66.6 ms |" in text
    assert "| Decode step, batch 1 (TPOT) | 17.2 GFLOP | 15.5 GB | 1.1 | memory | 4.64 ms |" in text
    assert "| Decode step, batch 64 | 1.1 TFLOP | 49.4 GB | 22.2 | memory | 14.7 ms |" in text


def test_prefill_is_compute_bound_and_decode_memory_bound():
    assert bn.llama_8b_prefill_intensity().value == pytest.approx(llama_prefill()[2])
    assert str(bn.llama_8b_prefill_intensity()) == "4,237"
    assert bn.llama_8b_decode_intensity().value == pytest.approx(llama_decode()[2])
    assert str(bn.llama_8b_decode_intensity()) == "1.1"


def test_one_sequence_decodes_at_most_215_tokens_per_second():
    flops, nbytes, _, time = llama_decode()
    assert time == nbytes / H100_BW  # memory bound: the bytes set the time
    assert bn.llama_8b_decode_tokens_per_s().value == pytest.approx(1 / time)
    assert str(bn.llama_8b_decode_tokens_per_s()) == "215"
    assert bn.llama_8b_decode_bytes().value == pytest.approx(nbytes) and str(bn.llama_8b_decode_bytes()) == "15.5 GB"


N, d = 4096, 128


def test_attention_steps_table_lists_every_step_and_the_total():
    table = bn.attention_steps_table()
    rows = table.rows
    assert [str(r[0]) for r in rows] == ["S = Q K^T", "P = softmax(S)", "O = P V", "**Total**"]
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
    assert bn.attention_dtype_bytes().value == 2 and str(bn.attention_dtype_bytes()) == "2"
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
    assert bn.llama_8b_gqa_group().value == NQ // NKV == 4
    assert bn.llama_8b_decode_attention_intensity().value == pytest.approx(NQ / NKV)
    assert str(bn.llama_8b_decode_attention_intensity()) == "4"


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
    assert bn.qwen_image_over_qwen3_235b_params().value == pytest.approx(20e9 / total)
    assert str(bn.qwen_image_over_qwen3_235b_params()) == "0.09"


# ------------------------------------------------------------------ 2.4.3 image bottlenecks

# (name, denoiser parameters, layers, attention width, latent tokens) from the papers and configs:
# FLUX.1-dev 12B, 57 blocks x 3072, 1024² / 8 / 2 -> 64 x 64; Qwen-Image 20B, 60 x 3072, 1328² -> 83 x 83;
# Wan 2.1 (arXiv:2503.20314): 81 frames -> 1 + 80 / 4 = 21 latent frames, 8x spatial VAE, 2x2 patches.
DENOISERS = [
    ("FLUX.1-dev", 12e9, 57, 3072, 64 * 64),
    ("Qwen-Image", 20e9, 60, 3072, 83 * 83),
    ("Wan2.1-T2V-1.3B", 1.3e9, 30, 1536, 21 * (480 // 16) * (832 // 16)),
    ("Wan2.1-T2V-14B", 14e9, 40, 5120, 21 * (720 // 16) * (1280 // 16)),
]


def denoiser(params, layers, width, tokens):
    linear, attention = 2 * params * tokens, 4 * layers * tokens**2 * width
    nbytes = 2 * (params + 2 * layers * tokens * width)  # BF16 weights once, each block's in and out
    return linear + attention, attention / (linear + attention), (linear + attention) / nbytes


def test_denoiser_pass_table_against_the_equation():
    table = bn.denoiser_pass_table()
    assert table.header == ("Model", "Latent tokens", "FLOPs per pass", "Attention share", "Intensity", "Bound")
    for row, (name, params, layers, width, tokens) in zip(table.rows, DENOISERS, strict=True):
        flops, share, intensity = denoiser(params, layers, width, tokens)
        assert row[0].value == name and row[1].value == tokens
        assert row[2].value == pytest.approx(flops) and row[3].value == pytest.approx(share)
        assert row[4].value == pytest.approx(intensity) == tokens  # 2·N ÷ b with b = 2: one op per byte per token
        assert row[5].value == "compute"
    text = str(table)
    assert "| FLUX.1-dev | 4,096 | 110 TFLOP | 11 % | 4,096 | compute |" in text
    assert "| Wan2.1-T2V-14B | 75,600 | 6.8 PFLOP | 69 % | 75,600 | compute |" in text


def test_every_pass_is_far_above_the_ridge():
    assert bn.qwen_image_pass_intensity().value == pytest.approx(83 * 83)
    assert str(bn.qwen_image_pass_intensity()) == "6,889"
    lowest = min(tokens for *_, tokens in DENOISERS)
    assert bn.denoiser_min_intensity_over_ridge().value == pytest.approx(lowest / (989.4 / 3.35))
    assert str(bn.denoiser_min_intensity_over_ridge()) == "14"
