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
        assert fields <= set(row) <= fields | {"system", "measured_model"}, row["id"]
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


def test_multi_gpu_rows_pay_for_communication_and_still_stay_under_their_bounds():
    multi = [c for c in BY_ID.values() if c.measurement.n_gpus > 1]
    assert len(multi) >= 10
    for c in BY_ID.values():
        if c.measurement.trick is None:  # with communication and without, no honest row beats its bound
            assert c.ratio <= 1.05 and c.ratio_without_communication <= 1.05, c.measurement.id
        if c.measurement.n_gpus == 1 or c.measurement.metric.startswith("kernel"):
            assert c.bound == pytest.approx(c.bound_without_communication, rel=1e-12) and c.link == ""
            assert c.communication_share == pytest.approx(0, abs=1e-9)
    for c in multi:
        assert c.bound <= c.bound_without_communication and c.link, c.measurement.id
        assert 0 <= c.communication_share < 1
    # every tensor-parallel row pays something; DeepSeek's expert-parallel prefill hides its all-to-alls behind the
    # computation of a large batch, so its input-throughput bound does not move
    assert all(c.bound < c.bound_without_communication for c in multi if c.measurement.parallel == "sharded")
    deepseek = BY_ID["deepseek-prefill-h800-node"]
    assert deepseek.measurement.parallel == "expert" and deepseek.bound == deepseek.bound_without_communication


def test_gpt_fast_tensor_parallel_bound_by_hand():
    # Llama 2 7B on 8 A100s: each of the 200 tokens (the 5-token prefill, then 199 decode steps) runs 2 all-reduces
    # in each of the 32 layers. A ring of 8 on NVLink 3 (600 GB/s both ways, 300 each way): 14 steps of 0.6 us and
    # 7/4 of the message, 4,096 hidden x 2 bytes per token.
    def ring(nbytes):
        return 14 * 0.6e-6 + 7 / 4 * nbytes / 300e9

    talk = 64 * ring(5 * 4096 * 2) + 199 * 64 * ring(4096 * 2)
    c = BY_ID["gpt-fast-7b-tp8"]
    assert 1 / c.bound == pytest.approx(1 / c.bound_without_communication + talk / 200)
    assert c.link == "NVLink 3"
    # the share of the gap: the measured 328.4 tokens/s is 1 / 328.4 s a token, the bound without communication
    # 1 / 1,229 (the 8 GPUs' bandwidth over the weights); communication adds talk / 200 of that gap
    assert c.measurement.value == pytest.approx(328.4, abs=0.05)
    gap = 1 / c.measurement.value - 1 / c.bound_without_communication
    assert c.communication_share == pytest.approx((talk / 200) / gap)


def test_the_figure_draws_both_ratios_for_rows_on_several_gpus():
    from chapter2.host.figures import bounds

    data = bounds.rows()
    assert len(data) == len(BY_ID)
    by_label = {}
    for _, label, ratio, _, without in data:
        by_label[label] = (ratio, without)
    ratio, without = by_label["Llama-2-7B BF16, 8×A100-SXM"]
    c = BY_ID["gpt-fast-7b-tp8"]
    assert (ratio, without) == (c.ratio, c.ratio_without_communication) and without < ratio
    assert by_label["Llama-2-7B BF16, A100-SXM"][1] is None  # one GPU: nothing to add
    assert bounds._value_text(0.444, 0.267) == "0.27 → 0.44" and bounds._value_text(0.72, 0.7201) == "0.72"


def test_mfu_and_mbu_of_a_decode_row_by_hand():
    # gpt-fast decoding Llama 2 7B in BF16 on one A100 at 104.9 tokens/s: each token reads the weights once
    # (all but the input embedding, 2 bytes each) and does 2 FLOPs per weight it multiplies; the KV cache and
    # activations of a 5 + 200 token sequence add under 1 %.
    h, L, ff, V = 4096, 32, 11008, 32000
    read = L * (4 * h * h + 3 * h * ff + 2 * h) + h + V * h
    body, head = L * (4 * h * h + 3 * h * ff), V * h
    # 200 tokens come from one prefill of the 5-token prompt (its blocks run 5 tokens, its LM head the last one)
    # and 199 decode steps: per token, (5 + 199) blocks' and 200 LM heads' matmuls over 200
    matmul = ((5 + 199) * body + 200 * head) / 200
    c = BY_ID["gpt-fast-7b-bf16"]
    assert c.mbu == pytest.approx(104.9 * 2 * read / 2.039e12, rel=0.01)
    assert c.mfu == pytest.approx(104.9 * 2 * matmul / 312e12, rel=0.01)
    assert c.mbu == pytest.approx(c.ratio, rel=0.01)  # memory bound: the bound is the bandwidth's
    assert c.mfu < 0.01


def test_mfu_and_mbu_of_kernels_and_servers():
    fa3 = BY_ID["fa3-fp16"]
    assert fa3.mfu == pytest.approx(740 / 989.4) and fa3.mbu is None
    flashmla = BY_ID["flashmla-memory-bound"]
    assert flashmla.mbu == pytest.approx(3000 / 3350) and flashmla.mfu is None
    # Llama 3.1 8B in FP8, 128 in and 128 out on one H100: compute bound, so its MFU is its ratio; each output token
    # costs at least 2 FLOPs per weight of a decode step, so MFU >= 28,312 tokens/s x 2 x 8.0e9 / 1,978.9e12
    short = BY_ID["trtllm-8b-h100-128-128"]
    assert short.mfu == pytest.approx(short.ratio, rel=1e-9) and short.mbu < short.mfu
    assert short.mfu > 28312 * 2 * 7.5e9 / 1978.9e12
    # an 8-GPU row counts all eight GPUs' peak
    qwen = BY_ID["trtllm-qwen3-235b-h200-tp8-fp8"]
    assert 0 < qwen.mfu < 1 and 0 < qwen.mbu < 1


def test_rows_with_a_trick_or_without_a_prompt_length_say_nothing_they_cannot_know():
    for row_id in ("medusa-405b-h200", "medusa-70b-h200", "gpt-fast-70b-speculative", "deepseek-prefill-h800-node"):
        c = BY_ID[row_id]
        assert c.mbu is None, row_id
    assert all(c.mfu is None for c in BY_ID.values() if c.measurement.trick is not None)
    for c in BY_ID.values():
        for share in (c.mfu, c.mbu):
            assert share is None or 0 < share <= 1.05, c.measurement.id

TRTLLM = "https://github.com/NVIDIA/TensorRT-LLM/blob/00f37686aa854010d68bcbd0f4ab000221541ca6/docs/source/performance/perf-overview.md"


def test_a_bound_uses_the_figures_of_the_system_the_row_ran_on_and_says_which():
    """issue 32: TensorRT-LLM's perf overview lists its hardware: 'B200 180GB (DGX B200)' and 'GB200 192GB (GB200
    NVL72)'. A DGX B200 has 64 TB/s of HBM3e over 8 GPUs (its page), 8 TB/s a GPU against the HGX datasheet's 7.7
    the catalog keeps; a GB200 there holds 192 GB against the NVL72 datasheet's 186. The bounds of those rows use
    the system's figures, which raises them (a more generous bound), and the table names the figure used."""
    from dataclasses import replace

    from chapter2.pages import bottlenecks as bn

    rows = [c for c in BY_ID.values() if c.measurement.url == TRTLLM and c.measurement.gpu in ("B200", "GB200")]
    assert {c.measurement.gpu for c in rows} == {"B200", "GB200"} and len(rows) >= 4
    table = {r[0].text if hasattr(r[0], "text") else str(r[0]): r for r in bn.measurements_table().rows}
    setups = [str(r[1]) for r in bn.measurements_table().rows]
    for c in rows:
        m = c.measurement
        gpu = measurements.gpu_of(m)
        if m.gpu == "B200":
            assert (gpu.bandwidth, gpu.memory_bytes) == (64e12 / 8, 180e9)
            assert hardware.GPUS["B200"].bandwidth == 7.7e12  # the catalog keeps the datasheet's
            assert any("DGX B200: 8 TB/s, 180 GB" in s for s in setups)
        else:
            assert (gpu.bandwidth, gpu.memory_bytes) == (8e12, 192e9)
            assert any("GB200 NVL72: 8 TB/s, 192 GB" in s for s in setups)
        catalog = replace(gpu, bandwidth=hardware.GPUS[m.gpu].bandwidth, memory_bytes=hardware.GPUS[m.gpu].memory_bytes)
        plain = roofline.serving_throughput(measurements.model(m.model), m.input_tokens, m.output_tokens,
                                            gpu=catalog, dtype=m.dtype, weight_dtype=m.weight_dtype,
                                            kv_dtype=m.kv_dtype, n_gpus=m.n_gpus, parallel=m.parallel)
        # more bandwidth or memory: a bound as high or higher (Llama 405B on four B200s is compute bound either way)
        assert c.bound >= plain.output_tokens_per_s
        if m.n_gpus == 1:  # one GPU holding 70B: the weights' and KV cache's reads, and the batch that fits, count
            assert c.bound > 1.01 * plain.output_tokens_per_s, m.id
    assert table  # the rows exist on the page


def test_rows_are_named_for_the_model_they_measured():
    """issue 32: the perf overview measured Llama 3.3 70B (its 'Llama 3.3 70B' table and the ModelOpt checkpoints
    nvidia/Llama-3.3-70B-Instruct-FP4/FP8), costed with Llama 3.1 70B's config.json, the same architecture: the table
    names the model measured and the config it was costed with."""
    from chapter2.pages import bottlenecks as bn

    for row in RAW["measurements"]:
        if row["table"].startswith("Llama 3.3 70B"):
            assert row["measured_model"] == "Llama 3.3 70B" and row["model"] == "Llama-3.1-70B"
    names = [str(r[0]) for r in bn.measurements_table().rows]
    assert sum("Llama 3.3 70B (costed as Llama-3.1-70B)" in n for n in names) == 5
    from chapter2.host.figures import bounds

    labels = [row[1] for row in bounds.rows()]  # the figure's bars name the model measured too
    assert sum(label.startswith("Llama 3.3 70B ") for label in labels) == 5
    assert sum(label.startswith("Llama-3.1-70B ") for label in labels) == 1  # Medusa's run measured Llama 3.1 70B


def test_the_vendor_and_lab_posts_are_cited_themselves_not_summaries_of_them():
    """issue 32: primary sources where they exist: NVIDIA's own post for the Medusa rows, DeepSeek's own write-up
    for its online service, NVIDIA's Blackwell Ultra post for the GB300's memory, bandwidth and dense FP4."""
    by_id = {row["id"]: row for row in RAW["measurements"]}
    for key in ("medusa-70b-h200", "medusa-405b-h200"):
        assert by_id[key]["url"].startswith("https://developer.nvidia.com/blog/low-latency-inference-chapter-1")
    assert by_id["deepseek-prefill-h800-node"]["url"].startswith(
        "https://github.com/deepseek-ai/open-infra-index/blob/")
    gb300 = hardware.GPUS["GB300"]
    assert gb300.memory_bytes == 288e9 and gb300.bandwidth == 8e12 and gb300.dense_flops["fp4"] == 15e15
    for figure in ("memory", "bandwidth", "dense_fp4"):
        assert gb300.sources[figure].startswith("https://developer.nvidia.com/blog/inside-nvidia-blackwell-ultra")
