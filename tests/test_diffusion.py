"""Image and video generation costs (chapter sections 2.3 and 2.4.3)."""

import dataclasses
import json
from pathlib import Path

import pytest
from _oracles import require

from _diffusion_by_hand import qwen_image_flops, qwen_vl_encoder_flops, wan_14b_flops

from chapter2 import calculators, diffusion, models
from chapter2.format import duration
from chapter2.hardware import GPUS


def test_fifty_guided_steps_are_one_hundred_passes():
    # Chapter 2.3: each step runs the denoiser twice for guidance, so 50 steps means 100 forward passes.
    assert diffusion.denoiser_passes(50, True) == 100
    assert diffusion.denoiser_passes(50, False) == 50
    with pytest.raises(ValueError, match="steps"):
        diffusion.denoiser_passes(0)
    with pytest.raises(TypeError, match="guidance"):
        diffusion.denoiser_passes(10, "yes")


def test_guidance_mixes_the_two_predictions():
    """CFG (Ho and Salimans 2022): unconditional + scale x (conditional - unconditional), as diffusers'
    QwenImagePipeline writes it (neg_noise_pred + true_cfg_scale * (noise_pred - neg_noise_pred)); worked by hand:
    0.5 + 4 x (0.8 - 0.5) = 1.7; scale 1 gives the conditional prediction back, scale 0 the unconditional one."""
    assert diffusion.guided_prediction(0.8, 0.5, 4) == pytest.approx(1.7)
    assert diffusion.guided_prediction(0.8, 0.5, 1) == pytest.approx(0.8)
    assert diffusion.guided_prediction(0.8, 0.5, 0) == pytest.approx(0.5)
    mix = diffusion.guided_prediction([[1.0, -2.0]], [[0.0, 1.0]], 2.5)
    assert mix.shape == (1, 2) and mix[0].tolist() == pytest.approx([2.5, -6.5])  # 0 + 2.5 x 1; 1 + 2.5 x -3
    with pytest.raises(ValueError, match="one shape"):
        diffusion.guided_prediction([1.0, 2.0], [1.0], 2)
    with pytest.raises(ValueError, match="scale"):
        diffusion.guided_prediction(1.0, 1.0, float("inf"))


def test_qwen_image_guidance_scale_default_is_diffusers():
    """The page's tiny example uses Qwen-Image's guidance scale: QwenImagePipeline.__call__(true_cfg_scale=4.0)."""
    import inspect

    diffusers = require("diffusers")
    from chapter2.pages import image_generation as ig

    default = inspect.signature(diffusers.QwenImagePipeline.__call__).parameters["true_cfg_scale"].default
    assert default == 4.0 == ig.cfg_example_scale().value


def test_few_step_models_save_80_to_90_percent():
    # Chapter 2.3.2: eight steps or fewer, 80 to 90 percent faster. 8 guided steps vs 50 guided: 16 / 100 passes.
    assert diffusion.few_step_saving(50, True, 8, True) == pytest.approx(0.84)
    assert 0.8 <= diffusion.few_step_saving(50, True, 8, True) <= 0.9
    assert diffusion.few_step_saving(50, True, 8, False) == pytest.approx(0.92)  # guidance distilled too
    assert diffusion.few_step_saving(50, True, 50, True) == 0


def test_latent_sizes_from_the_papers():
    # SDXL (arXiv:2307.01952): 1024x1024 images, VAE 8x, 4 channels -> a 4 x 128 x 128 latent, 48x fewer values.
    sdxl = diffusion.MODELS["SDXL"]
    assert (1024 // sdxl.vae_spatial, sdxl.latent_channels) == (128, 4)
    assert 3 * 1024 * 1024 / (4 * 128 * 128) == 48
    # Qwen-Image: VAE 8x then 2x2 patches; 1328x1328 -> 166x166 latent -> 83x83 tokens.
    assert diffusion.MODELS["Qwen-Image"].tokens() == 83 * 83
    assert diffusion.latent_tokens_image(1024, 1024, 8, 2) == 64 * 64
    # Wan 2.1 (vae_stride (4, 8, 8), patch (1, 2, 2)): 81 frames -> 1 + 80/4 = 21 latent frames.
    assert diffusion.latent_frames(81, 4) == 21
    assert diffusion.MODELS["Wan2.1-T2V-14B"].tokens() == 21 * (720 // 16) * (1280 // 16) == 75_600
    assert diffusion.latent_tokens_video(81, 832, 480) == 21 * 30 * 52


def test_latent_sizes_reject_shapes_the_vae_cannot_take():
    with pytest.raises(ValueError, match="width must be a multiple of 16"):
        diffusion.latent_tokens_image(1000, 1024)
    with pytest.raises(ValueError, match="frames must be 1 \\+ a multiple of 4"):
        diffusion.latent_frames(80, 4)
    with pytest.raises(ValueError, match="frames must be 1"):
        diffusion.MODELS["FLUX.1-dev"].tokens(frames=5)
    with pytest.raises(ValueError, match="model must be one of"):
        diffusion.denoiser_pass("DALL-E")
    with pytest.raises(ValueError, match="UNet"):
        diffusion.denoiser_pass("SDXL", 4096)  # a UNet is costed at a pixel size, not a token count


def test_attention_flops_match_real_tensors():
    # Oracle: torch's FLOP counter on per-head attention (H heads of dh, H * dh = width), one layer.
    torch = require("torch")
    from torch.utils.flop_counter import FlopCounterMode

    tokens, heads, dh = 96, 4, 16
    q, k, v = (torch.randn(heads, tokens, dh) for _ in range(3))
    with FlopCounterMode(display=False) as counter:
        torch.softmax(q @ k.transpose(-1, -2), dim=-1) @ v
    assert diffusion.attention_flops(tokens, 1, heads * dh) == counter.get_total_flops()
    assert diffusion.attention_flops(tokens, 3, heads * dh) == 3 * counter.get_total_flops()


def test_a_denoiser_pass_is_far_above_every_ridge():
    # bytes = b (P + 2 L N W + N C p): weights, every block's input and output, the predicted latent (C = 16
    # channels x p = 1 x 2 x 2 patch); no KV cache. FLOPs from the hand derivation above.
    for name, params, layers, width, flops in (("Qwen-Image", 20_430_401_088, 60, 3072, qwen_image_flops),
                                               ("Wan2.1-T2V-14B", 14_288_491_584, 40, 5120, wan_14b_flops)):
        p = diffusion.denoiser_pass(name, dtype="bf16")
        n = p.tokens
        nbytes = 2 * (params + 2 * layers * n * width + n * 16 * 4)
        assert p.bytes == pytest.approx(nbytes)
        assert p.flops == pytest.approx(flops(n)[0], rel=1e-9)
        assert p.attention_flops == pytest.approx(flops(n)[1], rel=1e-9)
        assert p.intensity > 3 * max(g.ops_per_byte("bf16") for g in GPUS.values())
    p = diffusion.denoiser_pass("Qwen-Image", 4096)
    assert p.flops == pytest.approx(qwen_image_flops(4096)[0], rel=1e-9)


def test_pass_bytes_follow_the_roofline_convention_for_llm_passes():
    # One convention for both sides (chapter2.roofline): weights read once, KV cache read/written once, activations
    # = every block's input and output hidden state plus the pass's output, each moved once. A transformer LLM with
    # the DiT's 60 blocks of width 3072 and an "output vocabulary" of the 16 x 2 x 2 latent values per token, run
    # over 4,096 tokens with every position's output: roofline.activation_bytes must equal the denoiser's.
    from chapter2 import roofline
    from chapter2.models import load_config

    dit_shaped = dataclasses.replace(load_config("Llama-3.1-8B"), num_hidden_layers=60, hidden_size=3072,
                                     vocab_size=16 * 4)
    dit = diffusion.denoiser_pass("Qwen-Image", 4096, dtype="bf16")
    assert dit.activation_bytes == roofline.activation_bytes(dit_shaped, 4096, 4096, "bf16")
    assert dit.activation_bytes == (2 * 60 * 4096 * 3072 + 4096 * 64) * 2
    assert dit.bytes == dit.weight_bytes + dit.activation_bytes and dit.weight_bytes == 20_430_401_088 * 2  # no KV
    # the LLM side adds its KV cache to the same two terms
    pre = roofline.prefill("Llama-3.1-8B", 4096, dtype="bf16")
    assert pre.bytes == pre.weight_bytes + pre.kv_bytes + pre.activation_bytes


def test_what_each_denoiser_predicts():
    # Scheduler configs: SDXL, SD 1.5 and PixArt-Σ "epsilon", CogVideoX-5B "v_prediction"; the flow-matching models
    # (FLUX.1, SD3.5, Qwen-Image, Sana, Wan, HunyuanVideo, LTX-Video, Mochi) predict a velocity.
    eps, v = {"SDXL", "SD1.5", "PixArt-Sigma"}, {"CogVideoX-5B"}
    expected = {k: "epsilon" if k in eps else "v_prediction" if k in v else "velocity" for k in diffusion.MODELS}
    assert {k: m.objective for k, m in diffusion.MODELS.items()} == expected
    assert set(diffusion.OBJECTIVES) == {"epsilon", "velocity", "v_prediction"}
    for m in diffusion.MODELS.values():
        assert m.objective_source.startswith("https://"), m.name
    with pytest.raises(ValueError, match="objective must be one of"):
        dataclasses.replace(diffusion.MODELS["SDXL"], objective="noise")
    with pytest.raises(ValueError, match="objective_source"):
        dataclasses.replace(diffusion.MODELS["SDXL"], objective_source="")


def test_attention_overtakes_the_weights_past_the_crossover():
    # Where the hand-derived attention FLOPs equal the rest, solved by bisection (independent of the package's
    # quadratic): about 18 thousand tokens for Qwen-Image with 256 prompt tokens (the corrected number).
    def solve(flops):
        lo, hi = 1.0, 1e6
        for _ in range(200):
            mid = (lo + hi) / 2
            total, att = flops(mid)
            lo, hi = (mid, hi) if att < total - att else (lo, mid)
        return lo
    for name, flops in (("Qwen-Image", qwen_image_flops), ("Wan2.1-T2V-14B", wan_14b_flops)):
        n_star = solve(flops)
        assert diffusion.attention_crossover_tokens(name) == pytest.approx(n_star, rel=1e-6)
        assert diffusion.denoiser_pass(name, round(n_star)).attention_share == pytest.approx(0.5, abs=1e-3)
    assert 17_500 < diffusion.attention_crossover_tokens("Qwen-Image") < 18_500
    with pytest.raises(ValueError, match="UNet"):
        diffusion.attention_crossover_tokens("SDXL")


def test_published_sizes_cite_a_source_and_say_when_unpublished():
    sizes = {p.name: p for p in diffusion.PUBLISHED_SIZES}
    # Movie Gen (arXiv:2410.13720) and Step-Video-T2V (arXiv:2502.10248): 30B; HunyuanVideo (arXiv:2412.03603):
    # over 13B; Stable Diffusion 3.5 Large: 8.1B (Stability AI); the presets from MODELS.
    assert (sizes["Movie Gen Video"].denoiser_params, sizes["Step-Video-T2V"].denoiser_params) == (30e9, 30e9)
    assert sizes["HunyuanVideo"].denoiser_params == 13e9
    assert sizes["Stable Diffusion 3.5 Large"].denoiser_params == 8.1e9
    assert sizes["Qwen-Image"].denoiser_params == 20e9 and sizes["Wan 2.1 T2V 14B"].denoiser_params == 14e9
    assert sizes["Sora"].denoiser_params is None and sizes["DALL·E 3"].denoiser_params is None
    for p in diffusion.PUBLISHED_SIZES:
        assert p.kind in ("image", "video") and p.source.startswith("https://"), p.name
    assert diffusion.published_size("HunyuanVideo") is sizes["HunyuanVideo"]
    with pytest.raises(ValueError, match="name must be one of"):
        diffusion.published_size("Veo 3")


def test_pipeline_time_is_passes_times_pass_time_plus_the_encoder():
    cost = diffusion.pipeline_cost("Qwen-Image", steps=50, guidance=True, width=1024, height=1024, gpu="H100-SXM")
    assert cost.passes == 100
    assert cost.pass_time == pytest.approx(cost.per_pass.flops / 989.4e12)  # compute bound
    assert cost.vae_time is None  # Qwen-Image's VAE is not an AutoencoderKL: its decode is not costed
    assert cost.time == pytest.approx(cost.text_encoder_time + 100 * cost.pass_time)
    # Qwen2.5-VL-7B's language model and LM head over the 34-token template + 256 prompt tokens, prompt and
    # negative prompt: 28 layers of 3584 wide (GQA 28 / 4 heads of 128), MLP 18944, vocabulary 152064.
    assert cost.text_encoder_flops == 2 * qwen_vl_encoder_flops(290)
    eight = diffusion.pipeline_cost("Qwen-Image", width=1024, height=1024, n_gpus=8)
    assert eight.time == pytest.approx(cost.time / 8)


def test_the_vae_decode_is_costed_for_autoencoderkl_pipelines():
    # FLUX.1 [schnell]'s 4 unguided passes against one decode of its AutoencoderKL at 1024 x 1024.
    cost = diffusion.pipeline_cost("FLUX.1-schnell")
    assert cost.passes == 4 and cost.vae_flops > 5e12
    assert cost.time == pytest.approx(cost.text_encoder_time + 4 * cost.pass_time + cost.vae_time)
    assert 0.02 < cost.vae_time / cost.time < 0.1


def test_wan_2_2_stores_two_experts_and_runs_one():
    m = diffusion.MODELS["Wan2.2-T2V-A14B"]
    assert m.stored_params == 2 * m.denoiser_params == 2 * 14_288_491_584


def test_video_has_far_more_latent_data_and_attention_dominates():
    image = diffusion.denoiser_pass("Qwen-Image")
    video = diffusion.denoiser_pass("Wan2.1-T2V-14B")
    assert video.tokens > 10 * image.tokens
    assert video.attention_share > 0.5 > image.attention_share


def test_image_models_are_about_a_tenth_of_a_frontier_llm():
    # Chapter 2.4.3: image and video models have about a tenth the parameters of frontier language models.
    llm = models.load_config("Qwen3-235B-A22B").params().total
    assert 0.05 < diffusion.MODELS["Qwen-Image"].denoiser_params / llm < 0.15


def test_every_model_cites_a_source():
    for m in diffusion.MODELS.values():
        assert m.source.startswith("https://"), m.name


def test_pipeline_calculator_shows_the_library_values():
    out = calculators.compute("diffusion_pipeline")
    cost = diffusion.pipeline_cost("Qwen-Image", steps=50, guidance=True, width=1024, height=1024)
    assert out["passes"] == "100 (50 steps × 2)"
    assert out["tokens"].startswith("4,096 ")
    assert out["time"].startswith(duration(cost.time))
    off = calculators.compute("diffusion_pipeline", {"guidance": "off", "steps": "30"})
    assert off["passes"] == "30 (30 steps × 1)"
    # Intensity: hand-derived FLOPs over the bytes moved (weights + activations, roofline's convention), Qwen-Image
    # at 1024 x 1024 in BF16.
    n = 4096
    intensity = qwen_image_flops(n)[0] / (2 * (20_430_401_088 + 2 * 60 * n * 3072 + n * 64))
    assert out["intensity"].startswith(f"{intensity:,.0f} ops/byte")
    labels = {o.key: o.label for o in calculators.get("diffusion_pipeline").outputs}
    assert labels["intensity"] == "Intensity of one pass (FLOPs per byte moved)"


def test_few_step_and_video_calculators():
    out = calculators.compute("few_step", {"few_steps": "8", "few_guidance": "on"})
    assert out["saved"].startswith("84.0 % of denoiser passes")
    video = calculators.compute("video_generation")
    assert video["tokens"] == "75,600"
    one = diffusion.pipeline_cost("Wan2.1-T2V-14B")
    assert video["time_one"] == f"{duration(one.time)} for 100 passes"
    bad = json.loads(calculators.compute_json("video_generation", json.dumps({"frames": "80"})))
    assert bad["ok"] is False and "1 + a multiple of 4" in bad["message"]
    bad = json.loads(calculators.compute_json("diffusion_pipeline", json.dumps({"width": "1000"})))
    assert bad["ok"] is False and "multiple of 16" in bad["message"]


def test_the_chapters_rules_of_thumb_fit_the_presets():
    # Chapter 2.3: images are denoised "in 30 to 50 steps"; 2.3.2: few-step models finish "in eight steps
    # or fewer" and run "80 to 90 percent faster".
    assert diffusion.TYPICAL_STEPS == (30, 50)
    assert diffusion.FEW_STEP_MAX_STEPS == 8
    assert diffusion.FEW_STEP_SPEEDUP == (0.80, 0.90)
    lo, hi = diffusion.TYPICAL_STEPS
    # the pipelines' own defaults spread wider than the chapter's band: 20 (Sana, PixArt-Σ), 28 (FLUX.1 [dev],
    # SD3.5), 50, 64 (Mochi); FLUX.1 [schnell] is the one few-step model
    steps = sorted({m.default_steps for m in diffusion.MODELS.values()})
    assert steps == [4, 20, 28, 50, 64]
    # FLUX.1 [schnell]'s model card: 1 to 4 steps.
    assert diffusion.MODELS["FLUX.1-schnell"].default_steps <= diffusion.FEW_STEP_MAX_STEPS
    # 8 guided steps (16 passes) against 50 guided (100): 1 - 16/100 = 0.84, inside the chapter's band;
    # against 30 guided steps (60 passes) the band holds once guidance is distilled: 1 - 8/60 = 0.867.
    s_lo, s_hi = diffusion.FEW_STEP_SPEEDUP
    guided = diffusion.few_step_saving(hi, True, diffusion.FEW_STEP_MAX_STEPS, True)
    distilled = diffusion.few_step_saving(lo, True, diffusion.FEW_STEP_MAX_STEPS, False)
    assert guided == pytest.approx(0.84) and s_lo <= guided <= s_hi
    assert distilled == pytest.approx(52 / 60) and s_lo <= distilled <= s_hi


def test_clip_length_is_frames_over_fps():
    # Wan 2.1 (wan/configs/shared_config.py): 81 frames at sample_fps = 16 -> 81 / 16 = 5.0625 s.
    assert diffusion.MODELS["Wan2.1-T2V-14B"].clip_seconds == pytest.approx(5.0625)
    assert diffusion.MODELS["Wan2.1-T2V-1.3B"].fps == 16
    with pytest.raises(ValueError, match="images"):
        _ = diffusion.MODELS["Qwen-Image"].clip_seconds


def test_the_any_pipeline_calculator():
    # Defaults: Qwen-Image at 1328² with its 50 guided steps, the library's numbers.
    out = calculators.compute("denoiser_any")
    cost = diffusion.pipeline_cost("Qwen-Image")
    assert out["tokens"] == "6,889 latent tokens + 256 prompt tokens"
    assert out["time"].startswith(f"{duration(cost.time)} per image: 100 passes")
    assert out["model"] == "QwenImageTransformer2DModel: 20.4B parameters"
    shares = out["share"]["series"][0]["y"]
    assert shares == sorted(shares) and out["chart"]["series"][0]["x"][0] == 256
    # Wan 2.2: two experts stored, one per pass; the chart runs over frames
    wan = calculators.compute("denoiser_any", {"pipeline": "Wan2.2-T2V-A14B"})
    assert "28.6B stored, 2 experts" in wan["model"] and 81 in wan["chart"]["series"][0]["x"]
    # a pasted denoiser config (here FLUX.1 [dev]'s): the denoiser alone, the class's VAE factors
    pasted = (Path(__file__).resolve().parents[1] / "src/chapter2/data/diffusion/denoisers/flux1-dev.json").read_text()
    flux = calculators.compute("denoiser_any", {"config_json": pasted, "width": "1024", "height": "1024"})
    assert flux["tokens"] == "4,096 latent tokens + 512 prompt tokens" and "no text encoder" in flux["time"]
    # bad input: an inline message naming what is wrong, on the field that caused it
    for text, field, words in (("{bad", "config_json", "not valid JSON"),
                               ('{"_class_name": "AuraFlowTransformer2DModel"}', "config_json",
                                "'AuraFlowTransformer2DModel'")):
        bad = json.loads(calculators.compute_json("denoiser_any", json.dumps({"config_json": text})))
        assert bad["ok"] is False and bad["field"] == field and words in bad["message"]
    bad = json.loads(calculators.compute_json("denoiser_any", json.dumps({"width": "1000"})))
    assert bad["ok"] is False and bad["field"] == "width" and "multiple of 16" in bad["message"]
