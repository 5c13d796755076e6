"""Tokens: a byte-level BPE tokenizer (chapter section 2.2).

A language model never sees characters. Text is first cut into *pieces*
(words with their leading space, runs of digits, runs of punctuation,
whitespace), each piece is written as bytes, and the bytes are glued
together by a ranked list of *merges* learned from a corpus (byte-pair
encoding; Sennrich et al. 2016, arXiv:1508.07909; byte-level as in GPT-2,
Radford et al. 2019). Every token is a string of bytes with an integer id;
the ids are what the embedding table is indexed with, and the logits vector
the model outputs at each decode step has one entry per id.

Production vocabularies are large: over a hundred thousand entries, e.g.
128,256 for Llama 3 (`"vocab_size": 128256` in
https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json) and
151,936 for Qwen3 (`"vocab_size": 151936` in
https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json). The tokenizer
shipped with this package (`tiny()`) was trained on this site's own text and
has about a thousand, so that it and the tiny model fit in a browser.

Two halves:

- `train_bpe(texts, vocab_size)` trains with Hugging Face `tokenizers`
  (imported inside the function; CPython only) and returns the standard
  `tokenizer.json` content: a BPE model (vocab + merges), the ByteLevel
  pre-tokenizer (GPT-2 split regex, no prefix space), the ByteLevel decoder,
  no normalizer.
- `BPETokenizer` reads that JSON and encodes/decodes in pure Python (no
  `tokenizers`, no numpy), so it also runs in Pyodide. The tests check that its
  ids equal `tokenizers`' on the site's pages, on random Unicode text, emoji,
  whitespace runs and digits.

The one known limit: the pre-tokenizer regex uses Unicode letter/number
classes (`\\p{L}`, `\\p{N}`). Python's `re` has neither, so `pre_tokenize`
is a hand-written scanner that classifies characters with `unicodedata`
(Unicode 14.0 on CPython 3.11, 15.0 on Pyodide's 3.12) and an explicit
White_Space set. `tokenizers`' regex engine (Oniguruma) ships newer Unicode
tables, so a character assigned *after* the running Python's Unicode version
(unassigned, category "Cn", here) can be split differently. For every
character assigned in the running Python's table the classes agree; the
tests check every BMP code point and every assigned astral one.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path

from .models import TINY_LM_DIR

__all__ = [
    "BPETokenizer", "train_bpe", "tiny", "pre_tokenize", "bytes_to_unicode",
    "char_class", "TINY_TOKENIZER_PATH", "DEFAULT_SPECIAL_TOKENS",
]

TINY_TOKENIZER_PATH = TINY_LM_DIR / "tokenizer.json"

# Special tokens of the shipped tokenizer: the end-of-document marker and the
# two ChatML markers used by `chapter2.chat` (each becomes one token id).
DEFAULT_SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


# -----------------------------------------------------------------------------
# bytes <-> printable characters (GPT-2's byte-level alphabet)


@functools.lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """Map each byte 0..255 to a printable character, as GPT-2's byte-level BPE does.

    Bytes that are already printable and not whitespace ('!'..'~', '¡'..'¬',
    '®'..'ÿ') stand for themselves; the other 68 bytes (controls, space, DEL,
    NBSP, soft hyphen, ...) are moved, in byte order, to code points 256, 257,
    ... So a space becomes 'Ġ' (U+0120) and a newline 'Ċ' (U+010A), which is
    why those characters show up in every GPT-style vocabulary.
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


@functools.lru_cache(maxsize=1)
def _unicode_to_bytes() -> dict[str, int]:
    return {ch: b for b, ch in bytes_to_unicode().items()}


# -----------------------------------------------------------------------------
# pre-tokenization: the GPT-2 split regex, as a scanner
#
#   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
#
# (the pattern of tokenizers' ByteLevel pre-tokenizer with use_regex=True).

# Unicode's White_Space property (PropList.txt), which is what `\s` means in
# Oniguruma. Python's str.isspace() differs: it also counts U+001C..U+001F.
_WHITE_SPACE = frozenset(map(chr, [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                   0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d")  # after an apostrophe, case-sensitive, in regex order


@functools.lru_cache(maxsize=65536)
def char_class(ch: str) -> str:
    """'S' (White_Space), 'L' (a letter, \\p{L}), 'N' (a number, \\p{N}) or 'O' (anything else)."""
    if ch in _WHITE_SPACE:
        return "S"
    major = unicodedata.category(ch)[0]
    return major if major in "LN" else "O"


def _piece_end(text: str, i: int) -> int:
    """End of the regex match starting at `i` (alternatives tried in the pattern's order)."""
    n = len(text)
    ch = text[i]
    # 's|'t|'re|'ve|'m|'ll|'d
    if ch == "'":
        for suffix in _CONTRACTIONS:
            if text.startswith(suffix, i + 1):
                return i + 1 + len(suffix)
    # ' ?\p{L}+' | ' ?\p{N}+' | ' ?[^\s\p{L}\p{N}]+': an optional space, then a run of one class
    start = i + 1 if ch == " " and i + 1 < n and char_class(text[i + 1]) != "S" else i
    kind = char_class(text[start])
    if kind != "S":
        j = start + 1
        while j < n and char_class(text[j]) == kind:
            j += 1
        return j
    # '\s+(?!\S)': a whitespace run, minus its last character when a non-space follows
    # (that last space then starts the next word); '\s+' when only one character is left.
    j = i + 1
    while j < n and char_class(text[j]) == "S":
        j += 1
    if j < n and j - i >= 2:
        return j - 1
    return j


def pre_tokenize(text: str) -> list[str]:
    """Split `text` into the pieces BPE works on, e.g. "Hello  world!" -> ['Hello', ' ', ' world', '!']."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    pieces = []
    i = 0
    while i < len(text):
        j = _piece_end(text, i)
        pieces.append(text[i:j])
        i = j
    return pieces


# -----------------------------------------------------------------------------
# the tokenizer


class BPETokenizer:
    """Byte-level BPE in pure Python: `encode(text) -> ids`, `decode(ids) -> text`.

    `vocab` maps token strings (in the byte-level alphabet of
    `bytes_to_unicode`) to ids; `merges` is the ranked list of pairs, best
    first; `special_tokens` maps strings such as "<|endoftext|>" to ids. A
    special token in the text is matched exactly (leftmost, longest first) and
    becomes its own id, as `tokenizers` does for added tokens.
    """

    def __init__(self, vocab: dict, merges, special_tokens: dict | None = None):
        if not isinstance(vocab, dict) or not vocab:
            raise TypeError("vocab must be a non-empty dict of token string -> id")
        special_tokens = dict(special_tokens or {})
        self.vocab = {str(t): _token_id("vocab", i) for t, i in vocab.items()}
        self.special_tokens = {str(t): _token_id("special_tokens", i) for t, i in special_tokens.items()}
        byte_alphabet = set(bytes_to_unicode().values())
        missing = [ch for ch in byte_alphabet if ch not in self.vocab]
        if missing:
            raise ValueError(f"vocab must contain all 256 byte-level characters, {len(missing)} are missing")
        self.ranks: dict[tuple[str, str], int] = {}
        for rank, pair in enumerate(merges):
            a, b = pair.split(" ") if isinstance(pair, str) else pair
            if a + b not in self.vocab:
                raise ValueError(f"merges[{rank}] = {a!r} + {b!r} makes {a + b!r}, which is not in vocab")
            self.ranks.setdefault((a, b), rank)
        self.id_to_token = {i: t for t, i in self.vocab.items()}
        if len(self.id_to_token) != len(self.vocab):
            raise ValueError("vocab ids must be unique")
        for token, token_id in self.special_tokens.items():
            if self.id_to_token.setdefault(token_id, token) != token:
                raise ValueError(f"special token {token!r} has id {token_id}, which vocab gives to another token")
        by_length = sorted(self.special_tokens, key=len, reverse=True)
        self._special_re = re.compile("|".join(map(re.escape, by_length))) if by_length else None
        self._cache: dict[str, tuple[int, ...]] = {}

    # -- construction ----------------------------------------------------------

    @classmethod
    def from_json(cls, data) -> BPETokenizer:
        """From the content of a `tokenizer.json` (a dict, or its JSON text) as `train_bpe` writes it.

        Only the configuration `train_bpe` produces is accepted (no normalizer,
        ByteLevel pre-tokenizer without prefix space, plain BPE), so a file that
        would tokenize differently is refused instead of silently mis-read.
        """
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, dict) or "model" not in data:
            raise TypeError("data must be the content of a tokenizer.json (a dict with a 'model' entry)")
        _check_supported(data)
        model = data["model"]
        special = {t["content"]: t["id"] for t in data.get("added_tokens", [])}
        return cls(model["vocab"], model["merges"], special)

    @classmethod
    def from_file(cls, path) -> BPETokenizer:
        """Load a `tokenizer.json` file written by `train_bpe`."""
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"path must be a tokenizer.json file, got {str(path)!r}")
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))

    @property
    def vocab_size(self) -> int:
        """Number of ids (the length of the model's logits vector): largest id + 1."""
        return max(self.id_to_token) + 1

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size}, merges={len(self.ranks)}, special={sorted(self.special_tokens)})"

    # -- encode ----------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` (special tokens written in the text become their own ids)."""
        ids: list[int] = []
        for chunk, is_special in self._split_special(text):
            if is_special:
                ids.append(self.special_tokens[chunk])
                continue
            for piece in pre_tokenize(chunk):
                ids.extend(self._encode_piece(piece))
        return ids

    def tokens(self, text: str) -> list[str]:
        """The text of each token of `text`, for display: "Hello, world" -> ['Hello', ',', ' world'].

        A token that holds only part of a multi-byte character shows the bytes
        it cannot decode as `<0xE2>`-style hex (as byte-fallback vocabularies
        such as Llama 2's write them).
        """
        return [self.token_text(i) for i in self.encode(text)]

    def token_text(self, token_id: int) -> str:
        """The text of one token id (see `tokens`)."""
        token_id = self._check_id("token_id", token_id)
        token = self.id_to_token[token_id]
        if token in self.special_tokens:
            return token
        return _show_bytes(self._token_bytes(token))

    def _split_special(self, text: str):
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(f"text must be valid Unicode (no lone surrogates): {err}") from None
        if self._special_re is None:
            return [(text, False)] if text else []
        chunks, start = [], 0
        for m in self._special_re.finditer(text):
            if m.start() > start:
                chunks.append((text[start:m.start()], False))
            chunks.append((m.group(), True))
            start = m.end()
        if start < len(text):
            chunks.append((text[start:], False))
        return chunks

    def _encode_piece(self, piece: str) -> tuple[int, ...]:
        cached = self._cache.get(piece)
        if cached is None:
            byte_chars = bytes_to_unicode()
            symbols = [byte_chars[b] for b in piece.encode("utf-8")]
            cached = tuple(self.vocab[s] for s in self._merge(symbols))
            if len(self._cache) < 100_000:
                self._cache[piece] = cached
        return cached

    def _merge(self, symbols: list[str]) -> list[str]:
        """Apply merges to one piece: repeatedly join the best-ranked adjacent pair, everywhere it occurs."""
        ranks = self.ranks
        while len(symbols) > 1:
            best_rank, best = None, None
            for pair in zip(symbols, symbols[1:], strict=False):
                rank = ranks.get(pair)
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank, best = rank, pair
            if best is None:
                break
            merged, k = [], 0
            while k < len(symbols):
                if k + 1 < len(symbols) and symbols[k] == best[0] and symbols[k + 1] == best[1]:
                    merged.append(best[0] + best[1])
                    k += 2
                else:
                    merged.append(symbols[k])
                    k += 1
            symbols = merged
        return symbols

    # -- decode ----------------------------------------------------------------

    def decode(self, ids, *, skip_special_tokens: bool = False) -> str:
        """The text of `ids`; bytes that do not form valid UTF-8 become U+FFFD, as in `tokenizers`."""
        if isinstance(ids, str | bytes) or not hasattr(ids, "__iter__"):
            raise TypeError(f"ids must be a sequence of token ids, got {type(ids).__name__}")
        out = bytearray()
        for k, token_id in enumerate(ids):
            token_id = self._check_id(f"ids[{k}]", token_id)
            token = self.id_to_token[token_id]
            if token in self.special_tokens:
                if not skip_special_tokens:
                    out += token.encode("utf-8")
            else:
                out += self._token_bytes(token)
        return out.decode("utf-8", errors="replace")

    def _token_bytes(self, token: str) -> bytes:
        table = _unicode_to_bytes()
        return bytes(table[ch] for ch in token)

    def _check_id(self, name: str, token_id) -> int:
        if isinstance(token_id, bool) or not hasattr(token_id, "__index__"):
            raise TypeError(f"{name} must be an integer token id, got {token_id!r}")
        token_id = int(token_id)
        if token_id not in self.id_to_token:
            raise ValueError(f"{name} must be a token id of this vocabulary (0..{self.vocab_size - 1}), got {token_id}")
        return token_id


def _token_id(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{name} ids must be non-negative integers, got {value!r}")
    return value


def _show_bytes(data: bytes) -> str:
    """UTF-8 text, with bytes that do not decode shown as <0xAB>."""
    out, i = [], 0
    while i < len(data):
        try:
            out.append(data[i:].decode("utf-8"))
            break
        except UnicodeDecodeError as err:
            out.append(data[i:i + err.start].decode("utf-8"))
            out.extend(f"<0x{b:02X}>" for b in data[i + err.start:i + err.end])
            i += err.end
    return "".join(out)


def _check_supported(data: dict) -> None:
    model, pre, dec = data.get("model") or {}, data.get("pre_tokenizer") or {}, data.get("decoder") or {}
    problems = []
    if model.get("type") != "BPE":
        problems.append(f"model.type must be 'BPE', got {model.get('type')!r}")
    unsupported = ("ignore_merges", "byte_fallback", "dropout", "continuing_subword_prefix", "end_of_word_suffix")
    if any(model.get(key) for key in unsupported):
        problems.append("model options ignore_merges/byte_fallback/dropout/subword affixes are not supported")
    if data.get("normalizer") is not None:
        problems.append(f"normalizer must be null, got {data['normalizer']!r}")
    if pre.get("type") != "ByteLevel" or pre.get("add_prefix_space") or not pre.get("use_regex", True):
        problems.append(f"pre_tokenizer must be ByteLevel(add_prefix_space=False, use_regex=True), got {pre!r}")
    if dec.get("type") != "ByteLevel":
        problems.append(f"decoder must be ByteLevel, got {dec!r}")
    for t in data.get("added_tokens", []):
        if t.get("normalized") or t.get("lstrip") or t.get("rstrip") or t.get("single_word"):
            problems.append(f"added token {t.get('content')!r} must match exactly (no normalized/lstrip/rstrip/single_word)")
    if problems:
        raise ValueError("unsupported tokenizer.json: " + "; ".join(problems))


@functools.lru_cache(maxsize=1)
def tiny() -> BPETokenizer:
    """The tokenizer of the shipped tiny model (`chapter2/data/tiny_lm/tokenizer.json`), loaded once."""
    return BPETokenizer.from_file(TINY_TOKENIZER_PATH)


# -----------------------------------------------------------------------------
# training (CPython only: needs Hugging Face `tokenizers`)


def train_bpe(texts, vocab_size: int, *, special_tokens=DEFAULT_SPECIAL_TOKENS, min_frequency: int = 2,
              path=None) -> dict:
    """Train a byte-level BPE on `texts` with Hugging Face `tokenizers`; return the tokenizer.json content.

    The vocabulary holds the special tokens (ids 0, 1, ...), the 256
    byte-level characters, then one token per merge, until `vocab_size`
    entries or until no pair occurs `min_frequency` times (so a small corpus
    can give a smaller vocabulary; check `len(result['model']['vocab'])`).
    Pre-tokenizer: ByteLevel without prefix space (GPT-2's split regex);
    no normalizer; ByteLevel decoder. If `path` is given, the JSON is also
    written there (loadable by `BPETokenizer.from_file` and by transformers'
    `PreTrainedTokenizerFast(tokenizer_file=...)`).
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    from ._checks import positive_int

    if isinstance(texts, str) or not hasattr(texts, "__iter__"):
        raise TypeError(f"texts must be a list of strings (not a single string), got {type(texts).__name__}")
    texts = list(texts)
    if not texts or not all(isinstance(t, str) for t in texts):
        raise TypeError("texts must be a non-empty list of strings")
    special_tokens = list(special_tokens)
    for tok in special_tokens:
        if not isinstance(tok, str) or not tok or not all("!" <= ch <= "~" for ch in tok):
            raise ValueError(f"special_tokens must be non-empty printable ASCII strings without spaces, got {tok!r}")
    vocab_size = positive_int("vocab_size", vocab_size)
    if vocab_size < 256 + len(special_tokens):
        raise ValueError(f"vocab_size must be at least 256 + {len(special_tokens)} special tokens, got {vocab_size}")
    min_frequency = positive_int("min_frequency", min_frequency)

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=special_tokens,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer=trainer)
    data = json.loads(tokenizer.to_str())
    if path is not None:
        Path(path).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return data
