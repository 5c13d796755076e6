"""Causal attention for four tokens, one head, step by step, checked against the package.

Run: python snippets/llm_attention_by_hand.py
"""
import numpy as np

from chapter2.attention import attention

np.set_printoptions(precision=3, suppress=True)
rng = np.random.default_rng(1)
n, d = 4, 8  # 4 tokens, head dimension 8
q = rng.standard_normal((n, d))  # one query per token
k = rng.standard_normal((n, d))  # one key per token
v = rng.standard_normal((n, d))  # one value per token

scores = q @ k.T / np.sqrt(d)  # (n, n): query i against key j, scaled by 1/sqrt(d)
future = np.triu(np.ones((n, n), dtype=bool), k=1)  # key j after query i
scores[future] = -np.inf  # causal mask: no token sees the future
weights = np.exp(scores - scores.max(axis=1, keepdims=True))
weights /= weights.sum(axis=1, keepdims=True)  # softmax over each row
out = weights @ v  # (n, d): weighted sum of the values

print("attention weights (row i = query i, each row sums to 1):")
print(weights)
print("row sums:", weights.sum(axis=1))
assert np.allclose(weights.sum(axis=1), 1), "each row sums to 1"
assert not weights[future].any(), "the future gets weight 0"
# the package's (B, H, N, d) layout: add batch and head axes of size 1
ours = attention(q[None, None], k[None, None], v[None, None], causal=True)[0, 0]
same = np.allclose(out, ours)
print("same as chapter2.attention.attention:", same)
assert same, "attention by hand must match chapter2.attention.attention"
