"""Text -> subword tokens -> ids with a byte-level BPE, and why real vocabularies are large.

Run: python snippets/tokenize_text.py
"""
from chapter2.models import ModelConfig, load_config
from chapter2.tokenizer import TINY_TOKENIZER_PATH, tiny

tok = tiny()  # the BPE trained on this site's text (the tiny model's tokenizer)
text = "Prefill reads the prompt; decode emits one token per step. 🤖"

ids = tok.encode(text)
print(f"{len(text)} characters -> {len(ids)} tokens")
# <0xF0>... are the bytes of a character split across tokens
print("tokens:", "|".join(tok.tokens(text)))
print("ids:   ", ids)
round_trip = tok.decode(ids) == text
print("decode(ids) == text:", round_trip)
assert round_trip, "a byte-level BPE must give the text back exactly"

# The logits vector and the embedding table both have one row per vocabulary entry.
print(f"\n{'model':<14}{'vocab':>9}{'embedding params':>18}")
tiny_config = ModelConfig.from_json(TINY_TOKENIZER_PATH.parent / "config.json", name="tiny_lm")
for c in (tiny_config, load_config("Llama-3.1-8B"), load_config("Qwen3-8B")):
    print(f"{c.name:<14}{c.vocab_size:>9,}{c.vocab_size * c.hidden_size:>18,}")
