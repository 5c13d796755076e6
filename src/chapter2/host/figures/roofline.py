"""Figure for section 2.4: the H100 roofline with prefill, decode, attention and a video denoiser pass on it."""

import numpy as np

from ... import diffusion, hardware, roofline
from . import figure

GPU, DTYPE, MODEL, PROMPT, CONTEXT, HEAD_DIM, BATCH = "H100-SXM", "fp16", "Llama-3.1-8B", 4096, 4096, 128, 64


def points():
    """(label, intensity) of every workload on the chart, all computed by chapter2.roofline and chapter2.diffusion."""
    return [
        (f"decode, batch 1 ({MODEL}, {CONTEXT:,} context)", roofline.decode(MODEL, CONTEXT, gpu=GPU, dtype=DTYPE).intensity),
        (f"decode, batch {BATCH}", roofline.decode(MODEL, CONTEXT, batch=BATCH, gpu=GPU, dtype=DTYPE).intensity),
        (f"standard attention (N={PROMPT}, d={HEAD_DIM})", roofline.attention_intensity(PROMPT, HEAD_DIM).intensity),
        ("FlashAttention, same shape", roofline.flash_attention_intensity(PROMPT, HEAD_DIM).intensity),
        (f"prefill, {PROMPT:,}-token prompt", roofline.prefill(MODEL, PROMPT, gpu=GPU, dtype=DTYPE).intensity),
        ("Wan 2.1 14B pass, 81 frames 720p", diffusion.denoiser_pass("Wan2.1-T2V-14B", dtype=DTYPE).intensity),
    ]


def _alt() -> str:
    gpu = hardware.get_gpu(GPU)
    memory = [f"{label} ({x:,.3g})" for label, x in points() if roofline.bound(x, gpu, DTYPE) == "memory"]
    compute = [f"{label} ({x:,.0f})" for label, x in points() if roofline.bound(x, gpu, DTYPE) == "compute"]
    return (f"Log-log roofline of an {gpu.name} in dense {DTYPE.upper()}: attainable TFLOP/s rises along a slanted "
            f"line ({gpu.bandwidth_tb_s:g} TB/s times intensity) up to the flat roof at {gpu.tflops(DTYPE):g} TFLOP/s; "
            f"the ridge is at {gpu.ops_per_byte(DTYPE):.0f} operations per byte. Left of it, memory bound: "
            f"{'; '.join(memory)}. On the roof, compute bound: {'; '.join(compute)}.")


@figure("roofline", alt=_alt(), phone=False)  # on no page today: drawn for the desktop only
def roofline_figure():
    import matplotlib.pyplot as plt

    gpu = hardware.get_gpu(GPU)
    ridge = gpu.ops_per_byte(DTYPE)
    x = np.logspace(-0.5, 5.5, 400)
    fig, ax = plt.subplots(figsize=(7.8, 4.6))
    ax.loglog(x, roofline.attainable_flops(x, gpu, DTYPE) / 1e12, color="#3f7fd8", linewidth=2.2,
              label=f"{gpu.name}, dense {DTYPE.upper()}")
    ax.vlines(ridge, 20, 3000, linestyle=":", linewidth=1.2, color="#8a8f98")  # stops above the key
    ax.text(ridge * 1.15, 1500, f"ops:byte ≈ {ridge:.0f}", fontsize=9)
    key = []
    for n, (label, intensity) in enumerate(points(), start=1):
        y = roofline.attainable_flops(intensity, gpu, DTYPE) / 1e12
        memory_bound = roofline.bound(intensity, gpu, DTYPE) == "memory"
        ax.plot(intensity, y, marker="o" if memory_bound else "s", markersize=7, linestyle="none",
                color="#e0712c" if memory_bound else "#2ca58d")
        ax.annotate(str(n), (intensity, y), textcoords="offset points", xytext=(-4, 7), fontsize=9)
        value = f"{intensity:,.0f}" if intensity >= 10 else f"{intensity:.2f}"
        key.append(f"{n}  {label}: {value} ({'memory' if memory_bound else 'compute'} bound)")
    ax.text(0.99, 0.03, "\n".join(key), transform=ax.transAxes, ha="right", va="bottom", multialignment="left",
            fontsize=8)
    ax.set(xlabel="arithmetic intensity (operations per byte)", ylabel="attainable TFLOP/s",
           xlim=(0.3, 3e5), ylim=(0.5, 3000), title="Memory bound left of the ridge, compute bound right of it")
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig
