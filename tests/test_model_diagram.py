"""2.2's block diagram of a hybrid: the kinds of layer it stacks, how many of each and in what pattern, each
kind's sizes, and where its cache sits (a KV cache that grows for attention, a fixed state for the others).

Every expected count, pattern and size is worked out here from the shipped config.json itself (the
characters of `hybrid_override_pattern`, the entries of `layer_types` or `attn_type_list`, Jamba's periods
and offsets, `full_attention_interval`, LFM2's `full_attn_idxs`), never read back from `ModelConfig`.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from chapter2 import calculators, charts
from chapter2.format import nbytes
from chapter2.models import FAMILY_CONFIG_DIR

SVG = "{http://www.w3.org/2000/svg}"
BF16, FP32 = 2, 4


def _raw(name: str) -> dict:
    c = json.loads((FAMILY_CONFIG_DIR / f"{name}.json").read_text())
    return c.get("text_config", c)


def _mamba2(heads, head_dim, groups, state, kernel) -> int:
    """Bytes of one Mamba-2 layer's state: the conv's last `kernel` inputs of x, B, C (BF16), heads x head_dim x
    state in FP32."""
    inner = heads * head_dim
    return (inner + 2 * groups * state) * kernel * BF16 + inner * state * FP32


def _deltanet(r: dict) -> int:
    hk, hv, dk, dv = (r["linear_num_key_heads"], r["linear_num_value_heads"], r["linear_key_head_dim"],
                      r["linear_value_head_dim"])
    return (2 * hk * dk + hv * dv) * r["linear_conv_kernel_dim"] * BF16 + hv * dk * dv * FP32


def _kv(r: dict) -> int:
    """K and V of one token in one attention layer, BF16."""
    head_dim = r.get("head_dim") or r["hidden_size"] // r["num_attention_heads"]
    return 2 * r["num_key_value_heads"] * head_dim * BF16


def _periodic(unit: list[tuple[str, int]], times: int) -> str:
    return " then ".join(f"{k} × {name}" for name, k in unit) + f", × {times}"


def _expected(name: str) -> dict:
    """{"n", "mixers": {label: count}, "ffn": {label: count}, "state": bytes per recurrent layer, "kind": the
    recurrent kind's label, "join", "pattern": the words the heading must hold}, from the raw config."""
    r = _raw(name)
    n = r["num_hidden_layers"]
    if "hybrid_override_pattern" in r:  # NemotronH: one part per layer
        p = r["hybrid_override_pattern"]
        assert len(p) == n
        names = {"M": "Mamba-2", "E": "MoE", "*": "Attention", "-": "MLP"}
        order = list(dict.fromkeys(p))
        heading = ", ".join(f"{p.count(ch)} × {'attention' if ch == '*' else names[ch]}" for ch in order)
        return {"n": n, "mixers": {names[ch]: p.count(ch) for ch in order}, "ffn": {}, "kind": "Mamba-2",
                "state": _mamba2(r["mamba_num_heads"], r["mamba_head_dim"], r["n_groups"], r["ssm_state_size"],
                                 r["conv_kernel"]), "join": "or", "pattern": heading, "kv": _kv(r)}
    model_type = json.loads((FAMILY_CONFIG_DIR / f"{name}.json").read_text())["model_type"]
    if model_type == "jamba":
        period, offset = r["attn_layer_period"], r["attn_layer_offset"]
        attn = sum(1 for i in range(n) if i % period == offset)
        moe = sum(1 for i in range(n) if i % r["expert_layer_period"] == r["expert_layer_offset"])
        inner = r["mamba_expand"] * r["hidden_size"]
        unit = [("Mamba-1", offset), ("attention", 1), ("Mamba-1", period - offset - 1)]
        return {"n": n, "mixers": {"Mamba-1": n - attn, "Attention": attn}, "ffn": {"MLP": n - moe, "MoE": moe},
                "kind": "Mamba-1", "join": "or", "kv": _kv(r), "pattern": _periodic(unit, n // period),
                "state": inner * r["mamba_d_conv"] * BF16 + inner * r["mamba_d_state"] * FP32}
    if model_type == "falcon_h1":  # every layer: attention and Mamba-2 side by side, then the MLP
        return {"n": n, "mixers": {"Attention": n, "Mamba-2": n}, "ffn": {"MLP": n}, "kind": "Mamba-2",
                "join": "and", "kv": _kv(r), "pattern": "every layer: attention ‖ Mamba-2",
                "state": _mamba2(r["mamba_n_heads"], r["mamba_d_head"], r["mamba_n_groups"], r["mamba_d_state"],
                                 r["mamba_d_conv"])}
    if model_type in ("lfm2", "lfm2_moe"):
        attn = len(r["full_attn_idxs"]) if "full_attn_idxs" in r else r["layer_types"].count("full_attention")
        dense = r.get("num_dense_layers", n) if model_type == "lfm2_moe" else n
        ffn = {"MLP": dense, "MoE": n - dense} if dense < n else {"MLP": n}
        return {"n": n, "mixers": {"short convolution": n - attn, "Attention": attn}, "ffn": ffn, "join": "or",
                "kind": "short convolution", "state": r["hidden_size"] * r["conv_L_cache"] * BF16, "kv": _kv(r),
                "pattern": f"{n - attn} × short convolution, {attn} × attention"}
    if model_type == "minimax_m1":
        codes = r["attn_type_list"]
        period = codes.index(1) + 1
        assert codes == ([0] * (period - 1) + [1]) * (n // period)
        heads, d = r["num_attention_heads"], r["head_dim"]
        return {"n": n, "mixers": {"lightning attention": codes.count(0), "Attention": codes.count(1)},
                "ffn": {"MoE": n}, "join": "or", "kind": "lightning attention", "kv": _kv(r),
                "state": heads * d * d * BF16,  # transformers keeps MiniMax's lightning state in the model's dtype
                "pattern": _periodic([("lightning attention", period - 1), ("attention", 1)], n // period)}
    if model_type == "granitemoehybrid":
        types = r["layer_types"]
        unit = [("Mamba-2", 5), ("attention", 1), ("Mamba-2", 4)]  # the 10-layer unit the list repeats
        assert types == (["mamba"] * 5 + ["attention"] + ["mamba"] * 4) * (n // 10)
        return {"n": n, "mixers": {"Mamba-2": types.count("mamba"), "Attention": types.count("attention")},
                "ffn": {"MoE": n}, "join": "or", "kind": "Mamba-2", "kv": _kv(r), "pattern": _periodic(unit, n // 10),
                "state": _mamba2(r["mamba_n_heads"], r["mamba_d_head"], r["mamba_n_groups"], r["mamba_d_state"],
                                 r["mamba_d_conv"])}
    if model_type in ("qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text"):
        every = r["full_attention_interval"]
        types = r.get("layer_types") or ["full_attention" if (i + 1) % every == 0 else "linear_attention"
                                         for i in range(n)]
        attn = types.count("full_attention")
        moe = "num_experts" in r
        return {"n": n, "mixers": {"gated DeltaNet": n - attn, "Attention": attn},
                "ffn": {"MoE" if moe else "MLP": n}, "join": "or", "kind": "gated DeltaNet", "kv": _kv(r),
                "state": _deltanet(r), "pattern": _periodic([("gated DeltaNet", every - 1), ("attention", 1)], n // every)}
    raise AssertionError(f"{name}: a hybrid family this test does not know ({model_type})")


HYBRIDS = ["NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "Nemotron-H-8B-Base-8K", "AI21-Jamba-1.5-Mini",
           "Falcon-H1-0.5B-Instruct", "LFM2-1.2B", "LFM2-8B-A1B", "MiniMax-M1", "granite-4.0-h-tiny",
           "Qwen3-Next-80B-A3B-Instruct", "Qwen3.5-27B", "Qwen3.5-397B-A17B"]


def test_every_shipped_hybrid_family_is_drawn_here():
    """Each shipped config whose layers are not all attention is in HYBRIDS (a new hybrid family gets a case)."""
    from chapter2.models import ModelConfig
    shipped = {p.stem for p in FAMILY_CONFIG_DIR.glob("*.json") if ModelConfig.from_json(p).is_hybrid}
    assert shipped == set(HYBRIDS)


def _diagram(name: str) -> dict:
    text = (FAMILY_CONFIG_DIR / f"{name}.json").read_text()
    return calculators.compute("model_diagram", {"config_json": text})["diagram"]


def _counted(boxes) -> dict:
    """{label: count} of the boxes labelled "KIND (COUNT of N layers)"."""
    out = {}
    for b in boxes:
        m = re.fullmatch(r"(.+) \((\d+) of (\d+) layers\)", b["label"])
        if m:
            out[m[1]] = int(m[2])
    return out


@pytest.mark.parametrize("name", HYBRIDS)
def test_a_hybrid_s_kinds_counts_and_caches_match_its_config(name):
    want = _expected(name)
    data = _diagram(name)
    boxes = data["boxes"]
    n = want["n"]
    assert data["repeat"] == [{"start": 2, "end": data["repeat"][0]["end"], "label": f"× {n} layers"}]
    # the heading: the pattern in words, one cell per layer
    assert boxes[0]["label"] == f"The stack: {n} layers" and want["pattern"] in boxes[0]["detail"], boxes[0]["detail"]
    assert boxes[1]["join"] == "none"  # no arrow from the heading
    # the kinds with their counts: mixers (and, where a layer has both, the feed-forward parts after a norm)
    assert _counted(boxes) == {**want["mixers"], **want["ffn"]}
    inside = boxes[2:data["repeat"][0]["end"]]
    labels = [b["label"].split(" (")[0] for b in inside]
    mixers = [b for b in inside if b["label"].split(" (")[0] in want["mixers"]]
    assert [b["join"] for b in mixers] == [""] + [want["join"]] * (len(mixers) - 1)
    if want["ffn"]:  # norm, mixers, norm, feed-forward kinds
        assert labels[0] == "Norm" and labels[len(want["mixers"]) + 1] == "Norm"
    else:  # NemotronH: a norm, then one part
        assert labels == ["Norm", *want["mixers"]]
    # where the cache sits: attention's KV per token and layer, grows; the recurrent kind's state, fixed
    side = {b["label"].split(" (")[0]: b["side"] for b in inside}
    assert side["Attention"] == f"KV cache: {nbytes(want['kv'])} per token and layer (BF16), grows with the context"
    assert side[want["kind"]].startswith(f"fixed state: {nbytes(want['state'])} per layer (")
    assert side[want["kind"]].endswith("whatever the context")
    assert not any(side[k] for k in ("MoE", "MLP") if k in side)
    # the strip's cells: one per layer, coloured as the box of the layer's kind (a parallel layer: its state's)
    colour = {b["label"].split(" (")[0]: b["color"] for b in inside}
    cells = boxes[0]["strip"]
    if want["join"] == "and":  # every layer alike: the heading says so, no strip of identical cells
        assert cells == [] and boxes[0]["detail"] == want["pattern"]
    else:
        assert len(cells) == n
        for kind, count in want["mixers"].items():
            assert cells.count(colour[kind]) == count, kind


def test_the_nemotron_3_nano_diagram_reads_its_pattern_letter_by_letter():
    """Nemotron 3 Nano's hybrid_override_pattern: 23 Mamba-2 (M), 23 MoE (E), 6 attention (*) layers, in the
    order the text alternative spells and the strip's cells follow."""
    pattern = _raw("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")["hybrid_override_pattern"]
    assert (pattern.count("M"), pattern.count("E"), pattern.count("*"), len(pattern)) == (23, 23, 6, 52)
    data = _diagram("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    assert data["boxes"][0]["detail"] == "23 × Mamba-2, 23 × MoE, 6 × attention"
    assert data["summary"].endswith(f"{pattern}.")
    colour = {b["label"].split(" (")[0]: b["color"] for b in data["boxes"]}
    by_letter = {"M": colour["Mamba-2"], "E": colour["MoE"], "*": colour["Attention"]}
    assert data["boxes"][0]["strip"] == [by_letter[ch] for ch in pattern]
    # whole-model caches in the text alternative: 6 layers x 2 x 2 KV heads x 128 x 2 B per token; 23 states
    assert "grows by 6.14 kB per token over its 6 attention layers" in data["summary"]
    state = 23 * ((64 * 64 + 2 * 8 * 128) * 4 * 2 + 64 * 64 * 128 * 4)
    assert f"hold {nbytes(state)} per sequence whatever the context" in data["summary"]


@pytest.mark.parametrize("name", ["NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "Falcon-H1-0.5B-Instruct",
                                  "AI21-Jamba-1.5-Mini", "MiniMax-M1"])
def test_a_hybrid_s_drawing_fits_a_phone(name):
    """The SVG: text at 11 px or more on a 375 px phone, nothing past the viewBox, one strip cell per layer,
    a word ("or", "in parallel, summed") between alternatives instead of an arrow."""
    text = (FAMILY_CONFIG_DIR / f"{name}.json").read_text()
    html = json.loads(calculators.compute_json("model_diagram", json.dumps({"config_json": text})))["outputs"]["diagram"]
    svg = ET.fromstring(html.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)).find(f"{SVG}svg")
    width = float(svg.get("viewBox").split()[2])
    assert width == charts.W and int(svg.get("font-size")) * 310 / width >= 11
    rects = list(svg.iter(f"{SVG}rect"))
    assert max(float(r.get("x")) + float(r.get("width")) for r in rects) <= width
    assert min(float(r.get("x")) for r in rects) >= 0
    cells = [r for r in rects if r.get("stroke") is None]
    assert len(cells) == (0 if _expected(name)["join"] == "and" else _expected(name)["n"])
    words = [t.text for t in svg.iter(f"{SVG}text") if t.get("font-style") == "italic"]
    want = _expected(name)
    assert words == [charts.JOINS[want["join"]]] * (len(want["mixers"]) - 1) + ["or"] * (len(want["ffn"]) - 1)


def test_dense_and_encoder_decoder_diagrams_have_no_hybrid_parts():
    """A transformer and Whisper keep their drawing: arrows between all boxes, no strip, no heading."""
    for inputs in ({}, {"model": "DeepSeek-V3"},
                   {"config_json": (FAMILY_CONFIG_DIR / "whisper-large-v3.json").read_text()}):
        data = calculators.compute("model_diagram", inputs)["diagram"]
        assert all(b["join"] == "" and b["strip"] == [] for b in data["boxes"]), inputs
        assert not data["boxes"][0]["label"].startswith("The stack")


def test_a_box_refuses_an_unknown_join():
    with pytest.raises(ValueError, match="join must be one of"):
        charts.box("a", "", 0, join="maybe")


@pytest.mark.parametrize("name", [*HYBRIDS[:1], "AI21-Jamba-1.5-Mini", "Falcon-H1-0.5B-Instruct", "whisper-large-v3"])
def test_the_select_offers_the_hybrids_and_whisper(name):
    """Picking a hybrid (or Whisper) in the select draws what pasting its config.json draws (only the name,
    in the text alternative, differs)."""
    from chapter2.calculators.model_diagram import DIAGRAM_OPTIONS

    assert name in dict(DIAGRAM_OPTIONS)
    picked = calculators.compute("model_diagram", {"model": name})["diagram"]
    pasted = calculators.compute("model_diagram", {"config_json": (FAMILY_CONFIG_DIR / f"{name}.json").read_text()})
    assert picked["boxes"] == pasted["diagram"]["boxes"] and picked["repeat"] == pasted["diagram"]["repeat"]
    assert picked["summary"].startswith(name)
