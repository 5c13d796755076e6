"""From a bound to an expected range: the share of their roofline bound that published runs reach (section 2.4).

A roofline time is a lower bound. Real engines reach a share of it, their
efficiency, which `chapter2.measurements` measures row by row (measured / bound).
Runs of the same kind reach similar shares, so a bound divided by the shares that
published runs of its kind reached gives an expected range:

    expected time = bound time / efficiency      (efficiency between 0 and 1)

Kinds ("setups") are the phase and the number of GPUs: one sequence decoding
(batch 1), a server running many sequences, a kernel measured alone (compute or
memory bound), each on one GPU or several. A row whose `trick` the bound leaves
out (speculative decoding, prefix caching) is not used: it may beat its bound.

`leave_one_out` checks the method on the rows themselves: each row is predicted
from the others (its bound times the median efficiency of the other rows of its
setup) and compared with what was measured. Its median and worst errors are what
the expected ranges are worth. The efficiency uses `measurements.compare()`'s
bound, communication between GPUs included (`communication=False` redoes the
fit and the check against the bound that lets GPUs talk for free, to show what
counting it changes).

`fit` computes the efficiencies from the measurements: every row's bound, some
15 s of roofline work in CPython, far too slow for a calculator in the browser.
`data/efficiency.json` keeps what `fit` gives for each setup (written by
`python -m chapter2.efficiency`; a test holds it equal to `fit`), and `expected`,
which the calculators call, reads it.
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass
from functools import cache
from importlib import resources

from . import measurements

__all__ = ["SETUPS", "PHASES", "Efficiency", "setup_of", "phase_setup", "fit", "published", "expected", "Prediction",
           "leave_one_out", "loo_errors"]

SETUPS = ("one sequence, 1 GPU", "one sequence, several GPUs", "serving, 1 GPU", "serving, several GPUs",
          "kernel, compute bound", "kernel, memory bound")
"""The kinds of run the fit tells apart: what was measured (`measurements.METRICS`) and on how many GPUs."""

_FAMILY = {"one sequence, 1 GPU": "one sequence", "one sequence, several GPUs": "one sequence",
           "serving, 1 GPU": "serving", "serving, several GPUs": "serving",
           "kernel, compute bound": "kernel", "kernel, memory bound": "kernel"}

PHASES = ("prefill", "decode")


def setup_of(m: measurements.Measurement) -> str | None:
    """The setup of a measurement row, or None for a row the fit does not use (a prefill server's throughput)."""
    if not isinstance(m, measurements.Measurement):
        raise TypeError(f"m must be a chapter2.measurements.Measurement (from measurements.load()), got {type(m).__name__}")
    several = m.n_gpus > 1
    if m.metric == "tokens_per_s_per_sequence":
        return "one sequence, several GPUs" if several else "one sequence, 1 GPU"
    if m.metric == "output_tokens_per_s":
        return "serving, several GPUs" if several else "serving, 1 GPU"
    if m.metric == "kernel_tflops":
        return "kernel, compute bound"
    if m.metric == "kernel_bandwidth":
        return "kernel, memory bound"
    return None


def phase_setup(phase: str, *, batch: int = 1, n_gpus: int = 1) -> str:
    """The setup whose published runs stand for a calculator's phase.

    Decode at batch 1 is one sequence decoding; at a larger batch, a server. Prefill: the published prefill
    throughput in the table uses prefix caching (not usable), so a compute-bound prefill takes the share that
    compute-bound kernels reach alone, an optimistic stand-in that a calculator labels as such.
    """
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be a whole number of sequences >= 1, got {batch!r}")
    if isinstance(n_gpus, bool) or not isinstance(n_gpus, int) or n_gpus < 1:
        raise ValueError(f"n_gpus must be a whole number >= 1, got {n_gpus!r}")
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(map(repr, PHASES))}, got {phase!r}")
    several = n_gpus > 1
    if phase == "prefill":
        return "kernel, compute bound"
    if batch <= 1:
        return "one sequence, several GPUs" if several else "one sequence, 1 GPU"
    return "serving, several GPUs" if several else "serving, 1 GPU"


@dataclass(frozen=True)
class Efficiency:
    """The efficiencies (measured / bound) of the published rows of one setup: their range and median."""

    setup: str
    ids: tuple[str, ...]
    values: tuple[float, ...]

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def count(self) -> int:
        return len(self.values)


def _rows(exclude: str | None = None, communication: bool = True) -> list[tuple[str, str, float]]:
    """(setup, id, efficiency) of every row the fit may use, without `exclude`; the efficiency against the bound
    with communication between GPUs, or without it."""
    out = []
    for c in measurements.compare():
        m = c.measurement
        setup = setup_of(m)
        if setup is None or m.trick is not None or m.id == exclude:
            continue
        out.append((setup, m.id, c.ratio if communication else c.ratio_without_communication))
    return out


def _group(rows, setups) -> Efficiency | None:
    chosen = [(i, r) for s, i, r in rows if s in setups]
    if not chosen:
        return None
    return Efficiency(" or ".join(sorted(setups)) if len(setups) > 1 else next(iter(setups)),
                      tuple(i for i, _ in chosen), tuple(r for _, r in chosen))


@cache
def fit(setup: str, exclude: str | None = None, communication: bool = True) -> Efficiency:
    """The efficiency of `setup`'s published rows (without the row `exclude`), against the bound with communication
    between GPUs (or, `communication=False`, without it).

    Where the setup has no row left, its family (one sequence, serving, kernel: any number of GPUs, any bound)
    stands in; the returned `setup` says which rows were used. Raises ValueError for an unknown setup.
    """
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {', '.join(map(repr, SETUPS))}, got {setup!r}")
    rows = _rows(exclude, communication)
    own = _group(rows, {setup})
    if own is not None:
        return own
    family = {s for s in SETUPS if _FAMILY[s] == _FAMILY[setup]}
    wider = _group(rows, family)
    if wider is None:
        raise ValueError(f"no published row of the setup {setup!r} or its family")
    return Efficiency(f"{_FAMILY[setup]}, any", wider.ids, wider.values)


@cache
def _stored() -> dict:
    text = resources.files("chapter2").joinpath("data", "efficiency.json").read_text(encoding="utf-8")
    return json.loads(text)["setups"]


def published(setup: str) -> Efficiency:
    """`fit(setup)` as stored in data/efficiency.json: what the calculators use (see the module docstring)."""
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {', '.join(map(repr, SETUPS))}, got {setup!r}")
    entry = _stored()[setup]
    return Efficiency(entry["setup"], tuple(entry["ids"]), tuple(entry["values"]))


def expected(bound_time: float, setup: str) -> tuple[float, float]:
    """(fastest, slowest) expected time: the bound divided by the highest and the lowest efficiency that published
    runs of `setup` reached. A range, never a bound: the bound itself stays the fastest possible."""
    e = published(setup)
    if isinstance(bound_time, bool) or not isinstance(bound_time, (int, float)) or not 0 < bound_time < float("inf"):
        raise ValueError(f"bound_time must be a positive number of seconds, got {bound_time!r}")
    return bound_time / e.high, bound_time / e.low


@dataclass(frozen=True)
class Prediction:
    """One row predicted from the others: its bound x the median efficiency of the other rows of its setup."""

    id: str
    setup: str
    used: str
    measured: float
    predicted: float

    @property
    def error(self) -> float:
        """|predicted - measured| / measured."""
        return abs(self.predicted - self.measured) / self.measured


@cache
def leave_one_out(communication: bool = True) -> tuple[Prediction, ...]:
    """Every row the fit uses, predicted from all the other rows (see the module docstring), with the bound that
    counts communication between GPUs (or, `communication=False`, the one that does not)."""
    out = []
    for c in measurements.compare():
        m = c.measurement
        setup = setup_of(m)
        if setup is None or m.trick is not None:
            continue
        e = fit(setup, exclude=m.id, communication=communication)
        bound = c.bound if communication else (c.bound_without_communication or c.bound)
        out.append(Prediction(m.id, setup, e.setup, m.value, bound * e.median))
    return tuple(out)


def loo_errors(communication: bool = True) -> tuple[float, float]:
    """(median, worst) relative error of the leave-one-out predictions."""
    errors = [p.error for p in leave_one_out(communication)]
    return statistics.median(errors), max(errors)


def stored_text() -> str:
    """data/efficiency.json as `fit` gives it today."""
    about = ("Efficiencies (measured / roofline bound) of the published rows of data/measurements.json, by setup "
             "(chapter2.efficiency.fit), kept so that the calculators need not recompute every bound. Written by "
             "`python -m chapter2.efficiency`; tests/test_efficiency.py holds it equal to the fit.")
    setups = {}
    for setup in SETUPS:
        e = fit(setup)
        setups[setup] = {"setup": e.setup, "ids": list(e.ids), "values": [round(v, 12) for v in e.values]}
    return json.dumps({"_about": about, "setups": setups}, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m chapter2.efficiency [PATH]: rewrite data/efficiency.json
    from pathlib import Path

    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data" / "efficiency.json"
    path.write_text(stored_text(), encoding="utf-8")
    print(f"wrote {path}")
