"""The calculator contract shared by the build and the browser.

A calculator is a plain Python function plus a description of its inputs and
outputs. The site renders its form from that description, fills in the
outputs for the default inputs at build time, and recomputes in the reader's
browser (Pyodide, in a Web Worker) by calling `compute_json` with the raw
strings of the form. Both sides run this same function, so a number tested in
CPython and a number shown on the page cannot drift apart.

Inputs arrive as strings from HTML form fields; `compute` parses and checks
them and raises `FieldError` (naming the field) on bad input, which the page
shows inline next to the calculator.
"""

from __future__ import annotations

import importlib
import json
import math
import pkgutil
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from .. import charts


class FieldError(ValueError):
    """Bad value for one input field of a calculator."""

    def __init__(self, field: str | None, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Field:
    """One input. kind: 'number' (a text box), 'range' (a slider), 'select' or 'text'.

    A 'text' field is free text, passed to the calculator as the raw string;
    its `max` is the longest allowed text in characters (2,000 if None).

    `stepper=True` (a 'range' field of whole numbers) makes it a stepper's step: the page puts a Back
    and a Forward button beside the slider (the slider itself steps with the arrow keys).
    `max_from` names another integer field whose value is this slider's top (a step number that
    cannot pass the number of steps); `max` stays the largest value accepted, and the calculator
    clamps the step to the other field itself, as the page does.
    """

    name: str
    label: str
    default: Any
    kind: str = "number"
    min: float | None = None
    max: float | None = None
    step: float | None = None
    integer: bool = False
    options: tuple = ()  # select: tuple of (value, label)
    help: str = ""
    stepper: bool = False
    max_from: str | None = None

    def parse(self, raw) -> Any:
        if self.kind == "select":
            values = [str(v) for v, _ in self.options]
            if str(raw) not in values:
                raise FieldError(self.name, f"{self.label}: choose one of {', '.join(values)}")
            return type(self.options[values.index(str(raw))][0])(raw)
        if self.kind == "text":
            text, limit = str(raw), int(self.max if self.max is not None else 2000)
            if len(text) > limit:
                raise FieldError(self.name, f"{self.label}: at most {limit:,} characters, got {len(text):,}")
            return text
        text = str(raw).strip()
        if text == "":
            raise FieldError(self.name, f"{self.label}: enter a number")
        try:
            value = float(text.replace("_", "").replace(",", ""))
        except ValueError:
            raise FieldError(self.name, f"{self.label}: {text!r} is not a number") from None
        if not math.isfinite(value):
            raise FieldError(self.name, f"{self.label}: must be a finite number, got {text}")
        if self.min is not None and value < self.min:
            raise FieldError(self.name, f"{self.label}: must be at least {_num(self.min)}, got {_num(value)}")
        if self.max is not None and value > self.max:
            raise FieldError(self.name, f"{self.label}: must be at most {_num(self.max)}, got {_num(value)}")
        if self.integer:
            if not value.is_integer():
                raise FieldError(self.name, f"{self.label}: must be a whole number, got {_num(value)}")
            return int(value)
        return value


@dataclass(frozen=True)
class Output:
    """One result. kind: 'text' (a formatted string), 'bars' (list of [label, value]) or 'chart'.

    A 'chart' output carries its `chart` (a `charts.ChartSpec`: axis labels, log
    axes); the calculator returns `charts.chart(...)` data for it, which the page
    draws as SVG with `charts.render` (at build time and, through `compute_json`,
    in the browser).

    `free_text=True` marks a text output that echoes words (a prompt, generated
    text, tokens): it is exempt from the "never show NaN or inf" check, which
    would otherwise refuse a reader's prompt that contains the word "inf".
    """

    key: str
    label: str
    kind: str = "text"
    free_text: bool = False
    chart: charts.ChartSpec | None = None

    def __post_init__(self):
        if (self.kind == "chart") != (self.chart is not None):
            raise ValueError(f"output {self.key!r}: kind='chart' goes with a chart=ChartSpec(...), and only it")


@dataclass(frozen=True)
class Action:
    """A button in a calculator's form, run only when the reader presses it (never on page load).

    `call` names a function, "module:function", that takes no argument and
    returns {field name: value}; the browser runs it in Python and puts the
    values into those fields, which recomputes the calculator. The calculator
    itself stays a pure function of its fields (what the tests compare).
    """

    label: str
    call: str
    busy: str = "Running…"


@dataclass(frozen=True)
class Calculator:
    name: str
    title: str
    fields: tuple[Field, ...]
    outputs: tuple[Output, ...]
    fn: Callable[..., dict]
    doc: str = ""
    action: Action | None = None

    def defaults(self) -> dict[str, str]:
        return {f.name: str(f.default) for f in self.fields}


REGISTRY: dict[str, Calculator] = {}


def calculator(name: str, *, title: str, fields, outputs, action: Action | None = None) -> Callable:
    """Register `fn(**parsed_inputs) -> {output_key: value}` as calculator `name`."""

    def register(fn):
        if name in REGISTRY:
            raise ValueError(f"calculator {name!r} is registered twice")
        _check_steppers(name, fields)
        REGISTRY[name] = Calculator(name, title, tuple(fields), tuple(outputs), fn, (fn.__doc__ or "").strip(), action)
        return fn

    return register


def _check_steppers(name: str, fields) -> None:
    by_name = {f.name: f for f in fields}
    for f in fields:
        if (f.stepper or f.max_from) and not (f.kind == "range" and f.integer and None not in (f.min, f.max)):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: a step (stepper, max_from) is a range of "
                             f"whole numbers with a min and a max")
        other = by_name.get(f.max_from) if f.max_from else None
        if f.max_from and (other is None or not other.integer or other is f):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: max_from must name another integer field")
        if other is not None and not (f.min <= other.default <= f.max and f.default <= other.default):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: its default must be within 0 .. {other.name}")


def load_all() -> dict[str, Calculator]:
    """Import every public module of chapter2.calculators (importing one registers its calculators); REGISTRY."""
    package = importlib.import_module(__package__)
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__package__}.{module.name}")
    return REGISTRY


def get(name: str) -> Calculator:
    """Calculator `name`; when its module is not imported yet, every calculator module is (`load_all`)."""
    if name not in REGISTRY:
        load_all()
    if name not in REGISTRY:
        raise KeyError(f"unknown calculator {name!r}; known: {', '.join(sorted(REGISTRY))}")
    return REGISTRY[name]


def compute(name: str, raw: dict | None = None) -> dict:
    """Parse `raw` (defaults for missing fields), run the calculator, check its outputs."""
    calc = get(name)
    raw = {**calc.defaults(), **(raw or {})}
    args = {f.name: f.parse(raw[f.name]) for f in calc.fields}
    try:
        result = calc.fn(**args)
    except FieldError:
        raise
    except (ValueError, TypeError) as err:
        raise FieldError(None, str(err)) from err
    missing = [o.key for o in calc.outputs if o.key not in result]
    if missing:
        raise RuntimeError(f"calculator {name!r} did not produce {missing}")
    for o in calc.outputs:
        _check_output(name, o, result[o.key])
    return {o.key: result[o.key] for o in calc.outputs}


def compute_json(name: str, raw_json: str) -> str:
    """The browser's entry point: JSON in, JSON out, errors as data. Chart and bar outputs come drawn
    (`render_chart`, `charts.render_bars`)."""
    try:
        outputs = compute(name, json.loads(raw_json))
    except FieldError as err:
        return json.dumps({"ok": False, "field": err.field, "message": str(err)})
    for o in get(name).outputs:
        if o.kind == "chart":
            outputs[o.key] = render_chart(name, o, outputs[o.key])
        elif o.kind == "bars":  # drawn here too, by the one bar renderer the build uses
            outputs[o.key] = charts.render_bars(outputs[o.key])
    return json.dumps({"ok": True, "outputs": outputs})


def render_chart(name: str, output: Output, data: dict) -> str:
    """A chart output as the page shows it (the build and the browser both call this)."""
    return charts.render(output.chart, data, uid=f"c2-chart-{name}-{output.key}", title=output.label)


def _check_output(name, output, value):
    """Never show NaN or Infinity as a result."""
    if output.kind == "text":
        if not isinstance(value, str):
            raise RuntimeError(f"calculator {name!r}: output {output.key!r} must be a string")
        words = set(value.lower().replace("/", " ").split())
        if not output.free_text and words & {"nan", "inf", "-inf", "infinity", "-infinity"}:
            raise FieldError(None, f"{output.label}: the result is not a finite number for these inputs")
    elif output.kind == "bars":
        for _label, v in value:
            if not math.isfinite(v):
                raise FieldError(None, f"{output.label}: the result is not finite for these inputs")
    elif output.kind == "chart":
        try:
            charts.check(output.chart, value)
        except ValueError as err:
            raise FieldError(None, f"{output.label}: {err} for these inputs") from None


def _num(x: float) -> str:
    return f"{x:g}"
