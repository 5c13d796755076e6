"""Standard attention's arithmetic intensity, counted step by step (N=4096, d=128, FP16).

Run: python snippets/attention_intensity.py
"""
from chapter2.hardware import GPUS
from chapter2.roofline import attention_intensity, flash_attention_intensity

N, d, b = 4096, 128, 2  # sequence length, head dimension, bytes per FP16 element

# Every step reads its inputs from device memory and writes its output back.
steps = [
    # name,             elements read,   elements written, operations
    ("S = Q K^T",       2 * N * d,       N * N,            2 * N * N * d),
    ("A = softmax(S)",  N * N,           N * N,            3 * N * N),
    ("O = A V",         N * N + N * d,   N * d,            2 * N * N * d),
]
total_bytes = total_ops = 0
for name, read, written, ops in steps:
    total_bytes += (read + written) * b
    total_ops += ops
    print(f"{name:15} bytes {(read + written) * b:>12,}  ops {ops:>15,}")

print(f"total bytes {total_bytes:,} = 8N^2 + 8Nd = {8 * N * N + 8 * N * d:,}")
print(f"total ops   {total_ops:,} = 4N^2 d + 3N^2 = {4 * N * N * d + 3 * N * N:,}")
assert total_bytes == 8 * N * N + 8 * N * d, "the steps must move 8N^2 + 8Nd bytes"
assert total_ops == 4 * N * N * d + 3 * N * N, "the steps must do 4N^2 d + 3N^2 operations"
print(f"intensity   {total_ops / total_bytes:.1f} ops/byte; an H100 needs {GPUS['H100-SXM'].ops_per_byte('fp16'):.0f}")

# The library counts the same steps; FlashAttention keeps S and A (the attention weights) on chip.
standard, flash = attention_intensity(N, d), flash_attention_intensity(N, d)
print(f"library: standard {standard.intensity:.1f}, FlashAttention {flash.intensity:.0f}")
assert (standard.ops, standard.bytes) == (total_ops, total_bytes), "the library must count the same steps"
assert flash.ops == total_ops and flash.bytes == 8 * N * d, "FlashAttention: same operations, only Q, K, V and O move"
