"""What a model's config.json says (chapter section 2.2.1, "Architecture").

A Hugging Face checkpoint ships a `config.json` that lists every size of the
network: width (`hidden_size`), depth (`num_hidden_layers`), attention heads,
feed-forward width, vocabulary, and for a mixture of experts the expert count
and how many are routed per token. `ModelConfig` reads those files and turns
them into the numbers an inference engineer needs first:

- `params()`: total parameters (what must sit in GPU memory) and active
  parameters (what one token actually reads: the router picks a few experts);
  `param_breakdown()` says where they sit;
- `kv_cache_bytes_per_token(dtype)`, `kv_cache_bytes(context, batch, dtype)` and
  `kv_cache_breakdown(context)`: the memory the KV cache takes, per layer type
  (full attention, sliding window, chunked attention, multi-head latent attention);
- `flops_per_token(context)`, `prefill_flops(prompt)`: the compute one decoded
  token, or one prefill, costs (the convention is stated once, in `flops_per_token`).

Supported families (the `architectures[0]` class name decides; `FAMILIES` lists
them with the published models that use each class, one entry per family: its
transformers defaults and its traits, the named rules for its layer layout and
its experts). Attention-only decoders: Llama, Llama 4 (text; its multimodal wrapper is read
through `text_config`), Mistral, Mixtral, Qwen2, Qwen2-MoE, Qwen3, Qwen3-MoE,
DeepSeek-V2/V3 (also Kimi-K2), Gemma, Gemma 2, Gemma 3, Phi-3 (also Phi-4 and
Phi-4-mini), Phi-3.5-MoE, OLMo 2, OLMoE, Granite, GraniteMoE, Cohere, gpt-oss,
GLM-4.5, ERNIE 4.5 MoE, SmolLM3, GLM-4, EXAONE 4, Seed-OSS, Apertus, MiniMax-M2, Qwen2.5-VL, Qwen3-VL and
Qwen3-VL-MoE (their language models; the vision tower of every multimodal wrapper is counted beside it,
`vision_params`), AFM (Arcee: a Llama-like decoder with an ungated ReLU^2 MLP), Ministral 3, and Mistral 3's
wrapper (Mistral Small 3.1/3.2, Ministral 3: a Mistral or Ministral 3 language model, by its text_config's
model_type, and a Pixtral vision tower), Gemma 3n (per-layer embeddings, AltUp, LAuReL, KV sharing; its
audio tower and embedders counted beside it, its timm MobileNetV5 vision tower named as not counted).
Hybrids (section 2.5): Nemotron-H (Mamba-2 layers among a few attention layers;
NVIDIA Nemotron 3 Nano), Granite 4.0-H (Mamba-2), Jamba (Mamba-1 layers among attention
layers, experts every other layer), Falcon-H1 (attention and Mamba-2 side by side in every
layer: a parallel hybrid), Qwen3-Next and Qwen3.5 dense and
MoE (gated DeltaNet; Qwen3.5's multimodal release read through `text_config`), LFM2 and LFM2-MoE (gated short
convolutions) and MiniMax-M1 / Text-01 (lightning attention, experts in every layer). Encoder-decoder (section 2.1):
Whisper (an audio encoder run once per 30 s window, a decoder with a fixed cross-attention cache; the
decoder-only fields describe its decoder, `encoder_*` its encoder). Every count is the one the
family's `transformers` model class builds (the tests instantiate each on the meta
device and compare); a field a config.json leaves out takes the default of the
family's transformers config class, and `defaulted` lists which ones did. Any
other class is refused by name, before any field is read.

A hybrid's cache (`kv_cache_bytes`) is the KV of its attention layers plus every
recurrent layer's convolution and recurrent state (`state_bytes`), in the dtypes
transformers keeps them; `kv_cache_bytes_per_token` is the growth per token.

`ModelConfig.from_numbers(...)` describes a model by plain numbers instead
(parameter counts and attention sizes), for estimates without a config.json:
`chapter2.roofline` takes a ModelConfig (or a shipped config's name) and nothing else.

Only the stdlib (and the package's input checks) is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from functools import cached_property, wraps
from pathlib import Path

from .._checks import dtype_bytes, finite_real, positive_int

__all__ = ["ModelConfig", "ParamCount", "ParamPart", "KVGroup", "Architecture", "describe_architecture", "FAMILIES",
           "Family", "MLA_FORMS", "family_of"]


# -----------------------------------------------------------------------------
# architecture names: "Qwen3MoeForCausalLM" -> family Qwen3, MoE, causal LM

# The head class after "For" says what the model was trained to do.
_TASKS = {
    "CausalLM": "causal language modeling",
    "MaskedLM": "masked language modeling",
    "ConditionalGeneration": "conditional generation",
    "SequenceClassification": "sequence classification",
    "TokenClassification": "token classification",
    "QuestionAnswering": "question answering",
}

# Class-name stems whose display name is not the stem itself, or which are
# mixtures of experts without "Moe" at the end of the stem.
_NAMES = {
    "Mixtral": ("Mixtral", True),
    "DeepseekV2": ("DeepSeek-V2", True),
    "DeepseekV3": ("DeepSeek-V3", True),
    "Dbrx": ("DBRX", True),
    "GptOss": ("gpt-oss", True),
    "Phimoe": ("Phi-MoE", True),
    "Olmoe": ("OLMoE", True),
    "Llama4": ("Llama4", True),
    "Ernie4_5_": ("Ernie4_5", True),
}


@dataclass(frozen=True)
class Architecture:
    """What an architecture class name says: `family`, `is_moe`, `task`."""

    name: str
    family: str
    is_moe: bool
    task: str


def describe_architecture(name: str) -> Architecture:
    """Read a transformers class name such as "Qwen3MoeForCausalLM".

    The name is `<Family>[Moe]For<Task>` (or `<Family>Model`, a bare backbone
    with no head; or GPT-2's `<Family>LMHeadModel`, a causal LM). "Moe" marks a
    mixture of experts model; a few MoE families (Mixtral, DeepSeek-V2/V3, DBRX,
    gpt-oss, Phi-MoE, OLMoE, Llama 4) are known by name. This reads the name
    only; `ModelConfig.from_hf` decides from the config whether layers are MoE.

    >>> describe_architecture("Qwen3MoeForCausalLM")
    Architecture(name='Qwen3MoeForCausalLM', family='Qwen3', is_moe=True, task='causal language modeling')
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'LlamaForCausalLM', got {type(name).__name__}")
    if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be a transformers class name such as 'LlamaForCausalLM', got {name!r}")
    stem, sep, head = name.rpartition("For")
    if name.endswith("LMHeadModel") and len(name) > len("LMHeadModel"):  # GPT-2 style naming
        stem, task = name[: -len("LMHeadModel")], _TASKS["CausalLM"]
    elif sep and stem and head:
        task = _TASKS.get(head) or _split_camel(head)
    elif name.endswith("Model") and len(name) > len("Model"):
        stem, task = name[: -len("Model")], "backbone only (hidden states, no head)"
    else:
        raise ValueError(f"name must look like '<Family>For<Task>' or '<Family>Model', got {name!r}")
    is_moe = stem.endswith("Moe")
    if is_moe:
        stem = stem[: -len("Moe")]
    family, known_moe = _NAMES.get(stem, (stem, False))
    return Architecture(name, family, is_moe or known_moe, task)


def _split_camel(text: str) -> str:
    return " ".join(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*", text))


# -----------------------------------------------------------------------------
# the supported families


@dataclass(frozen=True)
class Family:
    """One supported model class family: its names, defaults, and every trait that changes a number.

    label:        the family's name on the page ("Qwen3-MoE").
    model_type:   the transformers `model_type` of its (text) config.
    classes:      the architecture class names read as this family; a multimodal
                  wrapper (…ForConditionalGeneration) is read through its `text_config`.
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
    layout:       the rule (a key of `_LAYOUTS`) that gives each layer's kind and window.
    experts:      the rule (a key of `_EXPERT_RULES`) that gives the MoE layout; "" = dense.
    experts_key:  the key of the routed-expert count for the "every_layer" rule.
    norm_topk_prob: renormalised top-k router weights (descriptive; changes no count).
    router_bias:  one extra number per expert (a router bias or DeepSeek's correction bias).
    expert_bias:  biases inside every expert (gpt-oss).
    shared_expert_gate: a sigmoid gate (hidden -> 1) on the shared expert (Qwen2-MoE).
    moe_layer_freq: the DeepSeek rule reads `moe_layer_freq` (DeepSeek's own config field).
    mla:          multi-head latent attention (DeepSeek-V2/V3).
    state:        the recurrent layer kind of a hybrid ("mamba1", "mamba2", "gated_deltanet", "short_conv",
                  "lightning"), "" for a transformer.
    parallel:     the recurrent mixer runs beside attention in every layer (Falcon-H1), not in layers of its own.
    renamed:      (old key, field): keys the config class pops from its kwargs and uses in place of a field
                  (LFM2's `block_ff_dim` for intermediate_size); the old key wins when both are given.
    layout "encoder_decoder": an encoder-decoder (Whisper), read by `_encoder_decoder`, not the decoder rules.
    mlp_gated, attn_output_gate, mlp_act_params: see `ModelConfig`.
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
    layout: str = "full"
    experts: str = ""
    experts_key: str = "num_local_experts"
    norm_topk_prob: bool | str = False
    router_bias: bool = False
    expert_bias: bool = False
    shared_expert_gate: bool = False
    moe_layer_freq: bool = False
    mla: bool = False
    state: str = ""  # the recurrent layer kind of a hybrid ("mamba2", "gated_deltanet"); its fields are read
    mlp_gated: bool = True  # False: MLPs and experts have up and down projections only
    attn_output_gate: bool = False  # q_proj also gives a sigmoid gate on the attention output (Qwen3-Next)
    mlp_act_params: int = 0  # learned numbers inside each MLP's activation (Apertus' xIELU: alpha_p, alpha_n)
    state_keys: str = "nemotron_h"  # which config keys size its Mamba-2 layers (a key of `_MAMBA_KEYS`)
    renamed: tuple[tuple[str, str], ...] = ()  # (old key, field) the config class reads in place of the field
    parallel: bool = False  # every layer runs attention and its recurrent mixer side by side (Falcon-H1)


_COMMON = ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads")


def _fam(label, model_type, classes, config_class, examples, defaults, aliases=(), **traits):
    return Family(label, model_type, tuple(classes), config_class, defaults, tuple(aliases), examples, **traits)


# Defaults are those of the config classes of transformers 5 (tests/test_model_families.py
# compares every entry with the installed class). DeepSeek's `moe_layer_freq` is not a
# transformers field (its model classes ignore it); its default 1 is that of DeepSeek's own
# configuration_deepseek.py, whose layer rule this module follows.
FAMILIES: tuple[Family, ...] = (
    _fam("Llama", "llama", ["LlamaForCausalLM"], "LlamaConfig", "Llama 2, Llama 3.x", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
        mlp_bias="mlp_bias"),
    _fam("Llama 4", "llama4_text", ["Llama4ForCausalLM", "Llama4ForConditionalGeneration"], "Llama4TextConfig",
         "Llama 4 Scout, Llama 4 Maverick", {
        "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192, "num_hidden_layers": 48,
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "layer_types": None,
        "attention_chunk_size": 8192, "no_rope_layers": None, "no_rope_layer_interval": 4, "num_local_experts": 16,
        "num_experts_per_tok": 1, "intermediate_size_mlp": 16384, "interleave_moe_layer_step": 1,
        "moe_layers": None},
        layout="llama4", experts="llama4"),
    _fam("Mistral", "mistral", ["MistralForCausalLM", "Mistral3ForConditionalGeneration"], "MistralConfig",
         "Mistral 7B, Mistral Nemo, Mistral Small (3.1 and 3.2: the language model of Mistral3ForConditionalGeneration)", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "sliding_window": 4096},
        qkv_bias=False, o_bias=False, layout="one_window"),
    _fam("Mixtral", "mixtral", ["MixtralForCausalLM"], "MixtralConfig", "Mixtral 8x7B, Mixtral 8x22B", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None, "num_local_experts": 8,
        "num_experts_per_tok": 2}, [("num_experts", "num_local_experts")],
        qkv_bias=False, o_bias=False, layout="one_window", experts="every_layer", norm_topk_prob=True),
    _fam("Qwen2", "qwen2", ["Qwen2ForCausalLM"], "Qwen2Config", "Qwen2, Qwen2.5", {
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "sliding_window": 4096, "use_sliding_window": False,
        "max_window_layers": 28, "layer_types": None},
        qkv_bias=True, o_bias=False, layout="qwen"),
    _fam("Qwen2-MoE", "qwen2_moe", ["Qwen2MoeForCausalLM"], "Qwen2MoeConfig", "Qwen1.5-MoE, Qwen2-57B-A14B", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "qkv_bias": True, "sliding_window": 4096,
        "use_sliding_window": False, "max_window_layers": 28, "layer_types": None, "num_experts": 60,
        "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
        "decoder_sparse_step": 1, "mlp_only_layers": None},
        qkv_bias="qkv_bias", o_bias=False, layout="qwen2_moe", experts="qwen", norm_topk_prob="norm_topk_prob", shared_expert_gate=True),
    _fam("Qwen3", "qwen3", ["Qwen3ForCausalLM"], "Qwen3Config", "Qwen3 dense (0.6B to 32B)", {
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096,
        "use_sliding_window": False, "max_window_layers": 28, "layer_types": None},
        qk_norm=True, layout="qwen"),
    _fam("Qwen3-MoE", "qwen3_moe", ["Qwen3MoeForCausalLM"], "Qwen3MoeConfig", "Qwen3-30B-A3B, Qwen3-235B-A22B", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24,
        "num_attention_heads": 32, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096,
        "use_sliding_window": False, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
        "decoder_sparse_step": 1, "mlp_only_layers": None}, [("num_local_experts", "num_experts")],
        qk_norm=True, layout="qwen3_moe", experts="qwen", norm_topk_prob="norm_topk_prob"),
    _fam("DeepSeek-V2", "deepseek_v2", ["DeepseekV2ForCausalLM"], "DeepseekV2Config", "DeepSeek-V2, DeepSeek-V2-Lite", {
        "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
        "n_routed_experts": 64, "num_experts_per_tok": None, "moe_intermediate_size": 1407, "n_shared_experts": 2,
        "first_k_dense_replace": 0, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}, [("num_experts", "n_routed_experts")],
        mlp_bias="mlp_bias", experts="deepseek", norm_topk_prob="norm_topk_prob", moe_layer_freq=True, mla=True),
    _fam("DeepSeek-V3", "deepseek_v3", ["DeepseekV3ForCausalLM"], "DeepseekV3Config",
         "DeepSeek-V3, DeepSeek-R1, Kimi-K2, Moonlight", {
        "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "num_hidden_layers": 61,
        "num_attention_heads": 128, "num_key_value_heads": 128, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": 256,
        "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "n_shared_experts": 1, "first_k_dense_replace": 3,
        "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128}, [("num_local_experts", "n_routed_experts")],
        experts="deepseek", norm_topk_prob="norm_topk_prob", router_bias=True, moe_layer_freq=True, mla=True),
    _fam("Gemma", "gemma", ["GemmaForCausalLM"], "GemmaConfig", "Gemma 2B, Gemma 7B", {
        "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 28,
        "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False}),
    _fam("Gemma 2", "gemma2", ["Gemma2ForCausalLM"], "Gemma2Config", "Gemma 2 (2B, 9B, 27B)", {
        "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 4096,
        "layer_types": None},
        norms_per_layer=4, layout="alternating"),
    _fam("Gemma 3", "gemma3_text", ["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"], "Gemma3TextConfig",
         "Gemma 3 (1B text-only; 4B, 12B, 27B multimodal)", {
        "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 4096,
        "layer_types": None, "sliding_window_pattern": 6, "use_bidirectional_attention": False},
        qk_norm=True, norms_per_layer=4, layout="gemma3"),
    _fam("Phi-3", "phi3", ["Phi3ForCausalLM"], "Phi3Config", "Phi-3 mini/medium, Phi-3.5-mini, Phi-4, Phi-4-mini", {
        "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None},
        qkv_bias=False, o_bias=False, layout="one_window"),
    _fam("Phi-3.5-MoE", "phimoe", ["PhimoeForCausalLM", "PhiMoEForCausalLM"], "PhimoeConfig", "Phi-3.5-MoE", {
        "vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "lm_head_bias": False,
        "sliding_window": None, "num_local_experts": 16, "num_experts_per_tok": 2},
        norm_bias=True, lm_head_bias="lm_head_bias", layout="one_window", experts="every_layer"),
    _fam("OLMo 2", "olmo2", ["Olmo2ForCausalLM"], "Olmo2Config", "OLMo 2 (1B, 7B, 13B, 32B)", {
        "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False},
        qk_norm=True, qk_norm_all_heads=True),
    _fam("OLMoE", "olmoe", ["OlmoeForCausalLM"], "OlmoeConfig", "OLMoE-1B-7B", {
        "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 16, "num_key_value_heads": None, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "num_experts": 64,
        "num_experts_per_tok": 8}, [("num_local_experts", "num_experts")],
        qk_norm=True, qk_norm_all_heads=True, experts="every_layer", experts_key="num_experts"),
    _fam("Granite", "granite", ["GraniteForCausalLM"], "GraniteConfig", "Granite 3.x dense", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
        mlp_bias="mlp_bias"),
    _fam("GraniteMoE", "granitemoe", ["GraniteMoeForCausalLM"], "GraniteMoeConfig", "Granite 3.0 1B-A400M, 3B-A800M", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8,
        "num_experts_per_tok": 2},
        experts="every_layer"),
    _fam("Cohere", "cohere", ["CohereForCausalLM"], "CohereConfig", "Command R, Command R+", {
        "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
        "num_attention_heads": 64, "num_key_value_heads": None, "max_position_embeddings": 8192,
        "layer_norm_eps": 1e-05, "tie_word_embeddings": True, "attention_bias": False, "use_qk_norm": False},
        qk_norm="use_qk_norm", qk_norm_all_heads=True, norms_per_layer=1, eps_key="layer_norm_eps"),
    _fam("gpt-oss", "gpt_oss", ["GptOssForCausalLM"], "GptOssConfig", "gpt-oss-20b, gpt-oss-120b", {
        "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": True, "sliding_window": 128,
        "layer_types": None, "num_local_experts": 128, "num_experts_per_tok": 4}, [("num_experts", "num_local_experts")],
        attention_sinks=True, layout="alternating", experts="every_layer", router_bias=True, expert_bias=True),
    _fam("GLM-4.5", "glm4_moe", ["Glm4MoeForCausalLM"], "Glm4MoeConfig", "GLM-4.5, GLM-4.5-Air, GLM-4.6", {
        "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": 128,
        "num_experts_per_tok": 8, "moe_intermediate_size": 1408, "n_shared_experts": 1, "first_k_dense_replace": 1,
        "use_qk_norm": False}, [("num_local_experts", "n_routed_experts")],
        qkv_bias="attention_bias", o_bias=False, qk_norm="use_qk_norm", experts="deepseek",
        norm_topk_prob="norm_topk_prob", router_bias=True),
    _fam("dots.llm1", "dots1", ["Dots1ForCausalLM"], "Dots1Config", "dots.llm1.base, dots.llm1.inst", {
        "vocab_size": 152064, "hidden_size": 4608, "intermediate_size": 10944, "num_hidden_layers": 62,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": None,
        "num_experts_per_tok": None, "moe_intermediate_size": 1408, "n_shared_experts": None,
        "first_k_dense_replace": 0, "sliding_window": 4096, "max_window_layers": 62, "layer_types": None},
        [("num_local_experts", "n_routed_experts")],
        qk_norm=True, layout="dots1", experts="deepseek", norm_topk_prob="norm_topk_prob", router_bias=True),
    _fam("Hunyuan dense", "hunyuan_v1_dense", ["HunYuanDenseV1ForCausalLM"], "HunYuanDenseV1Config",
         "Hunyuan 0.5B-7B, Hunyuan-MT-7B", {
        "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False},
        qk_norm=True),
    _fam("Hunyuan MoE", "hunyuan_v1_moe", ["HunYuanMoEV1ForCausalLM"], "HunYuanMoEV1Config", "Hunyuan-A13B", {
        "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "num_experts": 1,
        "moe_topk": 1}, [("num_experts_per_tok", "moe_topk"), ("num_local_experts", "num_experts")],
        qk_norm=True, experts="hunyuan"),
    _fam("ERNIE 4.5 MoE", "ernie4_5_moe", ["Ernie4_5_MoeForCausalLM"], "Ernie4_5_MoeConfig",
         "ERNIE-4.5-21B-A3B, ERNIE-4.5-300B-A47B", {
        "vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 28,
        "num_attention_heads": 20, "num_key_value_heads": 4, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": True, "use_bias": False, "moe_num_experts": 64, "moe_k": 6,
        "moe_intermediate_size": 1536, "moe_num_shared_experts": 2, "moe_layer_start_index": 1,
        "moe_layer_end_index": -1, "moe_layer_interval": 1},
        [("num_experts", "moe_num_experts"), ("num_experts_per_tok", "moe_k")],
        qkv_bias="use_bias", o_bias="use_bias", mlp_bias="use_bias", lm_head_bias="use_bias", experts="ernie", router_bias=True),
    _fam("SmolLM3", "smollm3", ["SmolLM3ForCausalLM"], "SmolLM3Config", "SmolLM3-3B", {
        "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
        "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "mlp_bias": False,
        "sliding_window": None, "use_sliding_window": False, "layer_types": None, "no_rope_layers": None,
        "no_rope_layer_interval": 4},
        mlp_bias="mlp_bias", layout="smollm3"),
    _fam("GLM-4", "glm4", ["Glm4ForCausalLM"], "Glm4Config", "GLM-4-9B-0414, GLM-4-32B-0414", {
        "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131072,
        "rms_norm_eps": 1.5625e-07, "tie_word_embeddings": False, "attention_bias": True},
        qkv_bias="attention_bias", o_bias=False, norms_per_layer=4),
    _fam("EXAONE 4", "exaone4", ["Exaone4ForCausalLM"], "Exaone4Config", "EXAONE 4.0 (1.2B, 32B)", {
        "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": 4096, "sliding_window_pattern": 4,
        "layer_types": None},
        qkv_bias=False, o_bias=False, qk_norm=True, layout="exaone4"),
    _fam("Seed-OSS", "seed_oss", ["SeedOssForCausalLM"], "SeedOssConfig", "Seed-OSS-36B", {
        "vocab_size": 155136, "hidden_size": 4096, "intermediate_size": 27648, "num_hidden_layers": 64,
        "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 524288,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": True, "attention_out_bias": False,
        "mlp_bias": False},
        o_bias="attention_out_bias", mlp_bias="mlp_bias"),
    _fam("Apertus", "apertus", ["ApertusForCausalLM"], "ApertusConfig", "Apertus-8B, Apertus-70B", {
        "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 65536,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False},
        qk_norm=True, mlp_gated=False, mlp_act_params=2),
    _fam("MiniMax-M2", "minimax_m2", ["MiniMaxM2ForCausalLM"], "MiniMaxM2Config", "MiniMax-M2", {
        "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 1536, "num_hidden_layers": 62,
        "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 196608,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "num_experts_per_tok": 8, "num_local_experts": 256},
        [("num_experts", "num_local_experts")],
        qkv_bias=False, o_bias=False, qk_norm=True, qk_norm_all_heads=True, experts="every_layer", router_bias=True),
    _fam("Qwen2.5-VL", "qwen2_5_vl_text", ["Qwen2_5_VLForConditionalGeneration"], "Qwen2_5_VLTextConfig",
         "Qwen2.5-VL (3B, 7B, 32B, 72B; the language model, its vision tower counted beside it)", {
        "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-05, "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 80,
        "layer_types": None},
        qkv_bias=True, o_bias=False, layout="qwen"),
    _fam("Qwen3-VL", "qwen3_vl_text", ["Qwen3VLForConditionalGeneration"], "Qwen3VLTextConfig",
         "Qwen3-VL dense (2B, 4B, 8B, 32B; the language model, its vision tower counted beside it)", {
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 128000,
        "rms_norm_eps": 1e-06, "attention_bias": False},
        qk_norm=True),
    _fam("Qwen3-VL-MoE", "qwen3_vl_moe_text", ["Qwen3VLMoeForConditionalGeneration"], "Qwen3VLMoeTextConfig",
         "Qwen3-VL-30B-A3B, Qwen3-VL-235B-A22B (the language model, its vision tower counted beside it)", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": None, "max_position_embeddings": 128000,
        "rms_norm_eps": 1e-06, "attention_bias": False, "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
        "num_experts_per_tok": 4, "num_experts": 60, "mlp_only_layers": None}, [("num_local_experts", "num_experts")],
        qk_norm=True, experts="qwen", norm_topk_prob=True),
    _fam("Ministral 3", "ministral3", ["Ministral3ForCausalLM"], "Ministral3Config",
         "Ministral 3 (3B, 8B, 14B), Devstral 2 (the language model; Mistral3ForConditionalGeneration with a ministral3 "
         "text_config)", {
        "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 34,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 262144,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None},
        qkv_bias=False, o_bias=False, layout="one_window"),
    _fam("AFM (Arcee)", "arcee", ["ArceeForCausalLM"], "ArceeConfig", "Arcee AFM-4.5B, AFM-4.5B-Base", {
        "vocab_size": 32000, "hidden_size": 2560, "intermediate_size": 18432, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
        mlp_bias="mlp_bias", mlp_gated=False),
    _fam("Gemma 3n", "gemma3n_text", ["Gemma3nForCausalLM", "Gemma3nForConditionalGeneration"], "Gemma3nTextConfig",
         "Gemma 3n E2B, E4B (the language model; its vision and audio towers counted beside it)", {
        "vocab_size": 262400, "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 35,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 512,
        "layer_types": None, "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256,
        "altup_num_inputs": 4, "laurel_rank": 64, "num_kv_shared_layers": 15, "activation_sparsity_pattern": None},
        qk_norm=True, norms_per_layer=4, layout="gemma3n"),
    # hybrids (section 2.5): recurrent layers among a few attention layers
    _fam("Nemotron-H", "nemotron_h", ["NemotronHForCausalLM"], "NemotronHConfig",
         "NVIDIA Nemotron 3 Nano 30B-A3B, Nemotron-H, Nemotron Nano 2", {
        "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 21504, "layers_block_type": None,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 4096,
        "layer_norm_epsilon": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
        "use_bias": False, "use_conv_bias": True, "mamba_num_heads": 128, "mamba_head_dim": 64,
        "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "mamba_ssm_cache_dtype": "float32",
        "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 7688,
        "moe_shared_expert_intermediate_size": 7688, "moe_latent_size": None},
        [("layer_types", "layers_block_type"), ("num_local_experts", "n_routed_experts")],
        o_bias=False, qkv_bias=False, mlp_bias="mlp_bias", norms_per_layer=1, eps_key="layer_norm_epsilon",
        layout="nemotron_h", experts="nemotron_h", router_bias=True, state="mamba2", mlp_gated=False),
    _fam("Qwen3-Next", "qwen3_next", ["Qwen3NextForCausalLM"], "Qwen3NextConfig", "Qwen3-Next-80B-A3B", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "layer_types": None,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
        "decoder_sparse_step": 1, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
        "num_experts_per_tok": 10, "num_experts": 512, "mlp_only_layers": None},
        qk_norm=True, layout="qwen3_next", experts="qwen", norm_topk_prob="norm_topk_prob", shared_expert_gate=True,
        state="gated_deltanet", attn_output_gate=True),
    _fam("Granite 4.0-H", "granitemoehybrid", ["GraniteMoeHybridForCausalLM"], "GraniteMoeHybridConfig",
         "IBM Granite 4.0-H (Micro, Tiny, Small)", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8,
        "num_experts_per_tok": 2, "shared_intermediate_size": 1024, "layer_types": None, "mamba_n_heads": 128,
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_head": "auto", "mamba_d_conv": 4, "mamba_expand": 2,
        "mamba_conv_bias": True, "mamba_proj_bias": False},
        [("layers_block_type", "layer_types")],
        layout="granite_hybrid", experts="granite_hybrid", state="mamba2", state_keys="granite"),
    _fam("Jamba", "jamba", ["JambaForCausalLM"], "JambaConfig", "Jamba-v0.1, Jamba 1.5 Mini and Large, Jamba Mini 1.6", {
        "vocab_size": 65536, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 262144,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "num_experts": 16, "num_experts_per_tok": 2,
        "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8, "attn_layer_offset": 4,
        "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": "auto", "mamba_conv_bias": True,
        "mamba_proj_bias": False},
        [("num_local_experts", "num_experts")],
        qkv_bias=False, o_bias=False, layout="jamba", experts="jamba", state="mamba1"),
    _fam("Falcon-H1", "falcon_h1", ["FalconH1ForCausalLM"], "FalconH1Config",
         "Falcon-H1 (0.5B to 34B), Falcon-H1R, Falcon-H1-Tiny", {
        "vocab_size": 128000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
        "projectors_bias": False, "mamba_d_ssm": 1024, "mamba_n_heads": 128, "mamba_d_head": "auto",
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_conv_bias": True,
        "mamba_proj_bias": False, "mamba_rms_norm": False},
        mlp_bias="mlp_bias", state="mamba2", state_keys="falcon_h1", parallel=True),
    _fam("Qwen3.5", "qwen3_5_text", ["Qwen3_5ForCausalLM", "Qwen3_5ForConditionalGeneration"], "Qwen3_5TextConfig",
         "Qwen3.5 dense (language model; the multimodal release is read through text_config)", {
        "vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 32,
        "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "layer_types": None,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32},
        qk_norm=True, layout="qwen3_next", state="gated_deltanet", attn_output_gate=True),
    _fam("Qwen3.5-MoE", "qwen3_5_moe_text", ["Qwen3_5MoeForCausalLM", "Qwen3_5MoeForConditionalGeneration"],
         "Qwen3_5MoeTextConfig", "Qwen3.5-397B-A17B (language model; the multimodal release is read through text_config)", {
        "vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
        "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
        "tie_word_embeddings": False, "attention_bias": False, "layer_types": None, "full_attention_interval": 4,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8, "num_experts": 256},
        qk_norm=True, layout="qwen3_next", experts="every_layer_shared", experts_key="num_experts",
        norm_topk_prob="norm_topk_prob", shared_expert_gate=True, state="gated_deltanet", attn_output_gate=True),
    _fam("LFM2", "lfm2", ["Lfm2ForCausalLM"], "Lfm2Config", "Liquid AI LFM2 (350M, 700M, 1.2B, 2.6B), LFM2.5", {
        "vocab_size": 65536, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 128000, "norm_eps": 1e-05,
        "tie_word_embeddings": True, "conv_bias": False, "conv_L_cache": 3, "block_multiple_of": 256,
        "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": True, "full_attn_idxs": None,
        "layer_types": None},
        qkv_bias=False, o_bias=False, qk_norm=True, eps_key="norm_eps", layout="lfm2", experts="lfm2",
        state="short_conv", renamed=(("block_ff_dim", "intermediate_size"), ("tie_embedding", "tie_word_embeddings"))),
    _fam("LFM2-MoE", "lfm2_moe", ["Lfm2MoeForCausalLM"], "Lfm2MoeConfig", "Liquid AI LFM2-8B-A1B", {
        "vocab_size": 65536, "hidden_size": 2048, "intermediate_size": 7168, "moe_intermediate_size": 1792,
        "num_hidden_layers": 32, "tie_word_embeddings": True, "max_position_embeddings": 128000, "norm_eps": 1e-05,
        "num_attention_heads": 32, "num_key_value_heads": 8, "conv_bias": False, "conv_L_cache": 3,
        "num_dense_layers": 2, "num_experts_per_tok": 4, "num_experts": 32, "layer_types": None},
        qkv_bias=False, o_bias=False, qk_norm=True, eps_key="norm_eps", layout="lfm2", experts="lfm2_moe",
        norm_topk_prob="norm_topk_prob", state="short_conv", renamed=(("tie_embedding", "tie_word_embeddings"),)),
    _fam("MiniMax", "minimax", ["MiniMaxForCausalLM", "MiniMaxM1ForCausalLM", "MiniMaxText01ForCausalLM"],
         "MiniMaxConfig", "MiniMax-Text-01, MiniMax-M1 (40k, 80k)", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None, "num_experts_per_tok": 2,
        "num_local_experts": 8, "layer_types": None}, [("num_experts", "num_local_experts")],
        qkv_bias=False, o_bias=False, layout="minimax", experts="every_layer", norm_topk_prob=True, state="lightning"),
    # encoder-decoder (section 2.1): an audio encoder runs once per 30 s window, a text decoder per token
    _fam("Whisper", "whisper", ["WhisperForConditionalGeneration"], "WhisperConfig",
         "Whisper (tiny to large-v3, large-v3-turbo), Distil-Whisper", {
        "vocab_size": 51865, "num_mel_bins": 80, "encoder_layers": 4, "encoder_attention_heads": 6,
        "decoder_layers": 4, "decoder_attention_heads": 6, "decoder_ffn_dim": 1536, "encoder_ffn_dim": 1536,
        "d_model": 384, "max_source_positions": 1500, "max_target_positions": 448, "tie_word_embeddings": True},
        [("hidden_size", "d_model"), ("num_hidden_layers", "encoder_layers")],
        qkv_bias=True, o_bias=True, mlp_bias=True, norm_bias=True, norms_per_layer=3, layout="encoder_decoder",
        mlp_gated=False),
)

_BY_CLASS = {cls: fam for fam in FAMILIES for cls in fam.classes}
_BY_MODEL_TYPE = {fam.model_type: fam for fam in FAMILIES}
_BY_MODEL_TYPE.update({"gemma3": _BY_MODEL_TYPE["gemma3_text"], "llama4": _BY_MODEL_TYPE["llama4_text"],
                       "kimi_k2": _BY_MODEL_TYPE["deepseek_v3"], "qwen3_5": _BY_MODEL_TYPE["qwen3_5_text"],
                       "qwen3_5_moe": _BY_MODEL_TYPE["qwen3_5_moe_text"], "qwen2_5_vl": _BY_MODEL_TYPE["qwen2_5_vl_text"],
                       "qwen3_vl": _BY_MODEL_TYPE["qwen3_vl_text"], "qwen3_vl_moe": _BY_MODEL_TYPE["qwen3_vl_moe_text"],
                       "mistral3": _BY_MODEL_TYPE["mistral"], "gemma3n": _BY_MODEL_TYPE["gemma3n_text"]})
# Multimodal wrappers: the language model is read from `text_config`; the vision tower is not counted.
# Which config's tie_word_embeddings ties the LM head (as transformers 5 builds them): Gemma 3's outer
# config (default true), Llama 4's text config.
_WRAPPERS = {"Gemma3ForConditionalGeneration": ("outer", True), "Llama4ForConditionalGeneration": ("text", None),
             "Qwen3_5ForConditionalGeneration": ("outer", False), "Qwen3_5MoeForConditionalGeneration": ("outer", False),
             "Qwen2_5_VLForConditionalGeneration": ("outer", False), "Qwen3VLForConditionalGeneration": ("outer", False),
             "Qwen3VLMoeForConditionalGeneration": ("outer", False), "Mistral3ForConditionalGeneration": ("mistral3", True),
             "Gemma3nForConditionalGeneration": ("outer", True)}
# Mistral 3's head (rule "mistral3"): the outer tie_word_embeddings when the file has it, else the text_config's (its
# class default false), else, with no text_config at all, the outer default (true). Transformers 5 reads the outer key
# alone, whose default became true (huggingface/transformers#43429, for Ministral 3, whose text_config says true); it
# then ties the head of Mistral Small 3.1, whose config.json names no tie at all and whose checkpoint stores its own
# LM head (24.0B parameters, not 23.3B; vllm-project/vllm#51063). Only that case departs from transformers 5.
# Wrappers whose language model may be one of several families, chosen by text_config['model_type'] (the first when it
# names none, as transformers does).
_TEXT_TYPES = {"Mistral3ForConditionalGeneration": ("mistral", "ministral3")}
# The text and vision sizes a wrapper's config class fills in when config.json has no text_config (or vision_config)
# at all: Mistral3Config's sub-config defaults (Mistral Small 3.1's sizes), not those of MistralConfig.
_WRAPPER_TEXT_DEFAULTS = {"Mistral3ForConditionalGeneration": {
    "head_dim": 128, "hidden_size": 5120, "intermediate_size": 32768, "max_position_embeddings": 131072,
    "num_attention_heads": 32, "num_hidden_layers": 40, "num_key_value_heads": 8, "rms_norm_eps": 1e-05,
    "sliding_window": None, "vocab_size": 131072}}
_WRAPPER_VISION_DEFAULTS = {"Mistral3ForConditionalGeneration": {
    "intermediate_size": 4096, "hidden_size": 1024, "patch_size": 14, "num_hidden_layers": 24}}
# Wrappers whose config.json (transformers 4.x layout) keeps the language model's fields at the top level when
# it has no text_config, as transformers 5 reads them.
_FLAT_TEXT = {"Qwen2_5_VLForConditionalGeneration"}
# Vision towers of the wrappers (the vision encoder and its projector into the language model), counted apart
# from the language model: wrapper class -> (rule, a Family holding its vision config class's defaults).
def _tower(label, config_class, defaults):
    return Family(label, "", (), config_class, defaults)


_TOWERS = {
    "Gemma3ForConditionalGeneration": ("siglip", _tower("SigLIP vision tower", "SiglipVisionConfig", {
        "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3, "image_size": 224,
        "patch_size": 16, "vision_use_head": True})),
    "Llama4ForConditionalGeneration": ("llama4", _tower("Llama 4 vision tower", "Llama4VisionConfig", {
        "hidden_size": 768, "intermediate_size": 5632, "num_hidden_layers": 34, "num_channels": 3, "image_size": 448,
        "patch_size": 14, "vision_output_dim": 7680, "projector_input_dim": 4096, "projector_output_dim": 4096,
        "multi_modal_projector_bias": False})),
    "Qwen3_5ForConditionalGeneration": ("qwen3_5", _tower("Qwen3.5 vision tower", "Qwen3_5VisionConfig", {
        "depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "in_channels": 3, "patch_size": 16,
        "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 3584, "num_position_embeddings": 2304})),
}
_TOWERS["Qwen2_5_VLForConditionalGeneration"] = ("qwen2_5_vl", _tower("Qwen2.5-VL vision tower", "Qwen2_5_VLVisionConfig", {
    "depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "in_channels": 3, "patch_size": 14,
    "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 3584}))
_TOWERS["Qwen3_5MoeForConditionalGeneration"] = ("qwen3_5", _tower("Qwen3.5 vision tower", "Qwen3_5MoeVisionConfig",
                                                                   dict(_TOWERS["Qwen3_5ForConditionalGeneration"][1].defaults)))
_TOWERS["Mistral3ForConditionalGeneration"] = ("pixtral", _tower("Pixtral vision tower", "PixtralVisionConfig", {
    "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_channels": 3, "patch_size": 16}))
# Keys of the wrapper's own config that size its projector (Mistral3Config's defaults)
_PROJECTORS = {"Mistral3ForConditionalGeneration": _tower("Mistral 3 projector", "Mistral3Config", {
    "spatial_merge_size": 2, "multimodal_projector_bias": False, "vision_feature_layer": -1})}
_TOWERS["Qwen3VLForConditionalGeneration"] = ("qwen3_vl", _tower("Qwen3-VL vision tower", "Qwen3VLVisionConfig", {
    **_TOWERS["Qwen3_5ForConditionalGeneration"][1].defaults, "deepstack_visual_indexes": (8, 16, 24)}))
_TOWERS["Qwen3VLMoeForConditionalGeneration"] = ("qwen3_vl", _tower("Qwen3-VL vision tower", "Qwen3VLMoeVisionConfig",
                                                                    dict(_TOWERS["Qwen3VLForConditionalGeneration"][1].defaults)))
# Gemma 3n's towers: its audio encoder (Gemma3nAudioConfig) and the two embedders that project audio and vision
# features into the language model (their widths and vocabularies: Gemma3nAudioConfig, Gemma3nVisionConfig). Its
# vision tower is a timm MobileNetV5 named by `vision_config['architecture']`, not counted (`towers_uncounted`).
_TOWERS["Gemma3nForConditionalGeneration"] = ("gemma3n", _tower("Gemma 3n audio tower", "Gemma3nAudioConfig", {
    "hidden_size": 1536, "vocab_size": 128, "input_feat_size": 128, "conf_num_attention_heads": 8,
    "conf_num_hidden_layers": 12, "conf_conv_kernel_size": 5, "sscp_conv_channel_size": (128, 32),
    "sscp_conv_kernel_size": ((3, 3), (3, 3)), "sscp_conv_stride_size": ((2, 2), (2, 2))}))
_GEMMA3N_VISION = _tower("Gemma 3n vision embedder", "Gemma3nVisionConfig", {
    "hidden_size": 2048, "vocab_size": 128, "architecture": "mobilenetv5_300m_enc"})
# Layer kinds of the KV cache (transformers' `layer_types` names).
LAYER_KINDS = ("full_attention", "sliding_attention", "chunked_attention")
# Recurrent layer kinds: a fixed-size state instead of a KV cache (section 2.5).
# "mamba2": Mamba-2 (Dao & Gu 2024, arXiv:2405.21060); "gated_deltanet": gated DeltaNet
# (Yang, Kautz & Hatamizadeh 2024, arXiv:2412.06464); "short_conv": LFM2's gated short convolution (its
# state is the convolution's last inputs only); "lightning": lightning attention, a linear attention with a
# per-head decay (MiniMax-01, arXiv:2501.08313; its state is one head_dim x head_dim matrix per head);
# "mamba1": Mamba-1's selective scan (Gu & Dao 2023, arXiv:2312.00752) as Jamba builds it.
# "none": a layer with no sequence mixer (NemotronH's MLP-only and MoE-only layers).
STATE_KINDS = ("mamba2", "gated_deltanet", "short_conv", "lightning", "mamba1")
MIXER_KINDS = LAYER_KINDS + STATE_KINDS + ("none",)
# FLOPs per state element and token of one recurrent step (the convention of `state_flops_per_token`):
# Mamba-2: decay h *= a (1), add (dt x) B (2), read y += C h (2); gated DeltaNet: decay S *= a (1),
# read S^T k (2), write the delta-rule update k (beta (v - S^T k))^T (2), read q^T S (2); lightning: decay
# S *= lambda (1), add k^T v (2), read q S (2); a short convolution keeps no recurrent state (its taps are weights).
# Mamba-1 (Jamba) counts as Mamba-2 does, per channel and state: its discretisation (exp(dt A) and dt B, per
# element here, per head in Mamba-2) is left out like the gates.
STATE_FLOPS_PER_ELEMENT = {"mamba2": 5, "gated_deltanet": 7, "short_conv": 0, "lightning": 5, "mamba1": 5}
STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
MLA_FORMS = ("absorbed", "expanded")
_SUPPORTED_TEXT = ", ".join(f.label for f in FAMILIES)


def family_of(architecture: str) -> Family | None:
    """The supported `Family` of an architecture class name, or None."""
    if not isinstance(architecture, str):
        raise TypeError(f"architecture must be a class name string such as 'LlamaForCausalLM', "
                        f"got {type(architecture).__name__}")
    return _BY_CLASS.get(architecture)


# -----------------------------------------------------------------------------
# parameter counts and KV cache groups


@dataclass(frozen=True)
class ParamCount:
    """Parameter counts of one model (numbers of weights, not bytes).

    total:         every weight stored in the checkpoint (what must fit in memory).
    active:        the weights one token reads: everything except the experts the
                   router did not pick (an encoder-decoder: its decoder, less cross-attention's
                   k and v projections; the encoder runs once per input window). Counts both embedding tables, as published
                   "active" figures do (Mixtral-8x7B's 12.9B, Qwen3-235B-A22B's 22B).
    embedding:     the input embedding table (vocab x hidden), a lookup, not a matmul.
    lm_head:       the separate output projection; 0 when tied to the embedding.
    matmul_active: the weights a token multiplies by (2 FLOPs each): `active`
                   minus the embedding lookup, norms and biases, plus the
                   vocab x hidden LM head even when it is tied.
    """

    total: int
    active: int
    embedding: int
    lm_head: int
    matmul_active: int

    @property
    def non_embedding(self) -> int:
        """Total minus the input embedding and the separate LM head."""
        return self.total - self.embedding - self.lm_head

    @property
    def active_without_lookup(self) -> int:
        """`active` minus the input embedding table, of which a token reads one row.

        The convention of DeepSeek's and OpenAI's published "activated" counts
        (DeepSeek-V3 37B, gpt-oss-120b 5.13B): the LM head counts, the lookup
        table does not. A tied table is the LM head too, so it still counts once.
        """
        return self.active - (self.embedding if self.lm_head else 0)


@dataclass(frozen=True)
class ParamPart:
    """One part of the model in `ModelConfig.param_breakdown()`: its weights in total and per token."""

    part: str
    total: int
    active: int


@dataclass(frozen=True)
class KVGroup:
    """The layers of one kind in `ModelConfig.kv_cache_breakdown()`.

    kind:       "full_attention", "sliding_attention", "chunked_attention" (a token
                sees its own chunk of `window` tokens), "mla" (multi-head latent attention),
                or a recurrent kind ("mamba2", "gated_deltanet": a fixed state, `per_token` 0).
    layers:     how many layers are of this kind.
    window:     the window or chunk in tokens (None: the whole context).
    per_token:  numbers cached per token in one such layer.
    tokens:     tokens each such layer holds at the given context.
    bytes:      the group's cache for one sequence at that context.
    """

    kind: str
    layers: int
    window: int | None
    per_token: int
    tokens: int
    bytes: float
    state: int = 0  # numbers one such layer holds whatever the context (convolution + recurrent state)


# -----------------------------------------------------------------------------
# the config


def _once(method):
    """A zero-argument method of a frozen ModelConfig computed once per instance (kept in its __dict__, beside
    the fields; equality, hashing and `dataclasses.replace` see the fields only). Calculators and the roofline's
    searches ask for the same counts hundreds of times per input change."""
    key = "_once_" + method.__name__

    @wraps(method)
    def wrapper(self):
        if key not in self.__dict__:
            self.__dict__[key] = method(self)
        return self.__dict__[key]

    return wrapper


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of a decoder-only transformer, read from a Hugging Face config.json.

    Field names follow config.json where one exists. Derived fields:
    `head_dim` (given, the family's default, else hidden_size // num_attention_heads;
    for MLA the query/key width qk_nope_head_dim + qk_rope_head_dim),
    `intermediate_size` (the width of the dense MLP layers: Llama 4's
    `intermediate_size_mlp`), `moe_layers` (indices of layers whose MLP is a
    mixture of experts), `layer_types` (per layer: "full_attention",
    "sliding_attention" or "chunked_attention", as transformers names them),
    `sliding_window_layers` (the sliding layers; the window counts the token
    itself, as in transformers), `defaulted` (the config keys that were absent and
    took the family's transformers default).
    """

    name: str
    architecture: str
    model_type: str
    family: str
    task: str
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    max_position_embeddings: int | None = None
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: dict | None = field(default=None, hash=False)  # None = plain RoPE
    tie_word_embeddings: bool = False
    qkv_bias: bool = False  # biases on q, k, v (MLA: on q_a_proj and kv_a_proj_with_mqa)
    o_bias: bool = False  # bias on o_proj
    mlp_bias: bool = False  # biases in the dense MLPs and shared experts
    qk_norm: bool = False  # RMSNorm on q and k before RoPE (Qwen3, Gemma 3, OLMo 2, ...)
    qk_norm_all_heads: bool = False  # its weights span all heads (OLMo 2, OLMoE, Cohere), not one head_dim
    sliding_window: int | None = None
    sliding_window_layers: tuple[int, ...] = ()
    layer_types: tuple[str, ...] = ()  # per layer; () = every layer full attention
    attention_chunk_size: int | None = None  # Llama 4: a chunked layer sees only its chunk of this many tokens
    attention_sinks: bool = False  # gpt-oss: one learned sink logit per query head
    norms_per_layer: int = 2  # RMSNorm/LayerNorm vectors per block (Gemma 2/3: 4, Cohere: 1)
    norm_bias: bool = False  # LayerNorm with a bias (Phi-3.5-MoE)
    lm_head_bias: bool = False
    # mixture of experts
    num_experts: int = 0  # routed experts per MoE layer
    num_experts_per_tok: int = 0  # k; with `experts_per_tok_by_layer`, the largest k of any layer
    experts_per_tok_by_layer: tuple[int, ...] = ()  # one k per layer where they differ (Hunyuan's moe_topk list)
    moe_intermediate_size: int = 0
    norm_topk_prob: bool = False  # renormalise the top-k router weights to sum to 1
    moe_layers: tuple[int, ...] = ()
    ffn_free_layers: tuple[int, ...] = ()  # layers with no MLP (NemotronH's Mamba and attention layers)
    mlp_gated: bool = True  # gate, up and down projections; False: up and down only (NemotronH's squared ReLU)
    attn_output_gate: bool = False  # Qwen3-Next: q_proj also gives a sigmoid gate on the attention output
    mlp_act_params: int = 0  # learned numbers in each dense MLP's activation (Apertus' xIELU: 2)
    # Gemma 3n (see `_gemma3n_parts`): per-layer MLP widths, per-layer embeddings, AltUp, LAuReL, and the last
    # layers reading an earlier layer's keys and values instead of their own
    mlp_widths: tuple[int, ...] = ()  # one dense MLP width per layer where the config lists them; () = intermediate_size
    per_layer_input_size: int = 0  # width of each layer's slice of the per-layer embedding (0: none)
    per_layer_vocab_size: int = 0  # rows of the per-layer embedding table
    altup_inputs: int = 0  # AltUp's copies of the hidden state (0: no AltUp)
    laurel_rank: int = 0  # rank of LAuReL's low-rank residual (0: none)
    kv_shared_layers: tuple[int, ...] = ()  # layers that attend over an earlier layer's cached K/V: no k/v, no cache
    activation_sparsity: tuple[float, ...] = ()  # per layer, the share of MLP activations zeroed (changes no count)
    # Mamba-2 layers (layer kind "mamba2")
    mamba_num_heads: int = 0
    mamba_head_dim: int = 0
    ssm_state_size: int = 0
    n_groups: int = 0  # groups sharing one B and C
    mamba_bias: bool = False  # biases on in_proj and out_proj
    mamba_norm: bool = True  # the gated RMSNorm before out_proj
    mamba_out_bias: bool | None = None  # out_proj's bias when it differs from in_proj's (Falcon-H1); None: mamba_bias
    # Mamba-1 layers (layer kind "mamba1", Jamba): every channel its own state, no heads
    mamba_d_inner: int = 0  # channels (mamba_expand x hidden_size)
    mamba_dt_rank: int = 0  # rank of the dt projection
    mamba_dt_norms: bool = False  # RMSNorms on dt, B and C (Jamba)
    # a recurrent mixer beside the attention of every attention layer (Falcon-H1: "mamba2"); "" = none
    parallel_state: str = ""
    # gated DeltaNet layers (layer kind "gated_deltanet")
    linear_num_key_heads: int = 0
    linear_num_value_heads: int = 0
    linear_key_head_dim: int = 0
    linear_value_head_dim: int = 0
    # the short causal convolution of recurrent layers
    conv_kernel: int = 0
    conv_bias: bool = False
    state_dtype: str = "fp32"  # the recurrent state's dtype in transformers' cache; "model": the model's dtype
    shared_expert_intermediate_size: int = 0  # width of the always-on shared expert(s), 0 = none
    shared_expert_gate: bool = False  # Qwen2-MoE: a sigmoid gate (hidden -> 1) on the shared expert
    router_bias: bool = False  # one extra number per expert: a router bias (gpt-oss) or DeepSeek's correction bias
    expert_bias: bool = False  # gpt-oss: biases inside every expert
    # multi-head latent attention (DeepSeek-V2/V3)
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    # encoder-decoder (Whisper): an audio encoder, and cross-attention to its output in every decoder layer
    encoder_layers: int = 0  # 0: a decoder-only model
    encoder_attention_heads: int = 0
    encoder_ffn_dim: int = 0
    encoder_positions: int = 0  # encoder positions per input window (Whisper: 1,500 per 30 s, after the conv stem)
    num_mel_bins: int = 0  # input channels of the encoder's conv stem (mel filterbank bins)
    source: str = ""
    family_label: str = ""  # the supported family ("Qwen3-MoE"); "" for from_numbers
    wrapper: str = ""  # a multimodal class whose language model this is (its vision tower is counted apart)
    vision_params: int = 0  # a wrapper's vision tower and projector: beside params(), not in it
    vision_defaulted: tuple[str, ...] = ()  # vision_config keys that took the vision config class's default
    towers_uncounted: tuple[str, ...] = ()  # towers a wrapper holds that `vision_params` leaves out, named
    defaulted: tuple[str, ...] = ()
    raw: dict = field(default_factory=dict, hash=False, compare=False, repr=False)
    # parameter counts given as plain numbers (`from_numbers`); None: counted from the sizes above
    param_counts: ParamCount | None = None

    # -- construction ----------------------------------------------------------

    @classmethod
    def from_numbers(cls, name: str, params_total, params_active, n_layers: int, n_heads: int, n_kv_heads: int,
                     head_dim: int, n_experts: int = 1, experts_per_token: int = 1) -> ModelConfig:
        """A model given as plain numbers, for when no config.json is at hand (roofline estimates).

        The parameter counts are taken as given: `params()` returns them (every
        active weight a matmul weight; no separate embedding or LM head). The
        attention sizes give the KV cache and the attention FLOPs. For a mixture
        of experts give `n_experts` (routed experts per layer) and
        `experts_per_token`. Sizes it is not given (vocab_size, hidden_size,
        intermediate_size) are 0, so it cannot build a `Transformer`.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a string, got {type(name).__name__}")
        params_total = finite_real("params_total", params_total, low=0, low_open=True)
        params_active = finite_real("params_active", params_active, low=0, low_open=True, high=params_total)
        n_layers, n_heads, n_kv_heads, head_dim, n_experts, experts_per_token = (
            positive_int(arg, value) for arg, value in (
                ("n_layers", n_layers), ("n_heads", n_heads), ("n_kv_heads", n_kv_heads), ("head_dim", head_dim),
                ("n_experts", n_experts), ("experts_per_token", experts_per_token)))
        if experts_per_token > n_experts:
            raise ValueError(f"experts_per_token ({experts_per_token}) must be <= n_experts ({n_experts})")
        if n_heads % n_kv_heads:
            raise ValueError(f"n_heads ({n_heads}) must be a multiple of n_kv_heads ({n_kv_heads})")
        moe = n_experts > 1
        return cls(name=name, architecture="", model_type="", family="", task="causal language modeling",
                   vocab_size=0, hidden_size=0, intermediate_size=0, num_hidden_layers=n_layers,
                   num_attention_heads=n_heads, num_key_value_heads=n_kv_heads, head_dim=head_dim,
                   layer_types=("full_attention",) * n_layers,
                   num_experts=n_experts if moe else 0, num_experts_per_tok=experts_per_token if moe else 0,
                   moe_layers=tuple(range(n_layers)) if moe else (),
                   param_counts=ParamCount(total=params_total, active=params_active, embedding=0, lm_head=0,
                                           matmul_active=params_active))

    @classmethod
    def from_json(cls, path, name: str | None = None) -> ModelConfig:
        """Read a config.json file (a `_source` key, if present, becomes `source`).

        A file that is not UTF-8 or not JSON is refused with its path in the message.
        """
        path = Path(path)
        if path.is_dir():
            path = path / "config.json"
        if not path.is_file():
            raise ValueError(f"path must be a config.json file or a folder holding one, got {str(path)!r}")
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"{str(path)!r} is not UTF-8 text ({err.reason} at byte {err.start}); "
                             "a config.json is UTF-8 JSON") from None
        if name is None and path.name != "config.json":
            name = path.stem  # shipped configs are named after their model, e.g. Qwen3-8B.json
        return cls.from_text(text, name=name, what=repr(str(path)))

    @classmethod
    def from_text(cls, text: str, name: str | None = None, what: str = "config.json text") -> ModelConfig:
        """Parse the text of a config.json (what a reader pastes into a calculator)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be the JSON text of a config.json, got {type(text).__name__}")
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{what} is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}") from None
        if not isinstance(data, dict):
            raise ValueError(f"{what} must be a JSON object ({{...}}) as in a config.json, "
                             f"got a JSON {type(data).__name__}")
        return cls.from_hf(data, name=name)

    @classmethod
    def from_hf(cls, config: dict, name: str | None = None) -> ModelConfig:
        """Build from a parsed config.json dict (transformers 4.x or 5.x layout).

        The architecture class is checked first: a class outside `FAMILIES` is
        refused by name, with the list of supported families. Then every field
        that changes a number is read and checked (type, range, consistency);
        an absent field takes the family's transformers default (see `defaulted`).
        """
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict parsed from config.json, got {type(config).__name__}")
        return cls(**_parse(config, name))

    # -- derived facts -----------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return bool(self.moe_layers)

    def experts_per_tok_of(self, layer: int) -> int:
        """Routed experts a token uses in layer `layer`: its own k where k differs per layer, else
        `num_experts_per_tok`; 0 in a layer without experts."""
        if layer not in self.moe_layers:
            return 0
        return self.experts_per_tok_by_layer[layer] if self.experts_per_tok_by_layer else self.num_experts_per_tok

    @property
    def routed_experts_per_token(self) -> int:
        """Routed experts one token runs through, summed over the MoE layers: each layer's own k (len(moe_layers)
        x k when every layer has the same). Active parameters and FLOPs count these experts, no others."""
        return sum(self.experts_per_tok_of(i) for i in self.moe_layers)

    @property
    def uses_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3): K and V come from a cached low-rank latent."""
        return self.kv_lora_rank is not None

    @property
    def gqa_group(self) -> int:
        """Query heads sharing one K/V head (1 = multi-head attention, num_attention_heads = multi-query)."""
        return self.num_attention_heads // self.num_key_value_heads

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """The attention kind of every layer ("full_attention", "sliding_attention", "chunked_attention")."""
        return self.layer_types or ("full_attention",) * self.num_hidden_layers

    @cached_property
    def attention_layers(self) -> tuple[int, ...]:
        """The layers that attend (and so keep a KV cache): every layer of a transformer, a few of a hybrid."""
        return tuple(i for i, k in enumerate(self.kinds) if k in LAYER_KINDS)

    @property
    def cached_layers(self) -> tuple[int, ...]:
        """The attention layers that keep keys and values of their own: all of them, less Gemma 3n's
        `kv_shared_layers` (which attend over an earlier layer's)."""
        shared = set(self.kv_shared_layers)
        return tuple(i for i in self.attention_layers if i not in shared)

    def state_kind(self, layer: int) -> str:
        """The recurrent mixer of layer `layer` (one of `STATE_KINDS`), "" if it has none.

        A hybrid's recurrent layer is its kind; a parallel hybrid (Falcon-H1) runs `parallel_state`
        beside the attention of each attention layer, so such a layer has both a KV cache and a state.
        """
        kind = self.kinds[layer]
        if kind in STATE_KINDS:
            return kind
        return self.parallel_state if kind in LAYER_KINDS else ""

    @cached_property
    def state_layers(self) -> tuple[int, ...]:
        """The layers with a recurrent mixer (`STATE_KINDS`): a fixed-size state, whatever the context."""
        return tuple(i for i in range(self.num_hidden_layers) if self.state_kind(i))

    @property
    def is_hybrid(self) -> bool:
        return bool(self.state_layers)

    @property
    def is_encoder_decoder(self) -> bool:
        """An encoder-decoder (Whisper): the fields above `encoder_layers` describe its decoder."""
        return self.encoder_layers > 0

    @property
    def context_limit(self) -> int | None:
        """The most tokens the model can hold at all: an encoder-decoder's decoder has one learned position per
        token (Whisper: `max_target_positions`, 448), so no more fit. None for a decoder-only model, whose RoPE
        runs past `max_position_embeddings` (the context it was trained for, not a hard limit)."""
        return self.max_position_embeddings if self.is_encoder_decoder else None

    def _decoder_context(self, context) -> int:
        """`context` checked: a whole number >= 1, and at most `context_limit` (an encoder-decoder)."""
        context = positive_int("context", context)
        if self.context_limit is not None and context > self.context_limit:
            raise ValueError(f"context must be at most max_target_positions ({self.max_position_embeddings}) for "
                             f"{self.family_label or self.name}: its decoder has that many learned positions, "
                             f"got {context}")
        return context

    def window_of(self, layer: int) -> int | None:
        """The sliding window (or attention chunk) of layer `layer`; None: it sees the whole context
        (or it does not attend)."""
        kind = self.kinds[layer]
        if kind == "sliding_attention":
            return self.sliding_window
        if kind == "chunked_attention":
            return self.attention_chunk_size
        return None

    # -- parameters --------------------------------------------------------------

    def _attention_params(self) -> tuple[int, int]:
        """(weights in matmuls, other weights: norms, biases, sinks) of one attention block."""
        h, n_q, n_kv, d = self.hidden_size, self.num_attention_heads, self.num_key_value_heads, self.head_dim
        if self.uses_mla:
            qk_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
            kv_a_out = self.kv_lora_rank + self.qk_rope_head_dim  # latent + shared RoPE key
            if self.q_lora_rank:  # x -> q latent (q_a_proj) -> per-head q (q_b_proj)
                q = h * self.q_lora_rank + self.q_lora_rank * n_q * qk_dim
                other = self.q_lora_rank + (self.q_lora_rank if self.qkv_bias else 0)  # q_a_layernorm, q_a bias
            else:
                q, other = h * n_q * qk_dim, 0
            kv_a = h * kv_a_out
            kv_b = self.kv_lora_rank * n_q * (self.qk_nope_head_dim + self.v_head_dim)
            o = n_q * self.v_head_dim * h
            other += self.kv_lora_rank + (kv_a_out if self.qkv_bias else 0) + (h if self.o_bias else 0)
            return q + kv_a + kv_b + o, other
        q_out = n_q * d * (2 if self.attn_output_gate else 1)  # Qwen3-Next: query and its gate
        matmul = h * q_out + 2 * h * n_kv * d + n_q * d * h  # q, k, v, o projections
        if not self.qk_norm:
            norms = 0
        else:
            norms = (n_q + n_kv) * d if self.qk_norm_all_heads else 2 * d
        biases = (q_out + 2 * n_kv * d if self.qkv_bias else 0) + (h if self.o_bias else 0)
        return matmul, norms + biases + (n_q if self.attention_sinks else 0)

    def _mlp_params(self, width: int, bias: bool) -> tuple[int, int]:
        """(matmul weights, biases) of one MLP: gate and up (h -> width), down (width -> h); no gate
        when `mlp_gated` is False."""
        h, mats = self.hidden_size, (3 if self.mlp_gated else 2)
        return mats * h * width, ((mats - 1) * width + h if bias else 0)

    def _state_params(self, kind: str) -> tuple[int, int]:
        """(weights in matmuls and the convolution, other weights) of one recurrent layer.

        Mamba-2 (transformers' NemotronH mixer): in_proj h -> (z, x, B, C, dt) = 2 I + 2 G N + H
        with I = heads x head_dim; a depthwise causal conv of `conv_kernel` taps over x, B, C
        (I + 2 G N channels); per head dt_bias, A_log, D; a gated RMSNorm over I; out_proj I -> h.
        Gated DeltaNet (Qwen3-Next): in_proj_qkvz h -> 2 Hk dk + 2 Hv dv, in_proj_ba h -> 2 Hv,
        a conv over q, k, v (2 Hk dk + Hv dv channels, no bias), per value head dt_bias and A_log,
        an RMSNorm over dv, out_proj Hv dv -> h. Short convolution (LFM2): in_proj h -> 3 h (two gates
        and the input), a depthwise conv of `conv_kernel` taps over h channels, out_proj h -> h; with
        `conv_bias`, biases on all three. Lightning attention (MiniMax): qkv_proj h -> 3 H d, output_gate
        h -> H d, an RMSNorm over H d, out_proj H d -> h (H, d: the attention's heads and head_dim; no biases).
        Convolution taps count with the matmul weights: each multiplies one input per token (2 FLOPs).
        """
        h, k = self.hidden_size, self.conv_kernel
        if kind == "mamba1":  # Jamba: in_proj h -> (x, z) 2I; conv over I; x_proj I -> (dt, B, C); dt_proj R -> I
            inner, n, rank = self.mamba_d_inner, self.ssm_state_size, self.mamba_dt_rank
            matmul = h * 2 * inner + inner * k + inner * (rank + 2 * n) + rank * inner + inner * h
            other = inner + inner * n + inner  # dt_proj's bias, A_log (a rate per channel and state), D
            other += (inner if self.conv_bias else 0) + (2 * inner + h if self.mamba_bias else 0)
            return matmul, other + (rank + 2 * n if self.mamba_dt_norms else 0)
        if kind == "mamba2":
            heads, inner = self.mamba_num_heads, self.mamba_num_heads * self.mamba_head_dim
            bc = 2 * self.n_groups * self.ssm_state_size
            proj_out = 2 * inner + bc + heads
            channels = inner + bc
            matmul = h * proj_out + channels * k + inner * h
            other = 3 * heads + (channels if self.conv_bias else 0) + (inner if self.mamba_norm else 0)
            out_bias = self.mamba_bias if self.mamba_out_bias is None else self.mamba_out_bias
            return matmul, other + (proj_out if self.mamba_bias else 0) + (h if out_bias else 0)
        if kind == "gated_deltanet":
            hk, hv = self.linear_num_key_heads, self.linear_num_value_heads
            dk, dv = self.linear_key_head_dim, self.linear_value_head_dim
            channels = 2 * hk * dk + hv * dv
            matmul = h * (2 * hk * dk + 2 * hv * dv) + h * 2 * hv + channels * k + hv * dv * h
            return matmul, 2 * hv + dv + (channels if self.conv_bias else 0)
        if kind == "short_conv":
            return 3 * h * h + h * k + h * h, (3 * h + h + h if self.conv_bias else 0)
        if kind == "lightning":
            inner = self.num_attention_heads * self.head_dim
            return 3 * h * inner + h * inner + inner * h, inner
        return 0, 0

    def state_elements(self, layer: int) -> tuple[int, int]:
        """(convolution state, recurrent state) numbers one sequence keeps in layer `layer`; (0, 0) if it attends.

        As transformers 5 caches them: the convolution's last `conv_kernel` inputs per channel,
        and the recurrent state: heads x head_dim x state for Mamba-2, value heads x dk x dv for
        gated DeltaNet, heads x head_dim x head_dim for lightning attention (no convolution); a short
        convolution keeps its last `conv_kernel` inputs of h channels and no recurrent state.
        """
        kind = self.state_kind(layer)
        if kind == "mamba1":  # every channel: its last conv_kernel inputs and its own state of ssm_state_size
            return self.mamba_d_inner * self.conv_kernel, self.mamba_d_inner * self.ssm_state_size
        if kind == "mamba2":
            inner = self.mamba_num_heads * self.mamba_head_dim
            channels = inner + 2 * self.n_groups * self.ssm_state_size
            return channels * self.conv_kernel, inner * self.ssm_state_size
        if kind == "gated_deltanet":
            hk, hv = self.linear_num_key_heads, self.linear_num_value_heads
            dk, dv = self.linear_key_head_dim, self.linear_value_head_dim
            return (2 * hk * dk + hv * dv) * self.conv_kernel, hv * dk * dv
        if kind == "short_conv":
            return self.hidden_size * self.conv_kernel, 0
        if kind == "lightning":
            return 0, self.num_attention_heads * self.head_dim * self.head_dim
        return 0, 0

    def _layer_counts(self) -> dict:
        """How many layers of each part: attention, each recurrent kind, dense MLPs, MoE layers."""
        moe, free = set(self.moe_layers), set(self.ffn_free_layers)
        mixers = [self.state_kind(i) for i in range(self.num_hidden_layers)]
        counts = {kind: mixers.count(kind) for kind in STATE_KINDS}
        counts.update(attention=len(self.attention_layers), moe=len(moe),
                      dense=sum(1 for i in range(self.num_hidden_layers) if i not in moe and i not in free))
        return counts

    def encoder_params(self) -> int:
        """Weights of an encoder-decoder's encoder (0 for a decoder-only model).

        Whisper (Radford et al. 2022, arXiv:2212.04356, section 2.2; transformers' WhisperEncoder):
        a conv stem of two 3-tap convolutions with biases (mel bins -> d, then d -> d at stride 2,
        which halves 3,000 frames to 1,500 positions), a learned position table (positions x d),
        `encoder_layers` pre-LayerNorm blocks (q, k, v, o projections, k without a bias; fc1,
        fc2 with biases; two LayerNorms with biases), and a final LayerNorm.
        """
        if not self.is_encoder_decoder:
            return 0
        d, f, mel = self.hidden_size, self.encoder_ffn_dim, self.num_mel_bins
        stem = (mel * d * 3 + d) + (d * d * 3 + d)
        layer = (4 * d * d + 3 * d) + (2 * d * f + f + d) + 2 * 2 * d
        return stem + self.encoder_positions * d + self.encoder_layers * layer + 2 * d

    def _encoder_decoder_parts(self) -> list:
        """(part, total, active) of an encoder-decoder. Active: what one decoded token reads. The encoder runs
        once per input window, and cross-attention's k and v project its output once, then sit in the cache."""
        d, v, layers, f = self.hidden_size, self.vocab_size, self.num_hidden_layers, self.intermediate_size
        attn = 4 * d * d + 3 * d  # q, k, v, o; biases on q, v, o
        cross_kv = 2 * d * d + d  # cross-attention's k and v projections (v's bias)
        positions = self.max_position_embeddings * d
        lm_head = 0 if self.tie_word_embeddings else v * d
        return [("audio encoder", self.encoder_params(), 0), ("embedding", v * d, v * d),
                ("positions", positions, positions), ("attention", layers * attn, layers * attn),
                ("cross-attention", layers * attn, layers * (attn - cross_kv)),
                ("dense MLPs", layers * (2 * d * f + f + d), layers * (2 * d * f + f + d)),
                ("norms", (3 * layers + 1) * 2 * d, (3 * layers + 1) * 2 * d), ("LM head", lm_head, lm_head)]

    def _dense_mlp_params(self) -> tuple[int, int]:
        """(matmul weights, biases) of all dense MLPs: one width per layer where `mlp_widths` lists them."""
        moe, free = set(self.moe_layers), set(self.ffn_free_layers)
        dense = [i for i in range(self.num_hidden_layers) if i not in moe and i not in free]
        widths = [self.mlp_widths[i] if self.mlp_widths else self.intermediate_size for i in dense]
        parts = [self._mlp_params(w, self.mlp_bias) for w in widths]
        return sum(m for m, _ in parts), sum(b for _, b in parts)

    def _kv_projection_params(self) -> tuple[int, int]:
        """(matmul, other) weights of one layer's k and v projections (and k's norm): what a KV-sharing layer
        (`kv_shared_layers`) does not have."""
        h, n_kv, d = self.hidden_size, self.num_key_value_heads, self.head_dim
        norm = (n_kv * d if self.qk_norm_all_heads else d) if self.qk_norm else 0
        return 2 * h * n_kv * d, norm + (2 * n_kv * d if self.qkv_bias else 0)

    @property
    def per_layer_embedding_params(self) -> int:
        """Gemma 3n's per-layer embedding table: `per_layer_vocab_size` rows of layers x `per_layer_input_size`
        (each layer reads its own slice; a lookup, like the token embedding). 0 for other models."""
        return self.per_layer_vocab_size * self.num_hidden_layers * self.per_layer_input_size

    def _gemma3n_parts(self) -> list:
        """(part, total, matmul weights) of what Gemma 3n adds to a Gemma-style decoder (transformers'
        Gemma3nTextModel; Google's Gemma 3n overview, ai.google.dev/gemma/docs/gemma-3n):

        - per-layer embeddings (PLE): a second token table (`per_layer_embedding_params`), plus a projection
          of the token embedding h -> layers x p added to it (with an RMSNorm over p); in every layer a gate
          h -> p and a projection p -> h, with an RMSNorm over h, fold the layer's p numbers into the stream;
        - AltUp (Baykal et al. 2023, arXiv:2301.13310) with n copies of the hidden state: n - 1 projections
          h -> h in and n - 1 out, and per layer a router h -> n (with an RMSNorm), prediction coefficients
          n -> n^2, correction coefficients n -> n and an output scale over h;
        - LAuReL (Menghani et al. 2024, arXiv:2411.07501), a low-rank residual per layer: h -> r -> h and an
          RMSNorm over h.
        """
        if not (self.per_layer_input_size or self.altup_inputs or self.laurel_rank):
            return []
        h, layers, p, n, r = (self.hidden_size, self.num_hidden_layers, self.per_layer_input_size,
                              self.altup_inputs, self.laurel_rank)
        ple_proj = h * layers * p
        altup_layer = h * n + n ** 3 + n * n
        return [("per-layer embeddings", self.per_layer_embedding_params, 0),
                ("per-layer inputs", ple_proj + p + layers * (2 * h * p + h), ple_proj + layers * 2 * h * p),
                ("AltUp", 2 * (n - 1) * h * h + layers * (altup_layer + 2 * h) if n else 0,
                 2 * (n - 1) * h * h + layers * altup_layer if n else 0),
                ("LAuReL", layers * (2 * h * r + h) if r else 0, layers * 2 * h * r)]

    def altup_flops_per_token(self) -> int:
        """FLOPs of AltUp's mixing that are not a weight times the token (0 without AltUp): per layer, the
        predicted copies (n vectors of h, mixed by an n x n matrix: 2 n^2 h) and the router's second pass
        (h -> n, run again on the layer's output to correct: 2 h n). The corrections' scaling is elementwise."""
        h, n = self.hidden_size, self.altup_inputs
        return self.num_hidden_layers * (2 * n * n * h + 2 * h * n) if n else 0

    @_once
    def param_breakdown(self) -> tuple[ParamPart, ...]:
        """Where the parameters sit: embedding, attention, dense MLPs, routed experts, shared experts,
        routers, norms, LM head (parts with no weights are left out). Sums to `params()`.
        An encoder-decoder lists its encoder apart ("audio encoder", 0 active: it runs once per
        input window) and its decoder's cross-attention (k and v active 0: see `cross_kv_flops`)."""
        if self.param_counts is not None:
            p = self.param_counts
            return (ParamPart("given as numbers", p.total, p.active),)
        if self.is_encoder_decoder:
            return tuple(ParamPart(name, total, active) for name, total, active in self._encoder_decoder_parts()
                         if total)
        h, v = self.hidden_size, self.vocab_size
        norm = h * (2 if self.norm_bias else 1)
        attn_matmul, attn_other = self._attention_params()
        n = self._layer_counts()
        n_moe, n_dense, n_attn = n["moe"], n["dense"], n["attention"]
        dense_matmul, dense_bias = self._mlp_params(self.intermediate_size, self.mlp_bias)
        expert_matmul, expert_bias = self._mlp_params(self.moe_intermediate_size, self.expert_bias)
        shared_matmul, shared_bias = self._mlp_params(self.shared_expert_intermediate_size, self.mlp_bias)
        router = self.num_experts * h + (self.num_experts if self.router_bias else 0) + (h if self.shared_expert_gate else 0)
        expert = expert_matmul + expert_bias
        layers = self.num_hidden_layers
        attention = n_attn * (attn_matmul + attn_other) - len(self.kv_shared_layers) * sum(self._kv_projection_params())
        if self.mlp_widths:
            dense_matmul, dense_bias = self._dense_mlp_params()
            n_dense = 1
        parts = [
            ("embedding", v * h, v * h),
            ("attention", attention, attention),
            *((f"{_STATE_LABELS[kind]} layers", n[kind] * sum(self._state_params(kind)),
               n[kind] * sum(self._state_params(kind))) for kind in STATE_KINDS),
            ("dense MLPs", n_dense * (dense_matmul + dense_bias + self.mlp_act_params),
             n_dense * (dense_matmul + dense_bias + self.mlp_act_params)),
            ("routed experts", n_moe * self.num_experts * expert, self.routed_experts_per_token * expert),
            ("shared experts", n_moe * (shared_matmul + shared_bias), n_moe * (shared_matmul + shared_bias)),
            ("routers", n_moe * router, n_moe * router),
            ("norms", layers * self.norms_per_layer * norm + norm, layers * self.norms_per_layer * norm + norm),
            ("LM head", (0 if self.tie_word_embeddings else v * h) + (v if self.lm_head_bias else 0),
             (0 if self.tie_word_embeddings else v * h) + (v if self.lm_head_bias else 0)),
            *((name, total, total) for name, total, _ in self._gemma3n_parts()),
        ]
        return tuple(ParamPart(name, total, active) for name, total, active in parts if total)

    @_once
    def params(self) -> ParamCount:
        """Total and per-token active parameter counts (see `ParamCount`).

        The embedding table counts once when tied to the LM head. A multi-token-prediction
        module (DeepSeek-V3's and GLM-4.5's `num_nextn_predict_layers`, used for speculative
        decoding) is not part of the main model, as in transformers, and is not counted;
        nor is a multimodal model's vision tower (`wrapper`): it is `vision_params`, beside these.
        A config built `from_numbers` returns the counts it was given.
        """
        if self.param_counts is not None:
            return self.param_counts
        parts = self.param_breakdown()
        total, active = sum(p.total for p in parts), sum(p.active for p in parts)
        h, v = self.hidden_size, self.vocab_size
        lm_head = 0 if self.tie_word_embeddings else v * h
        if self.is_encoder_decoder:  # per decoded token: LM head, self-attention, cross q and o, fc1 and fc2
            matmul = v * h + self.num_hidden_layers * (4 * h * h + 2 * h * h + 2 * h * self.intermediate_size)
            return ParamCount(total=total, active=active, embedding=v * h, lm_head=lm_head, matmul_active=matmul)
        attn_matmul, _ = self._attention_params()
        n = self._layer_counts()
        n_moe, n_dense = n["moe"], n["dense"]
        matmul = (v * h  # the LM head multiply, tied or not
                  + n["attention"] * attn_matmul - len(self.kv_shared_layers) * self._kv_projection_params()[0]
                  + sum(n[kind] * self._state_params(kind)[0] for kind in STATE_KINDS)
                  + (self._dense_mlp_params()[0] if self.mlp_widths
                     else n_dense * self._mlp_params(self.intermediate_size, False)[0])
                  + sum(m for _, _, m in self._gemma3n_parts())
                  + self.routed_experts_per_token * self._mlp_params(self.moe_intermediate_size, False)[0]
                  + n_moe * (self._mlp_params(self.shared_expert_intermediate_size, False)[0]
                             + self.num_experts * h + (h if self.shared_expert_gate else 0)))
        lm_head = 0 if self.tie_word_embeddings else v * h
        return ParamCount(total=total, active=active, embedding=v * h, lm_head=lm_head, matmul_active=matmul)

    # -- KV cache ------------------------------------------------------------------

    def _mla(self, mla: str) -> str:
        if mla not in MLA_FORMS:
            raise ValueError(f"mla must be one of {MLA_FORMS}, got {mla!r}")
        return mla

    def kv_cache_elements_per_token(self, layer: int | None = None, mla: str = "absorbed") -> int:
        """Numbers cached per token, in one layer (or summed over all layers if `layer` is None).

        Standard and grouped-query attention cache one key and one value vector
        per K/V head: 2 * num_key_value_heads * head_dim, whatever the layer's window.
        Multi-head latent attention (DeepSeek-V2/V3) caches the compressed latent
        (kv_lora_rank) and the one RoPE key shared by all heads (qk_rope_head_dim):
        576 numbers per layer for DeepSeek-V3 (DeepSeek-V2 paper, arXiv:2405.04434,
        section 2.1). DeepSeek's inference code, FlashMLA, vLLM, SGLang and
        transformers 5 all cache this latent: `mla="absorbed"`, the default.
        `mla="expanded"` counts a cache of every head's decompressed key
        (qk_nope + qk_rope) and value (v_head_dim) instead, 40,960 numbers per
        layer for DeepSeek-V3: what the per-head form of attention reads
        (`attention_flops_per_key`), and what transformers 4.x cached.
        """
        per_layer = self._kv_per_attention_layer(mla)
        if layer is None:
            return per_layer * len(self.cached_layers)
        if not (isinstance(layer, int) and not isinstance(layer, bool) and 0 <= layer < self.num_hidden_layers):
            raise ValueError(f"layer must be an int in [0, {self.num_hidden_layers}), got {layer!r}")
        return per_layer if layer in self.cached_layers else 0  # a recurrent or KV-sharing layer caches no keys

    def _kv_per_attention_layer(self, mla: str) -> int:
        mla = self._mla(mla)
        if self.uses_mla:
            if mla == "absorbed":
                return self.kv_lora_rank + self.qk_rope_head_dim
            return self.num_attention_heads * (self.qk_nope_head_dim + self.qk_rope_head_dim + self.v_head_dim)
        return 2 * self.num_key_value_heads * self.head_dim

    def kv_cache_bytes_per_token(self, dtype="bf16", mla: str = "absorbed"):
        """Bytes the KV cache grows by per token, all attention layers (window caps ignored; see `kv_cache_bytes`).

        A recurrent layer's state does not grow with the context: it is in `kv_cache_bytes`, not here.

        Llama-3.1-8B in bf16: 2 (K and V) * 32 layers * 8 KV heads * 128 * 2 bytes = 131072.
        Returns an int when the result is whole (always, except for 4-bit dtypes).
        """
        return _whole(self.kv_cache_elements_per_token(mla=mla) * dtype_bytes("dtype", dtype))

    @cached_property
    def _layer_groups(self) -> tuple[tuple[int, int], ...]:
        """(first layer, how many) per group of layers with the same kind and window (and, for Gemma 3n, whether it
        keeps keys and values of its own): `tokens_held` and `attended_keys` depend on nothing else, so their sums
        over the layers take one term per group (cached: charts and the roofline's searches ask for hundreds of
        contexts)."""
        groups: dict = {}
        shared = set(self.kv_shared_layers)
        for i in range(self.num_hidden_layers):
            key = (self.kinds[i], self.window_of(i), i in shared)
            first, n = groups.get(key, (i, 0))
            groups[key] = (first, n + 1)
        return tuple(groups.values())

    def tokens_held(self, layer: int, context: int) -> int:
        """Tokens layer `layer` keeps in its cache for a sequence of `context` tokens.

        Full attention keeps them all. A sliding-window layer keeps min(context, window)
        (a rolling buffer). A chunked layer (Llama 4) attends only within its chunk, but
        transformers' cache treats it like a window of attention_chunk_size and keeps
        min(context, chunk): what must be reserved per sequence, since a sequence
        passes through chunk ends (vLLM frees finished chunks and holds fewer).
        """
        if self.kinds[layer] not in LAYER_KINDS or layer in self.kv_shared_layers:
            return 0  # a recurrent layer, one with no mixer, or one reading another layer's keys keeps no tokens
        window = self.window_of(layer)
        return context if window is None else min(context, window)

    def state_bytes(self, dtype="bf16", state_dtype=None):
        """Bytes of every recurrent layer's fixed state for one sequence, whatever its length.

        Convolution states in `dtype` (transformers: the model's dtype), recurrent states in
        `state_dtype` (default `self.state_dtype`: transformers keeps Mamba-2's and gated DeltaNet's
        in float32, MiniMax's lightning state in the model's dtype). 0 for a model with no recurrent layers.
        """
        per_element = dtype_bytes("dtype", dtype)
        per_state = self._state_bytes_per_element(dtype, state_dtype)
        conv, rec = self._state_totals
        return _whole(conv * per_element + rec * per_state)

    @cached_property
    def _state_totals(self) -> tuple[int, int]:
        """(convolution, recurrent) state elements of every recurrent layer together (cached: `state_bytes`)."""
        conv = rec = 0
        for i in self.state_layers:
            c, r = self.state_elements(i)
            conv, rec = conv + c, rec + r
        return conv, rec

    def _state_bytes_per_element(self, dtype, state_dtype=None):
        """Bytes of one recurrent-state number: `state_dtype` (default `self.state_dtype`); "model": `dtype`
        (MiniMax's lightning state, which transformers keeps in the model's dtype)."""
        state_dtype = self.state_dtype if state_dtype is None else state_dtype
        return dtype_bytes("dtype", dtype) if state_dtype == "model" else dtype_bytes("state_dtype", state_dtype)

    def kv_cache_bytes(self, context: int, batch: int = 1, dtype="bf16", mla: str = "absorbed", state_dtype=None):
        """The whole per-sequence cache for `batch` sequences of `context` tokens each.

        The KV of the attention layers, summed per layer (`tokens_held`), at `dtype`; plus,
        for a hybrid, every recurrent layer's fixed state (`state_bytes(dtype, state_dtype)`);
        plus, for an encoder-decoder, the fixed cross-attention cache (`cross_kv_bytes(dtype)`;
        its decoder holds at most `max_position_embeddings` tokens: Whisper's 448).
        """
        context = self._decoder_context(context)
        batch = positive_int("batch", batch)
        per_element = dtype_bytes("dtype", dtype)
        per_layer = self._kv_per_attention_layer(mla)
        tokens = sum(n * self.tokens_held(i, context) for i, n in self._layer_groups)  # over every layer
        return _whole((per_layer * tokens * per_element + self.state_bytes(dtype, state_dtype)
                       + self.cross_kv_bytes(dtype)) * batch)

    def cross_kv_bytes(self, dtype="bf16"):
        """An encoder-decoder's cross-attention cache for one sequence: every decoder layer keeps the keys and
        values of all `encoder_positions` encoder outputs (fixed: projected once per input window). 0 otherwise.

        whisper-large-v3 in bf16: 32 layers x 1,500 positions x 2 x 1,280 x 2 bytes = 245.76 MB.
        """
        per_element = dtype_bytes("dtype", dtype)
        return _whole(self.num_hidden_layers * self.encoder_positions * 2 * self.hidden_size * per_element
                      if self.is_encoder_decoder else 0)

    def kv_cache_breakdown(self, context: int, dtype="bf16", mla: str = "absorbed") -> tuple[KVGroup, ...]:
        """The cache of one sequence of `context` tokens, per layer kind (see `KVGroup`); an
        encoder-decoder adds a "cross_attention" group holding `encoder_positions` tokens."""
        context = self._decoder_context(context)
        per_element = dtype_bytes("dtype", dtype)
        per_layer = self._kv_per_attention_layer(mla)
        groups = []
        for kind in LAYER_KINDS:
            layers = [i for i, k in enumerate(self.kinds) if k == kind and i in self.cached_layers]
            if not layers:
                continue
            tokens = self.tokens_held(layers[0], context)
            label = "mla" if self.uses_mla and mla == "absorbed" else kind
            groups.append(KVGroup(label, len(layers), self.window_of(layers[0]), per_layer, tokens,
                                  _whole(len(layers) * per_layer * tokens * per_element)))
        per_state = self._state_bytes_per_element(dtype)
        for kind in STATE_KINDS:
            layers = [i for i in range(self.num_hidden_layers) if self.state_kind(i) == kind]
            if layers:
                conv, rec = self.state_elements(layers[0])
                groups.append(KVGroup(kind, len(layers), None, 0, 0,
                                      _whole(len(layers) * (conv * per_element + rec * per_state)), conv + rec))
        if self.is_encoder_decoder:
            groups.append(KVGroup("cross_attention", self.num_hidden_layers, None, 2 * self.hidden_size,
                                  self.encoder_positions, self.cross_kv_bytes(dtype)))
        return tuple(groups)

    # -- compute ---------------------------------------------------------------------

    def attention_flops_per_key(self, mla: str = "absorbed") -> int:
        """FLOPs one query token spends per cached key in one layer (all heads): scores and weighted sum.

        Per head 2 * d_qk for the score q.k and 2 * d_v for adding p * v. For
        multi-head latent attention the form decides (`mla`):

        - "absorbed" (the default, and what kernels reading the latent cache run:
          FlashMLA, vLLM, SGLang decode): W_UK is folded into the query and W_UV
          into the output, so each head scores against the cached latent and RoPE
          key (d_qk = kv_lora_rank + qk_rope_head_dim = 576 for DeepSeek-V3) and
          sums latents (d_v = kv_lora_rank = 512): 2 H (576 + 512) per key.
        - "expanded": keys and values decompressed per head, as engines run
          prefill (and as transformers 5 attends, after expanding its cached
          latent with kv_b_proj at every step): d_qk = qk_nope + qk_rope = 192,
          d_v = 128, so 2 H (192 + 128) per key for DeepSeek-V3: 3.4x fewer FLOPs
          per key than absorbed, but keys and values 71x larger than the latent.

        The folded matrices cost the same per token either way (2 x the kv_b_proj
        weights), so they sit in `params().matmul_active`, not here. (Re-expanding
        a latent cache at every decode step, as transformers 5 does, costs another
        2 x kv_b_proj weights per cached key and step, which neither form counts.)
        """
        mla = self._mla(mla)
        if self.uses_mla and mla == "absorbed":
            d_qk, d_v = self.kv_lora_rank + self.qk_rope_head_dim, self.kv_lora_rank
        elif self.uses_mla:
            d_qk, d_v = self.qk_nope_head_dim + self.qk_rope_head_dim, self.v_head_dim
        else:
            d_qk = d_v = self.head_dim
        return 2 * self.num_attention_heads * (d_qk + d_v)

    def attended_keys(self, layer: int, context: int) -> int:
        """Keys the newest of `context` tokens attends to in layer `layer`, itself included.

        Full attention: context; sliding window w: min(context, w); chunked attention
        with chunk c: the tokens of the current chunk so far, ((context - 1) mod c) + 1.
        """
        kind, window = self.kinds[layer], self.window_of(layer)
        if kind not in LAYER_KINDS:
            return 0
        if window is None:
            return context
        if kind == "chunked_attention":
            return (context - 1) % window + 1
        return min(context, window)

    def attention_flops_per_token(self, context: int, mla: str = "absorbed") -> int:
        """FLOPs of the score (q k^T) and value (p V) products for one new token.

        The token attends to `context` keys, itself included, capped by each
        layer's window or chunk (`attended_keys`), at `attention_flops_per_key(mla)` each;
        an encoder-decoder's token also attends to all `encoder_positions` in every decoder layer.
        """
        context = self._decoder_context(context)
        per_key = self.attention_flops_per_key(mla)
        cross = self.num_hidden_layers * self.encoder_positions if self.is_encoder_decoder else 0
        return per_key * (sum(n * self.attended_keys(i, context) for i, n in self._layer_groups) + cross)  # every layer

    def prefill_attention_flops(self, prompt_tokens: int, mla: str = "absorbed") -> int:
        """sum over positions 1..P of `attention_flops_per_token`: the attention of a causal prefill.

        In closed form per layer: full P(P+1)/2 keys; sliding w: P(P+1)/2 up to w,
        then w(w+1)/2 + (P - w) w; chunked c: q c(c+1)/2 + r(r+1)/2 with P = q c + r.
        """
        P = positive_int("prompt_tokens", prompt_tokens)
        per_key = self.attention_flops_per_key(mla)
        if self.is_encoder_decoder:
            self._decoder_context(P)
        keys = P * self.num_hidden_layers * self.encoder_positions if self.is_encoder_decoder else 0  # cross
        for i in self.attention_layers:
            kind, w = self.kinds[i], self.window_of(i)
            if w is None or (kind == "sliding_attention" and P <= w):
                keys += P * (P + 1) // 2
            elif kind == "sliding_attention":
                keys += w * (w + 1) // 2 + (P - w) * w
            else:
                q, r = divmod(P, w)
                keys += q * w * (w + 1) // 2 + r * (r + 1) // 2
        return per_key * keys

    def state_flops_per_token(self) -> int:
        """FLOPs of one recurrent step in every recurrent layer: `STATE_FLOPS_PER_ELEMENT` per state number.

        Independent of the context: a Mamba-2 or gated DeltaNet layer's work is linear in
        the sequence length (its projections and convolution are in `params().matmul_active`).
        """
        return sum(STATE_FLOPS_PER_ELEMENT[self.state_kind(i)] * self.state_elements(i)[1] for i in self.state_layers)

    def flops_per_token(self, context: int, mla: str = "absorbed") -> int:
        """FLOPs to decode one token whose attention sees `context` keys (itself included).

        The convention, for every family: a multiply-add is 2 FLOPs; the count is
        2 * `params().matmul_active` (every weight the token multiplies by: the k routed
        experts of a MoE layer, not all of them; the LM head, tied or not; convolution
        taps; not the embedding lookup) plus `attention_flops_per_token(context, mla)`
        (scores and weighted sums over the keys each attention layer sees) plus
        `state_flops_per_token()` (the recurrent steps of a hybrid's Mamba-2 or DeltaNet
        layers) plus `altup_flops_per_token()` (Gemma 3n's mixing of its AltUp copies).
        Norms, RoPE, softmax, activations, gates and the router's top-k are
        left out (a fraction of a percent). `prefill_flops(N)` sums it over positions 1..N.
        """
        return (2 * self.params().matmul_active + self.attention_flops_per_token(context, mla)
                + self.state_flops_per_token() + self.altup_flops_per_token())

    def prefill_flops(self, prompt_tokens: int, mla: str = "absorbed") -> int:
        """FLOPs of a causal prefill of `prompt_tokens` tokens: sum of `flops_per_token` over positions 1..P.

        An encoder-decoder's prefill also runs what happens once per input window, before the first
        token: the encoder (`encoder_flops`) and cross-attention's k and v projections of its output
        (`cross_kv_flops`). Decoding then costs `flops_per_token` per token, encoder excluded.

        A hybrid's Mamba-2 or gated DeltaNet layers count the recurrence, `state_flops_per_token()` per
        position, as if the prompt were decoded token by token. transformers' torch prefill (the path
        without CUDA kernels) runs chunked algorithms instead, which reach the same output by other
        products: Mamba-2's SSD (chunks of Q = chunk_size, nc = ceil(P / Q)) multiplies
        2H [nc Q^2 (n + p) + 2 nc Q p n + (nc + 1)^2 p n] per layer for H heads of p values and state n,
        the chunked delta rule 2 Hv nc Q (2 Q dk + 3 dk dv + Q dv) with Q = 64, against the
        convention's 5 H p n P and 7 Hv dk dv P; both stay linear in P across chunks, quadratic only
        within one. The padded causal conv also computes conv_kernel - 1 outputs it drops.
        tests/test_model_families.py checks each term exactly against FlopCounterMode.
        """
        P = positive_int("prompt_tokens", prompt_tokens)
        return ((2 * self.params().matmul_active + self.state_flops_per_token() + self.altup_flops_per_token()) * P
                + self.prefill_attention_flops(P, mla) + self.encoder_flops() + self.cross_kv_flops())

    def encoder_flops(self) -> int:
        """FLOPs of one encoder pass over an input window (Whisper: 30 s of audio); 0 for a decoder-only model.

        The convention of `flops_per_token`: the conv stem (2 x taps x in x out channels per output
        position: 2 x 1,500 positions from conv1, 1,500 from conv2 at stride 2), 2 x the matmul
        weights of each layer per position, and attention in both directions: each of the
        `encoder_positions` positions attends to all of them at 2 H (d_head + d_head) = 4 d per key.
        whisper-large-v3: 2.27 TFLOPs per 30 s window (2.7 times the 0.84 TFLOPs of decoding all 448 tokens).
        """
        if not self.is_encoder_decoder:
            return 0
        d, f, mel, S = self.hidden_size, self.encoder_ffn_dim, self.num_mel_bins, self.encoder_positions
        stem = 2 * (2 * S) * 3 * mel * d + 2 * S * 3 * d * d
        per_layer = S * 2 * (4 * d * d + 2 * d * f) + 4 * d * S * S
        return stem + self.encoder_layers * per_layer

    def cross_kv_flops(self) -> int:
        """FLOPs of projecting the encoder output to every decoder layer's cross-attention keys and values,
        once per input window (they are then cached): 2 x 2 d^2 per layer and encoder position; 0 otherwise."""
        if not self.is_encoder_decoder:
            return 0
        return self.num_hidden_layers * self.encoder_positions * 2 * 2 * self.hidden_size ** 2

    def weights_bytes(self, dtype="bf16"):
        """Bytes to hold every weight (`params().total`) at `dtype`."""
        return _whole(self.params().total * dtype_bytes("dtype", dtype))


_STATE_LABELS = {"mamba2": "Mamba-2", "gated_deltanet": "gated DeltaNet", "short_conv": "short convolution",
                 "lightning": "lightning attention", "mamba1": "Mamba-1"}


def _whole(x):
    return int(x) if float(x).is_integer() else float(x)


# -----------------------------------------------------------------------------
# reading config.json


class _Reader:
    """Reads one config dict for one family: each key checked, absent keys defaulted (and recorded)."""

    def __init__(self, c: dict, fam: Family, where: str):
        self.c, self.fam, self.where, self.defaulted = c, fam, where, []
        aliases = dict(fam.aliases)
        for alias, canonical in aliases.items():  # two names for one field must agree
            if alias in c and canonical in c and c[alias] != c[canonical]:
                raise ValueError(f"{where}: {alias!r} ({c[alias]!r}) and {canonical!r} ({c[canonical]!r}) "
                                 f"name the same field of {fam.config_class} and must agree")
        self.alias_of = {canonical: alias for alias, canonical in aliases.items()}
        self.renamed_to = {key: old for old, key in fam.renamed}  # field -> the old key read in its place

    def name(self, key: str) -> str:
        return f"{self.where}[{key!r}]"

    def has(self, key: str) -> bool:
        alias = self.alias_of.get(key)
        return (key in self.c and self.c[key] is not None) or (alias is not None and self.c.get(alias) is not None)

    def raw(self, key: str, *, null_is_value: bool = False):
        """The value in the config, else the family default (recorded as defaulted); None if neither.

        An explicit null counts as absent, except where null means "off" (`null_is_value`:
        sliding_window, q_lora_rank, attention_chunk_size) and for required whole numbers (`int`).
        """
        for k in (self.renamed_to.get(key), key, self.alias_of.get(key)):
            if k is not None and k in self.c and (self.c[k] is not None or null_is_value):
                return self.c[k]
        if key not in self.fam.defaults:
            return None
        value = self.fam.defaults[key]
        if value is not None and key not in self.defaulted:
            self.defaulted.append(key)
        return value

    def is_null(self, key: str) -> bool:
        return any(k is not None and k in self.c and self.c[k] is None
                   for k in (self.renamed_to.get(key), key, self.alias_of.get(key)))

    def int(self, key: str, *, zero: bool = False, derived=None, optional: bool = False,
            null_is_value: bool = False) -> int | None:
        """A whole number >= 1 (>= 0 with zero=True). derived: the value when config and default give none."""
        if self.is_null(key) and not (null_is_value or optional or derived is not None):
            raise TypeError(f"{self.name(key)} must be a whole number, got null")
        value = self.raw(key, null_is_value=null_is_value)
        if value is None:
            if derived is not None or optional:
                return derived
            raise ValueError(f"{self.where} is missing {key!r} (needed for {self.fam.label}; "
                             f"{self.fam.config_class} has no default for it)")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{self.name(key)} must be a whole number, got {value!r}")
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise TypeError(f"{self.name(key)} must be a whole number, got {value!r}")
        value = int(value)
        if value < (0 if zero else 1):
            raise ValueError(f"{self.name(key)} must be {'>= 0' if zero else '>= 1'}, got {value}")
        return value

    def bool(self, key: str, default: bool = False) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise TypeError(f"{self.name(key)} must be true or false (a JSON boolean), got {value!r}"
                            + (" (a string)" if isinstance(value, str) else ""))
        return value

    def real(self, key: str) -> float | None:
        value = self.raw(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{self.name(key)} must be a number, got {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{self.name(key)} must be a finite number > 0, got {value!r}")
        return float(value)

    def int_list(self, key: str, length: int | None = None, *, low: int = 0, high: int | None = None) -> list | None:
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
            raise TypeError(f"{self.name(key)} must be a list of whole numbers, got {value!r}")
        if length is not None and len(value) != length:
            raise ValueError(f"{self.name(key)} must have one entry per layer ({length}), got {len(value)}")
        bad = [x for x in value if x < low or (high is not None and x > high)]
        if bad:
            where = f"in [{low}, {high}]" if high is not None else f">= {low}"
            raise ValueError(f"{self.name(key)} entries must be {where}, got {bad[0]}")
        return value

    def layer_types(self, layers: int) -> list | None:
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


def _resolve_class(c: dict) -> tuple[str, Family]:
    """The architecture class name and its family; refuses unsupported classes first, by name."""
    archs = c.get("architectures")
    if archs is None or archs == []:
        model_type = c.get("model_type")
        fam = _BY_MODEL_TYPE.get(model_type) if isinstance(model_type, str) else None
        if fam is not None:
            cls = {"gemma3": "Gemma3ForConditionalGeneration", "llama4": "Llama4ForConditionalGeneration",
                   "qwen3_5": "Qwen3_5ForConditionalGeneration",
                   "qwen3_5_moe": "Qwen3_5MoeForConditionalGeneration",
                   "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration", "qwen3_vl": "Qwen3VLForConditionalGeneration",
                   "qwen3_vl_moe": "Qwen3VLMoeForConditionalGeneration",
                   "mistral3": "Mistral3ForConditionalGeneration",
                   "gemma3n": "Gemma3nForConditionalGeneration"}.get(model_type, fam.classes[0])
            return cls, _text_family(c, cls, fam)
        else:
            raise ValueError("config must have an 'architectures' list naming the model class, e.g. "
                             "['LlamaForCausalLM'], or the model_type of a supported family "
                             f"({', '.join(sorted(_BY_MODEL_TYPE))}); got model_type {model_type!r}")
    if not (isinstance(archs, list) and isinstance(archs[0], str)):
        raise TypeError(f"config['architectures'] must be a list of class names, got {archs!r}")
    arch = archs[0]
    fam = _BY_CLASS.get(arch)
    if fam is None:
        try:
            described = describe_architecture(arch)
            what = f"family {described.family}, {described.task}"
        except ValueError:
            what = "not a transformers class name"
        causal = "" if arch.endswith("ForCausalLM") else (" (only decoder-only causal LMs, their multimodal wrappers "
                                                           "and Whisper's encoder-decoder are read)")
        raise ValueError(f"config: architecture {arch!r} ({what}) is not supported{causal}; "
                         f"supported families: {_SUPPORTED_TEXT}")
    return arch, _text_family(c, arch, fam)


def _text_family(c: dict, arch: str, fam: Family) -> Family:
    """The family of a wrapper's language model where the wrapper takes several (named by text_config's model_type)."""
    if arch not in _TEXT_TYPES:
        return fam
    text, types = c.get("text_config"), _TEXT_TYPES[arch]
    model_type = text.get("model_type", types[0]) if isinstance(text, dict) else types[0]
    if model_type not in types:
        raise ValueError(f"config['text_config']['model_type'] must name a language model {arch} is read with "
                         f"({', '.join(types)}), got {model_type!r}")
    return _BY_MODEL_TYPE[model_type]


def _parse(c: dict, name: str | None) -> dict:
    arch, fam = _resolve_class(c)
    described = describe_architecture(arch)
    if fam.layout == "encoder_decoder":
        return _encoder_decoder(c, fam, arch, described, name)
    text, where = c, "config"
    if arch in _WRAPPER_TEXT_DEFAULTS and c.get("text_config") is None:  # the wrapper's own defaults for its LM
        fam = replace(fam, defaults={**fam.defaults, **_WRAPPER_TEXT_DEFAULTS[arch]})
    if arch in _WRAPPERS:
        text = c.get("text_config", c if arch in _FLAT_TEXT else {})
        if not isinstance(text, dict):
            raise TypeError(f"config['text_config'] must be a JSON object, got {type(text).__name__}")
        where = "config['text_config']" if text is not c else "config"
    if fam.model_type == "gemma3_text" and text.get("use_bidirectional_attention"):
        raise ValueError(f"{where}['use_bidirectional_attention'] is true: a bidirectional (embedding) model, "
                         "not a causal LM")
    r = _Reader(text, fam, where)
    mt = fam.model_type
    hidden, heads = r.int("hidden_size"), r.int("num_attention_heads")
    # NemotronH: as many layers as its pattern lists (transformers ignores num_hidden_layers)
    layers = len(_nemotron_blocks(r)) if fam.layout == "nemotron_h" else r.int("num_hidden_layers")
    vocab = r.int("vocab_size")
    kv_heads = r.int("num_key_value_heads", derived=heads)
    if heads % kv_heads:
        raise ValueError(f"{where}: num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads})")
    head_dim = r.int("head_dim", derived=hidden // heads)  # transformers floors hidden / heads
    if mt == "olmoe" and head_dim * heads != hidden:  # its q/k norms span hidden_size; transformers fails otherwise
        raise ValueError(f"{where}['head_dim'] must be hidden_size / num_attention_heads = {hidden / heads:g} "
                         f"for OLMoE (its q and k norms span hidden_size), got {head_dim}")
    eps_key = fam.eps_key
    max_pos = r.int("max_position_embeddings", optional=True)
    eps = r.real(eps_key)
    rope_theta, rope_scaling = _rope(text, where)
    if arch in _WRAPPERS and _WRAPPERS[arch][0] == "outer":  # Gemma 3: the outer config ties the LM head
        value = c.get("tie_word_embeddings", _WRAPPERS[arch][1])
        if not isinstance(value, bool):
            raise TypeError(f"config['tie_word_embeddings'] must be true or false (a JSON boolean), got {value!r}")
        tie = value
    elif arch in _WRAPPERS and _WRAPPERS[arch][0] == "mistral3":  # see _WRAPPERS
        value = c.get("tie_word_embeddings")
        if value is not None and not isinstance(value, bool):
            raise TypeError(f"config['tie_word_embeddings'] must be true or false (a JSON boolean), got {value!r}")
        tie = (value if value is not None else r.bool("tie_word_embeddings") if c.get("text_config") is not None
               else _WRAPPERS[arch][1])
    else:
        tie = r.bool("tie_word_embeddings")
    widths = _mlp_widths(r, layers) if fam.layout == "gemma3n" else ()
    fields = dict(
        name=name or c.get("_name") or arch, architecture=arch, model_type=text.get("model_type") or c.get("model_type") or mt,
        family=described.family, task=described.task, vocab_size=vocab, hidden_size=hidden,
        intermediate_size=(max(widths) if widths else
                           r.int("intermediate_size", optional=fam.experts == "every_layer_shared") or 0),
        num_hidden_layers=layers, num_attention_heads=heads,
        num_key_value_heads=kv_heads, head_dim=head_dim, max_position_embeddings=max_pos,
        rms_norm_eps=eps if eps is not None else 1e-6, rope_theta=rope_theta, rope_scaling=rope_scaling,
        tie_word_embeddings=tie, source=c.get("_source", ""), family_label=fam.label,
        wrapper=arch if arch in _WRAPPERS else "", raw=dict(c),
    )
    fields.update(_attention_layout(r, fam))
    fields.update(_layer_kinds(r, fam, layers))
    fields.update(_experts(r, fam, layers, fields["intermediate_size"]))
    fields.update(_state_fields(r, fam), mlp_gated=fam.mlp_gated, attn_output_gate=fam.attn_output_gate,
                  mlp_act_params=fam.mlp_act_params)
    if fam.mla:
        fields.update(_mla(r))
    if fam.layout == "gemma3n":
        fields.update(_gemma3n(r, layers, fields["layer_types"]), mlp_widths=widths)
    fields["defaulted"] = tuple(r.defaulted)
    if arch in _TOWERS:
        fields.update(_vision_tower(c, arch, hidden))
    return fields


def _vision_tower(c: dict, arch: str, text_hidden: int) -> dict:
    """A wrapper's vision tower: its parameters (encoder and projector) from `vision_config`, as transformers builds
    them; a key the vision config leaves out takes its config class's default (listed in `vision_defaulted`)."""
    vision = c.get("vision_config", {})
    if vision is None:
        vision = {}
    if not isinstance(vision, dict):
        raise TypeError(f"config['vision_config'] must be a JSON object, got {type(vision).__name__}")
    rule, tower = _TOWERS[arch]
    if arch in _WRAPPER_VISION_DEFAULTS and c.get("vision_config") is None:
        tower = replace(tower, defaults={**tower.defaults, **_WRAPPER_VISION_DEFAULTS[arch]})
    if rule == "gemma3n":
        return _gemma3n_towers(c, tower, text_hidden)
    r = _Reader(vision, tower, "config['vision_config']")
    n = _TOWER_RULES[rule](r, text_hidden, c)
    return dict(vision_params=n, vision_defaulted=tuple(r.defaulted))


def _sub_config(c: dict, key: str) -> dict:
    value = c.get(key) or {}
    if not isinstance(value, dict):
        raise TypeError(f"config[{key!r}] must be a JSON object, got {type(value).__name__}")
    return value


def _pairs(r: _Reader, key: str) -> list:
    """Two (height, width) pairs: the kernel or stride sizes of Gemma 3n's two audio stem convolutions."""
    value = r.raw(key)
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                 and x >= 1 for x in p) for p in value)):
        raise ValueError(f"{r.name(key)} must be two [height, width] pairs of whole numbers >= 1, got {value!r}")
    return [tuple(p) for p in value]


def _gemma3n_towers(c: dict, audio_fam: Family, text_hidden: int) -> dict:
    """Gemma 3n's audio tower and its two multimodal embedders, as transformers 5 builds them.

    The audio encoder (a USM-style Conformer; transformers' Gemma3nAudioEncoder), width D, H heads, L blocks:
    a stem of two bias-free 2-D convolutions (1 -> c0 -> c1 channels over time x frequency, each followed by
    a norm of one scale per channel; frequency padded by 1 on each side), then a linear map of c1 x (frequency
    bins left) -> D; each block has two feed-forward halves (RMSNorm, D -> 4D -> D, RMSNorm: 8 D^2 + 2 D each),
    attention (RMSNorm, q, k, v, a relative-position projection and the output, all D x D, a per-dim scale of
    D / H, RMSNorm), a light convolution (RMSNorm, D -> 2D gated, a depthwise conv of `conf_conv_kernel_size`
    taps, RMSNorm, D -> D) and a closing RMSNorm: 24 D^2 + 9 D + D / H + D k. Each embedder: its vocabulary's
    table (vocab x width), two RMSNorms over the width (hard and soft tokens), a projection width -> text hidden
    (its closing norm has no scale). The vision tower itself, a timm MobileNetV5 (`vision_config['architecture']`),
    is not counted: it is named in `towers_uncounted`.
    """
    audio, vision = _sub_config(c, "audio_config"), _sub_config(c, "vision_config")
    a = _Reader(audio, audio_fam, "config['audio_config']")
    v = _Reader(vision, _GEMMA3N_VISION, "config['vision_config']")
    d, heads, blocks, k = (a.int("hidden_size"), a.int("conf_num_attention_heads"), a.int("conf_num_hidden_layers"),
                           a.int("conf_conv_kernel_size"))
    channels = a.raw("sscp_conv_channel_size")
    if not (isinstance(channels, (list, tuple)) and len(channels) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in channels)):
        raise ValueError(f"{a.name('sscp_conv_channel_size')} must be two whole numbers >= 1, got {channels!r}")
    kernels, strides = _pairs(a, "sscp_conv_kernel_size"), _pairs(a, "sscp_conv_stride_size")
    freq, stem, c_in = a.int("input_feat_size"), 0, 1
    for c_out, (kh, kw), (_, sw) in zip(channels, kernels, strides, strict=True):
        stem += c_out * c_in * kh * kw + c_out
        freq, c_in = (freq + 2 - kw) // sw + 1, c_out
    if freq < 1:
        raise ValueError(f"{a.name('input_feat_size')}: the stem's convolutions leave no frequency bins")
    encoder = stem + channels[-1] * freq * d + blocks * (24 * d * d + 9 * d + d // heads + d * k)

    def embedder(vocab: int, width: int) -> int:
        return vocab * width + 2 * width + width * text_hidden

    vision_width = v.int("hidden_size")
    arch = v.raw("architecture")
    n = encoder + embedder(a.int("vocab_size"), d) + embedder(v.int("vocab_size"), vision_width)
    return dict(vision_params=n, vision_defaulted=tuple(a.defaulted + v.defaulted),
                towers_uncounted=(f"vision tower (timm {arch!r}, a MobileNetV5)",))


def _siglip_tower(r: _Reader, text_hidden: int, _outer: dict) -> int:
    """Gemma 3: SigLIP (Zhai et al. 2023): a patch conv with bias, a learned position per patch, pre-LayerNorm
    blocks (q, k, v, o and fc1, fc2, all with biases; two LayerNorms), a final LayerNorm, an optional attention-pooling
    head; then the projector: an RMSNorm over the vision width and a (vision x text) matrix."""
    d, ff, layers = r.int("hidden_size"), r.int("intermediate_size"), r.int("num_hidden_layers")
    ch, image, patch = r.int("num_channels"), r.int("image_size"), r.int("patch_size")
    mlp = 2 * d * ff + ff + d
    n = ch * patch * patch * d + d + (image // patch) ** 2 * d + layers * (4 * d * d + 4 * d + mlp + 4 * d) + 2 * d
    if r.bool("vision_use_head"):  # a probe, multi-head attention pooling, a LayerNorm and an MLP
        n += d + (4 * d * d + 4 * d) + 2 * d + mlp
    return n + d + d * text_hidden


def _llama4_tower(r: _Reader, text_hidden: int, _outer: dict) -> int:
    """Llama 4: a bias-free patch projection, a class embedding, one position per patch and the class, LayerNorms
    before and after, blocks with biased q, k, v, o and fc1, fc2 and two LayerNorms; a pixel-shuffle adapter of two
    bias-free layers (intermediate -> projector_input -> projector_output); the projector (vision_output_dim -> text)."""
    d, ff, layers = r.int("hidden_size"), r.int("intermediate_size"), r.int("num_hidden_layers")
    ch, image, patch = r.int("num_channels"), r.int("image_size"), r.int("patch_size")
    p_in, p_out, out = r.int("projector_input_dim"), r.int("projector_output_dim"), r.int("vision_output_dim")
    blocks = layers * (4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d)
    n = ch * patch * patch * d + d + ((image // patch) ** 2 + 1) * d + 4 * d + blocks + ff * p_in + p_in * p_out
    return n + out * text_hidden + (text_hidden if r.bool("multi_modal_projector_bias") else 0)


def _qwen_vl_tower(r: _Reader, text_hidden: int, *, gated: bool, layernorm: bool, positions: bool) -> int:
    """Qwen-VL towers: a 3-D patch conv (temporal x spatial patches), blocks of fused qkv and proj with biases and an MLP
    with biases, and a merger that concatenates spatial_merge_size^2 neighbours and projects them (two biased
    layers) to out_hidden_size, after a norm. Qwen2.5-VL: RMSNorms, a gated MLP, a bias-free conv; Qwen3.5:
    LayerNorms, an ungated MLP, a biased conv and learned positions."""
    d, ff, depth = r.int("hidden_size"), r.int("intermediate_size"), r.int("depth")
    ch, patch, frames = r.int("in_channels"), r.int("patch_size"), r.int("temporal_patch_size")
    merged, out = d * r.int("spatial_merge_size") ** 2, r.int("out_hidden_size")
    norm = 2 * d if layernorm else d
    mlp = 3 * d * ff + 2 * ff + d if gated else 2 * d * ff + ff + d
    n = ch * frames * patch * patch * d + (0 if gated else d)
    n += r.int("num_position_embeddings") * d if positions else 0
    n += depth * (2 * norm + 3 * d * d + 3 * d + d * d + d + mlp)
    return n + norm + merged * merged + merged + merged * out + out


def _qwen3_vl_tower(r: _Reader, text_hidden: int, _outer: dict) -> int:
    """Qwen3-VL: the Qwen3.5 tower (LayerNorms, an ungated MLP, a biased conv, learned positions) plus one DeepStack
    merger per `deepstack_visual_indexes` entry: the hidden states of those blocks are merged (a LayerNorm over the
    concatenated neighbours, then the two biased layers) and added into the first language-model layers."""
    indexes = r.raw("deepstack_visual_indexes")
    if not isinstance(indexes, list | tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
        raise TypeError(f"{r.name('deepstack_visual_indexes')} must be a list of block indices, got {indexes!r}")
    merged, out = r.int("hidden_size") * r.int("spatial_merge_size") ** 2, r.int("out_hidden_size")
    deepstack = 2 * merged + merged * merged + merged + merged * out + out
    return _qwen_vl_tower(r, text_hidden, gated=False, layernorm=True, positions=True) + len(indexes) * deepstack


def _pixtral_tower(r: _Reader, text_hidden: int, outer: dict) -> int:
    """Mistral 3: Pixtral (a bias-free patch conv, an RMSNorm before the blocks, blocks of two RMSNorms, bias-free q, k,
    v, o and a gated bias-free MLP; 2-D RoPE, no learned positions) and the wrapper's projector: an RMSNorm over the
    vision width, a patch merger (spatial_merge_size^2 neighbours -> the vision width, no bias), then two layers to the
    language model's width (with biases if multimodal_projector_bias), the first reading one vision width per layer
    named in vision_feature_layer."""
    d, ff, layers = r.int("hidden_size"), r.int("intermediate_size"), r.int("num_hidden_layers")
    ch, patch = r.int("num_channels"), r.int("patch_size")
    tower = ch * patch * patch * d + d + layers * (2 * d + 4 * d * d + 3 * d * ff)
    p = _Reader(outer, _PROJECTORS["Mistral3ForConditionalGeneration"], "config")
    merge, bias = p.int("spatial_merge_size"), p.bool("multimodal_projector_bias")
    layer = p.raw("vision_feature_layer")
    if isinstance(layer, list) and layer and all(isinstance(i, int) and not isinstance(i, bool) for i in layer):
        read = len(layer)
    elif isinstance(layer, int) and not isinstance(layer, bool):
        read = 1
    else:
        raise TypeError(f"config['vision_feature_layer'] must be a layer index or a list of them, got {layer!r}")
    projector = d + d * merge * merge * d + d * read * text_hidden + text_hidden * text_hidden
    return tower + projector + (2 * text_hidden if bias else 0)


_TOWER_RULES = {"siglip": _siglip_tower, "llama4": _llama4_tower,
                "qwen2_5_vl": lambda r, h, _c: _qwen_vl_tower(r, h, gated=True, layernorm=False, positions=False),
                "qwen3_5": lambda r, h, _c: _qwen_vl_tower(r, h, gated=False, layernorm=True, positions=True),
                "qwen3_vl": _qwen3_vl_tower, "pixtral": _pixtral_tower}


def _encoder_decoder(c: dict, fam: Family, arch: str, described: Architecture, name: str | None) -> dict:
    """Whisper: the decoder's sizes in the decoder-only fields, the encoder's in `encoder_*`.

    The decoder has `decoder_layers` blocks of self-attention, cross-attention and an ungated
    MLP (fc1, GELU, fc2), learned positions for `max_target_positions` tokens, and LayerNorms
    with biases (three per block); the encoder sees `max_source_positions` positions.
    """
    r = _Reader(c, fam, "config")
    d = r.int("d_model")
    heads = {key: r.int(key) for key in ("decoder_attention_heads", "encoder_attention_heads")}
    for key, h in heads.items():
        if d % h:
            raise ValueError(f"config[{key!r}] ({h}) must divide d_model ({d}): each head is d_model / heads wide")
    dec_heads = heads["decoder_attention_heads"]
    layers = r.int("decoder_layers")
    return dict(
        name=name or c.get("_name") or arch, architecture=arch, model_type=fam.model_type, family=described.family,
        task=described.task, vocab_size=r.int("vocab_size"), hidden_size=d, intermediate_size=r.int("decoder_ffn_dim"),
        num_hidden_layers=layers, num_attention_heads=dec_heads, num_key_value_heads=dec_heads,
        head_dim=d // dec_heads, max_position_embeddings=r.int("max_target_positions"), rms_norm_eps=1e-5,
        tie_word_embeddings=r.bool("tie_word_embeddings"), qkv_bias=True, o_bias=True, mlp_bias=True,
        norm_bias=True, norms_per_layer=3, mlp_gated=False, layer_types=("full_attention",) * layers,
        encoder_layers=r.int("encoder_layers"), encoder_attention_heads=heads["encoder_attention_heads"],
        encoder_ffn_dim=r.int("encoder_ffn_dim"), encoder_positions=r.int("max_source_positions"),
        num_mel_bins=r.int("num_mel_bins"), source=c.get("_source", ""), family_label=fam.label, raw=dict(c),
        defaulted=tuple(r.defaulted))


def _switch(r: _Reader, trait: bool | str) -> bool:
    """A trait's value: fixed by the class (a bool) or read from the config key it names."""
    return trait if isinstance(trait, bool) else r.bool(trait)


def _attention_layout(r: _Reader, fam: Family) -> dict:
    """Biases, q/k norms, norm layout and sinks: the family's traits, switched by its config keys."""
    return dict(qkv_bias=_switch(r, fam.qkv_bias), o_bias=_switch(r, fam.o_bias), mlp_bias=_switch(r, fam.mlp_bias),
                lm_head_bias=_switch(r, fam.lm_head_bias), norm_bias=fam.norm_bias, qk_norm=_switch(r, fam.qk_norm),
                qk_norm_all_heads=fam.qk_norm_all_heads, norms_per_layer=fam.norms_per_layer,
                attention_sinks=fam.attention_sinks)


# Layer layouts: each returns (kind per layer, sliding window, attention chunk) as the family's
# transformers classes decide them. `given` is the config's `layer_types` list (None if absent).

def _one_window(r: _Reader, layers: int, given) -> tuple:
    """One window for every layer, if set (Mistral, Mixtral, Phi-3)."""
    window = r.int("sliding_window", optional=True, null_is_value=True)
    return ["sliding_attention" if window else "full_attention"] * layers, window, None


def _qwen_window(r: _Reader) -> int | None:
    on = r.bool("use_sliding_window")
    return r.int("sliding_window", optional=True, null_is_value=True) if on else None


def _qwen(r: _Reader, layers: int, given) -> tuple:
    """Qwen2, Qwen3: sliding from layer `max_window_layers` on, when `use_sliding_window`."""
    window = _qwen_window(r)
    if given is not None:
        return given, window, None
    start = r.int("max_window_layers", zero=True)
    return ["sliding_attention" if window and i >= start else "full_attention" for i in range(layers)], window, None


def _dots1(r: _Reader, layers: int, given) -> tuple:
    """dots.llm1: sliding from layer `max_window_layers` on whenever `sliding_window` is set (no on/off key)."""
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if given is not None:
        return given, window, None
    start = r.int("max_window_layers", zero=True)
    return ["sliding_attention" if window and i >= start else "full_attention" for i in range(layers)], window, None


def _qwen2_moe(r: _Reader, layers: int, given) -> tuple:
    """Qwen2-MoE (transformers): every other layer below `max_window_layers` slides."""
    window = _qwen_window(r)
    if given is not None:
        return given, window, None
    start = r.int("max_window_layers", zero=True)
    return (["sliding_attention" if window and (i + 1) % 2 and i < start else "full_attention" for i in range(layers)],
            window, None)


def _qwen3_moe(r: _Reader, layers: int, given) -> tuple:
    """Qwen3-MoE: every layer slides when `use_sliding_window` (its config has no layer_types)."""
    window = _qwen_window(r)
    return ["sliding_attention" if window else "full_attention"] * layers, window, None


def _alternating(r: _Reader, layers: int, given, every: int = 2) -> tuple:
    """Gemma 2, gpt-oss: one full layer in `every` (2), the others sliding."""
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if given is not None:
        return given, window, None
    return ["sliding_attention" if (i + 1) % every else "full_attention" for i in range(layers)], window, None


def _gemma3(r: _Reader, layers: int, given) -> tuple:
    """Gemma 3: one full layer in `sliding_window_pattern`."""
    return _alternating(r, layers, given, every=r.int("sliding_window_pattern") if given is None else 2)


def _smollm3(r: _Reader, layers: int, given) -> tuple:
    """SmolLM3: the RoPE layers slide (when `use_sliding_window`), the NoPE layers see everything."""
    window = _qwen_window(r)
    if given is not None:
        return given, window, None
    rope = _no_rope_layers(r, layers)
    return ["sliding_attention" if window and not rope[i] else "full_attention" for i in range(layers)], window, None


def _llama4(r: _Reader, layers: int, given) -> tuple:
    """Llama 4: RoPE layers attend within chunks of `attention_chunk_size`; NoPE layers globally."""
    chunk = r.int("attention_chunk_size", optional=True, null_is_value=True)
    if given is not None:
        return given, None, chunk
    rope = _no_rope_layers(r, layers)  # 1: a RoPE layer, chunked; 0: a NoPE layer with global attention
    return ["chunked_attention" if rope[i] and chunk else "full_attention" for i in range(layers)], None, chunk


def _exaone4(r: _Reader, layers: int, given) -> tuple:
    """EXAONE 4: `layer_types`, else one full layer in `sliding_window_pattern` (none slides without a window)."""
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if given is not None:
        return given, window, None
    every = r.int("sliding_window_pattern") if window else None
    return (["sliding_attention" if every and (i + 1) % every else "full_attention" for i in range(layers)],
            window, None)


def _full(r: _Reader, layers: int, given) -> tuple:
    return ["full_attention"] * layers, None, None


_NEMOTRON_SYMBOLS = {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"}
# transformers 5 names (and the names of older NemotronH configs) of a NemotronH layer
_NEMOTRON_BLOCKS = {"linear_attention": "mamba", "mamba": "mamba", "full_attention": "attention",
                    "attention": "attention", "moe": "moe", "mlp": "mlp"}


def _nemotron_blocks(r: _Reader) -> list:
    """NemotronH's layers: `hybrid_override_pattern` ("M": Mamba-2, "E": MoE, "*": attention, "-": MLP),
    else `layers_block_type`, as mamba / moe / attention / mlp. Their count is the number of layers."""
    pattern = r.c.get("hybrid_override_pattern")
    listed = r.raw("layers_block_type")
    if pattern is not None and listed is None:
        if not isinstance(pattern, str) or not pattern or set(pattern) - set(_NEMOTRON_SYMBOLS):
            raise ValueError(f"{r.name('hybrid_override_pattern')} must be a string of M (Mamba-2), E (MoE), "
                             f"* (attention) and - (MLP), got {pattern!r}")
        return [_NEMOTRON_SYMBOLS[ch] for ch in pattern]
    if listed is None:  # NemotronHConfig's default stack
        listed = ["linear_attention", "moe", "full_attention", "mlp"]
        r.defaulted.append("layers_block_type")
    if not isinstance(listed, list) or not listed or any(b not in _NEMOTRON_BLOCKS for b in listed):
        raise ValueError(f"{r.name('layers_block_type')} must be a list of {sorted(_NEMOTRON_BLOCKS)}, got {listed!r}")
    return [_NEMOTRON_BLOCKS[b] for b in listed]


def _nemotron_h(r: _Reader, layers: int, given) -> tuple:
    """NemotronH: one block per layer; Mamba-2 and attention layers mix, MoE and MLP layers have no mixer."""
    kinds = {"mamba": "mamba2", "attention": "full_attention", "moe": "none", "mlp": "none"}
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if window:
        raise ValueError(f"{r.name('sliding_window')}: a NemotronH with sliding-window attention is not read "
                         f"(transformers' NemotronH attends to the whole context), got {window}")
    return [kinds[b] for b in _nemotron_blocks(r)], None, None


def _qwen3_next(r: _Reader, layers: int, given) -> tuple:
    """Qwen3-Next: `layer_types` ("linear_attention": gated DeltaNet), else one full attention layer
    in every `full_attention_interval` (4)."""
    listed = r.raw("layer_types")
    if listed is None:
        every = r.int("full_attention_interval")
        return ["full_attention" if (i + 1) % every == 0 else "gated_deltanet" for i in range(layers)], None, None
    names = {"linear_attention": "gated_deltanet", "full_attention": "full_attention"}
    if not isinstance(listed, list) or len(listed) != layers or any(t not in names for t in listed):
        raise ValueError(f"{r.name('layer_types')} must list 'linear_attention' or 'full_attention' for each of "
                         f"the {layers} layers, got {listed!r}")
    return [names[t] for t in listed], None, None


def _granite_hybrid(r: _Reader, layers: int, given) -> tuple:
    """Granite 4.0-H: `layer_types` of "mamba" (Mamba-2) and "attention" layers; all Mamba-2 if absent."""
    listed = r.raw("layer_types")
    names = {"mamba": "mamba2", "linear_attention": "mamba2", "attention": "full_attention",
             "full_attention": "full_attention"}
    if listed is None:
        return ["mamba2"] * layers, None, None
    if not isinstance(listed, list) or len(listed) != layers or any(t not in names for t in listed):
        raise ValueError(f"{r.name('layer_types')} must list 'mamba' or 'attention' for each of the {layers} layers, "
                         f"got {listed!r}")
    return [names[t] for t in listed], None, None


def _lfm2(r: _Reader, layers: int, given) -> tuple:
    """LFM2: `layer_types` of "conv" (a short convolution) and "full_attention"; else attention at the layers
    `full_attn_idxs` lists, the others convolutions (transformers: every layer attends when neither is given)."""
    listed = r.raw("layer_types")
    names = {"conv": "short_conv", "full_attention": "full_attention"}
    if listed is not None:
        if (not isinstance(listed, list) or len(listed) != layers
                or any(not isinstance(t, str) or t not in names for t in listed)):
            raise ValueError(f"{r.name('layer_types')} must list 'conv' or 'full_attention' for each of the {layers} "
                             f"layers, got {listed!r}")
        return [names[t] for t in listed], None, None
    if "full_attn_idxs" not in r.fam.defaults:  # LFM2-MoE: its config class has no layer pattern of its own
        raise ValueError(f"{r.where} is missing 'layer_types' (needed for {r.fam.label}: 'conv' or "
                         f"'full_attention' for each of the {layers} layers; {r.fam.config_class} has no default)")
    attends = r.int_list("full_attn_idxs", low=0, high=layers - 1)
    attends = set(range(layers) if attends is None else attends)
    return ["full_attention" if i in attends else "short_conv" for i in range(layers)], None, None


def _minimax(r: _Reader, layers: int, given) -> tuple:
    """MiniMax: `layer_types` of "linear_attention" (lightning) and "full_attention"; else MiniMax's own
    `attn_type_list` (its remote-code config, as released: 0 lightning, 1 softmax attention); else
    transformers' default, the layers alternating from full attention. A sliding window and a shared MLP
    (the remote code's shared_intermediate_size) are not read: transformers builds neither."""
    why = {"sliding_window": "transformers masks its attention layers to the window but caches every token",
           "shared_intermediate_size": "MiniMax's remote code then adds a shared MLP that transformers' "
                                       "MiniMaxForCausalLM does not build"}
    for key, reason in why.items():
        if r.c.get(key):
            raise ValueError(f"{r.name(key)} is {r.c[key]!r}: not read for MiniMax ({reason}); null or 0 expected")
    listed, codes = r.raw("layer_types"), r.c.get("attn_type_list")
    if listed is not None:
        names = {"linear_attention": "lightning", "full_attention": "full_attention"}
        if (not isinstance(listed, list) or len(listed) != layers
                or any(not isinstance(t, str) or t not in names for t in listed)):
            raise ValueError(f"{r.name('layer_types')} must list 'linear_attention' or 'full_attention' for each of "
                             f"the {layers} layers, got {listed!r}")
        return [names[t] for t in listed], None, None
    if codes is not None:
        if not isinstance(codes, list) or len(codes) != layers or any(c not in (0, 1) or isinstance(c, bool)
                                                                       for c in codes):
            raise ValueError(f"{r.name('attn_type_list')} must give 0 (lightning) or 1 (softmax attention) for each "
                             f"of the {layers} layers, got {codes!r}")
        return ["full_attention" if c else "lightning" for c in codes], None, None
    return ["full_attention" if (i + 1) % 2 else "lightning" for i in range(layers)], None, None


def _period(r: _Reader, period_key: str, offset_key: str) -> tuple[int, int]:
    """Jamba's (period, offset) pair: layer i is chosen when i % period == offset (offset < period)."""
    period, offset = r.int(period_key), r.int(offset_key, zero=True)
    if offset >= period:
        raise ValueError(f"{r.name(offset_key)} ({offset}) must be smaller than {period_key} ({period})")
    return period, offset


def _jamba(r: _Reader, layers: int, given) -> tuple:
    """Jamba: attention in every layer i with i % attn_layer_period == attn_layer_offset, Mamba-1 elsewhere."""
    period, offset = _period(r, "attn_layer_period", "attn_layer_offset")
    return ["full_attention" if i % period == offset else "mamba1" for i in range(layers)], None, None


def _gemma3n_layout(r: _Reader, layers: int, given) -> tuple:
    """Gemma 3n: every fifth layer full, the others sliding (Gemma3nTextConfig's default layer_types)."""
    return _alternating(r, layers, given, every=5)


def _mlp_widths(r: _Reader, layers: int) -> tuple[int, ...]:
    """Gemma 3n's `intermediate_size`: one width for every layer, or a list of one per layer."""
    value = r.raw("intermediate_size")
    if isinstance(value, list):
        return tuple(r.int_list("intermediate_size", layers, low=1))
    return (r.int("intermediate_size"),) * layers


def _gemma3n(r: _Reader, layers: int, kinds: tuple) -> dict:
    """Gemma 3n's extra fields: per-layer embeddings, AltUp, LAuReL, KV sharing and activation sparsity.

    The last `num_kv_shared_layers` layers have no k and v projections and keep no cache: each attends over
    the keys and values of the last earlier layer of its own kind (transformers' `kv_sharing_modes`), which
    must exist. `activation_sparsity_pattern` (default 0.95 in the first 10 layers when there are more than
    10) zeroes that share of each MLP's gate activations by a Gaussian top-k: it changes no weight and no
    matmul, so no count here.
    """
    shared = r.int("num_kv_shared_layers", zero=True)
    if shared > layers:
        raise ValueError(f"{r.name('num_kv_shared_layers')} must be at most num_hidden_layers ({layers}), got {shared}")
    first = layers - shared
    if shared and set(kinds[:first]) != set(kinds):
        raise ValueError(f"{r.name('num_kv_shared_layers')} ({shared}): a layer kind among the last {shared} layers "
                         f"({sorted(set(kinds[first:]))}) has no earlier layer of its kind to share keys and values with")
    sparsity = r.raw("activation_sparsity_pattern")
    if sparsity is None:
        sparsity = [0.95] * 10 + [0.0] * (layers - 10) if layers > 10 else [0.0] * layers
    if not (isinstance(sparsity, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                               and 0 <= x < 1 for x in sparsity)):
        raise TypeError(f"{r.name('activation_sparsity_pattern')} must be a list of numbers in [0, 1), "
                        f"got {sparsity!r}")
    if len(sparsity) != layers:
        raise ValueError(f"{r.name('activation_sparsity_pattern')} must have one entry per layer ({layers}), "
                         f"got {len(sparsity)}")
    return dict(per_layer_input_size=r.int("hidden_size_per_layer_input"),
                per_layer_vocab_size=r.int("vocab_size_per_layer_input"), altup_inputs=r.int("altup_num_inputs"),
                laurel_rank=r.int("laurel_rank"), kv_shared_layers=tuple(range(first, layers)),
                activation_sparsity=tuple(float(x) for x in sparsity))


# name -> (rule, whether the family's config may list `layer_types`)
_LAYOUTS = {"full": (_full, False), "one_window": (_one_window, False), "qwen": (_qwen, True),
            "dots1": (_dots1, True),
            "qwen2_moe": (_qwen2_moe, True), "qwen3_moe": (_qwen3_moe, False), "alternating": (_alternating, True),
            "gemma3": (_gemma3, True), "smollm3": (_smollm3, True), "llama4": (_llama4, True),
            "nemotron_h": (_nemotron_h, False), "qwen3_next": (_qwen3_next, False), "exaone4": (_exaone4, True),
            "granite_hybrid": (_granite_hybrid, False), "lfm2": (_lfm2, False), "minimax": (_minimax, False),
            "jamba": (_jamba, False), "gemma3n": (_gemma3n_layout, True)}


def _layer_kinds(r: _Reader, fam: Family, layers: int) -> dict:
    """Per-layer attention kind and window, by the family's layout rule."""
    rule, reads_list = _LAYOUTS[fam.layout]
    kinds, window, chunk = rule(r, layers, r.layer_types(layers) if reads_list else None)
    # a sliding or chunked layer without a window in effect attends to everything
    kinds = [k if (k == "sliding_attention" and window) or (k == "chunked_attention" and chunk)
             or k not in LAYER_KINDS else "full_attention" for k in kinds]
    sliding = tuple(i for i, k in enumerate(kinds) if k == "sliding_attention")
    chunked = any(k == "chunked_attention" for k in kinds)
    return dict(layer_types=tuple(kinds), sliding_window=window if sliding else None, sliding_window_layers=sliding,
                attention_chunk_size=chunk if chunked else None)


def _no_rope_layers(r: _Reader, layers: int) -> list:
    value = r.int_list("no_rope_layers", low=0, high=1)
    if value:  # an empty list means "use the interval", as in transformers
        if len(value) != layers:
            raise ValueError(f"{r.name('no_rope_layers')} must have one entry per layer ({layers}), got {len(value)}")
        return value
    every = r.int("no_rope_layer_interval")
    return [int((i + 1) % every != 0) for i in range(layers)]


# Mixture-of-experts layouts: each returns the expert fields (which layers, how many experts, widths,
# shared experts) as the family's transformers classes (or its own code, for DeepSeek) build them.

def _every_layer(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Every layer routes among full-width experts (Mixtral, Phi-3.5-MoE, GraniteMoE, gpt-oss, OLMoE)."""
    return dict(num_experts=r.int(fam.experts_key), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate, moe_layers=tuple(range(layers)))


def _hunyuan_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Hunyuan MoE (transformers): every layer routes among `num_experts` experts of intermediate_size beside one
    shared MLP of the same width. `moe_topk` is one k, or a list of one k per layer (HunYuanMoEV1Gate reads
    `moe_topk[layer_idx]`); `num_experts_per_tok` is then the largest, `experts_per_tok_by_layer` each layer's."""
    topk, by_layer = r.raw("moe_topk"), ()
    if isinstance(topk, list):
        if len(topk) != layers or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in topk):
            raise ValueError(f"{r.name('moe_topk')} as a list must give a whole number k >= 1 for each of the "
                             f"{layers} layers, got {topk!r}")
        k = max(topk)
        by_layer = tuple(topk) if len(set(topk)) > 1 else ()
    else:
        k = r.int("moe_topk")
    return dict(num_experts=r.int("num_experts"), num_experts_per_tok=k, experts_per_tok_by_layer=by_layer,
                moe_intermediate_size=intermediate, moe_layers=tuple(range(layers)),
                shared_expert_intermediate_size=intermediate)


def _qwen_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Qwen2-MoE, Qwen3-MoE: every `decoder_sparse_step`-th layer not in `mlp_only_layers`."""
    experts = r.int("num_experts", zero=True)
    step = r.int("decoder_sparse_step")
    dense = set(r.int_list("mlp_only_layers", low=0, high=layers - 1) or ())
    out = dict(num_experts=experts, num_experts_per_tok=r.int("num_experts_per_tok"),
               moe_intermediate_size=r.int("moe_intermediate_size"),
               moe_layers=tuple(i for i in range(layers) if experts and i not in dense and (i + 1) % step == 0))
    if fam.shared_expert_gate:
        out["shared_expert_intermediate_size"] = r.int("shared_expert_intermediate_size", zero=True)
    return out


def _deepseek_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """DeepSeek-V2/V3, GLM-4.5: MoE from layer `first_k_dense_replace` on, with shared experts."""
    first = r.int("first_k_dense_replace", zero=True)
    freq = r.int("moe_layer_freq") if fam.moe_layer_freq else 1
    width = r.int("moe_intermediate_size")
    return dict(num_experts=r.int("n_routed_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=width,
                # DeepSeek's rule (its modeling code and vLLM's); transformers ignores moe_layer_freq
                moe_layers=tuple(i for i in range(first, layers) if i % freq == 0),
                shared_expert_intermediate_size=width * r.int("n_shared_experts", zero=True))


def _ernie_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """ERNIE 4.5: every `moe_layer_interval`-th layer between the start and end indices."""
    start = r.int("moe_layer_start_index", zero=True)
    end = r.raw("moe_layer_end_index")
    if isinstance(end, bool) or not isinstance(end, int) or end < -1:
        raise TypeError(f"{r.name('moe_layer_end_index')} must be a layer index or -1 (the last layer), got {end!r}")
    end = layers - 1 if end == -1 else end
    every = r.int("moe_layer_interval")
    width = r.int("moe_intermediate_size")
    return dict(num_experts=r.int("moe_num_experts"), num_experts_per_tok=r.int("moe_k"), moe_intermediate_size=width,
                moe_layers=tuple(i for i in range(layers) if (i + 1) % every == 0 and start <= i <= end),
                shared_expert_intermediate_size=width * r.int("moe_num_shared_experts", zero=True))


def _llama4_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Llama 4: `moe_layers` (or every `interleave_moe_layer_step`-th), one shared expert; dense layers wider."""
    moe_layers = r.int_list("moe_layers", low=0, high=layers - 1)
    if moe_layers is None:
        step = r.int("interleave_moe_layer_step")
        moe_layers = list(range(step - 1, layers, step))
    return dict(num_experts=r.int("num_local_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate, shared_expert_intermediate_size=intermediate,
                intermediate_size=r.int("intermediate_size_mlp"),  # the dense layers' width
                moe_layers=tuple(sorted(set(moe_layers))))


def _nemotron_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """NemotronH: its "E" layers route among experts, with one shared expert; "M" and "*" layers have no MLP."""
    if r.raw("moe_latent_size") is not None:
        raise ValueError(f"{r.name('moe_latent_size')}: NemotronH experts working in a latent space are not read; "
                         f"got {r.raw('moe_latent_size')!r} (null expected)")
    blocks = _nemotron_blocks(r)
    return dict(num_experts=r.int("n_routed_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=r.int("moe_intermediate_size"),
                shared_expert_intermediate_size=r.int("moe_shared_expert_intermediate_size", zero=True),
                moe_layers=tuple(i for i, b in enumerate(blocks) if b == "moe"),
                ffn_free_layers=tuple(i for i, b in enumerate(blocks) if b in ("mamba", "attention")))


def _every_layer_shared(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Qwen3.5-MoE: every layer routes among `num_experts` experts of moe_intermediate_size, beside a gated
    shared expert of shared_expert_intermediate_size (its config has no intermediate_size: no dense MLP)."""
    return dict(num_experts=r.int(fam.experts_key), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=r.int("moe_intermediate_size"), moe_layers=tuple(range(layers)),
                shared_expert_intermediate_size=r.int("shared_expert_intermediate_size", zero=True))


def _granite_hybrid_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Granite 4.0-H: every layer has a gated shared MLP of shared_intermediate_size; with experts, every layer
    also routes among `num_local_experts` of intermediate_size. Without, the shared MLP is the dense MLP."""
    shared = r.int("shared_intermediate_size")
    experts = r.int("num_local_experts", zero=True)
    if not experts:
        return dict(intermediate_size=shared, moe_layers=())
    return dict(num_experts=experts, num_experts_per_tok=r.int("num_experts_per_tok"), moe_intermediate_size=intermediate,
                moe_layers=tuple(range(layers)), shared_expert_intermediate_size=shared)


def _lfm2_mlp(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """LFM2 (dense): every layer's gated MLP. With `block_auto_adjust_ff_dim`, transformers' Lfm2MLP narrows
    intermediate_size as Llama did: 2/3 of it, times `block_ffn_dim_multiplier`, rounded up to a multiple of
    `block_multiple_of` (no multiplier: 2/3 only). LFM2-1.2B: 12,288 -> 8,192."""
    width = intermediate
    if r.bool("block_auto_adjust_ff_dim"):
        width = int(2 * width / 3)
        multiplier = r.raw("block_ffn_dim_multiplier", null_is_value=True)
        if multiplier is not None:
            if isinstance(multiplier, bool) or not isinstance(multiplier, int | float) or not (
                    math.isfinite(multiplier) and multiplier > 0):
                raise ValueError(f"{r.name('block_ffn_dim_multiplier')} must be a number > 0 or null, "
                                 f"got {multiplier!r}")
            step = r.int("block_multiple_of")
            width = step * ((int(multiplier * width) + step - 1) // step)
    return dict(intermediate_size=width, moe_layers=())


def _lfm2_moe_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """LFM2-MoE: the first `num_dense_layers` layers have a gated MLP of intermediate_size (as given), the others
    route among `num_experts` experts of moe_intermediate_size. (Its router's `expert_bias`, one number per expert
    that steers the choice, is a buffer in transformers, not a parameter, and is not counted.)"""
    dense = r.int("num_dense_layers", zero=True)
    return dict(num_experts=r.int("num_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=r.int("moe_intermediate_size"), moe_layers=tuple(range(min(dense, layers), layers)))


def _jamba_experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Jamba: every layer i with i % expert_layer_period == expert_layer_offset routes among `num_experts`
    experts of intermediate_size (none when num_experts is 1: transformers then builds the dense MLP)."""
    period, offset = _period(r, "expert_layer_period", "expert_layer_offset")
    experts = r.int("num_experts")
    return dict(num_experts=experts, num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate,
                moe_layers=tuple(i for i in range(layers) if experts > 1 and i % period == offset))


_EXPERT_RULES = {"every_layer": _every_layer, "granite_hybrid": _granite_hybrid_experts, "jamba": _jamba_experts,
                 "lfm2": _lfm2_mlp, "lfm2_moe": _lfm2_moe_experts,
                 "every_layer_shared": _every_layer_shared, "qwen": _qwen_experts,
                 "deepseek": _deepseek_experts, "hunyuan": _hunyuan_experts,
                 "ernie": _ernie_experts, "llama4": _llama4_experts, "nemotron_h": _nemotron_experts}


def _experts(r: _Reader, fam: Family, layers: int, intermediate: int) -> dict:
    """Mixture-of-experts layout by the family's rule, with its router traits; {} for a dense model."""
    if not fam.experts:
        return {}
    out = _EXPERT_RULES[fam.experts](r, fam, layers, intermediate)
    norm = fam.norm_topk_prob
    out.update(norm_topk_prob=norm if isinstance(norm, bool) else bool(r.c.get(norm, False)),
               router_bias=fam.router_bias, expert_bias=fam.expert_bias, shared_expert_gate=fam.shared_expert_gate)
    if out.get("moe_layers") and out["num_experts_per_tok"] > out["num_experts"]:
        key = "moe_k" if fam.experts == "ernie" else "num_experts_per_tok"
        raise ValueError(f"{r.name(key)} ({out['num_experts_per_tok']}) must be at most the number of "
                         f"routed experts ({out['num_experts']})")
    if not out.get("moe_layers"):  # a dense model after all: no expert fields
        return {k: out[k] for k in ("intermediate_size", "ffn_free_layers") if k in out}
    return out


def _mamba1_fields(r: _Reader) -> dict:
    """Jamba's Mamba-1 layers: d_inner = mamba_expand x hidden_size channels, each with its own state of
    mamba_d_state; dt through a rank-`mamba_dt_rank` projection ("auto": ceil(hidden_size / 16), as JambaConfig);
    RMSNorms on dt, B and C; biases on in_proj and out_proj with mamba_proj_bias. transformers keeps the
    recurrent state in float32 (its scan runs in float32) and the conv state in the model dtype."""
    hidden = r.int("hidden_size")
    rank = r.raw("mamba_dt_rank")
    rank = math.ceil(hidden / 16) if rank == "auto" else r.int("mamba_dt_rank")
    return dict(mamba_d_inner=r.int("mamba_expand") * hidden, mamba_dt_rank=rank, mamba_dt_norms=True,
                ssm_state_size=r.int("mamba_d_state"), conv_kernel=r.int("mamba_d_conv"),
                conv_bias=r.bool("mamba_conv_bias"), mamba_bias=r.bool("mamba_proj_bias"), state_dtype="fp32")


def _falcon_h1_fields(r: _Reader) -> dict:
    """Falcon-H1's Mamba-2 mixers: mamba_d_ssm channels (mamba_expand x hidden_size when null) in mamba_n_heads
    heads of mamba_d_head ("auto": d_ssm / heads); in_proj's bias is mamba_proj_bias, out_proj's projectors_bias;
    the gated RMSNorm only with mamba_rms_norm. State in float32, as transformers keeps it."""
    inner = r.int("mamba_d_ssm", derived=r.int("mamba_expand") * r.int("hidden_size"), null_is_value=True)
    return dict(_mamba2_heads_fields(r, inner, f"mamba_d_ssm ({inner}), as FalconH1Config requires"),
                mamba_out_bias=r.bool("projectors_bias"), mamba_norm=r.bool("mamba_rms_norm"))


def _mamba2_heads_fields(r: _Reader, inner: int, inner_is: str) -> dict:
    """Mamba-2 mixers sized by the `mamba_*` keys of Granite 4.0-H and Falcon-H1: `inner` channels in mamba_n_heads
    heads of mamba_d_head ("auto": inner / heads; `inner_is` says what `inner` must equal). State in float32."""
    heads = r.int("mamba_n_heads")
    head_dim = inner // heads if r.raw("mamba_d_head") == "auto" else r.int("mamba_d_head")
    if head_dim * heads != inner:
        raise ValueError(f"{r.name('mamba_d_head')} x mamba_n_heads ({head_dim} x {heads}) must be {inner_is}")
    return dict(mamba_num_heads=heads, mamba_head_dim=head_dim, ssm_state_size=r.int("mamba_d_state"),
                n_groups=r.int("mamba_n_groups"), conv_kernel=r.int("mamba_d_conv"),
                conv_bias=r.bool("mamba_conv_bias"), mamba_bias=r.bool("mamba_proj_bias"), state_dtype="fp32")


def _state_fields(r: _Reader, fam: Family) -> dict:
    """The recurrent layers' sizes (Mamba-1, Mamba-2, gated DeltaNet, short convolution; lightning attention is sized by
    the attention's heads and head_dim) and the dtype of their state ("model": transformers keeps it in the
    model's dtype)."""
    if fam.state == "mamba1":
        return _mamba1_fields(r)
    if fam.state == "mamba2" and fam.state_keys == "falcon_h1":
        return dict(_falcon_h1_fields(r), parallel_state=fam.state if fam.parallel else "")
    if fam.state == "mamba2" and fam.state_keys == "granite":
        inner = r.int("mamba_expand") * r.int("hidden_size")
        return _mamba2_heads_fields(r, inner, f"mamba_expand x hidden_size ({inner})")
    if fam.state == "mamba2":
        dtype = r.raw("mamba_ssm_cache_dtype")
        if dtype not in STATE_DTYPES:
            raise ValueError(f"{r.name('mamba_ssm_cache_dtype')} must be one of {sorted(STATE_DTYPES)}, got {dtype!r}")
        return dict(mamba_num_heads=r.int("mamba_num_heads"), mamba_head_dim=r.int("mamba_head_dim"),
                    ssm_state_size=r.int("ssm_state_size"), n_groups=r.int("n_groups"),
                    conv_kernel=r.int("conv_kernel"), conv_bias=r.bool("use_conv_bias"),
                    mamba_bias=r.bool("use_bias"), state_dtype=STATE_DTYPES[dtype])
    if fam.state == "short_conv":
        return dict(conv_kernel=r.int("conv_L_cache"), conv_bias=r.bool("conv_bias"), state_dtype="model")
    if fam.state == "lightning":
        return dict(state_dtype="model")
    if fam.state == "gated_deltanet":
        return dict(linear_num_key_heads=r.int("linear_num_key_heads"),
                    linear_num_value_heads=r.int("linear_num_value_heads"),
                    linear_key_head_dim=r.int("linear_key_head_dim"),
                    linear_value_head_dim=r.int("linear_value_head_dim"),
                    conv_kernel=r.int("linear_conv_kernel_dim"))
    return {}


def _mla(r: _Reader) -> dict:
    nope, rope = r.int("qk_nope_head_dim"), r.int("qk_rope_head_dim")
    return dict(
        q_lora_rank=r.int("q_lora_rank", optional=True, null_is_value=True),  # null: q is one projection
        kv_lora_rank=r.int("kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope,
        v_head_dim=r.int("v_head_dim"), head_dim=nope + rope,  # the query/key width per head
    )


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
