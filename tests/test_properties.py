"""Property tests (hypothesis) for the model arithmetic and the numpy transformer."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from chapter2.models import ModelConfig
from chapter2.models.transformer import Transformer, random_weights


def _llama(hidden=64, layers=2, heads=4, kv_heads=2, ffn=96, vocab=96, window=None, arch="LlamaForCausalLM", **extra):
    config = {
        "architectures": [arch], "model_type": "mistral" if window else "llama", "hidden_size": hidden,
        "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv_heads,
        "intermediate_size": ffn, "vocab_size": vocab, "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "tie_word_embeddings": False, "hidden_act": "silu", **extra,
    }
    if window:
        config["sliding_window"] = window
    return ModelConfig.from_hf(config)


@settings(max_examples=40, deadline=None)
@given(hidden=st.sampled_from([64, 128, 256, 4096]), layers=st.integers(1, 64), heads=st.sampled_from([4, 8, 16, 32]),
       ffn=st.integers(1, 20000), vocab=st.integers(2, 200_000))
def test_parameter_counts_grow_with_width_and_depth(hidden, layers, heads, ffn, vocab):
    base = _llama(hidden, layers, heads, heads // 2, ffn, vocab).params()
    deeper = _llama(hidden, layers + 1, heads, heads // 2, ffn, vocab).params()
    wider_ffn = _llama(hidden, layers, heads, heads // 2, ffn + 1, vocab).params()
    wider = _llama(hidden * 2, layers, heads, heads // 2, ffn, vocab).params()
    assert base.active == base.total  # dense: every parameter is used for every token
    assert base.total < deeper.total and base.total < wider_ffn.total and base.total < wider.total
    # one more layer adds exactly one block's parameters: the per-layer count is a constant
    deeper2 = _llama(hidden, layers + 2, heads, heads // 2, ffn, vocab).params()
    assert deeper2.total - deeper.total == deeper.total - base.total
    # one more FFN unit adds 3 x hidden weights (gate, up, down) in every layer
    assert wider_ffn.total - base.total == 3 * hidden * layers


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_prompt=st.integers(1, 9), n_decode=st.integers(1, 6),
       kv_heads=st.sampled_from([1, 2, 4]), window=st.sampled_from([None, 3, 5]))
def test_cached_decode_equals_full_recomputation(seed, n_prompt, n_decode, kv_heads, window):
    config = _llama(kv_heads=kv_heads, window=window, arch="MistralForCausalLM" if window else "LlamaForCausalLM")
    model = Transformer(config, random_weights(config, seed=seed, std=0.2), dtype=np.float64)
    ids = np.random.default_rng(seed).integers(0, config.vocab_size, n_prompt + n_decode)
    logits, cache = model.prefill(ids[:n_prompt])
    stepwise = [logits[-1]]
    for token in ids[n_prompt:-1]:
        step, cache = model.decode(int(token), cache)
        stepwise.append(step)
    full, _ = model.prefill(ids[:-1])
    np.testing.assert_allclose(np.stack(stepwise), full[n_prompt - 1:], rtol=1e-9, atol=1e-9)
