"""Facts of section 2.3, "Image generation" (docs/image-generation.md).

The model sizes, defaults and latent shapes come from the pipelines in
`chapter2.diffusion.MODELS`, each read from its published configs (denoiser, text encoders, VAE) and its
pipeline's `__call__` defaults or, where the preset says so (`card_settings`), its model card's settings, with
every FLOP counted where it runs (`chapter2.denoiser`); the
step counts the chapter gives as rules of thumb from `diffusion.TYPICAL_STEPS`,
`FEW_STEP_MAX_STEPS` and `FEW_STEP_SPEEDUP`; what each denoiser predicts from
`DiffusionModel.objective`; published parameter counts of other image and video
models from `diffusion.PUBLISHED_SIZES`. Times are `diffusion.pipeline_cost`
lower bounds at the peak throughput of the GPU below (BF16); bytes follow the
chapter's byte convention of `chapter2.roofline`: the weights read once and the
activations (each block's input and output, and the predicted latent) moved
once; a denoiser keeps no KV cache.
"""

from __future__ import annotations

from .. import diffusion
from ..denoiser import Denoiser
from ..hardware import get_gpu
from ..format import SI, Bytes, Int, Num, Pct, Table, Text, Times
from . import Card, Leaf, fact

PAGE = "image-generation.md"
TITLE = "2.3 Image generation"

GPU = "H100-SXM"  # the page's "an H100"
EXAMPLE_SIZE = (1024, 1024)  # (width, height) of the Qwen-Image worked example
NODE_GPUS = 8  # one server node, over which a video request is split
LATENT_TABLE_MODELS = ("SDXL", "Qwen-Image", "FLUX.1-dev", "Wan2.1-T2V-1.3B", "Wan2.1-T2V-14B", "Mochi-1",
                       "LTX-Video")
# (preset, width, height) rows of the attention-share table: Qwen-Image from small to large, FLUX.1 [dev] at its
# usual size, and Wan 2.1 14B's default clip (frames from the preset).
ATTENTION_SIZES = (("Qwen-Image", 512, 512), ("Qwen-Image", 1024, 1024), ("Qwen-Image", 1328, 1328),
                   ("Qwen-Image", 2048, 2048), ("FLUX.1-dev", 1024, 1024), ("Wan2.1-T2V-14B", 1280, 720))
FEW_STEP_BASES = (30, 50)  # guided full schedules the few-step table compares against (the chapter's 30 to 50)
FEW_STEP_VARIANTS = ((8, True), (8, False), (4, False))  # (steps, guidance) of the few-step columns

QWEN = "Qwen-Image"
WAN = "Wan2.1-T2V-14B"
SCHNELL = "FLUX.1-schnell"


NOMINAL_DIGITS = 2
"""Significant digits of lower-bound times and FLOPs per pass: exact counts, but bounds at the GPU's peak, which no
kernel reaches, so two digits say all they can."""


def _duration(seconds: float) -> Num:
    """A time in `NOMINAL_DIGITS` significant digits, in the smallest unit (µs, ms, s, min, h) whose integer part
    needs no more digits than that (the format rule never rounds an integer part away).

    `.value` is in that unit (`.unit`): 0.178 s -> Num(0.178, unit="s"), shown "0.18 s"; 0.0128 s -> "13 ms".
    """
    for scale, unit in ((1e6, "µs"), (1e3, "ms"), (1.0, "s"), (1 / 60, "min")):
        if seconds * scale < 10**NOMINAL_DIGITS:
            return Num(seconds * scale, NOMINAL_DIGITS, unit)
    return Num(seconds / 3600, NOMINAL_DIGITS, "h")


def _nominal_flops(flops: float) -> SI:
    """FLOPs rounded to `NOMINAL_DIGITS` significant digits (73.1e12 -> 73 TFLOP: the format rule would print every
    digit of an integer part)."""
    return SI(float(f"{flops:.{NOMINAL_DIGITS}g}"), "FLOP")


def _link(url: str) -> Text:
    """A source URL as a short Markdown link: arXiv papers by number, Hugging Face files and model cards by
    repository, anything else by its host."""
    parts = url.removeprefix("https://").rstrip("/").split("/")
    host = parts[0]
    if host == "arxiv.org":
        label = f"arXiv:{parts[-1]}"
    elif host == "huggingface.co":
        label = f"{parts[2]} {parts[-1]}" if "blob" in parts else f"{parts[2]} model card"
    else:
        label = host
    return Text(f"[{label}]({url})")


def _size(width_height: tuple) -> Text:
    """A (width, height) pair as the page writes it: "1024 × 1024"."""
    return Text(" × ".join(str(p) for p in width_height))


def _qwen_example() -> diffusion.PipelineCost:
    """Qwen-Image at its default steps and guidance, at the worked example's size, on one GPU."""
    width, height = EXAMPLE_SIZE
    return diffusion.pipeline_cost(QWEN, width=width, height=height, gpu=GPU)


def _wan(n_gpus: int = 1) -> diffusion.PipelineCost:
    """Wan 2.1 14B's default clip (size, frames, steps, guidance), split evenly over `n_gpus` GPUs."""
    return diffusion.pipeline_cost(WAN, gpu=GPU, n_gpus=n_gpus)


def _few_step_saving(base_steps: int, few_steps: int, few_guidance: bool) -> float:
    """Share of denoiser passes saved against `base_steps` guided steps."""
    return diffusion.few_step_saving(base_steps, True, few_steps, few_guidance)


# ------------------------------------------------------------------ steps and guidance

# The tiny example of guidance: one number of the latent, its two predictions, and Qwen-Image's guidance scale
# (diffusers' QwenImagePipeline, true_cfg_scale=4.0).
CFG_CONDITIONAL, CFG_UNCONDITIONAL, CFG_SCALE = 0.8, 0.5, 4.0


@fact
def cfg_example_conditional() -> Num:
    """The tiny example's prediction for one latent number from the pass with the prompt."""
    return Num(CFG_CONDITIONAL)


@fact
def cfg_example_unconditional() -> Num:
    """The same number's prediction from the pass without the prompt."""
    return Num(CFG_UNCONDITIONAL)


@fact
def cfg_example_scale() -> Num:
    """The guidance scale of the tiny example: Qwen-Image's pipeline default (QwenImagePipeline.__call__'s
    true_cfg_scale=4.0, applied only when a negative prompt is given)."""
    return Num(CFG_SCALE)


@fact
def cfg_example_mix() -> Num:
    """What guidance makes of the two predictions (`diffusion.guided_prediction`): 0.5 + 4 x (0.8 - 0.5) = 1.7."""
    return Num(diffusion.guided_prediction(CFG_CONDITIONAL, CFG_UNCONDITIONAL, CFG_SCALE))

@fact
def typical_steps_min() -> Int:
    """The low end of the chapter's "30 to 50 steps" for a full denoising schedule (`diffusion.TYPICAL_STEPS`)."""
    return Int(diffusion.TYPICAL_STEPS[0])


@fact
def typical_steps_max() -> Int:
    """The high end of the chapter's "30 to 50 steps" (`diffusion.TYPICAL_STEPS`)."""
    return Int(diffusion.TYPICAL_STEPS[1])


@fact
def typical_max_guided_passes() -> Int:
    """Denoiser passes of `typical_steps_max` steps with classifier-free guidance: steps × 2."""
    return Int(diffusion.denoiser_passes(diffusion.TYPICAL_STEPS[1], True))


@fact
def few_step_model_names() -> Text:
    """The presets in `diffusion.MODELS` whose default schedule is a few-step one (≤ `FEW_STEP_MAX_STEPS`)."""
    return Text(", ".join(m.name for m in diffusion.MODELS.values()
                          if m.default_steps <= diffusion.FEW_STEP_MAX_STEPS))


@fact
def full_schedule_default_steps() -> Text:
    """The default step counts (pipeline defaults) of every other pipeline in `diffusion.MODELS`, e.g. "20, 28 or 50"."""
    steps = sorted({m.default_steps for m in diffusion.MODELS.values() if m.default_steps > diffusion.FEW_STEP_MAX_STEPS})
    return Text(", ".join(str(s) for s in steps[:-1]) + f" or {steps[-1]}" if len(steps) > 1 else str(steps[0]))


@fact
def qwen_image_default_steps() -> Int:
    """Qwen-Image's steps: QwenImagePipeline.__call__'s default, 50 (the model card uses 50 too)."""
    return Int(diffusion.pipeline_cost(QWEN).steps)


@fact
def qwen_image_default_passes() -> Int:
    """Denoiser passes of Qwen-Image's 50 steps with true CFG, as its model card runs them (with a negative prompt):
    steps × 2. Without a negative prompt the pipeline runs one pass a step."""
    return Int(diffusion.pipeline_cost(QWEN).passes)


@fact
def qwen_image_example_size() -> Text:
    """The worked example's image size in pixels, width × height."""
    return _size(EXAMPLE_SIZE)


@fact
def qwen_image_example_pass_time() -> Num:
    """Lower bound on one Qwen-Image denoiser pass at the example size on an H100 (BF16 peak)."""
    return _duration(_qwen_example().pass_time)


@fact
def qwen_image_example_time() -> Num:
    """Lower bound on a whole Qwen-Image request (text encoder + every pass) at the example size on an H100."""
    return _duration(_qwen_example().time)


@fact
def qwen_image_example_text_encoder_time() -> Num:
    """Lower bound on Qwen-Image's text encoder (Qwen2.5-VL, prompt and negative prompt) on an H100."""
    return _duration(_qwen_example().text_encoder_time)


@fact
def qwen_image_weight_bytes() -> SI:
    """Bytes of weights one Qwen-Image denoiser pass reads once: its parameters (transformer config) in BF16."""
    return Bytes(_qwen_example().per_pass.weight_bytes)


@fact
def qwen_image_example_activation_bytes() -> SI:
    """Activation bytes of one Qwen-Image pass at the example size, under `chapter2.roofline`'s convention:
    every block's input and output hidden states (2·layers·tokens·width) and the predicted latent
    (tokens·channels·patch), each moved once, in BF16 (`PassCost.activation_bytes`)."""
    return Bytes(_qwen_example().per_pass.activation_bytes)


@fact
def qwen_image_example_pass_bytes() -> SI:
    """All the bytes one Qwen-Image pass at the example size moves: weights + activations (no KV cache)."""
    return Bytes(_qwen_example().per_pass.bytes)


@fact
def qwen_image_example_memory_time() -> Num:
    """Time to move one pass's bytes at the H100's bandwidth: the memory side of one pass, far below its
    compute time (`qwen_image_example_pass_time`), so the pass is compute bound."""
    p = _qwen_example().per_pass
    return _duration(p.bytes / get_gpu(GPU).bandwidth)


# ------------------------------------------------------------------ architecture
_OBJECTIVE_WORDS = {"epsilon": "the noise ε", "velocity": "a velocity (flow matching)",
                    "v_prediction": "v, a blend of noise and image (v-prediction)"}


@fact
def objective_table() -> Table:
    """What each preset's denoiser predicts (`DiffusionModel.objective`) and the source that says so."""
    rows = tuple((Text(m.name), Text(_OBJECTIVE_WORDS[m.objective]), _link(m.objective_source))
                 for m in diffusion.MODELS.values())
    return Table(("Pipeline", "Denoiser predicts", "Source"), rows, align="lll")


@fact
def vae_spatial_factors() -> Text:
    """How much the VAE shrinks each side of the image, over every preset in `diffusion.MODELS` (e.g. "8")."""
    return Text(" or ".join(str(f) for f in sorted({m.vae_spatial for m in diffusion.MODELS.values()})))


@fact
def qwen_image_patch() -> Text:
    """Qwen-Image's patch in latent pixels, height × width (transformer config `patch_size`)."""
    return Text(" × ".join(str(p) for p in diffusion.MODELS[QWEN].patch[1:]))


UNET_TOKENS = "n/a (UNet)"
"""What every table writes for a UNet's latent tokens: it cuts the latent into no patches and runs no token sequence
through all of its layers (its attention sees the latent only at its coarser resolutions)."""


def _latent_tokens(m: diffusion.DiffusionModel, tokens: int) -> Int | Text:
    """A pipeline's latent tokens as every table on the page writes them: the count, or `UNET_TOKENS`."""
    return Text(UNET_TOKENS) if m.architecture == "UNet" else Int(tokens)


@fact
def latent_table() -> Table:
    """Pixels, latent shape, latent values and tokens of each pipeline at its default size (`diffusion.MODELS`).

    Latent shape (channels, frames, height, width): frames after the causal video VAE
    (`diffusion.latent_frames`), each side divided by the VAE's spatial factor. A UNet
    takes no tokens.
    """
    rows = []
    for name in LATENT_TABLE_MODELS:
        m = diffusion.MODELS[name]
        w, h = m.default_size
        t = diffusion.latent_frames(m.default_frames, m.vae_temporal)
        lh, lw = h // m.vae_spatial, w // m.vae_spatial
        output = f"{w} × {h}" + (f", {m.default_frames} frames" if m.kind == "video" else "")
        tokens = _latent_tokens(m, m.tokens())
        rows.append((Text(m.name), Text(output), Int(3 * w * h * m.default_frames),
                     Text(f"({m.latent_channels}, {t}, {lh}, {lw})"), Int(m.latent_channels * t * lh * lw), tokens))
    return Table(("Model", "Output", "Pixel values", "Latent shape (channels, frames, height, width)", "Latent values",
                  "Tokens"),
                 tuple(rows), align="llrlrr")


@fact
def sdxl_unet_params_billions() -> Num:
    """SDXL's UNet parameters in billions (unet/config.json, counted exactly; the paper says 2.6B)."""
    return Num(diffusion.MODELS["SDXL"].denoiser_params / 1e9, 2)


@fact
def qwen_image_text_encoder_params_billions() -> Num:
    """Parameters of Qwen-Image's text encoder that run on the prompt, in billions: Qwen2.5-VL-7B's language model to
    its last hidden state, which is all the pipeline reads (no LM head, no vision tower; text_encoder/config.json)."""
    return Num(diffusion.MODELS[QWEN].text_encoder_params / 1e9, 2)


def _qwen_encoder():
    return diffusion.MODELS[QWEN].encoders[0][0]


@fact
def qwen_image_text_encoder_stored_billions() -> Num:
    """Parameters of Qwen-Image's text encoder as stored, in billions: the language model, its LM head and its vision
    tower (`TextEncoder.stored_params`, from text_encoder/config.json and its vision_config)."""
    return Num(_qwen_encoder().stored_params / 1e9, 2)


@fact
def qwen_image_text_encoder_vision_billions() -> Num:
    """Parameters of Qwen2.5-VL's vision tower in Qwen-Image's text encoder, in billions (its vision_config): stored,
    not run on a text prompt."""
    return Num(_qwen_encoder().idle_params("vision") / 1e9, 2)


@fact
def qwen_image_denoiser_params_billions() -> Num:
    """Qwen-Image's MMDiT denoiser parameters in billions (transformer/config.json, counted exactly)."""
    return Num(diffusion.MODELS[QWEN].denoiser_params / 1e9, 2)


@fact
def qwen_image_blocks() -> Int:
    """Transformer blocks of Qwen-Image's MMDiT (transformer/config.json `num_layers`)."""
    return Int(diffusion.MODELS[QWEN].n_layers)


@fact
def qwen_image_example_tokens() -> Int:
    """Latent tokens of one Qwen-Image image at the example size: (W ÷ 8 ÷ 2) × (H ÷ 8 ÷ 2)."""
    return Int(_qwen_example().per_pass.tokens)


@fact
def qwen_image_example_pass_flops() -> SI:
    """FLOPs of one Qwen-Image denoiser pass at the example size: every matmul at the rows it sees, and attention."""
    return _nominal_flops(_qwen_example().per_pass.flops)


@fact
def qwen_image_example_attention_share() -> Pct:
    """Attention's share of the FLOPs of one Qwen-Image pass at the example size (joint over image + text tokens)."""
    return Pct(_qwen_example().per_pass.attention_share)


@fact
def qwen_image_image_weights_billions() -> Num:
    """Billions of Qwen-Image's denoiser parameters that touch an image token (its image stream: input projection,
    attention and MLP weights of every block, output projection); the text stream's see only prompt tokens and the
    modulation linears one row per sample (`Denoiser.params_seen_by`)."""
    from ..denoiser import IMAGE, JOINT
    return Num(diffusion.MODELS[QWEN].denoiser.params_seen_by(IMAGE, JOINT) / 1e9, 2)


@fact
def flux_schnell_vae_share() -> Pct:
    """Share of a default FLUX.1 [schnell] image's lower-bound time on an H100 spent in the VAE decode (its
    AutoencoderKL decoder at 1024 × 1024, run once), against 4 unguided passes."""
    cost = diffusion.pipeline_cost(SCHNELL, gpu=GPU)
    return Pct(cost.vae_time / cost.time)


def _settings(m: diffusion.DiffusionModel) -> Text:
    """Where a preset's steps, guidance and size come from: "pipeline defaults" (its diffusers pipeline's
    `__call__`), or the settings its model card sets instead, linked."""
    if not m.card_settings:
        return Text("pipeline defaults")
    return Text(f"[model card]({m.card_source}): {', '.join(m.card_settings)}")


@fact
def pipelines_table() -> Table:
    """Every shipped pipeline (`diffusion.MODELS`): denoiser parameters (exact, from its config), prompt tokens,
    latent tokens, FLOPs of one pass (as 2.4's denoiser table and the denoiser calculator write them: one rendering
    per number) and attention's share of them at the preset's size, passes per image or clip
    (steps × 1 or 2), the lower-bound time of the whole request on one H100 (BF16), and where the steps, guidance
    and size come from: the diffusers pipeline's `__call__` defaults, or the model card (`card_settings`)."""
    rows = []
    for m in diffusion.MODELS.values():
        c = diffusion.pipeline_cost(m, gpu=GPU)
        w, h = m.default_size
        size = f"{w} × {h}" + (f", {m.default_frames} frames" if m.kind == "video" else "")
        params = Num(m.denoiser_params / 1e9, 3) if m.experts == 1 else Text(
            f"{m.denoiser_params / 1e9:.3g} per pass ({m.stored_params / 1e9:.3g} stored)")
        rows.append((Text(m.name), Text(m.denoiser.class_name), params, Text(size), Int(m.text_tokens),
                     _latent_tokens(m, c.per_pass.tokens), SI(c.per_pass.flops, "FLOP"),
                     Pct(c.per_pass.attention_share),
                     Int(c.passes), _duration(c.time), _settings(m)))
    return Table(("Pipeline", "Denoiser class", "Denoiser parameters (billions)", "Size", "Prompt tokens",
                  "Latent tokens", "FLOPs per pass", "Attention share", "Passes", "Time on one H100, lower bound",
                  "Settings"),
                 tuple(rows), align="llrlrrrrrrl")


@fact
def attention_share_table() -> Table:
    """FLOPs of the weight matmuls and convolutions, of attention (QKᵀ and PV) and attention's share of one
    denoiser pass (`diffusion.denoiser_pass`, exact from the configs), for Qwen-Image from 512² to 2048², FLUX.1 [dev]
    at 1024² and Wan 2.1 14B's default clip."""
    rows = []
    for name, w, h in ATTENTION_SIZES:
        m = diffusion.MODELS[name]
        p = diffusion.denoiser_pass(name, m.tokens(w, h))
        output = f"{w} × {h}" + (f", {m.default_frames} frames" if m.kind == "video" else "")
        rows.append((Text(name), Text(output), Int(p.tokens), SI(p.linear_flops, "FLOP"),
                     SI(p.attention_flops, "FLOP"), Pct(p.attention_share)))
    return Table(("Model", "Output", "Latent tokens", "Weight FLOPs", "Attention FLOPs", "Attention share"),
                 tuple(rows), align="llrrrr")


@fact
def qwen_image_crossover_thousand_tokens() -> Num:
    """Latent tokens, in thousands, at which attention's FLOPs equal the rest of a Qwen-Image pass
    (`diffusion.attention_crossover_tokens`, with its 256 prompt tokens), two significant digits."""
    return Num(diffusion.attention_crossover_tokens(QWEN) / 1e3, 2)


@fact
def qwen_image_crossover_megapixels() -> Num:
    """The same crossover as an image size in megapixels: each token is a 16 × 16 pixel patch (VAE 8×, 2 × 2
    patches), two significant digits."""
    m = diffusion.MODELS[QWEN]
    side = m.vae_spatial * m.patch[1]
    return Num(diffusion.attention_crossover_tokens(QWEN) * side * side / 1e6, 2)


# ------------------------------------------------------------------ few-step models
@fact
def few_step_max_steps() -> Int:
    """The chapter's bound for few-step models: "eight steps or fewer" (`diffusion.FEW_STEP_MAX_STEPS`)."""
    return Int(diffusion.FEW_STEP_MAX_STEPS)


@fact
def few_step_guided_saving() -> Pct:
    """Passes saved by `few_step_max_steps` guided steps against `typical_steps_max` guided steps."""
    return Pct(_few_step_saving(diffusion.TYPICAL_STEPS[1], diffusion.FEW_STEP_MAX_STEPS, True))


@fact
def few_step_distilled_saving() -> Pct:
    """Passes saved by `few_step_max_steps` steps with guidance distilled into one pass, against
    `typical_steps_max` guided steps."""
    return Pct(_few_step_saving(diffusion.TYPICAL_STEPS[1], diffusion.FEW_STEP_MAX_STEPS, False))


@fact
def flux_schnell_default_steps() -> Int:
    """FLUX.1 [schnell]'s steps from its model card (4, unguided; FluxPipeline's default is 28)."""
    return Int(diffusion.MODELS[SCHNELL].default_steps)


@fact
def flux_schnell_saving() -> Pct:
    """Passes FLUX.1 [schnell]'s default unguided steps save against `typical_steps_max` guided steps."""
    return Pct(_few_step_saving(diffusion.TYPICAL_STEPS[1], diffusion.MODELS[SCHNELL].default_steps, False))


@fact
def few_step_speedup_min_percent() -> Num:
    """The low end, in percent, of the chapter's "80 to 90 percent faster" (`diffusion.FEW_STEP_SPEEDUP`)."""
    return Num(100 * diffusion.FEW_STEP_SPEEDUP[0], 2)


@fact
def few_step_speedup_max_percent() -> Num:
    """The high end, in percent, of the chapter's "80 to 90 percent faster" (`diffusion.FEW_STEP_SPEEDUP`)."""
    return Num(100 * diffusion.FEW_STEP_SPEEDUP[1], 2)


@fact
def few_step_speedup_min_times() -> Times:
    """The chapter's "80 percent faster" as a speed-up: 1 ÷ (1 − 0.80) times the images per GPU-second."""
    return Times(1 / (1 - diffusion.FEW_STEP_SPEEDUP[0]))


@fact
def few_step_speedup_max_times() -> Times:
    """The chapter's "90 percent faster" as a speed-up: 1 ÷ (1 − 0.90)."""
    return Times(1 / (1 - diffusion.FEW_STEP_SPEEDUP[1]))


@fact
def few_step_saving_table() -> Table:
    """Share of denoiser passes saved by few-step schedules (rows: steps, guided or distilled) against the
    chapter's guided full schedules (columns: `FEW_STEP_BASES` guided steps), `diffusion.few_step_saving`."""
    rows = []
    for steps, guided in FEW_STEP_VARIANTS:
        label = f"{steps} steps, " + ("guided (2 passes each)" if guided else "guidance distilled (1 pass each)")
        rows.append((Text(label), Int(diffusion.denoiser_passes(steps, guided)),
                     *(Pct(_few_step_saving(base, steps, guided)) for base in FEW_STEP_BASES)))
    header = ("Few-step schedule", "Passes",
              *(f"Saved vs {b} guided steps ({diffusion.denoiser_passes(b, True)} passes)" for b in FEW_STEP_BASES))
    return Table(header, tuple(rows), align="lrrr")


@fact
def few_step_guided_saving_vs_30() -> Pct:
    """Passes saved by `few_step_max_steps` guided steps against 30 guided steps (the low end of the chapter's
    full schedules): below the chapter's 80 percent, because guidance still doubles every step."""
    return Pct(_few_step_saving(diffusion.TYPICAL_STEPS[0], diffusion.FEW_STEP_MAX_STEPS, True))


@fact
def qwen_image_few_step_pass_saving() -> Pct:
    """Passes saved by `few_step_max_steps` guided steps instead of Qwen-Image's default guided steps."""
    return Pct(_few_step_saving(diffusion.pipeline_cost(QWEN).steps, diffusion.FEW_STEP_MAX_STEPS, True))


@fact
def qwen_image_few_step_time_saving() -> Pct:
    """Lower-bound time saved by `few_step_max_steps` guided steps instead of Qwen-Image's default, at its
    default size on an H100 (two significant digits: it differs from the passes saved only in the fourth,
    by the text encoder's share, `qwen_image_text_encoder_share`)."""
    few = diffusion.pipeline_cost(QWEN, steps=diffusion.FEW_STEP_MAX_STEPS, gpu=GPU).time
    return Pct(1 - few / diffusion.pipeline_cost(QWEN, gpu=GPU).time)


@fact
def qwen_image_text_encoder_share() -> Pct:
    """The text encoder's share of a whole default Qwen-Image request's lower-bound time on an H100: the part
    a few-step schedule cannot cut, which makes its time saving a hair smaller than its pass saving."""
    cost = diffusion.pipeline_cost(QWEN, gpu=GPU)
    return Pct(cost.text_encoder_time / cost.time)


# ------------------------------------------------------------------ pipeline extras
DEV = "FLUX.1-dev"
LORA_RANK = 64  # a common rank for style and subject LoRAs


@fact
def flux_dev_default_passes() -> Int:
    """Passes of FLUX.1 [dev]'s default image: FluxPipeline's 28 steps, one pass each (guidance distilled)."""
    return Int(diffusion.pipeline_cost(DEV).passes)


@fact
def flux_dev_passes_with_cfg() -> Int:
    """Passes the same 28 steps would take with classifier-free guidance (two per step)."""
    return Int(diffusion.denoiser_passes(diffusion.MODELS[DEV].default_steps, True))


@fact
def flux_schnell_time_saving_vs_dev() -> Pct:
    """Lower-bound time FLUX.1 [schnell]'s default image saves against FLUX.1 [dev]'s on an H100 (text encoders,
    every pass and the VAE decode included): step distillation on top of guidance distillation."""
    return Pct(1 - diffusion.pipeline_cost(SCHNELL, gpu=GPU).time / diffusion.pipeline_cost(DEV, gpu=GPU).time)


@fact
def denoiser_lora_rank() -> Int:
    """The LoRA rank of the example."""
    return Int(LORA_RANK)


@fact
def qwen_image_lora_unmerged_share() -> Pct:
    """FLOPs an unmerged rank-`LORA_RANK` LoRA on all of Qwen-Image's attention projections adds to one pass at its
    default size, as a share of the pass (`Denoiser.lora_flops`); merged into the weights it adds nothing."""
    m = diffusion.MODELS[QWEN]
    w, h = m.default_size
    return Pct(m.denoiser.lora_flops(LORA_RANK, w, h, 1, m.text_tokens) / m.denoiser.pass_flops(w, h, 1, m.text_tokens))


@fact
def sdxl_controlnet_share() -> Pct:
    """FLOPs a ControlNet (diffusers/controlnet-canny-sdxl-1.0: a copy of SDXL's UNet encoder half and middle,
    its own config) adds to every SDXL step at 1024 × 1024, as a share of the UNet's pass."""
    from ..denoiser import published_config
    net = Denoiser.from_diffusers(published_config("controlnet-canny-sdxl-1.0"))
    unet = diffusion.MODELS["SDXL"].denoiser
    return Pct(net.pass_flops(1024, 1024, 1, 77) / unet.pass_flops(1024, 1024, 1, 77))


# ------------------------------------------------------------------ video
def _params(name: str) -> float:
    return diffusion.published_size(name).params


def _billions(n: float | None, missing: str = "not published") -> Num | Text:
    return Text(missing) if n is None else Num(n / 1e9, 3)


def _largest(kind: str, *, dense: bool = False) -> diffusion.PublishedSize:
    """The open-weights model of `kind` ("image" or "video") with the most parameters in `diffusion.PUBLISHED_SIZES`
    (counted from configs where they ship); `dense`: among those that are not mixtures of experts."""
    sizes = [p for p in diffusion.PUBLISHED_SIZES
             if p.kind == kind and p.open_weights and p.params is not None and not (dense and p.moe)]
    return max(sizes, key=lambda p: p.params)


@fact
def published_sizes_table() -> Table:
    """Parameters of image and video generators: as their makers published them (`diffusion.PUBLISHED_SIZES`, each
    with its source; "not published" where they give none), counted from the configs where this package ships them
    (diffusers builds the same count on the meta device), and the parameters one token or pass runs (a mixture of
    experts' active count; all of a dense model's)."""
    rows = tuple((Text(p.name), Text(p.kind), Text(p.released), Text("yes" if p.open_weights else "no"),
                  _billions(p.denoiser_params), _billions(p.params if p.preset else None, "no config here"),
                  _billions(p.active), _link(p.source)) for p in diffusion.PUBLISHED_SIZES)
    return Table(("Model", "Makes", "Released", "Open weights", "Published (billions)", "From its config (billions)",
                  "Active per token or pass (billions)", "Source"), rows, align="llllrrrl")


@fact
def movie_gen_over_sd35_large() -> Times:
    """Movie Gen Video's 30B (arXiv:2410.13720) over Stable Diffusion 3.5 Large's 8.06B (its config; Stability AI
    publishes 8.1B), the largest published video model against a typical open image model of the same month; two
    digits."""
    return Times(_params("Movie Gen Video") / _params("Stable Diffusion 3.5 Large"), 2)


@fact
def hunyuan_video_over_sdxl() -> Times:
    """HunyuanVideo's 12.8B over SDXL's 2.57B UNet, both counted from their configs; two digits."""
    return Times(_params("HunyuanVideo") / _params("SDXL"), 2)


@fact
def largest_open_image_name() -> Text:
    """The open image generator with the most parameters in `diffusion.PUBLISHED_SIZES` (HunyuanImage 3.0)."""
    return Text(_largest("image").name)


@fact
def largest_open_image_billions() -> Num:
    """Its parameters in billions, as published (80)."""
    return Num(_largest("image").params / 1e9, 2)


@fact
def largest_open_image_active_billions() -> Num:
    """The parameters it runs per token, in billions (13: a mixture of experts)."""
    return Num(_largest("image").active / 1e9, 2)


@fact
def largest_open_video_name() -> Text:
    """The open video generator with the most parameters in `diffusion.PUBLISHED_SIZES` (Step-Video-T2V)."""
    return Text(_largest("video").name)


@fact
def largest_open_video_billions() -> Num:
    """Its parameters in billions (30)."""
    return Num(_largest("video").params / 1e9, 2)


@fact
def largest_open_image_over_largest_open_video() -> Times:
    """The largest open image generator's parameters over the largest open video generator's, both in total; two
    digits (80B / 30B)."""
    return Times(_largest("image").params / _largest("video").params, 2)


@fact
def largest_dense_image_name() -> Text:
    """The open image generator with the most parameters among those that are not mixtures of experts (FLUX.2 [dev])."""
    return Text(_largest("image", dense=True).name)


@fact
def largest_dense_image_over_largest_open_video() -> Times:
    """The largest dense open image generator's parameters over the largest open video generator's; two digits
    (32B / 30B)."""
    return Times(_largest("image", dense=True).params / _largest("video").params, 2)


@fact
def wan_2_2_stored_billions() -> Num:
    """Wan 2.2 A14B's two experts together, in billions, counted from the shipped transformer config (28.6)."""
    return Num(_params("Wan 2.2 T2V A14B") / 1e9, 3)


@fact
def wan_14b_over_qwen_image_params() -> Times:
    """The page's video preset over its image preset: Wan 2.1 14B's denoiser parameters over Qwen-Image's
    (below 1: this video model is the smaller one); one significant digit."""
    return Times(diffusion.MODELS[WAN].denoiser_params / diffusion.MODELS[QWEN].denoiser_params, 1)


@fact
def wan_14b_vae_temporal() -> Int:
    """How many frames Wan 2.1's VAE packs into one latent frame (config `vae_stride` (4, 8, 8))."""
    return Int(diffusion.MODELS[WAN].vae_temporal)


@fact
def video_vae_temporal_factors() -> Text:
    """How many frames each video preset's VAE packs into one latent frame after the first (`vae_temporal`, from
    its VAE config), grouped: "4 in Wan2.1-T2V-1.3B, ..., 6 in Mochi-1 and 8 in LTX-Video"."""
    groups = {}
    for m in diffusion.MODELS.values():
        if m.kind == "video":
            groups.setdefault(m.vae_temporal, []).append(m.name)
    parts = [f"{k} in {_and(v)}" for k, v in sorted(groups.items())]
    return Text(_and(parts))


def _and(words: list) -> str:
    """"a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@fact
def wan_14b_frames() -> Int:
    """Frames of Wan 2.1 14B's default clip (81)."""
    return Int(diffusion.MODELS[WAN].default_frames)


@fact
def wan_14b_clip_seconds() -> Num:
    """Length of Wan 2.1 14B's default clip in seconds: frames ÷ fps."""
    return Num(diffusion.MODELS[WAN].clip_seconds, 2)


@fact
def wan_14b_fps() -> Int:
    """Playback frame rate of Wan 2.1's clips (wan/configs/shared_config.py `sample_fps`)."""
    return Int(diffusion.MODELS[WAN].fps)


@fact
def wan_14b_size() -> Text:
    """Wan 2.1 14B's clip size in pixels from its model card, width × height (720p; WanPipeline's default is
    832 × 480)."""
    return _size(diffusion.MODELS[WAN].default_size)


@fact
def wan_14b_tokens() -> Int:
    """Latent tokens of one Wan 2.1 14B pass over its default clip: latent frames × (H ÷ 16) × (W ÷ 16)."""
    return Int(_wan().per_pass.tokens)


@fact
def qwen_image_default_size() -> Text:
    """Qwen-Image's 1:1 image size in pixels from its model card, width × height (the pipeline's default is
    1024 × 1024)."""
    return _size(diffusion.MODELS[QWEN].default_size)


@fact
def wan_14b_tokens_over_qwen_image() -> Num:
    """How many times more tokens a Wan 2.1 14B pass sees than a Qwen-Image pass, both at default size."""
    return Num(diffusion.denoiser_pass(WAN).tokens / diffusion.denoiser_pass(QWEN).tokens, 2)


@fact
def wan_14b_attention_share() -> Pct:
    """Attention's share of the FLOPs of one Wan 2.1 14B pass over its default clip."""
    return Pct(_wan().per_pass.attention_share)


@fact
def wan_14b_pass_flops() -> SI:
    """FLOPs of one Wan 2.1 14B denoiser pass over its default clip."""
    return _nominal_flops(_wan().per_pass.flops)


@fact
def wan_14b_default_steps() -> Int:
    """Wan 2.1 14B's default sampling steps (50, with CFG)."""
    return Int(_wan().steps)


@fact
def wan_14b_time_one_gpu() -> Num:
    """Lower bound on Wan 2.1 14B's default clip on one H100 (text encoder + every pass)."""
    return _duration(_wan().time)


@fact
def node_gpus() -> Int:
    """GPUs in the node a video request is split over."""
    return Int(_wan(NODE_GPUS).n_gpus)


@fact
def wan_14b_time_node() -> Num:
    """Lower bound on the same clip split evenly over a node of `node_gpus` H100s."""
    return _duration(_wan(NODE_GPUS).time)


LEAVES = (
    Leaf("Guidance doubles the passes: {{ fact: image_generation.typical_steps_max }} steps, "
         "{{ fact: image_generation.typical_max_guided_passes }} passes", "classifier-free-guidance"),
    Leaf("Few-step models: {{ fact: image_generation.few_step_max_steps }} steps or fewer, "
         "{{ fact: image_generation.few_step_guided_saving }} to {{ fact: image_generation.few_step_distilled_saving }} "
         "fewer passes than {{ fact: image_generation.typical_steps_max }} guided steps",
         "232-and-233-few-step-models-and-video"),
    Leaf("Video: {{ fact: image_generation.wan_14b_tokens_over_qwen_image }}× the tokens of an image, attention "
         "{{ fact: image_generation.wan_14b_attention_share }} of the FLOPs", "232-and-233-few-step-models-and-video"),
)

CARDS = (
    Card("img-cfg-passes", "classifier-free-guidance",
         "How many denoiser forward passes do 50 steps with classifier-free guidance take?",
         """{{ fact: image_generation.typical_max_guided_passes }}: guidance runs the denoiser twice per step,
         with the prompt and with the negative (or empty) prompt, and pushes the result away from the
         unconditioned one."""),
    Card("img-latent-tokens", "231-architecture",
         "What is a token for a diffusion transformer, and how many does a 1024 × 1024 image make?",
         """A {{ fact: image_generation.qwen_image_patch }} patch of the latent, which the VAE shrinks
         {{ fact: image_generation.vae_spatial_factors }}× per side from the pixels. A
         {{ fact: image_generation.qwen_image_example_size }} image is
         {{ fact: image_generation.qwen_image_example_tokens }} latent tokens, and every step runs the whole
         denoiser over all of them."""),
    Card("img-objective", "231-architecture",
         "Does every denoiser predict the noise?",
         """No. DDPM-style models such as SDXL predict the noise ε in the latent; flow-matching models such as
         FLUX.1, Qwen-Image and the Wan video models predict a velocity, the difference between the clean latent
         and the noise. Either way each step is one pass of the same network, so the cost is the same."""),
    Card("img-few-step", "232-and-233-few-step-models-and-video",
         "How much work does a few-step model save against 50 guided steps?",
         """{{ fact: image_generation.few_step_max_steps }} guided steps save
         {{ fact: image_generation.few_step_guided_saving }} of the denoiser passes;
         {{ fact: image_generation.few_step_max_steps }} steps with guidance distilled into one pass save
         {{ fact: image_generation.few_step_distilled_saving }}, at some cost in quality."""),
    Card("img-video-size", "232-and-233-few-step-models-and-video",
         "Do video models have more parameters than image models?",
         """Often, not always. Movie Gen Video, the largest published video model, has
         {{ fact: image_generation.movie_gen_over_sd35_large }} the parameters of Stability AI's largest image
         model of the same month, but this page's video preset (Wan) has only
         {{ fact: image_generation.wan_14b_over_qwen_image_params }} those of its image preset, Qwen-Image. What
         always grows is the latent: a 720p Wan clip is
         {{ fact: image_generation.wan_14b_tokens_over_qwen_image }}× the tokens of a Qwen-Image image at its
         model card's size."""),
)
