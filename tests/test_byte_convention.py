"""One byte convention for every forward pass of the chapter (section 2.4.2, #byte-convention).

`chapter2.roofline` (LLM prefill and decode) and `chapter2.diffusion` (denoiser passes) must count the bytes
of a pass the same way: weights read once, KV cache read or written once, activations (each block's input
and output hidden state, plus the pass's output) read or written once. They once differed: the 2.4 page
counted a denoiser's hidden states while roofline counted no activations for an LLM.
"""

from __future__ import annotations

import pytest

from chapter2 import diffusion, roofline
from chapter2.models import ModelConfig

# A Llama-layout LLM shaped like Qwen-Image's denoiser: 60 blocks of width 3,072 (24 heads of 128).
LAYERS, WIDTH, HEADS, VOCAB = 60, 3072, 24, 1000
DIT_SIZED = ModelConfig.from_hf({
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": WIDTH, "intermediate_size": 4 * WIDTH,
    "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": HEADS, "vocab_size": VOCAB,
}, name="dit-sized")


def test_an_llm_pass_and_a_denoiser_pass_count_hidden_states_alike():
    tokens, b = 4096, 2  # BF16
    pre = roofline.prefill(DIT_SIZED, tokens, dtype="bf16")
    dit = diffusion.denoiser_pass("Qwen-Image", tokens, dtype="bf16")
    hidden = 2 * LAYERS * tokens * WIDTH * b  # every block reads its input and writes its output once
    assert pre.activation_bytes == hidden + VOCAB * b  # + the last position's logits
    m = diffusion.MODELS["Qwen-Image"]
    assert (m.n_layers, m.width) == (LAYERS, WIDTH)
    assert dit.activation_bytes == hidden + tokens * 16 * 2 * 2 * b  # + the predicted latent, 16 x 2 x 2 per token
    # both totals are weights + KV cache + activations; a denoiser keeps no KV cache
    assert pre.bytes == pre.weight_bytes + pre.kv_bytes + pre.activation_bytes
    # Qwen-Image's 20,430,401,088 parameters (diffusers, from transformer/config.json)
    assert dit.bytes == dit.weight_bytes + dit.activation_bytes == 20_430_401_088 * b + dit.activation_bytes


def test_a_decode_step_counts_one_tokens_hidden_states_and_logits():
    dec = roofline.decode(DIT_SIZED, 100, batch=3, dtype="bf16")
    assert dec.activation_bytes == 3 * (2 * LAYERS * WIDTH + VOCAB) * 2


def test_the_chapters_times_use_those_bytes():
    # a pass's lower-bound time is max(FLOPs / peak, bytes / bandwidth), with the activations in the bytes
    dec = roofline.decode("Llama-3.1-8B", 4096)
    assert dec.memory_time == pytest.approx((dec.weight_bytes + dec.kv_bytes + dec.activation_bytes) / 3.35e12)
    p = diffusion.pipeline_cost("Wan2.1-T2V-14B", gpu="H100-SXM")
    per_pass = p.per_pass
    assert p.pass_time == pytest.approx(max(per_pass.flops / 989.4e12, (per_pass.weight_bytes + per_pass.activation_bytes)
                                            / 3.35e12))
