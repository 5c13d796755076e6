"""The hardware ops:byte ratio of every GPU in the catalog: dense peak FLOP/s / memory bandwidth.

Run: python snippets/ops_per_byte.py
"""
from chapter2.hardware import GPUS, custom_gpu

# The chapter's example, by hand: 989.4 TFLOP/s of dense FP16 over 3.35 TB/s.
by_hand = 989.4e12 / 3.35e12
print(f"H100 by hand: {by_hand:.1f} FLOPs per byte")
assert abs(GPUS["H100-SXM"].ops_per_byte("fp16") - by_hand) < 1e-9, "the catalog's H100 row says the same"

print(f"{'GPU':34} {'FP16 TFLOP/s':>12} {'TB/s':>6} {'FP16 ops:byte':>14} {'FP8 ops:byte':>13}")
for gpu in GPUS.values():
    fp8 = f"{gpu.ops_per_byte('fp8'):.0f}" if "fp8" in gpu.dense_flops else "no FP8"
    print(f"{gpu.name:34} {gpu.tflops('fp16'):12g} {gpu.bandwidth_tb_s:6g} {gpu.ops_per_byte('fp16'):14.0f} {fp8:>13}")

# Try your own part: what ratio do 500 TFLOP/s over 2 TB/s give?
mine = custom_gpu(tflops=500, bandwidth_tb_s=2.0)
print(f"custom 500 TFLOP/s, 2 TB/s: {mine.ops_per_byte('fp16'):.0f} FLOPs per byte")
assert abs(mine.ops_per_byte("fp16") - 500 / 2.0) < 1e-9, "500e12 FLOP/s over 2e12 bytes/s is 250 FLOPs per byte"
