"""A heatmap whose rows a reader can hover or tap: the chart kind "heatmap" of `chapter2.charts`.

Rows are things (a prompt's tokens), columns what each row is spread over (the tokens it attends to,
the numbers of its vector), and each cell's strength is drawn as the opacity of one colour (weights
from 0 to 1) or of two (signed values from -1 to 1: blue positive, orange negative). Every row
carries a one-line `detail` (what this token attends to, with the numbers); pointing at a row, or
tapping it on a phone, or moving to it with Tab, outlines it and shows its detail under the grid.
One row, `focus`, is outlined and detailed while no other is chosen.

That behaviour is CSS alone (`docs/assets/chapter2/chapter2.css`, `.c2-hm`): each row is an SVG
group with tabindex 0, so a tap focuses it, and `:hover` / `:focus` reveal its detail. Nothing has
to be rebound after the browser redraws the chart. `docs/assets/chapter2/heatmap.js` only focuses
a tapped row on browsers that do not focus an SVG element on a tap.

Like the rest of `chapter2.charts`: standard library only, the same renderer at build time and in the
browser (Pyodide), colours from the palette as SVG attributes, text in currentColor, no inline style.
Cells of equal strength in a row are one path (a prebuilt stepper carries many of these drawings).
"""

from __future__ import annotations

import html
import math

from ._checks import as_list
from .charts import INK, PALETTE, ChartSpec, digest
from .format import counted

__all__ = ["heatmap", "check_heatmap", "describe_heatmap", "render_heatmap", "LEVELS", "MAX_LABEL"]

W, RIGHT, TOP = 320, 8, 8  # viewBox width (charts.W) and margins, user units
FONT, CELL_H = 12, 18  # label font and row height: 12 units are 11.6 px on a 375 px phone
CHAR = 0.6 * FONT  # a character's width, about
LEVELS = 20  # weights are drawn in steps of 1/20 (the detail text carries the exact numbers) ...
SIGNED_LEVELS = 5  # ... signed values in 5 shades a side (a vector's pattern, not its digits)
MAX_LABEL = 10  # characters of a row or column label written (longer ones are cut, '…' marking it)
DETAIL_CHARS = 40  # a detail line's characters: 40 x 7.6 (bold) = 304 units, inside the 320-unit drawing
DETAIL_LINES = 3
BASELINE = round(0.35 * FONT, 1)  # from a text's middle to its baseline (a y without dy: a smaller drawing)
HEATMAP_KEYS = {"rows", "cols", "cells", "signed", "texts", "details", "focus", "marks", "keys", "summary", "x_label",
                "y_label"}
POSITIVE, NEGATIVE = 0, 1  # palette indices (charts.PALETTE): blue, orange


def heatmap(rows, cols, cells, *, details, focus: int, signed: bool = False, texts=None, marks=(),
            keys=("weight",), summary: str = "", x_label: str = "", y_label: str = "") -> dict:
    """The value a calculator returns for a chart output of kind "heatmap".

    rows, cols: labels. cells: one list per row, one entry per column: None (an empty cell, e.g. a
    future token the causal mask hides), or a number, from 0 to 1 (`signed` False) or -1 to 1 (True).
    details: one line per row, shown when that row is chosen. focus: the row chosen by default.
    texts: None, or one list per row of cell texts (None for no text), drawn in the cell.
    marks: rows drawn with a bold label (a token just appended). keys: the legend's words, one per
    colour (two when signed: positive, negative). summary: a sentence ending the text alternative.
    x_label, y_label: what the columns and the rows are, for this drawing (empty: the ChartSpec's), so
    that one chart output can show different things step by step.
    """
    rows = [str(r) for r in as_list("rows", rows, what="a list of row labels")]
    cols = [str(c) for c in as_list("cols", cols, what="a list of column labels")]
    cells = [[None if c is None else round(float(c), 6) for c in row]
             for row in as_list("cells", cells, what="a list of rows of cells")]
    texts = None if texts is None else [[None if t is None else str(t) for t in row] for row in texts]
    details = [str(d) for d in as_list("details", details, what="a list of row details")]
    data = {"rows": rows, "cols": cols, "cells": cells, "signed": bool(signed), "texts": texts, "details": details,
            "focus": int(focus), "marks": sorted({int(m) for m in marks}), "keys": [str(k) for k in keys],
            "summary": str(summary), "x_label": str(x_label), "y_label": str(y_label)}
    check_heatmap(data)
    return data


def check_heatmap(data) -> None:
    """Raise TypeError for a malformed heatmap, ValueError for a cell that is not a finite number in range."""
    if not isinstance(data, dict) or set(data) != HEATMAP_KEYS:
        raise TypeError(f"data must be a heatmap built with chapter2.heatmap.heatmap(), got {type(data).__name__}")
    rows, cols, cells, texts = data["rows"], data["cols"], data["cells"], data["texts"]
    if not rows or not cols or len(cells) != len(rows) or any(len(row) != len(cols) for row in cells):
        raise TypeError(f"a heatmap needs rows and columns and one cell per row and column ({len(rows)} x {len(cols)})")
    if texts is not None and (len(texts) != len(rows) or any(len(row) != len(cols) for row in texts)):
        raise TypeError("a heatmap's texts must have one entry per cell")
    if len(data["details"]) != len(rows):
        raise TypeError(f"a heatmap needs one detail per row, got {len(data['details'])} for {len(rows)} rows")
    if not 0 <= data["focus"] < len(rows) or not all(0 <= m < len(rows) for m in data["marks"]):
        raise TypeError("a heatmap's focus and marks must be rows of it")
    if len(data["keys"]) != (2 if data["signed"] else 1):
        raise TypeError("a heatmap's keys name its colours: one, or two when signed (positive, negative)")
    low = -1.0 if data["signed"] else 0.0
    for row in cells:
        for c in row:
            if c is not None and not (math.isfinite(c) and low <= c <= 1.0):
                raise ValueError(f"a heatmap cell must be a number from {low:g} to 1, got {c!r}")


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(chars - 1, 0)] + "…"


def _wrap(text: str, chars: int, lines: int) -> list[str]:
    """Words into at most `lines` lines of `chars` characters (the last cut with '…' if needed)."""
    out, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > chars:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    out.append(line)
    if len(out) > lines:
        out = out[: lines - 1] + [_cut(" ".join(out[lines - 1:]), chars)]
    return [_cut(x, chars) for x in out]


def _axis_labels(spec, data: dict) -> tuple[str, str]:
    """(x label, y label) of this drawing: the data's, else the ChartSpec's."""
    if not isinstance(spec, ChartSpec):
        raise TypeError(f"spec must be a chapter2.charts.ChartSpec, got {type(spec).__name__}")
    return data["x_label"] or spec.x_label, data["y_label"] or spec.y_label


def describe_heatmap(spec, data: dict) -> str:
    """The text alternative: what rows and columns are, the chosen row's detail, the summary (each row's
    detail is that row's own label, read when it is focused)."""
    check_heatmap(data)
    x_label, y_label = _axis_labels(spec, data)
    parts = [f"Heatmap of {counted(len(data['rows']), 'row')} ({y_label}) by {counted(len(data['cols']), 'column')} "
             f"({x_label}).",
             data["details"][data["focus"]].rstrip(".") + "."]
    if data["summary"]:
        parts.append(data["summary"])
    return " ".join(parts)


def _f(v: float) -> str:
    return f"{v:.1f}".removesuffix(".0")


def _opacity(level: int, levels: int) -> str:
    return "" if level == levels else f' stroke-opacity="{level / levels:.3g}"'


def _swatch(colour: str) -> str:
    """A legend key: a filled block (a colour) or, with no colour, an outline (the chosen row)."""
    shape = (f'<rect x="3" y="1" width="12" height="8" fill="{colour}"/>' if colour else
             '<rect x="4" y="1" width="10" height="8" fill="none" stroke="currentColor" stroke-width="2"/>')
    return f'<svg class="c2-chart__key" viewBox="0 0 18 10" width="18" height="10" aria-hidden="true">{shape}</svg>'


def render_heatmap(spec, data: dict, *, uid: str, title: str) -> str:
    """The heatmap as an HTML fragment: <figure> with the SVG and a legend (see the module docstring)."""
    check_heatmap(data)
    x_label, y_label = _axis_labels(spec, data)
    e = html.escape
    rows, cols, cells, texts = data["rows"], data["cols"], data["cells"], data["texts"]
    labels = [_cut(r, MAX_LABEL) for r in rows]
    left = 22 + round(CHAR * max(len(x) for x in labels))  # the axis name, then the row labels
    cw = (W - RIGHT - left) / len(cols)
    col_labels = [_cut(c, MAX_LABEL) for c in cols]
    longest = max(len(c) for c in col_labels)
    level = CHAR * longest + 3 <= cw  # every label fits under its column, level
    every = 1 if level or cw >= FONT + 1 else math.ceil((FONT + 1) / cw)  # upright labels: one per text height
    if not level and all(c.isdigit() for c in cols):  # numbers (a vector's positions): level, every k-th
        level, every = True, max(1, math.ceil((CHAR * longest + 4) / cw))
    top, bottom = TOP, TOP + len(rows) * CELL_H
    label_h = FONT + 6 if level else CHAR * longest + 8
    detail_y = bottom + label_h + FONT + 24  # the x axis name, a gap, then the detail lines
    h = round(detail_y + DETAIL_LINES * (FONT + 4) + 2)
    x_of = [left + j * cw for j in range(len(cols) + 1)]

    out = [f'<svg class="c2-chart__svg c2-hm__svg" viewBox="0 0 {W} {h}" width="{W}" height="{h}" role="group" '
           f'aria-labelledby="{uid}-t" aria-describedby="{uid}-d" font-size="{FONT}" fill="currentColor">',
           f'<title id="{uid}-t">{e(title)}</title><desc id="{uid}-d">{e(describe_heatmap(spec, data))}</desc>']
    # column labels under the grid (level, or upright reading upwards), the axis names
    text = []
    if level:
        for j in range(0, len(cols), every):
            text.append(f'<text x="{_f(x_of[j] + cw / 2)}" y="{_f(bottom + FONT + 2)}">{e(col_labels[j])}</text>')
    else:
        for j in range(0, len(cols), every):
            text.append(f'<text transform="translate({_f(x_of[j] + cw / 2 + BASELINE)} {bottom + 4}) rotate(-90)" '
                        f'text-anchor="end">{e(col_labels[j])}</text>')
    text.append(f'<text x="{_f((left + W - RIGHT) / 2)}" y="{_f(bottom + label_h + FONT)}">{e(x_label)}</text>')
    text.append(f'<text transform="translate({10 + BASELINE} {_f((top + bottom) / 2)}) rotate(-90)">{e(y_label)}</text>')
    out.append(f'<g text-anchor="middle">{"".join(text)}</g>')
    out.append(f'<path d="M{left} {top}H{W - RIGHT}V{bottom}H{left}Z" stroke="{INK}" fill="none"/>')
    # the empty cells (the future, under the causal mask), lightly shaded, under everything
    empty = [f"M{_f(x_of[j])} {top + (i + 0.5) * CELL_H:g}h{_f(cw)}" for i, row in enumerate(cells)
             for j, c in enumerate(row) if c is None]
    if empty:
        out.append(f'<path d="{"".join(empty)}" stroke="{INK}" stroke-opacity="0.12" stroke-width="{CELL_H}"/>')
    levels = SIGNED_LEVELS if data["signed"] else LEVELS
    # rows: a focusable group each, with its cells (strokes one cell high), label, outline and detail
    for i, row in enumerate(cells):
        y, mid = top + i * CELL_H, top + (i + 0.5) * CELL_H
        strokes: dict[tuple[int, int], list[str]] = {}
        for j, c in enumerate(row):
            if c is None or c == 0:
                continue
            level_i = max(1, round(abs(c) * levels))  # a small nonzero value stays visible
            colour = NEGATIVE if data["signed"] and c < 0 else POSITIVE
            strokes.setdefault((colour, level_i), []).append(f"M{_f(x_of[j] + 0.5)} {mid:g}h{_f(cw - 1)}")
        shapes = "".join(f'<path d="{"".join(d)}" stroke="{PALETTE[colour]}"{_opacity(lv, levels)}/>'
                         for (colour, lv), d in sorted(strokes.items()))
        if texts is not None:
            shapes += "".join(f'<text x="{_f(x_of[j] + cw / 2)}" y="{_f(mid + BASELINE)}" text-anchor="middle">{e(t)}</text>'
                              for j, t in enumerate(texts[i]) if t)
        bold = ' font-weight="700"' if i in data["marks"] else ""
        label = f'<text x="{left - 4}" y="{_f(mid + BASELINE)}"{bold}>{e(labels[i])}</text>'
        band = f'<rect class="c2-hm__band" x="1" y="{y}" width="{W - RIGHT - 1}" height="{CELL_H}" fill="none"/>'
        lines = _wrap(data["details"][i], DETAIL_CHARS, DETAIL_LINES)
        detail = "".join(f'<text x="2" y="{_f(detail_y + k * (FONT + 4))}">{e(line)}</text>' for k, line in enumerate(lines))
        cls = "c2-hm__row c2-hm__row--focus" if i == data["focus"] else "c2-hm__row"
        out.append(f'<g class="{cls}" tabindex="0" role="img" aria-label="{e(data["details"][i])}" text-anchor="end" '
                   f'stroke-width="{CELL_H - 1}">{shapes}{label}{band}'
                   f'<g class="c2-hm__detail" text-anchor="start" font-weight="600" aria-hidden="true">{detail}</g></g>')
    out.append("</svg>")
    swatches = [(data["keys"][0], PALETTE[POSITIVE])] + ([(data["keys"][1], PALETTE[NEGATIVE])] if data["signed"] else [])
    legend = "".join(f"<li>{_swatch(colour)}{e(label)}</li>" for label, colour in swatches)
    legend += f"<li>{_swatch('')}the chosen row: tap or point at another</li>"
    return (f'<figure class="c2-chart c2-hm" data-digest="{digest(data)}">{"".join(out)}'
            f'<ul class="c2-chart__legend">{legend}</ul></figure>')
