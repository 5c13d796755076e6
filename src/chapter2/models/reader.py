"""Reading a config.json into `ModelConfig`'s fields (section 2.2.1): the class first, then every size, checked.

The generic reader knows no family: the architecture class names the `Family` (`families/`), whose entry says
everything that differs (its defaults and traits, the functions that lay out its layers and place its experts,
the reader of its recurrent kind, its wrapper and towers). A class outside the families is refused by name,
before any field is read; every key that changes a number goes through one checked reader
(`chapter2.config_reader.ConfigReader`), an absent key taking the family's transformers default.

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

from dataclasses import replace

from .._checks import finite_real
from ..config_reader import ConfigReader
from .architecture import describe_architecture
from .families import (Family, Wrapper, by_model_type, family_of, model_types, supported_text, text_family,
                       wrapper_of)
from .layers import attends
from .layers.attention import ATTENTION_KINDS

__all__ = ["parse"]

LAYER_KINDS = tuple(k.name for k in ATTENTION_KINDS)


class _Reader(ConfigReader):
    """Reads one config dict for one family (its defaults, aliases and renamed keys): each key checked, absent keys
    defaulted (and recorded)."""

    def __init__(self, c: dict, fam: Family, where: str):
        super().__init__(c, fam.defaults, where, owner=fam.label, config_class=fam.config_class, aliases=fam.aliases,
                         renamed=fam.renamed)
        self.fam = fam

    def layer_types(self, layers: int) -> list | None:
        """The config's `layer_types` list (attention kinds, one per layer), or None when it gives none."""
        value = self.raw("layer_types")
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            raise TypeError(f"{self.name('layer_types')} must be a list of strings such as 'full_attention', got {value!r}")
        if len(value) != layers:
            raise ValueError(f"{self.name('layer_types')} must have one entry per layer "
                             f"(num_hidden_layers = {layers}), got {len(value)}")
        bad = sorted({t for t in value if t not in LAYER_KINDS})
        if bad:
            raise ValueError(f"{self.name('layer_types')} entries must be one of {LAYER_KINDS}, got {bad[0]!r}")
        return value


def _resolve_class(c: dict) -> tuple[str, Family, Wrapper | None]:
    """The architecture class name, its family and its wrapper (None: the language model's own class); refuses
    unsupported classes first, by name."""
    archs = c.get("architectures")
    if archs is None or archs == []:
        model_type = c.get("model_type")
        found = by_model_type(model_type) if isinstance(model_type, str) else None
        if found is None:
            raise ValueError("config must have an 'architectures' list naming the model class, e.g. "
                             "['LlamaForCausalLM'], or the model_type of a supported family "
                             f"({', '.join(model_types())}); got model_type {model_type!r}")
        cls, fam = found
        return cls, _text_family(c, cls, fam), wrapper_of(cls)
    if not (isinstance(archs, list) and isinstance(archs[0], str)):
        raise TypeError(f"config['architectures'] must be a list of class names, got {archs!r}")
    arch = archs[0]
    fam = family_of(arch)
    if fam is None:
        try:
            described = describe_architecture(arch)
            what = f"family {described.family}, {described.task}"
        except ValueError:
            what = "not a transformers class name"
        causal = "" if arch.endswith("ForCausalLM") else (" (only decoder-only causal LMs, their multimodal wrappers "
                                                           "and Whisper's encoder-decoder are read)")
        raise ValueError(f"config: architecture {arch!r} ({what}) is not supported{causal}; "
                         f"supported families: {supported_text()}")
    return arch, _text_family(c, arch, fam), wrapper_of(arch)


def _text_family(c: dict, arch: str, fam: Family) -> Family:
    """The family of a wrapper's language model where the wrapper takes several (named by text_config's model_type)."""
    wrapper = wrapper_of(arch)
    if wrapper is None or not wrapper.text_types:
        return fam
    text, types = c.get("text_config"), wrapper.text_types
    model_type = text.get("model_type", types[0]) if isinstance(text, dict) else types[0]
    if model_type not in types:
        raise ValueError(f"config['text_config']['model_type'] must name a language model {arch} is read with "
                         f"({', '.join(types)}), got {model_type!r}")
    return text_family(model_type)


def parse(c: dict, name: str | None) -> dict:
    """The fields of `ModelConfig` from a config.json dict."""
    if not isinstance(c, dict):
        raise TypeError(f"c must be a dict parsed from config.json, got {type(c).__name__}")
    arch, fam, wrapper = _resolve_class(c)
    described = describe_architecture(arch)
    if fam.read is not None:  # a model of its own shape (Whisper's encoder-decoder)
        return fam.read(_Reader(c, fam, "config"), c, fam, arch, described, name)
    text, where = c, "config"
    if wrapper is not None:
        if wrapper.text_defaults and c.get("text_config") is None:  # the wrapper's own defaults for its LM
            fam = replace(fam, defaults={**fam.defaults, **wrapper.text_defaults})
        text = c.get("text_config", c if wrapper.flat_text else {})
        if not isinstance(text, dict):
            raise TypeError(f"config['text_config'] must be a JSON object, got {type(text).__name__}")
        where = "config['text_config']" if text is not c else "config"
    r = _Reader(text, fam, where)
    hidden, heads = r.int("hidden_size"), r.int("num_attention_heads")
    layers = fam.count_layers(r) if fam.count_layers else r.int("num_hidden_layers")
    vocab = r.int("vocab_size")
    kv_heads = r.int("num_key_value_heads", derived=heads)
    if heads % kv_heads:
        raise ValueError(f"{where}: num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads})")
    head_dim = r.int("head_dim", derived=hidden // heads)  # transformers floors hidden / heads
    if fam.check:
        fam.check(r, dict(hidden_size=hidden, num_attention_heads=heads, head_dim=head_dim))
    max_pos = r.int("max_position_embeddings", optional=True)
    eps = r.real(fam.eps_key, optional=True)
    rope_theta, rope_scaling = _rope(text, where)
    tie = wrapper.tied(c, r) if wrapper is not None else r.bool("tie_word_embeddings")
    widths = fam.mlp_widths(r, layers) if fam.mlp_widths else ()
    fields = dict(
        name=name or c.get("_name") or arch, architecture=arch,
        model_type=text.get("model_type") or c.get("model_type") or fam.model_type,
        family=described.family, task=described.task, vocab_size=vocab, hidden_size=hidden,
        intermediate_size=max(widths) if widths else r.int("intermediate_size", optional=not fam.mlp) or 0,
        num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=kv_heads, head_dim=head_dim, max_position_embeddings=max_pos,
        rms_norm_eps=eps if eps is not None else 1e-6, rope_theta=rope_theta, rope_scaling=rope_scaling,
        tie_word_embeddings=tie, source=c.get("_source", ""), family_label=fam.label,
        wrapper=arch if wrapper is not None else "", raw=dict(c),
    )
    fields.update(_attention_layout(r, fam))
    fields.update(_layer_kinds(r, fam, layers))
    fields.update(_experts(r, fam, layers, fields["intermediate_size"]))
    if fam.mixer:
        mixer = fam.mixer(r, fields)
        fields.update(mixers=(mixer,), parallel_state=mixer.name if fam.parallel else "")
    fields.update(mlp_gated=fam.mlp_gated, attn_output_gate=fam.attn_output_gate, mlp_act_params=fam.mlp_act_params)
    if fam.latent:
        latent = fam.latent(r)
        fields.update(latent=latent, head_dim=latent.nope + latent.rope)  # the query/key width per head
    if fam.extras:
        fields.update(fam.extras(r, layers, fields["layer_types"]), mlp_widths=widths)
    fields["defaulted"] = tuple(r.defaulted)
    if wrapper is not None and wrapper.towers:
        fields.update(_towers(c, wrapper, hidden))
    return fields


def _towers(c: dict, wrapper: Wrapper, text_hidden: int) -> dict:
    """A wrapper's towers: their parameters (each encoder and its projector) from their configs, as transformers
    builds them; a key a tower's config leaves out takes its config class's default (listed in `vision_defaulted`)."""
    params, defaulted, uncounted = 0, [], []
    for t in wrapper.towers:
        sub = c.get(t.key)
        if sub is None:
            sub = {}
        if not isinstance(sub, dict):
            raise TypeError(f"config[{t.key!r}] must be a JSON object, got {type(sub).__name__}")
        defaults = {**t.defaults, **t.absent_defaults} if t.absent_defaults and c.get(t.key) is None else t.defaults
        r = ConfigReader(sub, defaults, f"config[{t.key!r}]", owner=t.label, config_class=t.config_class)
        params += t.count(r, text_hidden, c)
        defaulted += r.defaulted
        uncounted += t.uncounted(r) if t.uncounted else ()
    return dict(vision_params=params, vision_defaulted=tuple(defaulted), towers_uncounted=tuple(uncounted))


def _switch(r: _Reader, trait: bool | str) -> bool:
    """A trait's value: fixed by the class (a bool) or read from the config key it names."""
    return trait if isinstance(trait, bool) else r.bool(trait)


def _attention_layout(r: _Reader, fam: Family) -> dict:
    """Biases, q/k norms, norm layout and sinks: the family's traits, switched by its config keys."""
    return dict(qkv_bias=_switch(r, fam.qkv_bias), o_bias=_switch(r, fam.o_bias), mlp_bias=_switch(r, fam.mlp_bias),
                lm_head_bias=_switch(r, fam.lm_head_bias), norm_bias=fam.norm_bias, qk_norm=_switch(r, fam.qk_norm),
                qk_norm_all_heads=fam.qk_norm_all_heads, norms_per_layer=fam.norms_per_layer,
                attention_sinks=fam.attention_sinks)


def _layer_kinds(r: _Reader, fam: Family, layers: int) -> dict:
    """Per-layer kind and window, by the family's layout rule; a sliding or chunked layer without a window in
    effect attends to everything."""
    kinds, window, chunk = fam.layout(r, layers)
    kinds = [k if (k == "sliding_attention" and window) or (k == "chunked_attention" and chunk)
             or not attends(k) else "full_attention" for k in kinds]
    sliding = tuple(i for i, k in enumerate(kinds) if k == "sliding_attention")
    chunked = any(k == "chunked_attention" for k in kinds)
    return dict(layer_types=tuple(kinds), sliding_window=window if sliding else None, sliding_window_layers=sliding,
                attention_chunk_size=chunk if chunked else None)


def _experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Mixture-of-experts layout by the family's rule, with its router traits; {} for a dense model."""
    if not fam.experts:
        return {}
    out = fam.experts(r, fam, layers, intermediate)
    norm = fam.norm_topk_prob
    out.update(norm_topk_prob=norm if isinstance(norm, bool) else bool(r.c.get(norm, False)),
               router_bias=fam.router_bias, expert_bias=fam.expert_bias, shared_expert_gate=fam.shared_expert_gate)
    if out.get("moe_layers") and out["num_experts_per_tok"] > out["num_experts"]:
        raise ValueError(f"{r.name(fam.k_key)} ({out['num_experts_per_tok']}) must be at most the number of "
                         f"routed experts ({out['num_experts']})")
    if not out.get("moe_layers"):  # a dense model after all: no expert fields
        return {k: out[k] for k in ("intermediate_size", "ffn_free_layers") if k in out}
    return out


def _rope(c: dict, where: str) -> tuple[float, dict | None]:
    """(rope_theta, rope_scaling) from transformers 4.x keys or 5.x `rope_parameters` (not used for any count)."""
    params = c.get("rope_parameters")
    if isinstance(params, dict) and isinstance(params.get("full_attention"), dict):  # Gemma 3: one per layer kind
        params = params["full_attention"]
    if isinstance(params, dict):  # transformers >= 5: {"rope_type": ..., "rope_theta": ..., ...}
        theta = params.get("rope_theta", c.get("rope_theta", 10000.0))
        scaling = {k: v for k, v in params.items() if k != "rope_theta"}
    else:
        theta = c.get("rope_theta", 10000.0)
        scaling = c.get("rope_scaling") or {}
        if not isinstance(scaling, dict):
            raise TypeError(f"{where}['rope_scaling'] must be a JSON object or null, got {scaling!r}")
        scaling = dict(scaling)
    theta = finite_real(f"{where}['rope_theta']", theta, low=0, low_open=True)
    kind = scaling.pop("rope_type", None) or scaling.pop("type", None) or "default"
    scaling.pop("type", None)
    if kind == "default":
        return theta, None
    return theta, {"rope_type": kind, **scaling}

