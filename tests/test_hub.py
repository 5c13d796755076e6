"""chapter2.hub: model ids, safetensors headers, stored bytes and where they sit, the lookup's steps, and the
package's lookup through huggingface_hub from a pre-populated offline cache (never the network).

Oracles: huggingface_hub's own id check (validate_repo_id) and URL (hf_hub_url); files written by the real
`safetensors` library, whose sizes on disk give the stored bytes independently (file size - 8 - N); the real
recorded files of tests/fixtures/hub (PROVENANCE.md), with sizes measured on the whole published files; BERT's
parameter count worked out by hand from its config.
"""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chapter2 import calculators, hub
from chapter2.calculators import _hub

FIXTURES = Path(__file__).parent / "fixtures" / "hub"
MINILM, MINILM_REV = "sentence-transformers/all-MiniLM-L6-v2", "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
GRANITE, GRANITE_REV = "ibm-granite/granite-3.1-1b-a400m-instruct", "8290d32ffc403c6d628249af989beb7800c70d77"
MINILM_DIR = FIXTURES / "sentence-transformers--all-MiniLM-L6-v2"
GRANITE_DIR = FIXTURES / "ibm-granite--granite-3.1-1b-a400m-instruct"
# measured on the whole published model.safetensors (PROVENANCE.md): 90,868,376 bytes, an 11,408-byte header
MINILM_STORED = 90_868_376 - 8 - 11_408
# the Granite checkpoint's size from its Git LFS pointer (PROVENANCE.md): one BF16 file of 2,669,283,096 bytes
GRANITE_FILE = 2_669_283_096


def _minilm_params_by_hand() -> int:
    """BERT (all-MiniLM-L6-v2's config: vocab 30,522, 512 positions, 2 token types, hidden 384, 6 layers,
    intermediate 1,536), counted weight by weight: embeddings and their LayerNorm; per layer Q, K, V and the
    attention output (384 x 384 + bias each), its LayerNorm, the MLP up (384 x 1,536 + bias) and down
    (1,536 x 384 + bias), its LayerNorm; the pooler (384 x 384 + bias)."""
    h, i = 384, 1536
    embeddings = 30522 * h + 512 * h + 2 * h + 2 * h
    layer = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h
    return embeddings + 6 * layer + (h * h + h)


# ---------------------------------------------------------------------------------------------------- ids

@pytest.mark.parametrize("text", ["Qwen/Qwen3-8B", "a/b", "a/b_c.d", "sentence-transformers/all-MiniLM-L6-v2",
                                  "x" * 96 + "/y", "a--b/c", "a/b.", "-a/b", "a..b/c", "x" * 97 + "/y", "a/b/c",
                                  "ab", "a/", "/b", "a b/c", "a/b!"])
def test_ids_are_accepted_as_huggingface_hub_accepts_them(text):
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(text)
        expected = text.count("/") == 1  # validate_repo_id also takes a bare name; a calculator wants org/name
    except HFValidationError:
        expected = False
    try:
        hub.parse_model_id(text)
        ok = True
    except hub.HubError:
        ok = False
    assert ok == expected, text


@pytest.mark.parametrize("text,revision", [("Qwen/Qwen3-8B", None), ("Qwen/Qwen3-8B@main", None),
                                           (f"{GRANITE}@{GRANITE_REV}", None), ("org/name@refs/pr/1", None),
                                           ("org/name", "v1.0")])
def test_urls_are_huggingface_hub_s(text, revision):
    from huggingface_hub import hf_hub_url

    mid = hub.parse_model_id(text, revision)
    for path in ("config.json", "model.safetensors", "transformer/config.json"):
        assert mid.url(path) == hf_hub_url(mid.repo, path, revision=mid.revision)


def test_an_id_and_its_revision():
    assert hub.parse_model_id(" org/name@v2 ") == hub.ModelId("org/name", "v2")
    assert hub.parse_model_id("org/name@v2").text == "org/name@v2" and hub.parse_model_id("org/name").text == "org/name"
    for bad, words in (("org/name@", "nothing after '@'"), ("org/name@a b", "not a branch"), ("org/name@..", "not a")):
        with pytest.raises(hub.HubError, match=words):
            hub.parse_model_id(bad)
    with pytest.raises(hub.HubError, match="give one"):
        hub.parse_model_id("org/name@v1", "v2")
    with pytest.raises(TypeError, match="model_id must be a string"):
        hub.parse_model_id(3)


# ---------------------------------------------------------------------------------------------- headers

def test_the_real_minilm_header_gives_the_bytes_measured_on_the_whole_file():
    raw = (MINILM_DIR / "model.safetensors.header").read_bytes()
    assert struct.unpack("<Q", raw[:8])[0] == 11_408 and len(raw) == 8 + 11_408
    tensors = hub.parse_header(raw, "model.safetensors")
    assert sum(t.nbytes for t in tensors) == MINILM_STORED == 90_856_960
    ck = hub.Checkpoint.from_tensors(["model.safetensors"], tensors, json.loads((MINILM_DIR / "config.json").read_text()))
    assert ck.stored_bytes == MINILM_STORED and ck.tensors == 104
    # F32 weights: BERT's parameters counted by hand; one I64 buffer, position_ids [1, 512]: not a parameter
    assert ck.by_dtype["F32"].elements == _minilm_params_by_hand() == 22_713_216
    assert ck.by_dtype["I64"].nbytes == 512 * 8 and ck.by_part["buffers"].nbytes == 4096
    assert ck.by_part["weights"].nbytes == 4 * 22_713_216


def _saved(tmp_path, tensors: dict, *, torch_tensors=False) -> bytes:
    path = tmp_path / "x.safetensors"
    if torch_tensors:
        from safetensors.torch import save_file
    else:
        from safetensors.numpy import save_file
    save_file(tensors, str(path))
    return path.read_bytes()


def test_every_dtype_written_by_safetensors_reads_back_with_its_size(tmp_path):
    """Files written by the safetensors library itself, in every dtype numpy and torch give it: each tensor's
    dtype and shape as written, and the stored bytes equal to the file's size minus its 8 + N header bytes."""
    import torch

    arrays = {"f64": np.zeros((3, 2)), "f32": np.zeros(5, np.float32), "f16": np.zeros((2, 2), np.float16),
              "i64": np.zeros(3, np.int64), "i32": np.zeros(1, np.int32), "i16": np.zeros(7, np.int16),
              "i8": np.zeros((2, 3), np.int8), "u8": np.zeros(9, np.uint8), "bool": np.zeros(4, bool),
              "empty": np.zeros((0, 4), np.float32), "scalar": np.zeros((), np.float32)}
    expect = {"f64": "F64", "f32": "F32", "f16": "F16", "i64": "I64", "i32": "I32", "i16": "I16", "i8": "I8",
              "u8": "U8", "bool": "BOOL", "empty": "F32", "scalar": "F32"}
    raw = _saved(tmp_path, arrays)
    n = struct.unpack("<Q", raw[:8])[0]
    got = {t.name: t for t in hub.parse_header(raw)}
    assert {k: t.dtype for k, t in got.items()} == expect
    assert {k: t.shape for k, t in got.items()} == {k: a.shape for k, a in arrays.items()}
    assert sum(t.nbytes for t in got.values()) == len(raw) - 8 - n
    tt = {"bf16": torch.zeros(3, 5, dtype=torch.bfloat16), "e4m3": torch.zeros(4, 4, dtype=torch.float8_e4m3fn),
          "e5m2": torch.zeros(6, dtype=torch.float8_e5m2), "u16": torch.zeros(3, dtype=torch.uint16),
          "u32": torch.zeros(2, dtype=torch.uint32), "u64": torch.zeros(2, dtype=torch.uint64)}
    raw = _saved(tmp_path, tt, torch_tensors=True)
    n = struct.unpack("<Q", raw[:8])[0]
    got = {t.name: t for t in hub.parse_header(raw)}
    assert {k: t.dtype for k, t in got.items()} == {"bf16": "BF16", "e4m3": "F8_E4M3", "e5m2": "F8_E5M2", "u16": "U16",
                                                   "u32": "U32", "u64": "U64"}
    assert sum(t.nbytes for t in got.values()) == len(raw) - 8 - n


def _header(entries: dict) -> bytes:
    text = json.dumps(entries).encode()
    return struct.pack("<Q", len(text)) + text


def test_sub_byte_dtypes_round_up_to_whole_bytes():
    # F4: 3 x 5 = 15 values of 4 bits = 60 bits -> 8 bytes; F6_E2M3: 7 values x 6 bits = 42 bits -> 6 bytes
    raw = _header({"a": {"dtype": "F4", "shape": [3, 5], "data_offsets": [0, 8]},
                   "b": {"dtype": "F6_E2M3", "shape": [7], "data_offsets": [8, 14]},
                   "c": {"dtype": "F8_E8M0", "shape": [2, 2], "data_offsets": [14, 18]}})
    assert [t.nbytes for t in hub.parse_header(raw)] == [8, 6, 4]
    with pytest.raises(hub.HubError, match="needs 8 bytes but its data_offsets give 7"):
        hub.parse_header(_header({"a": {"dtype": "F4", "shape": [3, 5], "data_offsets": [0, 7]}}))


@pytest.mark.parametrize("raw,words", [
    (b"vers", "fewer than the 8"),
    ((GRANITE_DIR / "model.safetensors.lfs-pointer").read_bytes(), "header of 2,336,927,755,350,992,246 bytes"),
    (struct.pack("<Q", 50) + b"{}", "only 2 arrived"),
    (struct.pack("<Q", 4) + b"[1] ", "a JSON list, not an object"),
    (struct.pack("<Q", 3) + b"{x}", "not UTF-8 JSON"),
    (_header({"a": {"dtype": "F12", "shape": [1], "data_offsets": [0, 2]}}), "not a safetensors dtype"),
    (_header({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}), "list of whole numbers"),
    (_header({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}), "needs 8 bytes"),
    (_header({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}), "starts at byte 4 of the data, expected 0"),
    (_header({"a": {"dtype": "F32", "shape": [1]}}), "must give dtype, shape and data_offsets"),
])
def test_what_is_not_a_safetensors_header_is_refused_with_a_reason(raw, words):
    with pytest.raises(hub.HubError, match=words):
        hub.parse_header(raw, "model.safetensors")


# --------------------------------------------------------------------------------------- where bytes sit

def test_quantized_layouts_sort_into_scales_packing_towers_and_heads(tmp_path):
    """Headers written by the safetensors library in the test (not recorded: no real quantized header could be;
    PROVENANCE.md), with the tensor names the formats publish: DeepSeek-V3-style FP8 (F8_E4M3 weights, F32
    weight_scale_inv per 128 x 128 block), NVFP4 as ModelOpt writes it (U8 weights holding two FP4 values a byte,
    F8_E4M3 weight_scale per 16 values, F32 weight_scale_2 and input_scale), GPTQ (I32 qweight of eight 4-bit
    values, qzeros, F16 scales, g_idx), gpt-oss's MXFP4 experts (U8 *_blocks and *_scales), a vision tower, a
    multi-token-prediction layer past num_hidden_layers, and an LM head stored though the config ties it."""
    import torch

    tensors = {
        "model.layers.0.mlp.down_proj.weight": torch.zeros(256, 256, dtype=torch.float8_e4m3fn),
        "model.layers.0.mlp.down_proj.weight_scale_inv": torch.zeros(2, 2),
        "model.layers.0.self_attn.q_proj.weight": torch.zeros(256, 64, dtype=torch.uint8),
        "model.layers.0.self_attn.q_proj.weight_scale": torch.zeros(256, 8, dtype=torch.float8_e4m3fn),
        "model.layers.0.self_attn.q_proj.weight_scale_2": torch.zeros(()),
        "model.layers.0.self_attn.q_proj.input_scale": torch.zeros(()),
        "model.layers.0.self_attn.k_proj.qweight": torch.zeros(16, 64, dtype=torch.int32),
        "model.layers.0.self_attn.k_proj.qzeros": torch.zeros(1, 8, dtype=torch.int32),
        "model.layers.0.self_attn.k_proj.scales": torch.zeros(1, 64, dtype=torch.float16),
        "model.layers.0.self_attn.k_proj.g_idx": torch.zeros(128, dtype=torch.int32),
        "model.layers.0.mlp.experts.gate_up_proj_blocks": torch.zeros(2, 64, 4, 16, dtype=torch.uint8),
        "model.layers.0.mlp.experts.gate_up_proj_scales": torch.zeros(2, 64, 4, dtype=torch.uint8),
        "model.embed_tokens.weight": torch.zeros(100, 64, dtype=torch.bfloat16),
        "model.norm.weight": torch.zeros(64, dtype=torch.bfloat16),
        "model.vision_tower.blocks.0.attn.qkv.weight": torch.zeros(48, 16, dtype=torch.bfloat16),
        "model.layers.1.eh_proj.weight": torch.zeros(64, 128, dtype=torch.bfloat16),
        "model.layers.1.input_layernorm.weight": torch.zeros(64, dtype=torch.bfloat16),
        "lm_head.weight": torch.zeros(100, 64, dtype=torch.bfloat16),
    }
    raw = _saved(tmp_path, tensors, torch_tensors=True)
    config = {"num_hidden_layers": 1, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
              "quantization_config": {"quant_method": "fp8"}}
    ck = hub.Checkpoint.from_tensors(["x.safetensors"], hub.parse_header(raw), config)
    assert ck.stored_bytes == len(raw) - 8 - struct.unpack("<Q", raw[:8])[0]
    names = {p: set() for p in hub.PARTS}
    for name in tensors:
        names[hub.part_of(name, "U8" if tensors[name].dtype == torch.uint8 else "I32" if tensors[name].dtype == torch.int32
                          else "X", config)].add(name.rsplit(".", 1)[-1] if "layers.0" in name else name)
    assert names["scales"] == {"weight_scale_inv", "weight_scale", "weight_scale_2", "input_scale", "qzeros", "scales",
                               "g_idx", "gate_up_proj_scales"}
    assert names["packed"] == {"weight", "qweight", "gate_up_proj_blocks"}
    assert names["vision"] == {"model.vision_tower.blocks.0.attn.qkv.weight"}
    assert names["extra heads"] == {"model.layers.1.eh_proj.weight", "model.layers.1.input_layernorm.weight"}
    assert names["lm head"] == {"lm_head.weight"}
    by_hand = {  # bytes of each part, from the shapes above
        "scales": 2 * 2 * 4 + 256 * 8 + 4 + 4 + 1 * 8 * 4 + 64 * 2 + 128 * 4 + 2 * 64 * 4,
        "packed": 256 * 64 + 16 * 64 * 4 + 2 * 64 * 4 * 16,
        "vision": 48 * 16 * 2, "extra heads": 64 * 128 * 2 + 64 * 2, "lm head": 100 * 64 * 2,
        "weights": 256 * 256 + 100 * 64 * 2 + 64 * 2,  # the FP8 down_proj (1 byte a value), embedding, norm
    }
    assert {p: g.nbytes for p, g in ck.by_part.items()} == by_hand
    assert ck.quantization == "fp8"
    untied = hub.Checkpoint.from_tensors(["x"], hub.parse_header(raw), {**config, "tie_word_embeddings": False})
    assert "lm head" not in untied.by_part


# ------------------------------------------------------------------------------------------- the lookup

def _reply(path: Path, first=None, last=None) -> hub.Reply:
    data = path.read_bytes()
    return hub.Reply(206 if first is not None else 200, data if first is None else data[first:last + 1])


def test_the_lookup_asks_for_the_config_the_index_then_two_ranges_a_file():
    mid = hub.parse_model_id(f"{MINILM}@{MINILM_REV}")
    asked = hub.plan(mid, "llm", {})
    assert [r.key for r in asked] == ["config.json", "model.safetensors.index.json"]
    assert asked[0].url == f"https://huggingface.co/{MINILM}/resolve/{MINILM_REV}/config.json"
    replies = {"config.json": _reply(MINILM_DIR / "config.json"),
               "model.safetensors.index.json": hub.Reply(404, error_code="EntryNotFound")}
    asked = hub.plan(mid, "llm", replies)
    assert [(r.key, r.to_json()["range"]) for r in asked] == [("model.safetensors#0-7", "bytes=0-7")]
    header = MINILM_DIR / "model.safetensors.header"
    replies["model.safetensors#0-7"] = _reply(header, 0, 7)
    asked = hub.plan(mid, "llm", replies)
    assert [r.to_json()["range"] for r in asked] == ["bytes=8-11415"]
    replies["model.safetensors#8-11415"] = _reply(header, 8, 11415)
    record = hub.plan(mid, "llm", replies)
    assert isinstance(record, hub.Record) and record.checkpoint.stored_bytes == MINILM_STORED
    assert record.config == (MINILM_DIR / "config.json").read_text()
    assert hub.Record.from_json(json.loads(json.dumps(record.to_json()))) == record  # what the page keeps and sends


def test_a_sharded_checkpoint_is_read_shard_by_shard_from_its_weight_map():
    """The MiniLM header served as two shards of one index (each shard a real header): the sum covers both."""
    mid = hub.parse_model_id("org/sharded")
    header = MINILM_DIR / "model.safetensors.header"
    index = json.dumps({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
                                       "c": "model-00001-of-00002.safetensors"}}).encode()
    replies = {"config.json": _reply(MINILM_DIR / "config.json"), "model.safetensors.index.json": hub.Reply(200, index)}
    asked = hub.plan(mid, "llm", replies)
    assert [r.key for r in asked] == ["model-00001-of-00002.safetensors#0-7", "model-00002-of-00002.safetensors#0-7"]
    for r in asked:
        replies[r.key] = _reply(header, 0, 7)
    for r in hub.plan(mid, "llm", replies):
        replies[r.key] = _reply(header, 8, 11415)
    record = hub.plan(mid, "llm", replies)
    assert record.checkpoint.stored_bytes == 2 * MINILM_STORED and len(record.checkpoint.files) == 2


@pytest.mark.parametrize("status,code,words", [
    (404, "RepoNotFound", "is not a model on the Hub (unknown id"),
    (401, "", "answers 401, which it gives for an id that does not exist and for a gated or private model"),
    (401, "GatedRepo", "gated on the Hub: paste its config.json"),
    (403, "", "gated on the Hub: paste its config.json"),
    (404, "RevisionNotFound", "has no revision 'v9'"),
    (0, "", "could not reach the Hub for org/name@v9 (no network?)"),
    (500, "", "answered HTTP 500"),
])
def test_each_error_answer_to_config_json_ends_the_lookup_with_its_message(status, code, words):
    mid = hub.parse_model_id("org/name@v9")
    with pytest.raises(hub.HubError, match=re.escape(words)):
        hub.plan(mid, "llm", {"config.json": hub.Reply(status, error_code=code), "model.safetensors.index.json": hub.Reply(404)})


def test_a_checkpoint_that_cannot_be_read_leaves_the_config_and_says_why():
    mid = hub.parse_model_id(GRANITE)
    base = {"config.json": _reply(GRANITE_DIR / "config.json"), "model.safetensors.index.json": hub.Reply(404)}
    pointer = GRANITE_DIR / "model.safetensors.lfs-pointer"
    record = hub.plan(mid, "llm", {**base, "model.safetensors#0-7": _reply(pointer, 0, 7)})
    assert record.checkpoint is None and "is not a safetensors file" in record.note
    record = hub.plan(mid, "llm", {**base, "model.safetensors#0-7": hub.Reply(404, error_code="EntryNotFound")})
    assert "has no model.safetensors (a .bin, GGUF" in record.note
    record = hub.plan(mid, "llm", {**base, "model.safetensors#0-7": hub.Reply(0)})
    assert record.note.startswith(f"no answer for model.safetensors of {GRANITE} (no network")


def test_a_pipeline_lookup_reads_model_index_then_each_component_config():
    mid = hub.parse_model_id("org/pipe")
    index = {"_class_name": "FluxPipeline", "_diffusers_version": "0.30.0", "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
             "text_encoder": ["transformers", "CLIPTextModel"], "tokenizer": ["transformers", "CLIPTokenizer"],
             "transformer": ["diffusers", "FluxTransformer2DModel"], "vae": ["diffusers", "AutoencoderKL"],
             "feature_extractor": [None, None]}
    asked = hub.plan(mid, "pipeline", {})
    assert [r.key for r in asked] == ["model_index.json"]
    replies = {"model_index.json": hub.Reply(200, json.dumps(index).encode())}
    assert [r.key for r in hub.plan(mid, "pipeline", replies)] == ["text_encoder/config.json", "transformer/config.json",
                                                                   "vae/config.json"]
    for key in ("text_encoder", "transformer", "vae"):
        replies[f"{key}/config.json"] = hub.Reply(200, json.dumps({"_class_name": key}).encode())
    record = hub.plan(mid, "pipeline", replies)
    assert sorted(record.components) == ["text_encoder", "transformer", "vae"]


def test_step_json_is_what_the_worker_answers():
    out = json.loads(hub.step_json(MINILM, "llm", "{}"))
    assert [r["path"] for r in out["fetch"]] == ["config.json", "model.safetensors.index.json"]
    body = base64.b64encode((MINILM_DIR / "config.json").read_bytes()).decode()
    replies = {"config.json": {"status": 401, "body": "", "error_code": "GatedRepo"},
               "model.safetensors.index.json": {"status": 401, "body": body}}
    assert "gated on the Hub" in json.loads(hub.step_json(MINILM, "llm", json.dumps(replies)))["error"]
    assert "model id must be org/name" in json.loads(hub.step_json("nope", "llm", "{}"))["error"]


# --------------------------------------------------------------------------- the calculators, given a record

def _record(name: str, rev: str, folder: Path, header: Path | None) -> hub.Record:
    mid = hub.parse_model_id(name, rev)
    replies = {"config.json": _reply(folder / "config.json"), "model.safetensors.index.json": hub.Reply(404)}
    if header is None:
        replies["model.safetensors#0-7"] = hub.Reply(0)
    else:
        replies["model.safetensors#0-7"] = _reply(header, 0, 7)
        n = struct.unpack("<Q", header.read_bytes()[:8])[0]
        replies[f"model.safetensors#8-{7 + n}"] = _reply(header, 8, 7 + n)
    return hub.plan(mid, "llm", replies)


def _send(*records) -> str:
    """What the page sends with a recompute: {id: record}."""
    return json.dumps({r.model_id.text: r.to_json() for r in records})


def test_a_looked_up_id_gives_the_numbers_of_its_pasted_config():
    rec = _record(GRANITE, GRANITE_REV, GRANITE_DIR, None)
    _hub.remember(_send(rec))
    text = (GRANITE_DIR / "config.json").read_text()
    for name in ("model_config", "kv_cache", "roofline", "decode_batching", "model_diagram", "moe_coverage"):
        by_id = calculators.compute(name, {"model_id": f"{GRANITE}@{GRANITE_REV}"})
        pasted = calculators.compute(name, {"config_json": text})
        for key in by_id:
            if key == "stored":
                continue
            a, b = json.dumps(by_id[key]), json.dumps(pasted[key])
            assert a.replace(f"{GRANITE}@{GRANITE_REV}", "pasted config.json") == b, (name, key)
    out = calculators.compute("model_config", {"model_id": f"{GRANITE}@{GRANITE_REV}"})
    assert out["stored"].startswith(f"not read: no answer for model.safetensors of {GRANITE}@{GRANITE_REV}")


def test_the_granite_count_matches_its_checkpoint_s_size():
    """Independent of the readers: the LFS pointer's file size is 8 + N header bytes + 2 bytes per BF16 value."""
    c = hub.Record.from_json(_record(GRANITE, GRANITE_REV, GRANITE_DIR, None).to_json())
    from chapter2.models import ModelConfig

    params = ModelConfig.from_text(c.config).params().total
    assert 0 < GRANITE_FILE - 2 * params < 100_000  # the header of one 24-layer file: tens of kilobytes


def test_stored_bytes_beside_parameters_times_format_and_where_they_differ():
    rec = _record(MINILM, MINILM_REV, MINILM_DIR, MINILM_DIR / "model.safetensors.header")
    params = _minilm_params_by_hand()
    text = _hub.stored_text(rec, params)
    assert text.startswith("90,856,960 bytes (90.9 MB) in 104 tensors of 1 file (F32 90.9 MB, I64 4.1 kB)")
    # MiniLM's config.json names no torch_dtype: nothing to multiply by
    assert "names no dtype" in text
    with_dtype = hub.Record(rec.model_id, "llm", json.dumps({**json.loads(rec.config), "torch_dtype": "float32"}),
                            rec.checkpoint)
    text = _hub.stored_text(with_dtype, params)
    assert f"{params:,} x 4 = {4 * params:,} bytes, more stored by 4,096 bytes (0.00451%)" in text
    assert "buffers that are not parameters 4.1 kB (1 tensors)" in text
    assert f"weights 90.9 MB for {params:,} values (as the config counts {params:,})" in text


def test_an_unsupported_config_is_refused_on_the_id_field_with_its_stored_bytes():
    rec = _record(MINILM, MINILM_REV, MINILM_DIR, MINILM_DIR / "model.safetensors.header")
    _hub.remember(_send(rec))
    out = json.loads(calculators.compute_json("model_config", json.dumps({"model_id": f"{MINILM}@{MINILM_REV}"})))
    assert out["ok"] is False and out["field"] == "model_id"
    assert "'BertModel'" in out["message"] and "not supported" in out["message"]
    assert "; its checkpoint, read from the Hub: 90,856,960 bytes (90.9 MB) in 104 tensors" in out["message"]


def test_a_pasted_config_wins_over_the_id_and_the_id_over_the_select():
    _hub.remember(_send(_record(GRANITE, GRANITE_REV, GRANITE_DIR, None)))
    llama = calculators.compute("model_config", {"model": "Llama-3.1-8B"})["model_info"]
    both = calculators.compute("model_config", {"model": "Llama-3.1-8B", "model_id": f"{GRANITE}@{GRANITE_REV}"})
    assert both["model_info"].startswith(f"{GRANITE}@{GRANITE_REV}: GraniteMoE") and both["model_info"] != llama
    pasted = calculators.compute("model_config", {"model_id": f"{GRANITE}@{GRANITE_REV}",
                                                  "config_json": (MINILM_DIR / "config.json").read_text().replace(
                                                      "BertModel", "LlamaForCausalLM").replace('"bert"', '"llama"')})
    assert pasted["model_info"].startswith("pasted config.json")


# ------------------------------------------------------------- the package, from an offline Hugging Face cache

def _cache(tmp_path: Path) -> Path:
    """A Hugging Face hub cache holding the recorded files, laid out as huggingface_hub lays one out (its guide
    "Understand caching"): models--org--name/{refs/<branch>, blobs/<etag>, snapshots/<commit>/<path> -> blob} and
    .no_exist/<commit>/<path> for a file the Hub said does not exist at that commit. The MiniLM checkpoint is
    its recorded header alone, which is all a lookup reads of it."""
    root = tmp_path / "hub"
    files = {(MINILM, MINILM_REV): {"config.json": MINILM_DIR / "config.json",
                                    "model.safetensors": MINILM_DIR / "model.safetensors.header"},
             (GRANITE, GRANITE_REV): {"config.json": GRANITE_DIR / "config.json"}}
    for (repo, rev), paths in files.items():
        folder = root / ("models--" + repo.replace("/", "--"))
        (folder / "refs").mkdir(parents=True)
        (folder / "refs" / "main").write_text(rev)
        for path, src in paths.items():
            blob = folder / "blobs" / f"{abs(hash((repo, path))):x}"
            blob.parent.mkdir(parents=True, exist_ok=True)
            blob.write_bytes(src.read_bytes())
            link = folder / "snapshots" / rev / path
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
        (folder / ".no_exist" / rev).mkdir(parents=True)
        (folder / ".no_exist" / rev / "model.safetensors.index.json").touch()
    return root


def _run(code: str, cache: Path, *, blocked: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HUB_DISABLE_TELEMETRY": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    prelude = "import sys; sys.modules['huggingface_hub'] = None\n" if blocked else ""
    return subprocess.run([sys.executable, "-c", prelude + code], env=env, capture_output=True, text=True, timeout=120)


def test_from_hub_and_stored_bytes_read_an_offline_cache(tmp_path):
    cache = _cache(tmp_path)
    code = f"""
import json
from chapter2.models import ModelConfig
from chapter2.hub import stored_bytes, HubError
c = ModelConfig.from_hub({GRANITE!r})
pasted = ModelConfig.from_json({str(GRANITE_DIR / 'config.json')!r})
pinned = ModelConfig.from_hub({GRANITE!r}, revision={GRANITE_REV!r})
ck = stored_bytes({MINILM!r})
try:
    ModelConfig.from_hub({MINILM!r})
    refused = ""
except ValueError as err:
    refused = str(err)
try:
    ModelConfig.from_hub("nobody/nothing")
    missing = ""
except HubError as err:
    missing = str(err)
print(json.dumps({{"name": c.name, "total": c.params().total, "pasted": pasted.params().total,
                  "pinned": pinned.name, "stored": ck.stored_bytes, "dtypes": sorted(ck.by_dtype),
                  "refused": refused, "missing": missing}}))
"""
    done = _run(code, cache)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["name"] == GRANITE and out["pinned"] == f"{GRANITE}@{GRANITE_REV}" and out["total"] == out["pasted"]
    assert out["stored"] == MINILM_STORED and out["dtypes"] == ["F32", "I64"]
    assert "'BertModel'" in out["refused"] and "not supported" in out["refused"]
    assert "not in the local Hugging Face cache" in out["missing"] and "HF_HUB_OFFLINE" in out["missing"]


def test_without_huggingface_hub_the_package_says_what_to_install(tmp_path):
    done = _run("from chapter2.models import ModelConfig\nModelConfig.from_hub('Qwen/Qwen3-8B')", tmp_path, blocked=True)
    assert done.returncode != 0
    assert 'looking a model up on the Hub from Python needs huggingface_hub: pip install "chapter2[hub]"' in done.stderr


# ----------------------------------------------------------------------- the build option and the page policy

def _hook(name: str):
    hooks = str(Path(__file__).resolve().parents[1] / "docs" / "hooks")
    if hooks not in sys.path:
        sys.path.insert(0, hooks)  # as MkDocs does while it loads a hook
    import importlib

    return importlib.import_module(name)


def test_the_policy_names_the_hub_s_hosts_only_when_the_hub_is_on():
    csp = _hook("csp")
    on, off = csp.policy([], cdn=False, hub=True), csp.policy([], cdn=False, hub=False)
    connect_on = next(d for d in on.split("; ") if d.startswith("connect-src")).split()[1:]
    connect_off = next(d for d in off.split("; ") if d.startswith("connect-src")).split()[1:]
    assert connect_off == ["'self'"]
    assert connect_on == ["'self'", *csp.HUB_HOSTS]
    assert all(h.startswith("https://") and (h.endswith(".hf.co") or h == "https://huggingface.co") for h in csp.HUB_HOSTS)
    assert on.replace(" " + " ".join(csp.HUB_HOSTS), "") == off  # nothing else differs


@pytest.mark.parametrize("env,extra,on", [(None, {}, True), (None, {"hub": False}, False), ("off", {"hub": True}, False),
                                          ("on", {"hub": False}, True)])
def test_the_build_option_comes_from_extra_hub_or_chapter2_hub(monkeypatch, env, extra, on):
    build_site = _hook("build_site")

    class Config:
        pass

    config = Config()
    config.extra = extra
    if env is None:
        monkeypatch.delenv("CHAPTER2_HUB", raising=False)
    else:
        monkeypatch.setenv("CHAPTER2_HUB", env)
    assert build_site._hub(config) is on


def test_a_bad_build_option_fails_the_build(monkeypatch):
    from mkdocs.exceptions import PluginError

    build_site = _hook("build_site")

    class Config:
        extra = {"hub": "yes"}

    monkeypatch.delenv("CHAPTER2_HUB", raising=False)
    with pytest.raises(PluginError, match="extra.hub must be true or false"):
        build_site._hub(Config())
    monkeypatch.setenv("CHAPTER2_HUB", "maybe")
    with pytest.raises(PluginError, match="CHAPTER2_HUB must be 'on' or 'off'"):
        build_site._hub(Config())
