"""Every figure of the site, regenerated at build time (matplotlib, imported lazily).

Each public submodule registers figure functions with `@figure(name, alt=...)`;
a function takes no argument and returns a matplotlib Figure. `build_all`
writes `NAME.svg` for each into a folder. The MkDocs hook calls it on every
build, so figures are never committed, and a figure that fails fails the build.

A figure registered with `phone=True` (the default) is also drawn for a phone, `NAME.phone.svg`: the same
function, asked `_style.phone()`, draws it PHONE_WIDTH inches wide with larger text (panels stacked, legends
below); the build hook offers it to narrow screens in a <picture>. `phone=False` says the desktop drawing
already reads on a phone. `smallest_text_px` says how large a drawing's smallest text is on a 375 px phone;
the build fails for a figure on a page whose phone drawing is under READABLE_PX (docs/hooks/build_site.py).

Figures are drawn with `style()` so that their colours follow the site's
light/dark scheme (text and axes use `currentColor`-friendly greys, the
background is transparent) and their SVG output is byte-for-byte reproducible.
"""

from __future__ import annotations

import importlib
import io
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable


@dataclass(frozen=True)
class FigureSpec:
    name: str
    alt: str
    fn: Callable
    phone: bool = True


REGISTRY: dict[str, FigureSpec] = {}


def figure(name: str, *, alt: str, phone: bool = True) -> Callable:
    """Register a figure function; `alt` is its text alternative, shown on the page (for both drawings).
    `phone`: the function also draws a phone variant when `_style.phone()` is true."""

    def register(fn):
        if name in REGISTRY:
            raise ValueError(f"figure {name!r} is registered twice")
        REGISTRY[name] = FigureSpec(name, alt, fn, phone)
        return fn

    return register


def _discover() -> None:
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


def _phone_ticks(fig) -> None:
    """Log axes of a phone drawing label their decades 1k, 1M, 1T (`charts.tick_text`, as the live charts do)
    instead of 10 with a superscript, which matplotlib draws at 70 % of the text size."""
    from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, NullFormatter

    from ...charts import tick_text

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log" and isinstance(axis.get_major_formatter(), LogFormatterSciNotation):
                axis.set_major_formatter(FuncFormatter(lambda v, _: tick_text(v)))
                axis.set_minor_formatter(NullFormatter())


def render_svg(name: str, *, phone: bool = False) -> str:
    """Draw figure `name` (its phone variant if `phone`) and return its SVG text (deterministic: fixed hash
    salt, no date)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _discover()
    if name not in REGISTRY:
        raise KeyError(f"unknown figure {name!r}; known: {', '.join(sorted(REGISTRY))}")
    from ._style import scheme_ink, style

    if phone and not REGISTRY[name].phone:
        raise ValueError(f"figure {name!r} has no phone variant (registered with phone=False)")
    with style(phone=phone):
        fig = REGISTRY[name].fn()
        if phone:
            _phone_ticks(fig)
        for legend in fig.findobj(lambda a: type(a).__name__ == "Legend"):
            legend.set_in_layout(True)  # a legend placed below the axes (legend_below) is inside the drawing
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
        plt.close(fig)
    return scheme_ink(compact_svg(buf.getvalue()))


_METADATA = re.compile(r"<!DOCTYPE[^>]*>|<metadata>.*?</metadata>|<!--.*?-->", re.S)
_ATTRIBUTE = re.compile(r'="([^"]*)"')
_LONG_DECIMAL = re.compile(r"-?\d+\.\d{3,}")


def _attribute(m: re.Match) -> str:
    value = _LONG_DECIMAL.sub(lambda n: f"{float(n.group(0)):.2f}".rstrip("0").rstrip("."), m.group(1))
    return '="' + " ".join(value.split()) + '"'


def compact_svg(svg: str) -> str:
    """Matplotlib's SVG, smaller and drawn the same: no DOCTYPE, metadata block or comments, numbers
    in attributes rounded to 0.01 (of a point: far below a pixel), whitespace in attributes collapsed
    and between tags removed (every text run carries its own position). Text content is untouched."""
    svg = _METADATA.sub("", svg)
    svg = _ATTRIBUTE.sub(_attribute, svg)
    return re.sub(r">\s+<", "><", svg).strip() + "\n"


def build_all(out_dir) -> list[Path]:
    """Write every registered figure as `out_dir/NAME.svg`, and its phone variant, if it has one, as
    `out_dir/NAME.phone.svg`; returns the paths written."""
    _discover()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(REGISTRY):
        for phone in (False, True) if REGISTRY[name].phone else (False,):
            path = out / f"{name}{PHONE_SUFFIX if phone else '.svg'}"
            path.write_text(render_svg(name, phone=phone), encoding="utf-8")
            written.append(path)
    return written


PHONE_SUFFIX = ".phone.svg"
READABLE_PX = 11  # the smallest figure text a phone reader is asked to read, in CSS px
PHONE_COLUMN_PX = 310  # the narrowest column a figure sits in on a 375 px phone (317 px in a list; 343 px plain)
_FONT_SIZE = re.compile(r"font(?:-size)?:\s*([\d.]+)px")
_WIDTH = re.compile(r'<svg\b[^>]*\bviewBox="[\d.-]+ [\d.-]+ ([\d.]+) [\d.]+"')


def smallest_text_px(svg: str, column_px: float = PHONE_COLUMN_PX) -> float:
    """The smallest text of a matplotlib SVG in CSS px when the page shows it in a `column_px` wide column.

    Sizes are in the SVG's user units (points: matplotlib's viewBox is the figure in points, its width
    attribute the same number in pt); an <img> shows the drawing at its own size, 4/3 px per point, or shrunk
    to the column if that is narrower (`max-width: 100%`)."""
    sizes = [float(x) for x in _FONT_SIZE.findall(svg)]
    width = _WIDTH.search(svg)
    if not sizes or width is None:
        return float("inf")
    return min(sizes) * min(4 / 3, column_px / float(width.group(1)))


def alt_text(name: str) -> str:
    _discover()
    return REGISTRY[name].alt
