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

Every pass runs every weight over every token (2 x params x tokens FLOPs) and
attention over all token pairs (4 x layers x tokens^2 x width FLOPs). With
thousands of tokens per pass the denoiser does thousands of operations per
weight byte: like prefill, it is compute bound (section 2.4.3). Attention's
share of those FLOPs grows with the token count; it equals the weights' share
at `attention_crossover_tokens` = params / (2 x layers x width).

Bytes follow `chapter2.roofline`'s convention for LLM prefill and decode
(section 2.4 states it): the minimum traffic to device memory, each tensor
that must cross it moved once per pass. The weights are read once; the KV
cache (the state a model keeps between passes) is read and written once, and
a denoiser keeps none; the activations are the hidden state each block reads
and writes once (2 x layers x tokens x width numbers) plus the output the pass
writes once (the predicted latent: latent channels x patch volume per token).
Everything inside a block (Q, K, V, scores) is taken to stay on chip, so bytes
and times are lower bounds. The text encoder's bytes are its weights: its
layer sizes are not in the presets, and its activations would add a few
percent (about 1.5 to 3.5 % for the presets' encoders, at their prompt lengths) to a part
of the request that is small anyway.

Model sizes come from the papers and configs cited in `MODELS`; the FLOP counts
are first-order estimates (text tokens and small layers such as norms and
timestep embeddings are left out; the VAE decode is counted as one pass but
not costed) and times are lower bounds at peak throughput.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import dtype_bytes as _dtype_bytes
from ._checks import positive_int
from .denoiser import Denoiser
from .hardware import get_gpu, tensor_dtype

__all__ = [
    "Denoiser",
    "DiffusionModel",
    "MODELS",
    "denoiser_passes",
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
    `temporal` at a time, so frames must be 1 + a multiple of `temporal` (Wan 2.1: 81 -> 21)."""
    frames, temporal = positive_int("frames", frames), positive_int("temporal", temporal)
    if temporal == 1:
        return frames
    if (frames - 1) % temporal:
        raise ValueError(f"frames must be 1 + a multiple of {temporal} for this VAE, got {frames}")
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
}


@dataclass(frozen=True)
class DiffusionModel:
    """A text-to-image or text-to-video pipeline, in the sizes that set its cost.

    `width` is the attention width (heads x head dim) and `n_layers` the
    transformer blocks of the denoiser; None for a UNet, whose convolutions
    this first-order model does not cost. `patch` is (time, height, width).
    `objective` is what the denoiser predicts (a key of `OBJECTIVES`), with
    `objective_source` the paper, model card or config that says so.
    """

    name: str
    kind: str  # "image" or "video"
    architecture: str  # "DiT", "MMDiT" or "UNet"
    denoiser_params: float
    text_encoder: str
    text_encoder_params: float
    text_tokens: int
    vae_spatial: int
    vae_temporal: int
    latent_channels: int
    patch: tuple
    n_layers: int | None
    width: int | None
    default_steps: int
    guidance: bool
    default_size: tuple  # (width, height) in pixels
    default_frames: int
    source: str
    fps: int | None = None  # playback frame rate of a video model's clips (None for image models)
    objective: str = ""  # "epsilon" or "velocity" (`OBJECTIVES`)
    objective_source: str = ""

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"{self.name}: objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if not self.objective_source.startswith("https://"):
            raise ValueError(f"{self.name}: objective_source must cite a paper, model card or config (https://...)")

    @property
    def costed(self) -> bool:
        return self.n_layers is not None

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
        if self.kind == "image":
            if positive_int("frames", frames) != 1:
                raise ValueError(f"{self.name} makes images: frames must be 1, got {frames}")
            return latent_tokens_image(width, height, self.vae_spatial, self.patch[1])
        return latent_tokens_video(frames, width, height, self.vae_spatial, self.vae_temporal, self.patch)


MODELS = {
    # SDXL: Podell et al. 2023, "SDXL: Improving Latent Diffusion Models for High-Resolution Image
    # Synthesis", arXiv:2307.01952: 2.6B-parameter UNet, two CLIP text encoders with 817M parameters in
    # total, VAE with 8x downsampling and 4 latent channels, 1024x1024 base resolution.
    "SDXL": DiffusionModel(
        "SDXL", "image", "UNet", 2.6e9, "CLIP ViT-L + OpenCLIP ViT-bigG", 0.817e9, 77,
        8, 1, 4, (1, 1, 1), None, None, 50, True, (1024, 1024), 1,
        "https://arxiv.org/abs/2307.01952",
        # DDPM-style noise prediction: the base model's scheduler config says "prediction_type": "epsilon".
        objective="epsilon",
        objective_source="https://huggingface.co/stabilityai/stable-diffusion-xl-base-1.0/blob/main/scheduler/"
                         "scheduler_config.json",
    ),
    # Qwen-Image: Qwen team 2025, "Qwen-Image Technical Report", arXiv:2508.02324: Qwen2.5-VL (7B) as
    # the condition encoder, a 20B MMDiT, a VAE with 8x spatial compression and 16 channels. Transformer
    # config (Qwen/Qwen-Image, transformer/config.json): 60 layers, 24 heads x 128 = 3072 wide, patch 2.
    # Defaults from the model card: 50 steps, true CFG (scale 4), 1328x1328 for 1:1. The prompt is not
    # padded to a fixed length; 256 tokens is an assumption (the encoder's share is tiny either way).
    "Qwen-Image": DiffusionModel(
        "Qwen-Image", "image", "MMDiT", 20e9, "Qwen2.5-VL-7B", 7e9, 256,
        8, 1, 16, (1, 2, 2), 60, 3072, 50, True, (1328, 1328), 1,
        "https://arxiv.org/abs/2508.02324 ; https://huggingface.co/Qwen/Qwen-Image",
        # Trained with a flow-matching objective (the report's pre-training section); the pipeline samples
        # with diffusers' FlowMatchEulerDiscreteScheduler (scheduler/scheduler_config.json).
        objective="velocity", objective_source="https://arxiv.org/abs/2508.02324",
    ),
    # FLUX.1 [dev]: Black Forest Labs model card: a 12B rectified-flow transformer trained with guidance
    # distillation (one pass per step). diffusers FluxTransformer2DModel config: 19 double-stream + 38
    # single-stream blocks, 24 heads x 128 = 3072 wide, 2x2 patches over a 16-channel, 8x VAE latent;
    # T5-XXL encoder (4.7B) + CLIP-L text model (0.12B), prompts padded to 512 tokens.
    "FLUX.1-dev": DiffusionModel(
        "FLUX.1-dev", "image", "MMDiT", 12e9, "T5-XXL encoder + CLIP-L", 4.8e9, 512,
        8, 1, 16, (1, 2, 2), 57, 3072, 50, False, (1024, 1024), 1,
        "https://huggingface.co/black-forest-labs/FLUX.1-dev",
        # The model card: "a 12 billion parameter rectified flow transformer" (rectified flow as in SD3,
        # arXiv:2403.03206); diffusers samples it with FlowMatchEulerDiscreteScheduler.
        objective="velocity", objective_source="https://huggingface.co/black-forest-labs/FLUX.1-dev",
    ),
    # FLUX.1 [schnell]: same architecture, timestep-distilled to 1-4 steps, no CFG, 256 text tokens.
    "FLUX.1-schnell": DiffusionModel(
        "FLUX.1-schnell", "image", "MMDiT", 12e9, "T5-XXL encoder + CLIP-L", 4.8e9, 256,
        8, 1, 16, (1, 2, 2), 57, 3072, 4, False, (1024, 1024), 1,
        "https://huggingface.co/black-forest-labs/FLUX.1-schnell",
        objective="velocity", objective_source="https://huggingface.co/black-forest-labs/FLUX.1-schnell",
    ),
    # Wan 2.1: Wan team 2025, "Wan: Open and Advanced Large-Scale Video Generative Models",
    # arXiv:2503.20314, and github.com/Wan-Video/Wan2.1 (wan/configs): Wan-VAE compresses 4x in time and
    # 8x in space (vae_stride (4, 8, 8)) into 16 channels; patch (1, 2, 2); 14B: dim 5120, 40 layers;
    # umT5-XXL text encoder (its BF16 encoder checkpoint is 11.4 GB: about 5.7B parameters), 512 text
    # tokens; 81 frames played at 16 fps (wan/configs/shared_config.py: sample_fps = 16), 50 sampling
    # steps with CFG (scale 5).
    "Wan2.1-T2V-14B": DiffusionModel(
        "Wan2.1-T2V-14B", "video", "DiT", 14e9, "umT5-XXL encoder", 5.7e9, 512,
        8, 4, 16, (1, 2, 2), 40, 5120, 50, True, (1280, 720), 81,
        "https://arxiv.org/abs/2503.20314 ; https://github.com/Wan-Video/Wan2.1", fps=16,
        # The Wan report: trained with flow matching (rectified flow), x_t = t x_1 + (1 - t) x_0 with x_1 the
        # latent and x_0 the noise; the model predicts the velocity v_t = x_1 - x_0.
        objective="velocity", objective_source="https://arxiv.org/abs/2503.20314",
    ),
    # Wan 2.1 1.3B: dim 1536, 30 layers, same VAE and patching; 480p (832x480) is its native size.
    "Wan2.1-T2V-1.3B": DiffusionModel(
        "Wan2.1-T2V-1.3B", "video", "DiT", 1.3e9, "umT5-XXL encoder", 5.7e9, 512,
        8, 4, 16, (1, 2, 2), 30, 1536, 50, True, (832, 480), 81,
        "https://arxiv.org/abs/2503.20314 ; https://github.com/Wan-Video/Wan2.1", fps=16,
        objective="velocity", objective_source="https://arxiv.org/abs/2503.20314",
    ),
}


@dataclass(frozen=True)
class PublishedSize:
    """A denoiser's parameter count as its makers published it (None: they have not published one)."""

    name: str
    kind: str  # "image" or "video"
    released: str  # year-month of the release or report
    denoiser_params: float | None
    source: str


# Denoiser sizes as published, to weigh the chapter's "video models have three to five times the parameters
# of image models" (section 2.3.3). The page's presets come from `MODELS`; the rest are cited here.
PUBLISHED_SIZES = (  # image models, then video models, each by release date
    PublishedSize("SDXL", "image", "2023-07", MODELS["SDXL"].denoiser_params, MODELS["SDXL"].source),
    # OpenAI's DALL-E 3 paper ("Improving Image Generation with Better Captions") and system card give no size.
    PublishedSize("DALL·E 3", "image", "2023-10", None, "https://cdn.openai.com/papers/dall-e-3.pdf"),
    PublishedSize("FLUX.1 [dev]", "image", "2024-08", MODELS["FLUX.1-dev"].denoiser_params,
                  MODELS["FLUX.1-dev"].source),
    # Stability AI's release post: "At 8.1 billion parameters" (an MMDiT, rectified flow like SD3).
    PublishedSize("Stable Diffusion 3.5 Large", "image", "2024-10", 8.1e9,
                  "https://stability.ai/news/introducing-stable-diffusion-3-5"),
    PublishedSize("Qwen-Image", "image", "2025-08", MODELS["Qwen-Image"].denoiser_params,
                  "https://arxiv.org/abs/2508.02324"),
    # OpenAI's Sora technical report ("Video generation models as world simulators") gives no size.
    PublishedSize("Sora", "video", "2024-02", None,
                  "https://openai.com/index/video-generation-models-as-world-simulators/"),
    # Movie Gen (Meta), arXiv:2410.13720: "Our largest video generation model is a 30B parameter transformer".
    PublishedSize("Movie Gen Video", "video", "2024-10", 30e9, "https://arxiv.org/abs/2410.13720"),
    # HunyuanVideo (Tencent), arXiv:2412.03603: "a video generative model with over 13 billion parameters".
    PublishedSize("HunyuanVideo", "video", "2024-12", 13e9, "https://arxiv.org/abs/2412.03603"),
    PublishedSize("Wan 2.1 T2V 1.3B", "video", "2025-02", MODELS["Wan2.1-T2V-1.3B"].denoiser_params,
                  "https://arxiv.org/abs/2503.20314"),
    PublishedSize("Wan 2.1 T2V 14B", "video", "2025-02", MODELS["Wan2.1-T2V-14B"].denoiser_params,
                  "https://arxiv.org/abs/2503.20314"),
    # Step-Video-T2V (StepFun), arXiv:2502.10248: "a state-of-the-art text-to-video pre-trained model with 30B
    # parameters".
    PublishedSize("Step-Video-T2V", "video", "2025-02", 30e9, "https://arxiv.org/abs/2502.10248"),
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


def denoiser_pass(model, tokens=None, *, dtype="bf16") -> PassCost:
    """Cost of one denoiser pass: 2 x params x tokens for the weights, plus attention over the latent."""
    m = get_model(model)
    if not m.costed:
        raise ValueError(f"{m.name} has a {m.architecture} denoiser; this model only costs transformer denoisers")
    tokens = m.tokens() if tokens is None else positive_int("tokens", tokens)
    b = _dtype_bytes("dtype", tensor_dtype(dtype))
    out_per_token = m.latent_channels * m.patch[0] * m.patch[1] * m.patch[2]  # the predicted latent patch
    return PassCost(
        tokens=tokens,
        linear_flops=2.0 * m.denoiser_params * tokens,
        attention_flops=attention_flops(tokens, m.n_layers, m.width),
        weight_bytes=m.denoiser_params * b,
        activation_bytes=(2.0 * m.n_layers * tokens * m.width + tokens * out_per_token) * b,
    )


def attention_crossover_tokens(model) -> float:
    """Latent tokens at which attention's FLOPs equal the weights': params / (2 x layers x width).

    Per pass the weights do 2 x P x N FLOPs and attention 4 x L x N^2 x W, so
    attention's share is N / (N + N*) with N* = P / (2 L W): below N* the
    weights dominate, above it attention does.
    """
    m = get_model(model)
    if not m.costed:
        raise ValueError(f"{m.name} has a {m.architecture} denoiser; this model only costs transformer denoisers")
    return m.denoiser_params / (2.0 * m.n_layers * m.width)


@dataclass(frozen=True)
class PipelineCost:
    """A whole request: encoder, `passes` denoiser passes, one VAE decode (not costed). Times are lower bounds."""

    model: DiffusionModel
    steps: int
    guidance: bool
    passes: int
    per_pass: PassCost
    text_encoder_flops: float
    pass_time: float
    text_encoder_time: float
    n_gpus: int

    @property
    def denoiser_flops(self) -> float:
        return self.passes * self.per_pass.flops

    @property
    def flops(self) -> float:
        return self.text_encoder_flops + self.denoiser_flops

    @property
    def denoiser_time(self) -> float:
        return self.passes * self.pass_time

    @property
    def time(self) -> float:
        return self.text_encoder_time + self.denoiser_time


def pipeline_cost(model, *, steps=None, guidance=None, width=None, height=None, frames=None,
                  gpu="H100-SXM", dtype="bf16", n_gpus=1) -> PipelineCost:
    """Estimate one generation: passes, FLOPs and a lower-bound time on `n_gpus` GPUs.

    Defaults come from the model (its usual steps, guidance and size). The
    text encoder runs on the prompt, and with guidance on the negative prompt
    too: 2 x params x text tokens each. Each pass takes max(flops / peak,
    bytes / bandwidth); `n_gpus` splits every pass evenly (ideal sequence
    parallelism, as video models use a whole node for one request).
    """
    m = get_model(model)
    steps = m.default_steps if steps is None else steps
    guidance = m.guidance if guidance is None else guidance
    n_gpus = positive_int("n_gpus", n_gpus)
    passes = denoiser_passes(steps, guidance)
    per_pass = denoiser_pass(m, m.tokens(width, height, frames), dtype=dtype)
    g, d = get_gpu(gpu), tensor_dtype(dtype)
    peak, bw = g.peak_flops(d) * n_gpus, g.bandwidth * n_gpus
    pass_time = max(per_pass.flops / peak, per_pass.bytes / bw)
    prompts = 2 if guidance else 1
    enc_flops = prompts * 2.0 * m.text_encoder_params * m.text_tokens
    enc_bytes = m.text_encoder_params * _dtype_bytes("dtype", d)
    enc_time = max(enc_flops / peak, enc_bytes / bw)
    return PipelineCost(m, positive_int("steps", steps), guidance, passes, per_pass, enc_flops, pass_time, enc_time, n_gpus)
