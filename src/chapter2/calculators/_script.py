"""A calculator's inputs as a Python script that reproduces what the page shows ("Copy as Python").

The script imports the calculator's own function from the `chapter2` wheel and calls it with the parsed
inputs the page computed with (the same values `evaluate` passes), then prints each result as the page
shows it: a text under its label, a bar chart's bars, a chart's data fingerprint (`charts.digest`, which
the page's figure carries as data-digest), and last the calculator's numbers at full precision. It is the
calculator function, not a re-derivation through the domain modules: the one call whose printed texts are
the page's by construction, whatever the calculator. Its docstring says which domain functions it calls.

    script = python_script("kv_cache", evaluate("kv_cache", raw)["inputs"])

`tests/test_calculator_scripts.py` runs the script of every calculator from the installed wheel and
compares what it prints with `expected_output`; `tests/browser/test_share_in_browser.py` compares the page's
script block with `python_script` and the page's results with what the script prints.
"""

from __future__ import annotations

from ._registry import NUMBERS, get

INDENT = "    "


def _literal(value) -> str:
    """A Python literal of a parsed input: repr (a str, an int, a float: repr round-trips exactly)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise TypeError(f"a parsed input must be a str, an int or a float, got {type(value).__name__}: {value!r}")
    return repr(value)


def python_script(name: str, inputs: dict) -> str:
    """The script that prints calculator `name`'s results for the parsed `inputs` (one per field)."""
    calc = get(name)
    fn = calc.fn
    missing = [f.name for f in calc.own if f.name not in inputs]
    if missing:
        raise ValueError(f"calculator {name!r}: inputs lack {missing}")
    # (the first two lines are fixed text: Python reads a "coding:" there, as in "decoding: the", as an encoding)
    lines = ["# A calculator of Chapter 2, run with the chapter2 wheel, which needs only numpy",
             "# (pip install it from the site's page \"Use the code\"). It prints the page's results.",
             f"# {calc.title}"]
    if str(inputs.get("model_id", "")).strip() and not str(inputs.get("config_json", "")).strip():
        lines.append("# A model id is looked up on the Hugging Face Hub here too: pip install huggingface_hub.")
    lines += [f"from {fn.__module__} import {fn.__name__}", ""]
    if any(o.kind == "chart" for o in calc.outputs):
        lines.insert(-1, "from chapter2.charts import digest")
    lines.append(f"out = {fn.__name__}(")
    lines += [f"{INDENT}{f.name}={_literal(inputs[f.name])}," for f in calc.own]
    lines += [")", ""]
    for o in calc.outputs:
        key, label = repr(o.key), repr(o.label + ":")
        if o.kind in ("text", "caption"):
            lines.append(f"print({label}, out[{key}])")
        elif o.kind == "bars":
            lines += [f"print({label})", f"for label, value in out[{key}]:", f"{INDENT}print(f\"  {{label}}: {{value!r}}\")"]
        else:
            lines.append(f"print({repr(o.label + ': chart data')}, digest(out[{key}]))")
    lines += [f"print({'Numbers:'!r})", f"for name, value in out[{NUMBERS!r}].items():",
              f"{INDENT}print(f\"  {{name}}: {{value!r}}\")"]
    return "\n".join(lines) + "\n"


def expected_output(name: str, result: dict) -> str:
    """What the script prints for an `evaluate` result (its outputs and numbers), written out here."""
    from .. import charts

    calc, out = get(name), result["outputs"]
    lines = []
    for o in calc.outputs:
        if o.kind in ("text", "caption"):
            lines.append(f"{o.label}: {out[o.key]}")
        elif o.kind == "bars":
            lines.append(f"{o.label}:")
            lines += [f"  {label}: {value!r}" for label, value in out[o.key]]
        else:
            lines.append(f"{o.label}: chart data {charts.digest(out[o.key])}")
    lines.append("Numbers:")
    lines += [f"  {key}: {value!r}" for key, value in result["numbers"].items()]
    return "\n".join(lines) + "\n"
