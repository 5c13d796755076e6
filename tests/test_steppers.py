"""The three steppers: prefill and decode over the tiny model's KV cache, FlashAttention one tile at a
time, and a request on a timeline. The functions in the numpy core (`attention.flash_trace`,
`roofline.request_timeline`) against oracles and hand arithmetic; the calculators against them; the
step controls (`Field(stepper=True, max_from=...)`) as the build renders them; the grid and lane
drawings of `chapter2.charts`.

The browser side (first frame without JavaScript, stepping with buttons and keys, 375 px, axe) is
tests/browser/test_steppers_in_browser.py.
"""

from __future__ import annotations

import json
import math
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from chapter2 import calculators, charts, roofline, stepper
from chapter2.attention import attention, attention_reference, attention_weights, flash_attention, flash_trace
from chapter2.calculators import _charts, _registry
from chapter2.calculators import attention_opt as flash_calc
from chapter2.calculators import stepper as stepper_calc
from chapter2.calculators._registry import Field, FieldError
from chapter2.format import si
from chapter2.models import load_config

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"


def _qkv(seed, n_q, n_k, d, d_v=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d_v or d))


def _parse(fragment: str) -> ET.Element:
    return ET.fromstring(fragment.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


# ------------------------------------------------------------------ flash_trace


@pytest.mark.parametrize("n_q, n_k, d, d_v, block_q, block_k", [
    (16, 16, 4, 4, 4, 4),   # the stepper's sizes
    (16, 16, 8, 8, 4, 4),
    (7, 10, 3, 5, 3, 4),    # blocks that do not divide N, d_v != d, N_q != N_k
    (5, 9, 2, 2, 8, 1),     # one query block, one key per tile
])
def test_flash_trace_output_is_the_oracle_attention_in_every_query_block(n_q, n_k, d, d_v, block_q, block_k):
    q, k, v = _qkv(n_q * 100 + n_k, n_q, n_k, d, d_v)
    want = attention_reference(q[None, None], k[None, None], v[None, None])[0, 0]
    flash = flash_attention(q[None, None], k[None, None], v[None, None], block_q=block_q, block_k=block_k)[0, 0]
    for b in range(-(-n_q // block_q)):
        trace = flash_trace(q, k, v, q_block=b, block_q=block_q, block_k=block_k)
        assert (trace.q0, trace.q1) == (b * block_q, min((b + 1) * block_q, n_q))
        assert trace.tiles == -(-n_k // block_k) and len(trace.steps) == trace.tiles + 1
        assert trace.out.dtype == np.float64
        np.testing.assert_allclose(trace.out, want[trace.q0:trace.q1], rtol=0, atol=1e-13)
        np.testing.assert_allclose(trace.out, flash[trace.q0:trace.q1], rtol=0, atol=1e-13)


def test_every_step_holds_the_online_softmax_of_the_keys_seen_so_far():
    """After t tiles: m = max of the scores seen, l = sum of exp(s - m), acc = sum of exp(s - m) v, each row;
    rescale = exp(m_old - m_new); weights = softmax over the keys seen, the attention row at the end."""
    q, k, v = _qkv(3, 16, 16, 4)
    scores = q @ k.T / 2  # scale 1/sqrt(4)
    for b in range(4):
        trace = flash_trace(q, k, v, q_block=b)
        rows = scores[4 * b:4 * b + 4]
        start = trace.steps[0]
        assert np.all(start.m_new == -np.inf) and not start.l_i.any() and not start.acc.any() and start.k1 == 0
        for t, step in enumerate(trace.steps[1:], start=1):
            assert (step.k0, step.k1) == (4 * (t - 1), 4 * t)
            seen = rows[:, :4 * t]
            m = seen.max(axis=1)
            np.testing.assert_allclose(step.scores, rows[:, step.k0:step.k1], atol=1e-14)
            np.testing.assert_array_equal(step.m_new, np.maximum(step.m_old, step.scores.max(axis=1)))
            np.testing.assert_allclose(step.m_new, m, atol=1e-14)
            np.testing.assert_allclose(step.l_i, np.exp(seen - m[:, None]).sum(axis=1), rtol=1e-13)
            np.testing.assert_allclose(step.acc, np.exp(seen - m[:, None]) @ v[:4 * t], rtol=1e-12, atol=1e-13)
            np.testing.assert_allclose(step.rescale, np.exp(step.m_old - step.m_new), rtol=1e-15)
            if t == 1:
                assert not step.rescale.any()  # nothing accumulated before the first tile
            else:
                np.testing.assert_array_equal(step.m_old, trace.steps[t - 1].m_new)
                assert np.all((step.rescale == 1) == (step.m_new == step.m_old))
            np.testing.assert_allclose(step.p, np.exp(step.scores - step.m_new[:, None]), rtol=1e-15)
            softmax_so_far = np.exp(seen - m[:, None]) / np.exp(seen - m[:, None]).sum(axis=1, keepdims=True)
            np.testing.assert_allclose(step.weights[:, :4 * t], softmax_so_far, atol=1e-14)
            assert not step.weights[:, 4 * t:].any()
        final = attention_weights(q[None, None], k[None, None])[0, 0, 4 * b:4 * b + 4]
        np.testing.assert_allclose(trace.steps[-1].weights, final, atol=1e-7)  # attention_weights runs in float32
    # at least one row of this example changes its max after the first tile (what the stepper shows)
    assert any((s.rescale < 1).any() for b in range(4) for s in flash_trace(q, k, v, q_block=b).steps[2:])


def test_bytes_are_the_hand_counts():
    """N = 16 keys in tiles of 4, a block of 4 queries, FP16 (2 bytes).

    d = 4: Q block 4 x 4 x 2 = 32 B; a K/V tile 4 keys x (4 + 4) x 2 = 64 B; O block 32 B; standard attention
    also writes S (4 x 4), reads it, writes P, reads it: 4 x 16 x 2 = 128 B per tile.
    d = 8: Q block 64 B, a tile 4 x 16 x 2 = 128 B, O block 64 B; S and P still 128 B per tile.
    """
    q4, k4, v4 = _qkv(0, 16, 16, 4)
    trace = flash_trace(q4, k4, v4, q_block=1)
    assert [s.hbm_bytes for s in trace.steps] == [32, 96, 160, 224, 320]  # ... + 64 per tile, + 32 for O at the end
    assert [s.standard_bytes for s in trace.steps] == [32, 224, 416, 608, 832]  # ... + 64 + 128 per tile, + 32
    q8, k8, v8 = _qkv(0, 16, 16, 8)
    trace8 = flash_trace(q8, k8, v8, q_block=3)
    assert [s.hbm_bytes for s in trace8.steps] == [64, 192, 320, 448, 640]
    assert [s.standard_bytes for s in trace8.steps] == [64, 320, 576, 832, 1152]
    assert [s.hbm_bytes for s in flash_trace(q4, k4, v4, dtype_bytes="fp32").steps] == [64, 192, 320, 448, 640]
    # over the 4 query blocks, standard attention's extra traffic is its N x N score and probability matrices,
    # each written once and read once (4 N^2 numbers): the chapter's count minus FlashAttention's ideal 4 N d
    extra = sum(flash_trace(q4, k4, v4, q_block=b).steps[-1].standard_bytes
                - flash_trace(q4, k4, v4, q_block=b).steps[-1].hbm_bytes for b in range(4))
    assert extra == 4 * 16 * 16 * 2 == 2048
    assert extra == roofline.attention_intensity(16, 4).bytes - roofline.flash_attention_intensity(16, 4).bytes


def test_flash_trace_refuses_bad_input():
    q, k, v = _qkv(0, 8, 8, 4)
    with pytest.raises(ValueError, match="q_block must be below 2"):
        flash_trace(q, k, v, q_block=2)
    with pytest.raises(ValueError, match="must be non-empty and agree"):
        flash_trace(q, k[:, :3], v)
    with pytest.raises(ValueError, match="must be non-empty and agree"):
        flash_trace(q, k, v[:5])
    with pytest.raises(ValueError, match="2 dimensions"):
        flash_trace(q[None], k, v)
    with pytest.raises(ValueError):
        flash_trace(q, k, v, block_k=0)
    with pytest.raises(ValueError):
        flash_trace(q, k, v, dtype_bytes="int3")
    q32, k32, v32 = (x.astype(np.float32) for x in (q, k, v))
    out = flash_trace(q32, k32, v32).out
    assert out.dtype == np.float64  # float32 inputs, float64 arithmetic
    np.testing.assert_allclose(out, attention_reference(q32[None, None], k32[None, None], v32[None, None])[0, 0, :4],
                               atol=1e-13)
    np.testing.assert_allclose(out, attention(q32[None, None], k32[None, None], v32[None, None])[0, 0, :4], atol=1e-6)


# ------------------------------------------------------------------ request_timeline


def test_request_timeline_is_roofline_prefill_then_one_decode_per_token():
    P, n, batch = 2048, 40, 8
    tl = roofline.request_timeline("Llama-3.1-8B", P, n, batch=batch, gpu="H100-SXM")
    pre = roofline.prefill("Llama-3.1-8B", P, batch=batch, gpu="H100-SXM")
    assert tl.ttft == pre.time and tl.prefill.flops == pre.flops
    assert len(tl.decode) == n - 1 and len(tl.token_times) == n
    t = pre.time
    for k in range(1, n):  # decode step k: context P + k (the token going in counted), gives token k + 1
        step = roofline.decode("Llama-3.1-8B", P + k, batch=batch, gpu="H100-SXM")
        assert tl.decode[k - 1].time == step.time and tl.decode[k - 1].kv_bytes == step.kv_bytes
        t += step.time
        assert tl.token_times[k] == pytest.approx(t, rel=1e-15)
    config = load_config("Llama-3.1-8B")
    assert tl.contexts == tuple(P + k - 1 for k in range(1, n + 1))
    assert tl.kv_bytes == tuple(float(config.kv_cache_bytes(c, batch, "fp16")) for c in tl.contexts)
    assert tl.total_time == tl.token_times[-1]
    # memory bound decode at batch 8: each step reads the weights, so the time per token is ~ weights / bandwidth
    assert tl.decode[0].bound == "memory" and tl.decode[0].time > 16.06e9 / 3.35e12


def test_capacity_is_memory_left_over_one_sequence_s_kv_cache():
    """Llama-3.1-8B on an H100 (80 GB), 16-bit: weights 8,030,261,248 x 2 = 16,060,522,496 B; left
    80,000,000,000 - 16,060,522,496 = 63,939,477,504 B. KV per token: K and V x 32 layers x 8 KV heads x 128
    x 2 B = 131,072 B. At 2,048 tokens a sequence holds 268,435,456 B: 63,939,477,504 / 268,435,456 = 238.2,
    so 238 fit; at 2,048 + 256 - 1 = 2,303 tokens, 301,858,816 B each: 211.8, so 211."""
    tl = roofline.request_timeline("Llama-3.1-8B", 2048, 256, batch=8, gpu="H100-SXM")
    assert tl.weight_bytes == 16_060_522_496 and tl.memory == 80e9 and tl.memory_left == 63_939_477_504
    assert tl.kv_bytes_per_sequence(1) == 131_072
    assert tl.kv_bytes_per_sequence(2048) == 268_435_456 and tl.capacity(2048) == 238
    assert tl.contexts[-1] == 2303 and tl.capacity(2303) == 211
    assert tl.kv_bytes[0] == 8 * 268_435_456  # the batch's cache when the first token is out
    # H200 (141 GB): (141e9 - 16,060,522,496) / 268,435,456 = 465.4
    assert roofline.request_timeline("Llama-3.1-8B", 2048, 1, gpu="H200-SXM").capacity(2048) == 465
    big = roofline.request_timeline("DeepSeek-V3", 16, 2, gpu="H100-SXM")
    assert big.memory_left < 0 and big.capacity(16) == 0  # its weights alone do not fit


def test_one_output_token_is_the_prefill_alone_and_bad_input_is_refused():
    tl = roofline.request_timeline("Qwen3-8B", 100, 1)
    assert tl.decode == () and tl.token_times == (tl.ttft,) and tl.contexts == (100,)
    for kwargs, err in [(dict(prompt_tokens=0), ValueError), (dict(output_tokens=1.5), (TypeError, ValueError)),
                        (dict(batch=0), ValueError), (dict(gpu="H1"), (KeyError, ValueError)),
                        (dict(dtype="int3"), ValueError), (dict(model=3), TypeError)]:
        args = {"model": "Qwen3-8B", "prompt_tokens": 10, "output_tokens": 2, **kwargs}
        with pytest.raises(err):
            roofline.request_timeline(args.pop("model"), args.pop("prompt_tokens"), args.pop("output_tokens"), **args)


# ------------------------------------------------------------------ the calculators


def test_iter_steps_runs_a_pass_per_record_asked_for():
    model, tok = stepper.load()
    calls = []
    real = model.decode
    prompt = "The KV cache"
    passes = stepper.iter_steps(model, tok, prompt, 10)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(model, "decode", lambda *a: calls.append(1) or real(*a))
        first = [next(passes) for _ in range(4)]  # the prefill and three decode steps
        assert len(calls) == 3
    assert first == stepper.step_through(model, tok, prompt, 3) == stepper.step_through(model, tok, prompt, 10)[:4]
    with pytest.raises(ValueError, match="non-empty"):
        stepper.iter_steps(model, tok, "", 3)  # checked when called, not when the first record is asked for


def test_step_through_is_prefix_consistent_so_stepping_back_reuses_a_run():
    model, tok = stepper.load()
    for prompt, temperature in [("The KV cache stores the keys and values", 0.0), ("Decode one token", 0.9)]:
        long = stepper.step_through(model, tok, prompt, 12, temperature=temperature, seed=0)
        for n in (0, 1, 5, 12):
            assert stepper.step_through(model, tok, prompt, n, temperature=temperature, seed=0) == long[: n + 1]
    stepper_calc._RUNS.clear()
    far = calculators.compute("prefill_decode", {"n_steps": "20"})
    near = calculators.compute("prefill_decode", {"n_steps": "3"})  # from the run of 20, sliced
    stepper_calc._RUNS.clear()
    assert calculators.compute("prefill_decode", {"n_steps": "3"}) == near != far


def test_kv_grid_fills_the_prompt_block_at_prefill_then_one_column_per_decode_step():
    model, tok = stepper.load()
    prompt = calculators.get("prefill_decode").defaults()["prompt"]
    ids = tok.encode(prompt)
    P = len(ids)
    eos = [tok.special_tokens["<|endoftext|>"]]
    digests = set()
    for n in (0, 1, 2, 7):
        grid = calculators.compute("prefill_decode", {"n_steps": str(n)})["grid"]
        steps = stepper.step_through(model, tok, prompt, n, stop_ids=eos)
        assert grid["rows"] == [f"layer {i} {kv}" for i in range(4) for kv in "KV"]  # a key and a value per layer
        width = P + stepper_calc.MAX_STEPS + 1  # the prompt, a column per possible step, the chosen token
        assert len(grid["cols"]) == width
        tokens = [tok.token_text(i) for i in ids] + [s.token_text for s in steps]
        assert grid["cols"][:P + n + 1] == [t.replace(" ", "␣") for t in tokens] and not any(grid["cols"][P + n + 1:])
        for row in grid["cells"]:
            assert row[:P] == [[0, 1.0]] * P  # the prefill's block
            assert row[P:P + n] == [[1, 1.0]] * n  # one column per decode step
            assert row[P + n:] == [None] * (width - P - n)  # the chosen token's column is not cached yet
        (mark,) = grid["marks"]
        assert (mark["col0"], mark["col1"]) == ((0, P) if n == 0 else (P + n - 1, P + n))
        assert (mark["row0"], mark["row1"]) == (0, 8)
        assert f"caches a key and a value for {P + n} positions" in grid["summary"]
        digests.add(charts.digest(grid))
    assert len(digests) == 4


def test_the_text_shows_as_token_chips_this_pass_outlined_and_the_choice_dashed():
    """The prompt's tokens, then the tokens chosen so far, one chip each, coloured as the grid colours the cache
    (prompt: the prefill's, generated: a decode step's); the chosen token, not cached yet, dashed."""
    prompt = calculators.get("prefill_decode").defaults()["prompt"]
    tok, prompt_tokens = _prompt_tokens(prompt)
    P = len(prompt_tokens)
    greedy = stepper.step_through(*stepper.load(), prompt, 6)
    label = lambda t: t.replace(" ", "␣").replace("\n", "↵")  # noqa: E731
    heights = set()
    for n in (0, 1, 4, 6):
        data = calculators.compute("prefill_decode", {"n_steps": str(n)})["tokens"]
        chips = [s for s in data["shapes"]]
        assert [c["text"] for c in chips] == [label(t) for t in prompt_tokens] + [label(s.token_text) for s in greedy[:n + 1]]
        assert [c["color"] for c in chips] == [0] * P + [1] * n + [None]
        assert [c["line"] for c in chips[:-1]].count("thick") == (P if n == 0 else 1)
        assert chips[-1]["line"] == "dashed" and chips[P + n - 1]["line"] == "thick"  # the last input is outlined
        assert all(c["x"] + c["w"] <= charts.W - 4 + 1e-6 for c in chips)  # wrapped inside the drawing
        heights.add(data["height"])
        assert f"it chose {label(greedy[n].token_text)}, the next input" in data["summary"]
    assert len(heights) == 1  # the picture keeps its height while the stepper plays


def test_the_prefill_decode_numbers_and_the_dtype_remark_sit_behind_the_toggle():
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    page = directives.render_calculator("prefill_decode")
    more = page[page.index('<details class="c2-calc__more">'):]
    shown = page[:len(page) - len(more)]
    assert f"<summary>{stepper_calc.NUMBERS}</summary>" in more
    for key in ("step", "cache", "text"):
        assert f'data-output="{key}"' in more and f'data-output="{key}"' not in shown
    assert "float64" in more and "bf16" in more and "float64" not in shown and "bf16" not in shown
    out = calculators.compute("prefill_decode", {"n_steps": "3"})
    # the tiny model: K and V x 4 layers x 2 KV heads x 32 dims x 8 bytes (float64) = 4,096 B per token; 12 tokens
    # hold 49,152 B; in bf16 (2 bytes) a quarter, 12,288 B
    assert out["cache"].startswith("12 tokens × 4,096 B per token = 49.2 kB.")
    assert out["cache"].endswith("a server stores 16-bit numbers (bf16): 12.3 kB for this cache")


def test_kv_grid_of_a_long_prompt_shares_a_column():
    model, tok = stepper.load()
    prompt = "The KV cache stores the keys and values of every token in every layer, so decode reads it all again"
    P = len(tok.encode(prompt))
    grid = calculators.compute("prefill_decode", {"prompt": prompt, "n_steps": "2"})["grid"]
    shared = P + stepper_calc.MAX_STEPS + 1 - _charts.GRID_COLUMNS + 1
    assert shared > 1 and len(grid["cols"]) == _charts.GRID_COLUMNS and grid["cols"][0] == f"…{shared}"
    prompt_cols = P - shared + 1
    assert grid["cells"][0][:prompt_cols] == [[0, 1.0]] * prompt_cols
    assert grid["cells"][0][prompt_cols:prompt_cols + 2] == [[1, 1.0]] * 2
    assert grid["marks"][0]["col0"] == prompt_cols + 1


def test_flash_stepper_shows_flash_trace_and_the_hand_counted_bytes():
    for seed, d, block, tiles in [(0, 4, 1, 2), (7, 8, 3, 4), (11, 4, 0, 0), (5, 4, 2, 3)]:
        out = calculators.compute("flash_stepper", {"seed": str(seed), "d": str(d), "q_block": str(block),
                                                   "tiles": str(tiles)})
        q, k, v = flash_calc.flash_inputs(seed, d)
        trace = flash_trace(q, k, v, q_block=block, causal=True)
        assert trace.tiles == block + 1  # causal: query block b needs key tiles 0 .. b, the rest are skipped
        shown = min(tiles, trace.tiles)
        step = trace.steps[shown]
        lines = out["state"].splitlines()
        assert len(lines) == 4 and [line.split(":")[0] for line in lines] == [f"q{4 * block + r}" for r in range(4)]
        for r, line in enumerate(lines):
            assert f"| ℓ {flash_calc._n(step.l_i[r])} |" in line or tiles == 0
            assert f"acc [{', '.join(flash_calc._n(x) for x in step.acc[r])}]" in line or tiles == 0
        grid = out["tiles_chart"]
        assert grid["rows"] == [f"q{4 * block + r}" for r in range(4)] and len(grid["cols"]) == 16
        for r, row in enumerate(grid["cells"]):
            position = 4 * block + r
            assert all(c == [2, 0.45] for c in row[position + 1:])  # masked: after the query's own position
            assert all(c is None for c in row[4 * shown:position + 1])  # visible, not loaded yet
            assert all(c is not None and c[0] in (0, 1) for c in row[:min(4 * shown, position + 1)])
        assert [g["label"] for g in grid["groups"]] == ["tile 1", "tile 2", "tile 3", "tile 4"]  # in full, never cut
        skipped = [str(j + 1) for j in range(block + 1, 4)]
        assert grid["keys"][2]["label"].endswith(f"{' and '.join(skipped)} all masked, so skipped") == bool(skipped)
        assert out["bytes_chart"]["series"][0]["y"] == [s.hbm_bytes for s in trace.steps]
        assert out["bytes_chart"]["points"][0] == charts.point(shown, step.hbm_bytes, f"FlashAttention after {shown} tiles",
                                                              color=0)
        if tiles > trace.tiles:
            assert out["loaded"].startswith(f"Tiles {trace.tiles + 1} to 4: skipped.")
    two = calculators.compute("flash_stepper", {"tiles": "2"})  # query block 1 needs 2 tiles: the second is its last
    assert two["bytes"].startswith("FlashAttention: 192 B (Q block 32 B + 2 K/V tiles of 64 B + O block 32 B); "
                                   "standard attention: 448 B")
    # whole attention, N = 16, d = 4, FP16, no mask: standard (4 N^2 + 4 N d) x 2 = (1024 + 256) x 2 = 2,560 B;
    # FlashAttention: 4 query blocks x (Q block 16 + K and V 128 + O block 16 numbers) x 2 = 1,280 B
    assert "standard 2.56 kB, FlashAttention 1.28 kB" in two["bytes"]
    assert two["check"].startswith("O = acc / ℓ: q4 [") and two["check"].endswith("to 12 decimal places")
    one = calculators.compute("flash_stepper", {"tiles": "1"})
    assert one["check"] == "O = acc / ℓ once every tile is in: 1 to go"
    assert "μ −∞ | ℓ 0" in calculators.compute("flash_stepper", {"tiles": "0"})["state"]


def test_mu_and_l_have_their_own_axes_with_the_query_rows_named():
    """μ (a score) and ℓ (a sum of weights) on two charts, x = the query rows named q12 .. q15 (not numbered
    ticks), axes the same at every step of the block (only the marks move while it plays)."""
    q, k, v = flash_calc.flash_inputs(0, 4)
    trace = flash_trace(q, k, v, q_block=3, causal=True)
    frames = [calculators.compute("flash_stepper", {"q_block": "3", "tiles": str(t)}) for t in range(5)]
    names = [[0, "q12"], [1, "q13"], [2, "q14"], [3, "q15"]]
    for key in ("max_chart", "sum_chart"):
        assert all(f[key]["x_ticks"] == names for f in frames), key
        assert len({(tuple(f[key]["x_range"]), tuple(f[key]["y_range"])) for f in frames}) == 1, key
    finite = np.concatenate([s.m_new for s in trace.steps[1:]])
    lo, hi = frames[0]["max_chart"]["y_range"]
    assert lo < finite.min() and hi > finite.max()  # every μ of the block fits the fixed axis
    assert frames[0]["sum_chart"]["y_range"][1] >= max(s.l_i.max() for s in trace.steps)
    assert not frames[0]["max_chart"]["series"] and "μ = −∞" in frames[0]["max_chart"]["rules"][0]["label"]
    assert not frames[0]["sum_chart"]["series"] and "ℓ = 0" in frames[0]["sum_chart"]["rules"][0]["label"]

    data, step, before = frames[2], trace.steps[2], trace.steps[1]
    mu = {s["label"]: s for s in data["max_chart"]["series"]}
    assert mu["μ after this tile"]["y"] == [charts._r(v) for v in step.m_new]
    assert mu["μ before this tile"]["y"] == [charts._r(v) for v in before.m_new] and mu["μ before this tile"]["kind"] == "scatter"
    rose = [r for r in range(4) if step.m_new[r] > before.m_new[r]]
    assert rose and len(mu[""]["x"]) == 2  # a line from the old μ up to the new one, one per row that rose
    assert [s["x"][0] for s in data["max_chart"]["series"] if not s["label"]] == rose
    ell = {s["label"]: s for s in data["sum_chart"]["series"]}
    assert ell["ℓ before this tile"]["y"] == [charts._r(v) for v in before.l_i]
    assert ell["ℓ after this tile"]["y"] == [charts._r(v) for v in step.l_i]
    kept = ell["…of which the earlier tiles, rescaled by exp(μ_old − μ_new)"]["y"]
    for r in range(4):  # the earlier part is the old sum times exp(μ_old − μ_new): smaller exactly where μ jumped
        assert kept[r] == pytest.approx(before.l_i[r] * math.exp(before.m_new[r] - step.m_new[r]), rel=1e-5)
        assert (kept[r] < before.l_i[r] * (1 - 1e-5)) == (r in rose)  # _r keeps 6 digits
    svg = _parse(calculators.render_chart("flash_stepper", calculators.get("flash_stepper").outputs[3], data["max_chart"]))
    ticks = [t.text for t in svg.iter(f"{SVG}text")]
    assert {"q12", "q13", "q14", "q15"} <= set(ticks) and not {"3", "8"} & set(ticks)


def test_the_memory_picture_moves_one_tile_from_hbm_into_sram_per_step():
    """Query block 1 (rows 4 to 7) needs tiles 1 and 2 (causal): at step 0 its Q block moves in; at step t the
    t-th K/V tile moves (outlined), earlier ones are shaded as read; tiles 3 and 4 are skipped; at the last
    step O is written back. Worked from the block and the step alone."""
    moving, read = _charts.MOVING, _charts.READ
    for t in range(3):
        data = calculators.compute("flash_stepper", {"q_block": "1", "tiles": str(t)})["memory_chart"]
        cells = {s["text"]: s for s in data["shapes"] if s["text"]}
        assert cells["Q 4–7"]["color"] == (moving if t == 0 else read)
        for j, span in enumerate(["0–3", "4–7"]):
            for name in "KV":
                cell = cells[f"{name} {span}"]
                want = moving if j == t - 1 else read if j < t - 1 else -1
                assert cell["color"] == want and (cell["line"] == "thick") == (j == t - 1), (t, name, span)
        assert cells["K: skipped"]["line"] == "dashed" and cells["K: skipped"]["color"] is None
        assert sum(s["text"] == "V: skipped" for s in data["shapes"]) == 2
        assert (cells["O 4–7"]["color"] == moving) == (t == 2)  # written back once, after the last tile
        assert [a["text"] for a in data["arrows"]] == (["Q in"] if t == 0 else ["K, V in"] if t == 1
                                                       else ["K, V in", "O out"])
        sram = cells.get(f"K {4 * (t - 1)}–{4 * t - 1}\ntile {t}") if t else cells.get("K\nno tile yet")
        assert sram is not None and data["summary"].startswith("HBM holds Q, K, V and O of all 16 positions")
        assert "tiles 3 to 4 are skipped" in data["summary"]
    for t in (3, 4):  # past the block's last tile: that tile is outlined as skipped, nothing moves, O was written
        data = calculators.compute("flash_stepper", {"q_block": "1", "tiles": str(t)})["memory_chart"]
        assert not data["arrows"] and f"tile {t} holds keys after every row" in data["summary"]
        kv = [s for s in data["shapes"] if s["text"] in ("K: skipped", "V: skipped")]
        assert [s["line"] for s in kv] == ["dashed", "dashed", "thick", "thick"] if t == 4 else \
            ["thick", "thick", "dashed", "dashed"]
        cells = {s["text"]: s for s in data["shapes"] if s["text"]}
        assert cells["O 4–7"]["color"] == read and cells["K 4–7"]["color"] == read and cells["done:\nO written"]


def test_the_stepper_ends_at_the_naive_attention_of_its_rows():
    """At the last step the block's O = acc / ℓ is softmax(Q Kᵀ / √d, causal) V of its rows, worked here with
    plain numpy (no chapter2 code), and the Numbers toggle says so."""
    for seed, d, block in [(0, 4, 1), (3, 8, 3), (9, 4, 0)]:
        q, k, v = flash_calc.flash_inputs(seed, d)
        s = q @ k.T / math.sqrt(d)
        s[np.triu_indices(16, 1)] = -np.inf
        w = np.exp(s - s.max(axis=1, keepdims=True))
        naive = (w / w.sum(axis=1, keepdims=True)) @ v
        trace = flash_trace(q, k, v, q_block=block, causal=True)
        np.testing.assert_allclose(trace.out, naive[4 * block:4 * block + 4], rtol=0, atol=1e-12)
        out = calculators.compute("flash_stepper", {"seed": str(seed), "d": str(d), "q_block": str(block),
                                                   "tiles": str(block + 1)})
        assert out["check"].endswith("equal to the reference attention (float64) to 12 decimal places")
        assert out["caption"].endswith("the block's output goes back to HBM.")


def test_the_flash_numbers_sit_behind_a_closed_toggle():
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    page = directives.render_calculator("flash_stepper")
    more = page[page.index('<details class="c2-calc__more">'):]
    assert f"<summary>{flash_calc.NUMBERS}</summary>" in more and "<details class=\"c2-calc__more\" open" not in page
    for key in ("loaded", "state", "bytes", "check"):
        assert f'data-output="{key}"' in more and f'data-output="{key}"' not in page[:len(page) - len(more)]
    for key in ("caption", "memory_chart", "tiles_chart", "max_chart", "sum_chart", "bytes_chart"):
        assert f'data-output="{key}"' not in more


def test_causal_flash_trace_skips_the_tiles_after_the_block_and_equals_the_masked_oracle():
    q, k, v = _qkv(3, 16, 16, 8)
    want = attention_reference(q[None, None], k[None, None], v[None, None], causal=True)[0, 0]
    for block in range(4):
        trace = flash_trace(q, k, v, q_block=block, causal=True)
        assert trace.tiles == block + 1 and trace.visible_k == 4 * (block + 1)
        np.testing.assert_allclose(trace.out, want[4 * block:4 * block + 4], atol=1e-12)
    wide = flash_trace(q[:4], k, v, q_block=0, causal=True)  # 4 queries, the last 4 of 16 positions: every tile
    assert wide.tiles == 4 and wide.offset == 12
    with pytest.raises(TypeError, match="causal"):
        flash_trace(q, k, v, causal="yes")
    with pytest.raises(ValueError, match="at most as many queries"):
        flash_trace(q, k[:8], v[:8], causal=True)


def test_request_timeline_calculator_shows_the_roofline_timeline():
    raw = {"model": "Llama-3.1-8B", "gpu": "H100-SXM", "prompt_tokens": "2048", "output_tokens": "256", "batch": "8"}
    tl = roofline.request_timeline("Llama-3.1-8B", 2048, 256, batch=8, gpu="H100-SXM")
    first = calculators.compute("request_timeline", {**raw, "token": "1"})
    # the running text says what limits each phase in words (2.4 explains "compute bound" two pages later);
    # the numbers behind it sit in the Numbers toggle: 238 TFLOP at the H100's 989 TFLOP/s dense BF16, 3.35 TB/s
    assert first["ttft"] == "0.24 s: one pass over 8 × 2,048 prompt tokens; the GPU's arithmetic is the limit"
    assert first["tpot"].endswith(": reading the weights and the cache from memory is the limit")
    for text in (first["ttft"], first["tpot"], first["now"], first["capacity"], first["caption"]):
        assert "bound" not in text and "FLOP" not in text
    pre = roofline.prefill("Llama-3.1-8B", 2048, batch=8, gpu="H100-SXM")
    assert first["limits"].startswith(f"The prefill does {si(pre.flops, 'FLOP')} at 989 TFLOP/s and moves ")
    assert "compute bound" in first["limits"] and first["limits"].endswith("at 3.35 TB/s: memory bound.")
    assert first["capacity"].startswith("238 sequences: 80 GB − 16.1 GB of weights = 63.9 GB for KV caches")
    out = calculators.compute("request_timeline", {**raw, "token": "100"})
    assert out["now"].startswith(f"token 100 of 256, ready at {_charts._seconds(tl.token_times[99])}")
    assert "holds 2,147 tokens" in out["now"]
    chart = out["chart"]
    (point,) = chart["points"]
    assert (point["x"], point["y"]) == (charts._r(tl.token_times[99]), charts._r(tl.kv_bytes[99] / 1e9))
    prefill, decode, now = chart["lanes"]
    assert prefill["edges"] == [0.0, charts._r(tl.ttft)]
    # 255 decode steps in runs of 4 (at most charts.MAX_BLOCKS = 64 blocks): edges at tokens 1, 5, ..., 253, then the end
    assert len(decode["edges"]) == 65 and decode["edges"][-1] == charts._r(tl.total_time)
    assert decode["edges"][:2] == [charts._r(tl.token_times[0]), charts._r(tl.token_times[4])]
    assert now["edges"] == [charts._r(tl.token_times[98]), charts._r(tl.token_times[99])]
    assert chart["series"][0]["x"][0] == 0 and chart["series"][0]["y"][-1] == charts._r(tl.kv_bytes[-1] / 1e9)
    clamped = calculators.compute("request_timeline", {**raw, "output_tokens": "50", "token": "300"})
    assert clamped["now"].startswith("token 50 of 50")  # a step past the output is its last token
    long = calculators.compute("request_timeline", {**raw, "output_tokens": "2048"})["chart"]
    assert len(long["lanes"][1]["edges"]) <= charts.MAX_BLOCKS + 1
    assert "one block per 32 output tokens" in long["lanes"][1]["label"]  # 2,047 steps in 64 runs
    with pytest.raises(FieldError, match=r"1.34 TB, more than one H100-SXM holds \(80 GB\)") as err:
        calculators.compute("request_timeline", {"model": "DeepSeek-V3"})
    assert err.value.field == "gpu"
    with pytest.raises(FieldError, match="context of 131,072") as err:
        calculators.compute("request_timeline", {**raw, "prompt_tokens": "131000", "output_tokens": "100"})
    assert err.value.field == "prompt_tokens"


def test_stepping_only_redraws(monkeypatch):
    """A step forward runs one more decode pass of the tiny model, a step back none; the timeline is
    computed once for all its tokens (the browser redraws in Pyodide, a few times slower than CPython)."""
    model, _ = stepper.load()
    passes, real = [], model.decode
    monkeypatch.setattr(model, "decode", lambda *a: passes.append(1) or real(*a))
    stepper_calc._RUNS.clear()
    for n, new_passes in [(3, 3), (4, 1), (2, 0), (4, 0), (6, 2)]:
        before = len(passes)
        calculators.compute_json("prefill_decode", json.dumps({"n_steps": str(n)}))
        assert len(passes) - before == new_passes, n
    timelines, real_timeline = [], roofline.request_timeline
    monkeypatch.setattr(stepper_calc.roofline, "request_timeline", lambda *a, **k: timelines.append(1) or real_timeline(*a, **k))
    stepper_calc._TIMELINES.clear()
    for token in (1, 2, 50, 3):
        calculators.compute_json("request_timeline", json.dumps({"token": str(token)}))
    assert len(timelines) == 1


# ------------------------------------------------------------------ the step controls, as the build renders them


def test_step_fields_are_checked_when_registered():
    ok = [Field("n", "N", 8, min=1, max=20, integer=True),
          Field("k", "K", 2, kind="range", min=1, max=20, step=1, integer=True, stepper=True, max_from="n")]
    _registry._check_steppers("ok", ok)
    for bad in [Field("k", "K", 2, kind="number", min=1, max=20, integer=True, stepper=True),
                Field("k", "K", 2, kind="range", min=1, max=20, step=1, stepper=True),
                Field("k", "K", 2, kind="range", min=1, max=20, step=1, integer=True, max_from="nope"),
                Field("k", "K", 9, kind="range", min=1, max=20, step=1, integer=True, max_from="n")]:
        with pytest.raises(ValueError):
            _registry._check_steppers("bad", [ok[0], bad])


def test_every_stepper_has_one_caption_and_only_a_stepper_has_one():
    for name, calc in _registry.load_all().items():
        steps = [f for f in calc.fields if f.stepper]
        captions = [o for o in calc.outputs if o.kind == "caption"]
        assert len(captions) == len(steps) <= 1, name
    ok = [Field("n", "N", 0, kind="range", min=0, max=4, step=1, integer=True, stepper=True)]
    caption = [calculators.Output("caption", "This step", kind="caption")]
    _registry._check_steppers("ok", ok, caption)
    with pytest.raises(ValueError, match="exactly one caption"):
        _registry._check_steppers("no caption", ok, [calculators.Output("x", "X")])
    with pytest.raises(ValueError, match="exactly one caption"):
        _registry._check_steppers("no stepper", [Field("n", "N", 0)], caption)
    with pytest.raises(ValueError, match="a caption is always shown"):
        calculators.Output("caption", "This step", kind="caption", details="Numbers")
    with pytest.raises(ValueError, match="kind must be one of"):
        calculators.Output("x", "X", kind="table")
    for bad in ("two\nlines", "", "x" * (_registry.CAPTION_CHARS + 1), 3):
        with pytest.raises(RuntimeError, match="one line"):
            _registry._check_output("c", caption[0], bad)
    with pytest.raises(FieldError, match="not a finite number"):
        _registry._check_output("c", caption[0], "Step 3: nan")


def _prompt_tokens(prompt):
    model, tok = stepper.load()
    return tok, [tok.token_text(i) for i in tok.encode(prompt)]


def test_prefill_decode_captions_say_what_each_pass_wrote():
    """Step 0: the whole prompt in one pass, P columns; step k: the token chosen at step k - 1 goes in and
    the cache holds P + k positions; each names the token the pass chose."""
    prompt = calculators.get("prefill_decode").defaults()["prompt"]
    tok, prompt_tokens = _prompt_tokens(prompt)
    P = len(prompt_tokens)
    chosen = []
    for n in range(0, 6):
        caption = calculators.compute("prefill_decode", {"n_steps": str(n)})["caption"]
        picked = re.search(r"the model picks “(.*)”\.$", caption).group(1)
        chosen.append(picked)
        if n == 0:
            assert caption.startswith(f"Prefill: all {P} prompt tokens go through the model in one pass and fill "
                                      f"{P} cache columns in every layer")
        else:
            assert caption.startswith(f"Decode step {n}: one token, “{chosen[n - 1]}”, goes in; the cache grows by "
                                      f"one column, to {P + n} tokens;")
    greedy = stepper.step_through(*stepper.load(), prompt, 5)
    assert chosen == [s.token_text.replace(" ", "␣").replace("\n", "↵") for s in greedy]


def test_flash_captions_name_the_tile_and_the_rows_whose_maximum_rose():
    """Query block 3 of seed 0: tile t brings keys 4(t - 1) .. 4t - 1; a row is named where the largest score
    of the keys so far rose with this tile (worked from the scores themselves, not from the trace)."""
    q, k, v = flash_calc.flash_inputs(0, 4)
    scores = q[12:16] @ k.T / 2  # block 3: rows 12..15, every key visible to row 15 (causal)
    for t in range(0, 5):
        caption = calculators.compute("flash_stepper", {"q_block": "3", "tiles": str(t)})["caption"]
        if t == 0:
            assert caption == "Start: query rows q12 to q15 are copied from HBM into SRAM; no key seen yet."
            continue
        assert caption.startswith(f"Tile {t} of 4: K and V of keys {4 * (t - 1)} to {4 * t - 1} come into SRAM; ")
        masked = np.where(np.arange(16)[None, :] <= np.arange(12, 16)[:, None], scores, -np.inf)
        rose = [f"q{12 + r}" for r in range(4) if t > 1 and masked[r, :4 * t].max() > masked[r, :4 * (t - 1)].max()]
        if t == 1:
            assert "start from these scores" in caption
        elif rose:
            assert " and ".join(rose) in caption and "larger score" in caption
        else:
            assert "no row finds a larger score" in caption
        assert caption.endswith("the block's output goes back to HBM.") == (t == 4)
    skipped = calculators.compute("flash_stepper", {"q_block": "0", "tiles": "3"})["caption"]
    assert skipped.startswith("Tile 3 is skipped") and "causal" in skipped and skipped.endswith("done after tile 1.")
    assert calculators.compute("flash_stepper", {"q_block": "2", "tiles": "4"})["caption"].startswith("Tile 4 is skipped")


def test_timeline_captions_give_the_limit_in_words_not_jargon():
    """Llama-3.1-8B, 8 x 2,048 prompt tokens on an H100: the prefill does about 2 x 8.03e9 x 16,384 = 2.6e14
    FLOP, 0.27 s at 989 TFLOP/s, against 16 GB / 3.35 TB/s = 5 ms of reading: arithmetic limits it. A decode
    step does 2 x 8.03e9 x 8 = 1.3e11 FLOP (0.13 ms) but reads the 16 GB again (4.8 ms): memory limits it."""
    raw = {"model": "Llama-3.1-8B", "gpu": "H100-SXM", "prompt_tokens": "2048", "output_tokens": "256", "batch": "8"}
    first = calculators.compute("request_timeline", {**raw, "token": "1"})["caption"]
    assert first == ("Token 1 at 0.24 s: the prefill runs all 8 × 2,048 prompt tokens in one pass; "
                     "the GPU's arithmetic is the limit.")
    later = calculators.compute("request_timeline", {**raw, "token": "100"})["caption"]
    assert later.startswith("Token 100 at ") and "decode step 99 adds one token per sequence in 5.1" in later
    assert later.endswith("reading the weights and the cache from memory is the limit.")
    for caption in (first, later):
        assert "bound" not in caption and "FLOP" not in caption


def test_the_build_renders_play_and_the_caption_above_the_figures():
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives
    from html import escape

    for name, field in [("prefill_decode", "n_steps"), ("flash_stepper", "tiles"), ("request_timeline", "token")]:
        page = directives.render_calculator(name)
        fid = f"c2-{name}-{field}"
        back, play, forward = (page.index(f'data-step="-1" aria-controls="{fid}"'),
                               page.index(f'data-play aria-controls="{fid}" data-playing="false"'),
                               page.index(f'data-step="1" aria-controls="{fid}"'))
        assert back < play < forward  # Back, Play, Forward
        assert '<span class="c2-play__word">Play</span>' in page and 'aria-hidden="true"><path class="c2-play__go"' in page
        caption = calculators.compute(name)["caption"]
        tag = f'<p class="c2-calc__caption" data-output="caption" data-caption role="status">{escape(caption)}</p>'
        assert page.index(tag) < page.index('<dl class="c2-calc__charts">')
    assert "data-play" not in directives.render_calculator("kv_cache")
    js = (ROOT / "docs" / "assets" / "chapter2" / "runtime-core.js").read_text()
    assert "setupPlayer" in js and "prefers-reduced-motion" in js and "playMs" in js


def test_the_build_renders_back_and_forward_under_the_step_slider():
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    for name, field, top in [("prefill_decode", "n_steps", 24), ("flash_stepper", "tiles", 4), ("request_timeline", "token", 256)]:
        html = directives.render_calculator(name)
        fid = f"c2-{name}-{field}"
        assert f'role="group" aria-labelledby="{fid}-label"' in html
        assert f'data-step="-1" aria-controls="{fid}"' in html and f'data-step="1" aria-controls="{fid}"' in html
        assert f'<input id="{fid}" name="{field}" type="range"' in html and f'max="{top}"' in html
        assert '</span> <span class="c2-step__word">Back</span></button>' in html
        assert '><span class="c2-step__word">Forward</span> <span aria-hidden="true">' in html
    assert 'data-max-from="output_tokens"' in directives.render_calculator("request_timeline")
    js = (ROOT / "docs" / "assets" / "chapter2" / "charts.js").read_text()
    assert "setupStepper" in js and "data-max-from" in js.replace("dataset.maxFrom", "data-max-from")


# ------------------------------------------------------------------ grids and lanes in chapter2.charts


def test_grid_renders_cells_marks_and_a_text_alternative():
    spec = charts.ChartSpec("position", "layer", kind="grid")
    data = charts.grid(["a", "b"], ["x", "y", "z"], [[(0, 1), (1, 0.5), None], [(0, 1), None, None]],
                       keys=[("one", 0), ("two", 1)], groups=[("g", 0, 2)], marks=[("now", 1, 2, 0, 2)], summary="S.")
    charts.check(spec, data)
    html = charts.render(spec, data, uid="g", title="A grid")
    root = _parse(html)
    svg = root.find(f"{SVG}svg")
    rects = svg.findall(f".//{SVG}g/{SVG}rect")  # three filled cells: column 0 of both rows is one rectangle
    assert len(rects) == 2 and float(rects[0].get("height")) == 2 * charts.CELL_H - 1
    assert 'fill-opacity="0.5"' in html and svg.find(f".//{SVG}circle").get("class") == "c2-chart__pt"
    desc = svg.find(f"{SVG}desc").text
    assert "2 rows (layer: a, b) by 3 columns (position: “x”, “y”, “z”)" in desc
    assert "one: 2 cells." in desc and "two: 1 cell, strength 0.5 to 0.5." in desc and "Empty: 3 cells." in desc
    assert "Outlined: now (columns 2 to 2, rows 1 to 2)." in desc and desc.endswith("S.")
    assert [li.text for li in root.findall("ul/li")] == [None] * 3  # swatch + text: one, two, now
    assert "style=" not in html
    for broken, err in [({**data, "cells": [[(2, 1), None, None], [None] * 3]}, TypeError),
                        ({**data, "cells": [[[0, 1.5], None, None], [None] * 3]}, ValueError),
                        ({**data, "marks": [{"label": "", "col0": 2, "col1": 4, "row0": 0, "row1": 1}]}, TypeError),
                        ({**data, "cells": [[None] * 3]}, TypeError), ({"series": []}, TypeError)]:
        with pytest.raises(err):
            charts.check(spec, broken)
    with pytest.raises(ValueError):
        charts.ChartSpec("x", "y", kind="pie")


def test_lanes_draw_blocks_above_the_plot_and_merge_past_the_limit():
    spec = charts.ChartSpec("time (s)", "GB")
    assert "lanes" not in charts.chart([charts.series("s", [0, 1], [0, 1])])  # other charts' data is unchanged
    edges = [i / 1000 for i in range(1001)]  # 1,000 blocks
    data = charts.chart([charts.series("s", [0, 1], [0, 1])], lanes=[charts.lane("ticks", edges, color=1)])
    charts.check(spec, data)
    svg = _parse(charts.render(spec, data, uid="l", title="Lanes")).find(f"{SVG}svg")
    blocks = [r for g in svg.iter(f"{SVG}g") if g.get("fill") == charts.PALETTE[1] for r in g.findall(f"{SVG}rect")]
    assert len(blocks) == math.ceil(1000 / math.ceil(1000 / charts.MAX_BLOCKS)) <= charts.MAX_BLOCKS
    assert all(float(r.get("y")) == charts.TOP for r in blocks)
    assert "ticks: 1000 blocks from 0 to 1 on the x axis." in svg.find(f"{SVG}desc").text
    with pytest.raises(ValueError):
        charts.lane("back", [1, 0])
    with pytest.raises(ValueError):
        charts.check(charts.ChartSpec("t", "y", x_log=True), data)  # an edge at 0 on a log axis


def test_a_canvas_draws_its_shapes_arrows_and_labels_and_refuses_what_falls_outside():
    spec = charts.ChartSpec("", "", kind="canvas")
    data = charts.canvas(100, [charts.shape(10, 10, 80, 30, "K 0–3\ntile 1", color=1, alpha=0.4, line="thick"),
                               charts.shape(100, 10, 80, 30, "skipped", line="dashed")],
                         [charts.arrow([(50, 40), (50, 80)], "in", color=1)], [charts.label(4, 95, "SRAM", bold=True)],
                         keys=[("moves", 1)], summary="One tile moves in.")
    charts.check(spec, data)
    root = _parse(charts.render(spec, data, uid="cv", title="Memory"))
    svg = root.find(f"{SVG}svg")
    assert svg.get("viewBox") == "0 0 320 100" and svg.find(f"{SVG}desc").text == "One tile moves in."
    assert [t.text for t in svg.iter(f"{SVG}text")] == ["K 0–3", "tile 1", "skipped", "in", "SRAM"]
    looks = [g for g in svg.findall(f"{SVG}g") if g.find(f"{SVG}rect") is not None]  # shapes grouped by their look
    assert looks[0].get("fill") == charts.PALETTE[1] and looks[0].get("fill-opacity") == "0.4"
    assert looks[1].get("fill") == "none" and looks[1].get("stroke-dasharray") == "4 3"
    assert [len(g.findall(f"{SVG}rect")) for g in looks] == [1, 1]
    assert [li.text for li in root.findall("ul/li")] == [None]  # a swatch, then "moves"
    for bad in [lambda: charts.canvas(100, [charts.shape(300, 10, 40, 10)], summary="S."),
                lambda: charts.canvas(100, [charts.shape(0, 0, 10, 10)]),  # no text alternative
                lambda: charts.canvas(100, arrows=[charts.arrow([(0, 0), (0, 120)])], summary="S."),
                lambda: charts.shape(0, 0, 10, 10, line="wavy"), lambda: charts.arrow([(0, 0)]),
                lambda: charts.shape(0, 0, 10, 10, alpha=2), lambda: charts.label(0, 0, "x", anchor="left"),
                lambda: charts.shape(0, 0, 10, 10, color=True)]:
        with pytest.raises((ValueError, TypeError)):
            bad()


def test_named_ticks_and_fixed_ranges_of_a_plot():
    spec = charts.ChartSpec("query row", "score")
    data = charts.chart([charts.series("μ", [0, 1], [0.5, 2], kind="scatter")], x_ticks=[(0, "q4"), (1, "q5")],
                        x_range=(-0.5, 1.5), y_range=(-1, 3))
    charts.check(spec, data)
    svg = _parse(charts.render(spec, data, uid="t", title="T")).find(f"{SVG}svg")
    texts = [t.text for t in svg.iter(f"{SVG}text")]
    assert "q4" in texts and "q5" in texts and "-1" in texts and "3" in texts and "1.5" not in texts
    assert "μ: 0.5 at q4, 2 at q5." in svg.find(f"{SVG}desc").text
    with pytest.raises(ValueError):
        charts.chart([], y_range=(2, 1))
    with pytest.raises(ValueError):
        charts.check(charts.ChartSpec("x", "y", y_log=True), charts.chart([], y_range=(-1, 1)))


def test_every_range_field_is_a_slider_with_its_readout():
    """A range field renders as a slider (with its value shown beside it), with or without step buttons:
    "move the slider to compare" (2.1) needs a slider, not a text box."""
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    ranges = [(calc.name, f) for calc in _registry.load_all().values() for f in calc.fields if f.kind == "range"]
    assert {("activations", "x"), ("activations", "beta"), ("llm_sampling", "temperature")} <= {(n, f.name) for n, f in ranges}
    for name, field in ranges:
        html = directives.render_calculator(name)
        fid = f"c2-{name}-{field.name}"
        assert f'<input id="{fid}" name="{field.name}" type="range"' in html, (name, field.name)
        assert f'<output for="{fid}" data-field-value="{field.name}">' in html, (name, field.name)
        assert f'id="{fid}" name="{field.name}" type="text"' not in html, (name, field.name)


# ------------------------------------------------------------------ prebuilt steps: instant, before and without Python


def _frames(name):
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    calc = calculators.get(name)
    block = directives.stepper_frames(calc)
    if calc.defer_frames:  # the page names the file; the build writes the same JSON there
        assert block == (f'<script type="application/json" data-calc-frames data-src="{directives.FRAMES_DIR}{name}.json">'
                         '</script>\n')
        text = directives.DEFERRED_FRAMES[name]
    else:
        text = re.fullmatch(r'<script type="application/json" data-calc-frames>(.*)</script>\n', block, re.S).group(1)
    assert "</" not in text and "<!--" not in text  # nothing in the data can end the block early
    return directives, json.loads(text)


@pytest.mark.parametrize("name, field, first, shipped", [("prefill_decode", "n_steps", 0, range(0, 25)),
                                                         ("flash_stepper", "tiles", 0, range(0, 5)),
                                                         ("request_timeline", "token", 1, [*range(1, 257, 10), 256])])
def test_every_prebuilt_step_is_what_python_computes_for_it(name, field, first, shipped):
    directives, payload = _frames(name)
    calc = calculators.get(name)
    assert calc.defaults()[field] == str(first)  # the stepper opens at its first step
    assert payload["field"] == field and payload["inputs"] == {k: v for k, v in calc.defaults().items() if k != field}
    assert sorted(map(int, payload["frames"])) == list(shipped)
    base = json.loads(calculators.compute_json(name, "{}"))["outputs"]
    for step, frame in payload["frames"].items():
        want = json.loads(calculators.compute_json(name, json.dumps({field: step})))["outputs"]
        assert frame == {k: v for k, v in want.items() if k in frame}, (name, step)
        assert {k: v for k, v in want.items() if k not in frame} == {k: v for k, v in base.items() if k not in frame}
    html = directives.render_calculator(name)
    fid = f"c2-{name}-{field}"
    assert f'data-step="-1" aria-controls="{fid}" aria-disabled="true"' in html  # Back: nothing before step 0
    assert f'data-step="1" aria-controls="{fid}" aria-disabled="false"' in html
    assert len(html) < 300_000


def test_a_long_stepper_has_ten_step_buttons_and_a_short_one_not():
    _, _ = _frames("flash_stepper")
    import directives

    timeline, flash = directives.render_calculator("request_timeline"), directives.render_calculator("flash_stepper")
    assert 'data-step="-10"' in timeline and 'data-step="10"' in timeline
    assert 'data-step="10"' not in flash and 'data-step="1"' in flash
    js = (ROOT / "docs" / "assets" / "chapter2" / "runtime-core.js").read_text()
    assert "data-calc-frames" in js and "frameFor" in js


def test_the_kv_grid_writes_this_pass_s_tokens_level_and_readable():
    out = calculators.compute("prefill_decode", {"n_steps": "3"})
    grid = next(o for o in calculators.get("prefill_decode").outputs if o.key == "grid")
    svg = _parse(calculators.render_chart("prefill_decode", grid, out["grid"])).find(f"{SVG}svg")
    texts = [t for t in svg.iter(f"{SVG}text")]
    assert not any("rotate" in (t.get("transform") or "") and t.text in out["grid"]["cols"] for t in texts)
    bold = [t.text for t in texts if t.get("font-weight") == "600"]
    m = out["grid"]["marks"][0]
    assert bold == ["".join(out["grid"]["cols"][m["col0"]:m["col1"]])]  # the token this pass wrote, one column
    assert int(svg.get("font-size")) * 310 / charts.W >= 11  # at least 11 px on a 375 px phone (a 310 px column)
