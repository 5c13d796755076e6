"""The token walk (chapter2.token_walk) against transformers' LlamaForCausalLM on the shipped tiny model.

The oracle is transformers' own forward on the same checkpoint with eager attention (the one that can
return its weights): `output_attentions=True` gives each layer's (B, H, N, N) weights and
`output_hidden_states=True` the embedding, the output of each layer but the last, and, in place of the
last layer's output, the final hidden state after the model's last RMSNorm (transformers records it so).
The oracle runs in float64; transformers still computes two things in float32 inside it (RMSNorm casts
to float32, and RoPE's angles come from a float32 inv_freq), so agreement is to about 1e-7, not 1e-15.
"""

import numpy as np
import pytest
from _oracles import require

torch = require("torch")
transformers = require("transformers")

from chapter2 import sampling, stepper, token_walk  # noqa: E402
from chapter2.models import TINY_LM_DIR  # noqa: E402
from chapter2.models.transformer import generate, load_pretrained  # noqa: E402

PROMPTS = (
    "The KV cache stores the keys and",
    "A",  # one token: the only weight is 1
    "Decode reads every weight once per step, so it is memory bound. Prefill runs the whole prompt in one "
    "pass, and the cache keeps every key and value of it for the steps after.",
)


@pytest.fixture(scope="module")
def hf_model():
    from transformers import LlamaForCausalLM

    return LlamaForCausalLM.from_pretrained(TINY_LM_DIR, dtype=torch.float64, attn_implementation="eager",
                                            local_files_only=True).eval()


@pytest.fixture(scope="module")
def tiny():
    return stepper.load()  # float64, as the calculators use it


def _oracle(hf_model, ids):
    with torch.no_grad():
        out = hf_model(input_ids=torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    return out


@pytest.mark.parametrize("prompt", PROMPTS)
def test_trace_equals_transformers(hf_model, tiny, prompt):
    model, tokenizer = tiny
    ids = tokenizer.encode(prompt)
    t = token_walk.trace(model, ids)
    out = _oracle(hf_model, ids)
    n, layers = len(ids), model.config.num_hidden_layers
    assert len(out.attentions) == len(t.attention) == layers
    for layer in range(layers):
        expected = out.attentions[layer].numpy()  # (1, H, N, N)
        assert t.attention[layer].shape == expected.shape == (1, 4, n, n)
        np.testing.assert_allclose(t.attention[layer], expected, atol=2e-6, rtol=0)
    assert len(out.hidden_states) == layers + 1
    for layer in range(layers):  # the embedding, then the output of layers 1 .. L-1
        expected = out.hidden_states[layer][0].numpy()  # (N, D)
        np.testing.assert_allclose(t.residual[2 * layer], expected, atol=1e-5 * np.abs(expected).max(), rtol=0)
    expected = out.hidden_states[layers][0].numpy()  # transformers puts the normed final state last
    np.testing.assert_allclose(t.hidden, expected, atol=1e-5 * np.abs(expected).max(), rtol=0)
    expected = out.logits[0].numpy()  # (N, V)
    np.testing.assert_allclose(t.logits, expected, atol=1e-5 * np.abs(expected).max(), rtol=0)
    assert np.array_equal(np.argsort(-t.logits[-1])[:10], np.argsort(-expected[-1])[:10])


def test_trace_equals_transformers_in_float32_too():
    """The same walk in float32 (the numpy model's own default) against transformers' float32 forward."""
    from transformers import LlamaForCausalLM

    hf = LlamaForCausalLM.from_pretrained(TINY_LM_DIR, dtype=torch.float32, attn_implementation="eager",
                                          local_files_only=True).eval()
    model, tokenizer = stepper.load(dtype=np.float32)
    ids = tokenizer.encode(PROMPTS[0])
    t, out = token_walk.trace(model, ids), _oracle(hf, ids)
    for layer, expected in enumerate(out.attentions):
        np.testing.assert_allclose(t.attention[layer], expected.numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(t.logits, out.logits[0].numpy(), atol=1e-4 * np.abs(t.logits).max(), rtol=0)


def test_the_attention_weights_are_causal_rows_that_sum_to_one(tiny):
    model, tokenizer = tiny
    t = token_walk.trace(model, tokenizer.encode(PROMPTS[0]))
    for a in t.attention:
        n = a.shape[-1]
        np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-12)
        assert (a[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0).all()  # nothing above the diagonal
        assert (a[..., 0, 0] == 1).all()  # the first token can only attend to itself


def test_trace_is_the_tiny_transformers_prefill(tiny):
    """The written-out forward gives the logits of the package's one transformer, and its residual stream
    starts at the embedding rows and ends at what the final norm normalizes."""
    model, tokenizer = tiny
    ids = tokenizer.encode(PROMPTS[2])
    t = token_walk.trace(model, ids)
    logits, _ = model.prefill(ids)
    np.testing.assert_allclose(t.logits, logits, atol=1e-12 * np.abs(logits).max(), rtol=0)
    np.testing.assert_array_equal(t.embeddings, model.weights["model.embed_tokens.weight"][ids])
    assert t.residual.shape == (2 * 4 + 1, len(ids), 128)
    last = t.residual[-1]
    rms = np.sqrt(np.mean(last * last, axis=-1, keepdims=True) + model.config.rms_norm_eps)
    np.testing.assert_allclose(t.hidden, last / rms * model.weights["model.norm.weight"], atol=1e-12)
    np.testing.assert_allclose(t.residual_norms, np.sqrt((t.residual ** 2).sum(-1)), rtol=1e-12)
    np.testing.assert_array_equal(t.layer_output(3), t.residual[8])


@pytest.mark.parametrize("settings", [dict(temperature=0.0), dict(temperature=0.8, top_k=10),
                                      dict(temperature=1.0, top_p=0.9), dict(temperature=1.5, top_k=5, top_p=0.8)])
@pytest.mark.parametrize("seed", [0, 7])
def test_walk_draws_what_generate_draws(tiny, settings, seed):
    """The drawn token is generate()'s first token with the same settings and rng; the distribution is
    chapter2.sampling's (bias, temperature, top-k, top-p, in that order)."""
    model, tokenizer = tiny
    w = token_walk.walk(model, tokenizer, PROMPTS[0], seed=seed, **settings)
    ids = tokenizer.encode(PROMPTS[0])
    first = generate(model, ids, max_tokens=1, rng=np.random.default_rng(seed), **settings).tokens[0]
    assert w.token == first and w.token_text == tokenizer.token_text(first)
    assert w.ids == tuple(ids) and w.tokens == tuple(tokenizer.token_text(i) for i in ids)
    np.testing.assert_array_equal(w.probs, sampling.probs(w.trace.logits[-1], **settings))
    assert w.probs[w.token] > 0


def test_walk_lists_the_ten_likeliest_tokens(tiny):
    model, tokenizer = tiny
    w = token_walk.walk(model, tokenizer, PROMPTS[0], temperature=0.8, top_k=3)
    last = w.trace.logits[-1]
    z = np.exp(last - last.max())
    model_probs = z / z.sum()  # softmax at temperature 1, worked here
    assert len(w.top) == 10
    assert [c.token for c in w.top] == sorted(range(len(last)), key=lambda i: (-last[i], i))[:10]
    for c in w.top:
        assert c.model_prob == pytest.approx(model_probs[c.token], rel=1e-12)
        assert c.text == tokenizer.token_text(c.token)
    kept = [c for c in w.top if c.prob > 0]
    assert len(kept) == 3  # top-k 3 keeps the three likeliest; temperature 0.8 sharpens them
    t = np.exp((last - last.max()) / 0.8)[[c.token for c in kept]]
    np.testing.assert_allclose([c.prob for c in kept], t / t.sum(), rtol=1e-12)
    assert w.top[0].text == " values"  # the tiny model completes "keys and" as this site's text does


def test_walk_checks_its_inputs(tiny):
    model, tokenizer = tiny
    with pytest.raises(ValueError, match="prompt must be non-empty"):
        token_walk.walk(model, tokenizer, "")
    with pytest.raises(TypeError, match="prompt must be a str"):
        token_walk.walk(model, tokenizer, 3)
    with pytest.raises(ValueError, match="temperature"):
        token_walk.walk(model, tokenizer, "A", temperature=-1)
    with pytest.raises(ValueError, match="top_p"):
        token_walk.walk(model, tokenizer, "A", top_p=0)
    with pytest.raises(ValueError, match="seed"):
        token_walk.walk(model, tokenizer, "A", seed=-1)
    with pytest.raises(ValueError, match="context of 128"):
        token_walk.walk(model, tokenizer, "key " * 200)
    with pytest.raises(TypeError, match="tokenizer must be a BPETokenizer"):
        token_walk.walk(model, "tok", "A")
    with pytest.raises(TypeError, match="model must be a chapter2 Transformer"):
        token_walk.trace("model", [1, 2])
    with pytest.raises(ValueError, match=r"ids must be in \[0, 1024\)"):
        token_walk.trace(model, [1, 5000])
    with pytest.raises(ValueError, match="non-empty 1-D"):
        token_walk.trace(model, [])
    with pytest.raises(TypeError, match="ids must be integers"):
        token_walk.trace(model, [1.5])


def test_walk_refuses_a_model_it_cannot_trace():
    from chapter2.models import ModelConfig
    from chapter2.models.transformer import Transformer, random_weights

    raw = {**load_pretrained(TINY_LM_DIR).config.raw, "sliding_window": 4, "architectures": ["MistralForCausalLM"],
           "model_type": "mistral"}
    config = ModelConfig.from_hf(raw, name="windowed")
    model = Transformer(config, random_weights(config))
    with pytest.raises(ValueError, match="sliding-window"):
        token_walk.trace(model, [1, 2, 3])


@pytest.mark.parametrize("layer, head, position", [(1, 4, -1), (2, 1, 3), (4, 3, -1)])
def test_one_query_is_one_head_of_transformers_forward(hf_model, tiny, layer, head, position):
    """One head's query, scores, weights and output for one token, from the head's own rows of W_Q, W_K, W_V:
    the weights are transformers' row, and the output is that head's slice of what transformers feeds o_proj."""
    model, tokenizer = tiny
    ids = tokenizer.encode(token_walk.EXAMPLE_PROMPT)
    oq = token_walk.one_query(model, ids, layer, head, position)
    seen = {}
    attn = hf_model.model.layers[layer - 1].self_attn

    def keep(module, args):  # the heads' outputs side by side, (N, H*d), as o_proj receives them
        seen["heads"] = args[0][0].numpy().copy()

    hook = attn.o_proj.register_forward_pre_hook(keep)
    try:
        out = _oracle(hf_model, ids)
    finally:
        hook.remove()
    pos, d = position % len(ids), model.config.head_dim
    np.testing.assert_allclose(oq.weights, out.attentions[layer - 1][0, head - 1, pos, :pos + 1].numpy(), atol=2e-6)
    np.testing.assert_allclose(oq.output, seen["heads"][pos, (head - 1) * d:head * d], atol=1e-5)
    z = np.exp(oq.scores - oq.scores.max())
    np.testing.assert_allclose(z / z.sum(), oq.weights, rtol=1e-12)  # the weights are the scores' softmax
    np.testing.assert_allclose(oq.scores, oq.keys @ oq.query / np.sqrt(d), rtol=1e-12)
    assert oq.rows == slice((head - 1) * d, head * d)  # the head's own rows of W_Q ...
    assert oq.kv_rows == slice((head - 1) // 2 * d, ((head - 1) // 2 + 1) * d)  # ... and of its K/V head (2 per)
    assert oq.keys.shape == oq.values.shape == (pos + 1, d)


def test_one_query_checks_its_inputs(tiny):
    model, tokenizer = tiny
    ids = tokenizer.encode("A B C")
    with pytest.raises(ValueError, match="layer must be 1 to 4 and head 1 to 4"):
        token_walk.one_query(model, ids, 5, 1)
    with pytest.raises(ValueError, match="head"):
        token_walk.one_query(model, ids, 1, 0)
    with pytest.raises(ValueError, match="position must be an int"):
        token_walk.one_query(model, ids, 1, 1, position=len(ids))
    with pytest.raises(ValueError, match="position must be an int"):
        token_walk.one_query(model, ids, 1, 1, position=1.5)
