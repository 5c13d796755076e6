"""Calculator of section 2.2 (LLM architecture): a transformer drawn as blocks, with the chosen config's sizes.

Token embedding, then the same block N times (norm, attention with its Q, K and V
heads and the KV cache beside it, norm, a feed-forward network or a mixture of
experts), then the final norm and the LM head. An encoder-decoder (Whisper) has
its encoder's block above, run once per input window, feeding every decoder
block's cross-attention. A hybrid (`hybrid_diagram`) shows the kinds of layer it
stacks, how many of each and in what pattern, and beside each kind where its cache
sits: attention's KV cache, which grows with the context, or a recurrent layer's
fixed state (Mamba-1 and -2, gated DeltaNet, short convolution, lightning
attention). Every size is read from the
config (`chapter2.models.ModelConfig`: a shipped config.json or one the reader
pastes); the drawing is `chapter2.charts.diagram`, rendered at build time for the
default model and again in the browser for another.
"""

from __future__ import annotations

from .. import charts
from ..format import nbytes
from ..models.config import LAYER_KINDS, STATE_KINDS
from ._models import KIND_NAMES, MODEL_OPTIONS, experts_picked, model_fields, model_numbers, pick_model
from ._registry import Output, calculator

BLOCK = charts.ChartSpec("data flow, top to bottom", "the model's parts", kind="diagram")
# besides the calculators' shipped models, the hybrids and the encoder-decoder of chapter2/data/configs/families,
# so that a reader can pick one without pasting its config.json
OTHER_KINDS = (("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "Nemotron 3 Nano (hybrid: Mamba-2, attention, MoE)"),
               ("Nemotron-H-8B-Base-8K", "Nemotron-H-8B (hybrid: Mamba-2, attention, MLP)"),
               ("granite-4.0-h-tiny", "Granite 4.0-H Tiny (hybrid: Mamba-2, attention)"),
               ("AI21-Jamba-1.5-Mini", "Jamba 1.5 Mini (hybrid: Mamba-1, attention)"),
               ("Falcon-H1-0.5B-Instruct", "Falcon-H1-0.5B (parallel hybrid: attention beside Mamba-2)"),
               ("Qwen3-Next-80B-A3B-Instruct", "Qwen3-Next-80B-A3B (hybrid: gated DeltaNet, attention)"),
               ("LFM2-1.2B", "LFM2-1.2B (hybrid: short convolution, attention)"),
               ("MiniMax-M1", "MiniMax-M1 (hybrid: lightning attention, attention)"),
               ("whisper-large-v3", "whisper-large-v3 (encoder-decoder)"))
DIAGRAM_OPTIONS = (*MODEL_OPTIONS, *OTHER_KINDS)


def _attention(c) -> str:
    """What one attention layer computes: its query heads, and where K and V come from."""
    if c.uses_mla:
        text = (f"{c.num_attention_heads} query heads; K and V rebuilt from one {c.kv_lora_rank}-number latent "
                f"per token (multi-head latent attention)")
    elif c.num_key_value_heads == c.num_attention_heads:
        text = f"Q, K, V: {c.num_attention_heads} heads of {c.head_dim} each"
    else:
        share = c.num_attention_heads // c.num_key_value_heads
        text = (f"Q: {c.num_attention_heads} heads of {c.head_dim}; K, V: {c.num_key_value_heads} heads, "
                f"each shared by {share} query heads")
    windowed = len(c.sliding_window_layers)
    if c.sliding_window and windowed:
        text += f"; {windowed} of {c.num_hidden_layers} layers see only the last {c.sliding_window:,} tokens"
    return text


def _moe(c) -> str:
    """One mixture-of-experts layer: the router's pick and the experts' sizes, and a shared expert if any."""
    text = (f"a router picks {experts_picked(c)} of {c.num_experts} experts per token, each "
            f"{c.hidden_size:,} → {c.moe_intermediate_size:,} → {c.hidden_size:,}")
    if c.shared_expert_intermediate_size:
        text += f", plus a shared expert of {c.shared_expert_intermediate_size:,} every token uses"
    return text


def _ffn(c) -> tuple[str, str]:
    """The feed-forward part: its name and its sizes."""
    if not c.is_moe:
        return "Feed-forward (MLP)", f"{c.hidden_size:,} → {c.intermediate_size:,} → {c.hidden_size:,}, every token"
    text = _moe(c)
    dense = c.num_hidden_layers - len(c.moe_layers)
    if c.moe_layers and dense:
        text += f"; {dense} of {c.num_hidden_layers} layers have a dense MLP instead"
    return "Mixture of experts", text


def encoder_decoder_diagram(c) -> dict:
    """An encoder-decoder (Whisper) as boxes: the audio encoder's stem and block, run once per 30 s window, whose
    output every decoder layer's cross-attention reads; then the decoder's block, run once per token.

    Whisper (Radford et al. 2022, arXiv:2212.04356, section 2.2): two convolutions (the second of stride 2) turn
    the window's 2 x 1,500 log-mel frames into 1,500 positions; pre-norm blocks; the decoder's learned positions
    (`max_target_positions`) bound its context. Sizes from the config; caches in BF16.
    """
    d, S, T = c.hidden_size, c.encoder_positions, c.max_position_embeddings
    enc_head = d // c.encoder_attention_heads
    self_kv = nbytes(c.kv_cache_bytes_per_token("bf16") / c.num_hidden_layers)
    cross_kv = nbytes(c.cross_kv_bytes("bf16") / c.num_hidden_layers)
    boxes = [
        ("Audio in", f"one 30 s window: {2 * S:,} frames of {c.num_mel_bins} mel bins", 0),
        ("Conv stem + positions", f"two convolutions, {c.num_mel_bins} → {d:,} channels, the second of "
                                  f"stride 2: {S:,} positions of {d:,} numbers, plus a position vector each", 0),
        ("Norm", f"over the {d:,} numbers of each position", -1),
        ("Encoder self-attention", f"{c.encoder_attention_heads} heads of {enc_head}; every one of the {S:,} "
                                   f"positions sees all the others, no causal mask", 1),
        ("Norm", "", -1),
        ("Feed-forward (MLP)", f"{d:,} → {c.encoder_ffn_dim:,} → {d:,}, every position", 2),
        ("Encoder output", f"final norm: {S:,} × {d:,} numbers, computed once per window; every decoder layer's "
                           f"cross-attention reads them", 0),
        ("Decoder: token embedding", f"{c.vocab_size:,} rows of {d:,} numbers, plus one of {T:,} learned positions", 0),
        ("Norm", f"over the {d:,} numbers of each token", -1),
        ("Self-attention (causal)", _attention(c), 1, f"KV cache: {self_kv} per token and layer, up to {T:,} tokens"),
        ("Norm", "", -1),
        ("Cross-attention", f"{c.num_attention_heads} query heads from the token; K and V projected from the "
                            f"encoder's {S:,} positions", 1,
         f"cross-attention cache: {cross_kv} per layer, fixed, projected once per window"),
        ("Norm", "", -1),
        ("Feed-forward (MLP)", f"{d:,} → {c.intermediate_size:,} → {d:,}, every token", 2),
        ("Final norm", "", -1),
        ("LM head", f"{d:,} → {c.vocab_size:,} scores, one per token of the vocabulary "
                    f"({'tied to the embedding' if c.tie_word_embeddings else 'its own weights'})", 3),
    ]
    return charts.diagram(boxes, repeat=[(2, 6, f"× {c.encoder_layers} encoder layers"),
                                         (8, 14, f"× {c.num_hidden_layers} decoder layers")],
                          summary=(f"{c.name}: an encoder of {c.encoder_layers} blocks runs once per 30 s of audio "
                                   f"({S:,} positions); its output fills a fixed cross-attention cache of "
                                   f"{nbytes(c.cross_kv_bytes('bf16'))}; then a decoder of {c.num_hidden_layers} "
                                   f"blocks runs once per token, its own KV cache growing by "
                                   f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} per token (BF16)."))


# ------------------------------------------------------------------ hybrids: more than one kind of layer

# a part of a layer -> (its name in the pattern, the palette index of its box and of its cells in the strip)
ATTENTION, MOE, MLP = "attention", "moe", "mlp"
PART_NAMES = {ATTENTION: "attention", MOE: "MoE", MLP: "MLP", **{k: KIND_NAMES[k] for k in STATE_KINDS}}
PART_COLOURS = {ATTENTION: 1, MOE: 2, MLP: 5}
STATE_COLOUR = 4  # every recurrent kind (a model has one)


def layer_parts(c, layer: int) -> tuple[str, str]:
    """(mixer, feed-forward) of layer `layer`: mixer "attention", a recurrent kind, "attention+KIND" (a parallel
    hybrid: both on the same input) or ""; feed-forward "moe", "mlp" or "" (NemotronH's mixer layers have none)."""
    attends = c.kinds[layer] in LAYER_KINDS
    state = c.state_kind(layer)
    mixer = "+".join(p for p in ((ATTENTION if attends else ""), state) if p)
    ffn = "" if layer in c.ffn_free_layers else MOE if layer in c.moe_layers else MLP
    return mixer, ffn


def _name(part: str) -> str:
    return " ‖ ".join(PART_NAMES.get(p) or KIND_NAMES[p] for p in part.split("+"))


def _runs(seq) -> list[tuple[str, int]]:
    """[(item, how many in a row)] of a sequence."""
    out = []
    for item in seq:
        if out and out[-1][0] == item:
            out[-1] = (item, out[-1][1] + 1)
        else:
            out.append((item, 1))
    return out


def pattern(seq) -> str:
    """A layer sequence in words: "every layer: Mamba-2" (all alike), "3 × gated DeltaNet then 1 × attention,
    × 12" (a unit repeated), or the counts alone where no shorter unit repeats ("23 × Mamba-2, 6 × attention")."""
    n = len(seq)
    period = next(p for p in range(1, n + 1) if n % p == 0 and list(seq[:p]) * (n // p) == list(seq))
    if period == 1:
        return f"every layer: {_name(seq[0])}"
    if period < n:
        unit = " then ".join(f"{k} × {_name(part)}" for part, k in _runs(seq[:period]))
        return f"{unit}, × {n // period}"
    counts = {}
    for part in seq:
        counts[part] = counts.get(part, 0) + 1
    return ", ".join(f"{k} × {_name(part)}" for part, k in counts.items())


def _state_sizes(c, kind: str) -> str:
    """What one recurrent layer of `kind` holds and computes, in words, from the config (the kind's `describe`)."""
    return c.mixer(kind).describe(c.hidden_size)


def _state_side(c, kind: str, group) -> str:
    """Where a recurrent layer's cache sits: its fixed state per layer (`kv_cache_breakdown`), in BF16 and
    the recurrent part in the dtype transformers keeps it (`state_dtype`)."""
    per_layer = nbytes(group.bytes / group.layers)
    conv, rec = c.state_elements(next(i for i in c.state_layers if c.state_kind(i) == kind))
    if not rec:
        held = "convolution state, BF16"
    elif not conv:
        held = f"recurrent state, {'BF16' if c.state_dtype == 'model' else c.state_dtype.upper()}"
    else:
        held = f"conv BF16, recurrent {'BF16' if c.state_dtype == 'model' else c.state_dtype.upper()}"
    return f"fixed state: {per_layer} per layer ({held}), whatever the context"


def hybrid_diagram(c) -> dict:
    """A hybrid (Nemotron-H, Granite 4.0-H, Jamba, Falcon-H1, Qwen3-Next, Qwen3.5, LFM2, MiniMax) as boxes.

    A heading box gives the stack's pattern in words (`pattern`) and as a strip of one cell per layer; inside
    the repeated block, each kind of mixer is a box with its count and sizes, the alternatives joined by "or"
    (a layer has one of them) or, for a parallel hybrid (Falcon-H1), "in parallel" (both run on the same input,
    their outputs summed). Beside each mixer, its cache: an attention layer's KV grows with the context; a
    recurrent layer's state is the same size whatever the context. NemotronH's layers hold one part each
    (a mixer or an MoE/MLP), so its block has a single norm before one of them.
    """
    n = c.num_hidden_layers
    parts = [layer_parts(c, i) for i in range(n)]
    one_part = any(not m or not f for m, f in parts)  # NemotronH: a mixer or a feed-forward, never both
    if one_part:
        seqs = [m or f for m, f in parts]
        heading = pattern(seqs)
    else:
        seqs = [m for m, _ in parts]
        heading = pattern(seqs)
        ffns = [f for _, f in parts]
        if len(set(ffns)) > 1:
            heading += f"; feed-forward: {pattern(ffns)}"
    colour = {p: PART_COLOURS.get(p, STATE_COLOUR) for p in (*PART_COLOURS, *PART_NAMES, *KIND_NAMES)}
    # one cell per layer, coloured as its kind's box; none where every layer is alike (Falcon-H1's parallel layers)
    strip = [colour[s.split("+")[-1]] for s in seqs] if len(set(seqs)) > 1 else []
    groups = {g.kind: g for g in c.kv_cache_breakdown(1, "bf16")}
    per_layer_kv = nbytes(c.kv_cache_bytes_per_token("bf16") / max(1, len(c.attention_layers)))

    def mixer_boxes(seq, join):
        out = []
        for kind in order(seq):
            layers = sum(1 for s in seq if kind in s.split("+"))
            label = f"{'Attention' if kind == ATTENTION else _name(kind)} ({layers} of {n} layers)"
            if kind == ATTENTION:
                out.append(charts.box(label, _attention(c), colour[kind], join=join(out),
                                      side=f"KV cache: {per_layer_kv} per token and layer (BF16), grows with "
                                           f"the context"))
            elif kind in (MOE, MLP):
                detail = _moe(c) if kind == MOE else f"{c.hidden_size:,} → {c.intermediate_size:,} → {c.hidden_size:,}"
                out.append(charts.box(label, detail, colour[kind], join=join(out)))
            else:
                out.append(charts.box(label, _state_sizes(c, kind), colour[kind], join=join(out),
                                      side=_state_side(c, kind, groups[kind])))
        return out

    def order(seq):  # the distinct parts in the order the stack first uses them
        return list(dict.fromkeys(p for s in seq for p in s.split("+")))

    head = "tied to the embedding" if c.tie_word_embeddings else "its own weights"
    boxes = [charts.box(f"The stack: {n} layers", heading, -1, strip=strip),
             charts.box("Token embedding", f"looks up each token: {c.vocab_size:,} rows of {c.hidden_size:,} numbers",
                        0, join="none"),
             charts.box("Norm", f"over the {c.hidden_size:,} numbers of each token", -1)]
    parallel = bool(c.parallel_state)
    if one_part:
        boxes += mixer_boxes(seqs, lambda out: "or" if out else "")
    else:
        boxes += mixer_boxes(seqs, lambda out: ("and" if parallel else "or") if out else "")
        boxes.append(charts.box("Norm", "then each part adds its output to the token's running sum "
                                        "(the residual stream)", -1))
        boxes += mixer_boxes([f for _, f in parts], lambda out: "or" if out else "")
    end = len(boxes)
    boxes += [charts.box("Final norm", "", -1),
              charts.box("LM head", f"{c.hidden_size:,} → {c.vocab_size:,} scores, one per token of the vocabulary "
                                    f"({head})", 3)]
    fixed = c.state_bytes("bf16")
    letters = "".join({ATTENTION: "*", MOE: "E", MLP: "-"}.get(s.split("+")[-1], "M") for s in seqs)
    summary = (f"{c.name}: a hybrid of {n} layers ({heading}). The KV cache grows by "
               f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} per token over its {len(c.attention_layers)} attention "
               f"layers (BF16); the recurrent layers hold {nbytes(fixed)} per sequence whatever the context. "
               f"Layer by layer (* attention, M recurrent, E MoE, - MLP): {letters}.")
    return charts.diagram(boxes, repeat=(2, end, f"× {n} layers"), summary=summary)


def block_diagram(c) -> dict:
    """The model as boxes: embedding, N x (norm, attention + KV cache, norm, FFN or MoE), final norm, LM head;
    an encoder-decoder's encoder first (`encoder_decoder_diagram`)."""
    if c.is_encoder_decoder:
        return encoder_decoder_diagram(c)
    if c.is_hybrid:
        return hybrid_diagram(c)
    per_layer = c.kv_cache_bytes_per_token("bf16") / c.num_hidden_layers
    ffn, ffn_detail = _ffn(c)
    head = "tied to the embedding" if c.tie_word_embeddings else "its own weights"
    boxes = [
        ("Token embedding", f"looks up each token: {c.vocab_size:,} rows of {c.hidden_size:,} numbers", 0),
        ("Norm", f"over the {c.hidden_size:,} numbers of each token", -1),
        ("Attention", _attention(c), 1,
         f"KV cache: K and V of every earlier token, {nbytes(per_layer)} per token and layer (BF16)"),
        ("Norm", "then each part adds its output to the token's running sum (the residual stream)", -1),
        (ffn, ffn_detail, 2),
        ("Final norm", "", -1),
        ("LM head", f"{c.hidden_size:,} → {c.vocab_size:,} scores, one per token of the vocabulary ({head})", 3),
    ]
    return charts.diagram(boxes, repeat=(1, 5, f"× {c.num_hidden_layers} layers"),
                          summary=(f"{c.name}: {c.num_hidden_layers} identical blocks; the KV cache holds "
                                   f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} per token over all layers in BF16."))


@calculator(
    "model_diagram",
    title="A transformer, block by block, with this model's sizes",
    fields=[*model_fields(options=DIAGRAM_OPTIONS)],
    outputs=[Output("diagram", "The model's blocks, input at the top", kind="chart", chart=BLOCK)],
)
def model_diagram_calc(model, model_id, config_json):
    """Defaults: Llama-3.1-8B."""
    c = pick_model(model, config_json, DIAGRAM_OPTIONS, model_id)
    return {"diagram": block_diagram(c),
            "numbers": {**model_numbers(c), "hidden_size": c.hidden_size, "intermediate_size": c.intermediate_size,
                        "vocab_size": c.vocab_size, **({"expert_width": c.moe_intermediate_size} if c.is_moe else {}),
                        "kv_cache_per_token_per_layer_bf16 (B)": c.kv_cache_bytes_per_token("bf16") / max(1, len(c.cached_layers))}}
