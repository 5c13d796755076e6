"""Figure for section 2.3: denoiser passes and time against steps, with and without guidance."""

import numpy as np

from ... import diffusion
from . import figure

MODEL, SIZE, GPU, FEW = "Qwen-Image", 1024, "H100-SXM", (4, 8)


def _cost(steps, guidance):
    return diffusion.pipeline_cost(MODEL, steps=int(steps), guidance=guidance, width=SIZE, height=SIZE, gpu=GPU)


def _alt() -> str:
    full = _cost(50, True)
    few = "; ".join(f"{s} steps without guidance {_cost(s, False).time:.1f} s "
                    f"({100 * diffusion.few_step_saving(50, True, s, False):.0f} % fewer passes)" for s in FEW)
    return (f"Two panels against the number of denoising steps, 1 to 60. Left: denoiser forward passes, a line of "
            f"slope 2 with classifier-free guidance (50 steps make {full.passes} passes) and a line of slope 1 "
            f"without. Right: lower-bound seconds for one {SIZE} by {SIZE} {MODEL} image on an {GPU}, "
            f"{full.pass_time:.2f} s per pass, so {full.time:.1f} s for 50 guided steps; few-step markers: {few}.")


@figure("diffusion_passes", alt=_alt())
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
    notes = [f"50 steps, guided: {full.time:.1f} s"]
    for few in FEW:
        cost = _cost(few, False)
        ax_time.plot([few], [cost.time], marker="s", color="#2ca58d")
        notes.append(f"{few} steps, one pass each: {cost.time:.1f} s "
                     f"(−{100 * diffusion.few_step_saving(50, True, few, False):.0f} % passes)")
    ax_time.text(0.03, 0.97, "\n".join(notes), transform=ax_time.transAxes, va="top", fontsize=8)
    ax_passes.set(title="denoiser forward passes", xlabel="steps")
    ax_time.set(title=f"seconds per image ({MODEL}, {SIZE}², {GPU})", xlabel="steps")
    ax_time.title.set_fontsize(10)
    ax_passes.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig
