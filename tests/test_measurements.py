"""Published measurements beside their roofline bounds (chapter section 2.4; issue 23).

The bound is a lower bound on time, so no honest measurement beats it unless it used a
trick the bound leaves out. If the roofline turned pessimistic (more bytes or FLOPs than
any real pass moves), rows would beat their bounds and the first test would fail.
"""

import json
import math
from importlib import resources

import pytest

from chapter2 import hardware, measurements, roofline

RAW = json.loads(resources.files("chapter2").joinpath("data", "measurements.json").read_text(encoding="utf-8"))
BY_ID = {c.measurement.id: c for c in measurements.compare()}


def test_no_measurement_beats_its_bound_unless_it_names_the_trick():
    assert len(BY_ID) >= 20
    for c in BY_ID.values():
        if c.measurement.trick is None:
            assert c.measurement.value <= 1.05 * c.bound, (c.measurement.id, c.ratio)
        else:
            assert c.measurement.trick in measurements.TRICKS
    # the best rows come close to their bounds, so a bound grown 25 % pessimistic would fail the check above
    best = max(c.ratio for c in BY_ID.values() if c.measurement.trick is None)
    assert 0.85 < best <= 1.05
    # and one row does beat its bound, by the trick it names: Medusa's drafted tokens
    assert BY_ID["medusa-405b-h200"].ratio > 1


def test_every_row_states_its_whole_setup_and_source():
    fields = {"id", "model", "gpu", "n_gpus", "parallel", "weight_dtype", "dtype", "kv_dtype", "batch", "concurrency",
              "input_tokens", "output_tokens", "engine", "metric", "unit", "value", "date", "url", "table", "trick",
              "draft_tokens", "note"}
    ids = [row["id"] for row in RAW["measurements"]]
    assert len(ids) == len(set(ids))
    for row in RAW["measurements"]:
        assert set(row) == fields, row["id"]
        assert row["url"].startswith("https://") and row["table"].strip() and row["date"][:4].isdigit()
        assert row["gpu"] in hardware.GPUS and row["model"] and row["engine"] and row["value"] > 0
        assert row["weight_dtype"] in roofline.WEIGHT_FORMATS and row["kv_dtype"] in roofline.KV_FORMATS
        if row["metric"] == "output_tokens_per_s":
            assert row["input_tokens"] and row["output_tokens"], row["id"]
    for name, entry in RAW["models"].items():
        assert "shipped" in entry or entry["source"].startswith("https://huggingface.co/"), name
    # several sources, several engines, today's GPUs and formats
    assert len({row["url"] for row in RAW["measurements"]}) >= 5
    assert {"B200", "GB200", "H800-SXM", "RTX-PRO-6000"} <= {row["gpu"] for row in RAW["measurements"]}
    assert {"int4", "int8", "nvfp4", "fp8", "bf16"} <= {row["weight_dtype"] for row in RAW["measurements"]}


def test_gpt_fast_bound_by_hand():
    # Llama 2 7B (config.json: hidden 4096, 32 layers, MLP 11008, vocab 32000, untied): a decode step reads every
    # weight but the input embedding, 2 bytes each, through the A100's 2.039 TB/s; 200 tokens after a 5-token
    # prompt add under 1 % (the KV cache and activations).
    h, L, ff, V = 4096, 32, 11008, 32000
    read = L * (4 * h * h + 3 * h * ff + 2 * h) + h + V * h
    per_token = 2.039e12 / (2 * read)
    c = BY_ID["gpt-fast-7b-bf16"]
    assert c.bound == pytest.approx(per_token, rel=0.01) and c.bound < per_token
    assert c.ratio == pytest.approx(104.9 / per_token, rel=0.01)
    # int8 weights halve the bytes, so the bound doubles (within the same 1 %)
    assert BY_ID["gpt-fast-7b-int8"].bound == pytest.approx(2 * per_token, rel=0.02)


def test_kernel_bounds_are_the_peaks():
    # FlashAttention-3 (arXiv:2407.08608): 740 TFLOP/s in FP16 on an H100, "75 % utilization" of 989.4
    assert BY_ID["fa3-fp16"].bound == 989.4 and round(BY_ID["fa3-fp16"].ratio, 2) == 0.75
    # FlashMLA: 3000 GB/s on an H800 SXM5, whose bandwidth is 3.35 TB/s
    flashmla = BY_ID["flashmla-memory-bound"]
    assert flashmla.bound == pytest.approx(3350) and flashmla.ratio == pytest.approx(3000 / 3350)


def test_serving_bound_runs_the_largest_concurrency_that_fits():
    # Llama 3.1 8B in FP8 on one H100, 128 in and 2,048 out: weights 8.03e9 bytes, each sequence's FP8 cache
    # 2,176 x 32 layers x 2 x 8 heads x 128 bytes; the engine ran flat out, so the bound takes all that fits.
    m = measurements.model("Llama-3.1-8B")
    per_sequence = (128 + 2048) * 32 * 2 * 8 * 128
    fits = math.floor((80e9 - m.params().total) / per_sequence)
    bound = roofline.serving_throughput(m, 128, 2048, gpu="H100-SXM", dtype="fp8")
    assert bound.concurrency == fits
    assert BY_ID["trtllm-8b-h100-128-2048"].bound == pytest.approx(bound.output_tokens_per_s)
    # fewer sequences in flight can only lower the bound
    fewer = roofline.serving_throughput(m, 128, 2048, concurrency=fits // 4, gpu="H100-SXM", dtype="fp8")
    assert fewer.output_tokens_per_s < bound.output_tokens_per_s


def test_bad_rows_are_refused(monkeypatch):
    bad = dict(RAW["measurements"][0], metric="joules")
    monkeypatch.setattr(measurements, "_raw", lambda: {"models": RAW["models"], "measurements": [bad]})
    with pytest.raises(ValueError, match="joules"):
        measurements.load()
    bad = dict(RAW["measurements"][0], trick="magic")
    monkeypatch.setattr(measurements, "_raw", lambda: {"models": RAW["models"], "measurements": [bad]})
    with pytest.raises(ValueError, match="magic"):
        measurements.load()
    with pytest.raises(ValueError, match="no model"):
        measurements.model.__wrapped__("GPT-9")
