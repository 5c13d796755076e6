"""Figures for sections 2.2.3 and 2.5: attention masks, attention weights, the FlashAttention tile schedule."""

import numpy as np

from ... import attention as attn
from . import figure
from ._style import INK, PALETTE, phone, pt, size, wrap


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


# --------------------------------------------------------------------------- the H100's memories, far to near
def memory_levels() -> dict[str, str]:
    """The H100 SXM's memories as section 2.5 prints them (its facts, so the picture and the text say the same):
    HBM off the chip, the L2 all SMs share, and inside each SM its shared memory (SRAM) and registers."""
    from ...pages import attention as page, bottlenecks

    return {
        "sms": str(page.h100_sms()),
        "hbm": f"{page.h100_memory_gb()} GB", "hbm_bw": f"{bottlenecks.h100_bandwidth_tb_s()} TB/s",
        "l2": str(page.h100_l2()), "l2_bw": f"≈ {page.h100_l2_bandwidth_tb_s()} TB/s",
        "smem": str(page.h100_shared_memory_per_sm()), "smem_all": str(page.h100_shared_memory_total()),
        "smem_bw": f"≈ {page.h100_sram_bandwidth_tb_s()} TB/s",
        "regs": str(page.h100_registers_per_sm()), "regs_all": str(page.h100_registers_total()),
    }


def _memory_alt() -> str:
    m = memory_levels()
    return (f"The memories of an H100 SXM, drawn from far to near. At the bottom, off the chip, the HBM: {m['hbm']}, "
            f"read and written at {m['hbm_bw']}; it holds the weights, the KV cache and every tensor a kernel reads or "
            f"writes. On the chip, an L2 cache of {m['l2']} that all {m['sms']} streaming multiprocessors (SMs) share, "
            f"at {m['l2_bw']}. Inside each SM, beside its tensor cores: {m['smem']} of shared memory (SRAM), "
            f"{m['smem_all']} over all {m['sms']} SMs, at {m['smem_bw']} all together, and a register file of "
            f"{m['regs']} ({m['regs_all']} in all), the fastest of all, for which no bandwidth is published. "
            f"The nearer a memory sits to the arithmetic, the faster it is; the chip's memories hold megabytes, the "
            f"HBM gigabytes. Bandwidths of the "
            f"on-chip memories: FlashAttention-3 paper, Table 1 (NVIDIA publishes none).")


@figure("memory_hierarchy", alt=_memory_alt())
def memory_hierarchy_figure():
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    m = memory_levels()
    small = phone()
    width = 4.3 if small else 7.2
    height = 6.9 if small else 4.5
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    font = 12 if small else 10

    def box(x, y, w, h, text, color, *, alpha=0.28, size=font, edge=None, weight="normal", ha="center"):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.06", facecolor=color,
                                    alpha=alpha, edgecolor=edge or color, linewidth=1.0))
        if text:
            tx = x + w / 2 if ha == "center" else x + 0.12
            ax.text(tx, y + h / 2, text, ha=ha, va="center", fontsize=size, fontweight=weight, linespacing=1.25)

    def outline(x, y, w, h, dashed=True):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.1", facecolor="none",
                                    edgecolor=INK, linewidth=1.0, linestyle="--" if dashed else "-"))

    def small_sm(x, y, w, h, label):
        outline(x, y, w, h, dashed=False)
        ax.text(x + w / 2, y + h - 0.06, label, ha="center", va="top", fontsize=font)
        for i, color in enumerate((PALETTE[0], PALETTE[1], PALETTE[2])):  # up: shared memory, registers, tensor cores
            ax.add_patch(FancyBboxPatch((x + 0.1, y + 0.1 + i * (h - 0.45) / 3), w - 0.2, (h - 0.45) / 3 - 0.05,
                                        boxstyle="round,pad=0.01", facecolor=color, alpha=0.28, edgecolor=color))

    hbm_text = f"HBM, off the chip: {m['hbm']}\nweights, KV cache, every tensor a kernel reads or writes"
    l2_text = f"L2 cache: {m['l2']}, shared by all SMs, {m['l2_bw']}"
    all_sms = (f"all {m['sms']} SMs together: {m['smem_all']} of shared memory at {m['smem_bw']},"
               f" {m['regs_all']} of registers")
    if small:  # one column, read from the top (near) to the bottom (far)
        chip_y, chip_h = 2.05, 4.8
        outline(0.05, chip_y, width - 0.1, chip_h)
        ax.text(0.2, chip_y + chip_h - 0.12, f"the GPU chip: {m['sms']} SMs", va="top", fontsize=font)
        sm_x, sm_y, sm_w, sm_h = 0.2, 4.55, width - 0.4, 1.85
        outline(sm_x, sm_y, sm_w, sm_h, dashed=False)
        ax.text(sm_x + 0.12, sm_y + sm_h - 0.08, "one SM (streaming multiprocessor)", va="top", fontsize=font)
        rows = [("tensor cores: the arithmetic", PALETTE[2]), (f"registers: {m['regs']}, fastest", PALETTE[1]),
                (f"shared memory (SRAM): {m['smem']}", PALETTE[0])]
        for i, (text, color) in enumerate(rows):
            box(sm_x + 0.12, sm_y + 1.12 - i * 0.47, sm_w - 0.24, 0.38, text, color, ha="left")
        for i, label in enumerate(("SM 2", "SM 3")):
            small_sm(0.2 + i * 1.0, 3.5, 0.85, 0.9, label)
        ax.text(2.35, 3.95, "…", ha="center", va="center", fontsize=font + 2)
        small_sm(2.75, 3.5, 1.35, 0.9, f"SM {m['sms']}")
        ax.text(0.2, 3.38, wrap(all_sms, 40), va="top", fontsize=font, linespacing=1.25)
        box(0.2, 2.2, width - 0.4, 0.5, wrap(l2_text, 36), PALETTE[3])
        ax.add_patch(FancyArrowPatch((width / 2, chip_y - 0.05), (width / 2, 1.33), arrowstyle="<|-|>",
                                     mutation_scale=12, color=INK, linewidth=1.2))
        ax.text(width / 2 + 0.15, 1.68, m["hbm_bw"], va="center", fontsize=font)
        box(0.05, 0.05, width - 0.1, 1.22, "\n".join(wrap(line, 36) for line in hbm_text.split("\n")), PALETTE[4])
        return fig

    chip_y, chip_h = 1.25, 3.2
    outline(0.05, chip_y, width - 0.1, chip_h)
    ax.text(0.2, chip_y + chip_h - 0.1, f"the GPU chip: {m['sms']} SMs (streaming multiprocessors)", va="top",
            fontsize=font)
    ax.text(width - 0.2, chip_y + chip_h - 0.1, "nearer the tensor cores: faster ↑", va="top", ha="right",
            fontsize=font)
    sm_x, sm_y, sm_w, sm_h = 0.2, 2.35, 3.3, 1.7
    outline(sm_x, sm_y, sm_w, sm_h, dashed=False)
    ax.text(sm_x + 0.12, sm_y + sm_h - 0.08, "one SM", va="top", fontsize=font)
    rows = [("tensor cores: the arithmetic", PALETTE[2]), (f"registers: {m['regs']}, the fastest", PALETTE[1]),
            (f"shared memory (SRAM): {m['smem']}", PALETTE[0])]
    for i, (text, color) in enumerate(rows):
        box(sm_x + 0.12, sm_y + 1.0 - i * 0.43, sm_w - 0.24, 0.34, text, color, ha="left")
    for i, label in enumerate(("SM 2", "SM 3")):
        small_sm(3.7 + i * 0.9, 2.35, 0.78, 1.7, label)
    ax.text(5.75, 3.2, "…", ha="center", va="center", fontsize=font + 4)
    small_sm(6.05, 2.35, 0.95, 1.7, f"SM {m['sms']}")
    ax.text(0.2, 2.13, all_sms, va="center", fontsize=font)
    box(0.2, 1.4, width - 0.4, 0.45, l2_text, PALETTE[3])
    ax.add_patch(FancyArrowPatch((width / 2, chip_y - 0.03), (width / 2, 0.92), arrowstyle="<|-|>",
                                 mutation_scale=12, color=INK, linewidth=1.2))
    ax.text(width / 2 + 0.15, 1.08, m["hbm_bw"], va="center", fontsize=font)
    box(0.05, 0.05, width - 0.1, 0.82, hbm_text, PALETTE[4])
    return fig


# --------------------------------------------------------------------------- attention's third roof
ROOFS_GPUS = ("H100-SXM", "B200")
ROOFS_DIMS = (32, 48, 64, 96, 128, 192, 256)


def _roofs_alt() -> str:
    from ... import hardware, roofline

    parts = []
    for key in ROOFS_GPUS:
        g = hardware.get_gpu(key)
        parts.append(f"{g.name}: the exponential takes {1e12 / g.exp_rate():.3g} ps per score, the matmuls "
                     f"{4 * 128 / g.peak_flops('fp16') * 1e12:.3g} ps at d = 128; the lines cross at "
                     f"d = {roofline.exponential_crossover_head_dim(g):.3g}")
    return ("Time per attention score in FP16 against the head dimension d (32 to 256), for two GPUs. The matmuls' "
            "time, 4d operations per score at the tensor-core peak, rises with d; the exponential's time, one per "
            "score on the special-function units, is flat. " + "; ".join(parts) + ". Below its crossing the "
            "exponentials limit attention.")


@figure("attention_roofs", alt=_roofs_alt())
def attention_roofs_figure():
    import matplotlib.pyplot as plt

    from ... import hardware, roofline

    fig, ax = plt.subplots(figsize=size((6.4, 3.4), 3.9))
    d = np.geomspace(ROOFS_DIMS[0], ROOFS_DIMS[-1], 64)
    for i, key in enumerate(ROOFS_GPUS):
        g = hardware.get_gpu(key)
        color = PALETTE[i]
        name = "H100" if key.startswith("H100") else "B200"
        ax.plot(d, 4 * d / g.peak_flops("fp16") * 1e12, color=color, linewidth=2, label=f"{name} matmuls")
        ax.plot(d, np.full_like(d, 1e12 / g.exp_rate()), color=color, linewidth=2, linestyle="--",
                label=f"{name} exponential")
        cross = roofline.exponential_crossover_head_dim(g)
        ax.plot([cross], [1e12 / g.exp_rate()], "o", color=color)
        ax.annotate(f"d = {cross:.3g}", (cross, 1e12 / g.exp_rate()), textcoords="offset points",
                    xytext=(-62, 6) if i == 0 else (6, -15), fontsize=pt(9), color=color)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ROOFS_DIMS[::2] if phone() else ROOFS_DIMS, [str(x) for x in (ROOFS_DIMS[::2] if phone() else ROOFS_DIMS)])
    ax.minorticks_off()
    ax.set(xlabel="head dimension d", ylabel="picoseconds per score", ylim=(0, None))
    ax.legend(loc="upper left", ncols=1 if phone() else 2, fontsize=pt(9))
    fig.tight_layout()
    return fig
