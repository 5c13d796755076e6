"""The worked-example notebooks run at build time on whatever machine builds the site, so their prose must
hold whatever that machine measures: sentences about measured numbers are printed by code from the numbers,
and the notebook names the machine and date of its own measurements and of the committed ones 2.5 quotes.
"""

import contextlib
import io
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "docs" / "notebooks"
PREFILL_DECODE = NOTEBOOKS / "prefill_decode.py"


def cells(path: Path) -> list[tuple[str, str]]:
    """(kind, source) of each jupytext percent-format cell: kind 'markdown' or 'code'."""
    out = []
    for chunk in re.split(r"^# %%", path.read_text(), flags=re.M)[1:]:
        header, _, body = chunk.partition("\n")
        out.append(("markdown" if "[markdown]" in header else "code", body))
    return out


def markdown(path: Path) -> str:
    return " ".join(" ".join(line.lstrip("# ") for line in body.splitlines())
                    for kind, body in cells(path) if kind == "markdown")


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.py")), ids=lambda p: p.name)
def test_no_fixed_prose_about_measured_numbers(path):
    """The old prose claimed 'far higher' tokens per second and explained a gap it had not measured."""
    text = markdown(path)
    for phrase in ("far higher", "That is why the measured time", "far larger than the CPU caches",
                   "below the ops:byte ratio of any CPU"):
        assert phrase not in text, phrase


def _summary_cell() -> str:
    kinds = cells(PREFILL_DECODE)
    at = next(i for i, (k, body) in enumerate(kinds) if k == "markdown" and "## What the numbers say" in body)
    kind, body = kinds[at + 1]
    assert kind == "code"
    return body


def _run_summary(**numbers) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(_summary_cell(), dict(numbers))  # noqa: S102 - the notebook's own cell, with chosen numbers
    return out.getvalue()


def test_summary_sentences_follow_the_numbers():
    base = dict(n_prompt=64, weight_bytes=3.5e6, decode_intensity=0.47, decode_bound=0.4e-3)
    fast = _run_summary(**base, prefill_s=0.01, decode_s=0.8e-3, ridge=6.0)  # 5.1x, memory bound, 2x the bound
    assert "Prefill produced 5.1x as many tokens per second as decode" in fast
    assert "13x below this machine's ridge of 6.0: memory bound" in fast
    assert "2.0x the roofline bound" in fast
    slow = _run_summary(**base, prefill_s=0.1, decode_s=0.39e-3, ridge=0.3)  # prefill slower per token
    assert "only 0.25x decode's tokens per second" in slow and "as many tokens per second as decode" not in slow
    assert "above this machine's ridge of 0.3: compute bound" in slow
    assert "below it" in slow


def test_the_notebook_names_both_measurements():
    source = PREFILL_DECODE.read_text()
    assert "bench_results.device_roofline(\"cpu\")" in source and "run_date" in source
    text = markdown(PREFILL_DECODE)
    assert "Section 2.5 draws its CPU roofline from benchmark runs committed to the repository" in text
    assert "They can differ for three reasons" in text
