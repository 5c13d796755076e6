"""The calculator contract: parsing, clear errors, and no NaN/Infinity ever shown."""

import json

import pytest

from chapter2 import calculators
from chapter2.activations import gelu, gelu_slope
from chapter2.linear import matmul_cost


def test_every_calculator_computes_its_defaults():
    assert calculators.REGISTRY
    for name, calc in calculators.REGISTRY.items():
        out = calculators.compute(name)
        assert set(out) == {o.key for o in calc.outputs}, name


def test_matmul_calculator_shows_the_library_values():
    out = calculators.compute("matmul_cost", {"m": "4096", "k": "4096", "n": "4096", "dtype": "fp16"})
    c = matmul_cost(4096, 4096, 4096, "fp16")
    assert out["ops"] == "137 GFLOP" and c.ops == 2 * 4096**3
    assert out["intensity"] == f"{c.intensity:.4g}"


def test_activations_calculator_shows_the_library_values():
    out = calculators.compute("activations", {"x": "-0.7", "beta": "1"})
    assert out["gelu"] == f"{float(gelu(-0.7)):.4f} / {float(gelu_slope(-0.7)):.4f}"


@pytest.mark.parametrize("raw", ["", " ", "nan", "NaN", "inf", "-Infinity", "abc", "1e400", "-3", "0", "2.5", "1e20"])
def test_bad_numbers_are_field_errors(raw):
    result = json.loads(calculators.compute_json("matmul_cost", json.dumps({"m": raw})))
    assert result["ok"] is False and result["field"] == "m"
    assert result["message"].startswith("Tokens (rows of x):")


@pytest.mark.parametrize("name", sorted(calculators.REGISTRY))
def test_fuzzed_inputs_never_show_nan_or_crash(name):
    calc = calculators.get(name)
    for field in calc.fields:
        for raw in ["", "nan", "-1e308", "1e308", "x", "-0", "0.5", str(field.min or 0), str(field.max or 1e9)]:
            result = json.loads(calculators.compute_json(name, json.dumps({field.name: raw})))
            if result["ok"]:
                text = json.dumps(result["outputs"]).lower()
                assert "nan" not in text.split('"') and "infinity" not in text
            else:
                assert result["message"]


def test_unknown_select_option():
    result = json.loads(calculators.compute_json("matmul_cost", json.dumps({"dtype": "fp12"})))
    assert result == {"ok": False, "field": "dtype", "message": "Data type: choose one of fp32, bf16, fp16, fp8"}
