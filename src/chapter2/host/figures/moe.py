"""Figure for section 2.2.4: the share of experts a decode batch touches, vs the share of FLOPs each token uses."""

import numpy as np

from ... import moe
from ...models import MIXTRAL_8X7B, QWEN3_235B_A22B
from . import figure
from ._style import PALETTE, legend_below, phone, pt, size, wrap


@figure("moe_coverage", alt="Share of a layer's experts touched by one decode step, against batch size from 1 to 4096 "
        "tokens on a log axis. For Qwen3-235B-A22B (8 of 128 experts) the curve starts at 6 percent for one token, passes "
        "90 percent near 36 tokens and is essentially 100 percent from about 100 tokens. Mixtral (2 of 8) saturates "
        "even sooner. Simulated points with skewed (Zipf) routing sit lower but climb the same way. A flat dashed line "
        "at 6.25 percent shows that each token's compute stays at 8 of 128 experts whatever the batch.")
def moe_coverage_figure():
    import matplotlib.pyplot as plt

    batch = np.unique(np.round(np.logspace(0, 12, 97, base=2))).astype(int)  # 1 .. 4096 tokens
    qwen, mixtral = QWEN3_235B_A22B, MIXTRAL_8X7B
    fig, ax = plt.subplots(figsize=size((6.8, 3.9), 3.0))
    for spec, color in ((qwen, PALETTE[0]), (mixtral, PALETTE[2])):
        share = [100 * moe.expected_experts_touched(spec.n_experts, spec.k, t) / spec.n_experts for t in batch]
        ax.plot(batch, share, color=color, linewidth=1.8, label=wrap(f"{spec.name}: {spec.k} of {spec.n_experts}, uniform", 34))
    rng = np.random.default_rng(0)
    popularity = moe.zipf_popularity(qwen.n_experts, 1.0)
    sim_batch = [1, 4, 16, 64, 256, 1024, 4096]
    sim = [100 * moe.simulate_experts_touched(qwen.n_experts, qwen.k, t, popularity=popularity, trials=8,
                                              rng=rng).mean() / qwen.n_experts for t in sim_batch]
    ax.plot(sim_batch, sim, "o", color=PALETTE[1], label=wrap(f"{qwen.name}, Zipf-skewed routing (simulated)", 34))
    ax.axhline(100 * qwen.k / qwen.n_experts, color=PALETTE[0], linestyle=(0, (4, 2)), linewidth=1.2,
               label=wrap(f"compute per token: {qwen.k}/{qwen.n_experts} of the experts", 34))
    ax.set_xscale("log", base=2)
    ax.set(xlabel="tokens in the decode batch", ylabel="experts touched per layer (%)", ylim=(0, 105), xlim=(1, 4096))
    if phone():
        ax.set_xticks([1, 16, 256, 4096], ["1", "16", "256", "4096"])
        legend_below(ax)
    else:
        ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.42), fontsize=pt(8.5))
    fig.tight_layout()
    return fig
