"""The model picker shared by the calculators that take a model.

A calculator offers the shipped configs (`chapter2.models.list_configs()`) in a
select and, next to it, a text area where the reader can paste any config.json.
Pasted text, when there is any, wins over the select, which then reads "pasted: <name>"
(`Field.paste`); it is parsed in the page (the same `ModelConfig.from_text` as in
CPython; no network request), and a bad JSON text comes back as an inline message on
the text area (`FieldError("config_json", ...)`), an architecture of no supported
family as one line naming it, with a link to the list of families.
Between the two, a Hugging Face model id (`_hub`, field `model_id`): a pasted config wins over the id,
the id over the select.
"""

from __future__ import annotations

import json
from functools import cache, lru_cache

from ..format import nbytes, number
from ..models import ModelConfig, list_configs, load_config
from ..models.config import FAMILIES
from ..models.layers import LABELS
from ._hub import hub_config, model_id_field
from ._registry import PASTED, Field, FieldError

MAX_CONFIG_CHARS = 40_000  # gpt-oss-120b's config.json is 2.3 kB; Phi-3.5-MoE's with its LongRoPE lists about 6 kB
MODEL_OPTIONS = tuple((name, name) for name in list_configs())
FAMILIES_LINK = ("the list", "llm-architecture/#supported-families")  # 2.2b's workbench lists them
KIND_NAMES = LABELS  # each layer kind's name on the page, from its class (chapter2.models.layers)


def model_fields(default: str = "Llama-3.1-8B", label: str = "Model (config.json)", options=MODEL_OPTIONS) -> list[Field]:
    """The select of shipped configs, the Hub model id and the text area for a pasted config.json."""
    return [
        Field("model", label, default, kind="select", options=options, paste="config_json"),
        model_id_field(),
        Field("config_json", "Or paste a config.json (used when not empty)", "", kind="text", max=MAX_CONFIG_CHARS,
              help=f"any of {len(FAMILIES)} families, {FAMILIES[0].label} to {FAMILIES[-1].label} (2.2b's workbench "
                   "lists them; a refused config's message links there); read in your browser"),
    ]


@cache
def shipped(name: str) -> ModelConfig:
    """`load_config(name)`, read and parsed once per page: a ModelConfig is frozen, so the calculators share it
    (with the counts it caches), and an input change does not list the config folder and parse the JSON again."""
    return load_config(name)


@lru_cache(maxsize=4)
def _pasted(text: str) -> ModelConfig:
    return ModelConfig.from_text(text, name="pasted config.json", what="the pasted text")


def pick_model(model: str, config_json: str, options=MODEL_OPTIONS, model_id: str = "") -> ModelConfig:
    """The pasted config.json if there is one, else the Hub model id's config (`_hub.hub_config`), else the
    shipped config chosen in the select."""
    if config_json.strip():
        try:
            return _pasted(config_json)  # the same text, parsed once (a slider moved beside it)
        except (ValueError, TypeError) as err:
            raise _refusal(config_json, err) from None
    if model_id.strip():
        return hub_config(model_id)
    if model == PASTED:
        raise FieldError("config_json", "config.json: paste one here, or choose a shipped model")
    if model not in dict(options):
        raise FieldError("model", f"Model: choose one of {', '.join(dict(options))}")
    return shipped(model)


def _refusal(text: str, err: Exception) -> FieldError:
    """The message for a pasted config.json `ModelConfig` refused: its own words, but for a model of no supported
    family one line naming its class (or model_type) and a link to the list, not the list itself."""
    message = str(err)
    if "supported famil" not in message:
        return FieldError("config_json", f"config.json: {message}")
    try:
        raw = json.loads(text)
    except ValueError:
        raw = {}
    arch = (raw.get("architectures") or [None])[0] if isinstance(raw, dict) else None
    kind = raw.get("model_type") if isinstance(raw, dict) else None
    what = (str(arch) if isinstance(arch, str) else f"model_type {kind!r}" if isinstance(kind, str) else
            "a config naming no architecture")
    return FieldError("config_json", f"config.json: {what} is of none of the {len(FAMILIES)} families this calculator "
                                     f"reads", link=FAMILIES_LINK)


def fit_context(c: ModelConfig, tokens: int, what: str = "Context") -> tuple[int, str]:
    """`tokens` capped at the model's `context_limit`, and the sentence that says so ("" when they fit).

    Whisper's decoder has one learned position per token (`max_target_positions`, 448): a longer
    context or prompt cannot exist. A calculator whose default asks for more (32,768 tokens in the
    KV cache calculator) computes at the limit and says so beside its numbers, rather than refusing
    a pasted config. A decoder-only model has no such limit (`context_limit` is None).
    """
    limit = c.context_limit
    if limit is None or tokens <= limit:
        return tokens, ""
    return limit, (f"{what} capped at {limit:,} tokens, not the {tokens:,} asked: {c.family_label or c.name}'s "
                   f"decoder holds at most {limit:,} (max_target_positions, one learned position per token)")


def billions(count: int) -> str:
    return f"{number(count / 1e9, 3)}B"


def count(n: int) -> str:
    """A parameter count for people: '115B', '956M', '210k'."""
    for scale, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{number(n / scale, 3)}{unit}"
    return f"{n:,}"


def experts_picked(c: ModelConfig) -> str:
    """The router's k as words: '8', or '1 to 8 (by layer)' where Hunyuan's moe_topk gives each layer its own."""
    ks = c.experts_per_tok_by_layer
    return f"{min(ks)} to {max(ks)} (by layer)" if ks else str(c.num_experts_per_tok)


def towers(c: ModelConfig) -> str:
    """What a wrapper's `vision_params` holds, in words: its vision tower and projector, or, for Gemma 3n, its audio
    tower and both embedders (its timm vision tower is named as not counted)."""
    if c.towers_uncounted:
        return f"the audio tower and both embedders ({', '.join(c.towers_uncounted)}: not counted)"
    return "the vision tower and its projector"


def model_summary(c: ModelConfig) -> str:
    """'gpt-oss (GptOssForCausalLM): 117B parameters, 5.71B active per token' and what is left out."""
    p = c.params()
    text = f"{c.name}: {c.family_label} ({c.architecture}), {billions(p.total)} parameters"
    if c.is_moe:
        text += (f", {billions(p.active)} active per token ({experts_picked(c)} of {c.num_experts} experts "
                 f"in {len(c.moe_layers)} of {c.num_hidden_layers} layers)")
    if c.wrapper:
        absent = " (vision_config absent: its class defaults)" if "hidden_size" in c.vision_defaulted else ""
        text += (f"; language model only: {towers(c)} add {billions(c.vision_params)}"
                 f"{absent}, {billions(p.total + c.vision_params)} in all")
    if c.per_layer_embedding_params:
        text += (f"; {billions(c.per_layer_embedding_params)} of its parameters are the per-layer embedding table (a "
                 f"lookup per token, like the token embedding), {billions(p.total - c.per_layer_embedding_params)} "
                 f"without it")
    if c.is_encoder_decoder:
        text += (f"; an encoder-decoder: a {count(c.encoder_params())}-parameter encoder, run once per input "
                 f"window, and a decoder of {c.num_hidden_layers} layers")
    if c.parallel_state:
        text += (f"; a parallel hybrid: each of its {c.num_hidden_layers} layers runs attention and "
                 f"{KIND_NAMES[c.parallel_state]} side by side")
    elif c.is_hybrid:
        text += (f"; a hybrid: {len(c.attention_layers)} attention layers among {len(c.state_layers)} recurrent "
                 f"layers of {c.num_hidden_layers}")
    return text


def kv_breakdown(c: ModelConfig, context: int, dtype: str) -> str:
    """The KV cache of one sequence per layer kind, e.g. '18 sliding window (128) x 128 tokens: 4.72 MB; ...'."""
    parts = []
    for g in c.kv_cache_breakdown(context, dtype):
        if g.state:  # a recurrent layer: a fixed state, whatever the context
            parts.append(f"{g.layers} {KIND_NAMES[g.kind]} x {g.state:,} state values (fixed, "
                         f"{state_dtype_text(c, g.kind, dtype)}): {nbytes(g.bytes)}")
            continue
        window = f" ({g.window:,})" if g.window else ""
        parts.append(f"{g.layers} {KIND_NAMES[g.kind]}{window} x {g.tokens:,} tokens x {g.per_token:,} values: "
                     f"{nbytes(g.bytes)}")
    return "; ".join(parts)


def state_dtype_text(c: ModelConfig, kind: str, dtype: str) -> str:
    """In what dtype a recurrent layer kind keeps its state: 'recurrent state in FP32', or for a short convolution
    (no recurrent state) 'convolution state in BF16'."""
    if kind == "short_conv":
        return f"convolution state in {dtype.upper()}"
    return f"recurrent state in {(dtype if c.state_dtype == 'model' else c.state_dtype).upper()}"


def defaulted(c: ModelConfig) -> str:
    """The config keys the file left out, with the family default each took."""
    if not c.defaulted:
        return "none: every field that sizes the model is in the file"
    fam = next(f for f in FAMILIES if f.label == c.family_label)
    return ", ".join(f"{key} = {json.dumps(fam.defaults[key])}" for key in c.defaulted) + f" ({fam.config_class} defaults)"


# ---------------------------------------------------------------- numbers (calculators.NUMBERS)
def _opt(value):
    """A config number that may be absent (None stays None)."""
    return None if value is None else value


def model_numbers(c: ModelConfig) -> dict:
    """The numbers a model's texts show (`model_summary`, the attention layout, the MoE and wrapper notes), at
    full precision: its name and class, its parameters, layers and heads, its layer kinds and windows."""
    p = c.params()
    kinds = {kind: c.kinds.count(kind) for kind in sorted(set(c.kinds))}
    out = {
        "model": c.name, "family": c.family_label or "", "architecture": c.architecture or "",
        "parameters": p.total, "active_parameters": p.active, "active_parameters_without_lookup": p.active_without_lookup,
        "layers": c.num_hidden_layers, "attention_layers": len(c.attention_layers), "cached_layers": len(c.cached_layers),
        "recurrent_layers": len(c.state_layers), "query_heads": c.num_attention_heads,
        "kv_heads": c.num_key_value_heads, "head_dim": c.head_dim, "query_heads_per_kv_head": c.gqa_group,
        "sliding_window (tokens)": _opt(c.sliding_window), "attention_chunk (tokens)": _opt(c.attention_chunk_size),
        "max_position_embeddings (tokens)": _opt(c.max_position_embeddings),
        "context_limit (tokens)": _opt(c.context_limit),
        "layer_kinds": list(kinds), "layers_per_kind": list(kinds.values()),
        "kv_values_per_token": c.kv_cache_elements_per_token(),
        "kv_shared_layers": len(c.kv_shared_layers),
    }
    if c.uses_mla:
        out.update({"kv_lora_rank": c.kv_lora_rank, "qk_rope_head_dim": c.qk_rope_head_dim,
                    "qk_nope_head_dim": c.qk_nope_head_dim, "kv_values_per_token_per_layer": c.kv_cache_elements_per_token(0)})
    if c.is_moe:
        ks = c.experts_per_tok_by_layer
        out.update({"experts": c.num_experts, "experts_per_token": c.num_experts_per_tok,
                    "experts_per_token_by_layer": list(ks) if ks else None, "moe_layers": len(c.moe_layers),
                    "shared_expert_width": c.shared_expert_intermediate_size or 0})
    if c.wrapper:
        out.update({"tower_parameters": c.vision_params, "parameters_with_towers": p.total + c.vision_params})
    if c.per_layer_embedding_params:
        out.update({"per_layer_embedding_parameters": c.per_layer_embedding_params,
                    "parameters_without_per_layer_embedding": p.total - c.per_layer_embedding_params})
    if c.is_encoder_decoder:
        out.update({"encoder_parameters": c.encoder_params(), "encoder_layers": c.encoder_layers,
                    "encoder_heads": c.encoder_attention_heads, "encoder_positions": c.encoder_positions})
    out.update({f"default_{key}": value if isinstance(value, int | float | str) and not isinstance(value, bool)
                else json.dumps(value) for key, value in _defaults_taken(c).items()})
    return out


def _defaults_taken(c: ModelConfig) -> dict:
    """{key: the family default it took} of the keys the config left out (`defaulted`)."""
    if not c.defaulted:
        return {}
    fam = next(f for f in FAMILIES if f.label == c.family_label)
    return {key: fam.defaults[key] for key in c.defaulted}


def kv_numbers(c: ModelConfig, context: int, dtype: str) -> dict:
    """The numbers of `kv_breakdown`: one list entry per layer kind (its layers, window, tokens held, values per
    token, fixed state values, bytes), in the order the text gives them."""
    groups = c.kv_cache_breakdown(context, dtype)
    return {"kv_group_kind": [g.kind for g in groups], "kv_group_layers": [g.layers for g in groups],
            "kv_group_window (tokens)": [g.window for g in groups], "kv_group_tokens (tokens)": [g.tokens for g in groups],
            "kv_group_values_per_token": [g.per_token for g in groups],
            "kv_group_state_values": [g.state for g in groups], "kv_group_bytes (B)": [float(g.bytes) for g in groups]}
