"""Figure for section 2.4: published measurements as a share of their roofline bounds.

One bar per row of `data/measurements.json` (through `chapter2.measurements.compare`),
grouped by what was measured, with the bound at 1. A row that names a trick the
bound leaves out (speculative decoding) is drawn apart; it may pass 1. A row on
several GPUs shows two ratios: against the bound that lets the GPUs talk for free
(the solid bar) and against the bound that counts their communication (the light
extension), since that bound is lower. Two marks on each row show its MFU (a dot) and
MBU (a diamond): the shares of peak FLOP/s and of bandwidth its speed implies, so a
memory-bound row's diamond sits near its bar's end and its dot near 0.
"""

from ... import measurements
from . import figure
from ._style import INK, PALETTE, phone, pt, size

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
    return f"{m.measured_model or m.model} {m.weight_dtype.upper()}, {gpus}{lengths}"  # the model measured


def rows():
    """(group label, bar label, ratio, trick, ratio without communication or None) in the order drawn: by group,
    then by ratio. The last is given for rows on several GPUs only."""
    out = []
    for metric, group in GROUPS:
        chosen = sorted((c for c in measurements.compare() if c.measurement.metric == metric), key=lambda c: c.ratio)
        out += [(group, _label(c), c.ratio, c.measurement.trick,
                 c.ratio_without_communication if c.measurement.n_gpus > 1 else None) for c in chosen]
    return out


def utilization():
    """(MFU, MBU) of each row, in the order of `rows()` (None where the row gives no count of its work)."""
    out = []
    for metric, _ in GROUPS:
        chosen = sorted((c for c in measurements.compare() if c.measurement.metric == metric), key=lambda c: c.ratio)
        out += [(c.mfu, c.mbu) for c in chosen]
    return out


def _marks(ax, y, mfu, mbu):
    """A row's MFU (a filled dot) and MBU (an open diamond) on its bar; none where the row gives no count."""
    if mfu is not None:
        ax.plot([mfu], [y], marker="o", color=INK, markersize=6 if phone() else 4.5, markeredgecolor="white",
                markeredgewidth=0.6, linestyle="none", zorder=3)
    if mbu is not None:
        ax.plot([mbu], [y], marker="D", markerfacecolor="none", color=INK, markersize=6 if phone() else 5,
                markeredgewidth=1.2, linestyle="none", zorder=3)


def _value_text(ratio: float, without) -> str:
    """The number beside a bar: its ratio, or both ratios for a row on several GPUs."""
    if without is None or f"{without:.2f}" == f"{ratio:.2f}":
        return f"{ratio:.2f}"
    return f"{without:.2f} → {ratio:.2f}"


def _alt() -> str:
    data = rows()
    parts = []
    for _, group in GROUPS:
        ratios = [r for g, _, r, trick, _ in data if g == group and trick is None]
        if ratios:
            parts.append(f"{group}: {min(ratios):.2f} to {max(ratios):.2f}")
    beyond = [f"{label} ({r:.2f}, {trick})" for _, label, r, trick, _ in data if trick]
    multi = [(r - w, label, w, r) for _, label, r, trick, w in data if w is not None and trick is None]
    _, label, w, r = max(multi)
    one = [u for row, u in zip(data, utilization(), strict=True) if row[0].startswith("one") and row[3] is None]
    return (f"Horizontal bars, one per published measurement ({len(data)}), each its measured speed divided by "
            f"the roofline bound for the same setup, with the bound at 1. {'; '.join(parts)}. Rows whose trick the "
            f"bound leaves out: {'; '.join(beyond)}. On the {len(multi)} other rows on several GPUs a light "
            f"extension shows what counting their communication adds, at most for {label} ({w:.2f} without it, "
            f"{r:.2f} with it). A dot marks each row's MFU and a diamond its MBU (the shares of peak FLOP/s and of "
            f"bandwidth its speed implies): one sequence decoding reaches an MBU of {min(b for _, b in one):.2f} to "
            f"{max(b for _, b in one):.2f} but an MFU of at most {max(f for f, _ in one):.3f}.")


def _xmax(data) -> float:
    """Room on the ratio axis for the largest bar and its label."""
    return max(1.3, max(r for _, _, r, _, _ in data) + 0.45)


def _bar(ax, y, ratio, without, color, trick, height):
    """One row's bar: solid to the ratio without communication, light from there to the ratio with it."""
    solid = ratio if without is None else without
    ax.barh(y, solid, color=color, hatch="//" if trick else None, edgecolor="none", height=height)
    if without is not None and ratio > without:
        ax.barh(y, ratio - without, left=without, color=color, alpha=0.4, hatch="//" if trick else None,
                edgecolor="none", height=height)


PHONE_LINE = 0.22  # inches: one line of a phone drawing's bar label (12 pt text and its leading)
PHONE_BAR = 0.17  # inches: a bar's thickness on the phone drawing


def _phone_bars(plt, data, colors):
    """The bars for a phone: each label on its own line(s) above its bar (no room for a column of labels
    beside the bars), a long one broken after its comma; y is in inches from the top."""
    labels = [label.replace(", ", ",\n", 1) if len(label) > 36 else label for _, label, _, _, _ in data]
    heights = [PHONE_LINE * (1 + label.count("\n")) + PHONE_BAR + 0.1 for label in labels]
    fig, ax = plt.subplots(figsize=size((0, 0), sum(heights) + 0.6))
    top = 0.0
    for (group, _, ratio, trick, without), (mfu, mbu), label, height in zip(data, utilization(), labels, heights,
                                                                           strict=True):
        bar = top - height + 0.05 + PHONE_BAR / 2  # the bar's centre, under its label
        _bar(ax, bar, ratio, without, colors[group], trick, PHONE_BAR)
        _marks(ax, bar, mfu, mbu)
        ax.text(max(ratio, mbu or 0) + 0.02, bar, _value_text(ratio, without), va="center", fontsize=pt(7))
        ax.text(0.005, bar + PHONE_BAR / 2 + 0.02, label, va="bottom", fontsize=pt(7), linespacing=1.1)
        top -= height
    ax.set_yticks([])
    ax.set_xticks([0, 0.5, 1.0])
    ax.set_ylim(top, 0.05)
    return fig, ax


@figure("measured_vs_bound", alt=_alt())
def measured_vs_bound():
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    data = rows()
    colors = {g: PALETTE[i % len(PALETTE)] for i, (_, g) in enumerate(GROUPS)}
    if phone():
        fig, ax = _phone_bars(plt, data, colors)
    else:
        fig, ax = plt.subplots(figsize=(7.2, 0.26 * len(data) + 1.2))
        ys = list(range(len(data)))[::-1]
        for y, (group, _, ratio, trick, without), (mfu, mbu) in zip(ys, data, utilization(), strict=True):
            _bar(ax, y, ratio, without, colors[group], trick, 0.7)
            _marks(ax, y, mfu, mbu)
            ax.text(max(ratio, mbu or 0) + 0.02, y, _value_text(ratio, without), va="center", fontsize=7)
        ax.set_yticks(ys, [label for _, label, _, _, _ in data], fontsize=7)
        ax.set(ylim=(-0.7, len(data) - 0.3))
    ax.axvline(1.0, linestyle=":", linewidth=1.2, color="#8a8f98")
    handles = [Patch(color=colors[g], label=g) for _, g in GROUPS]
    handles.append(Patch(facecolor="none", hatch="//", edgecolor="#8a8f98", label="a trick the bound leaves out"))
    handles.append(Patch(facecolor="#8a8f98", alpha=0.4, edgecolor="none",
                         label="with communication (several GPUs)"))
    mark = 7 if phone() else 5
    handles += [Line2D([], [], marker="o", linestyle="none", color=INK, markersize=mark, label="MFU (share of peak FLOP/s)"),
                Line2D([], [], marker="D", linestyle="none", markerfacecolor="none", color=INK, markersize=mark,
                       label="MBU (share of peak bandwidth)")]
    ax.set(xlabel="measured ÷ roofline bound", xlim=(0, _xmax(data)))
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0, 1.0), ncols=1 if phone() else 2, fontsize=pt(7),
              handlelength=1.6 if phone() else 2.0)
    ax.grid(axis="y", visible=False)
    fig.tight_layout()
    return fig
