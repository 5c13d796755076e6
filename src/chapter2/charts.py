"""Live charts of the calculators: one SVG renderer for the build and the browser.

A calculator declares a chart output (`Output(kind="chart", chart=ChartSpec(...))`)
and returns the chart's data, built with `chart()`, `series()`, `point()` and
`rule()`: plain lists of numbers and labels, JSON-serialisable. `render()` turns
that data into an HTML fragment (an inline SVG plus an HTML legend). The build
calls it for the default inputs (so the chart is on the page before Python loads,
and without JavaScript); in the reader's browser `compute_json` calls the same
function in Pyodide and the page only swaps the fragment in. One renderer, so the
build-time drawing and the redrawn one cannot drift apart.

Standard library only (no numpy, no matplotlib): string building. Colours are
SVG presentation attributes from the palette of the build-time figures
(`chapter2.host.figures._style` takes its colours from here); text is drawn in
`currentColor`, so it follows Material's light and dark schemes. No inline
`style` attributes, no scripts: the fragment is CSP-friendly.

Accessibility: the SVG is `role="img"` named by its `<title>` and described by a
`<desc>` summarising every series (range, values at the marked input); the
legend is HTML text, readable at any width.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
from dataclasses import dataclass, replace

from ._checks import as_list, finite_real, positive_int, real
from .format import counted, share, si, sig

__all__ = ["PALETTE", "INK", "ChartSpec", "chart", "series", "point", "rule", "band", "lane", "grid", "diagram", "canvas",
           "shape", "arrow", "label", "render", "render_bars", "bar_text", "check", "digest", "linspace", "logspace",
           "shared"]

INK = "#8a8f98"  # axes and grid: mid grey, readable on white and on Material's slate background
PALETTE = ["#3f7fd8", "#e0712c", "#2ca58d", "#c2459b", "#8c6bd6", "#b8a12a"]
KINDS = ("line", "step", "scatter", "bars")
SPEC_KINDS = ("xy", "grid", "diagram", "heatmap", "canvas")  # a plot with axes (chart()), a table of coloured
# cells (grid()), boxes (diagram()), rows a reader can hover or tap (chapter2.heatmap.heatmap()), shapes placed by
# the caller (canvas(): a picture, e.g. memory and tiles)
W, FONT = 320, 13  # viewBox width and font size (user units); the page scales the SVG to its column:
# 320 units drawn on a 375 px phone (a column of about 310 px) keep 13-unit text at 12.6 px
TOP, RIGHT, BOTTOM = 10, 14, 38
CHAR_W = 0.52 * FONT  # the average width of a character of the charts' sans-serif text (user units)


@dataclass(frozen=True)
class ChartSpec:
    """What does not change with the inputs: axis labels (with units), log axes, fixed ranges, height.

    kind "xy" (the default) is a plot with axes, its data built with `chart()`; kind "grid" is a
    table of coloured cells (a KV cache: layers x positions), its data built with `grid()`: x_label
    names the columns and y_label the rows; its height follows from the rows.
    """

    x_label: str
    y_label: str
    x_log: bool = False
    y_log: bool = False
    x_range: tuple | None = None  # (lo, hi) fixed; None: from the data, rounded out to ticks
    y_range: tuple | None = None
    height: int = 240
    kind: str = "xy"
    y_tick_chars: int = 0  # room for this many characters of y tick labels at least: charts stacked one above
    # the other (a function and its slope) give the same number, so that their x axes line up

    def __post_init__(self):
        if self.kind not in SPEC_KINDS:
            raise ValueError(f"chart kind must be one of {', '.join(SPEC_KINDS)}, got {self.kind!r}")
        if self.kind == "xy":  # an axis title is one line of text along its axis: longer, it is cut at the edge
            for name, room in (("x_label", W - 8), ("y_label", self.height - 8)):
                text, most = getattr(self, name), int(room / CHAR_W)
                if len(text) > most:
                    raise ValueError(f"{name} must fit its axis in one line, at most {most} characters at this size; "
                                     f"got {len(text)}: {text!r}")


# ------------------------------------------------------------------ data (what calculators return)

def _r(v) -> float:
    """A number for the chart data: a float, 6 significant digits (compact JSON, the same in CPython and Pyodide)."""
    return float(f"{float(v):.6g}")


def series(label: str, x, y, *, kind: str = "line", color: int | None = None, dash: bool = False) -> dict:
    """One series: x and y sequences (lists or numpy arrays) of equal length. color: palette index; -1 is INK."""
    if kind not in KINDS:
        raise ValueError(f"series kind must be one of {', '.join(KINDS)}, got {kind!r}")
    xs = [_r(v) for v in as_list("x", x, what="a sequence of numbers")]
    ys = [_r(v) for v in as_list("y", y, what="a sequence of numbers")]
    if len(xs) != len(ys) or not xs:
        raise ValueError(f"series {label!r}: x and y must be non-empty and of equal length")
    s = {"label": str(label), "kind": kind, "x": xs, "y": ys}
    if color is not None:
        s["color"] = int(color)
    if dash:
        s["dash"] = True
    return s


def point(x, y, label: str = "", *, color: int | None = None, legend: bool = False, note: bool = False) -> dict:
    """A marker (the current input on a curve). legend=True lists it in the legend, else only in the description;
    note=True writes its label on the plot beside it (a point labelled directly, no key to look up)."""
    p = {"x": _r(real("x", x)), "y": _r(real("y", y)), "label": str(label)}
    if color is not None:
        p["color"] = int(color)
    if legend:
        p["legend"] = True
    if note:
        p["note"] = True
    return p


def rule(axis: str, at, label: str = "", *, bottom: bool = False) -> dict:
    """A dashed line across the plot: axis 'x' is a vertical line at x = at, 'y' a horizontal one.
    A vertical line's label goes at the top of the plot, or at the bottom with bottom=True."""
    if axis not in ("x", "y"):
        raise ValueError(f"rule axis must be 'x' or 'y', got {axis!r}")
    r = {"axis": axis, "at": _r(at), "label": str(label)}
    if bottom:
        r["bottom"] = True
    return r


def band(axis: str, lo, hi, label: str = "", *, color: int | None = None) -> dict:
    """A shaded stretch of the plot: axis 'x' shades lo <= x <= hi over the whole height (a region: memory bound),
    'y' a horizontal stripe. Its label is written inside it, at the top. color: palette index; -1 is INK."""
    if axis not in ("x", "y"):
        raise ValueError(f"band axis must be 'x' or 'y', got {axis!r}")
    a, b = _r(lo), _r(hi)
    if not a < b:
        raise ValueError(f"band {label!r}: lo must be below hi, got {a} and {b}")
    g = {"axis": axis, "lo": a, "hi": b, "label": str(label)}
    if color is not None:
        g["color"] = int(color)
    return g


def lane(label: str, edges, *, color: int | None = None) -> dict:
    """Intervals drawn as blocks in a lane above the plot, from edges[0] to edges[1], edges[1] to edges[2], ...

    A timeline's phases: one wide prefill block, then one thin block per decode step. Edges are x values
    in order (equal neighbours allowed). color: palette index; -1 is INK.
    """
    es = [_r(v) for v in as_list("edges", edges, what="a sequence of x values")]
    if len(es) < 2 or any(b < a for a, b in zip(es, es[1:], strict=False)):
        raise ValueError(f"lane {label!r}: edges must be at least two x values in increasing order")
    g = {"label": str(label), "edges": es}
    if color is not None:
        g["color"] = int(color)
    return g


def chart(series=(), points=(), rules=(), summary: str = "", lanes=(), bands=(), *, x_ticks=None,
          x_range=None, y_range=None) -> dict:
    """The value a calculator returns for a chart output (kind "xy"). `lanes`: `lane()` blocks above the plot;
    `bands`: `band()` shaded regions under everything else.

    `x_ticks`: [(x, label)], named positions on the x axis instead of numbered ticks (query rows "q4" ..
    "q7", one per category). `x_range`, `y_range`: (lo, hi) fixed for this drawing, overriding the spec's
    and the data's extent: a stepper keeps its axes still from step to step, so only the marks move.
    """
    data = {"series": list(series), "points": list(points), "rules": list(rules), "summary": str(summary)}
    if lanes:  # only when there are some: the data (and digest) of charts without them stay as they were
        data["lanes"] = list(lanes)
    if bands:
        data["bands"] = list(bands)
    if x_ticks is not None:
        data["x_ticks"] = [[_r(x), str(text)] for x, text in as_list("x_ticks", x_ticks, what="a list of (x, label)")]
    for key, extent in (("x_range", x_range), ("y_range", y_range)):
        if extent is not None:
            lo, hi = (_r(finite_real(key, v)) for v in as_list(key, extent, what="(lo, hi)"))
            if not lo < hi:
                raise ValueError(f"{key} must be (lo, hi) with lo < hi, got {extent!r}")
            data[key] = [lo, hi]
    return data


def grid(rows, cols, cells, *, keys, groups=(), marks=(), label_chars: int = 8, col_text: str = "all",
         summary: str = "") -> dict:
    """The value a calculator returns for a chart output of kind "grid": a table of coloured cells.

    rows, cols: their labels (a layer, a token). cells: one list per row, one entry per column:
    None for an empty cell, or (key, alpha): an index into `keys` and a strength in [0, 1].
    keys: [(label, palette index)], what each colour means (the legend).
    groups: [(label, start, end)], named column ranges [start, end) drawn above the grid (prompt, tile 1).
    marks: [(label, col0, col1, row0, row1)], outlined cell ranges [col0, col1) x [row0, row1) (this
    step's tile or column); the first one also gets a dot above it (the current step's marker).
    label_chars: the longest column label written, in characters (longer ones are cut, '…' marking it).
    col_text: "all" writes the column labels under the grid, level, as many as fit (every k-th);
    "mark" writes only the first mark's columns' labels, joined, under it (a token sequence too dense
    to label column by column: the current step's tokens, large enough to read).
    """
    if col_text not in ("all", "mark"):
        raise ValueError(f"col_text must be 'all' or 'mark', got {col_text!r}")
    rows = [str(r) for r in as_list("rows", rows, what="a list of row labels")]
    cols = [str(c) for c in as_list("cols", cols, what="a list of column labels")]
    cells, keys = as_list("cells", cells, what="a list of rows of cells"), as_list("keys", keys, what="a list of (label, color)")
    table = [[None if c is None else [int(c[0]), _r(c[1])] for c in row] for row in cells]
    return {"rows": rows, "cols": cols, "cells": table,
            "keys": [{"label": str(label), "color": int(color)} for label, color in keys],
            "groups": [{"label": str(label), "start": int(a), "end": int(b)} for label, a, b in groups],
            "marks": [{"label": str(label), "col0": int(c0), "col1": int(c1), "row0": int(r0), "row1": int(r1)}
                      for label, c0, c1, r0, r1 in marks],
            "label_chars": int(label_chars), "col_text": col_text, "summary": str(summary)}


def linspace(lo: float, hi: float, n: int) -> list[float]:
    """n values from lo to hi (n >= 2), evenly spaced."""
    lo, hi, n = finite_real("lo", lo), finite_real("hi", hi), positive_int("n", n)
    if n < 2:
        raise ValueError(f"n must be >= 2 (both ends), got {n}")
    return [lo + (hi - lo) * i / (n - 1) for i in range(n)]


def logspace(lo: float, hi: float, n: int) -> list[float]:
    """n values from lo to hi (both > 0), evenly spaced on a log scale."""
    lo, hi = finite_real("lo", lo, low=0, low_open=True), finite_real("hi", hi, low=0, low_open=True)
    n = positive_int("n", n)
    if n < 2:
        raise ValueError(f"n must be >= 2 (both ends), got {n}")
    a, b = math.log10(lo), math.log10(hi)
    return [10 ** (a + (b - a) * i / (n - 1)) for i in range(n)]


def _numbers(data: dict):
    for g in data.get("lanes", ()):
        yield from g["edges"]
    for x, _ in data.get("x_ticks", ()):
        yield x
    yield from data.get("x_range", ())
    yield from data.get("y_range", ())
    for s in data["series"]:
        yield from s["x"]
        yield from s["y"]
    for p in data["points"]:
        yield p["x"]
        yield p["y"]
    for r in data["rules"]:
        yield r["at"]
    for b in data.get("bands", ()):
        yield b["lo"]
        yield b["hi"]


XY_KEYS = {"series", "points", "rules", "summary"}
XY_OPTIONAL = {"lanes", "bands", "x_ticks", "x_range", "y_range"}
GRID_KEYS = {"rows", "cols", "cells", "keys", "groups", "marks", "label_chars", "col_text", "summary"}


def _spec(spec) -> ChartSpec:
    if not isinstance(spec, ChartSpec):
        raise TypeError(f"spec must be a chapter2.charts.ChartSpec, got {type(spec).__name__}")
    return spec


def check(spec: ChartSpec, data: dict) -> None:
    """Raise ValueError unless the chart's numbers are finite (and positive on log axes); TypeError if malformed."""
    if _spec(spec).kind == "grid":
        _check_grid(data)
        return
    if spec.kind == "diagram":
        _check_diagram(data)
        return
    if spec.kind == "heatmap":
        from .heatmap import check_heatmap

        check_heatmap(data)
        return
    if spec.kind == "canvas":
        _check_canvas(data)
        return
    if not isinstance(data, dict) or not XY_KEYS <= set(data) <= XY_KEYS | XY_OPTIONAL:
        raise TypeError(f"data must be a chart output built with chapter2.charts.chart(), got {type(data).__name__}")
    try:  # one C loop over every number: a nan or an infinity makes the sum nan or infinite
        finite = math.isfinite(math.fsum(_numbers(data)))
    except OverflowError:  # finite values too large to add up: look at each
        finite = all(math.isfinite(v) for v in _numbers(data))
    if not finite:
        raise ValueError("the chart has a value that is not a finite number")
    for axis, log in (("x", spec.x_log), ("y", spec.y_log)):
        values = [v for s in data["series"] for v in s[axis]] + [p[axis] for p in data["points"]]
        values += [r["at"] for r in data["rules"] if r["axis"] == axis]
        values += [v for b in data.get("bands", ()) if b["axis"] == axis for v in (b["lo"], b["hi"])]
        if axis == "x":
            values += [v for g in data.get("lanes", ()) for v in g["edges"]] + [x for x, _ in data.get("x_ticks", ())]
        values += data.get(f"{axis}_range", [])
        if log and any(v <= 0 for v in values):
            raise ValueError(f"the chart's {axis} axis is logarithmic but has a value <= 0")


def _check_grid(data) -> None:
    if not isinstance(data, dict) or set(data) != GRID_KEYS:
        raise TypeError(f"data must be a grid chart output built with chapter2.charts.grid(), got {type(data).__name__}")
    rows, cols, cells = data["rows"], data["cols"], data["cells"]
    if not rows or not cols or len(cells) != len(rows) or any(len(row) != len(cols) for row in cells):
        raise TypeError(f"a grid needs rows and columns, and one cell per row and column ({len(rows)} x {len(cols)})")
    for row in cells:
        for c in row:
            if c is None:
                continue
            if not 0 <= c[0] < len(data["keys"]):
                raise TypeError(f"a grid cell names key {c[0]}, but the grid has {len(data['keys'])} keys")
            if not (math.isfinite(c[1]) and 0 <= c[1] <= 1):
                raise ValueError("a grid cell's strength is not a number from 0 to 1")
    for g in data["groups"]:
        if not 0 <= g["start"] < g["end"] <= len(cols):
            raise TypeError(f"grid group {g['label']!r} is outside the {len(cols)} columns")
    for m in data["marks"]:
        if not (0 <= m["col0"] < m["col1"] <= len(cols) and 0 <= m["row0"] < m["row1"] <= len(rows)):
            raise TypeError(f"grid mark {m['label']!r} is outside the grid")


def digest(data: dict) -> str:
    """A short fingerprint of the chart data (the page carries it, so tests can compare series)."""
    if not isinstance(data, dict):
        raise TypeError(f"data must be a chart's data dict (chart() or grid()), got {type(data).__name__}")
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


# ------------------------------------------------------------------ axes

class _Axis:
    def __init__(self, values, log: bool, fixed, lo_px: float, hi_px: float, pad: float = 1.0):
        self.log = log
        if fixed:
            lo, hi = float(fixed[0]), float(fixed[1])
            slack = 1e-9 * (hi - lo)
            self.ticks = [t for t in (_log_ticks(lo, hi) if log else _lin_ticks(lo, hi)[2]) if lo - slack <= t <= hi + slack]
        elif log:  # out to the next 1, 2 or 5 x 10^k (after `pad`, room so that nothing sits on the frame)
            vals = [v for v in values if v > 0] or [1.0]
            lo, hi = _nice_log(min(vals) / pad, down=True), _nice_log(max(vals) * pad, down=False)
            if pad == 1 and max(vals) >= 10 * min(vals):  # no room asked for: the data's own extent
                lo, hi = min(vals), max(vals)
            if hi <= lo:
                hi = lo * 10
            self.ticks = _log_ticks(lo, hi)
        else:
            vals = list(values) or [0.0, 1.0]
            lo, hi, self.ticks = _lin_ticks(min(vals), max(vals))
        self.lo, self.hi, self.px = lo, hi, (lo_px, hi_px)
        a, b = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
        self._a, self._k = a, (hi_px - lo_px) / (b - a)  # v -> lo_px + (v - a) * k: one multiply per point

    def __call__(self, v: float) -> float:
        t = math.log10(max(v, 1e-300)) if self.log else v
        return self.px[0] + (t - self._a) * self._k

    def many(self, values) -> list[float]:
        """The positions of many values at once (a series' points): the same map, without a call per point."""
        p0, a, k = self.px[0], self._a, self._k
        if self.log:
            log10 = math.log10
            return [p0 + (log10(v if v > 1e-300 else 1e-300) - a) * k for v in values]
        return [p0 + (v - a) * k for v in values]


def _lin_ticks(lo: float, hi: float, n: int = 6):
    if hi - lo <= abs(hi) * 1e-12:
        lo, hi = (lo - 1, hi + 1) if lo == 0 else (lo - abs(lo) / 2, hi + abs(hi) / 2)
    raw = (hi - lo) / n
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if raw <= m * mag * (1 + 1e-9))
    k0, k1 = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    ticks = [float(f"{k * step:.12g}") for k in range(k0, k1 + 1)]
    return ticks[0], ticks[-1], ticks


def _nice_log(v: float, *, down: bool) -> float:
    """The nearest 1, 2 or 5 x 10^k below (down) or above v."""
    e = math.floor(math.log10(v))
    steps = [m * 10.0 ** k for k in (e - 1, e, e + 1) for m in (1, 2, 5)]
    return float(f"{(max(t for t in steps if t <= v * (1 + 1e-9)) if down else min(t for t in steps if t >= v * (1 - 1e-9))):.12g}")


def _log_ticks(lo: float, hi: float) -> list[float]:
    e0, e1 = math.floor(math.log10(lo) + 1e-9), math.ceil(math.log10(hi) - 1e-9)
    every = 1 + (e1 - e0) // 8  # at most about 8 labelled decades
    ticks = [10.0 ** e for e in range(e0, e1 + 1) if (e - e0) % every == 0]
    if e1 - e0 <= 2:
        ticks = sorted(ticks + [m * 10.0 ** e for e in range(e0, e1) for m in (2, 5)])
    return [float(f"{t:.12g}") for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]


def tick_text(v: float) -> str:
    """1500 -> '1.5k', 1e12 -> '1T', 0.25 -> '0.25', 1e-4 -> '0.0001': SI prefixes, never e-notation."""
    v = real("v", v)
    if v == 0:
        return "0"
    for scale, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{sig(v / scale, 4)}{prefix}"
    return sig(v, 4)


def value_text(v: float, scale: float | None = None) -> str:
    """A number in the text alternative, as the pages write numbers (3 significant digits, `sig`), with SI prefixes
    from 10,000 ('3.7T'). `scale`, the largest magnitude on its axis: a value under 10^-4 of it reads "0" (GELU's
    -5.9 × 10⁻⁹ at x = -6 on a plot up to 6), as a reader of the drawing sees it."""
    v = real("v", v)
    if scale and abs(v) < 1e-4 * abs(scale):
        return "0"
    if abs(v) >= 1e4:
        return tick_text(float(f"{v:.3g}"))
    return sig(v, 3)


# ------------------------------------------------------------------ drawing

def _f(v: float) -> str:
    return f"{v:.1f}".removesuffix(".0")


def _color(index, fallback: int) -> str:
    i = fallback if index is None else index
    return INK if i < 0 else PALETTE[i % len(PALETTE)]


def _path(s: dict, xa: _Axis, ya: _Axis) -> str:
    xs, ys = s["x"], s["y"]
    if xa.log or ya.log:  # a value <= 0 has no place on a log axis: left out
        kept = [(x, y) for x, y in zip(xs, ys, strict=True) if not ((xa.log and x <= 0) or (ya.log and y <= 0))]
        xs, ys = [x for x, _ in kept], [y for _, y in kept]
    if not xs:
        return ""
    pts = list(zip(xa.many(xs), ya.many(ys), strict=True))
    d = [f"M{_f(pts[0][0])} {_f(pts[0][1])}"]
    if s["kind"] == "step":  # hold each value until the next x (step-post)
        for x1, y1 in pts[1:]:
            d.append(f"H{_f(x1)}V{_f(y1)}")
    elif len(pts) > 1:
        d.append("L" + " ".join(f"{_f(x)} {_f(y)}" for x, y in pts[1:]))
    return "".join(d)


def _bars(s: dict, xa: _Axis, ya: _Axis, color: str) -> str:
    base = ya(ya.lo) if ya.log else ya(min(max(0.0, ya.lo), ya.hi))
    pos = sorted(xa(x) for x in s["x"])
    gap = min([b - a for a, b in zip(pos, pos[1:], strict=False) if b > a] or [40.0])
    half = min(0.35 * gap, 18.0)
    rects = []
    for x, y in zip(s["x"], s["y"], strict=True):
        cx, top = xa(x), ya(y)
        rects.append(f'<rect x="{_f(cx - half)}" y="{_f(min(top, base))}" width="{_f(2 * half)}" '
                     f'height="{_f(abs(base - top))}"/>')
    return f'<g fill="{color}">{"".join(rects)}</g>'


def _band(b: dict, xa: _Axis, ya: _Axis, box, color: str) -> str:
    """A shaded region, clipped to the plot box (x0, x1, y0, y1), its label inside at the top."""
    x0, x1, y0, y1 = box
    if b["axis"] == "x":
        left, right = (min(max(xa(v), x0), x1) for v in (b["lo"], b["hi"]))
        top, bottom = y1, y0
    else:
        left, right = x0, x1
        top, bottom = (min(max(ya(v), y1), y0) for v in (b["hi"], b["lo"]))
    if right - left < 1 or bottom - top < 1:
        return ""
    label = ""
    room = int((right - left - 8) / (0.56 * FONT))
    if b["label"] and room >= 4:
        label = (f'<text x="{_f((left + right) / 2)}" y="{_f(top + FONT + 3)}" text-anchor="middle" '
                 f'fill="currentColor" font-weight="600">{html.escape(_cut(b["label"], room))}</text>')
    return (f'<rect class="c2-chart__band" x="{_f(left)}" y="{_f(top)}" width="{_f(right - left)}" '
            f'height="{_f(bottom - top)}" fill="{color}" fill-opacity="0.13"/>{label}')


def _notes(points, xa: _Axis, ya: _Axis, box, dots=()) -> list[str]:
    """Labels written beside their points ("\n" breaks a label into lines): right of the point where the text
    fits, else left of it; above it, or below it near the top; moved down (or up) a line while it would
    overlap a label already placed or one of the `dots` (every point drawn, (x, y) in user units)."""
    x0, x1, y0, y1 = box
    out, line = [], FONT + 3
    # a dot as the boxes below are kept: (left, first baseline, width, height - line), covering it and 2 units more
    placed = [(dx - 7, dy - 7 + line, 14, 14 - line) for dx, dy in dots]
    for p in sorted(points, key=lambda p: ya(p["y"])):
        px, py, lines = xa(p["x"]), ya(p["y"]), p["label"].split("\n")
        width, height = 0.56 * FONT * max(len(t) for t in lines), line * len(lines)
        right = px + 9 + width <= x1
        if right or px - 9 - width >= x0:
            left, gap = (px + 9 if right else px - 9 - width), 8
        else:  # fits on neither side: under (or over) the point, kept inside the plot
            right, left, gap = True, min(max(px - width / 2, x0 + 2), x1 - width), 12
        y = py - gap - height + line if py - gap - height >= y1 else py + gap + FONT  # first line's baseline
        first = y
        for _ in range(12):
            if not any(left < a + w and a < left + width and y - line < b + h and b - line < y + height - line
                       for a, b, w, h in placed):
                break
            y = y + line if y + height <= y0 else y - 2 * line
        placed.append((left, y, width, height - line))
        if y != first:  # moved away from its point: a thin leader line says whose label it is
            ly = y - FONT / 2 if y > py else y - FONT / 2 + height - line
            out.append(f'<path d="M{_f(px)} {_f(py)}L{_f(left - 2 if right else left + width + 2)} {_f(ly)}" '
                       f'stroke="currentColor" stroke-opacity="0.6" fill="none"/>')
        x = _f(left if right else px - 9)
        spans = "".join(f'<tspan x="{x}" dy="{0 if i == 0 else line}">{html.escape(t)}</tspan>' for i, t in enumerate(lines))
        out.append(f'<text class="c2-chart__note" y="{_f(y)}" text-anchor="{"start" if right else "end"}" '
                   f'fill="currentColor" stroke-width="3.5" stroke-linejoin="round" paint-order="stroke">{spans}</text>')
    return out


LANE, MAX_BLOCKS = 14, 64  # lane height; at most this many blocks per lane (more are merged, in equal runs):
# 64 blocks of 4 units in a plot about 255 units wide, each one a visible tick on a phone


def _crosses(rect, lines) -> bool:
    """Whether any of the polylines ([(x, y)] in user units) passes through rect (left, top, right, bottom)."""
    left, top, right, bottom = rect
    for pts in lines:
        for (ax, ay), (bx, by) in zip(pts, pts[1:], strict=False):
            if max(ax, bx) < left or min(ax, bx) > right or max(ay, by) < top or min(ay, by) > bottom:
                continue
            for i in range(21):  # a segment near the box: look along it
                t = i / 20
                px, py = ax + t * (bx - ax), ay + t * (by - ay)
                if left <= px <= right and top <= py <= bottom:
                    return True
    return False


def _text_box(left: float, baseline: float, chars: int) -> tuple[float, float, float, float]:
    """The box (left, top, right, bottom) a one-line label of `chars` characters takes, written from `left` on
    `baseline`: CHAR_W a character, 0.8 FONT above the baseline, 0.25 FONT below it."""
    return (left, baseline - FONT * 0.8, left + CHAR_W * chars, baseline + FONT * 0.25)


def _overlaps(a, b) -> bool:
    """Whether two boxes (left, top, right, bottom) share any area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _lane(g: dict, xa: _Axis, x0: float, x1: float, color: str) -> str:
    """One lane's blocks, TOP to TOP + LANE; a block wider than 1.2 units keeps a thin gap after it (ticks)."""
    edges, n = g["edges"], len(g["edges"]) - 1
    run = -(-n // MAX_BLOCKS)
    rects = []
    for a in range(0, n, run):
        left, right = (min(max(xa(edges[i]), x0), x1) for i in (a, min(a + run, n)))
        width = right - left - (0.5 if right - left > 1.2 else 0)
        rects.append(f'<rect x="{_f(left)}" y="{TOP}" width="{_f(max(width, 0.4))}" height="{LANE}"/>')
    return f'<g fill="{color}">{"".join(rects)}</g>'


def _key(kind: str, color: str, dash: bool) -> str:
    """The legend swatch: a short line, a dot or a block."""
    if kind in ("scatter", "point"):
        shape = f'<circle cx="9" cy="5" r="4" fill="{color}"/>'
    elif kind == "bars":
        shape = f'<rect x="3" y="1" width="12" height="8" fill="{color}"/>'
    elif kind == "mark":  # a grid's outlined cells
        shape = '<rect x="4" y="1" width="10" height="8" fill="none" stroke="currentColor" stroke-width="2"/>'
    else:
        dashes = ' stroke-dasharray="4 2"' if dash else ""
        shape = f'<path d="M1 5H17" stroke="{color}" stroke-width="2.5"{dashes}/>'
    return f'<svg class="c2-chart__key" viewBox="0 0 18 10" width="18" height="10" aria-hidden="true">{shape}</svg>'


def describe(spec: ChartSpec, data: dict) -> str:
    """The text alternative: axes, each series from first to last value, the markers, the rules."""
    _spec(spec)

    xs = [abs(v) for s in data["series"] for v in s["x"]] + [abs(p["x"]) for p in data["points"]]
    ys = [abs(v) for s in data["series"] for v in s["y"]] + [abs(p["y"]) for p in data["points"]]
    x_scale, y_scale = max(xs, default=None), max(ys, default=None)

    names = {x: text for x, text in data.get("x_ticks", ())}

    def pair(x, y):
        return f"{value_text(y, y_scale)} at {names.get(x) or value_text(x, x_scale)}"

    parts = [f"x axis: {spec.x_label}{' (log scale)' if spec.x_log else ''}; "
             f"y axis: {spec.y_label}{' (log scale)' if spec.y_log else ''}."]
    for s in data["series"]:
        if s["kind"] in ("scatter", "bars") and len(s["x"]) <= 8:
            values = ", ".join(pair(x, y) for x, y in zip(s["x"], s["y"], strict=True))
            parts.append(f"{s['label'] or 'Series'}: {values}.")
        else:
            lo, hi = min(s["y"]), max(s["y"])
            parts.append(f"{s['label'] or 'Series'}: from {pair(s['x'][0], s['y'][0])} to {pair(s['x'][-1], s['y'][-1])}"
                         f" (lowest {value_text(lo, y_scale)}, highest {value_text(hi, y_scale)}).")
    marked = [f"{p['label'] or 'point'}: {pair(p['x'], p['y'])}" for p in data["points"]]
    if marked:
        parts.append("Marked: " + "; ".join(marked) + ".")
    for b in data.get("bands", ()):
        parts.append(f"Shaded: {b['label'] or 'a region'}, {b['axis']} from {value_text(b['lo'])} to {value_text(b['hi'])}.")
    for r in data["rules"]:
        parts.append(f"Dashed line: {r['label'] or r['axis'] + ' = ' + value_text(r['at'])}.")
    for g in data.get("lanes", ()):
        n = len(g["edges"]) - 1
        parts.append(f"{g['label'] or 'Blocks'}: {counted(n, 'block')} from {value_text(g['edges'][0])} "
                     f"to {value_text(g['edges'][-1])} on the x axis.")
    if data["summary"]:
        parts.append(data["summary"])
    return " ".join(parts)


def _values(spec: ChartSpec, data: dict) -> tuple[list, list]:
    """Every x and every y an xy plot must hold: its series, points, rules, lanes and named ticks (and 0 under
    bars)."""
    lanes = data.get("lanes", ())
    xs = [v for s in data["series"] for v in s["x"]] + [p["x"] for p in data["points"]]
    xs += [r["at"] for r in data["rules"] if r["axis"] == "x"] + [v for g in lanes for v in g["edges"]]
    xs += [x for x, _ in data.get("x_ticks", ())]
    ys = [v for s in data["series"] for v in s["y"]] + [p["y"] for p in data["points"]]
    ys += [r["at"] for r in data["rules"] if r["axis"] == "y"]
    if any(s["kind"] == "bars" for s in data["series"]) and not spec.y_log:
        ys.append(0.0)
    return xs, ys


def shared(spec: ChartSpec, datas) -> ChartSpec:
    """`spec` with every axis it leaves to the data fixed to the range `render` would give all of `datas` together:
    two charts drawn one beside the other on the same axes (A beside B: chapter2.calculators' compare)."""
    if _spec(spec).kind != "xy":
        return spec
    datas = as_list("datas", datas, what="a list of chart data")
    if not datas:
        raise ValueError("datas must hold at least one chart's data, got an empty list")
    xs, ys = [], []
    for data in datas:
        check(spec, data)
        x, y = _values(spec, data)
        xs, ys = xs + x, ys + y
    xa, ya = _Axis(xs, spec.x_log, spec.x_range, 0, 1), _Axis(ys, spec.y_log, spec.y_range, 1, 0, pad=1.1)
    return replace(spec, x_range=(xa.lo, xa.hi), y_range=(ya.lo, ya.hi))  # (a range a chart's data fixes wins)


def render(spec: ChartSpec, data: dict, *, uid: str, title: str) -> str:
    """The chart as an HTML fragment: <figure> with the SVG (title, desc, axes, series, markers) and a legend."""
    if _spec(spec).kind == "grid":
        return _render_grid(spec, data, uid=uid, title=title)
    if spec.kind == "diagram":
        return _render_diagram(data, uid=uid, title=title)
    if spec.kind == "heatmap":
        from .heatmap import render_heatmap

        return render_heatmap(spec, data, uid=uid, title=title)
    if spec.kind == "canvas":
        return _render_canvas(data, uid=uid, title=title)
    e = html.escape
    h = spec.height
    lanes = data.get("lanes", ())
    top = TOP + (LANE + 8 if lanes else 0)  # a lane of blocks above the plot
    xs, ys = _values(spec, data)
    ya = _Axis(ys, spec.y_log, data.get("y_range") or spec.y_range, h - BOTTOM, top, pad=1.1)
    labels = [tick_text(t) for t in ya.ticks]
    left = 28 + round(0.6 * FONT * max(spec.y_tick_chars, *(len(t) for t in labels)))
    xa = _Axis(xs, spec.x_log, data.get("x_range") or spec.x_range, left, W - RIGHT)
    x_labels = [tick_text(t) for t in xa.ticks]
    if "x_ticks" in data:  # named positions: these ticks, these labels
        xa.ticks, x_labels = [x for x, _ in data["x_ticks"]], [text for _, text in data["x_ticks"]]
    x0, x1, y0, y1 = left, W - RIGHT, h - BOTTOM, top

    out = [f'<svg class="c2-chart__svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" '
           f'aria-labelledby="{uid}-t" aria-describedby="{uid}-d" font-size="{FONT}">',
           f'<title id="{uid}-t">{e(title)}</title><desc id="{uid}-d">{e(describe(spec, data))}</desc>']
    # grid and tick labels
    grid, text = [], []
    for t, label in zip(ya.ticks, labels, strict=True):
        y = _f(ya(t))
        grid.append(f"M{x0} {y}H{x1}")
        text.append(f'<text x="{x0 - 5}" y="{y}" dy="0.35em" text-anchor="end">{e(label)}</text>')
    for t, label in zip(xa.ticks, x_labels, strict=True):
        x = _f(xa(t))
        grid.append(f"M{x} {y0}V{y1}")
        text.append(f'<text x="{x}" y="{y0 + 15}" text-anchor="middle">{e(label)}</text>')
    out.append(f'<path class="c2-chart__grid" d="{"".join(grid)}" stroke="{INK}" stroke-opacity="0.3" fill="none"/>')
    out.append(f'<path d="M{x0} {y1}V{y0}H{x1}" stroke="{INK}" fill="none"/>')
    out.append(f'<g fill="currentColor">{"".join(text)}'
               f'<text x="{_f((x0 + x1) / 2)}" y="{h - 6}" text-anchor="middle">{e(spec.x_label)}</text>'
               f'<text transform="translate(13 {_f((y0 + y1) / 2)}) rotate(-90)" text-anchor="middle">'
               f'{e(spec.y_label)}</text></g>')
    for i, b in enumerate(data.get("bands", ())):
        out.append(_band(b, xa, ya, (x0, x1, y0, y1), _color(b.get("color"), i)))
    # series, clipped to the plot
    out.append(f'<clipPath id="{uid}-c"><rect x="{x0}" y="{y1 - 2}" width="{x1 - x0}" height="{y0 - y1 + 4}"/></clipPath>'
               f'<g clip-path="url(#{uid}-c)">')
    for i, s in enumerate(data["series"]):
        color = _color(s.get("color"), i)
        if s["kind"] == "bars":
            out.append(_bars(s, xa, ya, color))
        elif s["kind"] == "scatter":
            out.append(f'<g fill="{color}">' + "".join(
                f'<circle cx="{_f(xa(x))}" cy="{_f(ya(y))}" r="3.5"/>'
                for x, y in zip(s["x"], s["y"], strict=True)) + "</g>")
        else:
            dash = ' stroke-dasharray="6 3"' if s.get("dash") else ""
            out.append(f'<path d="{_path(s, xa, ya)}" stroke="{color}" stroke-width="2" fill="none"'
                       f' stroke-linejoin="round"{dash}/>')
    out.append("</g>")
    for i, g in enumerate(lanes):
        out.append(_lane(g, xa, x0, x1, _color(g.get("color"), len(data["series"]) + i)))
    # rules and markers
    n_top = n_bottom = 0
    lines = [[(xa(x), ya(y)) for x, y in zip(s["x"], s["y"], strict=True)]
             for s in data["series"] if s["kind"] in ("line", "step")]

    def inside(x, y):  # marks outside a fixed range are left out (the lines are clipped)
        return x0 - 1 <= x <= x1 + 1 and y1 - 1 <= y <= y0 + 1

    # label boxes written so far (the tick labels among them): a vertical rule's label goes where it meets
    # neither one of them nor a curve
    taken = [(x0 - 5 - CHAR_W * len(label), ya(t) - FONT * 0.45, x0 - 5, ya(t) + FONT * 0.45)
             for t, label in zip(ya.ticks, labels, strict=True)]
    taken += [_text_box(xa(t) - CHAR_W * len(label) / 2, y0 + 15, len(label)) for t, label in zip(xa.ticks, x_labels, strict=True)]

    def free(box) -> bool:
        return not _crosses(box, lines) and not any(_overlaps(box, t) for t in taken)

    rules = [r for r in data["rules"]
             if inside(xa(r["at"]) if r["axis"] == "x" else x0, ya(r["at"]) if r["axis"] == "y" else y0)]
    for r in (r for r in rules if r["axis"] == "y"):  # horizontal rules first: their labels sit at the right end
        y = ya(r["at"])
        out.append(f'<path d="M{x0} {_f(y)}H{x1}" stroke="currentColor" stroke-opacity="0.6" stroke-dasharray="3 3"/>')
        if r["label"]:
            ty = y + 13 if y < y1 + 14 else y - 4
            taken.append(_text_box(x1 - 4 - CHAR_W * len(r["label"]), ty, len(r["label"])))
            out.append(f'<text class="c2-chart__rule" x="{x1 - 4}" y="{_f(ty)}" fill="currentColor" '
                       f'text-anchor="end">{e(r["label"])}</text>')
    for r in (r for r in rules if r["axis"] == "x"):  # labels of vertical rules stack from the top (or the bottom)
        x = xa(r["at"])
        right = x > x0 + 0.7 * (x1 - x0)
        out.append(f'<path d="M{_f(x)} {y0}V{y1}" stroke="currentColor" stroke-opacity="0.6" stroke-dasharray="3 3"/>')
        if r["label"]:  # at its end of the line (top or bottom), beside it; elsewhere if a curve or a label is there
            width = CHAR_W * len(r["label"])
            tries = []
            for extra in range(3):  # its own row at either end first; one or two rows further in if need be
                for bottom in (bool(r.get("bottom")), not r.get("bottom")):
                    for side in (right, not right):
                        ty = y0 - 5 - 14 * (n_bottom + extra) if bottom else y1 + 11 + 14 * (n_top + extra)
                        tx = x - 4 - width if side else x + 4
                        tries.append((bottom, side, ty, _text_box(tx, ty, len(r["label"]))))
            bottom, side, y, box = next((t for t in tries if free(t[3])), tries[0])
            taken.append(box)
            n_bottom, n_top = (n_bottom + 1, n_top) if bottom else (n_bottom, n_top + 1)
            out.append(f'<text class="c2-chart__rule" x="{_f(x - 4 if side else x + 4)}" y="{_f(y)}" '
                       f'fill="currentColor" text-anchor="{"end" if side else "start"}">{e(r["label"])}</text>')
    for p in data["points"]:
        if inside(xa(p["x"]), ya(p["y"])):
            out.append(f'<circle class="c2-chart__pt" cx="{_f(xa(p["x"]))}" cy="{_f(ya(p["y"]))}" r="5" '
                       f'fill="{_color(p.get("color"), -1)}" stroke="#fff" stroke-width="1.5"/>')
    drawn = [(xa(p["x"]), ya(p["y"])) for p in data["points"] if inside(xa(p["x"]), ya(p["y"]))]
    out.extend(_notes([p for p in data["points"] if p.get("note") and inside(xa(p["x"]), ya(p["y"]))],
                      xa, ya, (x0, x1, y0, y1), dots=drawn))
    out.append("</svg>")
    # legend: HTML text, wraps on a phone
    keys = [(s["label"], _key(s["kind"], _color(s.get("color"), i), s.get("dash", False)))
            for i, s in enumerate(data["series"]) if s["label"]]
    keys += [(p["label"], _key("point", _color(p.get("color"), -1), False)) for p in data["points"] if p.get("legend")]
    keys += [(g["label"], _key("bars", _color(g.get("color"), len(data["series"]) + i), False))
             for i, g in enumerate(lanes) if g["label"]]
    legend = "".join(f"<li>{key}{e(label)}</li>" for label, key in keys)
    legend = f'<ul class="c2-chart__legend">{legend}</ul>' if legend else ""
    return f'<figure class="c2-chart" data-digest="{digest(data)}">{"".join(out)}{legend}</figure>'


# ------------------------------------------------------------------ grids (ChartSpec kind "grid")

GRID_FONT, CELL_H = 12, 18  # label font size and cell height (user units): 11.6 px on a 375 px phone


def _cut(text: str, chars: int) -> str:
    """A label cut to `chars` characters, '…' marking the cut."""
    return text if len(text) <= chars else text[: max(chars - 1, 0)] + "…"


def describe_grid(spec: ChartSpec, data: dict) -> str:
    """The text alternative of a grid: rows, columns (every label), what each colour covers, the marks."""
    _spec(spec)
    _check_grid(data)
    cols, rows, cells = data["cols"], data["rows"], data["cells"]
    named = len(cols) - next((i for i, c in enumerate(reversed(cols)) if c), len(cols))  # trailing unnamed ones left out
    rest = f"; {counted(len(cols) - named, 'more column')} without a label" if named < len(cols) else ""
    parts = [f"Grid of {len(rows)} rows ({spec.y_label}: {', '.join(rows)}) by {len(cols)} columns "
             f"({spec.x_label}: {', '.join(f'“{c}”' for c in cols[:named])}{rest})."]
    if data["groups"]:
        parts.append("Column groups: " + "; ".join(f"{g['label']}, columns {g['start'] + 1} to {g['end']}"
                                                  for g in data["groups"]) + ".")
    for i, k in enumerate(data["keys"]):
        alphas = [c[1] for row in cells for c in row if c is not None and c[0] == i]
        shade = f", strength {value_text(min(alphas))} to {value_text(max(alphas))}" if alphas and min(alphas) < 1 else ""
        parts.append(f"{k['label']}: {counted(len(alphas), 'cell')}{shade}.")
    empty = sum(c is None for row in cells for c in row)
    parts.append(f"Empty: {counted(empty, 'cell')}.")
    for m in data["marks"]:
        parts.append(f"Outlined: {m['label'] or 'cells'} (columns {m['col0'] + 1} to {m['col1']}, "
                     f"rows {m['row0'] + 1} to {m['row1']}).")
    if data["summary"]:
        parts.append(data["summary"])
    return " ".join(parts)


def _runs(cells):
    """The filled cells as rectangles: runs of equal cells along a row, then equal runs of neighbouring rows
    merged into one; [(key, alpha, col0, col1, row0, row1)]. A page carries every step of a stepper, so fewer
    rectangles is a lighter page (a KV cache's layers are alike: one rectangle per run, not per cell)."""
    flat = []
    for r, row in enumerate(cells):
        j = 0
        while j < len(row):
            k = j
            while k + 1 < len(row) and row[k + 1] == row[j]:
                k += 1
            if row[j] is not None:
                flat.append((row[j][0], row[j][1], j, k + 1, r))
            j = k + 1
    merged = {}
    for key, alpha, c0, c1, r in flat:
        prev = merged.get((key, alpha, c0, c1))
        if prev is not None and prev[-1] == r:
            prev[-1] = r + 1
        else:
            merged[(key, alpha, c0, c1, r)] = [key, alpha, c0, c1, r, r + 1]
            merged[(key, alpha, c0, c1)] = merged[(key, alpha, c0, c1, r)]
    return [tuple(v) for k, v in merged.items() if len(k) == 5]


def _render_grid(spec: ChartSpec, data: dict, *, uid: str, title: str) -> str:
    """A grid as an HTML fragment: the cells (colour = key, opacity = strength), labels, marks, and a legend."""
    e = html.escape
    rows, cols, cells = data["rows"], data["cols"], data["cells"]
    left = 24 + round(0.6 * GRID_FONT * max(len(r) for r in rows))
    top = TOP + (16 if data["groups"] else 0) + 10  # group labels, then room for the marker dot
    cw, ch = (W - RIGHT - left) / len(cols), CELL_H
    bottom = top + len(rows) * ch
    h = bottom + GRID_FONT + 10 + 22  # a line of column labels, then the axis name
    x_of = [left + j * cw for j in range(len(cols) + 1)]

    out = [f'<svg class="c2-chart__svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" '
           f'aria-labelledby="{uid}-t" aria-describedby="{uid}-d" font-size="{GRID_FONT}">',
           f'<title id="{uid}-t">{e(title)}</title><desc id="{uid}-d">{e(describe_grid(spec, data))}</desc>']
    # cells, one group per key
    runs = _runs(cells)
    for i, k in enumerate(data["keys"]):
        rects = []
        for _, alpha, c0, c1, r0, r1 in (run for run in runs if run[0] == i):
            shade = "" if alpha >= 1 else f' fill-opacity="{alpha:.3g}"'
            rects.append(f'<rect x="{_f(x_of[c0] + 0.5)}" y="{_f(top + r0 * ch + 0.5)}" width="{_f(x_of[c1] - x_of[c0] - 1)}" '
                         f'height="{(r1 - r0) * ch - 1}"{shade}/>')
        if rects:
            out.append(f'<g fill="{_color(k["color"], i)}">{"".join(rects)}</g>')
    # cell borders, group separators, frame
    lines = [f"M{left} {_f(top + r * ch)}H{W - RIGHT}" for r in range(1, len(rows))]
    lines += [f"M{_f(x_of[j])} {top}V{_f(bottom)}" for j in range(1, len(cols))]
    out.append(f'<path d="{"".join(lines) or f"M{left} {top}"}" stroke="{INK}" stroke-opacity="0.35" fill="none"/>')
    seps = [f"M{_f(x_of[g['start']])} {TOP}V{_f(bottom)}" for g in data["groups"] if g["start"] > 0]
    out.append(f'<path d="{"".join(seps) or f"M{left} {top}"}" stroke="{INK}" stroke-width="1.5" fill="none"/>')
    out.append(f'<path d="M{left} {top}H{W - RIGHT}V{_f(bottom)}H{left}Z" stroke="{INK}" fill="none"/>')
    # labels: groups above, rows left, columns below (level, never rotated), the axis names
    text = []
    char = 0.6 * GRID_FONT
    for g in data["groups"]:
        width = x_of[g["end"]] - x_of[g["start"]]
        label = _cut(g["label"], int(width / char))
        if label:
            text.append(f'<text x="{_f((x_of[g["start"]] + x_of[g["end"]]) / 2)}" y="{TOP + 10}" '
                        f'text-anchor="middle">{e(label)}</text>')
    for r, label in enumerate(rows):
        text.append(f'<text x="{left - 4}" y="{_f(top + (r + 0.5) * ch)}" dy="0.35em" text-anchor="end">{e(label)}</text>')
    y = _f(bottom + GRID_FONT + 4)
    if data["col_text"] == "mark" and data["marks"]:
        m = data["marks"][0]
        label = _cut("".join(cols[m["col0"]:m["col1"]]), min(data["label_chars"] * (m["col1"] - m["col0"]),
                                                              int((W - RIGHT - left) / char)))
        width = char * len(label)
        mid = min(max((x_of[m["col0"]] + x_of[m["col1"]]) / 2, left + width / 2), W - RIGHT - width / 2)
        text.append(f'<text x="{_f(mid)}" y="{y}" text-anchor="middle" font-weight="600">{e(label)}</text>')
    elif data["col_text"] == "all":
        shown = [_cut(c, data["label_chars"]) for c in cols]
        every = max(1, math.ceil((char * max(len(c) for c in shown) + 4) / cw))
        for j in range(0, len(cols), every):
            text.append(f'<text x="{_f(x_of[j] + cw / 2)}" y="{y}" text-anchor="middle">{e(shown[j])}</text>')
    text.append(f'<text x="{_f((left + W - RIGHT) / 2)}" y="{h - 6}" text-anchor="middle">{e(spec.x_label)}</text>')
    text.append(f'<text transform="translate(12 {_f((top + bottom) / 2)}) rotate(-90)" text-anchor="middle">'
                f'{e(spec.y_label)}</text>')
    out.append(f'<g fill="currentColor">{"".join(text)}</g>')
    # marks: outlined cells; the first gets the marker dot above the grid
    for n, m in enumerate(data["marks"]):
        x, y = x_of[m["col0"]], top + m["row0"] * ch
        out.append(f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(x_of[m["col1"]] - x)}" height="{(m["row1"] - m["row0"]) * ch}" '
                   f'fill="none" stroke="currentColor" stroke-width="2"/>')
        if n == 0:
            out.append(f'<circle class="c2-chart__pt" cx="{_f((x + x_of[m["col1"]]) / 2)}" cy="{top - 6}" r="4" '
                       f'fill="{INK}" stroke="#fff" stroke-width="1.5"/>')
    out.append("</svg>")
    keys = [(k["label"], _key("bars", _color(k["color"], i), False)) for i, k in enumerate(data["keys"]) if k["label"]]
    keys += [(m["label"], _key("mark", "", False)) for m in data["marks"] if m["label"]]
    legend = "".join(f"<li>{key}{e(label)}</li>" for label, key in keys)
    legend = f'<ul class="c2-chart__legend">{legend}</ul>' if legend else ""
    return f'<figure class="c2-chart" data-digest="{digest(data)}">{"".join(out)}{legend}</figure>'


# ------------------------------------------------------------------ bars (an Output of kind "bars")

LOG_BARS = 100  # bars whose largest value is this many times their smallest are drawn on a log scale


def bar_text(v: float) -> str:
    """A bar's number, as the pages write numbers (chapter2.format): '295', '3,480', '537 M', '0.000123'."""
    v = real("v", v)
    return si(v, "", 3) if abs(v) >= 1e6 else sig(v, 3)


def _share_html(v: float, total: float) -> str:
    """' (70.2 %)': a bar's share of the sum, one decimal as the pages write a part's share (`format.share`), on a
    line of its own under the value (chapter2.css), so that the labels keep their room on a phone."""
    return f'<span class="c2-bar__share"> ({share(v / total)})</span>' if total > 0 else ""


def render_bars(pairs, *, shares: bool = False) -> str:
    """[label, value] pairs as HTML bars (<meter>: accessible, no inline CSS), for the build and the browser.

    The values are non-negative. Where the positive ones span LOG_BARS or more, each bar's length is its
    value's logarithm from a tenth of the smallest to the largest, so that the small bars stay visible, and
    the box says "log scale"; else lengths are proportional from zero. Each bar carries its value (data-value,
    9 significant digits) for tests and scripts.

    `shares=True` (parts of one whole: where a model's parameters sit) keeps the lengths proportional whatever
    the spread, so that a part a hundred times smaller looks it, and prints each part's share of the sum after
    its value ("5.64 (70 %)").
    """
    pairs = as_list("pairs", pairs, what="a list of [label, value] pairs")
    values = [float(v) for _, v in pairs]
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError("bars: every value must be a finite number >= 0")
    positive = [v for v in values if v > 0] or [1.0]
    log = not shares and max(positive) >= LOG_BARS * min(positive)
    total = sum(values)
    if log:
        lo, hi = math.log10(min(positive) / 10), math.log10(max(positive))
        length = [(math.log10(v) if v > 0 else lo, lo, hi) for v in values]
    else:
        length = [(v, 0.0, max(positive)) for v in values]
    e = html.escape
    rows = "".join(
        f'<div class="c2-bar" data-value="{v:.9g}"><span class="c2-bar__label">{e(str(label))}</span>'
        f'<meter min="{lo:.6g}" max="{hi:.6g}" value="{x:.6g}"></meter>'
        f'<span class="c2-bar__value">{e(bar_text(v))}{_share_html(v, total) if shares else ""}</span></div>'
        for (label, v), (x, lo, hi) in zip(pairs, length, strict=True))
    scale = '<p class="c2-bars__scale">log scale: each bar\'s length is its value\'s logarithm</p>' if log else ""
    return f'<div class="c2-bars" data-scale="{"log" if log else "linear"}">{rows}</div>{scale}'



# ------------------------------------------------------------------ diagrams (ChartSpec kind "diagram")

DIAGRAM_KEYS = {"boxes", "repeat", "summary"}
BOX_FONT, BOX_LINE = 12, 15  # text size and line height of a box (user units): 11.6 px on a 375 px phone
STRIP_CELLS, STRIP_ROW = 26, 10  # a strip's cells per row (about 6 units wide each) and row height


def diagram(boxes, *, repeat=None, summary: str = "") -> dict:
    """The value a calculator returns for a chart output of kind "diagram": boxes stacked top to bottom,
    an arrow from each to the next (the data flow of a model, input at the top).

    boxes: [(label, detail, colour)] or [(label, detail, colour, side)], or `box(...)` dicts: a bold label, a
    detail wrapped to the box's width, a palette index (-1: INK); `side` is a note in a box of its own to the
    right, joined by a dashed line (where the KV cache sits beside attention). A `box()` may also say how it
    joins the box above (`join`: JOINS) and carry a `strip` of palette indices drawn as a row of small cells
    (a hybrid's layers, one cell each, in order). repeat: (start, end, label): boxes
    [start, end) are one block that runs `label` times ("× 32 layers"), drawn inside a dashed frame; or a
    list of such blocks, in order and apart (an encoder-decoder: the encoder's block, then the decoder's).
    The data holds them as a list (`data["repeat"]`, empty when nothing repeats).
    """
    rows = []
    for b in as_list("boxes", boxes, what="a list of (label, detail, colour[, side])"):
        if isinstance(b, dict):
            rows.append(box(**b))
            continue
        b = as_list("boxes", b, what="a list of (label, detail, colour[, side]) tuples")
        if len(b) not in (3, 4):
            raise TypeError(f"boxes: each box is (label, detail, colour[, side]), got {b!r}")
        rows.append(box(*b))
    blocks = [] if repeat is None else [repeat] if len(repeat) == 3 and isinstance(repeat[2], str) else repeat
    data = {"boxes": rows, "summary": str(summary),
            "repeat": [{"start": int(start), "end": int(end), "label": str(label)} for start, end, label in blocks]}
    _check_diagram(data)
    return data


# how a box joins the one above: "" an arrow (data flows down), "or" an alternative to it (a layer has one or
# the other), "and" beside it (both run on the same input, their outputs added), "none" no link (a heading)
JOINS = {"": "", "or": "or", "and": "in parallel, summed", "none": ""}


def box(label, detail, color, side="", join="", strip=()) -> dict:
    """One box of `diagram()`, with the options a tuple cannot give: `join` (one of JOINS) and `strip`."""
    if join not in JOINS:
        raise ValueError(f"join must be one of {sorted(JOINS)}, got {join!r}")
    return {"label": str(label), "detail": str(detail), "color": _palette_index("color", color), "side": str(side),
            "join": join, "strip": [_palette_index("strip", i) for i in as_list("strip", strip)]}


def _palette_index(name: str, value) -> int:
    """A palette index (-1: INK), as an int; anything else is refused by name."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a palette index (an int, -1 for ink), got {value!r}")
    return value


def _check_diagram(data) -> None:
    if not isinstance(data, dict) or set(data) != DIAGRAM_KEYS or not data["boxes"]:
        raise TypeError(f"data must be a diagram built with chapter2.charts.diagram(), got {type(data).__name__}")
    before = 0
    for r in data["repeat"]:
        if not before <= r["start"] < r["end"] <= len(data["boxes"]):
            raise TypeError(f"diagram repeat {r['label']!r} is outside the {len(data['boxes'])} boxes or overlaps "
                            f"the block before it")
        before = r["end"]


def _wrap(text: str, chars: int) -> list[str]:
    """Words into lines of at most `chars` characters (a longer word gets a line of its own)."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def describe_diagram(data: dict) -> str:
    """The text alternative: every box top to bottom, with its detail and side note, and the repeated block."""
    _check_diagram(data)
    parts = []
    starts, ends = {r["start"]: r for r in data["repeat"]}, {r["end"] - 1 for r in data["repeat"]}
    for i, b in enumerate(data["boxes"]):
        if i in starts:
            parts.append(f"Then, {starts[i]['label']}:")
        if b.get("join") in ("or", "and"):
            parts.append("Or:" if b["join"] == "or" else "In parallel with it:")
        text = b["label"] + (f" ({b['detail']})" if b["detail"] else "")
        parts.append(text + (f"; beside it: {b['side']}" if b["side"] else "") + ".")
        if i in ends:
            parts.append("End of the repeated block.")
    if data["summary"]:
        parts.append(data["summary"])
    return "From input to output: " + " ".join(parts)


def _render_diagram(data: dict, *, uid: str, title: str) -> str:
    """Boxes top to bottom with arrows, the repeated block framed, side notes to the right."""
    e = html.escape
    char = 0.56 * BOX_FONT
    has_side = any(b["side"] for b in data["boxes"])
    x0 = 30 if data["repeat"] else 8  # room for the repeat frame's label, written upwards on the left
    x1 = W - (116 if has_side else 8)
    sx0, sx1 = x1 + 16, W - 4
    inner = int((x1 - x0 - 12) / char)
    side_chars = int((sx1 - sx0 - 8) / char)
    y, gap = 10, 16
    shapes, text, spans = [], [], []
    starts, ends = {r["start"] for r in data["repeat"]}, {r["end"] - 1 for r in data["repeat"]}
    for i, b in enumerate(data["boxes"]):
        if i in starts:
            y += 8  # the frame's top margin
        bold = _wrap(b["label"], int(inner * 0.9)) or [""]  # bold text is about a tenth wider
        lines = bold + _wrap(b["detail"], inner)
        strip = b.get("strip") or []
        per_row = min(len(strip), STRIP_CELLS)
        strip_rows = -(-len(strip) // per_row) if strip else 0
        h = 10 + BOX_LINE * len(lines) + (strip_rows * STRIP_ROW + 4 if strip else 0)
        side = _wrap(b["side"], side_chars)
        side_h = 10 + BOX_LINE * len(side) if side else 0
        height = max(h, side_h)
        colour = _color(b["color"], i)
        shapes.append(f'<rect x="{x0}" y="{y}" width="{x1 - x0}" height="{h}" rx="4" fill="{colour}" fill-opacity="0.16" '
                      f'stroke="{colour}" stroke-width="1.5"/>')
        for n, line in enumerate(lines):
            weight = ' font-weight="700"' if n < len(bold) else ""
            text.append(f'<text x="{x0 + 6}" y="{y + 5 + BOX_LINE * (n + 1) - 3}"{weight}>{e(line)}</text>')
        if strip:  # one cell per item, in rows of STRIP_CELLS, under the text
            cell, top = (x1 - x0 - 12) / per_row, y + 5 + BOX_LINE * len(lines) + 2
            for n, c in enumerate(strip):
                shapes.append(f'<rect x="{x0 + 6 + cell * (n % per_row):.1f}" y="{top + STRIP_ROW * (n // per_row)}" '
                              f'width="{cell - 1:.1f}" height="{STRIP_ROW - 2}" fill="{_color(c, 0)}"/>')
        if side:
            shapes.append(f'<path d="M{x1} {y + h / 2:.1f}H{sx0}" stroke="currentColor" stroke-dasharray="3 2" fill="none"/>')
            shapes.append(f'<rect x="{sx0}" y="{y}" width="{sx1 - sx0}" height="{side_h}" rx="4" fill="none" '
                          f'stroke="currentColor" stroke-dasharray="4 2"/>')
            for n, line in enumerate(side):
                text.append(f'<text x="{sx0 + 4}" y="{y + 5 + BOX_LINE * (n + 1) - 3}">{e(line)}</text>')
        spans.append((y, y + height))
        box_bottom = y + h
        y += height
        if i in ends:
            y += 8
        join = data["boxes"][i + 1].get("join", "") if i < len(data["boxes"]) - 1 else None
        if join in ("or", "and"):  # an alternative, or a part beside this one: a word between them, no arrow
            text.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{y + gap + 1}" text-anchor="middle" '
                        f'font-style="italic">{e(JOINS[join])}</text>')
            y += gap + 4
        elif join == "none":
            y += gap
        elif join is not None:  # an arrow down to the next box
            mid = (x0 + x1) / 2
            shapes.append(f'<path d="M{mid:.1f} {box_bottom + 2}V{y + gap - 5}" stroke="currentColor" fill="none"/>'
                          f'<path d="M{mid - 4:.1f} {y + gap - 7}L{mid:.1f} {y + gap - 1}L{mid + 4:.1f} {y + gap - 7}Z" '
                          f'fill="currentColor"/>')
            y += gap
    for r in data["repeat"]:
        top, bottom = spans[r["start"]][0] - 6, spans[r["end"] - 1][1] + 6
        right = W - 2 if has_side else x1 + 4
        shapes.append(f'<rect x="{x0 - 8}" y="{top}" width="{right - x0 + 8}" height="{bottom - top}" rx="6" '
                      f'fill="none" stroke="{INK}" stroke-width="1.5" stroke-dasharray="6 3"/>')
        text.append(f'<text transform="translate({x0 - 13} {(top + bottom) / 2:.1f}) rotate(-90)" text-anchor="middle" '
                    f'font-weight="700">{e(r["label"])}</text>')
    h = y + 8
    out = [f'<svg class="c2-chart__svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="img" '
           f'aria-labelledby="{uid}-t" aria-describedby="{uid}-d" font-size="{BOX_FONT}">',
           f'<title id="{uid}-t">{e(title)}</title><desc id="{uid}-d">{e(describe_diagram(data))}</desc>',
           "".join(shapes), f'<g fill="currentColor">{"".join(text)}</g></svg>']
    return f'<figure class="c2-chart c2-chart--diagram" data-digest="{digest(data)}">{"".join(out)}</figure>'


# ------------------------------------------------------------------ canvases (ChartSpec kind "canvas")

CANVAS_KEYS = {"height", "shapes", "arrows", "labels", "keys", "summary"}
CANVAS_FONT, CANVAS_LINE = 12, 14  # text size and line height (user units): 11.6 px on a 375 px phone
LINES = ("", "solid", "dashed", "thick")


def shape(x, y, w, h, text: str = "", *, color: int | None = None, alpha: float = 1.0, line: str = "solid",
          bold: bool = False) -> dict:
    """A rectangle of a `canvas()`, in the drawing's units (W = 320 wide), its text centred in it ("\\n" breaks
    lines). color: a palette index filled at `alpha` (-1: INK; None: no fill); line: its outline, one of
    LINES ("" none, "thick" marks the thing that matters at this step)."""
    if line not in LINES:
        raise ValueError(f"line must be one of {LINES}, got {line!r}")
    a = finite_real("alpha", alpha, low=0, high=1)
    x, y, w, h = (finite_real(n, v) for n, v in (("x", x), ("y", y), ("w", w), ("h", h)))
    return {"x": _r(x), "y": _r(y), "w": _r(w), "h": _r(h), "text": str(text),
            "color": None if color is None else _palette_index("color", color), "alpha": _r(a), "line": line,
            "bold": bool(bold)}


def arrow(points, text: str = "", *, color: int | None = None, at: str = "first") -> dict:
    """A line through `points` [(x, y), ...] with an arrowhead at the last; its text beside the middle of its
    first segment (`at` "first") or of its last ("last"): right of a vertical one (left of it in the right
    half of the drawing), above a horizontal one. color: palette index, None or -1 the text colour."""
    pts = [[_r(x), _r(y)] for x, y in as_list("points", points, what="a list of (x, y)")]
    if len(pts) < 2:
        raise ValueError("an arrow needs at least two points")
    if at not in ("first", "last"):
        raise ValueError(f"at must be 'first' or 'last', got {at!r}")
    return {"points": pts, "text": str(text), "color": None if color is None else _palette_index("color", color),
            "at": at}


def label(x, y, text: str, *, anchor: str = "start", bold: bool = False) -> dict:
    """A line of text of a `canvas()`, its baseline at y; anchor 'start', 'middle' or 'end'."""
    if anchor not in ("start", "middle", "end"):
        raise ValueError(f"anchor must be 'start', 'middle' or 'end', got {anchor!r}")
    x, y = finite_real("x", x), finite_real("y", y)
    return {"x": _r(x), "y": _r(y), "text": str(text), "anchor": anchor, "bold": bool(bold)}


def canvas(height, shapes=(), arrows=(), labels=(), *, keys=(), summary: str = "") -> dict:
    """The value a calculator returns for a chart output of kind "canvas": a picture the caller lays out
    (`shape()` rectangles with text, `arrow()`s, `label()`s) in a drawing W = 320 units wide and `height`
    tall, so that it reads on a phone (12-unit text: 11.6 px at 375 px) and scales up on a desktop.

    keys: [(text, palette index)], the legend (what each colour means). summary: the text alternative,
    which must say everything the picture shows (a screen reader gets only it).
    """
    data = {"height": _r(finite_real("height", height, low=0, low_open=True)), "shapes": list(shapes),
            "arrows": list(arrows), "labels": list(labels),
            "keys": [{"label": str(t), "color": _palette_index("keys", c)} for t, c in keys], "summary": str(summary)}
    _check_canvas(data)
    return data


def _check_canvas(data) -> None:
    if not isinstance(data, dict) or set(data) != CANVAS_KEYS:
        raise TypeError(f"data must be a canvas built with chapter2.charts.canvas(), got {type(data).__name__}")
    if not data["summary"]:
        raise ValueError("a canvas needs its summary: the text alternative of the picture")
    h = data["height"]
    numbers = [h] + [v for s in data["shapes"] for v in (s["x"], s["y"], s["w"], s["h"])]
    numbers += [v for a in data["arrows"] for p in a["points"] for v in p] + [v for t in data["labels"] for v in (t["x"], t["y"])]
    if not all(math.isfinite(v) for v in numbers):
        raise ValueError("the canvas has a value that is not a finite number")
    slack = 0.5
    for s in data["shapes"]:
        if s["w"] <= 0 or s["h"] <= 0 or s["x"] < -slack or s["y"] < -slack or s["x"] + s["w"] > W + slack \
                or s["y"] + s["h"] > h + slack:
            raise ValueError(f"canvas shape {s['text']!r} is empty or outside the {W} x {h} drawing")
    for p in [p for a in data["arrows"] for p in a["points"]] + [[t["x"], t["y"]] for t in data["labels"]]:
        if not (-slack <= p[0] <= W + slack and -slack <= p[1] <= h + slack):
            raise ValueError(f"canvas point {p} is outside the {W} x {h} drawing")


def _render_canvas(data: dict, *, uid: str, title: str) -> str:
    e = html.escape
    h = data["height"]
    out = [f'<svg class="c2-chart__svg" viewBox="0 0 {W} {_f(h)}" width="{W}" height="{_f(h)}" role="img" '
           f'aria-labelledby="{uid}-t" aria-describedby="{uid}-d" font-size="{CANVAS_FONT}">',
           f'<title id="{uid}-t">{e(title)}</title><desc id="{uid}-d">{e(data["summary"])}</desc>']
    text, groups = [], {}  # shapes grouped by their look (fewer attributes: a stepper ships many drawings)
    for s in data["shapes"]:
        fill = "none" if s["color"] is None else _color(s["color"], 0)
        opacity = f' fill-opacity="{s["alpha"]:g}"' if s["color"] is not None and s["alpha"] < 1 else ""
        stroke = {"": "", "solid": ' stroke="currentColor" stroke-opacity="0.55"',
                  "dashed": ' stroke="currentColor" stroke-opacity="0.7" stroke-dasharray="4 3"',
                  "thick": ' stroke="currentColor" stroke-width="2.5"'}[s["line"]]
        groups.setdefault(f'<g fill="{fill}"{opacity}{stroke}>', []).append(
            f'<rect x="{_f(s["x"])}" y="{_f(s["y"])}" width="{_f(s["w"])}" height="{_f(s["h"])}"/>')
        lines = s["text"].split("\n") if s["text"] else []
        first = s["y"] + s["h"] / 2 - CANVAS_LINE * (len(lines) - 1) / 2 + 0.35 * CANVAS_FONT  # baseline of line 1
        weight = ' font-weight="700"' if s["bold"] else ""
        for i, line in enumerate(lines):
            text.append(f'<text x="{_f(s["x"] + s["w"] / 2)}" y="{_f(first + i * CANVAS_LINE)}"{weight}>{e(line)}</text>')
    out.extend(f'{g}{"".join(rects)}</g>' for g, rects in groups.items())
    text = [f'<g text-anchor="middle">{"".join(text)}</g>'] if text else []
    for a in data["arrows"]:
        color = "currentColor" if a["color"] is None or a["color"] < 0 else _color(a["color"], 0)
        pts = a["points"]
        (x1, y1), (x2, y2) = pts[-2], pts[-1]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        tip = [(x2, y2), (x2 - 7 * ux - 4 * uy, y2 - 7 * uy + 4 * ux), (x2 - 7 * ux + 4 * uy, y2 - 7 * uy - 4 * ux)]
        body = pts[:-1] + [[x2 - 6 * ux, y2 - 6 * uy]]
        out.append(f'<path d="M{" L".join(f"{_f(x)} {_f(y)}" for x, y in body)}" stroke="{color}" stroke-width="2" '
                   f'fill="none"/><path d="M{" L".join(f"{_f(x)} {_f(y)}" for x, y in tip)}Z" fill="{color}"/>')
        if a["text"]:
            (ax, ay), (bx, by) = pts[:2] if a["at"] == "first" else pts[-2:]
            mx, my = (ax + bx) / 2, (ay + by) / 2
            vertical = abs(bx - ax) < abs(by - ay)  # beside a vertical segment (on the side with room), else above
            x, y, anchor = ((mx + 6, my, "start") if mx < W / 2 else (mx - 6, my, "end")) if vertical else (mx, my - 5, "middle")
            text.append(f'<text class="c2-chart__note" x="{_f(x)}" y="{_f(y)}" dy="{"0.35em" if vertical else "0"}" '
                        f'text-anchor="{anchor}" stroke-width="3.5" stroke-linejoin="round" paint-order="stroke">'
                        f'{e(a["text"])}</text>')
    for t in data["labels"]:
        weight = ' font-weight="700"' if t["bold"] else ""
        text.append(f'<text x="{_f(t["x"])}" y="{_f(t["y"])}" text-anchor="{t["anchor"]}"{weight}>{e(t["text"])}</text>')
    out.append(f'<g fill="currentColor">{"".join(text)}</g></svg>')
    legend = "".join(f'<li>{_key("bars", _color(k["color"], i), False)}{e(k["label"])}</li>'
                     for i, k in enumerate(data["keys"]))
    legend = f'<ul class="c2-chart__legend">{legend}</ul>' if legend else ""
    return f'<figure class="c2-chart c2-chart--canvas" data-digest="{digest(data)}">{"".join(out)}{legend}</figure>'
