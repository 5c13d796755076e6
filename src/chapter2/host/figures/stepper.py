"""Figure for section 2.2: one prefill pass, then one token per decode pass, while the KV cache grows.

Drawn from `chapter2.stepper.step_through` on the shipped tiny model (greedy,
so deterministic): the same records the "prefill_decode" calculator shows.
"""

from ... import stepper
from . import figure
from ._style import PALETTE

PROMPT = "The KV cache stores the keys and values"
N_STEPS = 24


def _steps():
    model, tokenizer = stepper.load()
    return stepper.step_through(model, tokenizer, PROMPT, N_STEPS)


def _alt() -> str:
    steps = _steps()
    first, last = steps[0], steps[-1]
    per_token = (last.cache_bytes - first.cache_bytes) // (last.cache_length - first.cache_length)
    return (f"Two panels over the {len(steps)} forward passes of the shipped tiny model on the prompt "
            f"{PROMPT!r}. Top: tokens that go through the model in each pass: {len(first.input_ids)} in the "
            f"prefill pass, then 1 in each of the {len(steps) - 1} decode passes. Bottom: the KV cache after each "
            f"pass, a straight line from {first.cache_bytes / 1e3:.1f} kB ({first.cache_length} tokens) to "
            f"{last.cache_bytes / 1e3:.1f} kB ({last.cache_length} tokens), {per_token:,} bytes more per token.")


@figure("prefill_decode_steps", alt=_alt(), phone=False)  # on no page today: desktop only
def prefill_decode_steps_figure():
    import matplotlib.pyplot as plt

    steps = _steps()
    index = [s.index for s in steps]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.8, 4.4), sharex=True, height_ratios=(1, 1))
    colors = [PALETTE[1] if s.phase == "prefill" else PALETTE[0] for s in steps]
    top.bar(index, [len(s.input_ids) for s in steps], color=colors, width=0.7)
    top.set(ylabel="tokens in")
    top.annotate(f"prefill: {len(steps[0].input_ids)} tokens, one pass", (0, len(steps[0].input_ids)),
                 xytext=(1.2, 0.8 * len(steps[0].input_ids)), fontsize=9)
    top.annotate("decode: 1 token per pass", (len(steps) // 2, 1), xytext=(len(steps) // 2, 3.5), fontsize=9)
    bottom.plot(index, [s.cache_bytes / 1e3 for s in steps], marker="o", markersize=3, color=PALETTE[2])
    bottom.set(xlabel="forward pass (0 = prefill)", ylabel="KV cache (kB)", ylim=(0, None))
    fig.tight_layout()
    return fig
