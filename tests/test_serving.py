"""chapter2.serving against cases worked by hand: paged blocks, prefix caching, chunked prefill, speculative decoding.

The expected numbers are written out below from the formulas of the papers (PagedAttention arXiv:2309.06180,
Sarathi-Serve arXiv:2403.02310, Leviathan et al. arXiv:2211.17192, EAGLE arXiv:2401.15077, DeepSeek-V3
arXiv:2412.19437), on toy models given by plain numbers (every FLOP and byte countable on paper) and on a
round-number GPU, never from the code under test.
"""

from __future__ import annotations

import json

import pytest
from _llm_configs import COUNTS, CONFIGS

from chapter2 import serving as sv
from chapter2.hardware import custom_gpu
from chapter2.models import ModelConfig

# A round GPU: 1,000 TFLOP/s and 1 TB/s (ops:byte 1,000), 80 GB.
GPU = custom_gpu(1000, 1, 80)
PEAK, BW = 1e15, 1e12

# A toy dense model: 1e9 weights (2e9 bytes in FP16), 2 layers of 4 heads of 8 (4 KV heads): each key costs
# 2 (QK) + 2 (PV) FLOPs x 8 x 4 heads x 2 layers = 256 FLOPs, each token caches 2 x 2 x 4 x 8 x 2 = 256 bytes.
# It has no vocabulary or hidden size, so no LM head and no activation bytes.
TOY = ModelConfig.from_numbers("toy", 1e9, 1e9, 2, 4, 4, 8)
W, PER_KEY, KV_TOKEN = 2e9, 256, 256


def causal(first: int, last: int) -> int:
    """Keys attended by positions first..last of a causal pass: first + ... + last."""
    return sum(range(first, last + 1))


# -- paged blocks ------------------------------------------------------------------------------------------
def test_blocks_and_the_last_blocks_waste():
    assert sv.blocks(1000, 16) == 63  # 62.5 blocks -> 63, holding 1,008 slots
    assert sv.last_block_waste(1000, 16) == 8
    assert (sv.blocks(1024, 16), sv.last_block_waste(1024, 16)) == (64, 0)
    assert (sv.blocks(1, 16), sv.last_block_waste(1, 16)) == (1, 15)
    assert (sv.blocks(0, 16), sv.last_block_waste(0, 16)) == (0, 0)
    # lengths 1..16 leave 15, 14, ..., 1, 0 empty slots: 120 / 16 = 7.5 on average, (B - 1) / 2
    assert [sv.last_block_waste(n, 16) for n in range(1, 17)] == list(range(15, -1, -1))
    assert sv.mean_last_block_waste(16) == 7.5 and sv.mean_last_block_waste(1) == 0
    assert sv.VLLM_BLOCK_SIZE == 16


def test_shared_prefix_is_its_whole_blocks():
    assert sv.shared_prefix_tokens(2000, 16) == 2000  # 125 whole blocks
    assert sv.shared_prefix_tokens(2010, 16) == 2000  # the 126th block holds 10 tokens: each sequence's own
    assert sv.shared_prefix_tokens(15, 16) == 0
    assert sv.shared_prefix_tokens(2010, 1) == 2010  # SGLang's radix tree: token by token


def test_paged_fit_counts_by_hand():
    pool = sv.KVPool(free_bytes=1_000_000, kv_bytes_per_token=100)
    fit = sv.paged_fit(pool, 1000, block_size=16, reserved_tokens=4000)
    assert fit.block_bytes == 1600 and fit.total_blocks == 625
    assert (fit.blocks_per_sequence, fit.waste_tokens) == (63, 8)
    assert fit.waste_share == pytest.approx(8 / 1008)
    assert fit.sequences_reserved == 2  # 1e6 / (4,000 x 100) = 2.5
    assert fit.sequences_paged == 9  # 1e6 / (63 x 1,600 = 100,800) = 9.92
    assert fit.sequences_exact == 10  # 1e6 / 100,000
    assert fit.sequences == fit.sequences_paged  # no prefix shared
    # a 512-token prefix (32 whole blocks, 51,200 bytes) shared by every sequence: 31 blocks of their own each
    shared = sv.paged_fit(pool, 1000, block_size=16, prefix_tokens=512, hit_rate=1.0)
    assert shared.shared_bytes == 51_200 and shared.blocks_per_sequence_shared == 31
    assert shared.sequences == 19  # (1e6 - 51,200) / (31 x 1,600 = 49,600) = 19.13
    # half of them share it: 63 - 16 = 47 blocks each on average, 75,200 bytes
    half = sv.paged_fit(pool, 1000, block_size=16, prefix_tokens=512, hit_rate=0.5)
    assert half.sequences == 12  # 948,800 / 75,200 = 12.6
    # a recurrent state of 400 bytes per sequence, outside the blocks
    hybrid = sv.paged_fit(sv.KVPool(1_000_000, 100, fixed_bytes=400), 1000, block_size=16)
    assert hybrid.sequences_paged == 9 and hybrid.sequences_exact == 9  # 1e6 / 100,400 = 9.96


def test_kv_pool_of_llama_8b_on_an_h100():
    llama = CONFIGS["Llama-3.1-8B"]
    pool = sv.kv_pool("Llama-3.1-8B", gpu="H100-SXM")
    weights = 2 * COUNTS["Llama-3.1-8B"][0]  # BF16 bytes of every weight: 16,060,522,496
    assert weights == 16_060_522_496
    assert pool.free_bytes == pytest.approx(0.9 * 80e9 - weights)  # 55,939,477,504
    per_token = 2 * llama["num_hidden_layers"] * llama["num_key_value_heads"] * 128 * 2
    assert pool.kv_bytes_per_token == per_token == 131_072 and pool.fixed_bytes == 0
    fit = sv.paged_fit(pool, 1000, reserved_tokens=512 + 4096)
    assert fit.total_blocks == 26_674  # 55,939,477,504 / 2,097,152 = 26,674.0
    assert fit.sequences_paged == 423  # 26,674 // 63
    assert fit.sequences_exact == 426  # 55,939,477,504 / 131,072,000 = 426.8
    assert fit.sequences_reserved == 92  # / (4,608 x 131,072) = 92.6


def test_paged_fit_refuses_bad_input():
    pool = sv.KVPool(1e6, 100)
    with pytest.raises(ValueError, match="reserved_tokens"):
        sv.paged_fit(pool, 1000, reserved_tokens=999)
    with pytest.raises(ValueError, match="prefix_tokens"):
        sv.paged_fit(pool, 1000, prefix_tokens=1001)
    with pytest.raises(ValueError, match="hit_rate"):
        sv.paged_fit(pool, 1000, hit_rate=1.5)
    with pytest.raises(ValueError, match="block_size"):
        sv.blocks(10, 0)
    with pytest.raises(TypeError, match="pool"):
        sv.paged_fit(1e6, 1000)
    with pytest.raises(ValueError, match="kv_bytes_per_token"):
        sv.KVPool(1e6, 0)


# -- prefix caching ---------------------------------------------------------------------------------------
def test_cached_prefill_counts_only_the_new_tokens():
    # 5 new tokens after 10 cached: positions 11..15, each 2e9 FLOPs of weights + 256 per key it attends
    est = sv.cached_prefill(TOY, 10, 5, gpu=GPU)
    assert est.flops == pytest.approx(5 * 2e9 + PER_KEY * causal(11, 15))  # 1e10 + 16,640
    assert est.weight_bytes == W
    assert est.kv_bytes == 15 * KV_TOKEN  # 10 read, 5 written: 3,840
    assert est.activation_bytes == 0
    assert est.time == pytest.approx((W + 3840) / BW)  # memory bound: 2e9 bytes against 1e10 FLOPs
    assert sv.cached_prefill(TOY, 0, 5, gpu=GPU).flops == pytest.approx(5 * 2e9 + PER_KEY * causal(1, 5))


def test_cached_prefill_keeps_one_lm_head():
    # Llama 3.1 8B: positions 2001..2500 with the last one's logits, against the whole prompt minus its first 2000
    llama = CONFIGS["Llama-3.1-8B"]
    lm = 2 * llama["vocab_size"] * llama["hidden_size"]
    whole = sv.cached_prefill("Llama-3.1-8B", 0, 2500)
    head = sv.cached_prefill("Llama-3.1-8B", 0, 2000)
    hit = sv.cached_prefill("Llama-3.1-8B", 2000, 500)
    # whole and head each carry one LM head; their difference carries none, the hit one
    assert hit.flops == pytest.approx(whole.flops - head.flops + lm)


def test_prefix_cache_by_hit_rate():
    pc = sv.prefix_cache(TOY, 100, 64, hit_rate=0.75, block_size=16, gpu=GPU)
    assert pc.cached_tokens == 64
    assert pc.miss.flops == pytest.approx(100 * 2e9 + PER_KEY * causal(1, 100))
    assert pc.hit.flops == pytest.approx(36 * 2e9 + PER_KEY * causal(65, 100))
    saved = 0.75 * (64 * 2e9 + PER_KEY * causal(1, 64)) / (100 * 2e9 + PER_KEY * causal(1, 100))
    assert pc.flops_saved == pytest.approx(saved)  # about 0.48
    assert pc.token_hit_rate == pytest.approx(0.75 * 64 / 100)
    # both memory bound on the round GPU (100 tokens x 2e9 = 2e11 FLOPs < 2e9 bytes x 1,000): the same time
    assert pc.miss.time == pytest.approx((W + 100 * KV_TOKEN) / BW)
    assert pc.hit.time == pytest.approx((W + 100 * KV_TOKEN) / BW)
    assert pc.ttft == pytest.approx((W + 100 * KV_TOKEN) / BW)
    # a compute-bound prompt (1e6 weights, 2e6 bytes): the hit saves the skipped tokens' time
    small = ModelConfig.from_numbers("small", 1e6, 1e6, 2, 4, 4, 8)
    pc = sv.prefix_cache(small, 4000, 3000, hit_rate=0.5, block_size=16, gpu=GPU)
    assert pc.cached_tokens == 2992  # 187 whole blocks of 16
    miss = (4000 * 2e6 + PER_KEY * causal(1, 4000)) / PEAK  # 1.005e-5 s of FLOPs against 3.0e-6 s of bytes
    hit = (2e6 + 4000 * KV_TOKEN) / BW  # 3.0e-6 s of bytes against 2.9e-6 s of FLOPs: memory bound now
    assert (1008 * 2e6 + PER_KEY * causal(2993, 4000)) / PEAK < hit
    assert pc.miss.time == pytest.approx(miss) and pc.hit.time == pytest.approx(hit)
    assert pc.ttft == pytest.approx(0.5 * hit + 0.5 * miss)
    # the whole prompt shared: the last token is still computed (it gives the first output token)
    assert sv.prefix_cache(TOY, 64, 64, block_size=16, gpu=GPU).cached_tokens == 63


# -- chunked prefill ----------------------------------------------------------------------------------
def test_mixed_step_reads_the_weights_once():
    # 3 sequences decoding at context 20, and a chunk of 5 tokens after 10 cached
    step = sv.mixed_step(TOY, 5, 10, decode_batch=3, decode_context=20, gpu=GPU)
    decode_flops = 3 * (2e9 + PER_KEY * 20)
    chunk_flops = 5 * 2e9 + PER_KEY * causal(11, 15)
    assert step.flops == pytest.approx(decode_flops + chunk_flops)  # 1.6e10 + 32,000
    assert step.weight_bytes == W
    assert step.kv_bytes == 3 * 20 * KV_TOKEN + 15 * KV_TOKEN  # 15,360 + 3,840
    assert step.time == pytest.approx((W + 19_200) / BW)
    assert step.emitted == 3 and step.tokens == 8


def test_chunked_prefill_by_hand():
    # a 10-token prompt in chunks of 4, 4, 2, nothing else running: three passes, each reading the weights
    ch = sv.chunked_prefill(TOY, 10, 4, gpu=GPU)
    assert [s.tokens for s in ch.steps] == [4, 4, 2]
    assert [s.kv_bytes for s in ch.steps] == [4 * KV_TOKEN, 8 * KV_TOKEN, 10 * KV_TOKEN]
    assert ch.ttft == pytest.approx((3 * W + 22 * KV_TOKEN) / BW)
    assert ch.alone.time == pytest.approx((W + 10 * KV_TOKEN) / BW)
    assert ch.tpot_decode is None
    assert sum(s.flops for s in ch.steps) == pytest.approx(ch.alone.flops)  # chunking adds no FLOPs


def test_chunked_prefill_trades_ttft_for_tpot():
    # 64 sequences decode at context 1,000 on a model of 1e8 weights (2e8 bytes) beside a 4,096-token prompt
    medium = ModelConfig.from_numbers("medium", 1e8, 1e8, 2, 4, 4, 8)
    weights, running = 2e8, 64 * 1000 * KV_TOKEN
    decode = (weights + running) / BW  # their plain step: 2.16e-4 s of bytes against 1.3e-5 s of FLOPs

    def mixed(start, c):  # the decode step and the chunk: FLOPs over the peak or bytes over the bandwidth
        flops = 64 * (2e8 + PER_KEY * 1000) + c * 2e8 + PER_KEY * causal(start + 1, start + c)
        nbytes = weights + running + (start + c) * KV_TOKEN
        return max(flops / PEAK, nbytes / BW)

    whole = sv.chunked_prefill(medium, 4096, 4096, decode_batch=64, decode_context=1000, gpu=GPU)
    assert len(whole.steps) == 1
    assert whole.ttft == pytest.approx(mixed(0, 4096)) == pytest.approx(whole.tpot)  # everyone waits for it
    assert whole.tpot == pytest.approx((64 * (2e8 + 256_000) + 4096 * 2e8 + PER_KEY * causal(1, 4096)) / PEAK)
    chunked = sv.chunked_prefill(medium, 4096, 512, decode_batch=64, decode_context=1000, gpu=GPU)
    assert len(chunked.steps) == 8
    assert chunked.ttft == pytest.approx(sum(mixed(s, 512) for s in range(0, 4096, 512)))
    # each chunk of 512 rides in a memory-bound step: 1.2e-4 s of FLOPs under 2.2e-4 s of bytes
    assert chunked.tpot == pytest.approx((weights + running + 4096 * KV_TOKEN) / BW)
    assert chunked.tpot_decode == pytest.approx(decode)
    assert chunked.tpot < whole.tpot / 3 and chunked.ttft > 2 * whole.ttft  # the trade


# -- speculative decoding ----------------------------------------------------------------------------
def test_expected_tokens_per_step():
    assert sv.expected_tokens_per_step(0.8, 3) == pytest.approx(1 + 0.8 + 0.64 + 0.512)  # 2.952
    assert sv.expected_tokens_per_step(1.0, 4) == 5
    assert sv.expected_tokens_per_step(0.0, 4) == 1
    assert sv.expected_tokens_per_step(0.6, 0) == 1
    assert sv.expected_tokens_per_step(0.85, 1) == pytest.approx(1.85)  # DeepSeek-V3's MTP: one drafted token


def test_leviathan_speedup_and_the_best_draft_length():
    assert sv.leviathan_speedup(0.8, 3, 0.1) == pytest.approx(2.952 / 1.3)
    # E / (1 + 0.1 g) for g = 0..7 at a = 0.8: 1, 1.636, 2.033, 2.271, 2.401, 2.460, 2.470, 2.448
    table = [1.0, 1.8 / 1.1, 2.44 / 1.2, 2.952 / 1.3, 3.3616 / 1.4, 3.68928 / 1.5, 3.951424 / 1.6, 4.1611392 / 1.7]
    assert [sv.leviathan_speedup(0.8, g, 0.1) for g in range(8)] == pytest.approx(table)
    assert sv.best_draft_tokens(0.8, 0.1) == 6
    assert sv.best_draft_tokens(0.3, 0.5) == 0  # a poor, costly drafter: do not speculate (1.3 / 1.5 < 1)
    with pytest.raises(ValueError, match="acceptance"):
        sv.expected_tokens_per_step(1.2, 3)
    with pytest.raises(ValueError, match="drafter_cost"):
        sv.leviathan_speedup(0.8, 3, -1)


def test_speculative_decode_on_the_roofline():
    # batch 1 at context 1,000, 3 drafts kept with probability 0.8, each drafted at 0.1 of a plain step
    sd = sv.speculative_decode(TOY, 1000, draft_tokens=3, acceptance=0.8, drafter_cost=0.1, gpu=GPU)
    plain = (W + 1000 * KV_TOKEN) / BW  # weights + the cache of 999 earlier tokens and the new one
    verify = (W + 1003 * KV_TOKEN) / BW  # 4 positions: the cache of 999 read, 4 written
    assert sd.plain.time == pytest.approx(plain) and sd.verify.time == pytest.approx(verify)
    assert sd.verify.flops == pytest.approx(4 * 2e9 + PER_KEY * causal(1000, 1003))
    assert sd.step_time == pytest.approx(verify + 3 * 0.1 * plain)
    assert sd.speedup == pytest.approx(2.952 * plain / (verify + 0.3 * plain))
    assert sd.speedup == pytest.approx(sv.leviathan_speedup(0.8, 3, 0.1), rel=1e-5)  # verify costs a plain step
    assert sd.tokens_per_s == pytest.approx(2.952 / (verify + 0.3 * plain))
    # compute bound at a large batch: 4 positions cost 4 times the FLOPs, and speculation loses
    big = sv.speculative_decode(TOY, 1000, draft_tokens=3, acceptance=0.8, drafter_cost=0.1, batch=4096, gpu=GPU)
    flops_plain = 4096 * (2e9 + PER_KEY * 1000)
    flops_verify = 4096 * (4 * 2e9 + PER_KEY * causal(1000, 1003))
    assert big.plain.time == pytest.approx(flops_plain / PEAK)
    assert big.verify.time == pytest.approx(flops_verify / PEAK)
    assert big.speedup < 1


def _llama(hidden, intermediate, layers, heads, kv_heads, vocab=32_000) -> ModelConfig:
    return ModelConfig.from_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
        "intermediate_size": intermediate, "num_hidden_layers": layers, "num_attention_heads": heads,
        "num_key_value_heads": kv_heads, "vocab_size": vocab, "tie_word_embeddings": False}))


def test_draft_head_params_match_eagles_published_sizes():
    # EAGLE's README (github.com/SafeAILab/EAGLE, "EAGLE Weights"): 0.24B for Vicuna 7B, 0.37B for Vicuna 13B,
    # 0.99B for LLaMA2-Chat 70B. One decoder layer (q, k, v, o and the SwiGLU MLP) plus the 2h x h fusion:
    vicuna_7b = 4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096**2  # 235,929,600
    vicuna_13b = 4 * 5120**2 + 3 * 5120 * 13824 + 2 * 5120**2  # 369,623,040
    llama2_70b = 2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192**2  # 989,855,744
    assert sv.draft_head_params(_llama(4096, 11008, 32, 32, 32)) == vicuna_7b
    assert sv.draft_head_params(_llama(5120, 13824, 40, 40, 40)) == vicuna_13b
    assert sv.draft_head_params(_llama(8192, 28672, 80, 64, 8)) == llama2_70b
    assert (round(vicuna_7b / 1e9, 2), round(vicuna_13b / 1e9, 2), round(llama2_70b / 1e9, 2)) == (0.24, 0.37, 0.99)


def test_draft_head_cost_of_llama_8b():
    # one layer: 4096 x (4096 + 1024 + 1024 + 4096) + 3 x 4096 x 14336 = 218,103,808; fusion 2 x 4096^2;
    # the LM head 128,256 x 4096 = 525,336,576; a decode step multiplies by every weight but the embedding
    layer, fusion, head = 4096 * 10240 + 3 * 4096 * 14336, 2 * 4096**2, 128_256 * 4096
    step = COUNTS["Llama-3.1-8B"][0] - head - (2 * 32 + 1) * 4096  # less the embedding table and the norms
    assert sv.draft_head_cost("Llama-3.1-8B") == pytest.approx((layer + fusion + head) / step)  # 0.1035
    assert round(sv.draft_head_cost("Llama-3.1-8B"), 3) == 0.104


def test_deepseek_v3_mtp_matches_its_measured_speedup():
    # DeepSeek-V3 (arXiv:2412.19437, 5.4.3): one MTP token accepted 85 to 90 % of the time gives 1.8 times the
    # tokens per second. Its MTP module is one block, a 2h x h projection and the shared head; as a draft head
    # of the mean layer, c = (layer + 2h^2 + head) / (active weights a token multiplies by)
    c = CONFIGS["DeepSeek-V3"]
    h, vocab, layers = c["hidden_size"], c["vocab_size"], c["num_hidden_layers"]
    head = vocab * h
    norms = layers * 2 * h + 1 * h  # attention and MLP norms, final norm: in `active`, not multiplied by
    latent_norms = layers * (c["q_lora_rank"] + c["kv_lora_rank"])  # q_a_layernorm, kv_a_layernorm
    matmul = COUNTS["DeepSeek-V3"][1] - head - norms - latent_norms  # active less the embedding lookup and norms
    cost = ((matmul - head) / layers + 2 * h * h + head) / matmul
    assert sv.draft_head_cost("DeepSeek-V3") == pytest.approx(cost, rel=1e-3)
    assert round(cost, 3) == 0.044
    assert sv.leviathan_speedup(0.85, 1, cost) < 1.8 < sv.leviathan_speedup(0.90, 1, cost)  # 1.77 to 1.82
