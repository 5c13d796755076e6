"""Figure for section 2.2: KV cache size against context length for the shipped model configs."""

import numpy as np

from ...models import list_configs, load_config
from . import figure
from ._style import INK, PALETTE

CONTEXTS = np.unique(np.round(np.logspace(10, 17, 57, base=2))).astype(int)  # 1k .. 128k tokens
COLORS = PALETTE + [INK]
LONG = 131072  # the right edge of the plot, where the alt text quotes sizes


def _gb(name, context):
    return load_config(name).kv_cache_bytes(int(context), 1, "bf16") / 1e9


def _alt() -> str:
    sizes = sorted(((_gb(n, LONG), n) for n in list_configs()), reverse=True)
    listing = ", ".join(f"{n} {gb:.3g} GB" for gb, n in sizes)
    mistral = load_config("Mistral-7B-v0.1")
    return (f"KV cache in GB (BF16, one sequence) against context length from 1k to 128k tokens, both axes logarithmic. "
            f"The lines are straight and parallel (the cache grows in proportion to the context); at {LONG:,} tokens: {listing}. "
            f"Only Mistral-7B's dotted line bends: it goes flat at {mistral.sliding_window:,} tokens, its sliding window "
            f"({_gb('Mistral-7B-v0.1', LONG):.2g} GB). DeepSeek-V3, by far the largest model, has one of the smallest "
            f"caches because multi-head latent attention caches a {load_config('DeepSeek-V3').kv_lora_rank}-wide latent per layer.")


@figure("kv_cache_growth", alt=_alt())
def kv_cache_growth_figure():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.8, 4.0))
    names = sorted(list_configs(), key=lambda n: -_gb(n, LONG))
    for i, name in enumerate(names):
        config = load_config(name)
        sizes = [_gb(name, c) for c in CONTEXTS]
        dash = (0, (4, 2)) if config.is_moe else (0, (1, 1.5)) if config.sliding_window else "-"
        per_token = config.kv_cache_bytes_per_token("bf16") / 1e3
        ax.plot(CONTEXTS, sizes, color=COLORS[i % len(COLORS)], linestyle=dash, linewidth=1.8,
                label=f"{name} ({per_token:.0f} kB/token)")
    ax.set_xscale("log", base=2)
    ticks = [1024, 4096, 16384, 65536, 131072]
    ax.set_xticks(ticks, [f"{t // 1024}k" for t in ticks])
    ax.set_yscale("log")  # log-log: proportional growth is a straight line, the gap between lines a ratio
    gb_ticks = [0.05, 0.1, 0.3, 1, 3, 10, 30]
    ax.set_yticks(gb_ticks, [f"{t:g}" for t in gb_ticks])
    ax.set(xlabel="context length (tokens)", ylabel="KV cache per sequence (GB, BF16)", xlim=(1024, LONG))
    ax.legend(loc="upper left", fontsize=8.5, title="dashed: mixture of experts, dotted: sliding window", title_fontsize=8.5)
    fig.tight_layout()
    return fig
