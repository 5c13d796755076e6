"""Figure for section 2.2: KV cache size against context length for shipped model configs."""

import numpy as np

from ...models import load_config
from . import figure
from ._style import INK, PALETTE, legend_below, phone, pt, size, wrap

CONTEXTS = np.unique(np.round(np.logspace(10, 17, 57, base=2))).astype(int)  # 1k .. 128k tokens
COLORS = PALETTE + [INK]
LONG = 131072  # the right edge of the plot, where the alt text quotes sizes
SHORT = int(CONTEXTS[0])
# dense GQA models, a sliding window, windows and chunks in some layers only, and multi-head latent attention
MODELS = ("Llama-3.1-8B", "Qwen3-8B", "Qwen2-7B", "Mistral-7B-v0.1", "gemma-3-27b-it", "gpt-oss-120b",
          "Llama-4-Scout-17B-16E", "DeepSeek-V3")


def _gb(name, context):
    return load_config(name).kv_cache_bytes(int(context), 1, "bf16") / 1e9


def _windows(name):
    """The windows and chunks (tokens) of a config's layers, in the plotted range, where its line bends."""
    c = load_config(name)
    return sorted({w for w in (c.window_of(i) for i in range(c.num_hidden_layers)) if w and SHORT < w < LONG})


def _alt() -> str:
    sizes = sorted(((_gb(n, LONG), n) for n in MODELS), reverse=True)
    listing = ", ".join(f"{n} {gb:.3g} GB" for gb, n in sizes)
    bends = [f"{n} at {', '.join(f'{w:,}' for w in _windows(n))} tokens" for n in MODELS if _windows(n)]
    below = [n for n in MODELS if load_config(n).sliding_window and not _windows(n)]
    d = load_config("DeepSeek-V3")
    return (f"KV cache in GB (BF16, one sequence) against context length from 1k to 128k tokens, both axes logarithmic. "
            f"A line grows in proportion to the context while all its layers keep every token; at {LONG:,} tokens: "
            f"{listing}. Dotted lines have windowed or chunked layers: they bend where the window fills "
            f"({'; '.join(bends)}), after which only their full-attention layers, if any, grow; "
            f"{' and '.join(below)} fill their windows by 1k tokens, so across the whole plot only their "
            f"full-attention layers grow. "
            f"DeepSeek-V3 ({d.params().total / 1e9:.0f}B parameters) has one of the smallest caches because "
            f"multi-head latent attention caches a {d.kv_lora_rank}-wide latent and a {d.qk_rope_head_dim}-wide "
            f"RoPE key, {d.kv_cache_elements_per_token(0)} numbers, per layer.")


@figure("kv_cache_growth", alt=_alt())
def kv_cache_growth_figure():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size((6.8, 4.2), 3.4))
    names = sorted(MODELS, key=lambda n: -_gb(n, LONG))
    for i, name in enumerate(names):
        config = load_config(name)
        sizes = [_gb(name, c) for c in CONTEXTS]
        windowed = config.sliding_window or config.attention_chunk_size
        dash = (0, (1, 1.5)) if windowed else (0, (4, 2)) if config.is_moe else "-"
        per_token = config.kv_cache_bytes_per_token("bf16") / 1e3
        ax.plot(CONTEXTS, sizes, color=COLORS[i % len(COLORS)], linestyle=dash, linewidth=1.8,
                label=f"{name} ({per_token:.0f} kB/token)")
    ax.set_xscale("log", base=2)
    ticks = [1024, 4096, 16384, 131072] if phone() else [1024, 4096, 16384, 65536, 131072]
    ax.set_xticks(ticks, [f"{t // 1024}k" for t in ticks])
    ax.set_yscale("log")  # log-log: proportional growth is a straight line, the gap between lines a ratio
    gb_ticks = [0.05, 0.1, 0.3, 1, 3, 10, 30]
    ax.set_yticks(gb_ticks, [f"{t:g}" for t in gb_ticks])
    ax.set(xlabel="context length (tokens)", ylabel=wrap("KV cache per sequence (GB, BF16)", 22), xlim=(1024, LONG))
    key = dict(fontsize=pt(8), title=wrap("dotted: windowed or chunked layers, dashed: other MoE", 36),
               title_fontsize=pt(8))
    if phone():
        legend_below(ax, alignment="left", **key)
    else:
        ax.legend(loc="upper left", **key)
    fig.tight_layout()
    return fig
