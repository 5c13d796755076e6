"""The GPU picker shared by the calculators that take a GPU (sections 2.2a, 2.3 and 2.4).

`CATALOG_OPTIONS` are the GPUs of `chapter2/data/gpus.json` (`hardware.GPUS`), `GPU_OPTIONS` the same
and a custom GPU the reader describes with two numbers. `gpu_fields` is the select and those two
numbers (shown only when the custom GPU is chosen); `pick_gpu` turns the fields into a `hardware.GPU`.
`TENSOR_DTYPES` are the data types a tensor-core peak is published for.
"""

from __future__ import annotations

from .. import hardware
from ._registry import Field

CATALOG_OPTIONS = tuple((key, gpu.name) for key, gpu in hardware.GPUS.items())
GPU_OPTIONS = CATALOG_OPTIONS + (("custom", "Custom: enter TFLOP/s and TB/s below"),)
TENSOR_DTYPES = (("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"), ("fp4", "FP4"))


def gpu_fields(default: str = "H100-SXM") -> list[Field]:
    """The select of catalog GPUs and a custom one, and the custom GPU's dense TFLOP/s and bandwidth."""
    return [
        Field("gpu", "GPU", default, kind="select", options=GPU_OPTIONS),
        Field("custom_tflops", "Custom GPU: dense TFLOP/s", 989.4, min=0.001, max=1e6,
              show_when=("gpu", "custom"), unit="TFLOP/s"),
        Field("custom_tb_s", "Custom GPU: memory bandwidth (TB/s)", 3.35, min=0.001, max=1e3,
              show_when=("gpu", "custom"), unit="TB/s"),
    ]


def pick_gpu(gpu: str, custom_tflops: float, custom_tb_s: float, dtype: str) -> hardware.GPU:
    """The catalog GPU `gpu`, or a custom one whose peak for `dtype` is `custom_tflops`."""
    if gpu == "custom":
        return hardware.custom_gpu(custom_tflops, custom_tb_s, memory_gb=80, dtype=dtype, name="custom GPU")
    return hardware.get_gpu(gpu)


def gpu_numbers(g: hardware.GPU, dtype: str) -> dict:
    """A GPU's figures as a calculator's numbers (calculators.NUMBERS): its peak for `dtype`, bandwidth, ops:byte
    and memory."""
    return {"gpu": g.key, "peak (FLOP/s)": float(g.peak_flops(dtype)), "bandwidth (B/s)": float(g.bandwidth),
            "ops_per_byte (FLOP/B)": float(g.ops_per_byte(dtype)), "gpu_memory (B)": float(g.memory_bytes),
            "gpu_memory (GB)": float(g.memory_gb)}
