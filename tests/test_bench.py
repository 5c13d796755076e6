"""The benchmark harness runs and writes well-formed JSON (no timing is asserted: benchmarks are not tests)."""

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chapter2.host.bench import SCHEMA, cpu
from chapter2.devices import catalog_gpu

ROOT = Path(__file__).resolve().parents[1]


def check_document(doc, suite):
    """The schema every result file follows (chapter2.host.bench docstring)."""
    assert doc["schema"] == SCHEMA and doc["suite"] == suite
    prov = doc["provenance"]
    dt.datetime.fromisoformat(prov["date"])  # an ISO 8601 timestamp
    assert set(prov["git"]) >= {"commit", "dirty"}
    assert set(prov["versions"]) >= {"chapter2", "numpy", "torch", "triton"}
    assert prov["python"] and prov["platform"] and prov["device"]["name"]
    assert isinstance(doc["config"], dict) and isinstance(doc["summary"], dict)
    assert isinstance(doc["results"], list) and doc["results"]


@pytest.mark.bench
def test_cpu_benchmark_writes_a_result(tmp_path):
    path = cpu.run(tmp_path, shapes=[(1, 2, 96, 16)], reps=1)
    assert path.parent == tmp_path and path.name.startswith("cpu-attention-") and path.suffix == ".json"
    doc = json.loads(path.read_text())
    check_document(doc, "cpu-attention")
    assert [r["causal"] for r in doc["results"]] == [False, True]
    for r in doc["results"]:
        assert r["shape"] == {"B": 1, "H": 2, "N": 96, "d": 16}
        # validated before timing: float32 attention agrees with float64 to float32 rounding
        assert max(r["max_err_vs_float64"].values()) < 1e-5
        for impl in ("naive", "flash"):
            assert r[impl]["median_s"] > 0 and r[impl]["peak_bytes"] > 0
        assert r["matmul"]["flops"] == 2 * 2 * 96 * 96 * 16  # Q K^T for B H = 2 heads
    # FLOPs from the pair counts: 4 d H pairs, pairs = N^2 (full) and N (N + 1) / 2 (causal)
    assert doc["results"][0]["flops"] == 4 * 16 * 2 * 96 * 96
    assert doc["results"][1]["flops"] == 4 * 16 * 2 * 96 * 97 // 2


@pytest.mark.parametrize("name,key", [("NVIDIA H200", "H200-SXM"), ("NVIDIA H100 80GB HBM3", "H100-SXM"),
                                      ("NVIDIA L40S", "L40S"), ("NVIDIA L4", "L4"), ("Tesla T4", None)])
def test_device_names_map_to_the_catalog(name, key):
    gpu = catalog_gpu(name)
    assert (gpu.key if gpu is not None else None) == key


@pytest.mark.slow
def test_device_check_script_dry_run(tmp_path):
    """scripts/device_check.sh end to end on the CPU (Triton interpreter, toy shapes): the same code
    path a lent GPU will run, so a broken script is caught before device time is spent on it."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["OUT"] = str(tmp_path)
    env["PYTHON"] = sys.executable
    result = subprocess.run(["bash", str(ROOT / "scripts" / "device_check.sh"), "--dry-run"], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    steps = (tmp_path / "steps.txt").read_text()
    for step in ("environment", "validate", "bench", "summary"):
        assert f"{step} rc=0" in steps
    validation = json.loads((tmp_path / "validate.json").read_text())
    assert validation["interpreter"] is True
    assert {r["kernel"] for r in validation["results"]} == {"flash_attention", "decode_attention"}
    assert all(r["ok"] for r in validation["results"])
    (bench_file,) = tmp_path.glob("gpu-attention-*.json")
    doc = json.loads(bench_file.read_text())
    check_document(doc, "gpu-attention")
    assert {r["part"] for r in doc["results"]} == {"attention", "decode", "window"}
    for rec in doc["results"]:
        variants = rec["variants"]
        first = variants[0]
        assert "error" not in first, first  # the Triton kernel itself always runs
        if rec["part"] == "attention":
            assert first["variant"] == "triton" and first["max_abs_diff_vs_reference"] < 0.05  # bf16 vs SDPA
            assert "sdpa_default_time_over_triton" in rec["ratios"]
        if rec["part"] == "decode":
            assert "error" not in rec["copy"] and "triton_split_over_copy_bandwidth" in rec["ratios"]
        if rec["part"] == "window":
            n, w = rec["shape"]["N"], rec["window"]
            assert rec["ideal_speedup"] == pytest.approx((n * (n + 1) / 2) / (n * w - w * (w - 1) / 2))
    summary = (tmp_path / "summary.log").read_text()
    for text in ("SDPA default time / Triton time", "copy GB/s", "window speedup"):
        assert text in summary
