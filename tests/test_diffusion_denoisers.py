"""chapter2.denoiser against diffusers: every supported class, parameters equal and FLOPs within 2 % of
FlopCounterMode on the meta-device model, at two sizes each (tests/_diffusers_oracle.py says what it counts).

Fast tests build each class from a shrunk copy of a published config (same code paths, small widths); the
`slow` ones build the published configs themselves (src/chapter2/data/diffusion/denoisers, each with its
`_source`), once per module."""

from __future__ import annotations

import json
from importlib import resources

import pytest

import chapter2.denoiser as chapter2_denoiser
from chapter2.denoiser import SUPPORTED, Denoiser, vae_decoder

from _oracles import deferred

oracle = deferred("_diffusers_oracle")  # its require() skips without torch / diffusers, or fails in CI

TOL = 0.02
DATA = resources.files("chapter2") / "data" / "diffusion" / "denoisers"
PUBLISHED = {p.name.removesuffix(".json"): json.loads(p.read_text()) for p in sorted(DATA.iterdir())
             if p.name.endswith(".json")}

IMAGE_SIZES = ((512, 512, 1), (1024, 768, 1))
VIDEO_SIZES = ((768, 512, 25), (512, 320, 49))
TEXT = {"UNet2DConditionModel": 77, "ControlNetModel": 77}

# One small config per class, with the published config's switches (qk norm, dual attention, guidance, ...).
TINY = {
    "FluxTransformer2DModel": dict(num_layers=2, num_single_layers=2, attention_head_dim=16, num_attention_heads=2,
                                   joint_attention_dim=40, pooled_projection_dim=24, in_channels=16,
                                   guidance_embeds=True, axes_dims_rope=[4, 6, 6]),
    "SD3Transformer2DModel": dict(num_layers=3, attention_head_dim=8, num_attention_heads=2, joint_attention_dim=40,
                                  caption_projection_dim=16, pooled_projection_dim=24, in_channels=4, out_channels=4,
                                  sample_size=32, pos_embed_max_size=64, dual_attention_layers=[0, 1],
                                  qk_norm="rms_norm"),
    "QwenImageTransformer2DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=2,
                                        joint_attention_dim=40, in_channels=16, out_channels=4, axes_dims_rope=[2, 2, 4]),
    "WanTransformer3DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=2, text_dim=40, ffn_dim=48,
                                  freq_dim=32, in_channels=4, out_channels=4),
    "UNet2DConditionModel": dict(block_out_channels=[32, 64, 64], down_block_types=["DownBlock2D",
                                 "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"], up_block_types=["CrossAttnUpBlock2D",
                                 "CrossAttnUpBlock2D", "UpBlock2D"], cross_attention_dim=24, attention_head_dim=[2, 4, 4],
                                 transformer_layers_per_block=[1, 2, 2], layers_per_block=2, norm_num_groups=8,
                                 use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=8,
                                 projection_class_embeddings_input_dim=1280 + 6 * 8),
    "ControlNetModel": dict(block_out_channels=[32, 64, 64], down_block_types=["DownBlock2D", "CrossAttnDownBlock2D",
                            "CrossAttnDownBlock2D"], cross_attention_dim=24, attention_head_dim=[2, 4, 4],
                            transformer_layers_per_block=[1, 2, 2], layers_per_block=2, norm_num_groups=8,
                            use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=8,
                            projection_class_embeddings_input_dim=1280 + 6 * 8,
                            conditioning_embedding_out_channels=[4, 8, 8, 16]),
    "PixArtTransformer2DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=2, caption_channels=40,
                                     cross_attention_dim=16, in_channels=4, out_channels=8, patch_size=2,
                                     sample_size=32, norm_type="ada_norm_single", use_additional_conditions=False),
    "SanaTransformer2DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=4, caption_channels=40,
                                   cross_attention_dim=32, cross_attention_head_dim=16, num_cross_attention_heads=2,
                                   in_channels=8, out_channels=8),
    "HunyuanVideoTransformer3DModel": dict(num_layers=1, num_single_layers=1, num_refiner_layers=1, attention_head_dim=8,
                                           num_attention_heads=2, text_embed_dim=40, pooled_projection_dim=24,
                                           in_channels=4, out_channels=4, rope_axes_dim=[2, 2, 4]),
    "LTXVideoTransformer3DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=2, caption_channels=40,
                                       cross_attention_dim=16, in_channels=8, out_channels=8),
    "CogVideoXTransformer3DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=2, text_embed_dim=40,
                                        time_embed_dim=12, in_channels=4, out_channels=4, sample_width=16,
                                        sample_height=16, sample_frames=9, use_rotary_positional_embeddings=True),
    "MochiTransformer3DModel": dict(num_layers=2, attention_head_dim=8, num_attention_heads=2, text_embed_dim=40,
                                    time_embed_dim=12, pooled_projection_dim=24, in_channels=4),
}


def _sizes(d: Denoiser):
    return VIDEO_SIZES if d.video else IMAGE_SIZES


def _check(config: dict, model) -> None:
    d = Denoiser.from_diffusers(config)
    assert d.params().total == oracle.params(model)
    text = TEXT.get(config["_class_name"], 100)
    for w, h, f in _sizes(d):
        want = oracle.pass_flops(model, config, width=w, height=h, frames=f, text=text)
        got = d.pass_flops(width=w, height=h, frames=f, text_tokens=text)
        assert got == pytest.approx(want, rel=TOL), (config["_class_name"], w, h, f)


def test_every_supported_class_has_a_tiny_config_and_a_published_one():
    assert set(TINY) == set(SUPPORTED)
    assert {c["_class_name"] for c in PUBLISHED.values()} == set(SUPPORTED)
    assert sorted(PUBLISHED) == sorted(chapter2_denoiser.PUBLISHED)
    for name, config in PUBLISHED.items():
        assert config["_source"].startswith("https://huggingface.co/"), name


@pytest.mark.parametrize("cls", sorted(TINY))
def test_tiny_configs_match_diffusers(cls):
    config = {"_class_name": cls, **TINY[cls]}
    _check(config, oracle.build(config))


_BUILT: dict = {}


@pytest.fixture(scope="module")
def built():
    """Each published model built once per module (on the meta device: no memory for weights)."""
    def get(name):
        if name not in _BUILT:
            _BUILT[name] = oracle.build(PUBLISHED[name])
        return _BUILT[name]
    yield get
    _BUILT.clear()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_configs_match_diffusers(name, built):
    _check(PUBLISHED[name], built(name))


@pytest.mark.slow
def test_the_issues_counts(built):
    """The corrections of issue 21, from FlopCounterMode: Qwen-Image at 1328² is about 135 TFLOP with about 28 %
    attention, FLUX.1 [dev] at 1024² with 512 text tokens about 74 TFLOP with about 20 %."""
    for name, side, text, tflop, share in (("qwen-image", 1328, 256, 135, 0.28), ("flux1-dev", 1024, 512, 74, 0.20)):
        want = oracle.pass_flops(built(name), PUBLISHED[name], width=side, height=side, text=text)
        cost = Denoiser.from_diffusers(PUBLISHED[name]).pass_cost(side, side, 1, text)
        assert cost.total == pytest.approx(want, rel=TOL)
        assert cost.total / 1e12 == pytest.approx(tflop, abs=1)
        assert cost.attention_share == pytest.approx(share, abs=0.01)


def test_pixels_to_tokens_follow_each_pipeline():
    # FLUX.1 / Qwen-Image: VAE 8x, then 2 x 2 latent pixels packed per token: 1024² -> 64 x 64 tokens.
    assert Denoiser.from_diffusers(PUBLISHED["flux1-dev"]).tokens(1024, 1024) == 64 * 64
    # Sana: DC-AE 32x, patch 1: 1024² -> 32 x 32.
    assert Denoiser.from_diffusers(PUBLISHED["sana-1600m-1024px"]).tokens(1024, 1024) == 32 * 32
    # Wan: 81 frames -> 1 + 80/4 = 21 latent frames, 1280 x 720 -> 80 x 45 tokens per frame.
    assert Denoiser.from_diffusers(PUBLISHED["wan2.1-t2v-14b"]).tokens(1280, 720, 81) == 21 * 80 * 45
    # LTX-Video: 32x in space, 8x in time, 1 x 1 x 1 patches: 161 frames at 768 x 512 -> 21 x 16 x 24.
    assert Denoiser.from_diffusers(PUBLISHED["ltx-video"]).tokens(768, 512, 161) == 21 * 16 * 24
    # Mochi: 6x in time: 163 frames -> 28 latent frames.
    assert Denoiser.from_diffusers(PUBLISHED["mochi-1-preview"]).tokens(848, 480, 163) == 28 * 30 * 53
    # A UNet "token" is a latent pixel at full resolution.
    assert Denoiser.from_diffusers(PUBLISHED["sdxl-base-1.0"]).tokens(1024, 1024) == 128 * 128


def test_bad_input_names_the_class_field_and_value():
    with pytest.raises(ValueError, match="'AuraFlowTransformer2DModel'") as err:
        Denoiser.from_diffusers({"_class_name": "AuraFlowTransformer2DModel"})
    assert all(c in str(err.value) for c in SUPPORTED)
    with pytest.raises(ValueError, match=r"config\['num_layers'\] must be >= 1, got -3"):
        Denoiser.from_diffusers({**PUBLISHED["flux1-dev"], "num_layers": -3})
    with pytest.raises(ValueError, match=r"config\['qk_norm'\] must be one of"):
        Denoiser.from_diffusers({**PUBLISHED["wan2.1-t2v-14b"], "qk_norm": "layer_norm"})
    with pytest.raises(ValueError, match=r"config\['patch_size'\] must be a list of 3"):
        Denoiser.from_diffusers({**PUBLISHED["wan2.1-t2v-14b"], "patch_size": [1, 2]})
    with pytest.raises(ValueError, match="not valid JSON"):
        Denoiser.from_diffusers('{"_class_name": ')
    with pytest.raises(TypeError, match="config must be a dict"):
        Denoiser.from_diffusers([1, 2])
    d = Denoiser.from_diffusers(PUBLISHED["flux1-dev"])
    with pytest.raises(ValueError, match="width must be a multiple of 16"):
        d.pass_flops(width=1000, height=1024)
    with pytest.raises(ValueError, match="frames must be 1"):
        d.pass_flops(width=1024, height=1024, frames=5)
    with pytest.raises(ValueError, match="frames must be 1 \\+ a multiple of 4"):
        Denoiser.from_diffusers(PUBLISHED["wan2.1-t2v-14b"]).pass_flops(width=832, height=480, frames=80)


VAES = {p.name.removesuffix(".json"): json.loads(p.read_text())
        for p in sorted((resources.files("chapter2") / "data" / "diffusion" / "vae").iterdir()) if p.name.endswith(".json")}


@pytest.mark.parametrize("name", sorted(VAES))
def test_vae_decoders_match_diffusers(name):
    # The decoder half of AutoencoderKL (plus post_quant_conv when the config keeps it), one image at two sizes.
    config = VAES[name]
    assert config["_source"].startswith("https://huggingface.co/")
    d = vae_decoder(config)
    for w, h in ((512, 512), (1024, 768)):
        n, flops = oracle.vae_decode(config, width=w, height=h)
        assert d.params().total == n
        assert d.pass_flops(w, h) == pytest.approx(flops, rel=TOL)


def test_vae_decoder_rejects_other_classes():
    with pytest.raises(ValueError, match="'AutoencoderKLWan'"):
        vae_decoder({"_class_name": "AutoencoderKLWan"})
    with pytest.raises(ValueError, match=r"config\['up_block_types'\] must list 4"):
        vae_decoder({**VAES["sdxl-vae"], "up_block_types": ["UpDecoderBlock2D"]})


ENCODERS = {p.name.removesuffix(".json"): json.loads(p.read_text()) for p in
            sorted((resources.files("chapter2") / "data" / "diffusion" / "text_encoders").iterdir())
            if p.name.endswith(".json")}


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_text_encoders_match_transformers(name):
    # Parameters that run on the prompt and FLOPs of one prompt, against transformers on the meta device.
    from chapter2.text_encoder import TextEncoder
    config = ENCODERS[name]
    assert config["_source"].startswith("https://huggingface.co/")
    e = TextEncoder.from_transformers(config)
    for tokens in (77, 40) if config["architectures"][0].startswith("CLIP") else (77, 300):  # CLIP holds 77 at most
        n, flops = oracle.text_encoder(config, tokens)
        assert e.params == n
        assert e.flops(tokens) == pytest.approx(flops, rel=TOL)
    assert e.stored_params == oracle.text_encoder(config, 1, stored=True)[0]  # a VLM's vision tower, an unused head


def test_text_encoder_rejects_other_architectures():
    from chapter2.text_encoder import TextEncoder
    with pytest.raises(ValueError, match="'BertModel'"):
        TextEncoder.from_transformers({"architectures": ["BertModel"]})
    with pytest.raises(ValueError, match=r"config\['d_model'\] must be >= 1, got 0"):
        TextEncoder.from_transformers({**ENCODERS["t5-v1_1-xxl-encoder"], "d_model": 0})
