"""Every number a calculator shows is one of its numbers (`calculators.NUMBERS`), at full precision, with its unit.

For every calculator, at its defaults and with each field changed in turn: each number in its text outputs,
its caption and its bar labels (read the way a reader reads it: "4.29 GB" is 4.29e9, "62.2 ms" 0.0622, "7.5B"
7.5e9, "22.0 %" 0.22 or 22.0) must be what one of the calculator's numbers, or of its parsed inputs, rounds to
at the digits shown; each bar's value must be one of its numbers exactly. Digits inside a name ("Llama-3.1-8B",
"fp16", "q4", "Mamba-2", a text the calculator echoes) are no number; the few constants of a formula a text
spells out are listed in FORMULA, each with why.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from _fields import changed_value
from chapter2 import calculators
from chapter2.calculators import NUMBERS

# Outputs that echo the reader's own text (a prompt, its tokens): their digits are words, not numbers.
ECHO = {("tokenizer", "tokens"), ("prefill_decode", "text"), ("prefill_decode", "top")}  # "top": tokens' texts
# A token or a word quoted in a text (“iz”, ' 7'): read as words too.
QUOTED = re.compile(r"“[^”]*”|(?<!\w)'[^'\n]*'(?!\w)")
# Constants a text writes as part of a formula (not results): stripped before the numbers are read.
FORMULA = {
    "sliding_window": ["N^2/2", "N w - w^2/2", "w^2/2"],  # the exact counts' closed forms
    "kv_cache": ["2 (K, V)"],  # a key and a value per head
    "prefill_decode": ["16-bit numbers"],  # what bf16 is, in words
    "model_config": ["per 30 s of audio"],  # Whisper's encoder window, a fixed length of its design
    "flash_stepper": ["to 12 decimal places"],  # the tolerance of the check against the reference attention
}

NUMBER = re.compile(r"(?<![\w.,^/−-])(?P<sign>[−-](?=\d))?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?(?![\d])")
PREFIX = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
GLUED = {"k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}  # "266k", "525M", "7.5B" parameters: no space
BAR_SCALES = (1.0, 1e3, 1e6, 1e9, 1e12, 0.01)  # a bar drawn in GB (or %) is a number in B (or a fraction), divided
TIMES = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


def shown_numbers(text: str) -> list[tuple[str, float, int, tuple[float, ...]]]:
    """(as written, value, decimals shown, the scales it may be read at) of each number in `text`."""
    found = []
    for m in NUMBER.finditer(text):
        rest = text[m.end():]
        glued = re.match(r"([kMBT])(?![A-Za-z])", rest)
        if re.match(r"[A-Za-z_]", rest) and not glued:
            continue  # digits that begin a word ("2D", "4x"): part of a name
        value = float(m["int"].replace(",", "") + (m["frac"] or ""))
        if m["sign"]:
            value = -value
        decimals = len(m["frac"]) - 1 if m["frac"] else 0
        if glued:
            scales = (GLUED[glued[1]],)
        elif unit := re.match(r" ?(µs|ms|min|s|h)(?![A-Za-z])", rest):
            scales = (TIMES[unit[1]],)
        elif unit := re.match(r" ([kMGTPE])(?:B|FLOP|(?![A-Za-z]))", rest):  # "4.29 GB", "852 TFLOP", "537 M"
            scales = (PREFIX[unit[1]],)
        elif re.match(r" ?%", rest):
            scales = (0.01, 1.0)
        else:
            scales = (1.0,)
        found.append((m[0], value, decimals, scales))
    return found


def _leaves(value):
    if isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif value is not None:
        yield value


def _matches(value: float, decimals: int, scales, candidates) -> bool:
    tolerance = 0.5 * 10 ** -decimals
    return any(abs(c / s - value) <= tolerance * (1 + 1e-9) + 1e-12 * abs(value) for c in candidates for s in scales)


def _changed(field):
    """A different valid value for a field (as the browser tests change it), or None: a pasted config or a Hub id
    is left as it is here."""
    if field.kind == "text" and field.name in ("config_json", "model_id"):
        return None
    return changed_value(field)


def _valid(name: str, raw: dict) -> bool:
    try:
        calculators.evaluate(name, raw)
    except calculators.FieldError:  # this changed input alone is refused (its message is tested elsewhere)
        return False
    return True


def cases():
    """Every calculator at its defaults and with each field changed alone (where that is valid); every calculator
    that reads a config.json with each family's shipped config pasted."""
    from chapter2.models import FAMILY_CONFIG_DIR

    for name in sorted(calculators.REGISTRY):
        calc = calculators.get(name)
        yield pytest.param(name, {}, id=f"{name}-defaults")
        for field in calc.fields:
            value = _changed(field)
            if value is not None and _valid(name, {field.name: value}):
                yield pytest.param(name, {field.name: value}, id=f"{name}-{field.name}")
        if any(f.name == "config_json" for f in calc.fields) and any(f.name == "model_id" for f in calc.fields):
            for path in sorted(FAMILY_CONFIG_DIR.glob("*.json")):
                raw = {"config_json": path.read_text()}
                if _valid(name, raw):
                    yield pytest.param(name, raw, id=f"{name}-{path.stem}")


def unaccounted(name: str, raw: dict) -> list[str]:
    """The numbers calculator `name` shows for `raw` that none of its numbers or inputs gives; [] when all are."""
    calc = calculators.get(name)
    result = calculators.evaluate(name, raw)
    numbers, inputs = result["numbers"], result["inputs"]
    leaves = list(_leaves(list(numbers.values()))) + list(inputs.values())
    candidates = [float(v) for v in leaves if isinstance(v, int | float)]
    words = sorted({v for v in leaves if isinstance(v, str) and len(v) >= 3}, key=len, reverse=True)
    words += [str(label) for f in calc.own if f.kind == "select" for v, label in f.options  # (not B's)
              if str(v) == str(inputs[f.name]) and len(str(label)) >= 3]
    problems = []
    for o in calc.outputs:
        value = result["outputs"][o.key]
        if o.kind == "bars":
            texts = [] if (name, o.key) in ECHO else [label for label, _ in value]
            for label, v in value:
                if not any(c / scale == float(v) for c in candidates for scale in BAR_SCALES):
                    problems.append(f"{o.key}: bar {label!r} = {v!r} is not one of the numbers")
        elif o.kind in ("text", "caption") and (name, o.key) not in ECHO:
            texts = [QUOTED.sub(" ", value)]
        else:
            continue
        for text in texts:
            for strip in FORMULA.get(name, []) + words:
                text = text.replace(strip, " ")
            for written, v, decimals, scales in shown_numbers(text):
                if not _matches(v, decimals, scales, candidates):
                    problems.append(f"{o.key}: {written!r} in {text!r}")
    return problems


@pytest.mark.parametrize(("name", "raw"), list(cases()))
def test_every_number_shown_is_one_of_the_calculator_s_numbers(name, raw):
    result = calculators.evaluate(name, raw)
    assert NUMBERS in calculators.get(name).fn(**result["inputs"])
    json.dumps(result["numbers"], allow_nan=False)  # what the page exports: JSON, every float finite
    assert not unaccounted(name, raw), unaccounted(name, raw)


def test_the_reading_of_numbers_catches_one_left_out():
    """The check reads prefixes, times, glued counts and percentages, skips names, and fails on a number that
    none of the values gives."""
    read = {w: (v, s) for w, v, _d, s in shown_numbers(
        "4.29 GB in 62.2 ms (7.5B; 266k); 22.0 % of 1,024 fp16 Mamba-2 q4 −0.5, 11 min")}
    assert read == {"4.29": (4.29, (1e9,)), "62.2": (62.2, (1e-3,)), "7.5": (7.5, (1e9,)), "266": (266.0, (1e3,)),
                    "22.0": (22.0, (0.01, 1.0)), "1,024": (1024.0, (1.0,)), "−0.5": (-0.5, (1.0,)), "11": (11.0, (60.0,))}
    assert _matches(4.29, 2, (1e9,), [4_294_967_296]) and not _matches(4.29, 2, (1e9,), [4_306_000_000])
    assert _matches(22.0, 1, (0.01, 1.0), [0.2195]) and not _matches(22.0, 1, (0.01, 1.0), [0.2206])
    assert math.isclose(shown_numbers("0.24 s")[0][1] * shown_numbers("0.24 s")[0][3][0], 0.24)


def test_a_shown_number_left_out_of_the_numbers_is_caught():
    """A calculator whose numbers miss one it shows fails the check, and passes once it is there."""
    from chapter2.calculators import Output, _registry

    numbers = {"kv_cache (B)": 4_294_967_296}

    @_registry.calculator("numbers_check_example", title="t", fields=[], outputs=[Output("out", "Out")])
    def example():
        return {"out": "4.29 GB read in 62.2 ms (Llama-3.1-8B)", "numbers": dict(numbers, model="Llama-3.1-8B")}

    try:
        assert unaccounted("numbers_check_example", {}) == ["out: '62.2' in '4.29 GB read in 62.2 ms ( )'"]
        numbers["time (s)"] = 0.06221
        assert unaccounted("numbers_check_example", {}) == []
        numbers["time (s)"] = 0.0624  # 62.4 ms: not what is shown
        assert unaccounted("numbers_check_example", {})
    finally:
        del _registry.REGISTRY["numbers_check_example"]


def test_numbers_are_checked_by_the_registry():
    """Every calculator must give its numbers; a bad name, a value that is no number or a non-finite float is
    refused."""
    from chapter2.calculators import _registry

    with pytest.raises(RuntimeError, match="non-empty dict"):
        _registry._check_numbers("x", {})
    with pytest.raises(RuntimeError, match="lower_case"):
        _registry._check_numbers("x", {"KV cache": 1})
    with pytest.raises(RuntimeError, match="must be an int"):
        _registry._check_numbers("x", {"ok": {"a": 1}})
    with pytest.raises(RuntimeError, match="past 2\\*\\*53"):
        _registry._check_numbers("x", {"flops (FLOP)": 2**60})
    with pytest.raises(calculators.FieldError, match="not a finite number"):
        _registry._check_numbers("x", {"time (s)": [1.0, float("inf")]})
    _registry._check_numbers("x", {"time (s)": [1.0, None], "model": "Llama-3.1-8B", "ratio": 0.5})
