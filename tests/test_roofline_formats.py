"""Weight formats apart from the math, MLA's two forms, and serving setups (chapter section 2.4; issue 23).

Every expected number is worked out here from the shipped config.json and the datasheet
figures, not from chapter2's own counts.
"""

import json
import math
from pathlib import Path

import pytest

from chapter2 import models, roofline
from chapter2.models import ModelConfig

CONFIGS = Path(models.__file__).parent.parent / "data" / "configs"
LLAMA = json.loads((CONFIGS / "Llama-3.1-8B.json").read_text())
H, V, L = LLAMA["hidden_size"], LLAMA["vocab_size"], LLAMA["num_hidden_layers"]
NQ, NKV = LLAMA["num_attention_heads"], LLAMA["num_key_value_heads"]
D = H // NQ
BLOCK = H * NQ * D + 2 * H * NKV * D + NQ * D * H + 3 * H * LLAMA["intermediate_size"]
STREAMED = L * (BLOCK + 2 * H) + V * H + H     # every weight a pass reads: all but the input embedding
TOTAL = STREAMED + V * H                        # every weight held
MATMUL = L * BLOCK + V * H                      # weights one token multiplies by
KV_NUMBERS = 2 * L * NKV * D                    # K and V per token, every layer
ATTN_KEY = 4 * L * NQ * D                       # q.k and p.v per cached key
ACT_NUMBERS = 2 * L * H + V                     # hidden states in and out of every block, and the logits


def test_fp4_decode_on_a_b200_by_hand():
    # NVIDIA Blackwell datasheet, HGX B200 column: FP4 18 PFLOPS with sparsity (9 dense), 7.7 TB/s.
    # FP4 math stores weights in NVFP4 (4 bits + one 8-bit scale per 16 = 4.5 bits), the cache in FP8,
    # activations in FP4 (half a byte).
    c = 4096
    est = roofline.decode("Llama-3.1-8B", c, gpu="B200", dtype="fp4")
    weights, kv, acts = STREAMED * 4.5 / 8, c * KV_NUMBERS * 1, ACT_NUMBERS * 0.5
    flops = 2 * MATMUL + ATTN_KEY * c
    assert (est.weight_bytes, est.kv_bytes, est.activation_bytes) == pytest.approx((weights, kv, acts))
    assert est.flops == pytest.approx(flops)
    assert est.time == pytest.approx(max(flops / 9000e12, (weights + kv + acts) / 7.7e12))
    assert est.bound == "memory" and (est.dtype, est.weight_dtype, est.kv_dtype) == ("fp4", "nvfp4", "fp8")
    assert round(1 / est.time) == round(7.7e12 / (weights + kv + acts))  # about 1,500 tokens/s
    assert est.memory_needed == pytest.approx(TOTAL * 4.5 / 8 + kv)


def test_int4_weights_with_bf16_math_on_an_h100_by_hand():
    # W4A16 (AWQ, GPTQ, Marlin): 4-bit weights with one 16-bit scale per 128 (4.125 bits), widened
    # to BF16 on chip, so the BF16 peak applies; the cache and activations stay BF16.
    c = 4096
    est = roofline.decode("Llama-3.1-8B", c, gpu="H100-SXM", dtype="bf16", weight_dtype="int4")
    weights, kv, acts = STREAMED * 4.125 / 8, c * KV_NUMBERS * 2, ACT_NUMBERS * 2
    assert est.bytes == pytest.approx(weights + kv + acts)
    assert est.time == pytest.approx((weights + kv + acts) / 3.35e12)
    assert est.compute_time == pytest.approx((2 * MATMUL + ATTN_KEY * c) / 989.4e12)
    bf16 = roofline.decode("Llama-3.1-8B", c, gpu="H100-SXM", dtype="bf16")
    assert bf16.time / est.time == pytest.approx((STREAMED * 2 + kv + acts) / (weights + kv + acts))


def test_every_weight_format_has_its_bits_and_scales():
    # bits per weight, scales included: NVFP4 4 + 8/16, MXFP4 4 + 8/32, int4 with group-128 FP16 scales 4 + 16/128
    expected = {"fp16": 16, "bf16": 16, "fp8": 8, "int8": 8, "int4": 4 + 16 / 128, "int4_zp": 4 + (16 + 4) / 128,
                "nvfp4": 4 + 8 / 16, "mxfp4": 4 + 8 / 32}
    assert dict(roofline.WEIGHT_FORMATS) == expected
    for fmt, bits in expected.items():
        math_dtype = "fp16" if bits > 8 else "fp8" if bits > 4.5 else "fp4"
        f = roofline.formats(math_dtype, fmt)
        assert (f.expert_bits, f.other_bits) == (bits, bits)


def test_int4_with_zero_points_sits_beside_int4_with_scales_alone():
    """issue 32: asymmetric int4 (GPTQ's and AWQ's checkpoints) keeps a 4-bit zero point beside each group's FP16
    scale: 4 + (16 + 4) / 128 = 4.15625 bits per weight, against 4 + 16 / 128 = 4.125 with the scale alone. The
    roofline costs both, and the calculator offers both, each with its bits."""
    from chapter2.calculators import get

    assert roofline.WEIGHT_FORMATS["int4_zp"] == 4 + (16 + 4) / 128 == 4.15625
    c = 4096
    zp = roofline.decode("Llama-3.1-8B", c, gpu="H100-SXM", dtype="bf16", weight_dtype="int4_zp")
    assert zp.weight_bytes == pytest.approx(STREAMED * 4.15625 / 8)
    assert zp.bytes == pytest.approx(STREAMED * 4.15625 / 8 + c * KV_NUMBERS * 2 + ACT_NUMBERS * 2)
    options = dict(next(f for f in get("roofline").fields if f.name == "weight_dtype").options)
    assert options["int4"].endswith("(4.125 bits)") and options["int4_zp"].endswith("(4.156 bits)")


def test_experts_and_the_rest_in_different_formats():
    # gpt-oss: MXFP4 routed experts, everything else BF16. One token reads the shared weights and k experts.
    cfg = json.loads((CONFIGS / "gpt-oss-120b.json").read_text())
    model = models.load_config("gpt-oss-120b")
    E, k = cfg["num_local_experts"], cfg["num_experts_per_tok"]
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    per_expert = layers * (h * 2 * inter + 2 * inter + inter * h + h)  # gate_up (fused, biased) and down (biased)
    p = model.params()
    assert (p.total - p.active) / (E - k) == pytest.approx(per_expert)
    mixed = {"experts": "mxfp4", "other": "bf16"}
    one = roofline.decode(model, 1, gpu="H100-SXM", dtype="bf16", weight_dtype=mixed)
    shared = p.total - E * per_expert - (p.embedding if p.lm_head else 0)
    assert one.weight_bytes == pytest.approx(shared * 2 + k * per_expert * 4.25 / 8)
    assert one.memory_needed - one.kv_bytes == pytest.approx((p.total - E * per_expert) * 2 + E * per_expert * 4.25 / 8)
    assert one.weight_dtype == "experts mxfp4, other bf16"


@pytest.mark.parametrize("kwargs, message", [
    (dict(dtype="fp6"), "dtype must be one of fp16, bf16, fp8, fp4, got 'fp6'"),
    (dict(weight_dtype="int3"), "weight_dtype must be one of fp16, bf16, fp8, int8, int4, int4_zp, nvfp4, mxfp4, got 'int3'"),
    (dict(kv_dtype="fp4"), "kv_dtype must be one of fp16, bf16, fp8, int8, got 'fp4'"),
    (dict(dtype="fp8", weight_dtype="bf16"), "weight_dtype 'bf16' is wider than the math dtype 'fp8'"),
    (dict(weight_dtype={"experts": "int4"}), "keys 'experts' and 'other'"),
    (dict(weight_dtype={"experts": "int4", "other": "q2"}), "weight_dtype\\['other'\\] must be one of"),
    (dict(parallel="sequence"), "parallel must be one of 'sharded', 'replicated', 'expert', 'pipeline', got 'sequence'"),
    (dict(parallel="expert"), "parallel='expert' needs a mixture of experts; Llama-3.1-8B has no routed experts"),
    (dict(mla="latent"), "mla must be one of 'absorbed', 'expanded', got 'latent'"),
    (dict(draft_tokens=3), "accepted_tokens must be given with draft_tokens"),
    (dict(draft_tokens=3, accepted_tokens=5), "accepted_tokens must be <= 4"),
])
def test_bad_formats_name_the_argument_the_value_and_the_choices(kwargs, message):
    with pytest.raises(ValueError, match=message):
        roofline.decode("Llama-3.1-8B", 100, **kwargs)


def test_fp4_math_needs_a_gpu_with_fp4():
    with pytest.raises(ValueError, match="H100-SXM has no FP4 tensor throughput"):
        roofline.decode("Llama-3.1-8B", 100, gpu="H100-SXM", dtype="fp4")


# --------------------------------------------------------------------------- MLA: prefill expanded, decode absorbed

DSV3 = json.loads((CONFIGS / "DeepSeek-V3.json").read_text())


def test_mla_prefill_is_costed_expanded_and_decode_absorbed():
    # Per key, all heads: expanded 2 H (qk_nope + qk_rope + v), absorbed 2 H (kv_lora + qk_rope + kv_lora).
    Hq, layers = DSV3["num_attention_heads"], DSV3["num_hidden_layers"]
    nope, rope, v, r = DSV3["qk_nope_head_dim"], DSV3["qk_rope_head_dim"], DSV3["v_head_dim"], DSV3["kv_lora_rank"]
    expanded_key, absorbed_key = 2 * Hq * (nope + rope + v), 2 * Hq * (r + rope + r)
    P = 32768
    causal_keys = layers * P * (P + 1) // 2
    pre = roofline.prefill("DeepSeek-V3", P, dtype="fp8")
    pre_absorbed = roofline.prefill("DeepSeek-V3", P, dtype="fp8", mla="absorbed")
    assert pre.attention_flops == expanded_key * causal_keys
    assert pre_absorbed.attention_flops == absorbed_key * causal_keys
    # the weight matmuls are the same in both forms, so the difference is attention's alone
    assert pre_absorbed.flops - pre.flops == (absorbed_key - expanded_key) * causal_keys
    assert 2.2 < pre_absorbed.time / pre.time < 2.4  # the absorbed form overstates a 32k prefill 2.3x
    # both write the 576-number latent per token and layer (in FP8: one byte each)
    assert pre.kv_bytes == pre_absorbed.kv_bytes == P * layers * (r + rope)
    dec = roofline.decode("DeepSeek-V3", 4096, dtype="fp8")
    assert dec.attention_flops == absorbed_key * layers * 4096
    # decoding expanded over a latent cache decompresses every cached latent again, at every step
    dec_expanded = roofline.decode("DeepSeek-V3", 4096, dtype="fp8", mla="expanded")
    again = 2 * r * Hq * (nope + v) * 4095 * layers
    assert dec_expanded.attention_flops == expanded_key * layers * 4096 + again
    assert dec_expanded.kv_bytes == dec.kv_bytes


# --------------------------------------------------------------------------- serving setups

TOY = ModelConfig.from_numbers("toy", 40e9, 40e9, n_layers=16, n_heads=16, n_kv_heads=4, head_dim=64)
KV_TOY = 2 * 16 * 4 * 64 * 2  # bytes per token in FP16


def test_replicated_weights_are_held_and_read_once_per_gpu():
    # 40B in FP16 = 80 GB: on one 80 GB H100 nothing else fits; sharded over 2 it leaves 80 GB for caches,
    # replicated over 2 it leaves none.
    sharded = roofline.decode(TOY, 1000, batch=8, n_gpus=2)
    replicated = roofline.decode(TOY, 1000, batch=8, n_gpus=2, parallel="replicated")
    kv = 8 * 1000 * KV_TOY
    assert sharded.memory_needed == pytest.approx(80e9 + kv) and sharded.fits
    assert replicated.memory_needed == pytest.approx(2 * 80e9 + kv) and not replicated.fits
    # each replica reads its own copy for its 4 sequences: twice the weight bytes, on twice the bandwidth
    assert replicated.weight_bytes == pytest.approx(2 * 80e9)
    assert replicated.time == pytest.approx((80e9 + 4 * 1000 * KV_TOY) / 3.35e12)
    assert sharded.roofline_time == pytest.approx((80e9 + kv) / (2 * 3.35e12))  # before its all-reduces
    # one sequence cannot be split between replicas: 8 GPUs decode it no faster than one
    one = roofline.decode(TOY, 1000, batch=1)
    assert roofline.decode(TOY, 1000, batch=1, n_gpus=8, parallel="replicated").time == pytest.approx(one.time)


def test_capacity_counts_each_copy_of_the_weights():
    small = ModelConfig.from_numbers("small", 8e9, 8e9, n_layers=16, n_heads=16, n_kv_heads=4, head_dim=64)
    c = 4096
    per_seq = c * KV_TOY
    sharded = roofline.request_timeline(small, c - 1, 1, n_gpus=4)
    replicated = roofline.request_timeline(small, c - 1, 1, n_gpus=4, parallel="replicated")
    assert sharded.capacity(c) == math.floor((4 * 80e9 - 16e9) / per_seq)
    assert replicated.capacity(c) == 4 * math.floor((80e9 - 16e9) / per_seq)
    assert replicated.weight_bytes == 4 * 16e9


def test_speculative_decoding_keeps_accepted_tokens_per_step():
    # 3 drafted tokens verified: 4 positions per sequence, weights and the cache read once; 2.5 kept on average.
    c, b = 1000, 2
    plain = roofline.decode(TOY, c, batch=b)
    spec = roofline.decode(TOY, c, batch=b, draft_tokens=3, accepted_tokens=2.5)
    attn = 4 * 16 * 16 * 64  # per key, all layers
    assert spec.flops == pytest.approx(b * (4 * 2 * 40e9 + attn * (c + c + 1 + c + 2 + c + 3)))
    assert spec.kv_bytes == pytest.approx(b * (c + 3) * KV_TOY)
    assert spec.weight_bytes == plain.weight_bytes
    assert spec.tokens_per_s == pytest.approx(b * 2.5 / spec.time)
    assert spec.tokens_per_s / plain.tokens_per_s == pytest.approx(2.5 * plain.time / spec.time)


def test_steady_state_serving_bound_by_hand():
    # Concurrency 16, 1,000 in, 200 out: per cycle 16 prefills and 16 x 199 decode tokens of FLOPs;
    # the weights read once per step (199 steps), each sequence's cache read at each step and written once.
    P, n, C = 1000, 200, 16
    attn = 4 * 16 * 16 * 64
    flops = C * (2 * 40e9 * P + attn * P * (P + 1) / 2) + C * sum(2 * 40e9 + attn * (P + k) for k in range(1, n))
    nbytes = (n - 1) * 80e9 + C * P * KV_TOY + C * sum((P + k) * KV_TOY for k in range(1, n))
    bound = roofline.serving_throughput(TOY, P, n, concurrency=C, n_gpus=4)
    expect = max(flops / (4 * 989.4e12), nbytes / (4 * 3.35e12))
    assert bound.roofline_time == pytest.approx(expect)
    assert bound.output_tokens_per_s_without_communication == pytest.approx(C * n / expect)
    # each of the 199 steps carries its 16 decode tokens and 1/199 of the 16 prompts through 2 all-reduces in each
    # of the 16 layers; the toy has no hidden size, so its attention width (16 heads x 64) stands in, 2 bytes a
    # number; a ring of 4 H100s: 6 steps of 0.6 us + 3/2 of the bytes at 450 GB/s each way
    step_bytes = (C + C * P / (n - 1)) * 16 * 64 * 2
    talk = (n - 1) * 2 * 16 * (6 * 0.6e-6 + 3 / 2 * step_bytes / 450e9)
    assert bound.communication_s == pytest.approx(talk)
    assert bound.time == pytest.approx(expect + talk)
    assert bound.output_tokens_per_s == pytest.approx(C * n / (expect + talk))
    # by default: the largest concurrency whose caches at P + n tokens fit beside the weights
    default = roofline.serving_throughput(TOY, P, n, n_gpus=4)
    assert default.concurrency == math.floor((4 * 80e9 - 80e9) / ((P + n) * KV_TOY))
    with pytest.raises(ValueError, match="fits beside the weights"):
        roofline.serving_throughput(TOY, P, n)


def test_replicated_serving_is_each_copy_serving_its_share():
    small = ModelConfig.from_numbers("small", 8e9, 8e9, n_layers=16, n_heads=16, n_kv_heads=4, head_dim=64)
    one = roofline.serving_throughput(small, 500, 100, concurrency=40)
    four = roofline.serving_throughput(small, 500, 100, concurrency=160, n_gpus=4, parallel="replicated")
    assert four.time == pytest.approx(one.time) and four.output_tokens_per_s == pytest.approx(4 * one.output_tokens_per_s)
    # by default each GPU fills its own memory beside its own copy of the weights
    default = roofline.serving_throughput(small, 500, 100, n_gpus=4, parallel="replicated")
    assert default.concurrency == 4 * math.floor((80e9 - 16e9) / (600 * KV_TOY))
