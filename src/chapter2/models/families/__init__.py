"""The supported model families (section 2.2), one entry each, grouped in files by the shape of the model.

A `Family` is everything the reader knows about one transformers model class family, in one place: its class
names and model_type, its config class's defaults and aliases, the traits that change a count, the function
that lays out its layers (`layout`), the function that places its experts (`experts`), the kind of recurrent
layer it stacks and how that kind's sizes are read (`mixer`), and its multimodal wrapper (`wrapper`: the
class that holds its language model beside a vision tower, and the towers). A rule shared by several families
lives in `models/rules.py`; one family's own rule sits next to its entry.

    dense.py            decoder-only transformers with dense MLPs (Llama, Qwen3, Gemma 2, ...)
    moe.py              mixtures of experts (Mixtral, DeepSeek-V3, gpt-oss, ...)
    hybrid.py           recurrent layers among attention layers (Nemotron-H, Jamba, Qwen3-Next, ...)
    multimodal.py       language models released inside a multimodal wrapper (Llama 4, Gemma 3, Qwen3-VL, ...)
    encoder_decoder.py  an encoder run once per input, a decoder per token (Whisper)

A family goes in the file of its most distinctive shape (hybrid, then encoder-decoder, then multimodal, then MoE).
`FAMILIES` lists them in the order the chapter has always named them (`_LISTED`); a family added later comes
after those, in the order of the files above. Adding one that fits the existing rules is one entry in its file
and one shipped config (CONTRIBUTING.md, "Add a model family").

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable

from ..rules import full

__all__ = ["Family", "Wrapper", "Tower", "FAMILIES", "WRAPPERS", "family_of", "wrapper_of", "by_model_type",
           "model_types", "text_family", "tied_by_outer", "tied_by_text", "supported_text"]


@dataclass(frozen=True)
class Tower:
    """A tower of a multimodal wrapper (a vision encoder and its projector, an audio encoder), counted beside the
    language model (`ModelConfig.vision_params`).

    label, config_class, defaults: its name and its config class, whose defaults fill the keys its config leaves
    out (`ModelConfig.vision_defaulted` lists them). key: the wrapper's key that holds its config.
    count(reader, text_hidden, outer): its parameters, from a reader of its config, the language model's width
    and the wrapper's whole config. absent_defaults: the sizes the wrapper's config class gives it when config.json
    has no such config at all. uncounted(reader): towers it leaves out, named (`ModelConfig.towers_uncounted`).
    """

    label: str
    config_class: str
    defaults: dict = field(hash=False)
    count: Callable | None = None
    key: str = "vision_config"
    absent_defaults: dict = field(default_factory=dict, hash=False)
    uncounted: Callable | None = None


@dataclass(frozen=True)
class Wrapper:
    """A multimodal class (…ForConditionalGeneration) whose language model is read from its `text_config`.

    cls, model_type: its class name and its config's model_type. tied(outer config, text reader): whether the LM
    head is tied to the embedding (which config's tie_word_embeddings decides differs by class). towers: what it
    holds beside the language model. text_types: the model_types its text_config may name, the first when it names
    none (Mistral 3: a Mistral or a Ministral 3). text_defaults: its class's sizes for the language model when
    config.json has no text_config. flat_text: a config without text_config keeps the language model's keys at
    its top level (transformers 4.x's Qwen2.5-VL files).
    """

    cls: str
    model_type: str
    tied: Callable
    towers: tuple[Tower, ...] = ()
    text_types: tuple[str, ...] = ()
    text_defaults: dict = field(default_factory=dict, hash=False)
    flat_text: bool = False


@dataclass(frozen=True)
class Family:
    """One supported model class family: its names, defaults, and every trait and rule that changes a number.

    label:        the family's name on the page ("Qwen3-MoE").
    model_type:   the transformers `model_type` of its (text) config; `model_types`: others its configs carry.
    classes:      the architecture class names read as this family (its wrapper's class is added from `wrapper`).
    config_class: the transformers config class whose defaults fill omitted fields.
    defaults:     config key -> that class's default, for every key that changes a
                  number here (None: unset, or derived from other fields as transformers does).
    aliases:      other names transformers accepts for a key (its `attribute_map`).
    examples:     published models that use the class.

    Traits, as the family's transformers classes build the model. A bool is fixed
    by the class whatever the config says; a string names the config key that switches it.

    qkv_bias, o_bias, mlp_bias, lm_head_bias: biases on q/k/v, on o_proj, in the dense MLPs
                  (and shared experts), on the LM head.
    norm_bias:    LayerNorms with a bias (Phi-3.5-MoE).
    qk_norm:      RMSNorm on q and k; `qk_norm_all_heads`: its weights span all heads.
    norms_per_layer: norm vectors per block (Gemma 2/3: 4, Cohere: 1).
    attention_sinks: one learned sink logit per query head (gpt-oss).
    eps_key:      the config key of the norm epsilon.
    layout:       (reader, layers) -> (kind of each layer, sliding window, attention chunk) (`rules.py`).
    experts:      (reader, family, layers, dense width) -> the MoE layout's fields; None: dense.
    experts_key:  the key of the routed-expert count for `rules.every_layer`; `k_key`: the key of the router's k.
    norm_topk_prob: renormalised top-k router weights (descriptive; changes no count).
    router_bias:  one extra number per expert (a router bias or DeepSeek's correction bias).
    expert_bias:  biases inside every expert (gpt-oss).
    shared_expert_gate: a sigmoid gate (hidden -> 1) on the shared expert (Qwen2-MoE).
    moe_layer_freq: the DeepSeek rule reads `moe_layer_freq` (DeepSeek's own config field).
    latent:       reads multi-head latent attention's ranks (DeepSeek-V2/V3: `LatentAttention.read`).
    mixer:        (reader, sizes read so far) -> the sizes of the recurrent kind of a hybrid (`layers/`).
    parallel:     the recurrent mixer runs beside attention in every layer (Falcon-H1), not in layers of its own.
    mlp:          the layers have dense MLPs (Qwen3.5-MoE has none: its config has no intermediate_size).
    mlp_gated, attn_output_gate, mlp_act_params: see `ModelConfig`.
    renamed:      (old key, field): keys the config class pops from its kwargs and uses in place of a field
                  (LFM2's `block_ff_dim` for intermediate_size); the old key wins when both are given.
    count_layers: (reader) -> the number of layers, where num_hidden_layers does not say it (NemotronH).
    check:        (reader, sizes) -> None, refusing a config transformers would not build as this family.
    mlp_widths:   (reader, layers) -> one dense MLP width per layer (Gemma 3n lists them).
    extras:       (reader, layers, kinds) -> fields of the parts the family adds (Gemma 3n's).
    read:         a reader of its own, for a model of another shape (Whisper's encoder-decoder).
    wrapper:      its multimodal wrapper class.
    """

    label: str
    model_type: str
    classes: tuple[str, ...]
    config_class: str
    defaults: dict = field(hash=False)
    aliases: tuple[tuple[str, str], ...] = ()
    examples: str = ""
    qkv_bias: bool | str = "attention_bias"
    o_bias: bool | str = "attention_bias"
    mlp_bias: bool | str = False
    lm_head_bias: bool | str = False
    norm_bias: bool = False
    qk_norm: bool | str = False
    qk_norm_all_heads: bool = False
    norms_per_layer: int = 2
    attention_sinks: bool = False
    eps_key: str = "rms_norm_eps"
    layout: Callable = full
    experts: Callable | None = None
    experts_key: str = "num_local_experts"
    k_key: str = "num_experts_per_tok"
    norm_topk_prob: bool | str = False
    router_bias: bool = False
    expert_bias: bool = False
    shared_expert_gate: bool = False
    moe_layer_freq: bool = False
    latent: Callable | None = None
    mixer: Callable | None = None
    parallel: bool = False
    mlp: bool = True
    mlp_gated: bool = True  # False: MLPs and experts have up and down projections only
    attn_output_gate: bool = False  # q_proj also gives a sigmoid gate on the attention output (Qwen3-Next)
    mlp_act_params: int = 0  # learned numbers inside each MLP's activation (Apertus' xIELU: alpha_p, alpha_n)
    renamed: tuple[tuple[str, str], ...] = ()
    count_layers: Callable | None = None
    check: Callable | None = None
    mlp_widths: Callable | None = None
    extras: Callable | None = None
    read: Callable | None = None
    model_types: tuple[str, ...] = ()
    wrapper: Wrapper | None = None

    def __post_init__(self):
        if self.wrapper is not None and self.wrapper.cls not in self.classes:
            object.__setattr__(self, "classes", (*self.classes, self.wrapper.cls))


def _text(name: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _dict(name: str, value) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict of config keys and their defaults, got {type(value).__name__}")
    return value


def tied_by_outer(default: bool) -> Callable:
    """A wrapper whose own config's tie_word_embeddings ties the LM head (`default` when absent): Gemma 3, the
    Qwen-VL and Qwen3.5 wrappers, Gemma 3n, as transformers 5 builds them."""
    if not isinstance(default, bool):
        raise TypeError(f"default must be true or false, got {type(default).__name__}")
    def tied(c: dict, r) -> bool:
        value = c.get("tie_word_embeddings", default)
        if not isinstance(value, bool):
            raise TypeError(f"config['tie_word_embeddings'] must be true or false (a JSON boolean), got {value!r}")
        return value

    return tied


def tied_by_text(c: dict, r) -> bool:
    """A wrapper whose language model's config ties its head (Llama 4)."""
    _dict("c", c)
    return r.bool("tie_word_embeddings")


def family(label, model_type, classes, config_class, examples, defaults, aliases=(), **traits) -> Family:
    """A `Family` written as the shape files write it: names, examples, defaults, aliases, then traits."""
    for name, value in (("label", label), ("model_type", model_type), ("config_class", config_class),
                        ("examples", examples)):
        _text(name, value)
    if not isinstance(classes, list | tuple) or not all(isinstance(c, str) for c in classes):
        raise TypeError(f"classes must be a list of class names, got {type(classes).__name__}")
    return Family(label, model_type, tuple(classes), config_class, _dict("defaults", defaults), tuple(aliases),
                  examples, **traits)


def tower(label, config_class, defaults, count=None, **kwargs) -> Tower:
    """A `Tower`: its name, its config class and that class's defaults, the function that counts it."""
    return Tower(_text("label", label), _text("config_class", config_class), _dict("defaults", defaults), count,
                 **kwargs)


from . import dense, encoder_decoder, hybrid, moe, multimodal  # noqa: E402  (they import the classes above)

# The order 2.2's list of families and the refusal of an unsupported class have always named them in.
_LISTED = ("Llama", "Llama 4", "Mistral", "Mixtral", "Qwen2", "Qwen2-MoE", "Qwen3", "Qwen3-MoE", "DeepSeek-V2",
           "DeepSeek-V3", "Gemma", "Gemma 2", "Gemma 3", "Phi-3", "Phi-3.5-MoE", "OLMo 2", "OLMoE", "Granite",
           "GraniteMoE", "Cohere", "gpt-oss", "GLM-4.5", "dots.llm1", "Hunyuan dense", "Hunyuan MoE", "ERNIE 4.5 MoE",
           "SmolLM3", "GLM-4", "EXAONE 4", "Seed-OSS", "Apertus", "MiniMax-M2", "Qwen2.5-VL", "Qwen3-VL",
           "Qwen3-VL-MoE", "Ministral 3", "AFM (Arcee)", "Gemma 3n", "Nemotron-H", "Qwen3-Next", "Granite 4.0-H",
           "Jamba", "Falcon-H1", "Qwen3.5", "Qwen3.5-MoE", "LFM2", "LFM2-MoE", "MiniMax", "Whisper")
FAMILIES: tuple[Family, ...] = ()
WRAPPERS: tuple[Wrapper, ...] = ()


def _index() -> None:
    """Build the registry from the shape files' `FAMILIES` (at import; a test that adds an entry calls it again)."""
    global FAMILIES, WRAPPERS, _BY_CLASS, _BY_MODEL_TYPE, _WRAPPER_OF
    found = dense.FAMILIES + moe.FAMILIES + hybrid.FAMILIES + multimodal.FAMILIES + encoder_decoder.FAMILIES
    FAMILIES = tuple(sorted(found, key=lambda f: _LISTED.index(f.label) if f.label in _LISTED else len(_LISTED)))
    WRAPPERS = tuple(f.wrapper for f in FAMILIES if f.wrapper is not None)
    _BY_CLASS = {cls: fam for fam in FAMILIES for cls in fam.classes}
    _BY_MODEL_TYPE = {t: fam for fam in FAMILIES for t in (fam.model_type, *fam.model_types)}
    _WRAPPER_OF = {w.cls: w for w in WRAPPERS}


_index()


def supported_text() -> str:
    """The supported families' labels, as the refusal of another class lists them."""
    return ", ".join(f.label for f in FAMILIES)


def family_of(architecture: str) -> Family | None:
    """The supported `Family` of an architecture class name, or None."""
    if not isinstance(architecture, str):
        raise TypeError(f"architecture must be a class name string such as 'LlamaForCausalLM', "
                        f"got {type(architecture).__name__}")
    return _BY_CLASS.get(architecture)


def wrapper_of(architecture: str) -> Wrapper | None:
    """The multimodal `Wrapper` of a class name, or None for a language model's own class."""
    return _WRAPPER_OF.get(_text("architecture", architecture))


def by_model_type(model_type: str) -> tuple[str, Family] | None:
    """(class, family) of a config that names only its model_type: a wrapper's model_type stands for the wrapper,
    a family's for its first class. None for a model_type no family reads."""
    _text("model_type", model_type)
    for w in WRAPPERS:
        if w.model_type == model_type:
            return w.cls, _BY_CLASS[w.cls]
    fam = _BY_MODEL_TYPE.get(model_type)
    return (fam.classes[0], fam) if fam is not None else None


def model_types() -> list[str]:
    """Every model_type a config may name alone, sorted."""
    return sorted({*_BY_MODEL_TYPE, *(w.model_type for w in WRAPPERS)})


def text_family(model_type: str) -> Family:
    """The family whose (text) model_type this is."""
    if _text("model_type", model_type) not in _BY_MODEL_TYPE:
        raise ValueError(f"model_type must be one of {model_types()}, got {model_type!r}")
    return _BY_MODEL_TYPE[model_type]
