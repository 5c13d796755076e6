"""The model picker shared by the calculators that take a model.

A calculator offers the shipped configs (`chapter2.models.list_configs()`) in a
select and, next to it, a text area where the reader can paste any config.json.
Pasted text, when there is any, wins over the select; it is parsed in the page
(the same `ModelConfig.from_text` as in CPython; no network request), and a bad
JSON text or an unsupported architecture comes back as an inline message on the
text area (`FieldError("config_json", ...)`).
"""

from __future__ import annotations

import json
from functools import cache, lru_cache

from ..format import nbytes, number
from ..models import ModelConfig, list_configs, load_config
from ..models.config import FAMILIES
from ._registry import Field, FieldError

MAX_CONFIG_CHARS = 40_000  # gpt-oss-120b's config.json is 2.3 kB; Phi-3.5-MoE's with its LongRoPE lists about 6 kB
MODEL_OPTIONS = tuple((name, name) for name in list_configs())
KIND_NAMES = {"full_attention": "full attention", "sliding_attention": "sliding window",
              "chunked_attention": "chunked attention", "mla": "latent (MLA)", "mamba1": "Mamba-1", "mamba2": "Mamba-2",
              "gated_deltanet": "gated DeltaNet", "short_conv": "short convolution",
              "lightning": "lightning attention", "cross_attention": "cross-attention (encoder positions)"}


def model_fields(default: str = "Llama-3.1-8B", label: str = "Model (config.json)", options=MODEL_OPTIONS) -> list[Field]:
    """The select of shipped configs and the text area for a pasted config.json."""
    return [
        Field("model", label, default, kind="select", options=options),
        Field("config_json", "Or paste a config.json (used when not empty)", "", kind="text", max=MAX_CONFIG_CHARS,
              help=f"any of {len(FAMILIES)} families, {FAMILIES[0].label} to {FAMILIES[-1].label} (2.2's reference note "
                   "lists them; a refused config's message too); read in your browser"),
    ]


@cache
def shipped(name: str) -> ModelConfig:
    """`load_config(name)`, read and parsed once per page: a ModelConfig is frozen, so the calculators share it
    (with the counts it caches), and an input change does not list the config folder and parse the JSON again."""
    return load_config(name)


@lru_cache(maxsize=4)
def _pasted(text: str) -> ModelConfig:
    return ModelConfig.from_text(text, name="pasted config.json", what="the pasted text")


def pick_model(model: str, config_json: str, options=MODEL_OPTIONS) -> ModelConfig:
    """The pasted config.json if there is one, else the shipped config chosen in the select."""
    if config_json.strip():
        try:
            return _pasted(config_json)  # the same text, parsed once (a slider moved beside it)
        except (ValueError, TypeError) as err:
            raise FieldError("config_json", f"config.json: {err}") from None
    if model not in dict(options):
        raise FieldError("model", f"Model: choose one of {', '.join(dict(options))}")
    return shipped(model)


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
