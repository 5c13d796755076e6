"""Figures for section 2.3: denoiser passes against steps, the pixels-to-tokens pipeline, guided steps, and
attention's share of a pass against image size and clip length."""

import numpy as np

from ... import diffusion
from ...format import sig
from . import figure

MODEL, SIZE, GPU, FEW = "Qwen-Image", 1024, "H100-SXM", (4, 8)


def _cost(steps, guidance):
    return diffusion.pipeline_cost(MODEL, steps=int(steps), guidance=guidance, width=SIZE, height=SIZE, gpu=GPU)


def _alt() -> str:
    full = _cost(50, True)
    few = "; ".join(f"{s} steps without guidance {sig(_cost(s, False).time, 2)} s "
                    f"({100 * diffusion.few_step_saving(50, True, s, False):.0f} % fewer passes)" for s in FEW)
    return (f"Two panels against the number of denoising steps, 1 to 60. Left: denoiser forward passes, a line of "
            f"slope 2 with classifier-free guidance (50 steps make {full.passes} passes) and a line of slope 1 "
            f"without. Right: lower-bound seconds for one {SIZE} by {SIZE} {MODEL} image on an {GPU}, "
            f"{sig(full.pass_time, 2)} s per pass, so {sig(full.time, 2)} s for 50 guided steps; few-step markers: {few}.")


@figure("diffusion_passes", alt=_alt(), phone=False)  # on no page today: drawn for the desktop only
def diffusion_figure():
    import matplotlib.pyplot as plt

    steps = np.arange(1, 61)
    fig, (ax_passes, ax_time) = plt.subplots(1, 2, figsize=(8.8, 3.6))
    for guidance, label in ((True, "with guidance: 2 passes per step"), (False, "without: 1 pass per step")):
        ax_passes.plot(steps, [diffusion.denoiser_passes(int(s), guidance) for s in steps], label=label, linewidth=1.8)
        ax_time.plot(steps, [_cost(s, guidance).time for s in steps], linewidth=1.8)
    full = _cost(50, True)
    ax_passes.plot([50], [full.passes], marker="o", color="#8a8f98")
    ax_passes.annotate(f"50 steps → {full.passes} passes", (50, full.passes), xytext=(0, -28),
                       textcoords="offset points", fontsize=9, ha="center")
    ax_time.plot([50], [full.time], marker="o", color="#8a8f98")
    notes = [f"50 steps, guided: {sig(full.time, 2)} s"]
    for few in FEW:
        cost = _cost(few, False)
        ax_time.plot([few], [cost.time], marker="s", color="#2ca58d")
        notes.append(f"{few} steps, one pass each: {sig(cost.time, 2)} s "
                     f"(−{100 * diffusion.few_step_saving(50, True, few, False):.0f} % passes)")
    ax_time.text(0.03, 0.97, "\n".join(notes), transform=ax_time.transAxes, va="top", fontsize=8)
    ax_passes.set(title="denoiser forward passes", xlabel="steps")
    ax_time.set(title=f"seconds per image ({MODEL}, {SIZE}², {GPU})", xlabel="steps")
    ax_time.title.set_fontsize(10)
    ax_passes.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- pixels -> latent -> patches -> tokens
PIPELINE_MODEL, PIPELINE_SIZE = "Qwen-Image", 1024


def latent_pipeline_sizes(model: str = PIPELINE_MODEL, size: int = PIPELINE_SIZE) -> dict[str, int]:
    """The numbers the pipeline figure draws, from `chapter2.diffusion`: a `size` x `size` RGB image through the
    model's VAE (spatial factor, latent channels) and patches (tokens, latent values per token, token width)."""
    m = diffusion.MODELS[model]
    latent_side = size // m.vae_spatial
    patch = m.patch[1]
    return {
        "size": size, "pixel_values": 3 * size * size,
        "vae": m.vae_spatial, "channels": m.latent_channels, "latent_side": latent_side,
        "latent_values": m.latent_channels * latent_side * latent_side,
        "patch": patch, "grid": latent_side // patch, "tokens": m.tokens(size, size),
        "values_per_token": m.latent_channels * patch * patch, "width": m.width,
    }


def _pipeline_alt() -> str:
    s = latent_pipeline_sizes()
    return (f"Four panels from left to right for one {s['size']} by {s['size']} {PIPELINE_MODEL} image. Pixels: "
            f"{s['size']} × {s['size']} × 3, {s['pixel_values']:,} values. The VAE encoder shrinks each side "
            f"{s['vae']} times into a latent of {s['latent_side']} × {s['latent_side']} × {s['channels']} channels, "
            f"{s['latent_values']:,} values, {s['pixel_values'] // s['latent_values']} times fewer. The latent is "
            f"cut into a {s['grid']} × {s['grid']} grid of {s['patch']} × {s['patch']} patches. Each patch, "
            f"{s['values_per_token']} latent values, becomes one token: a sequence of {s['tokens']:,} tokens, "
            f"each projected to {s['width']:,} numbers, which every transformer block of the denoiser processes.")


def _scene(n: int = 64) -> np.ndarray:
    """A small deterministic RGB picture (sky, sun, hills) that stands for "the image", values in [0, 1]."""
    y, x = np.mgrid[0:n, 0:n] / (n - 1)
    sky = np.stack([0.55 + 0.35 * y, 0.65 + 0.2 * y, 0.95 - 0.25 * y], axis=-1)
    sun = ((x - 0.7) ** 2 + (y - 0.3) ** 2) < 0.015
    hills = y > 0.72 + 0.08 * np.sin(6 * x)
    img = sky.copy()
    img[sun] = (0.98, 0.82, 0.3)
    img[hills] = np.stack([0.2 + 0.1 * x, 0.55 - 0.1 * y, 0.25 + 0 * x], axis=-1)[hills]
    return np.clip(img, 0, 1)


def _arrow(fig, x0, x1, y, text):
    from matplotlib.patches import FancyArrowPatch

    fig.patches.append(FancyArrowPatch((x0, y), (x1, y), transform=fig.transFigure, arrowstyle="-|>",
                                       mutation_scale=12, color="#8a8f98", linewidth=1.2))
    fig.text((x0 + x1) / 2, y + 0.05, text, ha="center", va="bottom", fontsize=8)


@figure("latent_pipeline", alt=_pipeline_alt())
def latent_pipeline_figure():
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Rectangle

    from ._style import INK, PALETTE, phone

    s = latent_pipeline_sizes()
    g = s["grid"]
    titles = [f"pixels\n{s['size']:,} × {s['size']:,} × 3\n{s['pixel_values']:,} values",
              f"latent\n{s['latent_side']} × {s['latent_side']} × {s['channels']} channels\n{s['latent_values']:,} values",
              f"patches\n{g} × {g} grid of {s['patch']} × {s['patch']} patches\n(grid lines every 8 patches)",
              f"tokens\n{s['tokens']:,} in one sequence"]
    steps = [f"VAE ÷{s['vae']}", f"cut {s['patch']}×{s['patch']}", "flatten"]
    each = f"each: {s['values_per_token']} latent values\n→ {s['width']:,} numbers wide"
    if phone():  # one stage a row, read downwards: the panel on the left, its words on the right
        side, gap = 1.2, 0.5  # inches: a panel's side, the space between rows (the arrow)
        height = 4 * side + 3 * gap + 0.1
        fig = plt.figure(figsize=(4.3, height))
        lows = [height - 0.05 - side - i * (side + gap) for i in range(4)]
        axes = [fig.add_axes((0.01, low / height, side / 4.3, side / height)) for low in lows]
    else:
        fig = plt.figure(figsize=(9.6, 3.4))
        lefts, width, bottom, height = (0.0, 0.26, 0.52, 0.78), 0.2, 0.08, 0.56
        axes = [fig.add_axes((x, bottom, width, height)) for x in lefts]
    for ax in axes:
        ax.set_axis_off()
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
    pixels, latent, patches, tokens = axes

    pixels.imshow(_scene(), extent=(0.05, 0.95, 0.05, 0.95), interpolation="nearest")

    for c in range(min(s["channels"], 8)):  # a stack of channel planes (8 of the 16 drawn)
        off = 0.025 * c
        latent.add_patch(Rectangle((0.15 + off, 0.1 + off), 0.65, 0.65, facecolor=PALETTE[c % 3], alpha=0.35,
                                   edgecolor=INK, linewidth=0.6))

    patches.add_patch(Rectangle((0.05, 0.05), 0.9, 0.9, facecolor=PALETTE[0], alpha=0.25, edgecolor=INK))
    for i in range(0, g + 1, 8):  # every 8th patch boundary: a 64 x 64 grid is too fine to draw whole
        t = 0.05 + 0.9 * i / g
        patches.plot([t, t], [0.05, 0.95], color=INK, linewidth=0.5)
        patches.plot([0.05, 0.95], [t, t], color=INK, linewidth=0.5)
    one = 0.9 / g  # one patch, drawn to scale with a thick edge so that it shows
    patches.add_patch(Rectangle((0.05, 0.95 - one), one, one, facecolor=PALETTE[1], edgecolor=PALETTE[1], linewidth=2))

    shown = 6
    for i in range(shown):
        tokens.add_patch(Rectangle((0.02 + i * 0.1, 0.45), 0.08, 0.2, facecolor=PALETTE[1] if i == 0 else PALETTE[0],
                                   alpha=0.9 if i == 0 else 0.45, edgecolor=INK, linewidth=0.6))
    tokens.text(0.02 + shown * 0.1 + 0.02, 0.55, "…", fontsize=12, va="center")
    tokens.add_patch(Rectangle((0.86, 0.45), 0.08, 0.2, facecolor=PALETTE[0], alpha=0.45, edgecolor=INK, linewidth=0.6))

    if phone():
        notes = ["", "", "the first patch, in colour,\nis the first token", each]
        for ax, title, note in zip(axes, titles, notes, strict=True):
            box = ax.get_position()
            fig.text(box.x1 + 0.04, box.y0 + box.height / 2, title + ("\n" + note if note else ""), va="center",
                     linespacing=1.25)
        for i, step in enumerate(steps):  # an arrow down from each panel to the next, its step beside it
            top, bottom = axes[i].get_position().y0, axes[i + 1].get_position().y1
            x = axes[i].get_position().x0 + axes[i].get_position().width / 2
            fig.patches.append(FancyArrowPatch((x, top - 0.005), (x, bottom + 0.005), transform=fig.transFigure,
                                               arrowstyle="-|>", mutation_scale=12, color="#8a8f98", linewidth=1.2))
            fig.text(x + 0.04, (top + bottom) / 2, step, va="center")
        return fig

    for ax, title in zip(axes, titles, strict=True):
        ax.set_title(title, fontsize=9)
    patches.annotate("1 patch = 1 token", (0.05 + one, 0.95 - one), xytext=(0.3, 0.72), fontsize=8,
                     arrowprops={"arrowstyle": "-", "color": PALETTE[1], "linewidth": 0.8})
    tokens.text(0.5, 0.3, each, ha="center", va="top", fontsize=8)
    for (x0, x1), step in zip(((0.205, 0.265), (0.465, 0.525), (0.725, 0.785)), steps, strict=True):
        _arrow(fig, x0, x1, 0.36, step)
    return fig


# --------------------------------------------------------------------------- noise to image, two passes per step
GUIDED_MODEL = "Qwen-Image"
SHOWN_STEPS = 5  # steps drawn in the strip (the first, the last and evenly spaced ones between)


def guided_steps() -> tuple[int, int, list[int]]:
    """(steps, passes, the step numbers drawn) for the model's default guided schedule (`chapter2.diffusion`)."""
    steps = diffusion.pipeline_cost(GUIDED_MODEL).steps
    passes = diffusion.denoiser_passes(steps, True)
    drawn = sorted({int(round(x)) for x in np.linspace(1, steps, SHOWN_STEPS)})
    return steps, passes, drawn


def _guided_alt() -> str:
    steps, passes, drawn = guided_steps()
    return (f"A strip of {len(drawn)} of the {steps} denoising steps of {GUIDED_MODEL} (steps "
            f"{', '.join(map(str, drawn))}), an illustration: the latent, shown as a picture, goes from pure noise "
            f"at step 1 to a clean image at step {steps}. Under every step the denoiser runs twice, once with the "
            f"prompt (conditional pass) and once with the negative or empty prompt (unconditional pass); the two "
            f"predictions are combined, the unconditional one plus the guidance scale times their difference, "
            f"into the one update the sampler applies. {steps} steps × 2 passes = {passes} forward passes.")


@figure("guidance_steps", alt=_guided_alt())
def guidance_steps_figure():
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ._style import INK, PALETTE, phone

    steps, passes, drawn = guided_steps()
    image = _scene(48)
    noise = np.random.default_rng(0).standard_normal(image.shape) * 0.35 + 0.5
    if phone():
        return _guidance_steps_phone(steps, passes, drawn, image, noise)
    fig, ax = plt.subplots(figsize=(9.6, 3.6))
    ax.set_axis_off()
    col = 1.0
    ax.set_xlim(-0.05, col * len(drawn) - 0.15)
    ax.set_ylim(-0.3, 1.24)

    def box(x, y, text, color):
        ax.add_patch(FancyBboxPatch((x - 0.39, y - 0.06), 0.78, 0.12, boxstyle="round,pad=0.01",
                                    facecolor=color, alpha=0.3, edgecolor=color))
        ax.text(x, y, text, ha="center", va="center", fontsize=7.5)

    def arrow(a, b):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=8, color=INK, linewidth=0.8))

    for i, step in enumerate(drawn):
        x = i * col + 0.4
        t = 1 - (step - 1) / (steps - 1)  # noise share: 1 at the first step, 0 after the last
        ax.imshow(np.clip((1 - t) * image + t * noise, 0, 1), extent=(x - 0.22, x + 0.22, 0.72, 1.16),
                  interpolation="nearest")
        ax.text(x, 1.19, f"step {step}", ha="center", va="bottom", fontsize=8.5)
        box(x, 0.56, "pass 1: with prompt", PALETTE[0])
        box(x, 0.38, "pass 2: without prompt", PALETTE[1])
        ax.add_patch(plt.Circle((x, 0.17), 0.07, facecolor="none", edgecolor=INK, linewidth=0.9))
        ax.text(x, 0.17, "mix", ha="center", va="center", fontsize=7.5)
        arrow((x, 0.71), (x, 0.63))
        arrow((x, 0.50), (x, 0.45))
        arrow((x, 0.32), (x, 0.245))
        if i + 1 < len(drawn):  # the mixed prediction updates the latent, which the next step starts from
            gap = x + col / 2
            ax.plot([x + 0.07, gap, gap], [0.17, 0.17, 0.94], color=INK, linewidth=0.8)
            arrow((gap, 0.94), (x + col - 0.23, 0.94))
            skipped = drawn[i + 1] - step - 1
            if skipped:
                ax.text(gap - 0.015, 0.56, f"{skipped} more steps", ha="right", va="center", fontsize=7, rotation=90)
    ax.text(-0.02, -0.04, f"{steps} steps × 2 passes = {passes} forward passes of the denoiser ({GUIDED_MODEL}'s "
            "default).\nmix = unconditional + guidance scale × (conditional − unconditional)",
            fontsize=8, va="top")
    ax.set_aspect("auto")  # imshow set "equal"; the strip is laid out in its own units
    return fig


def _guidance_steps_phone(steps, passes, drawn, image, noise):
    """The guided steps for a phone: one step a row, read downwards (the strip would be five columns of 60 pt).
    Drawn in inches (the axes is the figure, 1 unit = 1 inch): image, its two passes, their mix, and a line from
    the mix to the next step's image."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ._style import INK, PALETTE, PHONE_WIDTH, wrap

    row, side, foot = 1.4, 0.72, 0.85  # inches: a step's row, its image's side, the note under the strip (4 lines)
    height = row * (len(drawn) - 1) + side + 0.45 + foot
    fig = plt.figure(figsize=(PHONE_WIDTH, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, PHONE_WIDTH)
    ax.set_ylim(0, height)

    def arrow(a, b):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=10, color=INK, linewidth=0.8))

    box_x, box_w, box_h, mix_x, r = 1.05, 2.15, 0.3, 3.78, 0.27
    for i, step in enumerate(drawn):
        top = height - 0.05 - i * row
        mid = top - side / 2
        t = 1 - (step - 1) / (steps - 1)  # noise share: 1 at the first step, 0 after the last
        ax.imshow(np.clip((1 - t) * image + t * noise, 0, 1), extent=(0.05, 0.05 + side, top - side, top),
                  interpolation="nearest")
        ax.text(0.05 + side / 2, top - side - 0.05, f"step {step}", ha="center", va="top")
        for y, text, color in ((mid + 0.2, "pass 1: with prompt", PALETTE[0]), (mid - 0.2, "pass 2: without prompt", PALETTE[1])):
            ax.add_patch(FancyBboxPatch((box_x, y - box_h / 2), box_w, box_h, boxstyle="round,pad=0.02",
                                        facecolor=color, alpha=0.3, edgecolor=color))
            ax.text(box_x + box_w / 2, y, text, ha="center", va="center")
            arrow((0.1 + side, mid), (box_x - 0.03, y))
            arrow((box_x + box_w + 0.03, y), (mix_x - r * 0.9, mid + (y - mid) * 0.4))
        ax.add_patch(plt.Circle((mix_x, mid), r, facecolor="none", edgecolor=INK, linewidth=0.9))
        ax.text(mix_x, mid, "mix", ha="center", va="center")
        if i + 1 < len(drawn):  # the mixed prediction updates the latent, which the next step starts from
            low = top - row + 0.12
            ax.plot([mix_x, mix_x, 0.05 + side / 2, 0.05 + side / 2], [mid - r, low, low, low - 0.02],
                    color=INK, linewidth=0.8)
            arrow((0.05 + side / 2, low), (0.05 + side / 2, top - row + 0.01))
            skipped = drawn[i + 1] - step - 1
            if skipped:
                ax.text((box_x + box_x + box_w) / 2, low + 0.04, f"{skipped} more steps", ha="center", va="bottom")
    last = height - 0.05 - (len(drawn) - 1) * row  # the last row's top: the note goes under its image's label
    ax.text(0.05, last - side - 0.4, wrap(f"{steps} steps × 2 passes = {passes} forward passes of the denoiser "
            f"({GUIDED_MODEL}'s default).", 44) + "\n" + wrap("mix = unconditional + guidance scale × "
                                                                 "(conditional − unconditional)", 44), va="top")
    return fig


# --------------------------------------------------------------------------- attention's share against size
SHARE_IMAGES = ("Qwen-Image", "FLUX.1-dev", "SD3.5-Large", "SDXL")
SHARE_VIDEOS = ("Wan2.1-T2V-14B", "HunyuanVideo", "CogVideoX-5B")
SIDES = tuple(range(256, 2048 + 1, 128))


def attention_shares() -> dict:
    """Attention's share of one pass (exact, `chapter2.denoiser`): image pipelines against the side of a square
    image, video pipelines against frames at their default width and height."""
    images = {n: [diffusion.MODELS[n].denoiser.pass_cost(s, s, 1, diffusion.MODELS[n].text_tokens).attention_share
                  for s in SIDES] for n in SHARE_IMAGES}
    videos = {}
    for n in SHARE_VIDEOS:
        m = diffusion.MODELS[n]
        w, h = m.default_size
        frames = [1 + m.vae_temporal * i for i in range(0, (m.default_frames - 1) // m.vae_temporal + 1)]
        videos[n] = (frames, [m.denoiser.pass_cost(w, h, f, m.text_tokens).attention_share for f in frames])
    return {"images": images, "videos": videos}


def _share_alt() -> str:
    s = attention_shares()
    qwen = dict(zip(SIDES, s["images"]["Qwen-Image"], strict=True))
    wan_frames, wan = s["videos"]["Wan2.1-T2V-14B"]
    return (f"Two panels of attention's share of one denoiser pass's FLOPs. Left, against the side of a square image "
            f"from {SIDES[0]} to {SIDES[-1]} pixels: Qwen-Image rises from {100 * qwen[256]:.0f} % to "
            f"{100 * qwen[1024]:.0f} % at 1024 and {100 * qwen[2048]:.0f} % at 2048; FLUX.1 [dev] and SD3.5 Large "
            f"follow the same rise and SDXL's UNet stays lower. Right, against frames at each video model's default size: Wan 2.1 14B "
            f"goes from {100 * wan[0]:.0f} % for one frame to {100 * wan[-1]:.0f} % at {wan_frames[-1]} frames. "
            f"A dashed line marks half: above it attention is most of the work.")


@figure("attention_share", alt=_share_alt())
def attention_share_figure():
    import matplotlib.pyplot as plt

    from ._style import phone, pt, size

    s = attention_shares()
    stacked = phone()  # one panel above the other on a phone
    fig, (ax_img, ax_vid) = plt.subplots(2 if stacked else 1, 1 if stacked else 2, figsize=size((8.8, 3.6), 6.4),
                                         sharey=True)
    for name, shares in s["images"].items():
        ax_img.plot(SIDES, [100 * v for v in shares], label=name, linewidth=1.8)
    for name, (frames, shares) in s["videos"].items():
        ax_vid.plot(frames, [100 * v for v in shares], label=name, linewidth=1.8)
    for ax in (ax_img, ax_vid):
        ax.axhline(50, color="#8a8f98", linestyle="--", linewidth=1)
        ax.set_ylim(0, 100)
    ax_img.legend(loc="upper left", fontsize=pt(8))
    ax_vid.legend(loc="lower right" if stacked else "upper left", fontsize=pt(8))  # a phone's panel: under the curves
    ax_img.set(title="images: attention % of a pass", xlabel="side of a square image (pixels)", ylabel="%")
    ax_vid.set(title="video: attention % of a pass", xlabel="frames (default width × height)",
               ylabel="%" if stacked else "")
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------- the whole pipeline, one request
def pipeline_counts() -> dict[str, int]:
    """What one guided request of `GUIDED_MODEL` runs at its defaults (`chapter2.diffusion`): the text encoder and
    the VAE decoder once each, the denoiser twice in each of its steps."""
    steps, passes, _ = guided_steps()
    return {"steps": steps, "passes": passes, "text_encoder": 1, "vae_decode": 1}


def _image_pipeline_alt() -> str:
    c = pipeline_counts()
    return (f"One image request, left to right. The prompt (and a negative or empty prompt) goes through the text "
            f"encoder once, which turns it into embeddings. Generation starts from random noise in the latent "
            f"space, a small grid of numbers. Then the denoising loop runs {c['steps']} times ({GUIDED_MODEL}'s "
            f"default): in each step the denoiser looks at the latent twice, once with the prompt's embeddings and "
            f"once without; the two predictions are mixed by the guidance scale, and the sampler turns the mix "
            f"into a slightly cleaner latent for the next step. After the last step the VAE decoder turns the "
            f"latent into pixels, once. {c['steps']} steps × 2 passes = {c['passes']} denoiser passes, against one "
            f"text-encoder pass and one VAE decode: the denoiser is where the time goes.")


@figure("image_pipeline", alt=_image_pipeline_alt())
def image_pipeline_figure():
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from ._style import INK, PALETTE, phone

    c = pipeline_counts()
    small = phone()
    width, height = (4.3, 7.6) if small else (7.2, 3.8)
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    font = 12 if small else 9.5
    image = _scene(24)  # 24 x 24 pixels: the hero is fetched at once, so its pictures stay small (9 kB, not 25)
    noise = np.clip(np.random.default_rng(0).standard_normal(image.shape) * 0.35 + 0.5, 0, 1)
    half = np.clip(0.5 * image + 0.5 * noise, 0, 1)

    def box(x, y, w, h, text, color, *, size=font, weight="normal"):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.06", facecolor=color,
                                    alpha=0.3, edgecolor=color, linewidth=1.0))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=size, fontweight=weight,
                linespacing=1.2)

    def arrow(a, b, *, style="-|>", rad=0.0, text=None, at=0.5, offset=(0.05, 0.0), ha="left"):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle=style, mutation_scale=10, color=INK, linewidth=0.9,
                                     connectionstyle=f"arc3,rad={rad}"))
        if text:
            ax.text(a[0] + (b[0] - a[0]) * at + offset[0], a[1] + (b[1] - a[1]) * at + offset[1], text,
                    fontsize=font, va="center", ha=ha)

    def picture(img, x, y, side, label):
        ax.imshow(img, extent=(x, x + side, y, y + side), interpolation="nearest", zorder=2)
        ax.text(x + side / 2, y - 0.05, label, ha="center", va="top", fontsize=font)

    def loop_frame(x, y, w, h, *, left=False):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.12", facecolor="none",
                                    edgecolor=INK, linewidth=1.0, linestyle="--"))
        ax.text(x + 0.12 if left else x + w - 0.12, y + h - 0.1,
                f"denoising loop: {c['steps']} steps,\n2 denoiser passes each", va="top",
                ha="left" if left else "right", fontsize=font, fontweight="bold", linespacing=1.2)

    enc, den, mix, sam, vae = PALETTE[3], PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[4]
    if small:  # one column, read downwards
        box(0.15, 6.85, 4.0, 0.6, '"a red fox in the snow"\n(and a negative prompt)', PALETTE[5])
        box(0.15, 5.95, 4.0, 0.55, "text encoder: once", enc)
        arrow((2.15, 6.83), (2.15, 6.52))
        loop_frame(0.05, 1.9, 4.2, 3.75, left=True)
        picture(half, 0.2, 3.9, 0.85, "latent:\nnoise at first")
        box(1.4, 4.45, 2.7, 0.45, "denoiser, with the prompt", den)
        box(1.4, 3.85, 2.7, 0.45, "denoiser, without it", den)
        arrow((3.6, 5.93), (3.6, 4.92))
        ax.text(3.5, 5.8, "embeddings", ha="right", va="center", fontsize=font)
        arrow((1.08, 4.5), (1.38, 4.67))
        arrow((1.08, 4.2), (1.38, 4.07))
        box(1.4, 3.1, 2.7, 0.45, "mix: guidance", mix)
        arrow((2.75, 3.83), (2.75, 3.57))
        box(1.4, 2.3, 2.7, 0.55, "sampler: a slightly\ncleaner latent", sam)
        arrow((2.75, 3.08), (2.75, 2.87))
        arrow((1.38, 2.57), (0.62, 3.28), rad=-0.3)
        ax.text(0.2, 2.3, "next step", va="center", fontsize=font)
        box(0.15, 1.05, 4.0, 0.5, "VAE decoder: once", vae)
        arrow((2.15, 1.88), (2.15, 1.57))
        picture(image, 1.75, 0.12, 0.8, "")
        ax.text(2.7, 0.52, "the image", va="center", fontsize=font)
        arrow((2.15, 1.03), (2.15, 0.94))
        return fig

    box(0.1, 3.05, 1.9, 0.6, '"a red fox in the snow"\n(and a negative prompt)', PALETTE[5], size=font - 0.5)
    box(2.45, 3.1, 1.55, 0.5, "text encoder: once", enc)
    arrow((2.02, 3.35), (2.43, 3.35))
    picture(noise, 0.3, 0.75, 0.75, "random noise")
    loop_frame(1.3, 0.1, 4.55, 2.65)
    picture(half, 1.45, 1.05, 0.75, "latent")
    arrow((1.07, 1.12), (1.43, 1.35))
    box(2.45, 1.55, 2.0, 0.4, "denoiser, with the prompt", den)
    box(2.45, 1.0, 2.0, 0.4, "denoiser, without it", den)
    arrow((3.35, 3.08), (3.35, 1.97), text="embeddings", at=0.2)
    arrow((2.22, 1.55), (2.43, 1.74))
    arrow((2.22, 1.3), (2.43, 1.2))
    box(4.7, 1.15, 0.95, 0.6, "mix:\nguidance", mix)
    arrow((4.47, 1.75), (4.68, 1.6))
    arrow((4.47, 1.2), (4.68, 1.3))
    box(2.45, 0.25, 3.2, 0.45, "sampler: a slightly cleaner latent", sam)
    arrow((5.17, 1.13), (5.17, 0.72))
    arrow((2.43, 0.47), (1.75, 0.83), rad=-0.3)
    ax.text(1.45, 0.4, "next\nstep", fontsize=font, va="center")
    box(6.05, 2.15, 1.05, 0.55, "VAE decoder:\nonce", vae)
    arrow((5.87, 1.45), (6.2, 2.13), rad=0.25)
    picture(image, 6.2, 0.75, 0.8, "the image")
    arrow((6.6, 2.13), (6.6, 1.57))
    return fig
