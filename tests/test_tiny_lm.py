"""The shipped tiny model (src/chapter2/data/tiny_lm): loads offline, its tokenizer is reproducible, it learned something."""

import hashlib
import importlib.util
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from _oracles import require

torch = require("torch")  # the oracle side: transformers on CPU
transformers = require("transformers")

from chapter2.models.transformer import load_pretrained  # noqa: E402
from chapter2.tokenizer import TINY_TOKENIZER_PATH, BPETokenizer, tiny, train_bpe  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TINY = TINY_TOKENIZER_PATH.parent
PROVENANCE = (TINY / "PROVENANCE.md").read_text(encoding="utf-8")


def provenance(key: str) -> str:
    match = re.search(rf"^\| {re.escape(key)} \| (.+?) \|$", PROVENANCE, flags=re.M)
    assert match, f"PROVENANCE.md has no row {key!r}"
    return match.group(1).strip("`")


def training_script():
    spec = importlib.util.spec_from_file_location("train_tiny_lm", ROOT / "scripts" / "train_tiny_lm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hf_model():
    from transformers import LlamaForCausalLM

    return LlamaForCausalLM.from_pretrained(TINY, dtype=torch.float32, local_files_only=True).eval()


def test_files_and_size():
    names = {p.name for p in TINY.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "corpus.txt",
            "heldout.txt", "PROVENANCE.md"} <= names
    assert sum(p.stat().st_size for p in TINY.iterdir()) < 4_000_000  # small enough for the browser wheel


def test_config_is_the_documented_architecture(hf_model):
    c = hf_model.config
    assert (c.hidden_size, c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads) == (128, 4, 4, 2)
    assert (c.intermediate_size, c.max_position_embeddings, c.tie_word_embeddings) == (352, 128, True)
    assert c.vocab_size == tiny().vocab_size
    assert json.loads((TINY / "config.json").read_text())["architectures"] == ["LlamaForCausalLM"]
    n_params = sum(p.numel() for p in hf_model.parameters())
    # embedding V*D (tied with the LM head) + per layer: q, o (D*D each), k, v (D*D/2 each with 2 of 4 heads),
    # three SwiGLU matrices 3*D*F, two RMSNorm weights 2*D; + the final norm D
    D, F, V = 128, 352, c.vocab_size
    assert n_params == V * D + 4 * (3 * D * D + 3 * D * F + 2 * D) + D
    assert f"{n_params:,} parameters" in PROVENANCE


def test_corpus_matches_its_recorded_hash():
    assert hashlib.sha256((TINY / "corpus.txt").read_bytes()).hexdigest() == provenance("corpus.txt sha256")
    assert hashlib.sha256((TINY / "heldout.txt").read_bytes()).hexdigest() == provenance("heldout.txt sha256")


def test_tokenizer_is_what_train_bpe_makes_from_the_recorded_corpus():
    script = training_script()
    docs = script.read_corpus(TINY / "corpus.txt")
    requested = int(re.search(r"vocab_size=(\d+)", provenance("vocabulary")).group(1))
    fresh = train_bpe(docs, requested)
    shipped = json.loads(TINY_TOKENIZER_PATH.read_text(encoding="utf-8"))
    for key in ("added_tokens", "normalizer", "pre_tokenizer", "decoder"):
        assert fresh[key] == shipped[key], key
    assert fresh["model"]["vocab"] == shipped["model"]["vocab"]
    assert fresh["model"]["merges"] == shipped["model"]["merges"]


def test_held_out_loss_is_well_below_uniform(hf_model):
    """Uniform guessing costs log(V) nats per token; the model, on paragraphs it never saw, far less."""
    tok = tiny()
    lines = [line for line in (TINY / "heldout.txt").read_text(encoding="utf-8").splitlines() if line]
    corpus = (TINY / "corpus.txt").read_text(encoding="utf-8")
    assert len(lines) >= 5 and not any(line in " ".join(corpus.split()) for line in lines)  # really held out
    total, count = 0.0, 0
    with torch.no_grad():
        for line in lines:
            ids = torch.tensor([tok.encode(line)[:128]])
            total += hf_model(input_ids=ids, labels=ids).loss.item() * (ids.shape[1] - 1)
            count += ids.shape[1] - 1
    loss = total / count
    assert loss < 0.75 * math.log(tok.vocab_size), loss
    assert abs(loss - float(provenance("held-out loss (float16 weights, heldout.txt)"))) < 1e-3


def test_greedy_continuations_are_made_of_real_words(hf_model):
    """Greedy text from a few prompts: valid UTF-8, built from many distinct words of the corpus.

    (An untrained model of the same shape, greedy, repeats one token; the exact text is not asserted.)
    """
    tok = tiny()
    known = set(re.findall(r"[A-Za-z]{3,}", (TINY / "corpus.txt").read_text(encoding="utf-8")))
    words = []
    for prompt in ("The KV cache", "Attention", "Prefill", "Decode"):
        ids = tok.encode(prompt)
        out = hf_model.generate(torch.tensor([ids]), max_new_tokens=24, do_sample=False)[0].tolist()
        text = tok.decode(out[len(ids):])
        assert "\ufffd" not in text, text
        words += re.findall(r"[A-Za-z]{3,}", text)
    real = [w for w in words if w in known]
    assert len(real) >= 0.7 * len(words) and len(set(real)) >= 8, words


def test_transformers_tokenizer_agrees():
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(TINY, local_files_only=True)
    text = (TINY / "heldout.txt").read_text(encoding="utf-8")
    assert hf(text, add_special_tokens=False)["input_ids"] == tiny().encode(text)
    assert hf.eos_token == "<|endoftext|>"


def test_numpy_model_matches_transformers(hf_model):
    """chapter2.models.load_pretrained (numpy only) reproduces transformers on the shipped checkpoint."""
    tok = tiny()
    ours = load_pretrained(TINY)
    ids = tok.encode("Decode reads every weight once per step, so it is memory bound.")
    with torch.no_grad():
        expected = hf_model(input_ids=torch.tensor([ids])).logits[0].double().numpy()  # (N, V)
    logits, cache = ours.prefill(ids[:-3])
    steps = [ours.decode(t, cache)[0] for t in ids[-3:-1]]
    got = np.concatenate([logits, np.stack(steps)])  # (N - 1, V): prefill, then two decode steps
    scale = np.abs(expected).max()
    np.testing.assert_allclose(got, expected[:-1], atol=1e-4 * scale, rtol=0)
    assert np.array_equal(got.argmax(-1), expected[:-1].argmax(-1))


def test_bad_tokenizer_file_is_refused(tmp_path):
    data = json.loads(TINY_TOKENIZER_PATH.read_text(encoding="utf-8"))
    data["model"]["merges"].append(["zz", "qq"])
    with pytest.raises(ValueError, match="not in vocab"):
        BPETokenizer.from_json(data)
