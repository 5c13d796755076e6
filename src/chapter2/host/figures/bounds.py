"""Figure for section 2.4: published measurements as a share of their roofline bounds.

One bar per row of `data/measurements.json` (through `chapter2.measurements.compare`),
grouped by what was measured, with the bound at 1. A row that names a trick the
bound leaves out (speculative decoding) is drawn apart; it may pass 1.
"""

from ... import measurements
from . import figure
from ._style import PALETTE, phone, pt, size

GROUPS = (
    ("kernel_tflops", "kernels, FLOP/s"),
    ("kernel_bandwidth", "kernels, bandwidth"),
    ("tokens_per_s_per_sequence", "one sequence, tokens/s"),
    ("output_tokens_per_s", "servers, output tokens/s"),
    ("input_tokens_per_s", "servers, prompt tokens/s"),
)


def _label(c) -> str:
    m = c.measurement
    gpus = f"{m.n_gpus}×{m.gpu}" if m.n_gpus > 1 else m.gpu
    if m.metric.startswith("kernel"):
        return f"{m.engine} {m.dtype.upper()}, {gpus}"
    lengths = f" {m.input_tokens}/{m.output_tokens}" if m.metric == "output_tokens_per_s" else ""
    return f"{m.model} {m.weight_dtype.upper()}, {gpus}{lengths}"


def rows():
    """(group label, bar label, ratio, trick) in the order drawn: by group, then by ratio."""
    out = []
    for metric, group in GROUPS:
        chosen = sorted((c for c in measurements.compare() if c.measurement.metric == metric), key=lambda c: c.ratio)
        out += [(group, _label(c), c.ratio, c.measurement.trick) for c in chosen]
    return out


def _alt() -> str:
    parts = []
    for _, group in GROUPS:
        ratios = [r for g, _, r, trick in rows() if g == group and trick is None]
        if ratios:
            parts.append(f"{group}: {min(ratios):.2f} to {max(ratios):.2f}")
    beyond = [f"{label} ({r:.2f}, {trick})" for _, label, r, trick in rows() if trick]
    return (f"Horizontal bars, one per published measurement ({len(rows())}), each its measured speed divided by "
            f"the roofline bound for the same setup, with the bound at 1. {'; '.join(parts)}. Rows whose trick the "
            f"bound leaves out: {'; '.join(beyond)}.")


PHONE_LINE = 0.22  # inches: one line of a phone drawing's bar label (12 pt text and its leading)
PHONE_BAR = 0.17  # inches: a bar's thickness on the phone drawing


def _phone_bars(plt, data, colors):
    """The bars for a phone: each label on its own line(s) above its bar (no room for a column of labels
    beside the bars), a long one broken after its comma; y is in inches from the top."""
    labels = [label.replace(", ", ",\n", 1) if len(label) > 36 else label for _, label, _, _ in data]
    heights = [PHONE_LINE * (1 + label.count("\n")) + PHONE_BAR + 0.1 for label in labels]
    fig, ax = plt.subplots(figsize=size((0, 0), sum(heights) + 0.6))
    top = 0.0
    for (group, _, ratio, trick), label, height in zip(data, labels, heights, strict=True):
        bar = top - height + 0.05 + PHONE_BAR / 2  # the bar's centre, under its label
        ax.barh(bar, ratio, color=colors[group], hatch="//" if trick else None, edgecolor="none", height=PHONE_BAR)
        ax.text(ratio + 0.01, bar, f"{ratio:.2f}", va="center", fontsize=pt(7))
        ax.text(0.005, bar + PHONE_BAR / 2 + 0.02, label, va="bottom", fontsize=pt(7), linespacing=1.1)
        top -= height
    ax.set_yticks([])
    ax.set_xticks([0, 0.5, 1.0])
    ax.set_ylim(top, 0.05)
    return fig, ax


@figure("measured_vs_bound", alt=_alt())
def measured_vs_bound():
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    data = rows()
    colors = {g: PALETTE[i % len(PALETTE)] for i, (_, g) in enumerate(GROUPS)}
    if phone():
        fig, ax = _phone_bars(plt, data, colors)
    else:
        fig, ax = plt.subplots(figsize=(7.2, 0.26 * len(data) + 1.2))
        ys = list(range(len(data)))[::-1]
        for y, (group, _, ratio, trick) in zip(ys, data, strict=True):
            ax.barh(y, ratio, color=colors[group], hatch="//" if trick else None, edgecolor="none", height=0.7)
            ax.text(ratio + 0.01, y, f"{ratio:.2f}", va="center", fontsize=7)
        ax.set_yticks(ys, [label for _, label, _, _ in data], fontsize=7)
        ax.set(ylim=(-0.7, len(data) - 0.3))
    ax.axvline(1.0, linestyle=":", linewidth=1.2, color="#8a8f98")
    handles = [Patch(color=colors[g], label=g) for _, g in GROUPS]
    handles.append(Patch(facecolor="none", hatch="//", edgecolor="#8a8f98", label="a trick the bound leaves out"))
    ax.set(xlabel="measured ÷ roofline bound", xlim=(0, 1.3))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=1 if phone() else 2, fontsize=pt(7),
              handlelength=1.6 if phone() else 2.0)
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig
