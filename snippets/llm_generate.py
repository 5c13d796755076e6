"""Generate with the shipped tiny model: one prefill, then one decode step per token.

The model (a small Llama-style network trained on this site's text, in
chapter2/data/tiny_lm) is small enough to run in your browser. Watch the
logits shape and the KV cache: the prefill fills the cache with the whole
prompt, and every decode step adds exactly one position.

Run: python snippets/llm_generate.py
"""
import numpy as np

from chapter2.models import TINY_LM_DIR
from chapter2.models.transformer import generate, load_pretrained
from chapter2.tokenizer import tiny

model = load_pretrained(TINY_LM_DIR)  # config.json + model.safetensors, read with numpy
tokenizer = tiny()  # its byte-level BPE tokenizer
print(model)

prompt = "Decode produces one token"
ids = tokenizer.encode(prompt)
print(f"prompt {prompt!r} -> {len(ids)} tokens {ids}")

# Prefill: every prompt token in one forward pass.
logits, cache = model.prefill(ids)
print(f"prefill: logits {logits.shape} (one row per prompt token), "
      f"cache {len(cache)} positions, {cache.nbytes:,} bytes")
assert logits.shape == (len(ids), model.config.vocab_size), "one row per token"
assert len(cache) == len(ids), "one cache position per prompt token"

# Decode: greedy (temperature 0), one token in and one logits vector out per step.
out = []
token = int(np.argmax(logits[-1]))  # the last row predicts the first new token
for step in range(1, 9):
    out.append(token)
    logits, cache = model.decode(token, cache)
    print(f"decode {step}: fed {tokenizer.token_text(token)!r:12} -> logits {logits.shape}, "
          f"cache {len(cache)} positions, {cache.nbytes:,} bytes")
    assert len(cache) == len(ids) + step, "every decode step adds exactly one position"
    token = int(np.argmax(logits))
out.append(token)

print("text:", repr(tokenizer.decode(ids + out)))
c = model.config
print(f"the cache grows by {cache.bytes_per_token:,} bytes per token: "
      f"2 (K, V) x {c.num_hidden_layers} layers x {c.num_key_value_heads} KV heads "
      f"x {c.head_dim} x {cache.dtype.itemsize} bytes ({cache.dtype})")
per_token = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * cache.dtype.itemsize
assert cache.bytes_per_token == per_token, "K and V, per layer and KV head, head_dim each"

# The same tokens from the package's generate loop, and the same logits without any cache.
agrees = generate(model, ids, max_tokens=len(out), temperature=0).tokens == out
print("generate() agrees:", agrees)
assert agrees, "generate() must produce the tokens of the loop above"
full, _ = model.prefill(ids + out[:-1])  # recompute everything from scratch
same = np.allclose(full[-1], logits, atol=1e-4)
print("cached decode == full recompute:", same)
assert same, "the last decode step's logits must equal a full recompute's"
