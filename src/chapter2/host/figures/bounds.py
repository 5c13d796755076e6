"""Figure for section 2.4: published measurements as a share of their roofline bounds.

One bar per row of `data/measurements.json` (through `chapter2.measurements.compare`),
grouped by what was measured, with the bound at 1. A row that names a trick the
bound leaves out (speculative decoding) is drawn apart; it may pass 1.
"""

from ... import measurements
from . import figure
from ._style import PALETTE

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


@figure("measured_vs_bound", alt=_alt())
def measured_vs_bound():
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    data = rows()
    fig, ax = plt.subplots(figsize=(7.2, 0.26 * len(data) + 1.2))
    ys = list(range(len(data)))[::-1]
    colors = {g: PALETTE[i % len(PALETTE)] for i, (_, g) in enumerate(GROUPS)}
    for y, (group, _, ratio, trick) in zip(ys, data, strict=True):
        ax.barh(y, ratio, color=colors[group], hatch="//" if trick else None, edgecolor="none", height=0.7)
        ax.text(ratio + 0.01, y, f"{ratio:.2f}", va="center", fontsize=7)
    ax.set_yticks(ys, [label for _, label, _, _ in data], fontsize=7)
    ax.axvline(1.0, linestyle=":", linewidth=1.2, color="#8a8f98")
    handles = [Patch(color=colors[g], label=g) for _, g in GROUPS]
    handles.append(Patch(facecolor="none", hatch="//", edgecolor="#8a8f98", label="a trick the bound leaves out"))
    ax.set(xlabel="measured ÷ roofline bound", xlim=(0, 1.3), ylim=(-0.7, len(data) - 0.3))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=2, fontsize=7)
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig
