"""FlashAttention returns what standard attention returns, without ever holding the N x N scores.

Run: python snippets/attn_flash_equals_naive.py
"""
import numpy as np

from chapter2.attention import attention, flash_attention, flash_schedule

rng = np.random.default_rng(0)
B, H, N, d = 1, 4, 1024, 64  # batch, heads, sequence length, head dimension
block = 128  # FlashAttention tile: 128 queries x 128 keys
q, k, v = (rng.standard_normal((B, H, N, d)).astype(np.float32) for _ in range(3))

oracle = attention(*(x.astype(np.float64) for x in (q, k, v)), causal=True)  # float64 ground truth
naive = attention(q, k, v, causal=True)  # float32, builds the (B, H, N, N) score matrix
flash = flash_attention(q, k, v, causal=True, block_q=block, block_k=block)  # float32, tile by tile

err_naive, err_flash = np.abs(naive - oracle).max(), np.abs(flash - oracle).max()
print(f"max |flash - naive|  = {np.abs(flash - naive).max():.1e}")
print(f"max |naive - exact|  = {err_naive:.1e}   (float32 rounding)")
print(f"max |flash - exact|  = {err_flash:.1e}   (same size: nothing is approximated)")
assert err_flash <= 2 * err_naive, "FlashAttention must be as exact as naive attention in the same precision"

# Memory per head in numbers held at once: Q, K, V and O (4 N d) plus the scratch space.
# Naive attention's scratch is the score matrix (N^2); FlashAttention's is one (block x block)
# tile of S and A (the attention weights) plus m_i, l_i and acc (the page's mu_i, l_i and acc) for the
# block of queries in flight.
tile = block * block + block * (2 + d)
print(f"\n{'N':>7} {'naive: 4Nd + N^2':>18} {'flash: 4Nd + tile':>18}")
for n in (1024, 4096, 32768):
    print(f"{n:>7,} {4 * n * d + n * n:>18,} {4 * n * d + tile:>18,}")

tiles = flash_schedule(N, causal=True, block_q=block, block_k=block)
print(f"causal tiles visited: {np.count_nonzero(tiles)} of {tiles.size} (the rest lie above the diagonal)")
blocks = N // block
assert np.count_nonzero(tiles) == blocks * (blocks + 1) // 2, "causal: the tiles on and below the diagonal"
