"""Figures of section 2.2.3 drawn from the shipped tiny model's real weights: one query scoring the keys of a
real sentence, and what each head's rows of W_Q, W_K and W_V see (the whole hidden state).

The numbers are `chapter2.token_walk.one_query` on `token_walk.EXAMPLE_PROMPT` (the head the page
names: `EXAMPLE_LAYER`, `EXAMPLE_HEAD`), and the weights `chapter2.stepper.load` reads; the alt texts
are written from the same numbers when this module is imported.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import stepper, token_walk
from ...calculators.token_walk import label, pct
from ...format import sig
from . import figure
from ._style import INK, PALETTE, phone, pt, size, wrap


def _example_input() -> np.ndarray:
    """(D,): what layer 1's attention reads for the example's last token, its normalized embedding."""
    from ...models.transformer import rms_norm

    model, tokenizer = stepper.load()
    t = token_walk.trace(model, tokenizer.encode(token_walk.EXAMPLE_PROMPT))
    return rms_norm(t.residual[0][-1], model.weights["model.layers.0.input_layernorm.weight"], model.config.rms_norm_eps)


@functools.cache
def example() -> tuple[tuple[str, ...], token_walk.OneQuery]:
    """(the example sentence's token labels, what the example head does for its last token)."""
    model, tokenizer = stepper.load()
    ids = tokenizer.encode(token_walk.EXAMPLE_PROMPT)
    oq = token_walk.one_query(model, ids, token_walk.EXAMPLE_LAYER, token_walk.EXAMPLE_HEAD)
    return tuple(label(tokenizer.token_text(i)) for i in ids), oq


def _one_query_alt() -> str:
    tokens, oq = example()
    order = np.argsort(-oq.weights, kind="stable")
    a, b = order[0], order[1]
    return (f"Layer {oq.layer}, head {oq.head} of the tiny model on '{token_walk.EXAMPLE_PROMPT}'. Left: the query "
            f"of '{tokens[-1]}' scores each key (query · key / √{oq.query.shape[0]}), highest for '{tokens[a]}' "
            f"({sig(oq.scores[a], 2)}) and '{tokens[b]}' ({sig(oq.scores[b], 2)}). Right: softmax makes weights "
            f"adding up to 100 %: '{tokens[a]}' {pct(oq.weights[a])}, '{tokens[b]}' {pct(oq.weights[b])}.")


@figure("attention_one_query", alt=_one_query_alt())
def attention_one_query_figure():
    import matplotlib.pyplot as plt

    tokens, oq = example()
    n, x = len(tokens), np.arange(len(tokens))
    stacked = phone()
    fig, (left, right) = plt.subplots(2 if stacked else 1, 1 if stacked else 2, figsize=size((7.6, 3.3), 6.2))
    colours = [PALETTE[0] if s >= 0 else PALETTE[1] for s in oq.scores]
    left.bar(x, oq.scores, color=colours, width=0.7)
    left.axhline(0, color=INK, linewidth=0.8)
    for j, s in enumerate(oq.scores):
        left.annotate(sig(s, 2).replace("-", "−"), (j, s), xytext=(0, 3 if s >= 0 else -3), textcoords="offset points", ha="center",
                      va="bottom" if s >= 0 else "top", fontsize=pt(9), color=INK)
    low, high = oq.scores.min(), oq.scores.max()
    left.set_ylim(low - 0.18 * (high - low), high + 0.18 * (high - low))
    left.set(ylabel="score", title=wrap(f"1. The query of ‘{tokens[-1]}’ scores each key", 34))
    percent = 100 * oq.weights
    right.bar(x, percent, color=PALETTE[0], width=0.7)
    for j, p in enumerate(oq.weights):
        if p >= 0.01:
            right.annotate(pct(p), (j, 100 * p), xytext=(0, 3), textcoords="offset points", ha="center",
                           va="bottom", fontsize=pt(9), color=INK)
    right.set_ylim(0, 100)
    right.set(ylabel="weight (%)", title=wrap("2. Softmax: weights adding up to 100 %", 34))
    for ax in (left, right):
        ax.set_xticks(x, tokens, rotation=45, ha="right", rotation_mode="anchor")
        ax.get_xticklabels()[-1].set_fontweight("bold")  # the token whose query this is
        ax.grid(axis="x", visible=False)
        ax.set_xlim(-0.6, n - 0.4)
    fig.tight_layout()
    return fig


def _heads_alt() -> str:
    model, _ = stepper.load()
    c = model.config
    d, hq, hkv, big_d = c.head_dim, c.num_attention_heads, c.num_key_value_heads, c.hidden_size
    return (f"The tiny model's layer-1 weight matrices, each number a shade. W_Q: {hq * d} rows, {d} per head in {hq} "
            f"coloured bands, each row as wide as the hidden state x above ({big_d} numbers): a head's rows multiply "
            f"all of x into its {d}-number query; side by side the {hq} make q. W_K and W_V: {hkv * d} rows, {d} per "
            f"key/value head, each shared by {hq // hkv} query heads.")


def _matrix_name(ax, x, y, sub: str, rest: str) -> None:
    """'W' with a lowered `sub` (Q, K or V) at full size, then `rest`: mathtext would draw the subscript at 70 %,
    under the 11 px a phone needs."""
    size = pt(10)
    ax.text(x, y, "W", fontsize=size, color=INK, va="bottom")
    ax.annotate(sub, (x, y), xytext=(1.0 * size, -0.3 * size), textcoords="offset points", fontsize=size, color=INK,
                va="bottom")
    ax.annotate(rest, (x, y), xytext=(1.75 * size, 0), textcoords="offset points", fontsize=size, color=INK,
                va="bottom")


def _weights_cmap():
    """Blue for positive, orange for negative, fading to transparent at zero (reads on light and dark pages)."""
    from matplotlib.colors import LinearSegmentedColormap, to_rgb

    neg, pos = to_rgb(PALETTE[1]), to_rgb(PALETTE[0])
    return LinearSegmentedColormap.from_list("signed", [(*neg, 1.0), (*neg, 0.0), (*pos, 0.0), (*pos, 1.0)],
                                             N=256)


@figure("attention_heads", alt=_heads_alt())
def attention_heads_figure():
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    model, _ = stepper.load()
    c, w = model.config, model.weights
    d, hq, hkv, big_d = c.head_dim, c.num_attention_heads, c.num_key_value_heads, c.hidden_size
    group = hq // hkv
    mats = [("Q", w["model.layers.0.self_attn.q_proj.weight"], hq, "q"),
            ("K", w["model.layers.0.self_attn.k_proj.weight"], hkv, "k"),
            ("V", w["model.layers.0.self_attn.v_proj.weight"], hkv, "v")]
    tokens, oq = example()
    x_state = _example_input()  # the normalized hidden state of the example's last token, layer 1's input
    cmap = _weights_cmap()
    band_colour = [PALETTE[2], PALETTE[3], PALETTE[4], PALETTE[5]]

    stacked = phone()
    gap, strip = 12, 10  # data units (one per weight): between a matrix and its output strip; a strip's width
    # where each matrix goes (its top-left corner): W_Q on the left, W_K over W_V on the right; on a phone W_Q
    # on top, W_K and W_V side by side under it, their bands named in one line below
    if stacked:
        below = hq * d + 62
        corners = [(0, 0), (0, below), (big_d + gap + strip + 24, below)]
        right, bottom = 2 * big_d + 2 * (gap + strip) + 26, below + hkv * d + 62
    else:
        corners = [(0, 0), (big_d + 95, 0), (big_d + 95, hkv * d + 46)]
        right, bottom = 2 * big_d + 95 + gap + strip + 86, max(hq * d + 40, 2 * hkv * d + 46 + 18)
    top_edge = -44 if not stacked else -58
    width = 7.6 if not stacked else 4.3
    fig, ax = plt.subplots(figsize=(width, width * (bottom - top_edge) / (right + 2)))
    for (name, m, heads, out), (x0, y0) in zip(mats, corners, strict=True):
        rows = m.shape[0]
        scale = float(np.percentile(np.abs(m), 98))  # shades to the 98th percentile: a few large weights saturate
        ax.imshow(m, cmap=cmap, vmin=-scale, vmax=scale, extent=(x0, x0 + big_d, y0 + rows, y0), interpolation="nearest")
        ax.add_patch(Rectangle((x0, y0), big_d, rows, fill=False, edgecolor=INK, linewidth=0.8))
        for h in range(heads):  # each head's rows: a coloured band, and its slice of the output
            colour = band_colour[h if heads == hq else h * group]  # a K/V head: its first query head's colour
            ax.add_patch(Rectangle((x0, y0 + h * d), big_d, d, fill=False, edgecolor=colour, linewidth=2))
            ax.add_patch(Rectangle((x0 + big_d + gap, y0 + h * d), strip, d, facecolor=colour, alpha=0.85,
                                   edgecolor="none"))
            if heads == hq:
                text = f"head {h + 1}"
            elif stacked:
                continue  # named in the line under both
            else:
                text = f"K/V {h + 1}: heads {h * group + 1}–{(h + 1) * group}"
            ax.text(x0 + big_d + gap + strip + 4, y0 + (h + 0.5) * d, text, va="center", fontsize=pt(9), color=INK)
        _matrix_name(ax, x0, y0 - 4, name, f": {rows} rows × {big_d}")
        ax.text(x0 + big_d + gap + strip / 2, y0 - 4, out, fontsize=pt(10), color=INK, ha="center", va="bottom",
                fontweight="bold")
    # the hidden state x, as wide as every matrix: each row multiplies all of it
    x0, y0 = corners[0]
    top = float(np.percentile(np.abs(x_state), 98))
    ax.imshow(x_state[None, :], cmap=cmap, vmin=-top, vmax=top,
              extent=(x0, x0 + big_d, y0 - 16, y0 - 24), interpolation="nearest")
    ax.add_patch(Rectangle((x0, y0 - 24), big_d, 8, fill=False, edgecolor=INK, linewidth=0.8))
    ax.text(x0, y0 - 29, wrap(f"x: the whole hidden state of ‘{tokens[-1]}’, {big_d} numbers", 30), fontsize=pt(10),
            color=INK, va="bottom", fontweight="bold")
    ax.text(x0, y0 + hq * d + 4, "each row · all of x = one number of q", fontsize=pt(9), color=INK, va="top")
    if stacked:
        ax.text(0, corners[1][1] + hkv * d + 22, wrap(f"K/V head 1 serves heads 1–{group}, K/V head {hkv} heads "
                                                       f"{hq - group + 1}–{hq}", 40), fontsize=pt(9), color=INK, va="top")
    ax.set_xlim(-2, right)
    ax.set_ylim(bottom, top_edge)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.tight_layout(pad=0.2)
    return fig
