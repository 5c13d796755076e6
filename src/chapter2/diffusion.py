"""What image and video generation costs (chapter sections 2.3 and 2.4.3).

A text-to-image pipeline chains three models:

1. a text encoder turns the prompt into embeddings (once per request);
2. a denoiser, run once per step, twice per step with classifier-free
   guidance (CFG: one pass with the prompt, one without, then a blend), so
   50 steps with guidance are 100 forward passes;
3. a VAE decoder turns the final latent into pixels (once).

The denoiser works in the VAE's latent space, much smaller than pixel space,
and a diffusion transformer cuts the latent into patches, one token each:

    tokens = (latent frames / patch_t) x (H / vae / patch) x (W / vae / patch)

What the denoiser predicts depends on how it was trained (`OBJECTIVES`, and
each preset's `objective`): DDPM-style models (SD 1.x, SDXL) predict the noise
in the latent (epsilon); flow-matching / rectified-flow models (SD3, FLUX.1,
Qwen-Image, Wan 2.1) predict a velocity along the straight path between noise
and the clean latent. Either way a step is one forward pass of the same
network, so the cost model below does not depend on it.

The pipelines are read from chapter2/data/diffusion/pipelines (one model_index.json-level description each,
every component with its `_source`): the denoiser from its transformer/ or unet/config.json
(`chapter2.denoiser`: every matmul at the rows it sees, attention joint, cross or text-only, exact against
diffusers), the text encoders from their configs (`chapter2.text_encoder`, exact against transformers), the VAE
decoder from its AutoencoderKL config at the output size (other VAEs: not costed), and steps, guidance and size
from the diffusers pipeline's `__call__` defaults, or from the model card where a preset says so
(`DiffusionModel.card_settings`). With thousands
of tokens per pass the denoiser does thousands of operations per weight byte: like prefill, it is compute bound
(section 2.4.3). Attention's share of the FLOPs grows with the token count; it equals the rest at
`attention_crossover_tokens`.

Bytes follow `chapter2.roofline`'s convention for LLM prefill and decode (section 2.4 states it): the minimum
traffic to device memory, each tensor that must cross it moved once per pass. The weights are read once; a
denoiser keeps no KV cache; the activations are the hidden state each block reads and writes once (2 x blocks x
tokens x width numbers; a UNet's are left out, its width changes at every resolution) plus the predicted latent.
Everything inside a block is taken to stay on chip, so bytes and times are lower bounds at peak throughput.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from ._checks import dtype_bytes as _dtype_bytes
from ._checks import finite_real, float_array, positive_int
from .denoiser import Denoiser, published_config, vae_decoder
from .text_encoder import TextEncoder
from .hardware import get_gpu, tensor_dtype

__all__ = [
    "Denoiser",
    "DiffusionModel",
    "MODELS",
    "denoiser_passes",
    "guided_prediction",
    "latent_frames",
    "latent_tokens_image",
    "latent_tokens_video",
    "attention_flops",
    "PassCost",
    "denoiser_pass",
    "PipelineCost",
    "pipeline_cost",
    "few_step_saving",
    "attention_crossover_tokens",
    "OBJECTIVES",
    "PublishedSize",
    "PUBLISHED_SIZES",
    "published_size",
    "TYPICAL_STEPS",
    "FEW_STEP_MAX_STEPS",
    "FEW_STEP_SPEEDUP",
]


# --8<-- [start:denoiser_passes]
def denoiser_passes(steps, guidance=True) -> int:
    """Forward passes of the denoiser: steps x 2 with classifier-free guidance, steps x 1 without."""
    steps = positive_int("steps", steps)
    if not isinstance(guidance, bool):
        raise TypeError(f"guidance must be True or False, got {guidance!r}")
    return steps * (2 if guidance else 1)
# --8<-- [end:denoiser_passes]


# --8<-- [start:guided_prediction]
def guided_prediction(conditional, unconditional, scale):
    """Classifier-free guidance's mix of one step's two predictions (Ho and Salimans 2022, arXiv:2207.12598):
    unconditional + scale x (conditional - unconditional), the prediction the sampler then applies.

    `conditional` comes from the pass with the prompt, `unconditional` from the pass with the negative (or
    empty) prompt: numbers, or arrays of one shape. At scale 1 the mix is the conditional prediction; a larger
    scale moves past it, away from the unconditional one. (Qwen-Image's pipeline then rescales the mix to the
    conditional prediction's norm; the two passes it needs are the same.)
    """
    scale = finite_real("scale", scale)
    cond = float_array("conditional", conditional)
    uncond = float_array("unconditional", unconditional)
    if cond.shape != uncond.shape:
        raise ValueError(f"conditional and unconditional must have one shape, got {cond.shape} and {uncond.shape}")
    mix = uncond + scale * (cond - uncond)
    return float(mix) if mix.ndim == 0 else mix
# --8<-- [end:guided_prediction]


def few_step_saving(base_steps=50, base_guidance=True, few_steps=8, few_guidance=False) -> float:
    """Share of denoiser passes a few-step model saves: 1 - passes(few) / passes(base).

    Few-step models (latent consistency, adversarial or step distillation) run
    eight steps or fewer, and many also distill guidance into a single pass.
    50 steps with CFG (100 passes) against 8 guided steps (16) saves 84 %.
    """
    base = denoiser_passes(base_steps, base_guidance)
    few = denoiser_passes(few_steps, few_guidance)
    return 1.0 - few / base


# The chapter's rules of thumb (Inference Engineering, chapter 2, sections 2.3 and 2.3.2), kept in code so
# that pages quote them from one place; tests check them against the presets in `MODELS` and the pass counts.
TYPICAL_STEPS = (30, 50)  # "30 to 50 steps" for a full (not distilled) denoising schedule
FEW_STEP_MAX_STEPS = 8  # few-step models finish in "eight steps or fewer"
FEW_STEP_SPEEDUP = (0.80, 0.90)  # and run "80 to 90 percent faster" than the full schedule


def latent_frames(frames, temporal=1) -> int:
    """Frames in the latent. A causal video VAE keeps the first frame alone and packs the rest
    `temporal` at a time, so frames must be 1 + a multiple of `temporal`. Each VAE sets its own
    `temporal` (its `DiffusionModel.vae_temporal`): 4 for Wan 2.1, HunyuanVideo and CogVideoX (81 -> 21),
    6 for Mochi-1 (19 -> 4), 8 for LTX-Video (161 -> 21)."""
    frames, temporal = positive_int("frames", frames), positive_int("temporal", temporal)
    if temporal == 1:
        return frames
    if (frames - 1) % temporal:
        below = 1 + (frames - 1) // temporal * temporal
        raise ValueError(f"frames must be 1 + a multiple of {temporal} for this VAE ({below} or {below + temporal}), "
                         f"got {frames}")
    return 1 + (frames - 1) // temporal


def _patched(name, pixels, vae, patch) -> int:
    pixels = positive_int(name, pixels)
    if pixels % (vae * patch):
        raise ValueError(f"{name} must be a multiple of {vae * patch} (VAE {vae}x times patch {patch}), got {pixels}")
    return pixels // (vae * patch)


def latent_tokens_image(width, height, vae_factor=8, patch=2) -> int:
    """Tokens a diffusion transformer sees for one image: (W / vae / patch) x (H / vae / patch)."""
    vae_factor, patch = positive_int("vae_factor", vae_factor), positive_int("patch", patch)
    return _patched("width", width, vae_factor, patch) * _patched("height", height, vae_factor, patch)


def latent_tokens_video(frames, width, height, vae_spatial=8, vae_temporal=4, patch=(1, 2, 2)) -> int:
    """Tokens for a clip: latent frames / patch_t x (H / vae / patch_h) x (W / vae / patch_w)."""
    vae_spatial = positive_int("vae_spatial", vae_spatial)
    pt, ph, pw = (positive_int("patch", p) for p in patch)
    t = latent_frames(frames, vae_temporal)
    if t % pt:
        raise ValueError(f"latent frames ({t}) must be a multiple of the temporal patch {pt}")
    return t // pt * _patched("height", height, vae_spatial, ph) * _patched("width", width, vae_spatial, pw)


def attention_flops(tokens, n_layers, width) -> float:
    """Self-attention over `tokens` tokens in every layer: 4 x layers x tokens^2 x width.

    QK^T and PV each do 2 x tokens^2 x head_dim operations per head; heads x head_dim = width.
    """
    tokens, n_layers, width = positive_int("tokens", tokens), positive_int("n_layers", n_layers), positive_int("width", width)
    return 4.0 * n_layers * tokens**2 * width


# What a denoiser is trained to predict from the noisy latent x_t (and the timestep and the prompt).
OBJECTIVES = {
    # Ho et al. 2020, "Denoising Diffusion Probabilistic Models", arXiv:2006.11239: x_t = sqrt(a_t) x_0 +
    # sqrt(1 - a_t) eps, and the network predicts eps, the noise in x_t (Stable Diffusion 1.x, SDXL).
    "epsilon": "the noise ε in the latent (DDPM-style)",
    # Lipman et al. 2022, "Flow Matching for Generative Modeling", arXiv:2210.02747; Liu et al. 2022,
    # "Flow Straight and Fast" (rectified flow), arXiv:2209.03003; Esser et al. 2024 (SD3), arXiv:2403.03206:
    # x_t is a straight-line mix of the clean latent and the noise, and the network predicts the velocity
    # dx_t/dt, the difference between the two (data - noise when time runs from noise to data, as in the Wan
    # report; noise - data in SD3's convention, where time runs from data to noise).
    "velocity": "a velocity, the difference between the clean latent and the noise (flow matching)",
    # Salimans and Ho 2022, "Progressive Distillation", arXiv:2202.00512: v = alpha_t eps - sigma_t x_0, a blend of
    # the noise and the clean latent weighted by the noise schedule (CogVideoX's scheduler: "v_prediction").
    "v_prediction": "v, a schedule-weighted blend of the noise and the clean latent (v-prediction)",
}


GUIDANCE_MODES = {
    "cfg": 2,  # classifier-free guidance: a pass with the prompt and one without, every step
    "distilled": 1,  # guidance distilled into the model (FLUX.1 [dev], HunyuanVideo): the scale is an input
    "none": 1,  # no guidance at all (FLUX.1 [schnell])
}


CARD_SETTINGS = ("steps", "guidance", "size")
"""The settings a preset may take from its model card instead of its diffusers pipeline's `__call__` defaults."""


@dataclass(frozen=True)
class DiffusionModel:
    """A text-to-image or text-to-video pipeline, read from one description: its model_index.json-level file in
    chapter2/data/diffusion/pipelines (each component with its `_source`). Sizes are exact from the configs:

    `denoiser` (chapter2.denoiser) from transformer/ or unet/config.json; `encoders` ((TextEncoder, prompt tokens)
    per text encoder, chapter2.text_encoder); `vae_decoder` from vae/config.json when it is an AutoencoderKL
    (None for the video and DC-AE VAEs, whose decode is not costed). `patch` is (time, height, width).
    `objective` is what the denoiser predicts (a key of `OBJECTIVES`), `objective_source` who says so.
    A model with two experts (Wan 2.2 A14B) stores `stored_params` and runs `denoiser_params` per pass.

    `default_steps`, `guidance_mode` and `default_size` are the diffusers pipeline's `__call__` defaults except
    the settings named in `card_settings` ("steps", "guidance", "size"), which follow the model card
    (`card_source`): FLUX.1 [schnell]'s 4 steps (the pipeline's default is 28), Qwen-Image's 1328² and its true
    CFG (the pipeline's default is 1024², and it runs the second pass only when given a negative prompt, which
    the model card passes), Wan 14B's 1280 × 720 (the pipeline's default is 832 × 480).
    """

    key: str
    name: str
    kind: str  # "image" or "video"
    architecture: str  # "DiT", "MMDiT" or "UNet"
    denoiser: Denoiser
    encoders: tuple  # ((TextEncoder, tokens), ...)
    vae: dict  # the pipeline's vae entry (class, factors, config name or None, _source)
    vae_decoder: Denoiser | None
    text_tokens: int  # prompt tokens the denoiser sees
    n_layers: int | None  # blocks of a transformer denoiser (for its activation bytes); None for a UNet
    width: int | None
    default_steps: int
    guidance_mode: str  # a key of GUIDANCE_MODES
    default_size: tuple  # (width, height) in pixels
    default_frames: int
    source: str
    fps: int | None
    objective: str | None  # None for a bare pasted config, whose training objective is not known
    objective_source: str | None
    experts: int = 1
    card_settings: tuple = ()  # settings that follow the model card, not the pipeline's __call__ defaults
    card_source: str | None = None

    def __post_init__(self):
        if self.objective is None and self.objective_source is None:  # a bare pasted config: not known
            return
        if self.objective not in OBJECTIVES:
            raise ValueError(f"{self.name}: objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if not self.objective_source.startswith("https://"):
            raise ValueError(f"{self.name}: objective_source must cite a paper, model card or config (https://...)")
        if self.guidance_mode not in GUIDANCE_MODES:
            raise ValueError(f"{self.name}: guidance must be one of {', '.join(GUIDANCE_MODES)}, got {self.guidance_mode!r}")
        if not set(self.card_settings) <= set(CARD_SETTINGS):
            raise ValueError(f"{self.name}: card_settings must be among {', '.join(CARD_SETTINGS)}, got {self.card_settings!r}")
        if self.card_settings and not (self.card_source or "").startswith("https://"):
            raise ValueError(f"{self.name}: settings from a model card must cite it (https://...)")

    @property
    def guidance(self) -> bool:
        """True when each step runs two passes (classifier-free guidance)."""
        return self.guidance_mode == "cfg"

    @property
    def denoiser_params(self) -> int:
        """Parameters one pass runs (one expert of a two-expert model)."""
        return self.denoiser.params().total

    @property
    def stored_params(self) -> int:
        return self.experts * self.denoiser_params

    @property
    def text_encoder(self) -> str:
        return " + ".join(e.architecture for e, _ in self.encoders)

    @property
    def text_encoder_params(self) -> int:
        return sum(e.params for e, _ in self.encoders)

    @property
    def vae_spatial(self) -> int:
        return self.denoiser.vae_spatial

    @property
    def vae_temporal(self) -> int:
        return self.denoiser.vae_temporal

    @property
    def latent_channels(self) -> int:
        return self.denoiser.latent_channels

    @property
    def patch(self) -> tuple:
        return self.denoiser.patch

    @property
    def costed(self) -> bool:
        return True

    @property
    def clip_seconds(self) -> float:
        """Length of a default clip in seconds: default_frames / fps (video models only)."""
        if self.fps is None:
            raise ValueError(f"{self.name} makes images: it has no clip length")
        return self.default_frames / self.fps

    def tokens(self, width=None, height=None, frames=None) -> int:
        width = self.default_size[0] if width is None else width
        height = self.default_size[1] if height is None else height
        frames = self.default_frames if frames is None else frames
        if self.kind == "image" and positive_int("frames", frames) != 1:
            raise ValueError(f"{self.name} makes images: frames must be 1, got {frames}")
        return self.denoiser.tokens(width, height, frames)


def _data(*parts) -> dict:
    path = resources.files("chapter2").joinpath("data", "diffusion", *parts)
    return json.loads(path.read_text(encoding="utf-8"))


_MMDIT = ("FluxTransformer2DModel", "SD3Transformer2DModel", "QwenImageTransformer2DModel",
          "HunyuanVideoTransformer3DModel", "MochiTransformer3DModel")


def load_pipeline(key) -> DiffusionModel:
    """The pipeline described in chapter2/data/diffusion/pipelines/<key>.json (`PIPELINES`)."""
    if key not in PIPELINES:
        raise ValueError(f"key must be one of {', '.join(PIPELINES)}, got {key!r}")
    p = _data("pipelines", f"{key}.json")
    vae, dflt = p["vae"], p["defaults"]
    config = published_config(p["transformer"])
    den = Denoiser.from_diffusers(config, vae_spatial=vae["spatial"], vae_temporal=vae["temporal"])
    cls = config["_class_name"]
    unet = cls == "UNet2DConditionModel"
    arch = "UNet" if unet else "MMDiT" if cls in _MMDIT else "DiT"
    layers = None if unet else config.get("num_layers", 0) + config.get("num_single_layers", 0) or None
    width = None if unet else config["num_attention_heads"] * config["attention_head_dim"]
    encoders = tuple((TextEncoder.from_transformers(_data("text_encoders", f"{e['config']}.json")), e["tokens"])
                     for e in p["text_encoders"])
    decoder = vae_decoder(_data("vae", f"{vae['config']}.json")) if vae["config"] else None
    card = tuple(k for k in CARD_SETTINGS if f"{k}_source" in dflt)
    sources = {dflt[f"{k}_source"] for k in card}
    if len(sources) > 1:
        raise ValueError(f"{key}: settings from more than one model card: {sorted(sources)}")
    return DiffusionModel(
        key, p["name"], p["kind"], arch, den, encoders, vae, decoder, dflt["denoiser_text_tokens"], layers, width,
        dflt["steps"], dflt["guidance"], (dflt["width"], dflt["height"]), dflt["frames"], p["_source"], dflt["fps"],
        p["objective"], p["objective_source"], experts=2 if p.get("transformer_2") else 1, card_settings=card,
        card_source=sources.pop() if sources else None)


PIPELINES = ("flux1-dev", "flux1-schnell", "sd3.5-medium", "sd3.5-large", "qwen-image", "sana-1600m-1024px",
             "pixart-sigma", "sdxl", "sd1.5", "wan2.1-t2v-1.3b", "wan2.1-t2v-14b", "wan2.2-t2v-a14b", "hunyuanvideo",
             "ltx-video", "cogvideox-5b", "mochi-1-preview")
"""The shipped pipeline descriptions (chapter2/data/diffusion/pipelines)."""

MODELS = {m.name: m for m in map(load_pipeline, PIPELINES)}


def model_from_config(config, *, name="pasted config.json") -> DiffusionModel:
    """A pipeline around a bare denoiser config (a dict or its JSON text): the denoiser alone, with its class's
    usual VAE factors and prompt length, no text encoder and no VAE decode costed; 50 guided steps; a default
    size of 1024² (images) or 832 × 480 and the first frame count past 80 its VAE takes (video)."""
    den = Denoiser.from_diffusers(config)
    cfg = json.loads(config) if isinstance(config, str) else config
    heads, head_dim = cfg.get("num_attention_heads"), cfg.get("attention_head_dim")
    unet = den.levels > 1 or den.class_name == "UNet2DConditionModel"
    blocks = None if unet else (cfg.get("num_layers") or 0) + (cfg.get("num_single_layers") or 0) or None
    width = heads * head_dim if not unet and isinstance(heads, int) and isinstance(head_dim, int) else None
    kind = "video" if den.video else "image"
    frames = 1 + den.vae_temporal * -(-80 // den.vae_temporal) if den.video else 1
    size = (832, 480) if den.video else (1024, 1024)
    arch = "UNet" if unet else "MMDiT" if den.class_name in _MMDIT else "DiT"
    return DiffusionModel(name, name, kind, arch, den, (), {"config": None}, None, den.text_tokens,
                          blocks if width else None, width, 50, "cfg", size, frames, "", None, None, None)
"""Every shipped pipeline by its display name ("FLUX.1-dev", "Qwen-Image", "Wan2.1-T2V-14B", ...)."""


@dataclass(frozen=True)
class PublishedSize:
    """A generator's parameter count as its makers published it (None: they have not published one), and, where
    this package ships its configs (`preset`, a name in `MODELS`), the count from those configs, which diffusers
    builds to the same number on the meta device (tests/test_diffusion_denoisers.py).

    `active_params`: the parameters one token runs, where the model is a mixture of experts and its makers say
    (None for a dense model, whose active parameters are all of them, and where they do not say).
    `moe`: the model routes tokens to experts. `open_weights`: its weights are published.
    """

    name: str
    kind: str  # "image" or "video"
    released: str  # year-month of the release or report
    denoiser_params: float | None
    source: str
    open_weights: bool = True
    preset: str | None = None
    moe: bool = False
    active_params: float | None = None

    @property
    def params(self) -> float | None:
        """Every parameter the model stores: counted from the shipped configs where there are some (both experts of
        Wan 2.2 A14B), else as published."""
        return float(MODELS[self.preset].stored_params) if self.preset else self.denoiser_params

    @property
    def active(self) -> float | None:
        """Parameters one token (or one denoiser pass) runs: one expert of a two-expert preset, a mixture of
        experts' published active count, or all of a dense model's; None where not published."""
        if self.preset:
            return float(MODELS[self.preset].denoiser_params)
        return self.active_params if self.moe else self.denoiser_params


# Sizes as published, to weigh the chapter's "video models have three to five times the parameters of image models"
# (section 2.3.3); where the configs ship (`preset`), the count comes from them.
PUBLISHED_SIZES = (  # image models, then video models, each by release date
    # SDXL paper (arXiv:2307.01952): "a 2.6B parameter UNet".
    PublishedSize("SDXL", "image", "2023-07", 2.6e9, "https://arxiv.org/abs/2307.01952", preset="SDXL"),
    # OpenAI's DALL-E 3 paper ("Improving Image Generation with Better Captions") and system card give no size.
    PublishedSize("DALL·E 3", "image", "2023-10", None, "https://cdn.openai.com/papers/dall-e-3.pdf",
                  open_weights=False),
    # The model card: "a 12 billion parameter rectified flow transformer".
    PublishedSize("FLUX.1 [dev]", "image", "2024-08", 12e9, "https://huggingface.co/black-forest-labs/FLUX.1-dev",
                  preset="FLUX.1-dev"),
    # Stability AI's release post: "At 8.1 billion parameters" (an MMDiT, rectified flow like SD3).
    PublishedSize("Stable Diffusion 3.5 Large", "image", "2024-10", 8.1e9,
                  "https://stability.ai/news/introducing-stable-diffusion-3-5", preset="SD3.5-Large"),
    # The model card: "a new open-source image generative foundation model with 17B parameters" (a sparse DiT whose
    # feed-forward layers are a mixture of experts; no active count published).
    PublishedSize("HiDream-I1", "image", "2025-04", 17e9, "https://huggingface.co/HiDream-ai/HiDream-I1-Full",
                  moe=True),
    # The Qwen-Image report: a 20B MMDiT.
    PublishedSize("Qwen-Image", "image", "2025-08", 20e9, "https://arxiv.org/abs/2508.02324", preset="Qwen-Image"),
    # The model card: a mixture of experts with 64 experts, "a total of 80 billion parameters" and "13 billion
    # activated per token"; an autoregressive language model that generates the image itself (diffusion inside
    # the LLM), not a separate denoiser.
    PublishedSize("HunyuanImage 3.0", "image", "2025-09", 80e9, "https://huggingface.co/tencent/HunyuanImage-3.0",
                  moe=True, active_params=13e9),
    # The model card: "a 32 billion parameter rectified flow transformer" (dense).
    PublishedSize("FLUX.2 [dev]", "image", "2025-11", 32e9, "https://huggingface.co/black-forest-labs/FLUX.2-dev"),
    # OpenAI's Sora technical report ("Video generation models as world simulators") gives no size.
    PublishedSize("Sora", "video", "2024-02", None,
                  "https://openai.com/index/video-generation-models-as-world-simulators/", open_weights=False),
    # Movie Gen (Meta), arXiv:2410.13720: "Our largest video generation model is a 30B parameter transformer".
    PublishedSize("Movie Gen Video", "video", "2024-10", 30e9, "https://arxiv.org/abs/2410.13720", open_weights=False),
    # HunyuanVideo (Tencent), arXiv:2412.03603: "a video generative model with over 13 billion parameters".
    PublishedSize("HunyuanVideo", "video", "2024-12", 13e9, "https://arxiv.org/abs/2412.03603", preset="HunyuanVideo"),
    # The Wan report: 1.3B and 14B models.
    PublishedSize("Wan 2.1 T2V 1.3B", "video", "2025-02", 1.3e9, "https://arxiv.org/abs/2503.20314",
                  preset="Wan2.1-T2V-1.3B"),
    PublishedSize("Wan 2.1 T2V 14B", "video", "2025-02", 14e9, "https://arxiv.org/abs/2503.20314",
                  preset="Wan2.1-T2V-14B"),
    # Step-Video-T2V (StepFun), arXiv:2502.10248: "a state-of-the-art text-to-video pre-trained model with 30B
    # parameters".
    PublishedSize("Step-Video-T2V", "video", "2025-02", 30e9, "https://arxiv.org/abs/2502.10248"),
    # The model card: "A14B": two 14B experts (high noise, low noise), one per denoising step; 27B in total as
    # published, counted here from the shipped transformer config (both experts have its shape).
    PublishedSize("Wan 2.2 T2V A14B", "video", "2025-07", 27e9, "https://huggingface.co/Wan-AI/Wan2.2-T2V-A14B",
                  preset="Wan2.2-T2V-A14B", moe=True),
)


def published_size(name) -> PublishedSize:
    """The `PUBLISHED_SIZES` entry called `name`."""
    for p in PUBLISHED_SIZES:
        if p.name == name:
            return p
    raise ValueError(f"name must be one of {', '.join(p.name for p in PUBLISHED_SIZES)}, got {name!r}")


def get_model(model) -> DiffusionModel:
    if isinstance(model, DiffusionModel):
        return model
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    return MODELS[model]


@dataclass(frozen=True)
class PassCost:
    """One denoiser forward pass over `tokens` latent tokens.

    Bytes follow `chapter2.roofline` (weights read once, a KV cache, of which a
    denoiser has none, and the activations: every block's input and output
    hidden states and the predicted latent, each moved once):
    bytes = weight_bytes + activation_bytes. intensity = flops / bytes.
    """

    tokens: int
    linear_flops: float
    attention_flops: float
    weight_bytes: float
    activation_bytes: float = 0.0

    @property
    def flops(self) -> float:
        return self.linear_flops + self.attention_flops

    @property
    def bytes(self) -> float:
        return self.weight_bytes + self.activation_bytes

    @property
    def intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def attention_share(self) -> float:
        return self.attention_flops / self.flops


def _pass_cost(m: DiffusionModel, flops, dtype) -> PassCost:
    """A PassCost from the exact FLOPs (`chapter2.denoiser.PassFlops`) and the byte convention above. A UNet's
    activations change width at every resolution; its bytes here are the weights and the predicted latent."""
    b = _dtype_bytes("dtype", tensor_dtype(dtype))
    out_per_token = m.latent_channels * m.patch[0] * m.patch[1] * m.patch[2]  # the predicted latent patch
    hidden = 2.0 * m.n_layers * flops.tokens * m.width if m.n_layers else 0.0
    return PassCost(
        tokens=flops.tokens,
        linear_flops=float(flops.linear + flops.conv),
        attention_flops=float(flops.attention),
        weight_bytes=m.denoiser_params * b,
        activation_bytes=(hidden + flops.tokens * out_per_token) * b,
    )


def denoiser_pass(model, tokens=None, *, dtype="bf16") -> PassCost:
    """Cost of one denoiser pass over `tokens` latent tokens (default: the preset's size) with the preset's prompt
    length: every matmul at the rows it sees and attention, from the exact denoiser (`chapter2.denoiser`)."""
    m = get_model(model)
    if tokens is None:
        w, h = m.default_size
        return _pass_cost(m, m.denoiser.pass_cost(w, h, m.default_frames, m.text_tokens), dtype)
    return _pass_cost(m, m.denoiser.cost_at_tokens(positive_int("tokens", tokens), m.text_tokens), dtype)


def attention_crossover_tokens(model) -> float:
    """Latent tokens at which attention's FLOPs equal the rest of a pass's (`Denoiser.attention_crossover_tokens`,
    at the preset's prompt length). Below it the weight matmuls dominate, above it attention does."""
    m = get_model(model)
    return m.denoiser.attention_crossover_tokens(m.text_tokens)


@dataclass(frozen=True)
class PipelineCost:
    """A whole request: the text encoders, `passes` denoiser passes, one VAE decode. Times are lower bounds.

    `vae_flops` / `vae_time` are None when the pipeline's VAE is not an AutoencoderKL (video VAEs, DC-AE): its
    decode is then left out of `time`."""

    model: DiffusionModel
    steps: int
    guidance: bool
    passes: int
    per_pass: PassCost
    text_encoder_flops: float
    pass_time: float
    text_encoder_time: float
    n_gpus: int
    vae_flops: float | None = None
    vae_time: float | None = None

    @property
    def denoiser_flops(self) -> float:
        return self.passes * self.per_pass.flops

    @property
    def flops(self) -> float:
        return self.text_encoder_flops + self.denoiser_flops + (self.vae_flops or 0.0)

    @property
    def denoiser_time(self) -> float:
        return self.passes * self.pass_time

    @property
    def time(self) -> float:
        return self.text_encoder_time + self.denoiser_time + (self.vae_time or 0.0)


def pipeline_cost(model, *, steps=None, guidance=None, width=None, height=None, frames=None,
                  gpu="H100-SXM", dtype="bf16", n_gpus=1) -> PipelineCost:
    """Estimate one generation: passes, FLOPs and a lower-bound time on `n_gpus` GPUs.

    Defaults come from the pipeline (its steps, guidance and size). Each text encoder runs on its prompt, and
    with guidance on the negative prompt too (`TextEncoder.flops`); each pass takes max(flops / peak, bytes /
    bandwidth); the VAE decoder runs once at the output size (AutoencoderKL pipelines). `n_gpus` splits all of it
    evenly (ideal sequence parallelism, as video models use a whole node for one request). `guidance` (True or
    False) overrides the pipeline's: True runs two passes a step.
    """
    m = get_model(model)
    steps = m.default_steps if steps is None else steps
    guidance = m.guidance if guidance is None else guidance
    n_gpus = positive_int("n_gpus", n_gpus)
    passes = denoiser_passes(steps, guidance)
    w = m.default_size[0] if width is None else width
    h = m.default_size[1] if height is None else height
    f = m.default_frames if frames is None else frames
    m.tokens(w, h, f)  # the pipeline's own checks of the size
    per_pass = _pass_cost(m, m.denoiser.pass_cost(w, h, f, m.text_tokens), dtype)
    g, d = get_gpu(gpu), tensor_dtype(dtype)
    b = _dtype_bytes("dtype", d)
    peak, bw = g.peak_flops(d) * n_gpus, g.bandwidth * n_gpus
    pass_time = max(per_pass.flops / peak, per_pass.bytes / bw)
    prompts = 2 if guidance else 1
    enc_flops = prompts * float(sum(e.flops(t) for e, t in m.encoders))
    enc_time = max(enc_flops / peak, m.text_encoder_params * b / bw)
    vae_flops = vae_time = None
    if m.vae_decoder is not None:
        vae_flops = float(m.vae_decoder.pass_flops(w, h))
        vae_time = max(vae_flops / peak, m.vae_decoder.params().total * b / bw)
    return PipelineCost(m, positive_int("steps", steps), guidance, passes, per_pass, enc_flops, pass_time, enc_time,
                        n_gpus, vae_flops, vae_time)
