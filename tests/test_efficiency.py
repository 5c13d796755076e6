"""From a bound to an expected range (chapter2.efficiency): efficiencies by setup, leave-one-out, the stored copy.

The expected values are worked here from the measured values and the catalog's peaks, or re-implemented apart
from the module (the grouping and the leave-one-out loop), never taken from the functions under test.
"""

import json
import statistics
from importlib import resources

import pytest

from chapter2 import efficiency, measurements

BY_ID = {c.measurement.id: c for c in measurements.compare()}
KERNELS = {"flashmla-compute-bound-v1": 580 / 989.4, "flashmla-compute-bound-v2": 660 / 989.4,
           "fa3-fp16": 740 / 989.4, "fa3-fp8": 1200 / 1978.9}  # measured TFLOP/s over the H800/H100 dense peaks


def test_compute_bound_kernels_reach_59_to_75_percent_of_their_peak():
    e = efficiency.fit("kernel, compute bound")
    assert dict(zip(e.ids, e.values, strict=True)) == pytest.approx(KERNELS)
    assert (e.low, e.high) == pytest.approx((580 / 989.4, 740 / 989.4))
    assert e.median == pytest.approx(statistics.median(KERNELS.values()))


def test_setups_split_by_what_was_measured_and_the_gpu_count():
    def mine(m):  # the setups, re-stated
        if m.trick is not None or m.metric == "input_tokens_per_s":
            return None
        kind = {"tokens_per_s_per_sequence": "one sequence", "output_tokens_per_s": "serving"}.get(m.metric)
        if kind is None:
            return "kernel, compute bound" if m.metric == "kernel_tflops" else "kernel, memory bound"
        return f"{kind}, {'several GPUs' if m.n_gpus > 1 else '1 GPU'}"

    for setup in efficiency.SETUPS:
        ids = [i for i, c in BY_ID.items() if mine(c.measurement) == setup]
        e = efficiency.fit(setup)
        assert list(e.ids) == ids
        assert e.values == pytest.approx([BY_ID[i].measurement.value / BY_ID[i].bound for i in ids])
    # no row with a trick is used: Medusa beats its bound by the drafted tokens the bound leaves out
    used = {i for s in efficiency.SETUPS for i in efficiency.fit(s).ids}
    assert "medusa-405b-h200" not in used and "deepseek-prefill-h800-node" not in used
    assert len(used) == sum(1 for c in BY_ID.values() if mine(c.measurement))


def test_leave_one_out_by_hand_for_a_kernel_row():
    # fa3-fp16 predicted from the other three compute-bound kernels: 989.4 x their median (0.606) = 600 TFLOP/s
    others = [v for k, v in KERNELS.items() if k != "fa3-fp16"]
    p = next(p for p in efficiency.leave_one_out() if p.id == "fa3-fp16")
    assert p.predicted == pytest.approx(989.4 * statistics.median(others))
    assert p.error == pytest.approx(abs(989.4 * statistics.median(others) - 740) / 740)
    # the one memory-bound kernel has no other row of its setup: its family (every kernel) stands in
    lone = next(p for p in efficiency.leave_one_out() if p.id == "flashmla-memory-bound")
    assert lone.used == "kernel, any"
    assert lone.predicted == pytest.approx(3350 * statistics.median(KERNELS.values()))


def test_leave_one_out_median_and_worst_error_re_implemented():
    groups = {}
    for p in efficiency.leave_one_out():
        groups.setdefault(p.setup, []).append(p.id)
    errors = []
    for setup, ids in groups.items():
        for i in ids:
            others = [BY_ID[j].ratio for j in ids if j != i]
            if not others:  # fall back to the family, as the module says
                family = setup.split(",")[0]
                others = [BY_ID[j].ratio for s, js in groups.items() if s.startswith(family) for j in js if j != i]
            predicted = BY_ID[i].bound * statistics.median(others)
            errors.append(abs(predicted - BY_ID[i].measurement.value) / BY_ID[i].measurement.value)
    median, worst = efficiency.loo_errors()  # against the bound with communication between GPUs
    assert median == pytest.approx(statistics.median(errors))
    assert worst == pytest.approx(max(errors))
    assert len(errors) == 30


def test_expected_range_divides_the_bound_and_never_beats_it():
    fast, slow = efficiency.expected(1.0, "kernel, compute bound")
    assert (fast, slow) == pytest.approx((989.4 / 740, 989.4 / 580))
    for setup in efficiency.SETUPS:
        fast, slow = efficiency.expected(2e-3, setup)
        assert 2e-3 <= fast <= slow
    assert efficiency.phase_setup("prefill") == "kernel, compute bound"
    assert efficiency.phase_setup("decode", batch=1, n_gpus=8) == "one sequence, several GPUs"
    assert efficiency.phase_setup("decode", batch=64) == "serving, 1 GPU"
    with pytest.raises(ValueError, match="phase"):
        efficiency.phase_setup("train")
    with pytest.raises(ValueError, match="setup"):
        efficiency.fit("batch of one")


def test_the_stored_copy_equals_the_fit():
    stored = json.loads(resources.files("chapter2").joinpath("data", "efficiency.json").read_text(encoding="utf-8"))
    assert set(stored["setups"]) == set(efficiency.SETUPS)
    for setup in efficiency.SETUPS:
        e, kept = efficiency.fit(setup), efficiency.published(setup)
        assert (kept.setup, kept.ids) == (e.setup, e.ids), (
            f"data/efficiency.json is stale for {setup!r}: run python -m chapter2.efficiency")
        assert kept.values == pytest.approx(e.values, rel=1e-9), (
            f"data/efficiency.json is stale for {setup!r}: run python -m chapter2.efficiency")


def test_calculators_show_an_expected_range_beside_each_bound():
    from chapter2 import calculators
    from chapter2.format import duration

    result = calculators.evaluate("roofline", {})
    out, numbers = result["outputs"], result["numbers"]
    ttft = numbers["prefill_time (s)"]
    # prefill: the compute-bound kernels' 58.6 % to 74.8 % of their peaks, labelled as an optimistic stand-in
    assert numbers["ttft_expected_fast (s)"] == pytest.approx(ttft / (740 / 989.4))
    assert numbers["ttft_expected_slow (s)"] == pytest.approx(ttft / (580 / 989.4))
    assert out["ttft"] == duration(ttft)  # the bound itself is unchanged
    assert out["ttft_expected"].startswith(f"{duration(ttft / (740 / 989.4))} to {duration(ttft / (580 / 989.4))}: "
                                           "the bound ÷ 59 % to 75 %")
    assert "optimistic" in out["ttft_expected"] and "4 compute-bound kernels" in out["ttft_expected"]
    labels = {o.key: o.label for o in calculators.REGISTRY["roofline"].outputs}
    assert labels["ttft"].endswith("lower bound") and labels["ttft_expected"].endswith("expected range (not a bound)")
    # decode at batch 1 on one GPU: gpt-fast's five one-GPU runs
    e = efficiency.published("one sequence, 1 GPU")
    assert e.ids == ("gpt-fast-7b-bf16", "gpt-fast-7b-int8", "gpt-fast-7b-int4", "gpt-fast-70b-int8",
                     "gpt-fast-70b-int4")
    tpot = numbers["decode_time (s)"]
    assert numbers["tpot_expected_slow (s)"] == pytest.approx(tpot / e.low)
    assert "5 published runs of one sequence on one GPU" in out["tpot_expected"]
    # a batch of 64 on two GPUs is a server on several GPUs
    wide = calculators.evaluate("roofline", {"batch": "64", "n_gpus": "2"})
    assert "published servers on several GPUs" in wide["outputs"]["tpot_expected"]
    # on several GPUs the range divides the bound with its communication (the step's all-reduces included)
    assert "the bound with communication ÷" in wide["outputs"]["tpot_expected"]
    assert "communication" not in out["tpot_expected"]
    assert wide["numbers"]["decode_time (s)"] == pytest.approx(
        wide["numbers"]["decode_time_without_communication (s)"] + wide["numbers"]["decode_communication (s)"])
    assert wide["numbers"]["tpot_expected_fast (s)"] == pytest.approx(
        wide["numbers"]["decode_time (s)"] / efficiency.published("serving, several GPUs").high)
    step = calculators.evaluate("decode_batching", {"batch": "32"})
    assert step["numbers"]["step_expected_fast (s)"] == pytest.approx(
        step["numbers"]["decode_time (s)"] / efficiency.published("serving, 1 GPU").high)


def test_the_roofline_calculator_names_attentions_limiting_roof():
    from chapter2 import calculators

    # H100, FP16, d = 128: the exponentials take 989.4e12 / (512 x 132 x 16 x 1.83e9) = 50 % of the matmul time
    result = calculators.evaluate("roofline", {})
    assert "FlashAttention: tensor cores bound (exponentials 50 % of matmul time)" in result["outputs"]["attention"]
    assert result["numbers"]["exponential_time_over_matmul_time (%)"] == pytest.approx(
        100 * 989.4e12 / (512 * 132 * 16 * 1.83e9))
    # B200 at d = 64: 2.25e15 / (256 x 5e12) = 176 %, the exponentials limit
    b200 = calculators.evaluate("roofline", {"gpu": "B200", "head_dim": "64"})["outputs"]["attention"]
    assert "FlashAttention: exponentials bound (exponentials 176 % of matmul time)" in b200
    l40s = calculators.evaluate("roofline", {"gpu": "L40S"})["outputs"]["attention"]
    assert "no exponential rate in the catalog" in l40s


def test_chunked_prefill_shows_an_expected_range_beside_its_bounds():
    from chapter2 import calculators
    from chapter2.format import duration

    stored = json.loads(resources.files("chapter2").joinpath("data", "efficiency.json").read_text(encoding="utf-8"))
    servers = stored["setups"]["serving, 1 GPU"]["values"]  # the 9 TensorRT-LLM runs on one GPU
    assert len(servers) == 9
    result = calculators.evaluate("chunked_prefill", {})
    n, out = result["numbers"], result["outputs"]["expected"]
    # the prompt's chunks ride in a server's steps: both bounds divide by the servers' best and worst shares
    assert n["ttft_expected_fast (s)"] == pytest.approx(n["ttft (s)"] / max(servers))
    assert n["ttft_expected_slow (s)"] == pytest.approx(n["ttft (s)"] / min(servers))
    assert n["tpot_expected_slow (s)"] == pytest.approx(n["tpot (s)"] / min(servers))
    assert out == (f"first token {duration(n['ttft (s)'] / max(servers))} to {duration(n['ttft (s)'] / min(servers))}; "
                   f"each output token {duration(n['tpot (s)'] / max(servers))} to "
                   # (the lowest, 36 %: Llama 3.3 70B on a DGX B200, 9,922 tokens/s against its bound at 8 TB/s)
                   f"{duration(n['tpot (s)'] / min(servers))}: the bounds ÷ 36 % to 64 %, what 9 published servers on "
                   "one GPU reached")
    # nothing decoding: the chunks are a prefill alone, the compute-bound kernels' optimistic range
    alone = calculators.evaluate("chunked_prefill", {"decode_batch": "0"})
    assert alone["numbers"]["ttft_expected_fast (s)"] == pytest.approx(alone["numbers"]["ttft (s)"] / (740 / 989.4))
    assert "tpot_expected_fast (s)" not in alone["numbers"] and "optimistic" in alone["outputs"]["expected"]
    assert alone["outputs"]["expected"].split(":")[1].startswith(" the bound ÷")
    # on four GPUs: the servers on several GPUs, against the bounds with communication
    wide = calculators.evaluate("chunked_prefill", {"n_gpus": "4"})["outputs"]["expected"]
    assert "the bounds with communication ÷ 18 % to 49 %, what 6 published servers on several GPUs" in wide


def test_the_request_timeline_shows_expected_ranges_beside_its_bounds():
    from chapter2 import calculators

    stored = json.loads(resources.files("chapter2").joinpath("data", "efficiency.json").read_text(encoding="utf-8"))
    one = stored["setups"]["one sequence, 1 GPU"]["values"]  # gpt-fast's five runs at batch 1
    result = calculators.evaluate("request_timeline", {"batch": "1"})
    n, out = result["numbers"], result["outputs"]
    assert n["ttft_expected_fast (s)"] == pytest.approx(n["ttft (s)"] / (740 / 989.4))  # the kernels' best share
    assert n["tpot_expected_fast (s)"] == pytest.approx(n["first_decode_time (s)"] / max(one))
    assert n["tpot_expected_slow (s)"] == pytest.approx(n["first_decode_time (s)"] / min(one))
    assert out["tpot_expected"].startswith("at the first decode step, ")
    assert "5 published runs of one sequence on one GPU" in out["tpot_expected"]
    assert "9 published servers on one GPU" in calculators.evaluate("request_timeline", {})["outputs"]["tpot_expected"]
    only = calculators.evaluate("request_timeline", {"output_tokens": "1"})
    assert only["outputs"]["tpot_expected"] == "no decode step" and "tpot_expected_fast (s)" not in only["numbers"]


def test_the_page_names_the_calculators_with_an_expected_range():
    from pathlib import Path

    from chapter2 import calculators

    doc = (Path(__file__).resolve().parents[1] / "docs" / "bottlenecks.md").read_text(encoding="utf-8")
    assert "the calculators show one beside each prefill\nand decode bound" in doc
    ranged = {name for name, calc in calculators.REGISTRY.items()
              if any("expected range" in o.label.lower() for o in calc.outputs)}
    assert ranged == {"roofline", "decode_batching", "chunked_prefill", "request_timeline"}
    said = " ".join(doc.split("The ranges stand beside the")[1].split("calculators' bounds")[0].split())
    assert said == "roofline, decode-batching, chunked-prefill and request-timeline"
