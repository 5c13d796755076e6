"""Calculator of section 2.2.1 (architecture): read a config.json and size the model.

Pick a shipped config, type a Hugging Face model id, or paste any config.json of a supported family. The
result is what `chapter2.models.ModelConfig` reads from it: the family, where
the parameters sit (`param_breakdown()`), total and active counts, the
attention layout and the KV cache per layer kind, and which fields the file
left out (they take the family's transformers defaults). Everything runs in
the reader's browser; nothing is fetched unless the reader looks a model id up, and then its
safetensors headers also give the bytes its checkpoint stores (`_hub.stored_text`), beside
parameters x format.
"""

from __future__ import annotations

from ..format import SI, Count, Int, counted, nbytes, si
from ..models.config import STATE_KINDS
from ._hub import record, stored_numbers, stored_text
from ._models import (KIND_NAMES, billions, count, defaulted, experts_picked, fit_context, kv_breakdown, kv_numbers,
                      model_fields, model_numbers, model_summary, pick_model, towers)
from ._registry import Field, Output, calculator


def attention_layout(c) -> str:
    """Heads, head size and which layers see what, e.g. '64 query heads, 8 KV heads of 64; 18 full + 18 sliding (128)'."""
    if c.uses_mla:
        heads = (f"{c.num_attention_heads} query heads of {c.qk_nope_head_dim} + {c.qk_rope_head_dim} (RoPE); "
                 f"multi-head latent attention caches a {c.kv_lora_rank}-wide latent + a {c.qk_rope_head_dim}-wide "
                 f"RoPE key per layer")
    else:
        heads = (f"{c.num_attention_heads} query heads, {c.num_key_value_heads} KV heads of {c.head_dim} "
                 f"({counted(c.gqa_group, 'query head')} per KV head)")
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


def _every_token(c, what: str) -> str:
    """What runs for every token: every part of a dense model; of a mixture of experts, all but the experts its
    router leaves out ('a router picks 8 of 128 experts in each of its 94 MoE layers')."""
    if not c.is_moe:
        return f"every part of {what} runs for every token"
    p = c.params()
    return (f"not all of {what} runs for every token: a router picks {experts_picked(c)} of {c.num_experts} experts "
            f"in each of its {len(c.moe_layers)} MoE layers, so {billions(p.active)} of its {billions(p.total)} "
            f"parameters are active per token")


def runs_when(c, context: int) -> str:
    """Which part runs when: an encoder-decoder's encoder once per input window, a wrapper's vision tower once per
    image, the (language) decoder per token (of a mixture of experts, the experts its router picks)."""
    per_token = si(c.flops_per_token(context), "FLOPs")
    if c.wrapper:  # FLOPs of the tower per image are not counted here (they depend on the image's size)
        if c.towers_uncounted:
            return (f"the towers ({count(c.vision_params)} parameters counted: {towers(c)}) run once per image or "
                    f"audio clip, before the language model reads their tokens; then "
                    f"{_every_token(c, 'the language model')}, {per_token} per token at this context")
        return (f"the vision tower ({count(c.vision_params)} parameters) runs once per image, before the language "
                f"model reads the image's tokens; then {_every_token(c, 'the language model')}, "
                f"{per_token} per token at this context")
    if not c.is_encoder_decoder:
        return f"a decoder-only model; {_every_token(c, 'the model')}: {per_token} per token at this context"
    return (f"the audio encoder ({count(c.encoder_params())} parameters) runs once per 30 s of audio "
            f"({c.encoder_positions:,} positions): {si(c.encoder_flops(), 'FLOPs')}; then cross-attention projects "
            f"its output to keys and values once ({si(c.cross_kv_flops(), 'FLOPs')}, kept in the cache); each "
            f"decoded token runs the decoder only: {per_token} at {context:,} tokens")


@calculator(
    "model_config",
    title="Read a config.json",
    fields=[
        *model_fields(default="Llama-3.1-8B"),
        Field("context", "Context for the KV cache (tokens)", 131072, min=1, max=1e8, integer=True, unit="tokens"),
    ],
    outputs=[
        Output("model_info", "Model read"),
        Output("params", "Parameters"),
        Output("stored", "Stored bytes (the checkpoint's safetensors headers) against parameters x format"),
        Output("parts", "Where they sit (total, active per token)"),
        Output("attention", "Attention"),
        Output("kv", "KV cache per token (BF16, every attention layer, before windows)"),
        Output("layers", "One sequence's BF16 cache at this context, per layer kind"),
        Output("when", "What runs when (FLOPs)"),
        Output("defaults", "Fields left out of the config (family defaults used)"),
        Output("bars", "Parameters per part (billions, and each part's share)", kind="bars", shares=True),
    ],
    compare={"model": "Qwen3-8B", "model_id": ""},
)
def model_config_calc(model, model_id, config_json, context):
    """Default: gpt-oss-120b, at 131,072 tokens of context."""
    c = pick_model(model, config_json, model_id=model_id)
    hub_record = record(model_id) if model_id.strip() and not config_json.strip() else None
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
        "stored": stored_text(hub_record, p.total + (c.vision_params if c.wrapper else 0)),
        "parts": "; ".join(f"{x.part} {count(x.total)}" + (f" ({count(x.active)} active)" if x.active != x.total else "")
                           for x in parts),
        "attention": attention_layout(c),
        "kv": f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} ({c.kv_cache_elements_per_token():,} values)",
        "layers": at + kv_breakdown(c, context, "bf16") + f"; total {nbytes(c.kv_cache_bytes(context))}",
        "when": runs_when(c, context),
        "defaults": defaulted(c),
        "bars": [[x.part, x.total / 1e9] for x in parts],
        "numbers": {**model_numbers(c), "context (tokens)": context,
                    **stored_numbers(hub_record, p.total + (c.vision_params if c.wrapper else 0)),
                    "parts": [x.part for x in parts], "part_parameters": [x.total for x in parts],
                    "part_active_parameters": [x.active for x in parts],
                    "part_shares (%)": [100 * x.total / sum(y.total for y in parts) for x in parts],
                    "kv_cache_per_token_bf16 (B)": c.kv_cache_bytes_per_token("bf16"),
                    **kv_numbers(c, context, "bf16"), "kv_cache_bf16 (B)": c.kv_cache_bytes(context),
                    "flops_per_token (FLOP)": float(c.flops_per_token(context)),
                    **({"encoder_flops (FLOP)": float(c.encoder_flops()), "cross_kv_flops (FLOP)": float(c.cross_kv_flops())}
                       if c.is_encoder_decoder else {})},
        "compared": [  # A beside B (the compare toggle): the numbers above, as they are written there
            ("Parameters", Count(p.total)),
            ("Active per token", Count(p.active)),
            ("Layers", Int(c.num_hidden_layers)),
            ("KV cache per token (BF16)", SI(c.kv_cache_bytes_per_token("bf16"), "B")),
            ("One sequence's BF16 cache at this context", SI(c.kv_cache_bytes(context), "B")),
            ("FLOPs per token at this context", SI(c.flops_per_token(context), "FLOPs")),
        ],
    }
