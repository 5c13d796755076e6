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
import re
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from .. import charts
from ..format import sig


class FieldError(ValueError):
    """Bad value for one input field of a calculator. `link`, when given, is (text, path from the site's root) of
    the page that says more (the families a pasted config.json may be of); the page puts it after the message."""

    def __init__(self, field: str | None, message: str, link: tuple[str, str] | None = None):
        super().__init__(message)
        self.field = field
        self.link = link


PASTED = "pasted"
"""The value a model select (`Field.paste`) holds while a config.json is pasted beside it."""


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

    `show_when=(field, value)`: the field applies only while select `field` holds `value` (a custom GPU's
    two numbers, while the GPU is "custom"). The page renders it `hidden` otherwise (the build, for the
    defaults; the runtime, on every change), and `compute` neither checks nor uses what it holds then: the
    calculator gets its default.

    `unit`: what a number field counts ("tokens", "TFLOP/s"), named beside it where its value is exported
    (`column`: "context (tokens)").

    `paste` (a select of models): the name of the text field a config.json is pasted into. The select then
    also takes the value "pasted", which the page shows as "pasted: <name>" while the text holds a config,
    so that the select never names a model the results are not about.
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
    show_when: tuple[str, str] | None = None
    paste: str | None = None
    unit: str = ""

    @property
    def column(self) -> str:
        """The field's name with its unit, as an export names it: "context (tokens)", "model", "steps"."""
        return f"{self.name} ({self.unit})" if self.unit and self.unit != self.name else self.name

    def applies(self, raw: dict) -> bool:
        """Whether the field is in use for these raw inputs (see `show_when`)."""
        return self.show_when is None or str(raw.get(self.show_when[0])) == str(self.show_when[1])

    def parse(self, raw) -> Any:
        if self.kind == "select":
            values = [str(v) for v, _ in self.options] + ([PASTED] if self.paste else [])
            if self.paste and str(raw) == PASTED:
                return PASTED
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


OUTPUT_KINDS = ("text", "bars", "chart", "caption")
CAPTION_CHARS = 160  # a caption's longest line: two lines of a desktop's calculator box, three on a phone


@dataclass(frozen=True)
class Output:
    """One result. kind: 'text' (a formatted string), 'bars' (list of [label, value]), 'chart' or 'caption'.

    A 'chart' output carries its `chart` (a `charts.ChartSpec`: axis labels, log
    axes); the calculator returns `charts.chart(...)` data for it, which the page
    draws as SVG with `charts.render` (at build time and, through `compute_json`,
    in the browser).

    A 'caption' output is a stepper's one line (at most CAPTION_CHARS characters) that says what this
    step shows, in words ("Decode step 3: one token goes in, the cache grows by one column"). The
    page writes it above the figures, in a live region, so a screen reader hears each step as it is
    drawn. Every calculator with a stepper field has exactly one, and only such a calculator.

    `shares=True` (a 'bars' output of the parts of one whole) draws the bars on a linear scale whatever their
    spread and prints each one's share of the sum (`charts.render_bars`).

    `free_text=True` marks a text output that echoes words (a prompt, generated
    text, tokens): it is exempt from the "never show NaN or inf" check, which
    would otherwise refuse a reader's prompt that contains the word "inf".

    `details="Numbers"` puts the output behind a closed toggle with that summary (outputs with the
    same `details` share one): the raw numbers behind a stepper's picture, there for a reader who asks.
    """

    key: str
    label: str
    kind: str = "text"
    free_text: bool = False
    chart: charts.ChartSpec | None = None
    details: str = ""
    shares: bool = False

    def __post_init__(self):
        if self.kind not in OUTPUT_KINDS:
            raise ValueError(f"output {self.key!r}: kind must be one of {', '.join(OUTPUT_KINDS)}, got {self.kind!r}")
        if (self.kind == "chart") != (self.chart is not None):
            raise ValueError(f"output {self.key!r}: kind='chart' goes with a chart=ChartSpec(...), and only it")
        if self.details and self.kind == "caption":
            raise ValueError(f"output {self.key!r}: a caption is always shown; it cannot go behind a toggle")


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
    """A registered calculator. `fields` are every input of its form, in form order; with `compare` (see
    `calculator`) they end with the compare toggle and B's fields, which its function never receives (`own`)."""

    name: str
    title: str
    fields: tuple[Field, ...]
    outputs: tuple[Output, ...]
    fn: Callable[..., dict]
    doc: str = ""
    action: Action | None = None
    defer_frames: bool = False  # a stepper's prebuilt steps in a file of their own, fetched at first use (directives)
    compare: dict[str, str] | None = None  # A's field -> B's field ("gpu" -> "gpu_b"), in form order

    def defaults(self) -> dict[str, str]:
        return {f.name: str(f.default) for f in self.fields}

    @property
    def own(self) -> tuple[Field, ...]:
        """The fields the calculator's function takes (all but the compare toggle and B's fields)."""
        extra = set(self.compare.values()) | {COMPARE} if self.compare else set()
        return tuple(f for f in self.fields if f.name not in extra)

    def applies(self, field: Field, raw: dict) -> bool:
        """Whether `field` is in use for these raw inputs: its `show_when` holds, and the field that names applies
        itself (B's custom GPU numbers apply only while B's GPU is custom and the comparison is on)."""
        by_name = {f.name: f for f in self.fields}
        seen = set()
        while field is not None and field.name not in seen:
            if not field.applies(raw):
                return False
            seen.add(field.name)
            field = by_name.get(field.show_when[0]) if field.show_when else None
        return True


REGISTRY: dict[str, Calculator] = {}


COMPARE = "compare"
"""The name of the toggle field of a calculator that compares two choices (see `calculator`'s `compare`)."""
COMPARED = "compared"
"""The key under which a comparing calculator's function returns its compared quantities (see `calculator`)."""


def calculator(name: str, *, title: str, fields, outputs, action: Action | None = None,
               defer_frames: bool = False, compare: dict | None = None) -> Callable:
    """Register `fn(**parsed_inputs) -> {output_key: value}` as calculator `name`.

    `defer_frames`: a stepper whose prebuilt steps are heavy and sit below a page's first screen ships them
    as a file of their own, fetched when a reader comes near it or first uses it, instead of in the page
    (`docs/hooks/directives.py` stepper_frames): a reader who never uses it never downloads them.

    `compare={field: B's default, ...}` lets the reader put two choices side by side (two models, two GPUs, two
    formats): the form gets a toggle, `compare` ("off" or "on"), and for each named field a B copy `<field>_b`,
    labelled "B: ...", shown only while the toggle is on; a field tied to a named one comes along (the
    config.json pasted beside a model select, a custom GPU's numbers). They are ordinary fields, so a permalink
    or an export carries them as it carries any other. The function then also returns, under `COMPARED`, a list
    of (label, `chapter2.format` value) pairs: its results' numbers as its outputs write them, which the
    comparison puts in a table of A, B and B / A (`chapter2.calculators.compare`, `_compare.py`).
    """

    def register(fn):
        if name in REGISTRY:
            raise ValueError(f"calculator {name!r} is registered twice")
        all_fields, pairs = list(fields), None
        if compare:
            from ._compare import compare_fields  # (a module of its own: it builds on this one)

            extra, pairs = compare_fields(name, fields, compare)
            all_fields += extra
        _check_steppers(name, all_fields, outputs)
        _check_shown(name, all_fields)
        REGISTRY[name] = Calculator(name, title, tuple(all_fields), tuple(outputs), fn, (fn.__doc__ or "").strip(),
                                    action, defer_frames, pairs)
        return fn

    return register


def _check_steppers(name: str, fields, outputs=()) -> None:
    by_name = {f.name: f for f in fields}
    steps = [f.name for f in fields if f.stepper]
    captions = [o.key for o in outputs if o.kind == "caption"]
    if len(steps) > 1:
        raise ValueError(f"calculator {name!r}: one stepper field at most, got {steps}")
    if outputs and len(captions) != len(steps):
        raise ValueError(f"calculator {name!r}: a stepper has exactly one caption output (kind='caption'), and "
                         f"only a stepper has one; stepper fields {steps}, captions {captions}")
    for f in fields:
        if (f.stepper or f.max_from) and not (f.kind == "range" and f.integer and None not in (f.min, f.max)):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: a step (stepper, max_from) is a range of "
                             f"whole numbers with a min and a max")
        other = by_name.get(f.max_from) if f.max_from else None
        if f.max_from and (other is None or not other.integer or other is f):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: max_from must name another integer field")
        if other is not None and not (f.min <= other.default <= f.max and f.default <= other.default):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: its default must be within 0 .. {other.name}")


def _check_shown(name: str, fields) -> None:
    by_name = {f.name: f for f in fields}
    for f in fields:
        if f.show_when is not None:
            other = by_name.get(f.show_when[0])
            if other is None or other.kind != "select" or str(f.show_when[1]) not in [str(v) for v, _ in other.options]:
                raise ValueError(f"calculator {name!r}: field {f.name!r}: show_when must name a select of this "
                                 f"calculator and one of its values, got {f.show_when!r}")
        if f.paste is not None and (f.kind != "select" or getattr(by_name.get(f.paste), "kind", None) != "text"):
            raise ValueError(f"calculator {name!r}: field {f.name!r}: paste is a select's, naming a text field")


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


def parse_inputs(name: str, raw: dict | None = None) -> dict:
    """The parsed inputs a calculator runs on for the form's raw strings `raw` (defaults for missing fields, and
    for a field that does not apply to these inputs, `Field.show_when`). A comparing calculator's toggle and B's
    fields are not among them: its function does not take them (`Calculator.own`; `compare` reads them)."""
    calc = get(name)
    raw = {**calc.defaults(), **(raw or {})}
    return {f.name: f.parse(raw[f.name] if calc.applies(f, raw) else f.default) for f in calc.own}


def evaluate(name: str, raw: dict | None = None) -> dict:
    """Run calculator `name` on the raw strings `raw`: {"inputs": the parsed inputs it ran on, "outputs": its
    outputs, "numbers": its numbers}, each checked (`compute` returns the outputs alone); a comparing
    calculator's also "compared": its quantities to compare (`COMPARED`). The toggle and B's fields are not the
    function's inputs: `compare` reads them."""
    calc = get(name)
    args = parse_inputs(name, raw)
    try:
        result = calc.fn(**args)
    except FieldError:
        raise
    except (ValueError, TypeError) as err:
        raise FieldError(None, str(err)) from err
    missing = [o.key for o in calc.outputs if o.key not in result] + ([] if NUMBERS in result else [NUMBERS])
    missing += [COMPARED] if calc.compare and COMPARED not in result else []
    if missing:
        raise RuntimeError(f"calculator {name!r} did not produce {missing}")
    for o in calc.outputs:
        _check_output(name, o, result[o.key])
    _check_numbers(name, result[NUMBERS])
    answer = {"inputs": args, "outputs": {o.key: result[o.key] for o in calc.outputs}, "numbers": result[NUMBERS]}
    if calc.compare:
        answer[COMPARED] = result[COMPARED]
    return answer


def compute(name: str, raw: dict | None = None) -> dict:
    """Parse `raw` (defaults for missing fields), run the calculator, check its outputs; its outputs."""
    return evaluate(name, raw)["outputs"]


def drawn(name: str, outputs: dict, suffix: str = "") -> dict:
    """`outputs` as the browser gets them: chart and bar outputs drawn (`render_chart`, `charts.render_bars`).
    `suffix` keeps a second drawing's ids apart from the first's (B's chart beside A's)."""
    outputs = dict(outputs)
    for o in get(name).outputs:
        if o.kind == "chart":
            outputs[o.key] = render_chart(name, o, outputs[o.key], suffix)
        elif o.kind == "bars":  # drawn here too, by the one bar renderer the build uses
            outputs[o.key] = charts.render_bars(outputs[o.key], shares=o.shares)
    return outputs


def error_json(err: FieldError) -> dict:
    """A FieldError as the browser gets it: the field, the message, and the link where there is one."""
    answer = {"ok": False, "field": err.field, "message": str(err)}
    if err.link:
        answer["link"] = {"text": err.link[0], "href": err.link[1]}
    return answer


def compute_json(name: str, raw_json: str) -> str:
    """The browser's entry point: JSON in, JSON out, errors as data. Chart and bar outputs come drawn
    (`drawn`); beside the outputs, the parsed inputs and the numbers (`evaluate`), which the page exports and
    writes into its Python script. With the compare toggle on (a calculator registered with `compare`), the same
    answer also holds the comparison, computed in this one call: "compare": {"rows", "html", and B's "inputs" and
    "numbers"} (`_compare.compare_answer`)."""
    from ._script import python_script  # (it reads this registry)

    raw = json.loads(raw_json)
    calc = get(name)
    try:
        if calc.compare and next(f for f in calc.fields if f.name == COMPARE).parse(raw.get(COMPARE, "off")) == "on":
            from ._compare import compare_answer

            answer = compare_answer(name, raw)
            if answer.get("ok") and "inputs" in answer:
                answer["script"] = python_script(name, answer["inputs"])
            return json.dumps(answer)
        result = evaluate(name, raw)
    except FieldError as err:
        return json.dumps(error_json(err))
    return json.dumps({"ok": True, "outputs": drawn(name, result["outputs"]), "inputs": result["inputs"],
                       "numbers": result["numbers"], "script": python_script(name, result["inputs"])})


NUMBERS = "numbers"
"""The key of a calculator's result that holds its numbers: every number its outputs show, at full precision.

{name: value}: a name in lower case (letters, digits, "_") with its unit in parentheses, "kv_cache (B)",
"time (s)", "saved (%)", or none for a pure number or a name ("ratio", "model"); a value is an int, a finite
float, a str, None (a number that does not exist yet: a running maximum before any score), or a list of these.
Units are the base ones (B, FLOP, s), as the numbers come from the code, not as the page rounds and prefixes
them ("4.29 GB" is `"kv_cache (B)": 4294967296`). The page exports them (CSV and JSON), and the Python script
of a calculator prints them; `tests/test_calculator_numbers.py` checks that every number an output shows is
one of them.
"""
NUMBER_NAME = re.compile(r"^[a-z][a-z0-9_]*(?: \([^()]+\))?$")


def _check_numbers(name: str, numbers) -> None:
    if not isinstance(numbers, dict) or not numbers:
        raise RuntimeError(f"calculator {name!r}: {NUMBERS!r} must be a non-empty dict {{name: value}}, got {numbers!r}")
    for key, value in numbers.items():
        if not isinstance(key, str) or not NUMBER_NAME.match(key):
            raise RuntimeError(f"calculator {name!r}: number name {key!r} must be lower_case, with its unit in "
                               f"parentheses: 'kv_cache (B)'")
        _check_number(name, key, value)


def _check_number(name: str, key: str, value) -> None:
    if isinstance(value, list):
        for v in value:
            _check_number(name, key, v)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise FieldError(None, f"{key}: the result is not a finite number for these inputs")
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        raise RuntimeError(f"calculator {name!r}: number {key!r} = {value:,} is past 2**53, where a browser's "
                           f"numbers stop being exact: give it as a float")
    elif value is not None and (isinstance(value, bool) or not isinstance(value, int | str)):
        raise RuntimeError(f"calculator {name!r}: number {key!r} must be an int, a float, a str, None or a list of "
                           f"them, got {type(value).__name__}: {value!r}")


def render_chart(name: str, output: Output, data: dict, suffix: str = "") -> str:
    """A chart output as the page shows it (the build and the browser both call this)."""
    return charts.render(output.chart, data, uid=f"c2-chart-{name}-{output.key}{suffix}", title=output.label)


def _check_output(name, output, value):
    """Never show NaN or Infinity as a result; a caption is one line."""
    if output.kind == "caption":
        if not isinstance(value, str) or "\n" in value or not value.strip() or len(value) > CAPTION_CHARS:
            raise RuntimeError(f"calculator {name!r}: caption {output.key!r} must be one line of 1 to "
                               f"{CAPTION_CHARS} characters, got {value!r}")
    if output.kind in ("text", "caption"):
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
    """A limit or a typed value in a message, as the pages write numbers: 1e7 -> "10,000,000", 0.001 -> "0.001"."""
    return sig(x, 6)
