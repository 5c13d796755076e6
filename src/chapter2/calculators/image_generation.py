"""Calculators of section 2.3 (image and video generation), built on `chapter2.diffusion`."""

from __future__ import annotations

from .. import charts, diffusion
from ..format import SI, Duration, Int, Num, Text, duration, plain, si, sig
from ..denoiser import SUPPORTED
from ._charts import bars
from ._gpus import gpu_fields, gpu_numbers, pick_gpu
from ._hub import FIELD as MODEL_ID
from ._hub import hub_denoiser_config, model_id_field
from ._registry import Field, FieldError, Output, calculator

IMAGE_MODELS = tuple((k, k) for k, m in diffusion.MODELS.items() if m.kind == "image" and m.costed)
VIDEO_MODELS = tuple((k, k) for k, m in diffusion.MODELS.items() if m.kind == "video" and m.costed)
GUIDANCE = (("on", "On: 2 passes per step"), ("off", "Off or distilled: 1 pass per step"))
DTYPES = (("bf16", "BF16"), ("fp16", "FP16"), ("fp8", "FP8"))


def _by_factor(models, factor) -> str:
    """`factor(model)` over the video models, the most common one bare and the others named:
    "4; 6 for Mochi-1; 8 for LTX-Video"."""
    groups = {}
    for m in models:
        groups.setdefault(factor(m), []).append(m.name)
    usual = max(groups, key=lambda k: len(groups[k]))
    return "; ".join([str(usual)] + [f"{k} for {', '.join(v)}" for k, v in sorted(groups.items()) if k != usual])


_VIDEO = [diffusion.MODELS[k] for k, _ in VIDEO_MODELS]
FRAMES_HELP = "1 + a multiple of the VAE's time factor, " + _by_factor(_VIDEO, lambda m: m.vae_temporal)
SIDE_HELP = "a multiple of " + _by_factor(_VIDEO, lambda m: m.vae_spatial * m.patch[1])


def _pipeline(model, steps, guidance, width, height, gpu, custom_tflops, custom_tb_s, dtype, frames=None, n_gpus=1):
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    return diffusion.pipeline_cost(model, steps=steps, guidance=guidance == "on", width=width, height=height,
                                   frames=frames, gpu=g, dtype=dtype, n_gpus=n_gpus), g


STEPS_CHART = charts.ChartSpec("denoising steps", "time per image, lower bound (s)", height=230)
GUIDED = {"on": "guidance on: 2 denoiser passes per step", "off": "guidance off or distilled: 1 pass per step"}


def _steps_chart(model, width, height, gpu, custom_tflops, custom_tb_s, dtype, marks):
    """Time per image against the number of steps, with and without guidance; `marks` = [(steps, guidance, label)]
    become the points. Time is affine in steps (text encoder + passes x pass time), so a few x values draw it."""
    hi = max([50] + [2 * s for s, _, _ in marks])
    xs = sorted({1, hi, *(s for s, _, _ in marks)})
    lines = [charts.series(GUIDED[g_on], xs, [_pipeline(model, s, g_on, width, height, gpu, custom_tflops, custom_tb_s,
                                                        dtype)[0].time for s in xs], color=i)
             for i, g_on in enumerate(("on", "off"))]
    points = []
    for steps, g_on, label in marks:
        cost = _pipeline(model, steps, g_on, width, height, gpu, custom_tflops, custom_tb_s, dtype)[0]
        points.append(charts.point(steps, cost.time, f"{label}: {steps:,} steps → {cost.passes:,} passes, "
                                   f"{duration(cost.time)}", color=0 if g_on == "on" else 1, legend=True))
    return charts.chart(lines, points, summary="Guidance doubles the denoiser passes of every step; a few-step "
                        "(distilled) model cuts the steps, and usually drops guidance too.")


def _pass_lines(cost, g, dtype):
    p = cost.per_pass
    ridge = g.ops_per_byte(dtype)
    return {
        "pass_flops": f"{si(p.flops, 'FLOP')} ({100 * p.attention_share:.0f} % of it attention)",
        "intensity": (f"{plain(p.intensity)} ops/byte vs ops:byte {plain(ridge)} → "
                      f"{'compute' if p.intensity >= ridge else 'memory'} bound"),
    }


def cost_numbers(cost, g, dtype, prefix: str = "") -> dict:
    """A pipeline's cost as numbers (calculators.NUMBERS): passes, one pass (tokens, FLOPs, attention's share,
    bytes, intensity against the GPU's ops:byte) and the request (FLOPs, times), each name after `prefix`."""
    p = cost.per_pass
    return {f"{prefix}steps": cost.steps, f"{prefix}guidance_passes_per_step": 2 if cost.guidance else 1,
            f"{prefix}passes": cost.passes, f"{prefix}tokens_per_pass (tokens)": p.tokens,
            f"{prefix}pass_flops (FLOP)": float(p.flops), f"{prefix}pass_attention_share (%)": 100 * p.attention_share,
            f"{prefix}pass_bytes (B)": float(p.bytes), f"{prefix}pass_intensity (FLOP/B)": float(p.intensity),
            f"{prefix}pass_bound": "compute" if p.intensity >= g.ops_per_byte(dtype) else "memory",
            f"{prefix}total_flops (FLOP)": float(cost.flops), f"{prefix}pass_time (s)": float(cost.pass_time),
            f"{prefix}denoiser_time (s)": float(cost.denoiser_time),
            f"{prefix}text_encoder_time (s)": float(cost.text_encoder_time),
            f"{prefix}vae_time (s)": None if cost.vae_time is None else float(cost.vae_time),
            f"{prefix}time (s)": float(cost.time), f"{prefix}gpus": cost.n_gpus}


def _pass_quantities(cost, g, dtype) -> list:
    """What `_pass_lines` writes, as values to compare (A beside B)."""
    p = cost.per_pass
    return [("FLOPs per pass", SI(p.flops, "FLOP")), ("Intensity of one pass", Num(p.intensity, 3, "ops/byte")),
            ("The GPU's ops:byte", Num(g.ops_per_byte(dtype), 3)),
            ("One pass is", Text("compute bound" if p.intensity >= g.ops_per_byte(dtype) else "memory bound"))]


@calculator(
    "diffusion_pipeline",
    title="One image: passes, FLOPs and time",
    fields=[
        Field("model", "Model", "Qwen-Image", kind="select", options=IMAGE_MODELS),
        Field("steps", "Denoising steps", 50, min=1, max=1000, integer=True, unit="steps"),
        Field("guidance", "Classifier-free guidance", "on", kind="select", options=GUIDANCE),
        Field("width", "Width (pixels)", 1024, min=16, max=4096, integer=True, help="multiple of 16", unit="px"),
        Field("height", "Height (pixels)", 1024, min=16, max=4096, integer=True, help="multiple of 16", unit="px"),
        *gpu_fields(),
        Field("dtype", "Weights and math", "bf16", kind="select", options=DTYPES),
    ],
    outputs=[
        Output("passes", "Denoiser forward passes"),
        Output("tokens", "Latent tokens per pass"),
        Output("pass_flops", "FLOPs per pass"),
        Output("intensity", "Intensity of one pass (FLOPs per byte moved)"),
        Output("total_flops", "FLOPs for the image"),
        Output("time", "Time on one GPU, lower bound"),
        Output("chart", "Time per image against denoising steps", kind="chart", chart=STEPS_CHART),
    ],
    compare={"model": "Qwen-Image", "gpu": "B200", "dtype": "bf16"},
)
def diffusion_pipeline_calc(model, steps, guidance, width, height, gpu, custom_tflops, custom_tb_s, dtype):
    cost, g = _pipeline(model, steps, guidance, width, height, gpu, custom_tflops, custom_tb_s, dtype)
    m = cost.model
    per_step = 2 if cost.guidance else 1
    return {
        "passes": f"{cost.passes:,} ({cost.steps:,} steps × {per_step})",
        "tokens": (f"{cost.per_pass.tokens:,} ({width // m.vae_spatial} × {height // m.vae_spatial} latent, "
                   f"{m.patch[1]} × {m.patch[2]} patches)"),
        **_pass_lines(cost, g, dtype),
        "total_flops": si(cost.flops, "FLOP"),
        "time": (f"{duration(cost.time)} (denoiser {duration(cost.denoiser_time)}, "
                 f"text encoder {duration(cost.text_encoder_time)}; VAE decode not included)"),
        "chart": _steps_chart(model, width, height, gpu, custom_tflops, custom_tb_s, dtype,
                              [(steps, guidance, "this image")]),
        "numbers": {"model": model, **gpu_numbers(g, dtype), "latent_width": width // m.vae_spatial,
                    "latent_height": height // m.vae_spatial, "patch_height": m.patch[1], "patch_width": m.patch[2],
                    **cost_numbers(cost, g, dtype)},
        "compared": [  # A beside B (the compare toggle): the numbers above, as they are written there
            ("Denoiser forward passes", Int(cost.passes)), ("Latent tokens per pass", Int(cost.per_pass.tokens)),
            *_pass_quantities(cost, g, dtype), ("FLOPs for the image", SI(cost.flops, "FLOP")),
            ("Time on one GPU, lower bound", Duration(cost.time))],
    }


@calculator(
    "few_step",
    title="Few-step model against the full schedule",
    fields=[
        Field("model", "Model", "Qwen-Image", kind="select", options=IMAGE_MODELS),
        Field("width", "Width (pixels)", 1024, min=16, max=4096, integer=True, help="multiple of 16", unit="px"),
        Field("height", "Height (pixels)", 1024, min=16, max=4096, integer=True, help="multiple of 16", unit="px"),
        Field("base_steps", "Full schedule: steps", 50, min=1, max=1000, integer=True, unit="steps"),
        Field("base_guidance", "Full schedule: guidance", "on", kind="select", options=GUIDANCE),
        Field("few_steps", "Few-step model: steps", 8, min=1, max=16, integer=True, unit="steps"),
        Field("few_guidance", "Few-step model: guidance", "off", kind="select", options=GUIDANCE),
        *gpu_fields(),
    ],
    outputs=[
        Output("times", "Time per image, lower bound (seconds)", kind="bars"),
        Output("chart", "Time per image against steps: full schedule and few-step model", kind="chart",
               chart=STEPS_CHART),
        Output("base", "Full schedule"),
        Output("few", "Few-step"),
        Output("saved", "Saved"),
    ],
)
def few_step_calc(model, width, height, base_steps, base_guidance, few_steps, few_guidance, gpu, custom_tflops,
                  custom_tb_s):
    base, g = _pipeline(model, base_steps, base_guidance, width, height, gpu, custom_tflops, custom_tb_s, "bf16")
    few, _ = _pipeline(model, few_steps, few_guidance, width, height, gpu, custom_tflops, custom_tb_s, "bf16")
    share = diffusion.few_step_saving(base_steps, base_guidance == "on", few_steps, few_guidance == "on")
    return {
        "times": bars([[f"{base_steps} steps, guidance {base_guidance}", base.time],
                       [f"{few_steps} steps, guidance {few_guidance}", few.time]]),
        "chart": _steps_chart(model, width, height, gpu, custom_tflops, custom_tb_s, "bf16",
                              [(base_steps, base_guidance, "full schedule"), (few_steps, few_guidance, "few-step")]),
        "base": f"{base.passes:,} passes, {duration(base.time)}",
        "few": f"{few.passes:,} passes, {duration(few.time)}",
        "saved": f"{100 * share:.1f} % of denoiser passes, {100 * (1 - few.time / base.time):.1f} % of the time",
        "numbers": {"model": model, **gpu_numbers(g, "bf16"), **cost_numbers(base, g, "bf16", "base_"),
                    **cost_numbers(few, g, "bf16", "few_"), "passes_saved (%)": 100 * share,
                    "time_saved (%)": 100 * (1 - few.time / base.time)},
    }


@calculator(
    "video_generation",
    title="One video clip: latent size and time",
    fields=[
        Field("model", "Model", "Wan2.1-T2V-14B", kind="select", options=VIDEO_MODELS),
        Field("frames", "Frames", 81, min=1, max=321, integer=True, help=FRAMES_HELP, unit="frames"),
        Field("width", "Width (pixels)", 1280, min=16, max=3200, integer=True, help=SIDE_HELP, unit="px"),
        Field("height", "Height (pixels)", 720, min=16, max=2160, integer=True, help=SIDE_HELP, unit="px"),
        Field("steps", "Denoising steps", 50, min=1, max=1000, integer=True, unit="steps"),
        Field("guidance", "Classifier-free guidance", "on", kind="select", options=GUIDANCE),
        Field("n_gpus", "GPUs for the one request", 8, min=1, max=64, integer=True, unit="GPUs"),
        *gpu_fields(),
        Field("dtype", "Weights and math", "bf16", kind="select", options=DTYPES),
    ],
    outputs=[
        Output("latent", "Latent"),
        Output("tokens", "Tokens per pass"),
        Output("pass_flops", "FLOPs per pass"),
        Output("intensity", "Intensity of one pass (FLOPs per byte moved)"),
        Output("time_one", "Time on one GPU, lower bound"),
        Output("time_n", "Time split over the GPUs, lower bound"),
    ],
    compare={"model": "Wan2.1-T2V-1.3B", "gpu": "H100-SXM", "dtype": "bf16"},
)
def video_generation_calc(model, frames, width, height, steps, guidance, n_gpus, gpu, custom_tflops, custom_tb_s,
                          dtype):
    m = diffusion.get_model(model)
    try:
        m.tokens(width, height, frames)  # the VAE's and the patches' own checks, named by field
    except ValueError as err:
        text = str(err)
        field = "frames" if "frames" in text else "height" if text.startswith("height") else "width"
        raise FieldError(field, f"{m.name}: {text}") from None
    one, g = _pipeline(model, steps, guidance, width, height, gpu, custom_tflops, custom_tb_s, dtype, frames)
    split, _ = _pipeline(model, steps, guidance, width, height, gpu, custom_tflops, custom_tb_s, dtype, frames, n_gpus)
    t = diffusion.latent_frames(frames, m.vae_temporal)
    return {
        "latent": (f"{m.latent_channels} channels × {t} frames × {height // m.vae_spatial} × {width // m.vae_spatial} "
                   f"({m.vae_temporal}× in time, {m.vae_spatial}× in space)"),
        "tokens": f"{one.per_pass.tokens:,}",
        **_pass_lines(one, g, dtype),
        "time_one": f"{duration(one.time)} for {one.passes:,} passes",
        "time_n": f"{duration(split.time)} on {n_gpus} GPUs (ideal split, communication ignored)",
        "numbers": {"model": model, **gpu_numbers(g, dtype), "latent_channels": m.latent_channels,
                    "latent_frames": t, "latent_height": height // m.vae_spatial, "latent_width": width // m.vae_spatial,
                    "vae_temporal": m.vae_temporal, "vae_spatial": m.vae_spatial, **cost_numbers(one, g, dtype),
                    "time_on_the_gpus (s)": float(split.time)},
        "compared": [  # A beside B (the compare toggle): the numbers above, as they are written there
            ("Tokens per pass", Int(one.per_pass.tokens)), *_pass_quantities(one, g, dtype),
            ("Time on one GPU, lower bound", Duration(one.time)),
            ("Time split over the GPUs, lower bound", Duration(split.time))],
    }


# ------------------------------------------------------------------ any pipeline, or a pasted denoiser config
ALL_PIPELINES = tuple((k, k) for k in diffusion.MODELS)
GUIDANCE_DEFAULT = (("default", "The preset's"), *GUIDANCE)
PRESET_HELP = ("a preset's steps, guidance and size are its diffusers pipeline's defaults, or its model card's for "
               + ", ".join(m.name for m in diffusion.MODELS.values() if m.card_settings))
MAX_CONFIG_CHARS = 20_000  # a transformer/config.json is under 2 kB; an SDXL unet/config.json about 1.8 kB
SIZE_LABEL = "image side (pixels), or frames of a clip"
# one above the other, against the same x: the same room for tick labels, so that their x axes line up
SIZE_CHART = charts.ChartSpec(SIZE_LABEL, "time, lower bound (s)", y_log=True, height=230, y_tick_chars=3)
SHARE_CHART = charts.ChartSpec(SIZE_LABEL, "attention share of FLOPs (%)", y_range=(0, 100), height=200,
                               y_tick_chars=3)


def _pick_pipeline(pipeline, config_json, model_id=""):
    """(model, where it came from) of the pasted denoiser config.json if there is one, else of the Hub pipeline
    `model_id`'s denoiser (its transformer/ or unet/config.json, read exactly as if pasted; where: "<id>,
    unet/config.json"), else of the shipped pipeline (where: "")."""
    if config_json.strip():
        try:
            return diffusion.model_from_config(config_json), ""
        except (ValueError, TypeError) as err:
            raise FieldError("config_json", f"config.json: {err}") from None
    if model_id.strip():
        name, component, text = hub_denoiser_config(model_id)
        try:
            return diffusion.model_from_config(text, name=name), f"{name}, {component}/config.json"
        except (ValueError, TypeError) as err:
            raise FieldError(MODEL_ID, f"{name}: {component}/config.json: {err}") from None
    if pipeline not in diffusion.MODELS:
        raise FieldError("pipeline", f"Pipeline: choose one of {', '.join(diffusion.MODELS)}")
    return diffusion.MODELS[pipeline], ""


def _cost_or_field_error(m, **kw):
    try:
        return diffusion.pipeline_cost(m, **kw)
    except ValueError as err:
        text = str(err)
        field = "frames" if "frames" in text else "height" if text.startswith("height") else "width"
        raise FieldError(field, text) from None


@calculator(
    "denoiser_any",
    title="Any pipeline, or your own denoiser config",
    fields=[
        Field("pipeline", "Pipeline", "Qwen-Image", kind="select", options=ALL_PIPELINES, help=PRESET_HELP),
        model_id_field("pipeline"),
        Field("config_json", "Or paste a transformer/ or unet/config.json (used when not empty)", "", kind="text",
              max=MAX_CONFIG_CHARS, help="diffusers classes: " + ", ".join(SUPPORTED) + "; read in your browser"),
        Field("width", "Width (pixels, 0 = the preset's)", 0, min=0, max=8192, integer=True, unit="px"),
        Field("height", "Height (pixels, 0 = the preset's)", 0, min=0, max=8192, integer=True, unit="px"),
        Field("frames", "Frames (video, 0 = the preset's)", 0, min=0, max=1025, integer=True, unit="frames"),
        Field("steps", "Denoising steps (0 = the preset's)", 0, min=0, max=1000, integer=True, unit="steps"),
        Field("guidance", "Classifier-free guidance", "default", kind="select", options=GUIDANCE_DEFAULT),
        *gpu_fields(),
        Field("dtype", "Weights and math", "bf16", kind="select", options=DTYPES),
    ],
    outputs=[
        Output("model", "Denoiser"),
        Output("tokens", "Tokens per pass"),
        Output("pass_flops", "FLOPs per pass"),
        Output("intensity", "Intensity of one pass (FLOPs per byte moved)"),
        Output("time", "Time on one GPU, lower bound"),
        Output("chart", "Time against size (the other settings as above)", kind="chart", chart=SIZE_CHART),
        Output("share", "Attention's share of a pass against size", kind="chart", chart=SHARE_CHART),
    ],
    compare={"pipeline": "FLUX.1-dev", MODEL_ID: "", "config_json": "", "gpu": "H100-SXM", "dtype": "bf16"},
)
def denoiser_any_calc(pipeline, model_id, config_json, width, height, frames, steps, guidance, gpu, custom_tflops, custom_tb_s,
                      dtype):
    m, source = _pick_pipeline(pipeline, config_json, model_id)
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    w, h = width or m.default_size[0], height or m.default_size[1]
    f = (frames or m.default_frames) if m.kind == "video" else 1
    if m.kind == "image" and frames not in (0, 1):
        raise FieldError("frames", f"Frames: {m.name} makes images, leave frames at 0 or 1 (got {frames})")
    kw = dict(steps=steps or m.default_steps, guidance=None if guidance == "default" else guidance == "on", gpu=g,
              dtype=dtype)
    cost = _cost_or_field_error(m, width=w, height=h, frames=f, **kw)
    p = cost.per_pass
    parts = [f"text encoders {duration(cost.text_encoder_time)}" if m.encoders else "no text encoder in a bare config",
             f"VAE decode {duration(cost.vae_time)}" if cost.vae_time is not None else "VAE decode not costed"]
    what = "clip" if m.kind == "video" else "image"
    if m.kind == "video":  # clips of the chosen width and height, from one latent frame to twice the chosen length
        top = max(2, 2 * ((f - 1) // m.vae_temporal))
        xs = sorted({1 + m.vae_temporal * round(i * top / 12) for i in range(13)} | {f})
        costs = [diffusion.pipeline_cost(m, width=w, height=h, frames=x, **kw) for x in xs]
        here_x, axis = f, f"frames of a {w} × {h} clip"
    else:  # square images (every shipped denoiser takes multiples of 128 pixels)
        xs = list(range(256, 2048 + 1, 128))
        costs = [diffusion.pipeline_cost(m, width=x, height=x, frames=1, **kw) for x in xs]
        here_x, axis = round((w * h) ** 0.5), "the side of a square image"
    here = charts.point(here_x, cost.time, f"this {what}: {duration(cost.time)}", color=0, legend=True)
    time_chart = charts.chart([charts.series(f"time per {what}", xs, [c.time for c in costs], color=0)], [here],
                              summary=f"Time per {what} against {axis}: it grows with the tokens, and faster once "
                                      "attention dominates.")
    share_chart = charts.chart([charts.series("attention share", xs, [100 * c.per_pass.attention_share for c in costs],
                                              color=1)],
                               summary=f"Attention's share of a pass against {axis}: it rises with the tokens.")
    return {
        "model": (f"{source}: " if source else "") + f"{m.denoiser.class_name}: {sig(m.denoiser_params / 1e9, 3)}B parameters"
                 + (f" per pass ({sig(m.stored_params / 1e9, 3)}B stored, {m.experts} experts)" if m.experts > 1 else ""),
        "tokens": f"{p.tokens:,} latent tokens + {m.text_tokens:,} prompt tokens",
        **_pass_lines(cost, g, dtype),
        "time": (f"{duration(cost.time)} per {what}: {cost.passes:,} passes × {duration(cost.pass_time)}; "
                 + ", ".join(parts)),
        "chart": time_chart,
        "share": share_chart,
        "numbers": {"denoiser": m.denoiser.class_name, **gpu_numbers(g, dtype), "denoiser_parameters": m.denoiser_params,
                    "stored_parameters": m.stored_params, "experts": m.experts, "width (px)": w, "height (px)": h,
                    "frames": f, "prompt_tokens (tokens)": m.text_tokens, **cost_numbers(cost, g, dtype)},
        "compared": [  # A beside B (the compare toggle): the numbers above, as they are written there
            ("Denoiser", Text(m.denoiser.class_name)), ("Denoiser passes", Int(cost.passes)),
            ("Latent tokens per pass", Int(p.tokens)),
            *_pass_quantities(cost, g, dtype), ("Time per image or clip, lower bound", Duration(cost.time)),
            ("Time per pass", Duration(cost.pass_time))],
    }
