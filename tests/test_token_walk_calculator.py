"""The token walk calculator (chapter2.calculators.token_walk) and its heatmap (chapter2.heatmap).

Each step's picture is checked against the walk it draws (chapter2.token_walk.walk, itself checked
against transformers in tests/test_token_walk.py), the heatmap's drawing against its data, and the
prebuilt steps against what Python computes for them. The browser side (the walk computed in Pyodide
equal to CPython's, stepping by itself, a tap at 375 px) is tests/browser/test_token_walk_in_browser.py.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from chapter2 import calculators, charts, heatmap, stepper, token_walk
from chapter2.calculators import token_walk as calc
from chapter2.calculators._registry import FieldError

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"
PROMPT = "The KV cache stores the keys and"


def _walk(**settings):
    model, tokenizer = stepper.load()
    args = {"temperature": 1.0, "top_k": 10, "top_p": 0.9, "seed": 0, **settings}
    return token_walk.walk(model, tokenizer, PROMPT, **args)


def _step(step, **raw):
    return calculators.compute("token_walk", {"step": str(step), **{k: str(v) for k, v in raw.items()}})


def _parse(fragment: str) -> ET.Element:
    return ET.fromstring(fragment.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1))


def test_the_steps_follow_the_model_s_layers_and_heads():
    model, _ = stepper.load()
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    steps = calc.walk_steps(layers, heads)
    assert len(steps) == calc.N_STEPS == 2 + layers * (heads + 1) + 3 == 25
    assert [s.kind for s in steps[:2]] == ["tokens", "embedding"] and [s.kind for s in steps[-3:]] == [
        "hidden", "logits", "sampled"]
    assert [(s.layer, s.head) for s in steps if s.kind == "attention"] == [
        (layer, head) for layer in range(1, 5) for head in range(1, 5)]
    assert [s.layer for s in steps if s.kind == "mlp"] == [1, 2, 3, 4]
    field = next(f for f in calculators.get("token_walk").fields if f.name == "step")
    assert field.stepper and (field.min, field.max, field.default) == (0, 24, 0)


def test_the_tokens_step_lists_each_token_with_its_id():
    w, out = _walk(), _step(0)
    pic = out["picture"]
    assert pic["rows"] == ["The", "KV", "cache", "st", "ores", "the", "keys", "and"]
    assert [int(t[0]) for t in pic["texts"]] == list(w.ids)
    assert out["caption"].startswith("Tokens: the prompt becomes 8 tokens")
    assert "vocabulary of 1,024" in out["caption"]


@pytest.mark.parametrize("raw", [
    {},
    # the vocabulary's longest tokens, and settings with the most digits: every caption still one short line
    {"prompt": "transformers transformers vocabulary probabilities FlashAttention<|endoftext|>",
     "temperature": "1.95", "top_k": "0", "top_p": "0.95", "seed": "999999"},
])
def test_every_caption_is_one_line_of_at_most_160_characters(raw):
    for step in range(calc.N_STEPS):
        caption = _step(step, **raw)["caption"]
        assert "\n" not in caption and 20 < len(caption) <= 160, (step, caption)


@pytest.mark.parametrize("layer, head", [(1, 1), (1, 4), (2, 3), (4, 2)])
def test_an_attention_step_draws_that_head_s_weights(layer, head):
    w = _walk()
    step = 2 + (layer - 1) * 5 + (head - 1)
    out = _step(step)
    a = w.trace.attention[layer - 1][0, head - 1]  # (N, N)
    pic, n = out["picture"], a.shape[0]
    for i in range(n):
        for j in range(n):
            cell = pic["cells"][i][j]
            assert (cell is None) == (j > i)  # the causal mask: nothing drawn above the diagonal
            if j <= i:
                assert cell == pytest.approx(a[i, j], abs=1e-6)
    assert pic["focus"] == n - 1 and pic["cols"] == pic["rows"]
    best = int(np.argmax(a[-1]))
    percent = f"{100 * a[-1, best]:.2g}"
    assert out["caption"].startswith(f"Layer {layer}, head {head} of 4:")
    assert f"‘and’ looks most at ‘{pic['rows'][best]}’ ({percent} %)" in out["caption"]
    # each row's detail: its three largest weights, largest first
    for i in range(n):
        order = sorted(range(i + 1), key=lambda j: -a[i, j])[:3]
        listed = re.findall(r"‘([^’]*)’ (\d[\d.]*) %", pic["details"][i].split(" attends to ")[1])
        assert [name for name, _ in listed] == [pic["rows"][j] for j in order]
        assert [float(p) for _, p in listed] == pytest.approx([100 * a[i, j] for j in order], rel=0.05)
    partner = {1: 2, 2: 1, 3: 4, 4: 3}[head]  # 4 query heads over 2 K/V heads: pairs share
    assert f"shares its keys and values with head {partner}" in pic["summary"]


def test_the_vector_steps_draw_the_residual_stream():
    w = _walk()
    t = w.trace
    shown = {1: t.embeddings, 6: t.layer_output(0), 21: t.layer_output(3), 22: t.hidden}
    for step, vectors in shown.items():
        pic = _step(step)["picture"]
        first = vectors[:, :calc.SHOWN_DIMS]
        np.testing.assert_allclose(pic["cells"], first / np.abs(first).max(), atol=1e-6)
        assert pic["signed"] and len(pic["cols"]) == calc.SHOWN_DIMS == 16
    norms = t.residual_norms
    caption = _step(6)["caption"]  # layer 1's MLP: the last token's length before and after it
    assert f"length {norms[1, -1]:.3g} to {norms[2, -1]:.3g}" in caption
    assert f"length {np.linalg.norm(t.embeddings[-1]):.3g}" in _step(1)["picture"]["details"][-1]


def test_the_logits_step_shows_the_ten_likeliest_before_and_after_the_settings():
    w, out = _walk(), _step(23)
    pic = out["picture"]
    last = w.trace.logits[-1]
    top = np.argsort(-last, kind="stable")[:10]
    z = np.exp(last - last.max())
    p_model = z / z.sum()
    assert pic["rows"] == [calc.label(w.top[k].text) for k in range(10)] and [c.token for c in w.top] == list(top)
    np.testing.assert_allclose([row[0] for row in pic["cells"]], p_model[top], atol=1e-6)
    # temperature 1, top-k 10, top-p 0.9 by hand: the fewest likeliest of the ten whose mass reaches 0.9
    ten = p_model[top] / p_model[top].sum()
    keep = int(np.searchsorted(np.cumsum(ten), 0.9) + 1)
    after = np.zeros(10)
    after[:keep] = ten[:keep] / ten[:keep].sum()
    np.testing.assert_allclose([row[1] for row in pic["cells"]], after, atol=1e-6)
    assert keep == 4 and "temperature 1, top-k 10, top-p 0.9 leave 4 tokens a chance" in out["caption"]


def test_the_last_step_appends_the_drawn_token():
    w, out = _walk(), _step(24)
    pic = out["picture"]
    assert pic["rows"][-1] == "values" and int(pic["texts"][-1][0]) == w.token
    assert pic["marks"] == [len(w.ids)] and pic["focus"] == len(w.ids)
    assert "‘values’ is drawn (seed 0) and appended" in out["caption"]
    greedy = _step(24, temperature=0)
    assert greedy["picture"]["rows"][-1] == calc.label(w.top[0].text)


def test_other_settings_change_only_what_they_should():
    tokens = _step(0)
    assert _step(0, temperature=1.5, top_k=3, seed=4) == tokens  # the tokens do not depend on sampling
    heads = _step(9)
    assert _step(9, top_p=0.5) == heads
    assert _step(23, top_k=1)["picture"]["cells"][1][1] == 0  # top-k 1 keeps one token


def test_bad_input_gets_a_message_naming_the_field():
    with pytest.raises(FieldError) as err:
        calculators.compute("token_walk", {"prompt": "   "})
    assert err.value.field == "prompt"
    with pytest.raises(FieldError) as err:
        calculators.compute("token_walk", {"prompt": "key value " * 19})
    assert err.value.field == "prompt" and "tokens, more than the 32" in str(err.value)
    for field, value in (("top_p", "0"), ("temperature", "-1"), ("top_k", "1.5"), ("seed", "-3"), ("step", "25")):
        with pytest.raises(FieldError) as err:
            calculators.compute("token_walk", {field: value})
        assert err.value.field == field


def test_every_step_is_prebuilt_in_a_file_of_its_own():
    """The default walk, every step, drawn at build time; kept out of the page (about 230 kB) in a file
    the page names, which build_site.py writes and runtime-core.js fetches when a reader comes to it."""
    hooks = str(ROOT / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)
    import directives

    block = directives.stepper_frames(calculators.get("token_walk"))
    assert block == ('<script type="application/json" data-calc-frames '
                     'data-src="assets/chapter2/frames/token_walk.json"></script>\n')
    payload = json.loads(directives.DEFERRED_FRAMES["token_walk"])
    assert sorted(map(int, payload["frames"])) == list(range(25))  # the default walk, every step
    assert payload["field"] == "step" and payload["inputs"] == {
        k: v for k, v in calculators.get("token_walk").defaults().items() if k != "step"}
    for step in (0, 5, 24):
        want = json.loads(calculators.compute_json("token_walk", json.dumps({"step": str(step)})))["outputs"]
        assert payload["frames"][str(step)] == want
    assert len(directives.DEFERRED_FRAMES["token_walk"]) < directives.FRAME_BUDGET


# ------------------------------------------------------------------ the heatmap chart kind


def _demo(**kw):
    args = dict(details=["a attends to a 100 %", "b attends to a 70 %, b 30 %"], focus=1, keys=("weight",))
    return heatmap.heatmap(["a", "b"], ["a", "b"], [[1.0, None], [0.7, 0.3]], **{**args, **kw})


def test_a_heatmap_draws_a_focusable_row_per_token_with_its_detail():
    spec = charts.ChartSpec("attends to", "token", kind="heatmap")
    data = _demo()
    charts.check(spec, data)
    fragment = charts.render(spec, data, uid="u", title="Demo")
    root = _parse(fragment)
    svg = root.find(f"{SVG}svg")
    rows = [g for g in svg.iter(f"{SVG}g") if "c2-hm__row" in (g.get("class") or "")]
    assert [g.get("tabindex") for g in rows] == ["0", "0"]
    assert [g.get("aria-label") for g in rows] == data["details"]
    assert ["c2-hm__row--focus" in g.get("class") for g in rows] == [False, True]
    detail = rows[1].find(f"{SVG}g[@class='c2-hm__detail']")
    assert "".join(t.text for t in detail.iter(f"{SVG}text")) == "b attends to a 70 %, b 30 %"
    # the cells: one stroke per cell, its opacity the weight in steps of 1/20; the hidden cell shaded grey
    strokes = {(p.get("stroke"), p.get("stroke-opacity")): p.get("d") for g in rows for p in g.iter(f"{SVG}path")}
    assert set(strokes) == {(charts.PALETTE[0], None), (charts.PALETTE[0], "0.7"), (charts.PALETTE[0], "0.3")}
    assert any(p.get("stroke") == charts.INK and p.get("stroke-opacity") == "0.12" for p in svg.iter(f"{SVG}path"))
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert "attends to" in labels and "token" in labels
    desc = svg.find(f"{SVG}desc").text
    assert desc.startswith("Heatmap of 2 rows (token) by 2 columns (attends to).") and data["details"][1] in desc
    assert "style=" not in fragment and "<script" not in fragment
    assert root.get("class") == "c2-chart c2-hm" and root.get("data-digest") == charts.digest(data)


def test_a_heatmap_s_own_axis_labels_replace_the_spec_s():
    spec = charts.ChartSpec("x", "y", kind="heatmap")
    svg = _parse(charts.render(spec, _demo(x_label="keys", y_label="queries"), uid="u", title="t")).find(f"{SVG}svg")
    labels = [t.text for t in svg.iter(f"{SVG}text")]
    assert "keys" in labels and "queries" in labels and "x" not in labels


def test_a_long_detail_wraps_inside_the_drawing():
    long = "‘and’ attends to ‘keys’ 72 %, ‘The’ 24 %, ‘KV’ 2 %, " + "and many more words " * 6
    svg = _parse(charts.render(charts.ChartSpec("x", "y", kind="heatmap"), _demo(details=["a", long]), uid="u",
                               title="t")).find(f"{SVG}svg")
    lines = [t.text for g in svg.iter(f"{SVG}g") if g.get("class") == "c2-hm__detail" for t in g.iter(f"{SVG}text")]
    assert len(lines) == 1 + heatmap.DETAIL_LINES and all(len(x) <= heatmap.DETAIL_CHARS for x in lines)
    assert lines[-1].endswith("…")


@pytest.mark.parametrize("change, error", [
    (dict(details=["only one"]), TypeError),
    (dict(focus=2), TypeError),
    (dict(keys=("a", "b")), TypeError),
    (dict(texts=[["x"]]), TypeError),
])
def test_a_malformed_heatmap_is_refused(change, error):
    with pytest.raises(error):
        _demo(**change)


def test_a_heatmap_cell_out_of_range_is_refused():
    with pytest.raises(ValueError, match="from 0 to 1"):
        heatmap.heatmap(["a"], ["a"], [[1.5]], details=["a"], focus=0)
    with pytest.raises(ValueError, match="from -1 to 1"):
        heatmap.heatmap(["a"], ["a"], [[float("nan")]], details=["a"], focus=0, signed=True, keys=("+", "-"))
    with pytest.raises(TypeError, match="heatmap"):
        charts.check(charts.ChartSpec("x", "y", kind="heatmap"), {"rows": []})
