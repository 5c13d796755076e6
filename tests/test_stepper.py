"""The prefill/decode stepper and its calculator.

Oracles: Hugging Face transformers (greedy `generate` and the softmax of its
logits) on a tiny random LlamaForCausalLM saved into tmp_path with a BPE
tokenizer trained there, and `chapter2.models.transformer.generate` (itself
tested against transformers in test_tiny_transformer.py). Then the same
properties on the shipped tiny model, which the calculator uses.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _oracles import require

torch = require("torch")
transformers = require("transformers")

from chapter2 import stepper  # noqa: E402
from chapter2.calculators import _registry  # noqa: E402
from chapter2.calculators._registry import FieldError  # noqa: E402
from chapter2.format import nbytes  # noqa: E402
from chapter2.models.transformer import generate  # noqa: E402
from chapter2.tokenizer import BPETokenizer, train_bpe  # noqa: E402

# The random checkpoint: 2 layers, 2 KV heads of head_dim 16 (hidden 64 / 4 query heads), context 48.
LAYERS, KV_HEADS, HEAD_DIM, CONTEXT = 2, 2, 16, 48
# K and V, per layer, per KV head, head_dim numbers for every cached token; the stepper computes in
# float64 (8 bytes), a serving engine would store bf16 (2 bytes):
BYTES_PER_TOKEN = 2 * LAYERS * KV_HEADS * HEAD_DIM * 8  # = 1024
BF16_PER_TOKEN = 2 * LAYERS * KV_HEADS * HEAD_DIM * 2  # = 256
PROMPTS = ["The cache grows", "prefill then decode, one token at a time", "a"]

CORPUS = [
    "The KV cache stores the keys and values of every token the model has seen.",
    "Prefill processes the whole prompt in one pass; decode adds one token per pass.",
    "Each decode step reads all the weights and the whole cache to produce one token.",
    "A token is a piece of text; the tokenizer turns text into token ids and back.",
] * 3


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """(folder, transformers model) of a tiny random Llama with a tokenizer trained on CORPUS."""
    folder = tmp_path_factory.mktemp("tiny_random")
    train_bpe(CORPUS, 300, path=folder / "tokenizer.json")
    vocab = BPETokenizer.from_file(folder / "tokenizer.json").vocab_size
    config = transformers.LlamaConfig(
        vocab_size=vocab, hidden_size=64, intermediate_size=96, num_hidden_layers=LAYERS, num_attention_heads=4,
        num_key_value_heads=KV_HEADS, max_position_embeddings=CONTEXT, tie_word_embeddings=True,
        initializer_range=0.2, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    torch.manual_seed(0)
    hf = transformers.LlamaForCausalLM(config).float().eval()
    hf.save_pretrained(folder, safe_serialization=True)  # float32 weights on disk
    return folder, hf.double()  # the oracle computes in float64, as the stepper does


@pytest.fixture(scope="module")
def loaded(checkpoint):
    return stepper.load(checkpoint[0])


# -----------------------------------------------------------------------------
# against transformers


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_tokens_equal_transformers_generate(checkpoint, loaded, prompt):
    _, hf = checkpoint
    model, tok = loaded
    n_steps = 12
    steps = stepper.step_through(model, tok, prompt, n_steps)
    ids = torch.tensor([tok.encode(prompt)])
    with torch.no_grad():
        out = hf.generate(ids, do_sample=False, max_new_tokens=n_steps + 1, min_new_tokens=n_steps + 1,
                          attention_mask=torch.ones_like(ids))
    assert stepper.generated_ids(steps) == out[0, ids.shape[1]:].tolist()


@pytest.mark.parametrize("prompt", PROMPTS)
def test_every_top5_matches_the_softmax_of_transformers_logits(checkpoint, loaded, prompt):
    """Step k's candidates are the 5 largest of softmax(logits) at position N - 1 + k of the full sequence."""
    _, hf = checkpoint
    model, tok = loaded
    steps = stepper.step_through(model, tok, prompt, 6)
    sequence = [*steps[0].input_ids, *stepper.generated_ids(steps)[:-1]]  # every token that went in
    with torch.no_grad():
        logits = hf(torch.tensor([sequence])).logits[0].double()
    p = torch.softmax(logits, dim=-1).numpy()  # (N + 6, V)
    n = len(steps[0].input_ids)
    for step in steps:
        row = p[n - 1 + step.index]
        expected = np.argsort(-row, kind="stable")[:5]
        assert [c.token for c in step.top] == expected.tolist()
        np.testing.assert_allclose([c.prob for c in step.top], row[expected], atol=1e-6)  # HF keeps RoPE cos/sin in float32
        assert [c.text for c in step.top] == [tok.token_text(int(i)) for i in expected]


# -----------------------------------------------------------------------------
# against chapter2's generate, and the cache arithmetic


@pytest.mark.parametrize("prompt", PROMPTS)
def test_greedy_tokens_equal_generate(loaded, prompt):
    model, tok = loaded
    steps = stepper.step_through(model, tok, prompt, 10)
    assert stepper.generated_ids(steps) == generate(model, tok.encode(prompt), max_tokens=11).tokens


@pytest.mark.parametrize("settings", [dict(temperature=1.0), dict(temperature=0.7, top_k=20, top_p=0.9, seed=5)])
def test_sampled_tokens_equal_generate_with_the_same_seed(loaded, settings):
    model, tok = loaded
    seed = settings.pop("seed", 0)
    steps = stepper.step_through(model, tok, PROMPTS[1], 15, seed=seed, **settings)
    expected = generate(model, tok.encode(PROMPTS[1]), max_tokens=16, rng=np.random.default_rng(seed), **settings)
    assert stepper.generated_ids(steps) == expected.tokens


@pytest.mark.parametrize("prompt", PROMPTS)
def test_prefill_covers_the_prompt_and_the_cache_grows_by_one_token_per_step(loaded, prompt):
    model, tok = loaded
    n_steps = 9
    steps = stepper.step_through(model, tok, prompt, n_steps)
    prompt_ids = tok.encode(prompt)
    assert len(steps) == n_steps + 1
    assert steps[0].phase == "prefill" and steps[0].input_ids == tuple(prompt_ids) and steps[0].input_text == prompt
    assert steps[0].cache_length == len(prompt_ids)
    for before, step in zip(steps, steps[1:], strict=False):
        assert step.phase == "decode"
        assert step.input_ids == (before.token,) and step.input_text == before.token_text
        assert step.cache_length == before.cache_length + 1
    for step in steps:
        assert step.cache_bytes == step.cache_length * BYTES_PER_TOKEN
    assert model.new_cache().bytes_per_token == BYTES_PER_TOKEN


def test_top_candidates_are_sorted_and_the_greedy_choice_is_the_first(loaded):
    model, tok = loaded
    for step in stepper.step_through(model, tok, PROMPTS[0], 8):
        probs = [c.prob for c in step.top]
        assert len(step.top) == stepper.TOP_N and probs == sorted(probs, reverse=True)
        assert 0 < sum(probs) <= 1 + 1e-12
        assert step.token == step.top[0].token and step.token_text == step.top[0].text


def test_stop_ids_end_the_steps_where_generate_stops(loaded):
    model, tok = loaded
    tokens = stepper.generated_ids(stepper.step_through(model, tok, PROMPTS[1], 12))
    stop = tokens[4]
    steps = stepper.step_through(model, tok, PROMPTS[1], 12, stop_ids=[stop])
    expected = generate(model, tok.encode(PROMPTS[1]), max_tokens=13, stop_ids=[stop])
    assert expected.finish_reason == "stop"
    assert stepper.generated_ids(steps) == expected.tokens == tokens[: tokens.index(stop) + 1]


def test_zero_steps_is_the_prefill_alone(loaded):
    model, tok = loaded
    steps = stepper.step_through(model, tok, PROMPTS[0], 0)
    assert len(steps) == 1 and steps[0].phase == "prefill"


def test_the_whole_context_can_be_used(loaded):
    model, tok = loaded
    n = len(tok.encode(PROMPTS[1]))
    steps = stepper.step_through(model, tok, PROMPTS[1], CONTEXT - n)
    assert steps[-1].cache_length == CONTEXT


def test_generated_text_and_format_step(loaded):
    model, tok = loaded
    steps = stepper.step_through(model, tok, PROMPTS[0], 3)
    assert stepper.generated_text(tok, steps) == tok.decode(tok.encode(PROMPTS[0]) + [s.token for s in steps])
    n = len(tok.encode(PROMPTS[0]))
    first, second = stepper.format_step(steps[0]), stepper.format_step(steps[1])
    top0 = ", ".join(f"{c.text!r} {c.prob:.2f}" for c in steps[0].top)
    assert first == (f"prefill {n} tokens | cache {n} tok, {nbytes(n * BYTES_PER_TOKEN)} | next: {top0} "
                     f"| chose {steps[0].token_text!r}")
    head = f"decode 1: {steps[0].token_text!r} | cache {n + 1} tok, {nbytes((n + 1) * BYTES_PER_TOKEN)} | next: "
    assert second.startswith(head)


def test_load_keeps_the_model_in_memory(checkpoint, loaded):
    again = stepper.load(checkpoint[0])
    assert again[0] is loaded[0] and again[1] is loaded[1]
    single, _ = stepper.load(checkpoint[0], dtype=np.float32)  # another dtype is another model
    assert single is not loaded[0] and single.dtype == np.float32 and loaded[0].dtype == np.float64
    assert single.new_cache().bytes_per_token == BYTES_PER_TOKEN // 2
    # float32 picks the same greedy tokens here (no near-ties in this prompt)
    tok = loaded[1]
    assert (stepper.generated_ids(stepper.step_through(single, tok, PROMPTS[0], 6))
            == stepper.generated_ids(stepper.step_through(loaded[0], tok, PROMPTS[0], 6)))


# -----------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(prompt=""), ValueError, "prompt must be non-empty"),
    (dict(prompt=b"bytes"), TypeError, "prompt must be a str"),
    (dict(prompt=" 7" * 60), ValueError, "context of 48"),  # 60 tokens or more (each ' 7' is one piece)
    (dict(n_steps=-1), ValueError, "n_steps must be >= 0"),
    (dict(n_steps=2.5), TypeError, "n_steps must be an integer"),
    (dict(n_steps=CONTEXT), ValueError, "context of 48"),
    (dict(temperature=-0.5), ValueError, "temperature"),
    (dict(top_p=0.0), ValueError, "top_p"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(stop_ids=3), TypeError, "stop_ids"),
])
def test_bad_input_is_refused_with_a_clear_message(loaded, kwargs, error, match):
    model, tok = loaded
    args = dict(prompt="The cache", n_steps=4) | kwargs
    with pytest.raises(error, match=match):
        stepper.step_through(model, tok, args.pop("prompt"), args.pop("n_steps"), **args)


def test_bad_model_tokenizer_or_folder(loaded, tmp_path):
    model, tok = loaded
    with pytest.raises(TypeError, match="model must be"):
        stepper.step_through("model", tok, "hi", 1)
    with pytest.raises(TypeError, match="tokenizer must be"):
        stepper.step_through(model, "tok", "hi", 1)
    with pytest.raises(ValueError, match="folder must hold"):
        stepper.load(tmp_path)
    with pytest.raises(TypeError, match="step must be"):
        stepper.format_step("prefill")


# -----------------------------------------------------------------------------
# the calculator


def _chip(text: str) -> str:
    """A token as the stepper labels it: a space as ␣, a new line as ↵."""
    return text.replace(" ", "␣").replace("\n", "↵")


def test_calculator_outputs_equal_the_library(checkpoint, loaded, monkeypatch):
    monkeypatch.setattr(stepper, "TINY_LM_DIR", checkpoint[0])
    model, tok = loaded
    for raw in [dict(prompt="The cache grows", n_steps="5", temperature="0"),
                dict(prompt="prefill then decode", n_steps="12", temperature="0.8")]:
        out = _registry.compute("prefill_decode", raw)
        steps = stepper.step_through(model, tok, raw["prompt"], int(raw["n_steps"]),
                                     temperature=float(raw["temperature"]), seed=0)
        assert out["text"] == stepper.generated_text(tok, steps)
        assert out["step"] == stepper.format_step(steps[-1])  # one line: this pass, not a log of all of them
        n = steps[-1].cache_length
        assert out["cache"] == (f"{n} tokens × {BYTES_PER_TOKEN:,} B per token = {nbytes(n * BYTES_PER_TOKEN)}. "
                                f"The tiny model computes in float64 (8 bytes a number) so that your browser and the "
                                f"tests agree to the last digit; a server stores 16-bit numbers (bf16): "
                                f"{nbytes(n * BF16_PER_TOKEN)} for this cache")
        assert out["top"] == [[_chip(c.text), c.prob] for c in steps[-1].top]


@pytest.mark.parametrize("raw,field,match", [
    (dict(prompt=""), "prompt", "enter some text"),
    (dict(prompt="   "), "prompt", "enter some text"),
    (dict(prompt=" 7" * 60), "prompt", "context of 48"),
    (dict(prompt="x" * 401), "prompt", "at most 400 characters"),
    (dict(n_steps="-1"), "n_steps", "at least 0"),
    (dict(n_steps="25"), "n_steps", "at most 24"),
    (dict(n_steps="2.5"), "n_steps", "whole number"),
    (dict(temperature="-1"), "temperature", "at least 0"),
])
def test_calculator_bad_input_names_the_field(checkpoint, monkeypatch, raw, field, match):
    monkeypatch.setattr(stepper, "TINY_LM_DIR", checkpoint[0])
    with pytest.raises(FieldError, match=match) as err:
        _registry.compute("prefill_decode", raw)
    assert err.value.field == field


# -----------------------------------------------------------------------------
# the shipped tiny model (chapter2/data/tiny_lm), which load() and the calculator use by default

SHIPPED_PROMPTS = ["The KV cache stores the keys and values", "Prefill", "A decode step"]


@pytest.fixture(scope="module")
def shipped_hf():
    import chapter2

    from chapter2.models import TINY_LM_DIR
    from chapter2.tokenizer import TINY_TOKENIZER_PATH

    folder = TINY_LM_DIR  # the one definition of the shipped model's folder, used by stepper, tokenizer, bench
    assert folder == Path(chapter2.__file__).resolve().parent / "data" / "tiny_lm"  # inside the package (wheel)
    assert stepper.TINY_LM_DIR is folder and TINY_TOKENIZER_PATH.parent == folder
    return transformers.LlamaForCausalLM.from_pretrained(folder, dtype=torch.float64).eval()


def test_load_defaults_to_the_shipped_model():
    model, tok = stepper.load()
    assert stepper.load(stepper.TINY_LM_DIR)[0] is model
    c = model.config
    # from its config.json: 4 layers, 2 KV heads of 32 -> 2 x 4 x 2 x 32 x 8 bytes (float64) = 4,096 per token
    assert (c.num_hidden_layers, c.num_key_value_heads, c.head_dim) == (4, 2, 32)
    assert model.dtype == np.float64 and model.new_cache().bytes_per_token == 2 * 4 * 2 * 32 * 8
    assert tok.vocab_size == c.vocab_size and "<|endoftext|>" in tok.special_tokens


@pytest.mark.parametrize("prompt", SHIPPED_PROMPTS)
def test_shipped_model_greedy_tokens_and_top5_match_transformers(shipped_hf, prompt):
    model, tok = stepper.load()
    eos = tok.special_tokens["<|endoftext|>"]
    n_steps = 16
    steps = stepper.step_through(model, tok, prompt, n_steps, stop_ids=[eos])
    ids = torch.tensor([tok.encode(prompt)])
    with torch.no_grad():
        out = shipped_hf.generate(ids, do_sample=False, max_new_tokens=n_steps + 1, eos_token_id=eos,
                                  pad_token_id=eos, attention_mask=torch.ones_like(ids))
        logits = shipped_hf(torch.tensor([[*ids[0].tolist(), *stepper.generated_ids(steps)]])).logits[0].double()
    assert stepper.generated_ids(steps) == out[0, ids.shape[1]:].tolist()
    p = torch.softmax(logits, dim=-1).numpy()
    for step in steps:
        row = p[ids.shape[1] - 1 + step.index]
        np.testing.assert_allclose([c.prob for c in step.top], np.sort(row)[::-1][:5], atol=1e-6)
        assert step.top[0].token == int(np.argmax(row))


def _expected_calculator_lines(steps, n_steps):
    """The line the calculator should show: the last pass's format_step line, plus a second if it stopped early."""
    lines = [stepper.format_step(steps[-1])]
    if len(steps) < n_steps + 1:
        lines.append(f"stopped: the model chose '<|endoftext|>' (end of text) after {len(steps) - 1} decode steps")
    return lines


def test_calculator_defaults_equal_the_library_on_the_shipped_model():
    calc = _registry.get("prefill_decode")
    out = _registry.compute("prefill_decode")
    model, tok = stepper.load()
    defaults = {f.name: f.default for f in calc.fields}
    steps = stepper.step_through(model, tok, defaults["prompt"], defaults["n_steps"],
                                 temperature=defaults["temperature"], stop_ids=[tok.special_tokens["<|endoftext|>"]])
    assert defaults["n_steps"] == 0 and steps[-1].index == 0  # it opens at the prefill, the first step
    assert out["step"].splitlines() == _expected_calculator_lines(steps, defaults["n_steps"])
    assert out["text"] == stepper.generated_text(tok, steps)
    n = steps[-1].cache_length
    assert n == len(tok.encode(defaults["prompt"])) + len(steps) - 1
    assert out["cache"].startswith(f"{n} tokens × 4,096 B per token = {nbytes(n * 4096)}. ")
    assert out["cache"].endswith(f"(bf16): {nbytes(n * 1024)} for this cache")
    assert out["top"] == [[_chip(c.text), c.prob] for c in steps[-1].top]


# Prompts that end a document: the shipped model was trained on documents separated by <|endoftext|>,
# so after some of these it chooses that token within 24 steps.
ENDINGS = ["Thanks for reading.", "The end.", "See section 2.2.\n", "That is all.\n\n", "Done.", "Summary.\n"]


def test_calculator_stops_at_end_of_text():
    model, tok = stepper.load()
    eos = tok.special_tokens["<|endoftext|>"]
    stopped = 0
    for prompt in ENDINGS:
        out = _registry.compute("prefill_decode", {"prompt": prompt, "n_steps": "24"})
        steps = stepper.step_through(model, tok, prompt, 24, stop_ids=[eos])
        assert out["step"].splitlines() == _expected_calculator_lines(steps, 24)
        if steps[-1].token == eos:
            stopped += 1
            assert len(steps) < 25 and out["step"].splitlines()[-1].startswith("stopped: ")
            assert out["text"].endswith("<|endoftext|>")
    assert stopped, f"none of {ENDINGS} made the shipped model end its text within 24 steps"


def test_calculator_refuses_a_prompt_longer_than_the_shipped_context():
    _, tok = stepper.load()
    prompt = " 7" * 199  # 398 characters, within the field's 400
    assert len(tok.encode(prompt)) + 1 > 128  # the shipped context (config.json max_position_embeddings)
    with pytest.raises(FieldError, match="more than the model's context of 128") as err:
        _registry.compute("prefill_decode", {"prompt": prompt, "n_steps": "1"})
    assert err.value.field == "prompt"
