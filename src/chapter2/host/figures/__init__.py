"""Every figure of the site, regenerated at build time (matplotlib, imported lazily).

Each public submodule registers figure functions with `@figure(name, alt=...)`;
a function takes no argument and returns a matplotlib Figure. `build_all`
writes `NAME.svg` for each into a folder. The MkDocs hook calls it on every
build, so figures are never committed, and a figure that fails fails the build.

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


REGISTRY: dict[str, FigureSpec] = {}


def figure(name: str, *, alt: str) -> Callable:
    """Register a figure function; `alt` is its text alternative, shown on the page."""

    def register(fn):
        if name in REGISTRY:
            raise ValueError(f"figure {name!r} is registered twice")
        REGISTRY[name] = FigureSpec(name, alt, fn)
        return fn

    return register


def _discover() -> None:
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


def render_svg(name: str) -> str:
    """Draw figure `name` and return its SVG text (deterministic: fixed hash salt, no date)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _discover()
    if name not in REGISTRY:
        raise KeyError(f"unknown figure {name!r}; known: {', '.join(sorted(REGISTRY))}")
    from ._style import style

    with style():
        fig = REGISTRY[name].fn()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
        plt.close(fig)
    return compact_svg(buf.getvalue())


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
    """Write every registered figure as `out_dir/NAME.svg`; returns the paths written."""
    _discover()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in sorted(REGISTRY):
        path = out / f"{name}.svg"
        path.write_text(render_svg(name), encoding="utf-8")
        written.append(path)
    return written


def alt_text(name: str) -> str:
    _discover()
    return REGISTRY[name].alt
