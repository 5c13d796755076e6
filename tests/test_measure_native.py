"""The reader's own device, honestly (section 2.4, issue 23): the browser's numbers are numpy in WebAssembly;
`python -m chapter2.measure` prints the native two, which the calculator takes as typed."""

import re

import pytest

from chapter2 import calculators, measure


def test_the_command_prints_the_two_fields_the_calculator_takes(capsys):
    assert measure.main(["0.05"]) == 0
    out = capsys.readouterr().out
    rates = dict(re.findall(r"^(numpy matmul rate \(GFLOP/s\)|memory copy rate \(GB/s\)):\s+([0-9.e+]+)$", out, re.M))
    assert len(rates) == 2 and all(float(v) > 0 for v in rates.values())
    labels = {f.label.removeprefix("This device: ") for f in calculators.get("device_roofline").fields}
    assert set(rates) <= labels  # the printed names are the fields' names
    pasted = calculators.compute("device_roofline", {"matmul_gflops": rates["numpy matmul rate (GFLOP/s)"],
                                                     "copy_gb_s": rates["memory copy rate (GB/s)"]})
    assert pasted["chart"]["points"]


def test_bad_arguments_are_usage_errors():
    with pytest.raises(SystemExit, match="seconds must be a number, got 'fast'"):
        measure.main(["fast"])
    with pytest.raises(SystemExit, match="usage"):
        measure.main(["1", "2"])


def test_the_calculator_says_what_the_browser_measures():
    calc = calculators.get("device_roofline")
    assert "WebAssembly" in calc.fields[0].help and "python -m chapter2.measure" in calc.fields[0].help
    out = calculators.compute("device_roofline", {"matmul_gflops": "3.2", "copy_gb_s": "8.5"})
    assert "WebAssembly (one thread, no optimized BLAS)" in out["device"]
