"""One look for every figure: transparent background, grey ink that reads in light and dark mode.

Each figure is drawn twice: for the desktop column, and for a phone (`phone()` is true while it draws the
phone variant). A 375 px phone shows a figure in a column of 317 to 343 CSS px; the desktop drawing, 6 to 10
inches wide, would be shrunk there until its text is 3 to 5 px. The phone drawing is `PHONE_WIDTH` inches wide
(about the column, so it is shown near 1:1) with every text at least `PHONE_PT` points: at least 11 px on screen.
"""

from __future__ import annotations

import contextlib
import re

# One palette for these figures and the calculators' live charts (chapter2.charts, drawn in the browser too):
# INK is a mid grey, readable on white and on Material's slate background.
from ...charts import INK, PALETTE


# The figures are <img> SVGs on a transparent background, so one drawing sits on Material's white page and on
# its slate one. INK (#8a8f98) is the one grey legible on both, but only just: 3.3:1 on white, and about 2.3:1
# on a pale box fill, which is where most labels sit. So every figure carries a small style sheet
# (scheme_ink): its INK text turns INK_LIGHT or INK_DARK with the scheme the reader sees. Chromium evaluates
# prefers-color-scheme inside an SVG image from the colour-scheme of the <img>, which Material sets per scheme
# (light on "default", dark on "slate"), so the figure follows the toggle too; a browser that ignores the
# sheet shows INK. Each is at least 4.5:1 (WCAG AA) on its page and on every box fill the figures use
# (PALETTE at alpha 0.3 over that page): tests/test_figures_svg.py works the ratios out.
INK_LIGHT = "#4b5058"
INK_DARK = "#c3c7ce"

PHONE_WIDTH = 4.3  # inches: 310 pt, shown at 317 to 343 CSS px on a 375 px phone
PHONE_PT = 12.0  # the smallest text of a phone drawing, in points (= px at 1:1); 11 px after the column's scale
_PHONE = [False]


def phone() -> bool:
    """True while the phone variant of a figure is drawn (see the module docstring)."""
    return _PHONE[0]


def pt(size: float) -> float:
    """A font size: `size` on the desktop drawing, at least PHONE_PT on the phone one."""
    return max(size, PHONE_PT) if _PHONE[0] else size


def size(desktop: tuple[float, float], phone_height: float) -> tuple[float, float]:
    """A figure size in inches: `desktop`, or PHONE_WIDTH wide and `phone_height` tall on the phone drawing."""
    return (PHONE_WIDTH, phone_height) if _PHONE[0] else desktop


@contextlib.contextmanager
def style(*, phone: bool = False):
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
    if phone:
        rc.update({key: PHONE_PT for key in ("font.size", "axes.titlesize", "axes.labelsize", "xtick.labelsize",
                                              "ytick.labelsize", "legend.fontsize", "legend.title_fontsize",
                                              "figure.titlesize")})
        rc["figure.figsize"] = (PHONE_WIDTH, 3.4)
    _PHONE[0] = phone
    try:
        with mpl.rc_context(rc):
            yield
    finally:
        _PHONE[0] = False


def wrap(text: str, chars: int) -> str:
    """`text` on the desktop drawing; on the phone one, broken into lines of at most `chars` characters."""
    import textwrap

    return "\n".join(textwrap.wrap(text, chars, break_on_hyphens=False)) if _PHONE[0] else text


def legend_below(ax, *, drop: float = 0.62, handles=None, **options):
    """A legend under the axes (`drop` inches below their bottom edge, under the tick labels and the axis
    label, from the figure's left edge), one entry a row: where a phone drawing puts it, instead of over the lines. Left out of
    `tight_layout` (which would shrink the axes to fit it) and put back for the saved drawing's bounds."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    fig = ax.figure  # left edge: the figure's (under the axis label), top: `drop` below the axes
    anchor = blended_transform_factory(fig.transFigure, ax.transAxes) + ScaledTranslation(0, -drop, fig.dpi_scale_trans)
    if handles is not None:
        options["handles"] = handles
    options.setdefault("handlelength", 1.6)
    legend = ax.legend(loc="upper left", bbox_to_anchor=(0, 0), bbox_transform=anchor, borderaxespad=0, **options)
    legend.set_in_layout(False)  # tight_layout must not squeeze the axes to make room; render_svg counts it again
    return legend


def scheme_ink(svg: str) -> str:
    """`svg` with a style sheet that gives its INK text (<text> or <tspan> filled INK) INK_LIGHT on a light page and INK_DARK on a
    dark one (see INK_LIGHT above); lines, boxes and text of other colours are left as drawn."""
    sel = f'text[style*="fill: {INK}"],tspan[style*="fill: {INK}"]'  # a label; a mathtext tick's runs
    sheet = (f"<style>@media (prefers-color-scheme: light){{{sel}{{fill:{INK_LIGHT}!important}}}}"
             f"@media (prefers-color-scheme: dark){{{sel}{{fill:{INK_DARK}!important}}}}</style>")
    head = re.search(r"<svg\b[^>]*>", svg)
    if head is None:
        raise ValueError("svg: no <svg> element to give the scheme's ink to")
    return svg[:head.end()] + sheet + svg[head.end():]
