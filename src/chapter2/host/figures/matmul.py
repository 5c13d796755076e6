"""Figures for section 2.1: a matrix multiplication drawn with its numbers (the page's hero), and a layer as a
picture of circles and lines."""

from __future__ import annotations

import itertools

from ... import linear
from ...models import load_config
from . import figure
from ._style import INK, PALETTE, phone, pt, size, wrap

ROW, COLUMN, CELL = PALETTE[0], PALETTE[1], PALETTE[2]  # the highlighted row of x, column of W^T, cell of y


def _example():
    """x (m, k), W^T (k, n), y (m, n) as nested int lists, and the matmul's cost (chapter2.linear)."""
    x, weight, y = linear.matmul_example()
    m, k = x.shape
    n = weight.shape[0]
    as_ints = lambda a: [[int(v) for v in row] for row in a]  # noqa: E731
    return as_ints(x), as_ints(weight.T), as_ints(y), linear.matmul_cost(m, k, n)


def _first_cell_sum() -> str:
    """The first cell of y as the dot product it is: '1·1 + 2·2 + 0·0 + 1·1 = 6'."""
    x, wt, y, _ = _example()
    terms = " + ".join(f"{a}·{row[0]}" for a, row in zip(x[0], wt, strict=True))
    return f"{terms} = {y[0][0]}"


def _matmul_alt() -> str:
    x, wt, y, cost = _example()
    m, k, n = cost.m, cost.k, cost.n
    first_column = ", ".join(str(row[0]) for row in wt)
    return (f"A {m} × {k} matrix x ({m} tokens, {k} numbers each) times a {k} × {n} weight matrix Wᵀ gives a "
            f"{m} × {n} matrix y. The first row of x, ({', '.join(map(str, x[0]))}), and the first column of Wᵀ, "
            f"({first_column}), are highlighted: {_first_cell_sum()}, the highlighted first cell of y. Each of the "
            f"{m * n} cells of y takes {k} multiplies and {k} adds, so the product costs 2 × {m} × {k} × {n} = "
            f"{cost.ops} operations: 2·m·k·n.")


def _grid(ax, left, top, values, name, shape_text, highlight):
    """One matrix as a grid of cells with its numbers; `highlight(i, j)` gives a cell's fill colour or None."""
    from matplotlib.patches import Rectangle

    for i, row in enumerate(values):
        for j, value in enumerate(row):
            fill = highlight(i, j)
            ax.add_patch(Rectangle((left + j, top - i - 1), 1, 1, facecolor=fill or "none", alpha=0.45 if fill else 1,
                                   edgecolor="none"))
            ax.add_patch(Rectangle((left + j, top - i - 1), 1, 1, facecolor="none", edgecolor=INK, linewidth=0.8))
            ax.text(left + j + 0.5, top - i - 0.5, str(value), ha="center", va="center", fontsize=pt(13), color=INK)
    width, height = len(values[0]), len(values)
    ax.text(left + width / 2, top + 0.25, name, ha="center", va="bottom", fontsize=pt(13), color=INK,
            fontweight="bold")
    ax.text(left + width / 2, top - height - 0.3, shape_text, ha="center", va="top", fontsize=pt(10), color=INK,
            linespacing=1.3)


@figure("matmul_picture", alt=_matmul_alt())
def matmul_picture():
    import matplotlib.pyplot as plt

    x, wt, y, cost = _example()
    m, k, n = cost.m, cost.k, cost.n
    small = phone()
    fig, ax = plt.subplots(figsize=size((6.6, 3.5), 3.9))
    gap = 1.3  # between a matrix and the sign after it
    x_left, w_left = 0, k + 2 * gap
    y_left = w_left + n + 2 * gap
    top = (k + m) / 2  # the three grids share one middle line
    w_top = top + (k - m) / 2
    _grid(ax, x_left, top, x, "x", f"{m} × {k}\n" + ("tokens × numbers" if small else "m tokens × k numbers"),
          lambda i, j: ROW if i == 0 else None)
    _grid(ax, w_left, w_top, wt, "Wᵀ", f"{k} × {n}\n" + ("weights" if small else "the layer's weights"),
          lambda i, j: COLUMN if j == 0 else None)
    _grid(ax, y_left, top, y, "y", f"{m} × {n}\n" + ("outputs" if small else "m × n outputs"),
          lambda i, j: CELL if (i, j) == (0, 0) else None)
    middle = top - m / 2
    for at, sign in ((x_left + k + gap, "×"), (w_left + n + gap, "=")):
        ax.text(at, middle, sign, ha="center", va="center", fontsize=pt(18), color=INK)
    bottom = top - k / 2 - m / 2 - 1.9
    per_cell, total = f"{k} multiplies + {k} adds per cell,", f"{m * n} cells: 2·m·k·n = {cost.ops} operations"
    lines = ([f"first cell: {_first_cell_sum()}", f"{per_cell} {total}"] if not small else  # a phone: shorter lines
             ["first cell:", _first_cell_sum(), per_cell, total])
    ax.text((y_left + n) / 2, bottom, "\n".join(lines), ha="center", va="top", fontsize=pt(11), color=INK,
            linespacing=1.5)
    ax.set_xlim(-0.2, y_left + n + 0.2)
    ax.set_ylim(bottom - (3.2 if small else 1.9), w_top + 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout(pad=0.2)
    return fig


LAYER_WIDTHS = (4, 4, 2)  # input, hidden, output: the last layer has the hero's shape, 4 numbers in, 2 out


def _layer_alt() -> str:
    d = load_config("Llama-3.1-8B").hidden_size
    a, b, c = LAYER_WIDTHS
    return (f"Three columns of circles: an input layer of {a}, a hidden layer of {b} and an output layer of {c}. "
            f"Every circle of one column is joined by a line to every circle of the next: each line is one weight, so "
            f"the first layer has {a} × {b} = {a * b} weights and the last {b} × {c} = {b * c}. The {b} lines into the "
            f"top output circle are highlighted: that circle adds up the {b} hidden numbers, each times the weight on "
            f"its line, one column of the weight matrix. The numbers handed from one column to the next are the "
            f"hidden state: {b} here, {d:,} in Llama 3.1 8B.")


@figure("layer_picture", alt=_layer_alt())
def layer_picture():
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    small = phone()
    fig, ax = plt.subplots(figsize=size((6.0, 3.0), 3.6))
    xs = (0.0, 3.0, 6.0)
    spacing = 1.0
    centres = [[(x, (width - 1) / 2 * spacing - i * spacing) for i in range(width)]
               for x, width in zip(xs, LAYER_WIDTHS, strict=True)]
    target = centres[2][0]
    for left, right in itertools.pairwise(centres):
        for a in left:
            for b in right:
                hot = b == target
                ax.plot((a[0], b[0]), (a[1], b[1]), color=COLUMN if hot else INK, alpha=1 if hot else 0.35,
                        linewidth=2.2 if hot else 0.8, zorder=1)
    for column, fill in zip(centres, (PALETTE[0], PALETTE[0], CELL), strict=True):
        for centre in column:
            ax.add_patch(Circle(centre, 0.28, facecolor=fill, edgecolor=INK, linewidth=0.8, alpha=0.9, zorder=2))
    names = ("input\nlayer", "hidden\nlayer", "output\nlayer")
    low = -(max(LAYER_WIDTHS) - 1) / 2 * spacing - 0.6
    for x, name in zip(xs, names, strict=True):
        ax.text(x, low, name, ha="center", va="top", fontsize=pt(11), color=INK, linespacing=1.2)
    a, b, c = LAYER_WIDTHS
    notes = ((xs[0] + xs[1]) / 2, f"{a} × {b} = {a * b}\nweights"), ((xs[1] + xs[2]) / 2, f"{b} × {c} = {b * c}\nweights")
    high = (max(LAYER_WIDTHS) - 1) / 2 * spacing + 0.55
    for x, text in notes:
        ax.text(x, high, text, ha="center", va="bottom", fontsize=pt(10), color=INK, linespacing=1.2)
    note = f"one dot product:\nthe {b} hidden numbers,\neach × the weight\non its line"
    if small:  # under the drawing, where the phone's column has room
        note = f"highlighted: one dot product, the {b} hidden numbers, each × the weight on its line"
        ax.text(xs[1], low - 1.3, wrap(note, 30), ha="center", va="top", fontsize=pt(10), color=INK, linespacing=1.25)
    else:
        ax.text(target[0] + 0.45, target[1], note, ha="left", va="center", fontsize=pt(10), color=INK, linespacing=1.25)
    ax.set_xlim(-0.5, xs[2] + (0.6 if small else 3.0))
    ax.set_ylim(low - (3.4 if small else 1.0), high + 1.0)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout(pad=0.2)
    return fig
