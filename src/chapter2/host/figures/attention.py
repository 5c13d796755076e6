"""Figures for sections 2.2.3 and 2.5: attention masks, attention weights, the FlashAttention tile schedule."""

import numpy as np

from ... import attention as attn
from . import figure
from ._style import INK, PALETTE, phone, size, wrap


def _mask_panel(ax, mask, title, every=2):
    from matplotlib.colors import ListedColormap

    ax.imshow(mask.astype(float), cmap=ListedColormap([(0, 0, 0, 0), PALETTE[0]]), vmin=0, vmax=1)
    n_q, n_k = mask.shape
    ax.set_xticks(np.arange(n_k), minor=True)
    ax.set_yticks(np.arange(n_q), minor=True)
    ax.set_xticks(np.arange(n_k)[::every])
    ax.set_yticks(np.arange(n_q)[::every])
    ax.grid(False)
    for x in np.arange(n_k + 1) - 0.5:
        ax.axvline(x, color=INK, linewidth=0.4, alpha=0.5)
    for y in np.arange(n_q + 1) - 0.5:
        ax.axhline(y, color=INK, linewidth=0.4, alpha=0.5)
    ax.set(title=title, xlabel="key position j", ylabel="query position i")


@figure("causal_mask", alt="An 8 by 8 grid of query positions (rows) against key positions (columns). Cells on and "
        "below the diagonal are filled: query i may attend to keys 0 through i. Cells above the diagonal are empty: "
        "no token sees the future. 36 of the 64 pairs are computed.", phone=False)
def causal_mask_figure():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3.8, 3.8))
    _mask_panel(ax, attn.attention_mask(8, causal=True), f"causal mask: {attn.attended_pairs(8, causal=True)} of 64 pairs")
    fig.tight_layout()
    return fig


@figure("sliding_window_mask", alt="Two 12 by 12 grids of query positions against key positions. Left, the causal "
        "mask: a filled lower triangle of 78 pairs. Right, a sliding window of 4: only a diagonal band four cells wide "
        "is filled, so each query sees itself and the three keys before it, 42 pairs; the band's area grows like N times "
        "w instead of N squared.")
def sliding_window_mask_figure():
    import matplotlib.pyplot as plt

    n, w = 12, 4
    every = 4 if phone() else 2  # a phone's panel is half as wide: a tick every 4 positions
    fig, (left, right) = plt.subplots(1, 2, figsize=size((7.6, 3.9), 2.9), sharey=phone())
    _mask_panel(left, attn.attention_mask(n, causal=True), wrap(f"causal: {attn.attended_pairs(n, causal=True)} pairs", 10), every)
    _mask_panel(right, attn.attention_mask(n, window=w), wrap(f"window w={w}: {attn.attended_pairs(n, window=w)} pairs", 12), every)
    if phone():
        left.set_xlabel("key j")
        right.set(xlabel="key j", ylabel="")
    fig.tight_layout()
    return fig


@figure("attention_weights", alt="Heat map of causal attention weights for 10 tokens with random queries and keys "
        "(seeded). Each row is one query and sums to 1; everything above the diagonal is exactly zero because of the "
        "causal mask. Early rows spread weight over few keys, later rows over more.")
def attention_weights_figure():
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    n, d = 10, 16
    q = rng.standard_normal((1, 1, n, d))
    k = rng.standard_normal((1, 1, n, d))
    weights = attn.attention_weights(q, k, causal=True)[0, 0]  # (N, N)
    shown = np.ma.masked_where(~attn.attention_mask(n, causal=True), weights)
    fig, ax = plt.subplots(figsize=size((4.6, 3.9), 3.6))
    image = ax.imshow(shown, cmap="viridis", vmin=0, vmax=1)
    ax.grid(False)
    ax.set(title="softmax(QK^T / sqrt(d)), causal", xlabel="key position j", ylabel="query position i",
           xticks=range(0, n, 2), yticks=range(0, n, 2))
    fig.colorbar(image, ax=ax, label="weight (each row sums to 1)")
    fig.tight_layout()
    return fig


@figure("flash_schedule", alt="Two grids of FlashAttention tiles, query blocks as rows and key blocks as columns, "
        "128 by 128 positions per tile. Left, causal attention over 1024 tokens: tiles below the diagonal are computed "
        "without a mask, the 8 diagonal tiles are computed with the mask, and the 28 tiles above the diagonal are "
        "skipped entirely. Right, a sliding window of 256 over 2048 tokens: only a band of tiles along the diagonal is computed, "
        "two or three per query block (one for the first); everything else is skipped.")
def flash_schedule_figure():
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    cmap = ListedColormap([(0, 0, 0, 0), PALETTE[1], PALETTE[0]])  # skipped, masked, full
    cases = [
        ("causal, N=1024", attn.flash_schedule(1024, causal=True, block_q=128, block_k=128)),
        ("window 256, N=2048", attn.flash_schedule(2048, window=256, block_q=128, block_k=128)),
    ]
    stacked = phone()  # one panel above the other on a phone
    fig, axes = plt.subplots(2 if stacked else 1, 1 if stacked else 2, figsize=size((8.2, 4.3), 8.0))
    for ax, (title, tiles) in zip(axes, cases, strict=True):
        ax.imshow(tiles, cmap=cmap, vmin=0, vmax=2)
        ax.grid(False)
        for x in np.arange(tiles.shape[1] + 1) - 0.5:
            ax.axvline(x, color=INK, linewidth=0.4, alpha=0.5)
        for y in np.arange(tiles.shape[0] + 1) - 0.5:
            ax.axhline(y, color=INK, linewidth=0.4, alpha=0.5)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        done = int((tiles != attn.TILE_SKIPPED).sum())
        ax.set(title=f"{title}: {done} of {tiles.size} tiles", xlabel="key block (128 keys)", ylabel="query block (128 queries)")
    handles = [Patch(color=PALETTE[0], label="computed"), Patch(color=PALETTE[1], label="computed with mask"),
               Patch(facecolor="none", edgecolor=INK, label="skipped")]
    if stacked:
        fig.tight_layout(rect=(0, 0.07, 1, 1))
        fig.legend(handles=handles, loc="lower center", ncol=2, bbox_to_anchor=(0.5, 0.0))
    else:
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        fig.legend(handles=handles, loc="lower center", ncol=3, bbox_to_anchor=(0.5, 0.0))
    return fig
