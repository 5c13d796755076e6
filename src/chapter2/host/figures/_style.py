"""One look for every figure: transparent background, grey ink that reads in light and dark mode."""

from __future__ import annotations

import contextlib

# One palette for these figures and the calculators' live charts (chapter2.charts, drawn in the browser too):
# INK is a mid grey, readable on white and on Material's slate background.
from ...charts import INK, PALETTE


@contextlib.contextmanager
def style():
    import matplotlib as mpl

    rc = {
        "svg.hashsalt": "chapter2",  # reproducible ids inside the SVG
        "svg.fonttype": "none",  # text stays text (searchable, scalable, follows page fonts)
        "figure.facecolor": "none",
        "axes.facecolor": "none",
        "savefig.facecolor": "none",
        "savefig.transparent": True,
        "text.color": INK,
        "axes.labelcolor": INK,
        "axes.edgecolor": INK,
        "xtick.color": INK,
        "ytick.color": INK,
        "grid.color": INK,
        "grid.alpha": 0.3,
        "axes.grid": True,
        "axes.prop_cycle": mpl.cycler(color=PALETTE),
        "font.size": 11,
        "legend.frameon": False,
        "figure.figsize": (6.4, 3.8),
        "path.simplify": False,
    }
    with mpl.rc_context(rc):
        yield
