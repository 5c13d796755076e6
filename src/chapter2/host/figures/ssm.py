"""Figure for section 2.5: how attention, sliding window, SSM and hybrid stacks scale with length."""

import numpy as np

from ... import ssm
from . import figure
from ._style import legend_below, phone, pt, size, wrap

WINDOW = 4096


def _alt_text() -> str:
    """Alt text whose numbers come from the same cost model as the curves."""
    config = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    far = ssm.compare_architectures(config, 2**20)
    flops_ratio = far["attention"].flops / far["hybrid"].flops
    memory_share = far["hybrid"].memory_bytes / far["attention"].memory_bytes
    return (
        "Two log-log panels against context length from 1 thousand to 1 million tokens, for the "
        f"{config.mixing_layers} sequence-mixing layers of {config.name} built four ways. Left, prefill FLOPs of "
        "sequence mixing: full causal attention grows as the square of the length; sliding-window attention "
        f"(w = {WINDOW}) follows it up to {WINDOW} tokens and then grows linearly; all-Mamba grows linearly and "
        f"lowest; the hybrid ({config.attention_layers} attention + {config.ssm_layers} Mamba layers) grows as "
        f"the square too but {flops_ratio:.1f} times lower at 1M tokens. Right, KV cache plus SSM state per sequence: "
        f"attention grows linearly, the window caps it at {WINDOW} tokens, all-Mamba stays flat at "
        f"{far['ssm'].memory_bytes / 1e6:.0f} MB, and the hybrid grows linearly to {100 * memory_share:.0f} % of "
        "all-attention at 1M tokens."
    )


@figure("attention_vs_ssm_scaling", alt=_alt_text())
def attention_vs_ssm_scaling():
    import matplotlib.pyplot as plt

    config = ssm.HYBRID_PRESETS["nemotron-3-nano"]
    lengths = np.unique(np.round(np.logspace(10, 20, 41, base=2)).astype(int))  # 1k .. 1M tokens
    stacks = {
        "full attention": lambda n: ssm.compare_architectures(config, n)["attention"],
        f"sliding window (w={WINDOW})": lambda n: ssm.compare_architectures(config, n, window=WINDOW)["sliding window"],
        f"hybrid ({config.attention_layers} attn + {config.ssm_layers} Mamba)": lambda n: ssm.mixing_cost(config, n),
        "all Mamba-2": lambda n: ssm.compare_architectures(config, n)["ssm"],
    }
    stacked = phone()  # one panel above the other on a phone, the key under both
    fig, (ax_flops, ax_mem) = plt.subplots(2 if stacked else 1, 1 if stacked else 2, figsize=size((9.2, 3.8), 6.6))
    for label, cost in stacks.items():
        costs = [cost(int(n)) for n in lengths]
        dash = (0, (4, 2)) if "window" in label else "-"
        ax_flops.plot(lengths, [c.flops for c in costs], label=label, linestyle=dash, linewidth=1.7)
        ax_mem.plot(lengths, [c.memory_bytes / 1e9 for c in costs], label=label, linestyle=dash, linewidth=1.7)
    ax_flops.set(xscale="log", yscale="log", xlabel="context length (tokens)", ylabel="FLOPs",
                 title="prefill: sequence-mixing FLOPs")
    ax_mem.set(xscale="log", yscale="log", xlabel="context length (tokens)", ylabel="GB per sequence",
               title="KV cache + SSM state")
    if stacked:
        legend_below(ax_mem)
    else:
        ax_flops.legend(loc="upper left", fontsize=8)
    fig.suptitle(wrap(f"{config.mixing_layers} mixing layers with {config.name} shapes", 36), fontsize=pt(10))
    fig.tight_layout()
    return fig
