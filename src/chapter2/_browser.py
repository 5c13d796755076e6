"""What the site's Web Worker calls in Pyodide (docs/assets/chapter2/worker.js): reader code and calculators.

The worker imports this module once the interpreter is up (`pyodide.pyimport("chapter2._browser")`) and
calls these functions with plain strings; each returns one JSON string, which the worker parses:

    run(code)                   {"ok": true, "value": <value of the code's last expression>}   window.chapter2.run
    run_script(code)            {"ok": true, "value": {"stdout": ..., "error": <traceback or null>}}   snippets, .exec
    calc(name, raw_json, module, hub_json)  {"ok": true, "value": <the calculator's outputs>}   calculators
    hub(model_id, kind, replies_json)       {"ok": true, "value": {"fetch": [...]} | {"record": ...} | {"error": ...}}
    versions()                  {"chapter2": ..., "numpy": ...}

A failure is {"ok": false, "error": <its last line>, "traceback": ...}, or {"ok": false, "oom": true, ...}
for a MemoryError (the worker then replaces the interpreter). Reader code runs in a fresh namespace each
time, as a `__main__` script. numpy only; the same in CPython 3.11 (tests/test_browser_module.py) and
Pyodide's 3.12.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import io
import json
import math
import traceback

FILENAME = "<exec>"  # what tracebacks call the reader's code


def jsonable(value):
    """`value` as JSON can hold it: numpy scalars and arrays as Python numbers and lists, dataclasses as dicts,
    tuples as lists, keys as strings, and non-finite floats as the strings "NaN", "Infinity", "-Infinity"."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    return value


def _traceback(err: BaseException) -> str:
    """The traceback from the reader's code down (this module's own frames left out); all of it when no frame
    is theirs (a calculator's error), none for a SyntaxError (its message shows the line)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != FILENAME:
        tb = tb.tb_next
    if tb is None and not isinstance(err, SyntaxError):  # (a SyntaxError names the reader's line itself)
        tb = err.__traceback__
    return "".join(traceback.format_exception(type(err), err, tb))


def _error(err: BaseException) -> str:
    """An exception as the page shows it: its type and message on one line, the traceback; MemoryError flagged."""
    if isinstance(err, MemoryError):
        return json.dumps({"ok": False, "oom": True, "error": type(err).__name__})
    lines = "".join(traceback.format_exception_only(type(err), err)).strip().splitlines()
    return json.dumps({"ok": False, "error": lines[-1] if lines else type(err).__name__, "traceback": _traceback(err)})


def evaluate(code: str):
    """Run `code` as a `__main__` script in a fresh namespace; the value of its last statement when that is an
    expression not ended by ";", else None (as Python's interactive prompt and Pyodide's eval_code)."""
    tree = ast.parse(code, FILENAME)
    namespace = {"__name__": "__main__"}
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, FILENAME, "exec"), namespace)  # the reader's own code, in their own browser
    if last is None or _quiet(code, last):
        return None
    return eval(compile(ast.Expression(last.value), FILENAME, "eval"), namespace)


def _quiet(code: str, last: ast.Expr) -> bool:
    """True when a ";" follows the last expression (it asks for no value)."""
    lines = code.splitlines()
    rest = lines[last.end_lineno - 1][last.end_col_offset:] + "\n" + "\n".join(lines[last.end_lineno:])
    return rest.split("#", 1)[0].strip().startswith(";")


def run(code: str) -> str:
    """The value of `code`'s last expression, as JSON (see `evaluate`)."""
    try:
        return json.dumps({"ok": True, "value": jsonable(evaluate(code))})
    except BaseException as err:  # the reader's code may raise anything, SystemExit included
        return _error(err)


def run_script(code: str) -> str:
    """Run `code` as a script: what it printed (stdout and stderr together) and its traceback, if it failed."""
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            evaluate(code)
        except MemoryError as err:
            return _error(err)
        except BaseException as err:  # shown to the reader under what the script printed
            error = _traceback(err)
    return json.dumps({"ok": True, "value": {"stdout": out.getvalue(), "error": error}})


def calc(name: str, raw_json: str, module: str | None = None, hub_json: str | None = None) -> str:
    """Calculator `name` on the form's raw strings (`compute_json`). `module`: the one that defines it (the
    site's calculators.json), imported alone so that a page's first result does not wait for every module.
    `hub_json`: the records of the Hub model ids the page looked up for this form ({id: record}), which the
    calculator reads its model from (chapter2.calculators._hub)."""
    from chapter2.calculators import compute_json

    try:
        if hub_json:
            from chapter2.calculators import _hub

            _hub.remember(hub_json)
        if module:
            importlib.import_module(module)
        return '{"ok": true, "value": ' + compute_json(name, raw_json) + "}"
    except BaseException as err:
        return _error(err)


def hub(model_id: str, kind: str, replies_json: str) -> str:
    """One step of a Hub lookup (`chapter2.hub.step_json`): what to fetch next, or the record, or the error."""
    from chapter2.hub import step_json

    try:
        return '{"ok": true, "value": ' + step_json(model_id, kind, replies_json) + "}"
    except BaseException as err:
        return _error(err)


def versions() -> str:
    """The chapter2 and numpy versions the worker reports when it is ready."""
    import numpy

    import chapter2

    return json.dumps({"chapter2": chapter2.__version__, "numpy": numpy.__version__})
