"""Compare two choices side by side: one calculator, run for A and for B, and the ratio of each number.

A calculator registered with `compare={field: B's default, ...}` (`_registry.calculator`) has, after its own
fields, a toggle `compare` and a B copy of each field it names (`gpu` -> `gpu_b`, labelled "B: GPU"), plus the
fields tied to one (a select's pasted config.json, fields shown only for one of its values: a custom GPU's
numbers), each shown only while the toggle is on. A is the form as it is; B is the same inputs with B's fields
in place of A's. The calculator's function runs twice, and returns each time, beside its outputs, the list of
quantities to compare (`COMPARED`: (label, `chapter2.format` value) pairs, the numbers as its outputs write them).

`compare(name, raw)` gives both results and a table: one row per input that differs between A and B, then
one per quantity: A's text, B's text, and B / A. One rule for every ratio (`ratio_text`): B's exact value over
A's, with 3 significant digits and a "×" (0.5×, 1.02×, 12.3×), as the site writes every ratio; no ratio for
words, and none when A is 0. `compare_answer` is what the browser's worker sends back (one request gives both),
`render` the table and both choices' drawings as HTML: the build (`docs/hooks/directives.py`, for the default
comparison) and the browser call the same function.
"""

from __future__ import annotations

import dataclasses
import html
import math

from .. import charts
from ..format import Shown, Text, Times, sig
from ._registry import COMPARE, COMPARED, PASTED, Field, FieldError, drawn, error_json, evaluate, get

SUFFIX = "_b"
TOGGLE = Field(COMPARE, "Compare two choices", "off", kind="select", options=(("off", "Off"), ("on", "On: A beside B")),
               help="A: the inputs above; B: those marked B. A table of A, B and B / A follows the results")


def compare_fields(name: str, fields, compare: dict) -> tuple[list[Field], dict[str, str]]:
    """The toggle and B's fields of calculator `name` ({field: B's default} in `compare`), and {A's field: B's}.

    Each named field brings along the fields tied to it: the text field its select's `paste` names, and every
    field shown only for one of its values (`show_when`), transitively. A B field is shown while the toggle is
    on, or, if A's copy hangs on another field, while B's copy of that field shows what A's needs."""
    by_name = {f.name: f for f in fields}
    unknown = [k for k in compare if k not in by_name]
    if unknown:
        raise ValueError(f"calculator {name!r}: compare names no field {unknown}")
    if COMPARE in by_name or any(f.name.endswith(SUFFIX) for f in fields):
        raise ValueError(f"calculator {name!r}: with compare, no field of its own may be called {COMPARE!r} or end "
                         f"in {SUFFIX!r}")
    group = set(compare)
    while True:
        tied = {f.name for f in fields if f.show_when and f.show_when[0] in group}
        tied |= {by_name[g].paste for g in group if by_name[g].paste}
        if tied <= group:
            break
        group |= tied
    extra, pairs = [TOGGLE], {}
    for f in fields:  # in form order
        if f.name not in group:
            continue
        if f.stepper or f.max_from:
            raise ValueError(f"calculator {name!r}: field {f.name!r}: a stepper's step cannot be compared")
        default = compare.get(f.name, f.default)
        b = dataclasses.replace(
            f, name=f.name + SUFFIX, label=f"B: {f.label}", default=default, help="",
            show_when=(f.show_when[0] + SUFFIX, f.show_when[1]) if f.show_when else (COMPARE, "on"),
            paste=f.paste + SUFFIX if f.paste else None)
        try:
            b.parse(default)
        except FieldError as err:
            raise ValueError(f"calculator {name!r}: B's default for {f.name!r}: {err}") from None
        extra.append(b)
        pairs[f.name] = b.name
    return extra, pairs


# ------------------------------------------------------------------ the comparison
@dataclasses.dataclass(frozen=True)
class Comparison:
    """Both results of one comparison. `rows` are (label, A's text, B's text, B / A) for the table: the inputs
    that differ first (no ratio), then the compared quantities; `a` and `b` are the two outputs, as `compute`;
    `inputs_a`, `inputs_b` the parsed inputs each side ran on, `numbers_a`, `numbers_b` each side's numbers."""

    rows: tuple[tuple[str, str, str, str], ...]
    inputs: int  # how many of the rows are inputs
    a: dict
    b: dict
    inputs_a: dict
    inputs_b: dict
    numbers_a: dict
    numbers_b: dict


def ratio_text(a: Shown, b: Shown) -> str:
    """B / A as the table writes it: `Times` of B's exact value over A's (3 significant digits: "0.5×",
    "1.02×"), "" for words (a `Text`), "—" when A is 0 (no ratio)."""
    if isinstance(a, Text) or isinstance(b, Text):
        return ""
    if a.value == 0:
        return "—"
    return str(Times(b.value / a.value, 3))


def side_b(calc, raw: dict) -> dict:
    """The raw inputs of B: A's, with each compared field (and those tied to it) taken from its B copy."""
    return {**raw, **{a: raw[b] for a, b in calc.compare.items()}}


def _as_b(calc, err: FieldError) -> FieldError:
    """An error of B's run, told as B's: on B's field when it is one of them, and said to be B's."""
    field = calc.compare.get(err.field, err.field) if err.field else None
    return FieldError(field, f"B: {err}", err.link)


MODEL_ID = "model_id"  # a model picker's Hub id (_hub.py): a pasted config wins over it, and it over the select


def _shown(calc, field: Field, raw: dict) -> str:
    """An input as the form shows it: a select's option, a number as typed; a model picker's select (one with a
    `paste` field) says which model the results are about: a pasted config, else a model id, else its option."""
    value = str(raw[field.name])
    if field.kind == "select":
        if field.paste and (value == PASTED or str(raw.get(field.paste, "")).strip()):
            return "pasted config.json"
        if field.paste and str(raw.get(MODEL_ID, "")).strip():
            return str(raw[MODEL_ID]).strip()
        return str(dict((str(v), label) for v, label in field.options).get(value, value))
    if field.kind == "text":  # a model id as typed; a pasted config.json by its length
        if not value.strip():
            return "none"
        return value.strip() if len(value) <= 100 and "\n" not in value else f"pasted ({len(value):,} characters)"
    parsed = field.parse(value)
    return f"{parsed:,}" if isinstance(parsed, int) else sig(parsed, 6)


def _quantities(name: str, result: dict, side: str) -> list[tuple[str, Shown]]:
    items = result[COMPARED]  # (evaluate's answer)
    if not isinstance(items, list) or not all(
            isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], Shown) for x in items):
        raise RuntimeError(f"calculator {name!r}: {COMPARED} must be a list of (label, chapter2.format value), "
                           f"got {items!r} for {side}")
    for label, value in items:
        if not isinstance(value, Text) and not math.isfinite(float(value.value)):
            raise FieldError(None, f"{label}: the result is not a finite number for {side}'s inputs")
    return items


def compare(name: str, raw: dict | None = None) -> Comparison:
    """Calculator `name` for A (the raw inputs) and for B (A's, with B's fields in place), and the table.

    A bad input of A's is a FieldError on A's field, as `compute` says it; one of B's is said to be B's
    ("B: GPU: choose one of ...") on B's field (`gpu_b`), or on the shared field it came from."""
    calc = get(name)
    if not calc.compare:
        raise ValueError(f"calculator {name!r} compares nothing (it was registered without compare=)")
    raw = {**calc.defaults(), **(raw or {})}
    raw[COMPARE] = "on"
    a = evaluate(name, raw)
    raw_b = side_b(calc, raw)
    try:
        b = evaluate(name, raw_b)
        qa, qb = _quantities(name, a, "A"), _quantities(name, b, "B")
    except FieldError as err:
        raise _as_b(calc, err) from None
    if [label for label, _ in qa] != [label for label, _ in qb]:
        raise RuntimeError(f"calculator {name!r}: A and B compared different quantities: {qa} against {qb}")
    rows = []
    by_name = {f.name: f for f in calc.fields}
    pickers = [f for f in calc.fields if f.paste]  # a model select says what its pasted config or id hold
    told = {f.paste for f in pickers} | ({MODEL_ID} if pickers else set())
    for a_name in calc.compare:
        field = by_name[a_name]
        if a_name in told or not (calc.applies(field, raw) or calc.applies(field, raw_b)):
            continue
        shown_a, shown_b = _shown(calc, field, raw), _shown(calc, field, raw_b)
        if shown_a != shown_b:
            rows.append((field.label, shown_a, shown_b, ""))
    inputs = len(rows)
    rows += [(label, str(x), str(y), ratio_text(x, y)) for (label, x), (_, y) in zip(qa, qb, strict=True)]
    return Comparison(tuple(rows), inputs, a["outputs"], b["outputs"], a["inputs"], b["inputs"], a["numbers"],
                      b["numbers"])


def compare_answer(name: str, raw: dict) -> dict:
    """What the browser's worker sends back with the toggle on: A's outputs drawn, its inputs and numbers (as
    `compute_json`), and the comparison, {"rows": [[label, A, B, B / A], ...], "html": `render`, and B's
    "inputs" and "numbers"};
    or A's or B's error."""
    try:
        result = compare(name, raw)
    except FieldError as err:
        return error_json(err)
    return {"ok": True, "outputs": drawn(name, result.a), "inputs": result.inputs_a, "numbers": result.numbers_a,
            "compare": {"rows": [list(r) for r in result.rows], "html": render(name, result),
                        "inputs": result.inputs_b, "numbers": result.numbers_b}}


# ------------------------------------------------------------------ as the page shows it
def render(name: str, result: Comparison, *, drawings: bool = True) -> str:
    """The comparison as HTML: a table of the rows (A, B, B / A), then each drawn output (a chart, bars) of A
    and of B, each said to be A's or B's, a chart's two drawings on the same axes (`charts.shared`). Escaped text
    and drawings by chapter2.charts only.

    `drawings=False` (the build's default comparison, carried by the page: the drawings would weigh 3 to 11 kB
    a calculator) puts in their place a line saying they follow from the browser's own computation."""
    e = html.escape
    calc = get(name)
    head = ('<thead><tr><td></td><th scope="col">A</th>'
            '<th scope="col">B</th><th scope="col">B / A</th></tr></thead>')
    body = []
    for i, (label, a, b, ratio) in enumerate(result.rows):
        kind = " class=\"c2-compare__input\"" if i < result.inputs else ""
        body.append(f'<tr{kind}><th scope="row">{e(label)}</th><td>{e(a)}</td><td>{e(b)}</td>'
                    f'<td class="c2-compare__ratio">{e(ratio)}</td></tr>')
    if not result.inputs:
        body.insert(0, '<tr class="c2-compare__input"><td colspan="4">A and B are the same choice: change one of '
                       "B's inputs.</td></tr>")
    table = (f'<table class="c2-compare__table"><caption>A beside B; B / A is B\'s number divided by A\'s'
             f'</caption>{head}<tbody>{"".join(body)}</tbody></table>')
    pictures = []
    drawn_outputs = [o for o in calc.outputs if o.kind in ("chart", "bars") and not o.details]
    if drawn_outputs and not drawings:
        return table + ('<p class="c2-compare__what" data-compare-later>A\'s and B\'s drawings follow once your '
                        "browser has computed them.</p>")
    for o in drawn_outputs:
        spec = charts.shared(o.chart, [result.a[o.key], result.b[o.key]]) if o.kind == "chart" else None
        for side, outputs in (("A", result.a), ("B", result.b)):
            drawing = (charts.render(spec, outputs[o.key], uid=f"c2-chart-{name}-{o.key}-{side.lower()}", title=o.label)
                       if spec else charts.render_bars(outputs[o.key], shares=o.shares))
            pictures.append(f'<div class="c2-compare__picture"><p class="c2-compare__what">{side}: {e(o.label)}</p>'
                            f'{drawing}</div>')
    shown = f'<div class="c2-compare__pictures">{"".join(pictures)}</div>' if pictures else ""
    return table + shown
