"""A Mamba-style selective scan: two evaluation orders, one answer, and a state that never grows.

Run: python snippets/attn_selective_scan.py
"""
import numpy as np

from chapter2.ssm import selective_scan, selective_scan_chunked, selective_scan_step

rng = np.random.default_rng(0)
N, channels, n_state = 512, 16, 8  # sequence length, channels, state size per channel
x = rng.standard_normal((N, channels))
delta = np.log1p(np.exp(rng.standard_normal((N, channels))))  # softplus: step sizes > 0, chosen per token
# A, B, C: the Mamba paper's parameters (bold A, B, C on the page)
A = -np.exp(rng.standard_normal((channels, n_state)))  # negative: the state decays (forgets)
B = rng.standard_normal((N, n_state))  # input-dependent ("selective") write ...
C = rng.standard_normal((N, n_state))  # ... and read vectors

y_loop, h = selective_scan(x, delta, A, B, C, return_state=True)  # one step per token
y_chunk = selective_scan_chunked(x, delta, A, B, C, chunk_size=64)  # 8 chunks of 64, state carried
print(f"recurrent vs chunked: max |diff| = {np.abs(y_loop - y_chunk).max():.1e}")
assert np.allclose(y_loop, y_chunk), "the chunked scan must give the recurrent scan's outputs"

# Decode: the next token needs only the state h, not the 512 tokens before it.
x_new, d_new, b_new, c_new = x[:1], delta[:1], B[:1], C[:1]  # reuse row 0 as a "new" token
y_next, h_next = selective_scan_step(h, x_new[0], d_new[0], A, b_new[0], c_new[0])
y_full = selective_scan(np.vstack([x, x_new]), np.vstack([delta, d_new]), A, np.vstack([B, b_new]), np.vstack([C, c_new]))
same = np.allclose(y_next, y_full[-1])
print(f"one decode step from the state == rescanning all {N + 1} tokens: {same}")
assert same, "one step from the state must give what rescanning every token gives"
print(f"state shape {h.shape} before and {h_next.shape} after: {h.size} numbers whatever the length")
assert h.shape == h_next.shape == (channels, n_state), "the state does not grow with the sequence"

# An attention layer of the same width would keep K and V for every token (2 x channels numbers each).
for tokens in (512, 8192, 131072):
    print(f"{tokens:>7,} tokens: KV cache {2 * tokens * channels:>9,} numbers   SSM state {channels * n_state:>4} numbers")
