"""A diffusers pipeline looked up by its Hub id gives 2.3's "any denoiser" calculator (denoiser_any) its denoiser:
model_index.json, then each component's config.json, the transformer's or unet's read exactly as a pasted one.

The files are the real published files of stabilityai/stable-diffusion-xl-base-1.0 at revision
462165984030d82259a11f4367a4eed129e94a7b, byte for byte (tests/fixtures/hub/PROVENANCE.md). Oracles: the same
config.json pasted into the calculator (the wiring must change nothing), and SDXL's UNet parameter count as
diffusers builds it, 2,567,463,684 (the figure tests/test_pages_image_generation.py holds 2.3's fact to).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chapter2 import calculators, hub
from chapter2.calculators import _hub

FIXTURES = Path(__file__).parent / "fixtures" / "hub"
SDXL, SDXL_REV = "stabilityai/stable-diffusion-xl-base-1.0", "462165984030d82259a11f4367a4eed129e94a7b"
SDXL_DIR = FIXTURES / "stabilityai--stable-diffusion-xl-base-1.0"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SDXL_UNET_PARAMS = 2_567_463_684  # diffusers' UNet2DConditionModel from this unet/config.json


def _lookup(text: str, files: Path, edit=None) -> hub.Record:
    """Drive the pipeline lookup of `text` to its record, each request answered from `files` (a 404 with the Hub's
    EntryNotFound for a file that is not there); `edit(path, bytes)` may change an answer (a test-made case)."""
    mid = hub.parse_model_id(text)

    def fetch(requests):
        out = {}
        for r in requests:
            assert r.url == f"https://huggingface.co/{mid.repo}/resolve/{mid.revision}/{r.path}"
            path = files / r.path
            if not path.is_file():
                out[r.key] = hub.Reply(404, error_code="EntryNotFound")
                continue
            data = path.read_bytes()
            out[r.key] = hub.Reply(200, edit(r.path, data) if edit else data)
        return out

    return hub.lookup(mid, "pipeline", fetch)


def _remember(record: hub.Record) -> None:
    _hub.remember(json.dumps({record.model_id.text: record.to_json()}))


def test_the_lookup_reads_model_index_then_the_config_of_each_component_that_has_one():
    mid = hub.parse_model_id(f"{SDXL}@{SDXL_REV}")
    asked = hub.plan(mid, "pipeline", {})
    assert [r.url for r in asked] == [f"https://huggingface.co/{SDXL}/resolve/{SDXL_REV}/model_index.json"]
    replies = {"model_index.json": hub.Reply(200, (SDXL_DIR / "model_index.json").read_bytes())}
    # SDXL's index names seven components: the scheduler and the two tokenizers keep no config.json
    assert [r.key for r in hub.plan(mid, "pipeline", replies)] == [
        "text_encoder/config.json", "text_encoder_2/config.json", "unet/config.json", "vae/config.json"]
    for path in ("text_encoder", "text_encoder_2", "unet", "vae"):
        replies[f"{path}/config.json"] = hub.Reply(200, (SDXL_DIR / path / "config.json").read_bytes())
    record = hub.plan(mid, "pipeline", replies)
    assert record.kind == "pipeline" and record.config == (SDXL_DIR / "model_index.json").read_text()
    assert record.components["unet"] == (SDXL_DIR / "unet" / "config.json").read_text()
    assert hub.Record.from_json(json.loads(json.dumps(record.to_json()))) == record  # what the page keeps and sends


def test_a_looked_up_pipeline_gives_the_numbers_of_its_denoiser_config_pasted():
    record = _lookup(f"{SDXL}@{SDXL_REV}", SDXL_DIR)
    _remember(record)
    pasted_text = (SDXL_DIR / "unet" / "config.json").read_text()
    for raw in ({}, {"width": "768", "height": "1344", "steps": "30", "guidance": "off", "gpu": "B200"}):
        by_id = calculators.evaluate("denoiser_any", {**raw, "model_id": f"{SDXL}@{SDXL_REV}"})
        pasted = calculators.evaluate("denoiser_any", {**raw, "config_json": pasted_text})
        assert by_id["numbers"] == pasted["numbers"]
        source = f"{SDXL}@{SDXL_REV}, unet/config.json: "
        assert by_id["outputs"]["model"] == source + pasted["outputs"]["model"]
        for key, value in pasted["outputs"].items():
            if key != "model":
                assert json.dumps(by_id["outputs"][key]) == json.dumps(value), key
    numbers = calculators.evaluate("denoiser_any", {"model_id": f"{SDXL}@{SDXL_REV}"})["numbers"]
    assert numbers["denoiser"] == "UNet2DConditionModel" and numbers["denoiser_parameters"] == SDXL_UNET_PARAMS
    assert numbers["tokens_per_pass (tokens)"] == 128 * 128  # 1024 px / the VAE's 8, one token per latent pixel


def test_a_pasted_config_wins_over_the_id_and_the_id_over_the_select():
    _remember(_lookup(SDXL, SDXL_DIR))
    wan = (Path(calculators.__file__).parents[1] / "data" / "diffusion" / "denoisers" / "wan2.1-t2v-1.3b.json").read_text()
    both = calculators.compute("denoiser_any", {"pipeline": "FLUX.1-dev", "model_id": SDXL, "config_json": wan})
    assert both["model"].startswith("WanTransformer3DModel")
    by_id = calculators.compute("denoiser_any", {"pipeline": "FLUX.1-dev", "model_id": SDXL})
    assert by_id["model"].startswith(f"{SDXL}, unet/config.json: UNet2DConditionModel")
    assert calculators.compute("denoiser_any", {"pipeline": "FLUX.1-dev"})["model"].startswith("FluxTransformer2DModel")


def _refusal(raw: dict) -> dict:
    out = json.loads(calculators.compute_json("denoiser_any", json.dumps(raw)))
    assert out["ok"] is False, out
    return out


def test_each_bad_id_is_an_inline_message_on_the_id_field():
    # not an id at all: refused before anything is fetched
    out = _refusal({"model_id": "stable-diffusion-xl"})
    assert out["field"] == "model_id" and "model id must be org/name" in out["message"]
    # a real repository that is not a diffusers pipeline: an LLM's files have no model_index.json
    with pytest.raises(hub.HubError, match=rf"{MINILM} has no model_index.json: it is not a diffusers pipeline"):
        _lookup(MINILM, FIXTURES / "sentence-transformers--all-MiniLM-L6-v2")
    # an index naming no denoiser: SDXL's without its unet (made here, from the real file)
    def no_unet(path, data):
        if path != "model_index.json":
            return data
        return json.dumps({k: v for k, v in json.loads(data).items() if k != "unet"}).encode()

    _remember(_lookup(f"{SDXL}@no-unet", SDXL_DIR, no_unet))
    out = _refusal({"model_id": f"{SDXL}@no-unet"})
    assert out["field"] == "model_id" and out["message"] == (
        f"{SDXL}@no-unet: its model_index.json names no transformer or unet component (components with a config: "
        "text_encoder, text_encoder_2, vae): paste its denoiser's config.json instead")
    # a denoiser of a class the calculator does not read: said on the id field, with the component's file
    def other_class(path, data):
        return data.replace(b"UNet2DConditionModel", b"UNetSpatioTemporalConditionModel") if path == "unet/config.json" else data

    _remember(_lookup(f"{SDXL}@svd", SDXL_DIR, other_class))
    out = _refusal({"model_id": f"{SDXL}@svd"})
    assert out["field"] == "model_id"
    assert out["message"].startswith(f"{SDXL}@svd: unet/config.json: config _class_name must be one of ")
    assert "'UNetSpatioTemporalConditionModel'" in out["message"]
    # the calculator still computes for the other inputs
    assert calculators.compute("denoiser_any", {"width": "512"})["model"].startswith("QwenImageTransformer2DModel")


def test_b_takes_a_pipeline_id_as_it_takes_a_pasted_denoiser_config():
    _remember(_lookup(SDXL, SDXL_DIR))
    pasted = (SDXL_DIR / "unet" / "config.json").read_text()
    by_id = calculators.compare("denoiser_any", {"compare": "on", "model_id_b": SDXL})
    by_paste = calculators.compare("denoiser_any", {"compare": "on", "config_json_b": pasted})
    assert [r[1:] for r in by_id.rows[by_id.inputs:]] == [r[1:] for r in by_paste.rows[by_paste.inputs:]]
    assert ("Or a Hugging Face model id (org/name, optionally @revision)", "none", SDXL, "") in [
        r for r in by_id.rows[:by_id.inputs]]
    assert by_id.numbers_b["denoiser_parameters"] == SDXL_UNET_PARAMS


def test_the_copied_script_calls_the_calculator_with_the_id():
    _remember(_lookup(SDXL, SDXL_DIR))
    result = json.loads(calculators.compute_json("denoiser_any", json.dumps({"model_id": SDXL})))
    assert result["ok"] and result["inputs"]["model_id"] == SDXL
    assert "# A model id is looked up on the Hugging Face Hub here too: pip install huggingface_hub." in result["script"]
    assert f"    model_id={SDXL!r}," in result["script"]
