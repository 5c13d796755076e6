"""chapter2.tokenizer: the pure-Python byte-level BPE gives the same ids as Hugging Face `tokenizers`."""

import json
import sys
import unicodedata
from pathlib import Path

import pytest
from _oracles import require
from hypothesis import given, settings
from hypothesis import strategies as st

tokenizers = require("tokenizers")  # the oracle; part of the [hf] extra, always installed in CI

from chapter2 import calculators  # noqa: E402
from chapter2.calculators.tokens import show_tokens  # noqa: E402
from chapter2.models import load_config  # noqa: E402
from chapter2.tokenizer import (  # noqa: E402
    TINY_TOKENIZER_PATH, BPETokenizer, bytes_to_unicode, char_class, pre_tokenize, tiny, train_bpe,
)

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.md"))
BYTE_LEVEL = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)

# Pieces that exercise each branch of the split regex, plus special tokens.
INTERESTING = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\x0b", "\x0c", "\x85", "\xa0", "\u2009", "\u3000",
               "\x1c", "\x1f", "\u200b", "\ufeff", "'", "'s", "'S", "'re", "'ll", "'d", "'ve", "'m", "'t", "''",
               "a", "Z", "é", "ß", "Ω", "ж", "中", "7", "42", "1234567", "²", "½", "٣", "Ⅻ", "一", "!", "...", "--",
               "()", "_", "🤖", "👩‍👩‍👧", "🇫🇷", "e\u0301", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Characters assigned in this Python's Unicode tables (see the module docstring for the known limit).
ASSIGNED = st.characters(blacklist_categories=("Cs", "Cn"))
TEXT = st.lists(st.one_of(st.sampled_from(INTERESTING), st.text(ASSIGNED, max_size=6)), max_size=40).map("".join)
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


def oracle_pieces(text):
    return [piece for piece, _ in BYTE_LEVEL.pre_tokenize_str(text)]


def to_byte_level(text):
    table = bytes_to_unicode()
    return "".join(table[b] for b in text.encode("utf-8"))


@pytest.fixture(scope="module")
def trained():
    """A fresh BPE trained on the site's pages: (our tokenizer, the tokenizers oracle, its JSON)."""
    texts = [p.read_text(encoding="utf-8") for p in PAGES] + ["The KV cache grows by one token per decode step. " * 3]
    data = train_bpe(texts, 700)
    return BPETokenizer.from_json(data), tokenizers.Tokenizer.from_str(json.dumps(data)), data


@pytest.fixture(scope="module")
def shipped():
    return tiny(), tokenizers.Tokenizer.from_file(str(TINY_TOKENIZER_PATH))


# ----------------------------------------------------------------------------- byte-level alphabet


def test_bytes_to_unicode_is_gpt2s_alphabet():
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    # printable bytes stand for themselves; space and newline become 'Ġ' (U+0120) and 'Ċ' (U+010A),
    # the characters every GPT-2-style vocabulary shows for them (68 bytes shifted to 256 + n in byte order)
    assert table[ord("A")] == "A" and table[ord("~")] == "~" and table[0xFF] == "ÿ"
    assert table[0x20] == "\u0120" and table[0x0A] == "\u010a" and table[0x00] == "\u0100"
    assert sorted(table.values()) == sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())


# ----------------------------------------------------------------------------- pre-tokenization


def test_pre_tokenize_examples_from_the_regex():
    # worked by hand from 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    assert pre_tokenize("Hello  world!") == ["Hello", " ", " world", "!"]
    assert pre_tokenize("it's 2024") == ["it", "'s", " 2024"]
    assert pre_tokenize("IT'S") == ["IT", "'", "S"]  # contractions are lower case only
    assert pre_tokenize("a\t\tb") == ["a", "\t", "\t", "b"]  # the last space before a word stays alone
    assert pre_tokenize("end   ") == ["end", "   "]
    assert pre_tokenize("x²+ 12") == ["x", "²", "+", " 12"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pre_tokenize_matches_on_the_sites_pages(page):
    text = page.read_text(encoding="utf-8")
    assert [to_byte_level(p) for p in pre_tokenize(text)] == oracle_pieces(text)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_pre_tokenize_matches_on_random_text(text):
    assert [to_byte_level(p) for p in pre_tokenize(text)] == oracle_pieces(text)


def _oracle_classes(code_points):
    """Oniguruma's class of each code point, read off how tokenizers' regex groups it with a neighbour."""
    classes = {}
    for lead, kind in (("a", "L"), ("1", "N")):  # "a" + c is one piece iff c is a letter, "1" + c iff a number
        starts = {o[0] for _, o in BYTE_LEVEL.pre_tokenize_str("".join(lead + chr(c) + "\x00" for c in code_points))}
        for k, c in enumerate(code_points):
            if 3 * k + 1 not in starts:
                classes.setdefault(c, kind)
    # "\x00" + c is one piece iff c is neither space, letter nor number
    starts = {o[0] for _, o in BYTE_LEVEL.pre_tokenize_str("".join("a\x00" + chr(c) + "a" for c in code_points))}
    for k, c in enumerate(code_points):
        if 4 * k + 2 not in starts:
            classes.setdefault(c, "O")
    return {c: classes.get(c, "S") for c in code_points}


@pytest.mark.slow  # every code point of the BMP through tokenizers' regex: about a second of CPU
def test_character_classes_match_exhaustively_in_the_bmp():
    """Every BMP code point: the classes agree except on characters this Python's Unicode tables leave unassigned."""
    code_points = [c for c in range(1, 0x10000) if not 0xD800 <= c <= 0xDFFF]
    oracle = _oracle_classes(code_points)
    differ = [c for c in code_points if oracle[c] != char_class(chr(c))]
    assert all(unicodedata.category(chr(c)) == "Cn" for c in differ), [hex(c) for c in differ[:10]]


@pytest.mark.slow  # every assigned code point above the BMP: about a second and a half of CPU
def test_character_classes_match_for_every_assigned_astral_character():
    code_points = [c for c in range(0x10000, 0x110000)
                   if unicodedata.category(chr(c)) not in ("Cn", "Co")] + [0xF0000, 0x10FFFD]  # + private use
    oracle = _oracle_classes(code_points)
    assert [hex(c) for c in code_points if oracle[c] != char_class(chr(c))] == []


# ----------------------------------------------------------------------------- encode / decode


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_ids_match_on_the_sites_pages(page, trained, shipped):
    text = page.read_text(encoding="utf-8")
    for ours, oracle in (trained[:2], shipped):
        ids = ours.encode(text)
        assert ids == oracle.encode(text).ids
        assert ours.decode(ids) == text


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_ids_match_on_random_text(trained, shipped, text):
    for ours, oracle in (trained[:2], shipped):
        assert ours.encode(text) == oracle.encode(text).ids


@pytest.mark.parametrize("text", [
    "🤖 robots 🤖🤖 👩‍👩‍👧 🇫🇷", "     leading", "trailing    ", "a \t \n b", "\n\n\n", " \u3000 \xa0x",
    "0 12 345 6789 3.14159 1e-5 2,048", "x" * 300, "e\u0301 é", "'s'S'll''", "<|im_start|>user\nHi<|im_end|>",
    "<|endoftext|><|endoftext|>", "<|endoftext", "",
])
def test_ids_match_on_edge_cases(trained, shipped, text):
    for ours, oracle in (trained[:2], shipped):
        assert ours.encode(text) == oracle.encode(text).ids
        assert ours.decode(ours.encode(text)) == text


@settings(max_examples=200, deadline=None)
@given(ANY_TEXT)
def test_round_trip_on_any_unicode(shipped, text):
    """Whatever the split, byte-level BPE loses nothing: decode(encode(text)) == text."""
    assert shipped[0].decode(shipped[0].encode(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 1023), max_size=30), st.booleans())
def test_decode_of_any_ids_matches(shipped, ids, skip):
    """Arbitrary ids can cut characters in half: both sides write U+FFFD the same way."""
    ours, oracle = shipped
    ids = [i for i in ids if i < ours.vocab_size]
    assert ours.decode(ids, skip_special_tokens=skip) == oracle.decode(ids, skip_special_tokens=skip)


def test_special_tokens_are_single_ids(shipped):
    tok = shipped[0]
    start, end = tok.special_tokens["<|im_start|>"], tok.special_tokens["<|im_end|>"]
    assert tok.encode("<|im_start|>user") == [start] + tok.encode("user")
    assert tok.encode("hi<|im_end|>") == tok.encode("hi") + [end]
    assert tok.decode([start], skip_special_tokens=True) == ""


def test_tokens_show_partial_characters_as_bytes():
    """With no merges every byte is a token: 'é' is UTF-8 C3 A9, so two tokens that are half a character each."""
    bare = BPETokenizer.from_json(train_bpe(["x"], 256 + 3))
    assert bare.tokens("é!") == ["<0xC3>", "<0xA9>", "!"]
    assert bare.tokens("a b") == ["a", " ", "b"]  # the piece " b" stays two bytes: no merge joins them
    assert bare.decode(bare.encode("é!")) == "é!"


def test_tokens_join_back_to_the_text(shipped):
    text = "Prefill reads the prompt; decode writes one token per step."
    assert "".join(shipped[0].tokens(text)) == text


def test_loads_through_transformers(shipped):
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_file=str(TINY_TOKENIZER_PATH))
    text = "Attention scores a query against all earlier keys."
    assert hf(text, add_special_tokens=False)["input_ids"] == shipped[0].encode(text)
    assert len(hf) == shipped[0].vocab_size


def test_training_is_deterministic(trained):
    texts = [p.read_text(encoding="utf-8") for p in PAGES] + ["The KV cache grows by one token per decode step. " * 3]
    assert train_bpe(texts, 700) == trained[2]


def test_vocab_sizes_quoted_in_the_docstring_match_the_shipped_configs():
    import chapter2.tokenizer as module

    doc = " ".join(module.__doc__.split())
    llama, qwen = load_config("Llama-3.1-8B").vocab_size, load_config("Qwen3-8B").vocab_size
    assert (llama, qwen) == (128256, 151936)
    assert f"{llama:,} for Llama 3" in doc and f"{qwen:,} for Qwen3" in doc


# ----------------------------------------------------------------------------- errors


def test_bad_inputs_raise_clear_errors(shipped, tmp_path):
    tok = shipped[0]
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(b"bytes")
    with pytest.raises(ValueError, match="lone surrogates"):
        tok.encode("a\ud800b")
    with pytest.raises(ValueError, match=r"ids\[1\] must be a token id"):
        tok.decode([5, tok.vocab_size])
    with pytest.raises(TypeError, match=r"ids\[0\] must be an integer"):
        tok.decode([1.5])
    with pytest.raises(TypeError, match="ids must be a sequence"):
        tok.decode("abc")
    with pytest.raises(TypeError, match="not a single string"):
        train_bpe("some text", 300)
    with pytest.raises(ValueError, match="vocab_size must be at least"):
        train_bpe(["some text"], 100)
    with pytest.raises(ValueError, match="special_tokens"):
        train_bpe(["some text"], 300, special_tokens=["<bad token>"])
    data = json.loads(TINY_TOKENIZER_PATH.read_text())
    data["pre_tokenizer"]["add_prefix_space"] = True
    with pytest.raises(ValueError, match="add_prefix_space=False"):
        BPETokenizer.from_json(data)
    with pytest.raises(ValueError, match="tokenizer.json file"):
        BPETokenizer.from_file(tmp_path / "missing.json")


# ----------------------------------------------------------------------------- calculator


def test_tokenizer_calculator_shows_the_library_values(shipped):
    text = "Hello, world! 2048 tokens\tlater."
    out = calculators.compute("tokenizer", {"text": text})
    ids = shipped[0].encode(text)
    assert out["ids"] == ", ".join(map(str, ids))
    assert out["count"].startswith(f"{len(ids)} tokens for {len(text)} characters")
    assert out["tokens"] == "|" + "|".join(shipped[0].tokens(text)).replace("\t", "\\t") + "|"
    assert out["tokens"].replace("|", "").replace("\\t", "\t") == text


def test_tokenizer_calculator_text_field():
    assert calculators.compute("tokenizer", {"text": "  spaces kept  "})["tokens"].startswith("| ")
    assert calculators.compute("tokenizer", {"text": ""})["count"].startswith("0 tokens")
    bad = json.loads(calculators.compute_json("tokenizer", json.dumps({"text": "x" * 2001})))
    assert bad == {"ok": False, "field": "text", "message": "Text: at most 2,000 characters, got 2,001"}
    # a token that reads "nan" is text, not a number the page must refuse to show
    assert json.loads(calculators.compute_json("tokenizer", json.dumps({"text": "nan inf"})))["ok"]


def test_show_tokens():
    assert show_tokens(["Hello", ",", " world", "\n"]) == "|Hello|,| world|\\n|"
    assert show_tokens([]) == "(no tokens)"


def test_text_field_renders_as_a_textarea():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import directives
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    field = calculators.get("tokenizer").fields[0]
    html = directives._field_html("tokenizer", field)
    assert html.startswith('<div class="c2-calc__field c2-calc__field--text"><label for="c2-tokenizer-text">')
    assert '<textarea id="c2-tokenizer-text" name="text" rows="3" maxlength="2000"' in html
    assert ">The KV cache grows by one token per decode step.</textarea>" in html
