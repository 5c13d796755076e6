"""Decode with a KV cache gives the same attention output as recomputing everything.

Run: python snippets/kv_cache_decode.py
"""
import numpy as np

from chapter2.attention import attended_pairs, attention
from chapter2.kv_cache import KVCache, decode_attention

rng = np.random.default_rng(0)
# grouped-query attention: 4 query heads per K/V head
batch, n_heads, n_kv_heads, head_dim = 1, 8, 2, 64
n_prompt, n_new = 12, 6
n_total = n_prompt + n_new
q = rng.standard_normal((batch, n_heads, n_total, head_dim)).astype(np.float32)
k = rng.standard_normal((batch, n_kv_heads, n_total, head_dim)).astype(np.float32)
v = rng.standard_normal((batch, n_kv_heads, n_total, head_dim)).astype(np.float32)

# Without a cache: every step recomputes causal attention over the whole sequence so far.
full = attention(q, k, v, causal=True)  # (B, H, N, d)

# With a cache: prefill the prompt once, then one query per decode step.
cache = KVCache(n_layers=1, batch_size=batch, n_kv_heads=n_kv_heads, head_dim=head_dim,
                max_seq_len=n_total)
k_all, v_all = cache.append(0, k[:, :, :n_prompt], v[:, :, :n_prompt])
outputs = [attention(q[:, :, :n_prompt], k_all, v_all, causal=True)]  # prefill: (B, H, 12, d)
for t in range(n_prompt, n_total):
    # store the new token's K and V, then score its one query against the cache
    k_all, v_all = cache.append(0, k[:, :, t : t + 1], v[:, :, t : t + 1])
    outputs.append(decode_attention(q[:, :, t : t + 1], k_all, v_all))  # (B, H, 1, d)
cached = np.concatenate(outputs, axis=2)

same = np.allclose(cached, full, atol=1e-6)
print("cached decode == full recompute:", same)
print(f"max |difference| = {np.abs(cached - full).max():.2e}")
assert same, "decoding with the KV cache must give the full recompute's outputs"
print(f"cache holds {cache.seq_len} positions, {cache.nbytes:,} bytes "
      f"(K and V, {n_kv_heads} KV heads, fp32)")
per_position = 2 * n_kv_heads * head_dim * 4  # K and V, head_dim numbers per KV head, fp32
assert cache.nbytes == n_total * per_position, "one K and one V per KV head and position"

# Query-key pairs scored over the decode steps: with the cache, one row per step;
# without it, the whole causal triangle again at every step.
with_cache = sum(attended_pairs(1, t + 1, causal=True) for t in range(n_prompt, n_total))
without = sum(attended_pairs(t + 1, causal=True) for t in range(n_prompt, n_total))
print(f"scores computed in {n_new} decode steps: "
      f"{with_cache} with the cache, {without} without")
assert with_cache == sum(range(n_prompt + 1, n_total + 1)), "step t: one query against t keys"
