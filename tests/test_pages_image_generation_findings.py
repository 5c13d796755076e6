"""Issue 32 item 5, the image and video findings of the expert review: each test fails on the old text or number.

Expected values are worked here from the sources (papers, model cards, the diffusers pipelines' `__call__`
signatures and source), never taken from the code under test.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from _oracles import require

from chapter2 import calculators, diffusion
from chapter2.calculators import image_generation as calc
from chapter2.calculators._registry import FieldError
from chapter2.pages import image_generation as ig

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "image-generation.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ latent frames from each VAE's own factor

# The VAEs' time compression as their makers give it: Wan 2.1 report (arXiv:2503.20314) 4x; HunyuanVideo
# (arXiv:2412.03603) 4x; CogVideoX (arXiv:2408.06072) 4x; Mochi-1 model card, "8x8 spatially and 6x temporally";
# LTX-Video (arXiv:2501.00103), "32 x 32 x 8 pixels per token".
VAE_TIME = {"Wan2.1-T2V-1.3B": 4, "Wan2.1-T2V-14B": 4, "Wan2.2-T2V-A14B": 4, "HunyuanVideo": 4, "CogVideoX-5B": 4,
            "Mochi-1": 6, "LTX-Video": 8}


def test_each_video_vae_packs_its_own_number_of_frames():
    assert {m.name: m.vae_temporal for m in diffusion.MODELS.values() if m.kind == "video"} == VAE_TIME
    # 1 + (frames - 1) / t, by hand: Mochi's 19 frames -> 4, LTX's 161 -> 21, Wan's 81 -> 21.
    assert diffusion.latent_frames(19, 6) == 4 and diffusion.latent_frames(161, 8) == 21
    assert diffusion.latent_frames(81, 4) == 21
    with pytest.raises(ValueError, match=r"1 \+ a multiple of 6 for this VAE \(79 or 85\), got 81"):
        diffusion.latent_frames(81, 6)


def test_the_page_takes_latent_frames_from_the_vae_not_a_fixed_four():
    # The old equation divided by 4 for every video model.
    assert r"(\text{frames} - 1) / 4" not in PAGE
    assert r"(\text{frames} - 1) / \text{vae}_t" in PAGE
    assert str(ig.video_vae_temporal_factors()) == (
        "4 in Wan2.1-T2V-1.3B, Wan2.1-T2V-14B, Wan2.2-T2V-A14B, HunyuanVideo and CogVideoX-5B, 6 in Mochi-1 and "
        "8 in LTX-Video")
    assert "{{ fact: image_generation.video_vae_temporal_factors }}" in PAGE
    # Mochi's 19 frames at 848 x 480: 12 channels, (19 - 1) / 6 + 1 = 4 frames, 480 / 8 = 60, 848 / 8 = 106;
    # LTX's 161 frames at 704 x 512: 128 channels, (161 - 1) / 8 + 1 = 21 frames, 512 / 32 = 16, 704 / 32 = 22.
    rows = {r[0].value: r for r in ig.latent_table().rows}
    assert rows["Mochi-1"][3].value == "(12, 4, 60, 106)" and rows["Mochi-1"][5].value == 4 * 30 * 53
    assert rows["LTX-Video"][3].value == "(128, 21, 16, 22)" and rows["LTX-Video"][5].value == 21 * 16 * 22


def test_the_video_calculator_hints_follow_each_vae():
    # The old hints said "1 + a multiple of 4" and "multiple of 16" for every video model.
    fields = {f.name: f for f in calculators.get("video_generation").fields}
    assert fields["frames"].help == "1 + a multiple of the VAE's time factor, 4; 6 for Mochi-1; 8 for LTX-Video"
    assert fields["width"].help == fields["height"].help == "a multiple of 16; 32 for LTX-Video"  # LTX: VAE 32, patch 1
    out = calc.video_generation_calc("Mochi-1", 19, 848, 480, 64, "on", 8, "H100-SXM", 0, 0, "bf16")
    assert out["numbers"]["latent_frames"] == 4 and out["numbers"]["vae_temporal"] == 6
    with pytest.raises(FieldError, match=r"79 or 85") as err:
        calc.video_generation_calc("Mochi-1", 81, 848, 480, 64, "on", 8, "H100-SXM", 0, 0, "bf16")
    assert err.value.field == "frames"
    with pytest.raises(FieldError) as err:  # 720 is a multiple of 16, not of LTX's 32
        calc.video_generation_calc("LTX-Video", 161, 720, 512, 50, "on", 8, "H100-SXM", 0, 0, "bf16")
    assert err.value.field == "width"
    ltx = {"model": "LTX-Video", "width": "704", "height": "512"}
    good = json.loads(calculators.compute_json("video_generation", json.dumps({**ltx, "frames": "81"})))
    assert good["ok"] is True  # 81 = 1 + 10 x 8: LTX takes it
    bad = json.loads(calculators.compute_json("video_generation", json.dumps({**ltx, "frames": "85"})))
    assert bad["ok"] is False and "81 or 89" in bad["message"]


# ------------------------------------------------------------------ "default" means the pipeline's __call__ default

# What each diffusers pipeline does when called with a prompt alone (v0.42.1), read from its source where the
# signature leaves a value None: (steps, denoiser passes per step, width, height). Sizes: FluxPipeline and
# QwenImagePipeline default_sample_size 128 x the VAE's 8 = 1024; StableDiffusion3Pipeline, SDXL and PixArt-Sigma
# the denoiser config's sample_size 128 x 8 = 1024; SD 1.5 64 x 8 = 512; CogVideoX sample_width 90 x 8 = 720 and
# sample_height 60 x 8 = 480; MochiPipeline default_width 848, default_height 480. Passes: FLUX.1 and HunyuanVideo
# run one (guidance distilled, true_cfg_scale 1.0), Qwen-Image one (true CFG needs a negative prompt, and
# negative_prompt defaults to None), the others two (guidance_scale > 1 with an empty negative prompt).
PIPELINE_CALL = {
    "FLUX.1-dev": (28, 1, 1024, 1024), "FLUX.1-schnell": (28, 1, 1024, 1024), "SD3.5-Medium": (28, 2, 1024, 1024),
    "SD3.5-Large": (28, 2, 1024, 1024), "Qwen-Image": (50, 1, 1024, 1024), "Sana-1.6B": (20, 2, 1024, 1024),
    "PixArt-Sigma": (20, 2, 1024, 1024), "SDXL": (50, 2, 1024, 1024), "SD1.5": (50, 2, 512, 512),
    "Wan2.1-T2V-1.3B": (50, 2, 832, 480), "Wan2.1-T2V-14B": (50, 2, 832, 480), "Wan2.2-T2V-A14B": (50, 2, 832, 480),
    "HunyuanVideo": (50, 1, 1280, 720), "LTX-Video": (50, 2, 704, 512), "CogVideoX-5B": (50, 2, 720, 480),
    "Mochi-1": (64, 2, 848, 480)}
# What the model cards set instead: FLUX.1 [schnell] 4 steps; Qwen-Image 1328 x 1328 (its 1:1 aspect ratio) with
# negative_prompt=" " and true_cfg_scale 4.0; Wan 2.1 / 2.2 14B 1280 x 720.
MODEL_CARD = {"FLUX.1-schnell": ("steps",), "Qwen-Image": ("guidance", "size"), "Wan2.1-T2V-14B": ("size",),
              "Wan2.2-T2V-A14B": ("size",)}


def test_the_hand_read_defaults_match_the_signatures():
    diffusers = require("diffusers")
    for name, (steps, _, width, height) in PIPELINE_CALL.items():
        cls = json.loads((ROOT / "src/chapter2/data/diffusion/pipelines" /
                          f"{diffusion.MODELS[name].key}.json").read_text())["_class_name"]
        params = inspect.signature(getattr(diffusers, cls).__call__).parameters
        assert params["num_inference_steps"].default == steps, name
        for key, value in (("width", width), ("height", height)):
            assert params[key].default in (None, value), name  # None: the pipeline's source sets it (above)
    assert inspect.signature(diffusers.QwenImagePipeline.__call__).parameters["negative_prompt"].default is None


def test_every_preset_setting_is_the_pipeline_default_or_says_model_card():
    for m in diffusion.MODELS.values():
        steps, passes, width, height = PIPELINE_CALL[m.name]
        assert m.card_settings == MODEL_CARD.get(m.name, ()), m.name
        assert (m.default_steps == steps) != ("steps" in m.card_settings), m.name
        assert ((2 if m.guidance else 1) == passes) != ("guidance" in m.card_settings), m.name
        assert (m.default_size == (width, height)) != ("size" in m.card_settings), m.name
        if m.card_settings:
            assert m.card_source.startswith("https://huggingface.co/"), m.name
    # The table says where each row's settings come from.
    rows = {r[0].value: r[-1].value for r in ig.pipelines_table().rows}
    assert rows["SDXL"] == "pipeline defaults"
    assert rows["Qwen-Image"] == "[model card](https://huggingface.co/Qwen/Qwen-Image): guidance, size"
    assert rows["Wan2.1-T2V-14B"] == "[model card](https://huggingface.co/Wan-AI/Wan2.1-T2V-14B): size"


def test_the_any_pipeline_calculator_says_preset_not_pipeline_default():
    # Its zeros took Qwen-Image's 1328 x 1328 and Wan 14B's 720p, which the labels called "the pipeline's".
    fields = {f.name: f for f in calculators.get("denoiser_any").fields}
    for name in ("width", "height", "frames", "steps"):
        assert "0 = the preset's" in fields[name].label and "pipeline's" not in fields[name].label, name
    assert dict(fields["guidance"].options)["default"] == "The preset's"
    assert fields["pipeline"].help.endswith("model card's for FLUX.1-schnell, Qwen-Image, Wan2.1-T2V-14B, "
                                            "Wan2.2-T2V-A14B")


def test_the_page_calls_only_pipeline_defaults_default():
    # The old page called Qwen-Image's 1328 x 1328, Wan 14B's 720p and schnell's 4 steps "default".
    text = re.sub(r"\s+", " ", PAGE)
    for stale in ("at its default size", "Wan 2.1 14B's default clip", "its default image takes",
                  "Qwen-Image's default) the step"):
        assert stale not in text, stale
    assert "guides only when given a negative prompt" in text
    assert "model card" in str(ig.CARDS[-1].answer)


# ------------------------------------------------------------------ Qwen-Image's text encoder, as it runs


def test_qwen_image_text_encoder_is_costed_to_its_last_hidden_state():
    """The pipeline reads `hidden_states[-1]` of Qwen2.5-VL: its language model runs, the LM head's logits and the
    vision tower are not used. Worked from the config: 28 layers of 3584 wide (q and o 3584², GQA k and v 2 x 3584 x
    512, biases on q, k, v), a gated MLP of 18944, two RMSNorms a layer, a final norm and the 152064-row embedding;
    the head 3584 x 152064; the vision tower from its vision_config (32 blocks of 1280, MLP 3420; patch 3 x 2 x 14²;
    the merger 5120 -> 5120 -> 3584)."""
    h, v, n = 3584, 152064, 28
    layer = (h * h + h) + 2 * (h * 512 + 512) + h * h + 3 * h * 18944 + 2 * h
    language = v * h + n * layer + h
    assert language == 7_070_619_136  # transformers' model.language_model on the meta device
    head = h * v
    w, i = 1280, 3420
    block = 2 * w + (3 * w * w + 3 * w) + (w * w + w) + 2 * (w * i + i) + (i * w + w)
    vision = 3 * 2 * 14 * 14 * w + 32 * block + w + (4 * w) ** 2 + 4 * w + 4 * w * h + h
    e = diffusion.MODELS["Qwen-Image"].encoders[0][0]
    assert (e.params, e.idle_params("vision"), e.stored_params) == (language, vision, language + head + vision)
    # The old count ran the LM head (7.6B) and did not say the vision tower existed.
    assert (str(ig.qwen_image_text_encoder_params_billions()), str(ig.qwen_image_text_encoder_vision_billions()),
            str(ig.qwen_image_text_encoder_stored_billions())) == ("7.1", "0.68", "8.3")
    # One prompt of 290 tokens: 2 FLOPs per weight of the layers per token, and attention's 4 x layers x t² x width.
    t = 290
    assert e.flops(t) == 2 * n * (h * h + 2 * h * 512 + h * h + 3 * h * 18944) * t + 4 * n * t * t * h
    text = re.sub(r"\s+", " ", PAGE)
    assert "neither the LM head nor the {{ fact: image_generation.qwen_image_text_encoder_vision_billions }}B" in text


# ------------------------------------------------------------------ the image/video landscape


def test_the_largest_open_image_models_now_exceed_the_video_ones():
    """The old note said the largest video model had 1.5x the parameters of the largest image model (30B / Qwen-Image's
    20B). Open models now: HunyuanImage 3.0, 80B in total and 13B active per token (model card); FLUX.2 [dev], a dense
    32B (model card); HiDream-I1 17B (model card); against Step-Video-T2V's 30B (arXiv:2502.10248) and Wan 2.2
    A14B's two experts of 14,288,491,584 parameters each (diffusers' WanTransformer3DModel from the shipped config)."""
    assert not hasattr(ig, "largest_video_over_largest_image")
    assert "largest_video_over_largest_image" not in PAGE
    assert str(ig.largest_open_image_name()) == "HunyuanImage 3.0"
    assert (ig.largest_open_image_billions().value, ig.largest_open_image_active_billions().value) == (80, 13)
    assert str(ig.largest_open_video_name()) == "Step-Video-T2V" and ig.largest_open_video_billions().value == 30
    assert ig.largest_open_image_over_largest_open_video().value == pytest.approx(80 / 30)
    assert str(ig.largest_open_image_over_largest_open_video()) == "2.7×"
    assert str(ig.largest_dense_image_name()) == "FLUX.2 [dev]"
    assert ig.largest_dense_image_over_largest_open_video().value == pytest.approx(32 / 30)
    assert str(ig.largest_dense_image_over_largest_open_video()) == "1.1×"
    assert ig.wan_2_2_stored_billions().value == pytest.approx(2 * 14_288_491_584 / 1e9)
    assert str(ig.wan_2_2_stored_billions()) == "28.6"
    # Movie Gen Video (30B) is the largest video model, but its weights are closed: it does not count as open.
    assert diffusion.published_size("Movie Gen Video").open_weights is False
    for p in diffusion.PUBLISHED_SIZES:
        assert p.source.startswith("https://"), p.name
        if p.preset:  # counted from the configs: every parameter stored
            assert p.params == diffusion.MODELS[p.preset].stored_params


def test_the_page_names_hunyuanimage_as_diffusion_inside_an_llm():
    text = re.sub(r"\s+", " ", PAGE)
    blend = text.index("Research is now blending diffusion with autoregressive LLM architectures")
    note = text[blend:blend + 900]
    assert "{{ fact: image_generation.largest_open_image_name }} blends them another way" in note
    assert "the denoiser is the LLM itself" in note
    assert "the newest open image models are now larger than any open video model" in text


# ------------------------------------------------------------------ SDXL's tokens, and sizes on active parameters


def test_sdxl_latent_tokens_are_written_one_way():
    # The latent table wrote "n/a (UNet)" and the pipelines table 16,384 (its 128 x 128 latent positions): a UNet
    # runs no token sequence through its layers, so both now write the first.
    latent = {r[0].value: r[5].value for r in ig.latent_table().rows}
    pipelines = {r[0].value: r[5].value for r in ig.pipelines_table().rows}
    assert latent["SDXL"] == pipelines["SDXL"] == pipelines["SD1.5"] == "n/a (UNet)"
    assert latent["Qwen-Image"] == pipelines["Qwen-Image"] == 83 * 83  # (1328 / 16)²


def test_image_against_llm_size_on_active_parameters_too():
    bottlenecks = (ROOT / "docs" / "bottlenecks.md").read_text(encoding="utf-8")
    idea = bottlenecks[bottlenecks.index("## 2.4.3 Image bottlenecks"):][:900]
    assert "bottlenecks.qwen_image_over_qwen3_235b_params" in idea
    assert "bottlenecks.qwen_image_over_qwen3_235b_active_params" in idea
    assert "much smaller than frontier LLMs" not in idea  # on active parameters they are not
