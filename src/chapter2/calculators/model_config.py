"""Calculator of section 2.2.1 (architecture): read a config.json and size the model.

Pick a shipped config or paste any config.json of a supported family. The
result is what `chapter2.models.ModelConfig` reads from it: the family, where
the parameters sit (`param_breakdown()`), total and active counts, the
attention layout and the KV cache per layer kind, and which fields the file
left out (they take the family's transformers defaults). Everything runs in
the reader's browser; nothing is fetched.
"""

from __future__ import annotations

from ..format import nbytes, number, si
from ..models.config import STATE_KINDS
from ._models import (KIND_NAMES, billions, count, defaulted, fit_context, kv_breakdown, model_fields, model_summary,
                      pick_model, towers)
from ._registry import Field, Output, calculator


def attention_layout(c) -> str:
    """Heads, head size and which layers see what, e.g. '64 query heads, 8 KV heads of 64; 18 full + 18 sliding (128)'."""
    if c.uses_mla:
        heads = (f"{c.num_attention_heads} query heads of {c.qk_nope_head_dim} + {c.qk_rope_head_dim} (RoPE); "
                 f"multi-head latent attention caches a {c.kv_lora_rank}-wide latent + a {c.qk_rope_head_dim}-wide "
                 f"RoPE key per layer")
    else:
        heads = (f"{c.num_attention_heads} query heads, {c.num_key_value_heads} KV heads of {c.head_dim} "
                 f"({c.gqa_group} query heads per KV head)")
    kinds = []
    for kind in ("full_attention", "sliding_attention", "chunked_attention"):
        n = c.kinds.count(kind)
        if n:
            window = c.sliding_window if kind == "sliding_attention" else c.attention_chunk_size
            kinds.append(f"{n} {KIND_NAMES[kind]}" + (f" ({window:,} tokens)" if kind != "full_attention" else ""))
    for kind in STATE_KINDS:
        n = c.kinds.count(kind)
        if n:
            kinds.append(f"{n} {KIND_NAMES[kind]} (no KV cache: a fixed state)")
    if c.parallel_state:  # Falcon-H1: both mixers in every attention layer
        kinds[0] += (f" (each with a {KIND_NAMES[c.parallel_state]} mixer beside it: a fixed state on top of "
                     f"its KV cache)")
    other = c.kinds.count("none")
    if other:
        kinds.append(f"{other} without a sequence mixer (MLP or MoE only)")
    text = f"{heads}; {c.num_hidden_layers} layers: {' + '.join(kinds)}"
    if c.kv_shared_layers:  # Gemma 3n
        text += (f"; the last {len(c.kv_shared_layers)} attend over the keys and values of the last earlier layer of "
                 f"their kind (no KV cache of their own)")
    if c.is_encoder_decoder:
        text += (f"; each decoder layer also attends to all {c.encoder_positions:,} encoder positions "
                 f"(cross-attention); the encoder: {c.encoder_layers} layers of {c.encoder_attention_heads} heads, "
                 f"every position attending to every other")
    return text


def runs_when(c, context: int) -> str:
    """Which part runs when: an encoder-decoder's encoder once per input window, a wrapper's vision tower once per
    image, the (language) decoder per token."""
    per_token = si(c.flops_per_token(context), "FLOPs")
    if c.wrapper:  # FLOPs of the tower per image are not counted here (they depend on the image's size)
        if c.towers_uncounted:
            return (f"the towers ({count(c.vision_params)} parameters counted: {towers(c)}) run once per image or "
                    f"audio clip, before the language model reads their tokens; then every part of the language model "
                    f"runs for every token, {per_token} per token at this context")
        return (f"the vision tower ({count(c.vision_params)} parameters) runs once per image, before the language "
                f"model reads the image's tokens; then every part of the language model runs for every token, "
                f"{per_token} per token at this context")
    if not c.is_encoder_decoder:
        return f"a decoder-only model: every part runs for every token, {per_token} per token at this context"
    return (f"the audio encoder ({count(c.encoder_params())} parameters) runs once per 30 s of audio "
            f"({c.encoder_positions:,} positions): {si(c.encoder_flops(), 'FLOPs')}; then cross-attention projects "
            f"its output to keys and values once ({si(c.cross_kv_flops(), 'FLOPs')}, kept in the cache); each "
            f"decoded token runs the decoder only: {per_token} at {context:,} tokens")


@calculator(
    "model_config",
    title="Read a config.json",
    fields=[
        *model_fields(default="Llama-3.1-8B"),
        Field("context", "Context for the KV cache (tokens)", 131072, min=1, max=1e8, integer=True),
    ],
    outputs=[
        Output("model_info", "Model read"),
        Output("params", "Parameters"),
        Output("parts", "Where they sit (total, active per token)"),
        Output("attention", "Attention"),
        Output("kv", "KV cache per token (BF16, every attention layer, before windows)"),
        Output("layers", "One sequence's BF16 cache at this context, per layer kind"),
        Output("when", "What runs when (FLOPs)"),
        Output("defaults", "Fields left out of the config (family defaults used)"),
        Output("bars", "Parameters per part (billions)", kind="bars"),
    ],
)
def model_config_calc(model, config_json, context):
    """Default: gpt-oss-120b, at 131,072 tokens of context."""
    c = pick_model(model, config_json)
    context, capped = fit_context(c, context)
    at = f"{capped}: " if capped else ""
    p = c.params()
    parts = c.param_breakdown()
    tied = "; embedding tied to the LM head (counted once)" if c.tie_word_embeddings else ""
    if c.wrapper:
        tied += f"; beside them {towers(c) if c.towers_uncounted else 'the vision tower and projector'}: {c.vision_params:,}"
    return {
        "model_info": model_summary(c),
        "params": (f"{p.total:,} total, {p.active:,} active per token ({billions(p.active_without_lookup)} without the "
                   f"input embedding lookup){tied}"),
        "parts": "; ".join(f"{x.part} {count(x.total)}" + (f" ({count(x.active)} active)" if x.active != x.total else "")
                           for x in parts),
        "attention": attention_layout(c),
        "kv": f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} ({c.kv_cache_elements_per_token():,} values)",
        "layers": at + kv_breakdown(c, context, "bf16") + f"; total {nbytes(c.kv_cache_bytes(context))}",
        "when": runs_when(c, context),
        "defaults": defaulted(c),
        "bars": [[x.part, float(number(x.total / 1e9, 4).replace(",", ""))] for x in parts],
    }
