"""Arithmetic intensity, the roofline, and prefill/decode estimates (chapter section 2.4)."""

import json
import math
from pathlib import Path

import pytest
from _oracles import require
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter2 import calculators, models, roofline
from chapter2.models import ModelConfig
from chapter2.format import duration
from chapter2.hardware import GPUS, custom_gpu

H100 = GPUS["H100-SXM"]


# --------------------------------------------------------------------------- matmul


def test_matmul_and_matvec_intensity_from_first_principles():
    # (m, k) @ (k, n): 2mkn operations over (mk + kn + mn) elements of 2 bytes.
    m, k, n = 4096, 4096, 14336
    assert roofline.matmul_intensity(m, k, n) == pytest.approx(2 * m * k * n / (2 * (m * k + k * n + m * n)))
    # A vector times a matrix reads each weight for one multiply-add: about 1 op/byte in FP16, 2 in FP8.
    assert roofline.matvec_intensity(4096, 4096) == pytest.approx(2 * 4096**2 / (2 * (2 * 4096 + 4096**2)))
    assert 0.99 < roofline.matvec_intensity(4096, 4096, "fp16") < 1
    assert 1.99 < roofline.matvec_intensity(4096, 4096, "fp8") < 2


def test_matmul_intensity_matches_real_tensors():
    # The oracle: torch's FLOP counter on a real matmul, and the bytes of A, B and C.
    torch = require("torch")
    from torch.utils.flop_counter import FlopCounterMode

    a, b = torch.randn(97, 40), torch.randn(40, 59)
    with FlopCounterMode(display=False) as counter:
        c = a @ b
    moved = sum(t.numel() * t.element_size() for t in (a, b, c))
    assert roofline.matmul_intensity(97, 40, 59, "fp32") == pytest.approx(counter.get_total_flops() / moved)


# --------------------------------------------------------------------------- the roofline


def test_attainable_is_the_min_of_the_two_roofs():
    assert roofline.attainable_flops(1.0, "H100-SXM") == pytest.approx(3.35e12)
    assert roofline.attainable_flops(1e4, "H100-SXM") == pytest.approx(989.4e12)
    ridge = H100.ops_per_byte("fp16")
    assert roofline.attainable_flops(ridge, H100) == pytest.approx(989.4e12)
    xs = roofline.attainable_flops([0.5, 10, 1e6], H100)
    assert xs.tolist() == pytest.approx([0.5 * 3.35e12, 10 * 3.35e12, 989.4e12])
    with pytest.raises(ValueError, match="intensity"):
        roofline.attainable_flops(-1, H100)


def test_bound_compares_with_ops_per_byte():
    assert roofline.bound(62, "H100-SXM") == "memory"
    assert roofline.bound(300, "H100-SXM") == "compute"
    assert roofline.bound(300, "L4") == "memory"  # L4: 121 dense TFLOP/s / 0.3 TB/s = 403
    with pytest.raises(ValueError, match="intensity"):
        roofline.bound(math.nan, "H100-SXM")


# --------------------------------------------------------------------------- attention


def test_attention_worked_example_is_the_chapters_62():
    # Chapter 2.4.2: standard attention at N=4096, d=128 in FP16 comes out near 62, far below 295.
    N, d = 4096, 128
    cost = roofline.attention_intensity(N, d)
    assert cost.bytes == 8 * N**2 + 8 * N * d == 138_412_032
    assert cost.ops == 4 * N**2 * d + 3 * N**2 == 8_640_266_240
    assert cost.intensity == pytest.approx((4 * N**2 * d + 3 * N**2) / (8 * N**2 + 8 * N * d))
    assert round(cost.intensity) == 62
    assert roofline.bound(cost.intensity, "H100-SXM") == "memory"


def test_attention_steps_are_the_reads_writes_and_ops_of_each_stage():
    N, d = 4096, 128
    s, p, o = roofline.attention_intensity(N, d).steps
    assert (s.read_elements, s.write_elements, s.ops) == (2 * N * d, N * N, 2 * N * N * d)
    assert (p.read_elements, p.write_elements, p.ops) == (N * N, N * N, 3 * N * N)
    assert (o.read_elements, o.write_elements, o.ops) == (N * N + N * d, N * d, 2 * N * N * d)


@settings(max_examples=60, deadline=None)
@given(N=st.integers(1, 100_000), d=st.integers(1, 512), dtype=st.sampled_from(["fp32", "fp16", "bf16", "fp8", 3]))
def test_attention_steps_sum_to_the_closed_forms(N, d, dtype):
    b = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, 3: 3}[dtype]
    std = roofline.attention_intensity(N, d, dtype)
    assert std.bytes == b * (4 * N * N + 4 * N * d)
    assert std.ops == 4 * N * N * d + 3 * N * N
    flash = roofline.flash_attention_intensity(N, d, dtype)
    assert flash.bytes == b * 4 * N * d  # Q, K, V read once, O written once
    assert flash.ops == std.ops
    assert flash.intensity >= std.intensity


def test_attention_counts_match_real_tensors():
    # The oracle: run attention in torch, count the matmul FLOPs with torch's counter and the bytes of
    # every tensor each step reads and writes.
    torch = require("torch")
    from torch.utils.flop_counter import FlopCounterMode

    N, d = 97, 40
    q, k, v = (torch.randn(N, d, dtype=torch.float16) for _ in range(3))
    with FlopCounterMode(display=False) as counter:
        s = q.float() @ k.float().T
        p = torch.softmax(s, dim=-1)
        o = p @ v.float()
    s, p, o = s.half(), p.half(), o.half()
    nbytes = lambda *ts: sum(t.numel() * t.element_size() for t in ts)  # noqa: E731
    moved = nbytes(q, k, s) + nbytes(s, p) + nbytes(p, v, o)
    cost = roofline.attention_intensity(N, d, "fp16")
    assert cost.bytes == moved
    matmul_ops = sum(step.ops for step in cost.steps if "softmax" not in step.name)
    assert matmul_ops == counter.get_total_flops()


def test_flash_attention_is_compute_bound_at_the_same_shape():
    cost = roofline.flash_attention_intensity(4096, 128)
    assert cost.intensity == pytest.approx((4 * 4096**2 * 128 + 3 * 4096**2) / (8 * 4096 * 128))
    assert roofline.bound(cost.intensity, "H100-SXM") == "compute"


def test_attention_counts_its_matmul_flops_and_its_exponentials():
    # one exponential per score (N^2), the two matmuls 2N^2 d each; the same for the fused kernel
    for cost in (roofline.attention_intensity(97, 40), roofline.flash_attention_intensity(97, 40)):
        assert cost.exponentials == 97 * 97
        assert cost.matmul_flops == 4 * 97 * 97 * 40
        assert cost.ops == cost.matmul_flops + 3 * 97 * 97


def test_three_roofs_on_an_h100_at_d_128_the_exponentials_take_half_the_matmul_time():
    # FlashAttention-3 (arXiv:2407.08608, section 3.1): 989 TFLOPS of FP16 matmul but 3.9 T exponentials/s; at
    # d = 128 there are 512 matmul FLOPs per exponential, so the exponentials take about 50 % of the matmul time
    N, d = 16384, 128
    b = roofline.attention_bound(roofline.flash_attention_intensity(N, d, "fp16"), "H100-SXM", "fp16")
    assert b.tensor_time == pytest.approx(4 * N * N * d / 989.4e12, rel=1e-12)
    assert b.exp_time == pytest.approx(N * N / (132 * 16 * 1.83e9), rel=1e-12)
    assert b.memory_time == pytest.approx(2 * 4 * N * d / 3.35e12, rel=1e-12)
    # (N^2 / exponentials per s) / (4 N^2 d / peak) = peak / (4 d x exponentials per s)
    assert b.exp_time / b.tensor_time == pytest.approx(989.4e12 / (512 * 132 * 16 * 1.83e9), rel=1e-9)
    assert b.exp_time / b.tensor_time == pytest.approx(0.5, abs=0.02)
    assert b.time == b.tensor_time and b.limit == "tensor cores" and b.limits == ("tensor cores",)
    assert b.serial_time == pytest.approx(b.tensor_time + b.memory_time + b.exp_time)
    assert b.flops_per_s == pytest.approx(989.4e12, rel=1e-12)  # tensor bound: attention at the matmul peak


def test_on_a_b200_the_exponentials_take_about_as_long_as_the_matmuls():
    # issue 32: B200 tensor throughput 2.25 PFLOP/s dense FP16 (2.27x the H100's), exponentials 5 T/s (1.29x)
    b = roofline.attention_bound(roofline.flash_attention_intensity(16384, 128, "fp16"), "B200", "fp16")
    assert b.exp_time / b.tensor_time == pytest.approx(2.25e15 / (512 * 5e12), rel=1e-12)  # 0.879
    assert 0.8 < b.exp_time / b.tensor_time < 1


def test_below_the_crossover_head_dim_the_exponentials_limit():
    # d* = peak / (4 x exponentials/s): H100 FP16 989.4e12 / (4 x 3.865e12) = 64.0, FP8 twice that; B200 FP16 112.5
    assert roofline.exponential_crossover_head_dim("H100-SXM", "fp16") == pytest.approx(
        989.4e12 / (4 * 132 * 16 * 1.83e9), rel=1e-12)
    assert round(roofline.exponential_crossover_head_dim("H100-SXM", "fp16")) == 64
    assert round(roofline.exponential_crossover_head_dim("H100-SXM", "fp8")) == 128
    assert roofline.exponential_crossover_head_dim("B200", "fp16") == pytest.approx(112.5)
    fp8_64 = roofline.attention_bound(roofline.flash_attention_intensity(16384, 64, "fp8"), "H100-SXM", "fp8")
    assert fp8_64.limit == "exponentials"
    # exponential bound: 4 x 64 FLOPs per exponential x 3.865e12 exponentials/s = 989 TFLOP/s, half the FP8 peak
    assert fp8_64.flops_per_s == pytest.approx(256 * 132 * 16 * 1.83e9, rel=1e-12)
    tie = roofline.attention_bound(roofline.flash_attention_intensity(16384, 64, "fp16"), "H100-SXM", "fp16")
    assert set(tie.limits) == {"tensor cores", "exponentials"}
    with pytest.raises(ValueError, match="no exponential rate"):
        roofline.exponential_crossover_head_dim("L4")


def test_short_sequences_and_unfused_attention_are_memory_bound_under_three_roofs():
    std = roofline.attention_bound(roofline.attention_intensity(4096, 128), "H100-SXM")
    assert std.limit == "memory" and std.memory_time == pytest.approx((8 * 4096**2 + 8 * 4096 * 128) / 3.35e12)
    short = roofline.attention_bound(roofline.flash_attention_intensity(128, 128), "H100-SXM")
    assert short.limit == "memory"  # 4Nd x 2 bytes against 4N^2 d FLOPs: N/2 = 64 ops per byte, below 295


def test_a_gpu_without_an_exponential_rate_keeps_two_roofs():
    b = roofline.attention_bound(roofline.flash_attention_intensity(4096, 128), "L40S")
    assert b.exp_time is None and set(b.times) == {"tensor cores", "memory"}
    assert b.time == max(b.tensor_time, b.memory_time)
    with pytest.raises(TypeError, match="AttentionCost"):
        roofline.attention_bound(4096, "H100-SXM")


def test_attention_rejects_bad_shapes():
    with pytest.raises(ValueError, match="N must be"):
        roofline.attention_intensity(0, 128)
    with pytest.raises(TypeError, match="d must be an integer"):
        roofline.attention_intensity(16, 1.5)
    with pytest.raises(ValueError, match="dtype_bytes"):
        roofline.attention_intensity(16, 16, "fp12")


# --------------------------------------------------------------------------- LLM prefill and decode

# A dense toy model in plain numbers: 1B parameters, 16 layers, 16 heads of 64, 4 KV heads.
TOY = ModelConfig.from_numbers("toy", 1e9, 1e9, n_layers=16, n_heads=16, n_kv_heads=4, head_dim=64)


def test_a_model_in_plain_numbers_is_a_model_config():
    # the one model description: plain numbers give a ModelConfig whose counts are the numbers given
    p = TOY.params()
    assert isinstance(TOY, ModelConfig) and (p.total, p.active, p.matmul_active, p.embedding, p.lm_head) == (1e9, 1e9, 1e9, 0, 0)
    assert TOY.kv_cache_bytes_per_token("fp16") == 2 * 16 * 4 * 64 * 2 and TOY.kv_cache_bytes(10, 3, "fp16") == 30 * 2 * 16 * 4 * 64 * 2
    assert TOY.flops_per_token(100) == 2e9 + 4 * 16 * 16 * 64 * 100 and not TOY.is_moe
    moe = ModelConfig.from_numbers("moe", 100e9, 10e9, 8, 8, 8, 64, n_experts=64, experts_per_token=4)
    assert moe.is_moe and (moe.num_experts, moe.num_experts_per_tok) == (64, 4)
    assert roofline.prompt_flops("Llama-3.1-8B", 7) == roofline.prompt_flops(models.load_config("Llama-3.1-8B"), 7)


def test_decode_by_hand_for_plain_numbers():
    c, b = 1000, 8
    est = roofline.decode(TOY, c, batch=b, gpu="H100-SXM", dtype="fp16")
    flops = b * (2 * 1e9 + 4 * 16 * 16 * 64 * c)
    kv = b * c * (2 * 16 * 4 * 64 * 2)  # K and V, every layer, 2 bytes
    assert est.flops == pytest.approx(flops)
    assert est.bytes == pytest.approx(2e9 + kv)
    assert est.intensity == pytest.approx(flops / (2e9 + kv))
    assert est.time == pytest.approx(max(flops / 989.4e12, (2e9 + kv) / 3.35e12))
    assert est.tokens_per_s == pytest.approx(b / est.time)


def test_weight_matmuls_turn_compute_bound_at_batch_ops_per_byte():
    # Each weight (2 bytes in FP16) feeds one multiply-add (2 FLOPs) per sequence, so the weight
    # matmuls do `batch` ops per byte and cross the H100's 295.3 at batch 296.
    assert roofline.decode_critical_batch(TOY, 1000, gpu="H100-SXM", part="weights") == math.ceil(989.4 / 3.35)
    # In FP8 weights are 1 byte and the ridge doubles: the same batch.
    assert roofline.decode_critical_batch(TOY, 1000, gpu="H100-SXM", dtype="fp8", part="weights") == 296


def test_whole_step_critical_batch_matches_the_closed_form():
    # intensity(b) = b f / (W + b c kv) >= r  <=>  b >= r W / (f - r c kv), when f > r c kv.
    r, W = H100.ops_per_byte("fp16"), 2e9
    for c in (1, 16, 64):
        f, kv = TOY.flops_per_token(c), c * TOY.kv_cache_bytes_per_token("fp16")
        expected = math.ceil(r * W / (f - r * kv))
        assert roofline.decode_critical_batch(TOY, c) == expected
    # With a long context the KV reads cap the intensity below the ridge: never compute bound.
    c = 4096
    assert TOY.flops_per_token(c) / (c * TOY.kv_cache_bytes_per_token("fp16")) < r
    assert roofline.decode_critical_batch(TOY, c) is None


def test_batching_raises_decode_intensity():
    xs = [roofline.decode(TOY, 512, batch=b).intensity for b in (1, 2, 8, 64, 512)]
    assert xs == sorted(xs) and xs[-1] > 50 * xs[0]


def test_moe_weight_reads_grow_from_active_to_total():
    moe = ModelConfig.from_numbers("moe", 100e9, 10e9, n_layers=8, n_heads=8, n_kv_heads=8, head_dim=64, n_experts=64, experts_per_token=4)
    one = roofline.weight_bytes_touched(moe, 1, 2)
    assert one == pytest.approx(2 * 10e9)  # one token reads exactly the active weights
    reads = [roofline.weight_bytes_touched(moe, t, 2) for t in (1, 4, 16, 64, 256, 4096)]
    assert reads == sorted(reads) and reads[-1] == pytest.approx(2 * 100e9, rel=1e-6)
    # per expert (100 - 10) / (64 - 4) = 1.5B, shared 100 - 96 = 4B; 2 tokens miss an expert w.p. (60/64)^2
    assert roofline.weight_bytes_touched(moe, 2, 2) == pytest.approx(2 * (4e9 + 64 * 1.5e9 * (1 - (60 / 64) ** 2)))


def test_moe_weight_reads_use_each_layer_s_own_k():
    """Hunyuan MoE with k = 1 in two layers and 4 in the other two (moe_topk per layer): by hand, each layer's
    experts are touched by T tokens with probability 1 - (1 - k/E)^T, with that layer's k."""
    d, f, E, v = 64, 32, 8, 100
    ks = [1, 4, 1, 4]
    c = ModelConfig.from_hf({"architectures": ["HunYuanMoEV1ForCausalLM"], "num_hidden_layers": 4, "num_experts": E,
                             "moe_topk": ks, "hidden_size": d, "intermediate_size": f, "num_attention_heads": 4,
                             "num_key_value_heads": 2, "head_dim": 16, "vocab_size": v, "tie_word_embeddings": True})
    expert = 3 * d * f  # gate, up, down; no bias
    total = c.params().total
    assert c.params().active == total - sum(E - k for k in ks) * expert
    shared = total - len(ks) * E * expert  # everything but the routed experts: read whatever the batch
    for T in (1, 2, 7, 300):
        touched = sum(E * expert * (1 - (1 - k / E) ** T) for k in ks)
        assert roofline.weight_bytes_touched(c, T, 2) == pytest.approx(2 * (shared + touched), rel=1e-12)
    assert roofline.weight_bytes_touched(c, 1, 2) == pytest.approx(2 * c.params().active, rel=1e-12)


def test_llama_prefill_is_compute_bound_and_decode_memory_bound():
    # Chapter 2.4.2 on a shipped config: prefill sets TTFT and is compute bound; decode sets TPOT and is
    # memory bound. Untied embedding: a lookup, so decode reads total - embedding weights.
    config = models.load_config("Llama-3.1-8B")
    p = config.params()
    pre = roofline.prefill("Llama-3.1-8B", 4096, gpu="H100-SXM")
    dec = roofline.decode("Llama-3.1-8B", 4096, gpu="H100-SXM")
    assert pre.bound == "compute" and dec.bound == "memory"
    assert dec.weight_bytes == 2 * (p.total - p.embedding)
    assert dec.kv_bytes == 4096 * 2 * 32 * 8 * 128 * 2  # Llama-3.1-8B: 32 layers, 8 KV heads of 128
    assert pre.time == pytest.approx(pre.flops / 989.4e12)  # compute bound: the compute roof sets TTFT
    assert dec.time == pytest.approx(dec.bytes / 3.35e12)  # memory bound: bandwidth sets TPOT
    assert 200 < 1 / dec.time < 230  # about 16 GB per token at 3.35 TB/s


@pytest.mark.parametrize("name, P", [("Llama-3.1-8B", 300), ("Mistral-7B-v0.1", 4500)])
def test_prompt_flops_equal_the_sum_over_positions(name, P):
    # Mistral-7B-v0.1 has a 4096-token sliding window, so its per-token cost is not affine past 4096.
    # With every position's logits (scoring, training-style) the prompt costs the sum over its positions;
    # with the last position's only (serving, the default) the LM head runs once.
    config = models.load_config(name)
    brute = sum(config.flops_per_token(i) for i in range(1, P + 1))
    assert roofline.prompt_flops(config, P, logits="all") == pytest.approx(brute, rel=1e-12)
    lm_head = 2 * config.vocab_size * config.hidden_size
    assert roofline.prompt_flops(config, P) == pytest.approx(brute - (P - 1) * lm_head, rel=1e-12)
    with pytest.raises(ValueError, match="logits"):
        roofline.prompt_flops(config, P, logits="first")


# Llama 3.1 8B by hand from its shipped config.json (no chapter2 code): the weights a token multiplies by,
# the LM head, the attention FLOPs per key, the KV cache and the activations per token.
LLAMA = json.loads((Path(models.__file__).parent.parent / "data" / "configs" / "Llama-3.1-8B.json").read_text())
H, V, L = LLAMA["hidden_size"], LLAMA["vocab_size"], LLAMA["num_hidden_layers"]
NQ, NKV = LLAMA["num_attention_heads"], LLAMA["num_key_value_heads"]
D = H // NQ
BLOCK = H * NQ * D + 2 * H * NKV * D + NQ * D * H + 3 * H * LLAMA["intermediate_size"]  # q, k, v, o; gate, up, down
MATMUL_NO_HEAD = L * BLOCK                   # per token, without the LM head
LM_HEAD = V * H
STREAMED = L * (BLOCK + 2 * H) + LM_HEAD + H  # all but the input embedding (norms included)
KV_TOKEN = 2 * L * NKV * D * 2               # K and V, every layer, FP16
ATTN_KEY = 4 * L * NQ * D                    # q·k and p·v per key


def test_prefill_runs_the_lm_head_on_the_last_position_only():
    # A server needs only the last position's logits: P tokens through every block, one LM head.
    P = 4096
    by_hand = sum(2 * MATMUL_NO_HEAD + ATTN_KEY * i for i in range(1, P + 1)) + 2 * LM_HEAD
    pre = roofline.prefill("Llama-3.1-8B", P)
    assert pre.flops == pytest.approx(by_hand, rel=1e-12)
    # the option for scoring a prompt (logits at every position) adds (P - 1) LM heads
    every = roofline.prefill("Llama-3.1-8B", P, logits="all")
    assert every.flops - pre.flops == pytest.approx((P - 1) * 2 * LM_HEAD, rel=1e-12)
    with pytest.raises(ValueError, match="logits"):
        roofline.prefill("Llama-3.1-8B", P, logits="none")


def test_bytes_are_weights_kv_cache_and_activations_moved_once():
    # The chapter's convention: weights read once, the KV cache read or written once, and the activations:
    # every block's input and output hidden state, plus the logits written, 2 bytes each in FP16.
    P, c, b = 4096, 4096, 64
    pre = roofline.prefill("Llama-3.1-8B", P)
    assert pre.weight_bytes == 2 * STREAMED
    assert pre.kv_bytes == P * KV_TOKEN
    assert pre.activation_bytes == (2 * L * P * H + V) * 2
    assert pre.bytes == 2 * STREAMED + P * KV_TOKEN + (2 * L * P * H + V) * 2
    every = roofline.prefill("Llama-3.1-8B", P, logits="all")
    assert every.activation_bytes == (2 * L * P * H + P * V) * 2
    dec = roofline.decode("Llama-3.1-8B", c, batch=b)
    assert dec.activation_bytes == b * (2 * L * H + V) * 2
    assert dec.bytes == 2 * STREAMED + b * c * KV_TOKEN + b * (2 * L * H + V) * 2
    assert roofline.activation_bytes("Llama-3.1-8B", 10, 2, "fp8") == 2 * L * 10 * H + 2 * V
    # a model given by plain numbers has no hidden or vocabulary size: no activations
    assert roofline.decode(TOY, 100).activation_bytes == 0


def test_a_decode_step_in_parts_and_attentions_two_shares():
    # Decode is memory bound, so attention's share of the bytes (its KV cache) sets its share of the time;
    # its share of the FLOPs is what a FLOP count suggests. Llama 3.1 8B, batch 1, 4,096-token context.
    c = 4096
    dec = roofline.decode("Llama-3.1-8B", c)
    weights, kv, acts = dec.parts
    assert [p.name for p in dec.parts] == ["weights", "KV cache", "activations"]
    assert weights.flops == 2 * (MATMUL_NO_HEAD + LM_HEAD) and weights.bytes == 2 * STREAMED
    assert kv.flops == ATTN_KEY * c and kv.bytes == c * KV_TOKEN
    assert acts.flops == 0 and acts.bytes == (2 * L * H + V) * 2
    assert sum(p.flops for p in dec.parts) == dec.flops and sum(p.bytes for p in dec.parts) == dec.bytes
    flop_share = ATTN_KEY * c / (2 * (MATMUL_NO_HEAD + LM_HEAD) + ATTN_KEY * c)
    byte_share = c * KV_TOKEN / (2 * STREAMED + c * KV_TOKEN + (2 * L * H + V) * 2)
    assert dec.attention_flop_share == pytest.approx(flop_share) and dec.attention_byte_share == pytest.approx(byte_share)
    assert round(100 * flop_share) == 13 and round(100 * byte_share, 1) == 3.5


def test_short_prefills_are_memory_bound_up_to_about_the_ops_per_byte():
    # Intensity of a P-token Llama 3.1 8B prefill by hand; it crosses the H100's 989.4 / 3.35 near P = 295.
    def intensity(P):
        flops = sum(2 * MATMUL_NO_HEAD + ATTN_KEY * i for i in range(1, P + 1)) + 2 * LM_HEAD
        nbytes = 2 * STREAMED + P * KV_TOKEN + (2 * L * P * H + V) * 2
        return flops / nbytes

    ridge = 989.4 / 3.35
    crossover = next(P for P in range(1, 10_000) if intensity(P) >= ridge)
    assert roofline.prefill_critical_tokens("Llama-3.1-8B", gpu="H100-SXM", dtype="fp16") == crossover == 321
    assert roofline.prefill("Llama-3.1-8B", crossover - 1).bound == "memory"
    assert roofline.prefill("Llama-3.1-8B", crossover).bound == "compute"
    assert ridge < crossover < 1.1 * ridge  # "about the ops:byte ratio", in tokens processed together
    # two prompts per pass share one read of the weights: each may be about half as long
    assert roofline.prefill_critical_tokens("Llama-3.1-8B", batch=2) in range(crossover // 2 - 5, crossover // 2 + 5)
    assert roofline.prefill_critical_tokens(TOY, gpu=custom_gpu(1e9, 1e-6), max_tokens=64) is None


def test_tensor_parallel_splits_time_and_memory():
    one = roofline.decode("Qwen3-235B-A22B", 2048, batch=8)
    eight = roofline.decode("Qwen3-235B-A22B", 2048, batch=8, n_gpus=8)
    assert not one.fits and eight.fits  # 235B in FP16 is 470 GB: more than 80 GB, less than 640 GB
    assert eight.roofline_time == pytest.approx(one.time / 8)
    # and the eight pay for tensor parallelism: 2 all-reduces in each of the 94 layers, each of 8 tokens x 4,096
    # hidden x 2 bytes, a ring of 8 H100s on NVLink 4: 14 steps of 0.6 us + 7/4 x 65,536 bytes at 450 GB/s each way
    each = 14 * 0.6e-6 + 7 / 4 * 65536 / 450e9
    assert eight.communication_s == pytest.approx(2 * 94 * each)
    assert eight.time == pytest.approx(one.time / 8 + 2 * 94 * each)
    assert one.communication_s == 0 and one.link == "" and eight.link == "NVLink 4"


def test_prefill_and_decode_reject_bad_input():
    with pytest.raises(ValueError, match="batch"):
        roofline.decode(TOY, 10, batch=0)
    with pytest.raises(TypeError, match="prompt_tokens"):
        roofline.prefill(TOY, "long")
    with pytest.raises(TypeError, match="model"):
        roofline.decode(object(), 10)
    with pytest.raises(ValueError, match="shipped configs"):
        roofline.decode("GPT-7", 10)
    with pytest.raises(ValueError, match="part"):
        roofline.decode_critical_batch(TOY, 10, part="attention")
    with pytest.raises(ValueError, match="experts_per_token"):
        ModelConfig.from_numbers("x", 1e9, 1e8, 2, 2, 2, 2, n_experts=2, experts_per_token=4)
    with pytest.raises(ValueError, match="params_active"):
        ModelConfig.from_numbers("x", 1e9, 2e9, 2, 2, 2, 2)


# --------------------------------------------------------------------------- calculators


def test_roofline_calculator_shows_the_library_values():
    out = calculators.compute("roofline", {"model": "Llama-3.1-8B", "prompt": "4096", "context": "4096", "batch": "1"})
    pre = roofline.prefill("Llama-3.1-8B", 4096)
    dec = roofline.decode("Llama-3.1-8B", 4096)
    bars = dict(out["intensity"])
    assert bars["Prefill, 4,096 tokens"] == pytest.approx(pre.intensity, rel=1e-3)
    assert bars["Decode, batch 1, 4,096-token context"] == pytest.approx(dec.intensity, rel=1e-3)  # context named
    assert bars["Standard attention"] == pytest.approx(8_640_266_240 / 138_412_032, rel=1e-4)  # 62.42
    assert out["ttft"] == duration(pre.time)
    assert out["tpot"].startswith(duration(dec.time))
    assert "compute bound" in out["prefill"] and "memory bound" in out["decode"]
    assert "a batch of about 296 or more" in out["critical"]
    assert out["crossover"].startswith("a prompt of about 321 tokens")
    # attention: 13 % of the FLOPs, 3.5 % of the bytes (KV cache 4,096 x 131,072 bytes = 537 MB)
    assert "KV cache 537 MB (3.5 % of the bytes, 13 % of the FLOPs)" in out["parts"]
    every = calculators.compute("roofline", {"logits": "all"})
    assert every["ttft"] == duration(roofline.prefill("Llama-3.1-8B", 4096, logits="all").time)


def test_roofline_calculator_takes_a_custom_gpu():
    out = calculators.compute("roofline", {"gpu": "custom", "custom_tflops": "100", "custom_tb_s": "1"})
    gpu = custom_gpu(100, 1)
    assert out["ttft"] == duration(roofline.prefill("Llama-3.1-8B", 4096, gpu=gpu).time)


def test_batching_slider_raises_intensity_until_the_ridge():
    def bars(batch):
        return dict(calculators.compute("decode_batching", {"batch": str(batch)})["bars"])

    small, large = bars(1), bars(1024)
    assert large["Weight matmuls only"] > large["H100-SXM ops:byte"] > small["Weight matmuls only"]
    # the bars name the context, the worked example's 4,096 tokens by default
    one, many = small["Decode step, batch 1, 4,096-token context"], large["Decode step, batch 1,024, 4,096-token context"]
    # the step's intensity climbs towards, and stays under, one sequence's FLOPs over its KV and activation bytes
    ceiling = (2 * (MATMUL_NO_HEAD + LM_HEAD) + ATTN_KEY * 4096) / (4096 * KV_TOKEN + (2 * L * H + V) * 2)
    assert 25 * one < many < ceiling < 35
    out = calculators.compute("decode_batching", {"batch": "64"})
    assert out["shares"].startswith("13 % of the FLOPs but 70 % of the bytes")
    assert out["bytes"].endswith("50 MB of activations")  # 64 x (2 x 32 x 4,096 + 128,256) x 2 bytes


def test_calculator_errors_are_messages_not_crashes():
    bad = json.loads(calculators.compute_json("roofline", json.dumps({"gpu": "A100-SXM", "dtype": "fp8"})))
    assert bad["ok"] is False and "FP8" in bad["message"]
    bad = json.loads(calculators.compute_json("decode_batching", json.dumps({"batch": "0"})))
    assert bad["ok"] is False and bad["field"] == "batch"


def test_roofline_calculator_takes_formats_and_serving_setups():
    # int4 weights (4.125 bits with group-128 scales) under BF16 math: the library's step, and the page says so
    out = calculators.compute("roofline", {"dtype": "bf16", "weight_dtype": "int4"})
    dec = roofline.decode("Llama-3.1-8B", 4096, dtype="bf16", weight_dtype="int4")
    assert out["tpot"].startswith(duration(dec.time)) and "weights int4, KV cache bf16" in out["memory"]
    fp4 = calculators.compute("roofline", {"gpu": "B200", "dtype": "fp4"})
    assert fp4["tpot"].startswith(duration(roofline.decode("Llama-3.1-8B", 4096, gpu="B200", dtype="fp4").time))
    assert "weights nvfp4, KV cache fp8" in fp4["memory"]
    # replicated weights: a copy per GPU, each GPU decoding its share of the batch
    rep = calculators.compute("roofline", {"n_gpus": "2", "parallel": "replicated", "batch": "8"})
    assert "a copy per GPU" in rep["memory"]
    assert rep["tpot"].startswith(duration(roofline.decode("Llama-3.1-8B", 4096, batch=4).time))
    # combinations the hardware or the formats rule out are messages, naming what is wrong
    with pytest.raises(calculators.FieldError, match="H100-SXM has no FP4"):
        calculators.compute("roofline", {"dtype": "fp4"})
    with pytest.raises(calculators.FieldError, match="weight_dtype 'bf16' is wider than the math dtype 'fp8'"):
        calculators.compute("roofline", {"dtype": "fp8", "weight_dtype": "bf16"})
