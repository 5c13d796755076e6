"""The chapter's hero picture, on the home page: one request flowing through prefill and decode.

The tokens are real: the prompt is cut by the tiny tokenizer shipped with the package, and the words that
follow are what the tiny model (trained on this site's text) writes greedily, run at build time by
`chapter2.stepper`. The costs written under each phase are the chapter's running example, Llama 3.1 8B on one
H100, quoted as the facts that sections 2.2a and 2.4 show (`chapter2.pages`), so the picture and the pages
print the same numbers.
"""

from __future__ import annotations

import functools

from . import figure
from ._style import INK, PALETTE, phone, pt, wrap

PROMPT = "Each decode step reads"
DECODE_STEPS = 3  # decode passes drawn after the prefill (the prefill writes the first new token)
SLOTS = 8  # cells of each KV cache strip: the prompt's tokens plus one per decode step, at most


@functools.cache
def request_tokens() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(prompt tokens, new tokens) as text: the tiny tokenizer's pieces of PROMPT, then the tiny model's greedy
    next tokens, one from the prefill and one from each of DECODE_STEPS decode passes."""
    from ... import stepper

    model, tokenizer = stepper.load()
    steps = stepper.step_through(model, tokenizer, PROMPT, DECODE_STEPS, temperature=0.0)  # greedy
    prompt = tuple(tokenizer.decode([i]) for i in tokenizer.encode(PROMPT))
    new = tuple(tokenizer.decode([i]) for i in stepper.generated_ids(steps))
    return prompt, new


def costs() -> dict[str, str]:
    """The running example's numbers the picture writes, as the pages print them."""
    from ... import pages

    return {"weights": pages.text("llm_inference.llama_8b_weights_read_bf16"),
            "step": pages.text("bottlenecks.llama_8b_weight_read_ms")}


def _shown(token: str) -> str:
    """A token as drawn: its leading space as a visible dot, so "E" + "ach" and " decode" read as they are."""
    return token.replace(" ", "·").replace("\n", "↵")


def _alt() -> str:
    prompt, new = request_tokens()
    c = costs()
    later = '", "'.join(t.strip() for t in new[1:])
    return (f"One request. Prefill runs the {len(prompt)} tokens of \"{PROMPT}\" through the model in one pass, "
            f"filling the KV cache, and yields \"{new[0].strip()}\"; each decode pass takes only the newest token "
            f"and adds one more (\"{later}\"), the cache growing by one. Prefill is compute bound (time to first "
            f"token); each decode pass reads all {c['weights']} of Llama 3.1 8B's weights, at least {c['step']} on "
            f"an H100: memory bound (time per output token). Tokens from the tiny model shipped with this site; a "
            f"dot marks a leading space.")


@figure("request_flow", alt=_alt())
def request_flow_figure():
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

    prompt, new = request_tokens()
    c = costs()
    on_phone = phone()
    # the drawing in inches (1 unit = 1 inch): prefill on the left (a phone: on top), decode beside it (below)
    prefill_w, decode_w, gap = (4.3, 4.3, 0.0) if on_phone else (2.9, 4.5, 0.35)
    panel_h = 3.15 if on_phone else 2.9
    width = 4.3 if on_phone else prefill_w + gap + decode_w
    height = 2 * panel_h + 0.15 if on_phone else panel_h
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    ax.set_xlim(0, width)
    ax.set_ylim(0, height)
    text_pt, small_pt, title_pt = pt(10), pt(9), pt(11)
    blue, orange, green = PALETTE[0], PALETTE[1], PALETTE[2]
    char_w = (text_pt / 72) * 0.6  # inches per character of the box text, roughly

    def token_box(x, y, token, color, *, centre=True):
        text = _shown(token)
        w = max(0.3, len(text) * char_w + 0.1)
        left = x - w / 2 if centre else x
        ax.add_patch(FancyBboxPatch((left, y - 0.13), w, 0.26, boxstyle="round,pad=0.02,rounding_size=0.05",
                                    facecolor=color, alpha=0.28, edgecolor=color, linewidth=1))
        ax.text(left + w / 2, y, text, ha="center", va="center", fontsize=text_pt)
        return left, w

    def model_box(x, y, w, text):
        ax.add_patch(FancyBboxPatch((x - w / 2, y - 0.2), w, 0.4, boxstyle="round,pad=0.02,rounding_size=0.08",
                                    facecolor=INK, alpha=0.16, edgecolor=INK, linewidth=1))
        ax.text(x, y, text, ha="center", va="center", fontsize=text_pt)

    def arrow(a, b, **kw):
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, color=INK, linewidth=0.9,
                                     shrinkA=0, shrinkB=0, **kw))

    def cache(x, y, filled, new_cells):
        """A KV cache strip of SLOTS cells centred on x: `filled` cells kept, the last `new_cells` just written."""
        cell = 0.15
        left = x - SLOTS * cell / 2
        for k in range(SLOTS):
            kept = k < filled
            fresh = kept and k >= filled - new_cells
            ax.add_patch(Rectangle((left + k * cell, y - cell / 2), cell * 0.86, cell,
                                   facecolor=(orange if fresh else blue) if kept else "none",
                                   alpha=0.75 if kept else 1, edgecolor=INK, linewidth=0.6))
        ax.text(x, y - 0.17, f"KV cache: {filled}", ha="center", va="top", fontsize=small_pt)

    # ---- prefill
    top = height
    x0 = 0.0
    ax.text(x0 + 0.05, top - 0.08, "1  Prefill: the prompt in one pass", ha="left", va="top",
            fontsize=title_pt, fontweight="bold")
    widths = [max(0.3, len(_shown(t)) * char_w + 0.1) for t in prompt]
    row = sum(widths) + 0.05 * (len(prompt) - 1)
    left, centres = x0 + (prefill_w - row) / 2, []
    for t, w in zip(prompt, widths, strict=True):
        token_box(left, top - 0.62, t, blue, centre=False)
        centres.append(left + w / 2)
        left += w + 0.05
    mid = x0 + prefill_w / 2
    model_y = top - 1.28
    for cx in centres:
        arrow((cx, top - 0.76), (mid + (cx - mid) * 0.5, model_y + 0.21))
    model_box(mid, model_y, prefill_w - 0.5, f"the model: all {len(prompt)} tokens at once")
    arrow((mid, model_y - 0.21), (mid, top - 1.84))
    token_box(mid, top - 1.97, new[0], orange)
    cache(mid, top - 2.4, len(prompt), len(prompt))
    ax.text(mid, top - 2.75, wrap("compute bound: sets the time to first token", 44), ha="center", va="top",
            fontsize=small_pt)

    # ---- decode
    dx0, dtop = (0.0, height - panel_h - 0.15) if on_phone else (prefill_w + gap, height)
    ax.text(dx0 + 0.05, dtop - 0.08, "2  Decode: one token per pass", ha="left", va="top",
            fontsize=title_pt, fontweight="bold")
    col = decode_w / DECODE_STEPS
    for s in range(DECODE_STEPS):
        cx = dx0 + col * (s + 0.5)
        token_box(cx, dtop - 0.62, new[s], orange if s == 0 else green)
        arrow((cx, dtop - 0.76), (cx, model_y - top + dtop + 0.21))
        model_box(cx, model_y - top + dtop, col - 0.3, "model" if on_phone else "model: 1 token")
        arrow((cx, model_y - top + dtop - 0.21), (cx, dtop - 1.84))
        out_left, out_w = token_box(cx, dtop - 1.97, new[s + 1], green)
        cache(cx, dtop - 2.4, len(prompt) + s + 1, 1)
        if s + 1 < DECODE_STEPS:  # the new token is the next pass's input
            gx = cx + col / 2
            ax.plot([out_left + out_w + 0.03, gx, gx], [dtop - 1.97, dtop - 1.97, dtop - 0.62], color=INK, linewidth=0.8,
                    linestyle=(0, (2, 2)))
            arrow((gx, dtop - 0.62), (gx + 0.12, dtop - 0.62))
    note = (f"memory bound: every pass reads all {c['weights']} of weights (Llama 3.1 8B), at least {c['step']} "
            f"on an H100: sets the time per output token")
    ax.text(dx0 + decode_w / 2, dtop - (2.85 if on_phone else 2.75), wrap(note, 46) if on_phone else note if len(note) < 90 else
            note.replace(", at least", ",\nat least"), ha="center", va="top", fontsize=small_pt)
    if not on_phone:  # prefill's first token is decode's first input
        arrow((x0 + prefill_w - 0.05, top - 1.97), (dx0 + 0.05, dtop - 0.62), connectionstyle="arc3,rad=-0.25",
              linestyle=(0, (2, 2)))
    return fig
