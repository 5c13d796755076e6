"""Figure for section 2.5: measured kernels on the roofline of the device that ran them.

Everything drawn comes from the committed benchmark results in
`chapter2/data/bench/` through `chapter2.bench_results`: one panel per device,
its roofs, its measured points, and the device and date recorded in the JSON
(never the clock), so the SVG is the same on every build of the same files.
On a GPU panel only the chapter's Triton kernels are drawn (the SDPA
baselines stay in the JSON and in `bench_results.roofline_points`).
"""

import numpy as np

from ... import bench_results
from . import figure
from ._style import INK, PALETTE, phone, pt, wrap

MARKERS = {"naive": ("o", PALETTE[1]), "flash": ("s", PALETTE[2]), "decode": ("^", PALETTE[3])}
TRITON = ("D", PALETTE[4])


def _drawn_points(panel):
    """The points a panel shows: all of a CPU's; a GPU's Triton kernels."""
    return [p for p in panel.points if not panel.is_gpu or p.kernel.startswith("triton")]


def _unit(panel):
    """(divisor, name) for the FLOP/s axis: TFLOP/s on a GPU, GFLOP/s on a CPU."""
    return (1e12, "TFLOP/s") if panel.is_gpu else (1e9, "GFLOP/s")


def _attainable(intensity, compute, memory):
    """min(compute roof, intensity x memory roof); a missing roof does not cap."""
    x = np.asarray(intensity, dtype=np.float64)
    caps = [np.full_like(x, compute.value)] if compute else []
    if memory:
        caps.append(x * memory.value)
    return np.minimum.reduce(caps) if caps else np.full_like(x, np.nan)


def _main_roofs(panel):
    """The roofline the points are judged against: the first compute roof and the first memory roof."""
    compute = panel.compute_roofs[0] if panel.compute_roofs else None
    memory = panel.memory_roofs[0] if panel.memory_roofs else None
    return compute, memory


def _share(point, panel):
    compute, memory = _main_roofs(panel)
    if not (compute or memory):
        return ""
    return f", {100 * point.achieved_flops / float(_attainable(point.intensity, compute, memory)):.0f} % of the roof"


def _num(x):
    """Three significant figures, without exponents for large values (2,048 rather than 2.05e+03)."""
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _rate(value, panel):
    div, unit = _unit(panel)
    return f"{_num(value / div)} {unit}"


def _roof_text(roof, panel):
    value = _rate(roof.value, panel) if roof.kind == "compute" else f"{_num(roof.value / 1e9)} GB/s"
    return f"{roof.label} {value}"


def _title(panel):
    return f"{panel.name}, measured {', '.join(panel.dates)}"


def _alt(panels) -> str:
    if not panels:
        return "No measured benchmark results are committed yet, so no measured roofline is drawn."
    parts = []
    for panel in panels:
        compute, memory = _main_roofs(panel)
        roofs = "; ".join(_roof_text(r, panel) for r in panel.roofs) or "no roof recorded"
        ridge = (f" The ridge is at {_num(compute.value / memory.value)} operations per byte."
                 if compute and memory else "")
        points = "; ".join(f"{p.label}: {_num(p.intensity)} operations per byte, {_rate(p.achieved_flops, panel)}"
                           f"{_share(p, panel)}" for p in _drawn_points(panel))
        parts.append(f"Log-log roofline of {_title(panel)}: attainable rate against arithmetic intensity, with the "
                     f"roofs {roofs}.{ridge} Measured points: {points}.")
    return " ".join(parts)


PANELS = bench_results.rooflines()


@figure("measured_roofline", alt=_alt(PANELS))
def measured_roofline_figure():
    return draw(PANELS)


def draw(panels):
    """One roofline panel (plus its numbered key) per `bench_results.DeviceRoofline` in `panels`."""
    import matplotlib.pyplot as plt

    if not panels:
        fig, ax = plt.subplots(figsize=(6.4, 1.6))
        ax.axis("off")
        ax.text(0.5, 0.5, "no measured results in chapter2/data/bench", ha="center", va="center")
        return fig
    rows = [len(_drawn_points(p)) for p in panels]
    if phone():  # per device: the plot, its legend, then its key, two lines a point
        heights = [h for p, n in zip(panels, rows, strict=True) for h in (3.0, 0.36 * _legend_entries(p), 0.1 + 0.38 * n)]
    else:  # per device: the plot (legend inside), then its key
        heights = [h for n in rows for h in (4.2, 0.3 + 0.15 * n)]
    per = len(heights) // len(panels)
    fig = plt.figure(figsize=(PHONE_FIG if phone() else 7.4, sum(heights) + 0.3 * len(panels)))
    grid = fig.add_gridspec(len(heights), 1, height_ratios=heights)
    for i, panel in enumerate(panels):
        axes = [fig.add_subplot(grid[per * i + j]) for j in range(per)]
        _panel(axes[0], axes[-1], panel, legend_ax=axes[1] if per == 3 else None)
    if phone():  # the legend and key are wider than the plot: tight_layout would narrow the plot to fit them
        fig.subplots_adjust(left=0.2, right=0.96, top=1 - 0.9 / fig.get_figheight(), bottom=0.02, hspace=0.5 / per)
    else:
        fig.tight_layout()
    return fig


PHONE_FIG = 4.3  # inches (_style.PHONE_WIDTH)


def _legend_entries(panel) -> int:
    """How many entries a panel's legend has: its roofs' lines and one per kind of kernel drawn."""
    lines = len(panel.memory_roofs) + (1 if panel.compute_roofs else 0)
    return lines + len({_kind(p.kernel)[0] for p in _drawn_points(panel)})


def _kind(kernel):
    """Legend text and (marker, colour) of a kernel name."""
    names = {"naive": "naive attention", "flash": "tiled FlashAttention", "decode": "tiny LM decode step"}
    return names.get(kernel, "Triton kernel"), MARKERS.get(kernel, TRITON)


def _clusters(points, tol=0.12):
    """Groups of 1-based point numbers that sit within `tol` decades of each other (one label per group)."""
    groups = []
    for n, p in enumerate(points, start=1):
        here = np.log10([p.intensity, p.achieved_flops])
        for group in groups:
            if np.all(np.abs(group["at"] - here) < tol):
                group["numbers"].append(n)
                break
        else:
            groups.append({"at": here, "numbers": [n], "point": p})
    return groups


def _panel(ax, key_ax, panel, legend_ax=None):
    div, unit = _unit(panel)
    points = _drawn_points(panel)
    compute, memory = _main_roofs(panel)
    ridges = [compute.value / m.value for m in panel.memory_roofs] if compute else []
    xs = [p.intensity for p in points] + ridges
    lo, hi = (min(xs) / 4, max(xs) * 4) if xs else (0.1, 1000.0)
    x = np.logspace(np.log10(lo), np.log10(hi), 300)

    # roofs: the main roofline solid (slanted part: memory roof, flat part: compute roof);
    # any further memory roof (a measured copy on a GPU) dashed
    for n, mem in enumerate(panel.memory_roofs):
        y = _attainable(x, compute, mem)
        slanted = y < compute.value if compute else np.ones_like(x, dtype=bool)
        style = dict(color=PALETTE[0], linewidth=2.0) if n == 0 else dict(color=PALETTE[5], linewidth=1.4, linestyle="--")
        ax.loglog(x[slanted], y[slanted] / div, label=wrap(f"memory roof: {_roof_text(mem, panel)}", 30), **style)
        if n == 0 and compute:
            ax.loglog(x[~slanted], y[~slanted] / div, color=PALETTE[0], linewidth=2.0, linestyle=(0, (6, 1.5)),
                      label=wrap(f"compute roof: {_roof_text(compute, panel)}", 30))
    if compute and not panel.memory_roofs:
        ax.loglog(x, np.full_like(x, compute.value / div), color=PALETTE[0], linewidth=2.0,
                  label=f"compute roof: {_roof_text(compute, panel)}")

    seen = set()
    for p in points:
        text, (marker, color) = _kind(p.kernel)
        ax.plot(p.intensity, p.achieved_flops / div, marker=marker, color=color, markersize=6, linestyle="none",
                label=None if text in seen else text)
        seen.add(text)
    groups = _clusters(points, tol=0.35 if phone() else 0.12)  # a phone's plot is smaller: wider clusters
    for i, group in enumerate(sorted(groups, key=lambda g: g["point"].intensity) if phone() else groups):
        p = group["point"]
        # a phone's labels are larger: every other one (by intensity) above its point, so neighbours do not collide
        above = phone() and i % 2 == 1
        ax.annotate(",".join(map(str, group["numbers"])), (p.intensity, p.achieved_flops / div),
                    textcoords="offset points", xytext=(5, 4) if above else (5, -3), va="bottom" if above else "top",
                    fontsize=pt(7))

    top = max([r.value for r in panel.compute_roofs] + [p.achieved_flops for p in points]) / div
    bottom = min(p.achieved_flops for p in points) / div if points else top / 1e3
    ax.set(xlim=(lo, hi), ylim=(bottom / 4, top * 2.5), xlabel="arithmetic intensity (operations per byte)",
           ylabel=f"achieved {unit}", title=wrap(_title(panel), 36))
    ax.title.set_fontsize(pt(10))
    if legend_ax is None:
        ax.legend(loc="lower right", fontsize=7.5)
    else:  # a phone's legend: in its own row under the plot
        legend_ax.axis("off")
        legend_ax.legend(*ax.get_legend_handles_labels(), loc="upper left", borderaxespad=0, handlelength=1.6)

    key_ax.axis("off")
    if phone():  # two lines a point, in the text face (a monospaced line of 70 characters is wider than a phone)
        from matplotlib.transforms import blended_transform_factory

        at = blended_transform_factory(key_ax.figure.transFigure, key_ax.transAxes)  # x from the figure's edge
        step = 0.38 / (key_ax.get_position().height * key_ax.figure.get_figheight())  # 0.38 inches an entry
        for n, p in enumerate(points, start=1):
            y = 1.0 - (n - 1) * step
            key_ax.text(0.0, y, str(n), transform=at, va="top", color=INK)
            key_ax.text(0.07, y, f"{p.label}\n{_num(p.intensity)} op/B, {_rate(p.achieved_flops, panel)}{_share(p, panel)}",
                        transform=at, va="top", color=INK, linespacing=1.15)
        return
    key = [f"{n:>2}  {p.label}: {_num(p.intensity)} op/B, {_rate(p.achieved_flops, panel)}{_share(p, panel)}"
           for n, p in enumerate(points, start=1)]
    key_ax.text(0.0, 1.0, "\n".join(key), transform=key_ax.transAxes, ha="left", va="top", fontsize=7.5,
                family="monospace", color=INK)
