"""Every supported model family against transformers, and each family's published totals.

Oracle: the family's real transformers classes. A config is built with its
config class (so transformers' own defaults and derivations apply) and its model
is instantiated on the meta device (no memory); `numel()` over its parameters is
the total (tied embeddings are one tensor, so they count once), and the active
count is the total minus the routed experts a token does not use
((E - k) / E of the tensors under `.experts.`). KV cache: which layers are
sliding or chunked, and their windows, come from transformers' own cache builder
(`get_layer_types_and_kwargs`); for small variants the cache is measured after
a real forward pass. Published totals are checked against the model cards,
papers or technical reports cited next to each.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings

import pytest
from _oracles import require

from chapter2.models import (CONFIG_DIR, FAMILIES, FAMILY_CONFIG_DIR, ModelConfig, list_configs, list_family_configs,
                             load_config)
from chapter2.models.families import WRAPPERS, wrapper_of

torch = require("torch")
transformers = require("transformers")
transformers.logging.set_verbosity_error()
warnings.filterwarnings("ignore", module="transformers")

# keys the families' tables hold that are not transformers dataclass fields (see config.FAMILIES)
NOT_TRANSFORMERS_FIELDS = {
    ("deepseek_v2", "moe_layer_freq"), ("deepseek_v3", "moe_layer_freq"),  # DeepSeek's own config class
    ("gemma3_text", "sliding_window_pattern"),  # read from kwargs by Gemma3TextConfig.__post_init__
    ("qwen3_next", "full_attention_interval"),  # read from kwargs by Qwen3NextConfig.__post_init__
    ("qwen3_5_text", "full_attention_interval"), ("qwen3_5_moe_text", "full_attention_interval"),  # likewise
}
# transformers' cache layer type of each of our layer kinds (`get_layer_types_and_kwargs`)
CACHE_TYPE = {"mamba1": "linear_attention", "mamba2": "linear_attention", "gated_deltanet": "linear_attention",
              "none": "dummy", "short_conv": "conv", "lightning": "linear_attention"}
WRAPPER_MODEL_TYPE = {w.cls: w.model_type for w in WRAPPERS}  # each wrapper's config model_type, from the registry
TOWERS = ("vision", "visual", "multi_modal_projector", "audio")  # parameter names of a wrapper's towers


@pytest.fixture(autouse=True)
def _gemma3n_without_its_timm_tower(monkeypatch):
    """Gemma3nForConditionalGeneration builds its vision tower with `AutoModel.from_config(vision_config)`, a timm
    MobileNetV5 (TimmWrapperModel). timm needs torchvision, and PyPI's torchvision for this torch (0.28.0) is a CUDA
    build that fails to import beside the CPU torch ("operator torchvision::nms does not exist"), so timm is not in
    the lock. That one call is answered with an empty module: everything else is the wrapper transformers builds
    (language model, head, audio tower, both embedders), and ModelConfig leaves the MobileNetV5 out by name
    (`towers_uncounted`)."""
    real = transformers.AutoModel.from_config

    def from_config(config, **kwargs):
        if getattr(config, "model_type", "") == "gemma3n_vision":
            return torch.nn.Module()
        return real(config, **kwargs)

    monkeypatch.setattr(transformers.AutoModel, "from_config", from_config)


def _hf_config(raw: dict):
    """The transformers config of a config.json dict (keys starting with _ and quantization dropped)."""
    clean = {k: v for k, v in raw.items() if not k.startswith("_") and k != "quantization_config"}
    if clean.get("model_type") == "kimi_k2":  # Kimi-K2 ships DeepSeek-V3's class under its own model_type
        clean["model_type"] = "deepseek_v3"
    if clean.get("model_type") in ("minimax_m1", "minimax_text_01"):  # MiniMax's remote-code config, as released:
        # transformers' MiniMaxForCausalLM is its port; its layer list is layer_types (attn_type_list: 1 = softmax)
        clean["model_type"] = "minimax"
        clean["layer_types"] = ["full_attention" if t else "linear_attention" for t in clean.pop("attn_type_list")]
        clean = {k: v for k, v in clean.items() if k not in ("auto_map", "shared_intermediate_size")}
    return transformers.AutoConfig.for_model(**clean)


def _whisper_counts(hf):
    """(total, active, encoder) of WhisperForConditionalGeneration: active is what a decoded token reads, so the
    encoder (run once per 30 s) and cross-attention's k and v projections (applied once to its output) are out."""
    with torch.device("meta"):
        model = transformers.WhisperForConditionalGeneration(hf)
    named = list(model.named_parameters())  # the tied proj_out is the embedding tensor, listed once
    total = sum(p.numel() for _, p in named)
    encoder = sum(p.numel() for n, p in named if n.startswith("model.encoder."))
    cross_kv = sum(p.numel() for n, p in named if ".encoder_attn.k_proj." in n or ".encoder_attn.v_proj." in n)
    return total, total - encoder - cross_kv, encoder, len(model.model.decoder.layers)


def _auto(raw: dict):
    """The transformers Auto class of a config.json dict: a multimodal wrapper is an image-text-to-text model."""
    arch = (raw.get("architectures") or [""])[0]
    return transformers.AutoModelForImageTextToText if arch.endswith("ConditionalGeneration") else \
        transformers.AutoModelForCausalLM


def _hf_counts(raw: dict):
    """(total, active, layer windows, per-layer cached numbers) of the transformers model of `raw`."""
    hf = _hf_config(raw)
    if hf.model_type == "whisper":  # every decoder layer attends to its whole context (and to the encoder)
        total, active, _, layers = _whisper_counts(hf)
        return total, active, ["full_attention"] * layers, [None] * layers, 0
    with torch.device("meta"):
        model = _auto(raw).from_config(hf)
    params = [(n, p) for n, p in model.named_parameters() if not any(t in n for t in TOWERS)]
    tower = sum(p.numel() for n, p in model.named_parameters() if any(t in n for t in TOWERS))
    total = sum(p.numel() for _, p in params)
    # DeepSeek-V3's and GLM-4.5's e_score_correction_bias is a buffer in transformers but a stored checkpoint weight
    total += sum(b.numel() for n, b in model.named_buffers() if n.endswith("e_score_correction_bias"))
    text = hf.get_text_config()
    n_experts = ModelConfig.from_hf(raw).num_experts
    k = ModelConfig.from_hf(raw).num_experts_per_tok
    experts = {}  # routed expert weights by layer index
    for n, p in params:
        if ".experts." in n:
            layer = int(re.search(r"layers\.(\d+)\.", n)[1])
            experts[layer] = experts.get(layer, 0) + p.numel()
    # the k each layer's router picks, where the transformers module holds its own (Hunyuan's gate: moe_topk[layer])
    own_k = {int(re.search(r"layers\.(\d+)\.", n)[1]): m.top_k for n, m in model.named_modules()
             if hf.model_type == "hunyuan_v1_moe" and n.endswith(".mlp.gate")}
    active = total - sum(e * (n_experts - own_k.get(i, k)) // n_experts for i, e in experts.items()) if n_experts \
        else total
    types, kwargs = transformers.cache_utils.get_layer_types_and_kwargs(text)
    windows = [kw.get("sliding_window") for kw in kwargs]
    return total, active, list(types), windows, tower


def _check_against_transformers(raw: dict):
    config = ModelConfig.from_hf(raw)
    total, active, types, windows, tower = _hf_counts(raw)
    p = config.params()
    assert (p.total, p.active) == (total, active)
    assert config.vision_params == tower  # a wrapper's vision tower and projector, beside the language model
    # a parallel hybrid's layer (Falcon-H1) holds attention KV and a recurrent state: transformers' "hybrid"
    # a layer reading another layer's keys and values (Gemma 3n's KV sharing) keeps no cache: transformers' "dummy"
    assert [("dummy" if i in config.kv_shared_layers else "hybrid" if config.parallel_state else CACHE_TYPE.get(k, k))
            for i, k in enumerate(config.kinds)] == types
    assert [None if i in config.kv_shared_layers else config.window_of(i)
            for i in range(config.num_hidden_layers)] == windows
    return config


def _family_cases():
    for fam in FAMILIES:
        for cls in fam.classes:
            if cls == "PhiMoEForCausalLM":  # the custom-code name of Phi-3.5-MoE's class; same family as Phimoe
                continue
            yield pytest.param(fam, cls, id=cls)


# -----------------------------------------------------------------------------
# defaults


def _default_mismatch(fam, key, value) -> str | None:
    """Why `value`, the family table's default for `key`, is not transformers' default (None: it is)."""
    cls = getattr(transformers, fam.config_class)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if (fam.model_type, key) in NOT_TRANSFORMERS_FIELDS:
        if key in fields:
            return f"{key} is a {cls.__name__} field after all"
        if key == "sliding_window_pattern":  # every 6th layer is global by default
            types = cls().layer_types
            if not (types[value - 1] == "full_attention" and types[0] == "sliding_attention"):
                return f"{key}={value} does not match {cls.__name__}().layer_types"
        if key == "full_attention_interval":  # every 4th layer is full attention by default
            types = cls().layer_types
            if not (types[value - 1] == "full_attention" and types[0] == "linear_attention"):
                return f"{key}={value} does not match {cls.__name__}().layer_types"
        return None
    if key not in fields:
        return f"{key} is not a {cls.__name__} field"
    f = fields[key]
    default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
    if not (default == value and type(default) is type(value)):
        return f"{key}: table {value!r}, {cls.__name__} {default!r}"
    return None


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.model_type for f in FAMILIES])
def test_each_default_is_the_transformers_config_class_default(fam):
    """Every key of the family's defaults table, value and type, is its config class's default."""
    assert fam.defaults
    wrong = [why for key, value in fam.defaults.items() if (why := _default_mismatch(fam, key, value))]
    assert not wrong, f"{fam.model_type}: " + "; ".join(wrong)


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.model_type for f in FAMILIES])
def test_aliases_are_the_transformers_attribute_map(fam):
    cls = getattr(transformers, fam.config_class)
    for alias, canonical in fam.aliases:
        # attribute_map maps one name to the other in either direction; both must name the same field
        assert cls.attribute_map.get(alias) == canonical or cls.attribute_map.get(canonical) == alias


@pytest.mark.parametrize(("fam", "cls"), list(_family_cases()))
def test_a_config_naming_only_the_class_is_the_family_default_model(fam, cls):
    """Every size left out: the counts, layer kinds and windows of transformers' default model."""
    raw = {"architectures": [cls], "model_type": WRAPPER_MODEL_TYPE.get(cls, fam.model_type)}
    if fam.model_type == "deepseek_v2":  # DeepseekV2Config has no default top-k; refused without it (below)
        raw["num_experts_per_tok"] = 6
    if fam.model_type == "dots1":  # Dots1Config has no default expert counts (None builds no experts)
        raw.update(n_routed_experts=128, num_experts_per_tok=6, n_shared_experts=2)
    if fam.model_type == "lfm2_moe":  # Lfm2MoeConfig has no default layer pattern (None builds nothing); refused below
        raw["layer_types"] = ["conv", "conv", "full_attention"] * 10 + ["conv", "full_attention"]
    if fam.model_type in ("hunyuan_v1_dense", "hunyuan_v1_moe"):  # its default head_dim (None) is read as None: transformers builds nothing
        raw["head_dim"] = 128
    config = _check_against_transformers(raw)
    assert config.family_label == fam.label and set(config.defaulted) <= set(fam.defaults)
    # NemotronH counts its layers from its default pattern (transformers ignores num_hidden_layers); Whisper's
    # width and decoder depth are d_model and decoder_layers
    layers = {"nemotron_h": "layers_block_type", "whisper": "decoder_layers"}.get(fam.model_type, "num_hidden_layers")
    width = "d_model" if fam.model_type == "whisper" else "hidden_size"
    assert {width, layers, "vocab_size"} <= set(config.defaulted)


def test_falcon_h1_mamba_width_from_mamba_d_ssm_or_expand():
    """Falcon-H1's Mamba width is mamba_d_ssm, or mamba_expand x hidden_size when it is null (absent: the class
    default 1024); mamba_d_head "auto" divides it among the heads."""
    raw = {**_small_variant("falcon_h1"), "mamba_d_ssm": None, "mamba_d_head": "auto"}
    config = _check_against_transformers(raw)
    assert config.mamba_num_heads * config.mamba_head_dim == 2 * 48


def test_a_different_top_k_per_layer_is_read():
    """Hunyuan's moe_topk as a list: layer i routes to moe_topk[i] experts (HunYuanMoEV1Gate); the active count
    sums each layer's own k (exact against transformers in the small variant, whose k differ by layer)."""
    raw = {"architectures": ["HunYuanMoEV1ForCausalLM"], "num_hidden_layers": 2, "num_experts": 4, "moe_topk": [2, 3],
           "hidden_size": 16, "intermediate_size": 8, "num_attention_heads": 2, "head_dim": 8}
    c = ModelConfig.from_hf(raw)
    assert (c.num_experts_per_tok, c.experts_per_tok_by_layer) == (3, (2, 3))
    assert [c.experts_per_tok_of(i) for i in range(2)] == [2, 3] and c.routed_experts_per_token == 5
    expert = 3 * 16 * 8  # gate, up, down of one expert, no bias
    routed = next(p for p in c.param_breakdown() if p.part == "routed experts")
    assert (routed.total, routed.active) == (2 * 4 * expert, 5 * expert)
    uniform = ModelConfig.from_hf({**raw, "moe_topk": [3, 3]})
    assert (uniform.num_experts_per_tok, uniform.experts_per_tok_by_layer) == (3, ())
    assert uniform.params().active - c.params().active == expert  # layer 0 runs one expert more
    for bad in ([2], [2, 0], [2, True], [2, 2.5]):
        with pytest.raises(ValueError, match=r"moe_topk.*whole number k >= 1 for each of the 2 layers"):
            ModelConfig.from_hf({**raw, "moe_topk": bad})


def test_lfm2_moe_without_its_layer_pattern_is_refused():
    with pytest.raises(ValueError, match=r"missing 'layer_types' \(needed for LFM2-MoE.*Lfm2MoeConfig has no default"):
        ModelConfig.from_hf({"architectures": ["Lfm2MoeForCausalLM"], "num_hidden_layers": 4})


def test_a_field_without_a_transformers_default_is_named():
    with pytest.raises(ValueError, match="num_experts_per_tok.*DeepseekV2Config has no default"):
        ModelConfig.from_hf({"architectures": ["DeepseekV2ForCausalLM"]})


# -----------------------------------------------------------------------------
# small variants: every option that changes a count, and the cache after a real forward pass

TINY = dict(vocab_size=97, hidden_size=48, intermediate_size=40, num_hidden_layers=6, num_attention_heads=6,
            num_key_value_heads=2, head_dim=10, pad_token_id=0, bos_token_id=1, eos_token_id=1)
MROPE = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 2, 2], "mrope_interleaved": True}
MLA = dict(num_key_value_heads=6, kv_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=8, v_head_dim=6)
VARIANTS = {
    "llama": dict(attention_bias=True, mlp_bias=True, tie_word_embeddings=True),
    "llama4_text": dict(num_local_experts=4, num_experts_per_tok=2, intermediate_size_mlp=56,
                        interleave_moe_layer_step=2, attention_chunk_size=4, no_rope_layer_interval=3),
    "mistral": dict(sliding_window=4),
    "mixtral": dict(num_local_experts=5, num_experts_per_tok=2, sliding_window=3),
    "qwen2": dict(use_sliding_window=True, sliding_window=4, max_window_layers=2),
    "qwen2_moe": dict(num_experts=6, num_experts_per_tok=2, moe_intermediate_size=16, shared_expert_intermediate_size=24,
                      decoder_sparse_step=2, mlp_only_layers=[3], use_sliding_window=True, sliding_window=4,
                      max_window_layers=4, qkv_bias=False),
    "qwen3": dict(use_sliding_window=True, sliding_window=4, max_window_layers=3),
    "qwen3_moe": dict(num_experts=5, num_experts_per_tok=3, moe_intermediate_size=16, mlp_only_layers=[0, 2],
                      attention_bias=True),
    "deepseek_v2": dict(MLA, n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2, moe_intermediate_size=16,
                        first_k_dense_replace=1, q_lora_rank=None, attention_bias=True, mlp_bias=True),
    "deepseek_v3": dict(MLA, n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1, moe_intermediate_size=16,
                        first_k_dense_replace=2, q_lora_rank=24, n_group=2, topk_group=1, attention_bias=True),
    "gemma": dict(attention_bias=True, tie_word_embeddings=False),
    "gemma2": dict(sliding_window=4),
    "gemma3_text": dict(sliding_window=4, sliding_window_pattern=3),
    "phi3": dict(sliding_window=4),
    "phimoe": dict(num_local_experts=4, num_experts_per_tok=2, attention_bias=True, lm_head_bias=True, sliding_window=5),
    "olmo2": dict(attention_bias=True),
    "olmoe": dict(num_experts=6, num_experts_per_tok=2, head_dim=8),  # OLMoE's q/k norms need head_dim = hidden/heads
    "granite": dict(mlp_bias=True, attention_bias=True),
    "granitemoe": dict(num_local_experts=4, num_experts_per_tok=1),
    "cohere": dict(use_qk_norm=True, attention_bias=True, tie_word_embeddings=False),
    "gpt_oss": dict(num_local_experts=4, num_experts_per_tok=2, sliding_window=4),
    "glm4_moe": dict(n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2, moe_intermediate_size=16,
                     first_k_dense_replace=2, use_qk_norm=True, attention_bias=True),
    "dots1": dict(n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=2, moe_intermediate_size=16,
                  first_k_dense_replace=1, attention_bias=True, sliding_window=4, max_window_layers=3),
    "hunyuan_v1_dense": dict(attention_bias=True, tie_word_embeddings=True),
    "hunyuan_v1_moe": dict(num_experts=5, moe_topk=[1, 3, 2, 4, 2, 1], attention_bias=True),  # k by layer
    "ernie4_5_moe": dict(moe_num_experts=6, moe_k=2, moe_num_shared_experts=1, moe_intermediate_size=16,
                         moe_layer_start_index=1, moe_layer_end_index=4, moe_layer_interval=2, use_bias=True),
    "smollm3": dict(use_sliding_window=True, sliding_window=4, no_rope_layer_interval=2),
    "glm4": dict(attention_bias=True),
    "exaone4": dict(sliding_window=4, sliding_window_pattern=3),
    "seed_oss": dict(attention_bias=True, attention_out_bias=True, mlp_bias=True),
    "apertus": dict(attention_bias=True),
    "minimax_m2": dict(num_local_experts=5, num_experts_per_tok=2),
    "ministral3": dict(sliding_window=4, tie_word_embeddings=True),
    "arcee": dict(attention_bias=True, mlp_bias=True),
    # Gemma 3n: a width per layer, per-layer embeddings, AltUp with 3 copies, LAuReL, the last 2 layers (one of each
    # kind) reading the keys and values of layers 2 and 3, activation sparsity in the first layers
    "gemma3n_text": dict(sliding_window=4, intermediate_size=[40, 32, 40, 24, 40, 16], vocab_size_per_layer_input=53,
                         hidden_size_per_layer_input=6, altup_num_inputs=3, laurel_rank=5, num_kv_shared_layers=2,
                         layer_types=["sliding_attention", "full_attention"] * 3,
                         activation_sparsity_pattern=[0.95, 0.9, 0.0, 0.0, 0.0, 0.0]),
    # multimodal wrappers: the language model's text_config (the wrapper and its small vision tower: WRAPPED)
    "qwen2_5_vl_text": dict(use_sliding_window=True, sliding_window=4, max_window_layers=3,
                            rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]}),
    "qwen3_vl_text": dict(attention_bias=True, rope_parameters=MROPE),
    "qwen3_vl_moe_text": dict(num_experts=5, num_experts_per_tok=2, moe_intermediate_size=16, mlp_only_layers=[1],
                              attention_bias=True, rope_parameters=MROPE),
    # hybrids: the real per-layer shapes of a Mamba-2 or DeltaNet layer, made small
    "nemotron_h": dict(hybrid_override_pattern="ME*-ME", mamba_num_heads=4, mamba_head_dim=6, ssm_state_size=5,
                       n_groups=2, conv_kernel=4, chunk_size=4, n_routed_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=16, moe_shared_expert_intermediate_size=24, use_bias=True),
    "granitemoehybrid": dict(num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=24, mamba_n_heads=4,
                             mamba_d_head=24, mamba_expand=2, mamba_d_state=5, mamba_n_groups=2, mamba_d_conv=4,
                             mamba_chunk_size=4, attention_bias=True,
                             layer_types=["mamba", "attention", "mamba", "mamba", "attention", "mamba"]),
    # LFM2: the legacy keys its config class renames (block_ff_dim, tie_embedding), biases on the short conv;
    # its MLP narrows block_ff_dim 60 to 2/3 (40), x 1.5 (60), rounded up to a multiple of 8: 64
    "lfm2": dict(full_attn_idxs=[1, 4], conv_L_cache=3, conv_bias=True, block_ff_dim=60, block_multiple_of=8,
                 block_ffn_dim_multiplier=1.5, tie_embedding=False),
    "lfm2_moe": dict(layer_types=["conv", "full_attention", "conv", "conv", "full_attention", "conv"], num_experts=5,
                     num_experts_per_tok=2, moe_intermediate_size=16, num_dense_layers=2, tie_embedding=False),
    "minimax": dict(num_local_experts=4, num_experts_per_tok=2, block_size=4,
                    layer_types=["linear_attention", "full_attention", "linear_attention", "linear_attention",
                                 "linear_attention", "full_attention"]),
    "jamba": dict(num_experts=4, num_experts_per_tok=2, expert_layer_period=2, expert_layer_offset=1,
                  attn_layer_period=3, attn_layer_offset=1, mamba_d_state=5, mamba_d_conv=4, mamba_expand=2,
                  mamba_dt_rank=4, mamba_proj_bias=True, tie_word_embeddings=True),
    # a parallel hybrid; multipliers change no count; out_proj's bias (projectors_bias) apart from in_proj's
    "falcon_h1": dict(mamba_d_ssm=72, mamba_n_heads=4, mamba_d_head=18, mamba_n_groups=2, mamba_d_state=5,
                      mamba_d_conv=4, mamba_chunk_size=4, mamba_proj_bias=True, projectors_bias=False,
                      mamba_rms_norm=True, attention_bias=True, mlp_bias=True, key_multiplier=0.5,
                      ssm_multipliers=[0.5, 0.25, 2.0, 1.5, 0.75], mlp_multipliers=[0.8, 0.6]),
    "qwen3_5_text": dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=6, linear_value_head_dim=8,
                         layer_types=["linear_attention", "full_attention", "linear_attention", "linear_attention",
                                      "full_attention", "linear_attention"]),
    "qwen3_5_moe_text": dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=6,
                             linear_value_head_dim=8, num_experts=5, num_experts_per_tok=2, moe_intermediate_size=16,
                             shared_expert_intermediate_size=24),
    "qwen3_next": dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=6,
                       linear_value_head_dim=8, linear_conv_kernel_dim=3, num_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=16, shared_expert_intermediate_size=24, mlp_only_layers=[1],
                       layer_types=["linear_attention", "linear_attention", "full_attention", "linear_attention",
                                    "linear_attention", "full_attention"], attention_bias=True),
}


def _measured_cache_bytes(model, context: int) -> int:
    """Bytes of transformers' own cache after a forward of context - 1 tokens, plus the next token's K and V.

    Attention layers: keys and values as held, one more position each; recurrent layers: their
    convolution and recurrent states as held (a fixed size), in the dtypes transformers chose.
    """
    with torch.no_grad():
        cache = model(torch.arange(2, context + 1)[None], use_cache=True).past_key_values
    total = 0
    for layer in cache.layers:
        keys = getattr(layer, "keys", None)
        if torch.is_tensor(keys) and keys.numel():
            values = layer.values
            total += (keys.shape[-2] + 1) * (keys[..., :1, :].numel() * keys.element_size()
                                             + values[..., :1, :].numel() * values.element_size())
        for states in (getattr(layer, "conv_states", None), getattr(layer, "recurrent_states", None)):
            held = states.values() if isinstance(states, dict) else (states or [])
            total += sum(t.numel() * t.element_size() for t in held if torch.is_tensor(t))
    # MiniMax's cache keeps its lightning layers' states apart from the attention layers' KV
    total += sum(t.numel() * t.element_size() for t in getattr(cache, "linear_cache", []) if torch.is_tensor(t))
    return total


# The wrapper around a wrapped family's language model: its outer keys and a small vision tower of the real
# block structure (whose out_hidden_size is TINY's hidden_size)
QWEN3_VL_TOWER = dict(depth=3, hidden_size=16, intermediate_size=24, num_heads=2, patch_size=4, spatial_merge_size=2,
                      temporal_patch_size=2, out_hidden_size=48, num_position_embeddings=16, deepstack_visual_indexes=[0, 2])
WRAPPED = {
    "qwen2_5_vl_text": dict(vision_config=dict(depth=2, hidden_size=16, intermediate_size=24, num_heads=2, patch_size=4,
                                               spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=48)),
    "qwen3_vl_text": dict(tie_word_embeddings=True, vision_config=QWEN3_VL_TOWER),
    "qwen3_vl_moe_text": dict(vision_config=QWEN3_VL_TOWER),
}
# Wrappers whose language model is a family tested above, read through text_config: case -> (wrapper class, text
# family's VARIANTS key, the text_config's own keys, the wrapper's keys). Mistral 3 with each of its language models:
# the head tied by the outer key, or by the text_config's alone (Ministral 3's files); Pixtral two blocks deep, a
# projector with biases reading two vision layers.
PIXTRAL_TOWER = dict(model_type="pixtral", hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                     num_attention_heads=2, head_dim=8, patch_size=4, image_size=32)
MISTRAL3 = dict(vision_config=PIXTRAL_TOWER, spatial_merge_size=2, multimodal_projector_bias=True,
                vision_feature_layer=[-1, -2])
WRAPPER_CASES = {
    "mistral3_mistral": ("Mistral3ForConditionalGeneration", "mistral", {},
                         dict(MISTRAL3, tie_word_embeddings=False)),
    "mistral3_ministral3": ("Mistral3ForConditionalGeneration", "ministral3", dict(tie_word_embeddings=True), MISTRAL3),
    # Gemma 3n: its text model inside the wrapper, the head untied by the outer key; a two-block Conformer audio
    # tower (a 10-bin input left 3 bins by the stem) and both embedders, small
    "gemma3n": ("Gemma3nForConditionalGeneration", "gemma3n_text", {}, dict(
        tie_word_embeddings=False, vision_config=dict(hidden_size=16, vocab_size=5),
        audio_config=dict(hidden_size=16, vocab_size=7, input_feat_size=10, conf_num_attention_heads=2,
                          conf_num_hidden_layers=2, conf_conv_kernel_size=3, sscp_conv_channel_size=[4, 3]))),
}
ENCODER_DECODERS = {"whisper"}  # tested on their own below (an encoder, a cross-attention cache)
WRAPPERS_ONLY: set = set()  # families with no causal LM class of their own are tested through WRAPPED


def test_every_family_has_a_variant():
    assert set(VARIANTS) | ENCODER_DECODERS | WRAPPERS_ONLY == {f.model_type for f in FAMILIES}


def _small_variant(model_type: str) -> dict:
    """The config.json of a family's small variant: TINY widths plus its VARIANTS entry (MLA takes no head_dim); or
    of a WRAPPER_CASES entry: its text family's small variant inside the wrapper."""
    if model_type in WRAPPER_CASES:
        cls, text_type, text_keys, outer = WRAPPER_CASES[model_type]
        text = {k: v for k, v in _small_variant(text_type).items() if k != "architectures"}
        return {"architectures": [cls], "model_type": WRAPPER_MODEL_TYPE[cls], "text_config": {**text, **text_keys},
                **outer}
    fam = next(f for f in FAMILIES if f.model_type == model_type)
    raw = {"architectures": [fam.classes[0]], "model_type": model_type, **TINY, **VARIANTS[model_type]}
    if model_type.startswith("deepseek") or model_type == "qwen2_5_vl_text":  # no head_dim (Qwen2.5-VL: hidden/heads)
        del raw["head_dim"]
    if model_type in WRAPPED:  # the language model under text_config, inside its wrapper
        cls = fam.classes[0]
        raw = {"architectures": [cls], "model_type": WRAPPER_MODEL_TYPE[cls], "text_config": raw, **WRAPPED[model_type]}
        del raw["text_config"]["architectures"]
    return raw


@pytest.mark.parametrize("model_type", list(VARIANTS) + list(WRAPPER_CASES))
def test_small_variant_counts_and_cache_match_transformers(model_type):
    raw = _small_variant(model_type)
    config = _check_against_transformers(raw)
    # the cache: prefill N - 1 tokens, then the N-th token reads what each layer held plus itself; in
    # bfloat16, so that the recurrent states' float32 shows (two contexts: the states stay, the KV grows)
    torch.manual_seed(0)
    model = _auto(raw).from_config(_hf_config(raw)).eval().to(torch.bfloat16)
    for context in (7, 11):
        measured = _measured_cache_bytes(model, context)
        assert config.kv_cache_bytes(context, 1, "bf16") == measured
        groups = config.kv_cache_breakdown(context, "bf16")
        assert sum(g.bytes for g in groups) == measured
        assert sum(g.layers for g in groups) == len(config.cached_layers) + len(config.state_layers)
    if not (config.sliding_window or config.attention_chunk_size):  # grows by the per-token KV, states fixed
        assert config.kv_cache_bytes(11) - config.kv_cache_bytes(7) == 4 * config.kv_cache_bytes_per_token("bf16")


# -----------------------------------------------------------------------------
# the shipped real configs


# A key a shipped config.json leaves out and transformers 5 then reads otherwise than the checkpoint holds, stated for
# the oracle (each pinned by its own test: test_mistral_small_3_1_head_is_untied_as_its_checkpoint_...)
AS_THE_CHECKPOINT = {"Mistral-Small-3.1-24B-Instruct-2503": {"tie_word_embeddings": False}}


@pytest.mark.parametrize("name", list_configs() + list_family_configs())
def test_shipped_config_matches_transformers(name):
    folder = CONFIG_DIR if name in list_configs() else FAMILY_CONFIG_DIR
    raw = json.loads((folder / f"{name}.json").read_text())
    _check_against_transformers({**raw, **AS_THE_CHECKPOINT.get(name, {})})
    config = load_config(name)
    assert config.name == name and config.source == raw["_source"]


def test_every_family_has_a_shipped_real_config():
    shipped = {load_config(n).family_label for n in list_configs() + list_family_configs()}
    assert shipped == {f.label for f in FAMILIES}


def test_multimodal_totals_with_their_vision_towers():
    """The published totals of the multimodal releases include the vision encoder: params() counts the language model,
    `vision_params` the tower and its projector, and together they are transformers' whole model."""
    for name, published, unit in (("Llama-4-Scout-17B-16E", 109e9, 1e9), ("gemma-3-27b-it", 27.4e9, 1e8)):
        raw = {k: v for k, v in json.loads((CONFIG_DIR / f"{name}.json").read_text()).items() if not k.startswith("_")}
        with torch.device("meta"):
            model = transformers.AutoModelForImageTextToText.from_config(transformers.AutoConfig.for_model(**raw))
        everything = sum(p.numel() for p in model.parameters())
        vision = sum(p.numel() for n, p in model.named_parameters() if "vision" in n or "multi_modal_projector" in n)
        config = load_config(name)
        assert config.params().total == everything - vision and config.vision_params == vision > 0
        # Llama 4 model card (https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E): "109B" total;
        # Gemma 3 27B: 27.4B on its model page (https://huggingface.co/google/gemma-3-27b-it)
        assert round((config.params().total + config.vision_params) / unit) == round(published / unit)


def test_gemma3n_totals_against_its_published_sizes():
    """Gemma 3n E2B (shipped) and E4B (its text_config with 35 layers, MLPs of 16,384, 15 KV-sharing layers): the
    language model and the towers counted beside it, with the k and v weights the checkpoints keep for the KV-sharing
    layers (which transformers 5 skips on load), round to the raw sizes Hugging Face's release post gives, "5B and
    8B" (huggingface/blog gemma3n.md); the E4B language model alone, so kept, to the 6.9B of LM Studio's text-only
    listing (lmstudio.ai/models/google/gemma-3n-e4b). The MobileNetV5 vision tower is not counted (towers_uncounted):
    it is the difference to the Hub's 5.44B and 7.85B, which these round figures cannot pin."""
    raw = json.loads((FAMILY_CONFIG_DIR / "gemma-3n-E2B-it.json").read_text())
    e4b_text = {**raw["text_config"], "num_hidden_layers": 35, "intermediate_size": [16384] * 35,
                "num_kv_shared_layers": 15, "activation_sparsity_pattern": [0.95] * 10 + [0.0] * 25,
                "layer_types": ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(35)]}
    for text, published in ((raw["text_config"], 5), (e4b_text, 8)):
        config = _check_against_transformers({**raw, "text_config": text})
        assert config.towers_uncounted and config.vision_params > 0
        stored_kv = len(config.kv_shared_layers) * (2 * config.hidden_size * config.num_key_value_heads *
                                                    config.head_dim + config.head_dim)  # k, v and k's norm
        assert round((config.params().total + stored_kv + config.vision_params) / 1e9) == published
    assert round((config.params().total + stored_kv) / 1e8) == 69


TOWER_CLASSES = {"Qwen2_5_VLForConditionalGeneration": "Qwen2_5_VLVisionConfig",
                 "Qwen3VLForConditionalGeneration": "Qwen3VLVisionConfig",
                 "Qwen3VLMoeForConditionalGeneration": "Qwen3VLMoeVisionConfig",
                 "Mistral3ForConditionalGeneration": "PixtralVisionConfig",
                 "Gemma3ForConditionalGeneration": "SiglipVisionConfig", "Llama4ForConditionalGeneration":
                 "Llama4VisionConfig", "Qwen3_5ForConditionalGeneration": "Qwen3_5VisionConfig",
                 "Qwen3_5MoeForConditionalGeneration": "Qwen3_5MoeVisionConfig",
                 "Gemma3nForConditionalGeneration": "Gemma3nAudioConfig"}


@pytest.mark.parametrize("arch", list(TOWER_CLASSES))
def test_each_vision_tower_default_is_its_config_class_default(arch):
    tower = wrapper_of(arch).towers[0]
    assert tower.config_class == TOWER_CLASSES[arch]
    cls = getattr(transformers, tower.config_class)
    fields = {f.name: f.default for f in dataclasses.fields(cls)}
    assert {k: fields.get(k, "not a field") for k in tower.defaults} == tower.defaults


def test_gemma3n_vision_embedder_defaults_are_its_config_class_defaults():
    embedder = wrapper_of("Gemma3nForConditionalGeneration").towers[1]
    fields = {f.name: f.default for f in dataclasses.fields(getattr(transformers, embedder.config_class))}
    assert {k: fields.get(k, "not a field") for k in embedder.defaults} == embedder.defaults


def test_a_wrappers_own_defaults_are_its_config_class_defaults():
    """Mistral 3 without a text_config or vision_config builds Mistral3Config's sub-config defaults (Mistral Small
    3.1's sizes), not MistralConfig's or PixtralVisionConfig's; its projector keys default as Mistral3Config's fields."""
    from chapter2.models.families.multimodal import MISTRAL3_PROJECTOR

    cls, wrapper = transformers.Mistral3Config, wrapper_of("Mistral3ForConditionalGeneration")
    for table, key in ((wrapper.text_defaults, "text_config"), (wrapper.towers[0].absent_defaults, "vision_config")):
        given = cls.sub_configs_defaults[key].init_kwargs
        assert {k: given.get(k, "not given") for k in table} == table
    projector = MISTRAL3_PROJECTOR
    assert projector.config_class == cls.__name__
    fields = {f.name: f.default for f in dataclasses.fields(cls)}
    assert {k: fields.get(k, "not a field") for k in projector.defaults} == projector.defaults


def test_mistral_small_3_1_head_is_untied_as_its_checkpoint_though_transformers_5_ties_it():
    """Mistral Small 3.1's config.json names no tie_word_embeddings (nor does its text_config); transformers 5 reads
    Mistral3Config's outer default, true since huggingface/transformers#43429, and ties the head: 23.34B, where the
    checkpoint stores its own LM head (24.0B published). ModelConfig counts the head the checkpoint holds, and equals
    transformers' model once the file states what the checkpoint holds (tie_word_embeddings false)."""
    raw = json.loads((FAMILY_CONFIG_DIR / "Mistral-Small-3.1-24B-Instruct-2503.json").read_text())
    assert "tie_word_embeddings" not in raw and "tie_word_embeddings" not in raw["text_config"]
    tied, *_ , tower = _hf_counts(raw)
    untied, *_ = _hf_counts({**raw, "tie_word_embeddings": False})
    config = ModelConfig.from_hf(raw)
    assert untied - tied == config.vocab_size * config.hidden_size
    assert config.params().total == untied and config.params().lm_head == config.vocab_size * config.hidden_size
    assert round((untied + tower) / 1e9) == 24 and round((tied + tower) / 1e8) == 233


# -----------------------------------------------------------------------------
# FLOPs: the small variants' decode step and prefill under torch's FlopCounterMode (eager attention and experts,
# so that every multiply is an aten op the counter sees; the router picks k experts from real values)


def _eager_model(raw: dict):
    torch.manual_seed(0)
    return _auto(raw).from_config(_hf_config(raw), attn_implementation="eager",
                                  experts_implementation="eager").eval()


def _counted(fn) -> int:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def _embedders_extra(config: ModelConfig) -> int:
    """Gemma3nForConditionalGeneration runs every text token through both multimodal embedders as well (a dummy
    image and a dummy audio id where the token is neither), then keeps its text embedding: 2 x width x hidden per
    token for each embedder's projection (widths: the vision and audio configs' hidden_size, or their defaults)."""
    if config.wrapper != "Gemma3nForConditionalGeneration":
        return 0
    widths = [(config.raw.get(key) or {}).get("hidden_size", default)
              for key, default in (("vision_config", 2048), ("audio_config", 1536))]
    return 2 * sum(widths) * config.hidden_size


def _implementation_extra(config: ModelConfig, context: int) -> int:
    """FLOPs transformers' eager decode step multiplies beyond the convention of `flops_per_token` (or short of it).

    Each term is a choice of its code, not of the model: MLA re-expands every cached latent with kv_b_proj at each
    step; Llama 4's experts run on every token, the unrouted ones weighted by 0; a chunked layer multiplies the keys
    of its cache that the chunk mask then hides; a recurrent layer's causal conv computes two outputs and keeps one
    (the cache holds conv_kernel inputs, the new one makes kernel + 1); the recurrent state's decay and update (and,
    for DeltaNet, its reads) are elementwise products the counter does not see, only Mamba-1's and Mamba-2's C h
    readout (a matmul).
    """
    extra = _embedders_extra(config)  # Gemma 3n's wrapper: each token through its image and audio embedders
    if config.uses_mla:
        kv_b = config.kv_lora_rank * config.num_attention_heads * (config.qk_nope_head_dim + config.v_head_dim)
        extra += len(config.attention_layers) * 2 * kv_b * (context - 1)
    if config.family_label == "Llama 4":
        extra += len(config.moe_layers) * (config.num_experts - config.num_experts_per_tok) * 2 * 3 * \
            config.hidden_size * config.moe_intermediate_size
    per_key = config.attention_flops_per_key("expanded")
    for i in config.attention_layers:
        if config.kinds[i] == "chunked_attention":
            extra += per_key * (min(context, config.attention_chunk_size) - config.attended_keys(i, context))
    for i in config.state_layers:
        conv, state = config.state_elements(i)
        extra += 2 * conv  # conv_kernel taps per channel, a second output
        # what the counter does not see: Mamba-1's and Mamba-2's decay and update (3 of 5), all of DeltaNet's
        # elementwise state work (7), lightning's decay (1 of 5: k^T v and q S are matmuls it counts)
        extra -= state * {"mamba1": 3, "mamba2": 3, "gated_deltanet": 7, "lightning": 1,
                          "short_conv": 0}[config.state_kind(i)]
    return extra


def _prefill_extra(config: ModelConfig, P: int) -> int:
    """FLOPs transformers' eager prefill of P tokens multiplies beyond `prefill_flops(P)`, each term a choice of its
    code: every attention layer scores all P x P pairs, then masks the non-causal (windowed, chunked) ones; Llama 4
    runs every expert on every token; a short convolution pads its input with kernel - 1 zeros and computes that many
    outputs more, then drops them; lightning attention prefills in blocks of `block_size` b (Lightning Attention-2,
    arXiv:2401.04658): within a block as attention, q k^T then its product with v (2 b^2 d each per head), across blocks through
    the state, q S and the next k^T v (2 b d^2 each), instead of the recurrence's 5 d^2 per token and head; Jamba's
    Mamba-1 scans token by token, its causal conv padded to P + kernel - 1 outputs, and the counter sees each step's
    C h readout (2 of the convention's 5 FLOPs per state number)."""
    per_key = config.attention_flops_per_key("expanded")
    extra = per_key * P * P * len(config.attention_layers) - config.prefill_attention_flops(P, "expanded")
    extra += P * _embedders_extra(config)  # Gemma 3n's wrapper: each token through its image and audio embedders
    if config.family_label == "Llama 4":
        extra += P * len(config.moe_layers) * (config.num_experts - config.num_experts_per_tok) * 2 * 3 * \
            config.hidden_size * config.moe_intermediate_size
    H, d = config.num_attention_heads, config.head_dim
    for i in config.state_layers:
        if config.kinds[i] == "short_conv":
            extra += 2 * config.hidden_size * config.conv_kernel * (config.conv_kernel - 1)
        elif config.kinds[i] == "lightning":
            b = config.raw["block_size"]
            blocks = [min(b, P - start) for start in range(0, P, b)]
            extra += H * sum(4 * n * n * d + 4 * n * d * d for n in blocks) - P * H * 5 * d * d
        elif config.kinds[i] == "mamba1":
            conv, state = config.state_elements(i)
            extra += 2 * conv * (config.conv_kernel - 1) - 3 * state * P
        elif config.state_kind(i) in ("mamba2", "gated_deltanet"):  # Falcon-H1: beside attention, in every layer
            conv, _ = config.state_elements(i)  # conv_kernel inputs per channel: the padded conv's kernel - 1 outputs
            extra += 2 * conv * (config.conv_kernel - 1) + _chunked_minus_recurrence(config, i, P)
    return extra


def _chunked_minus_recurrence(config: ModelConfig, layer: int, P: int) -> int:
    """The products transformers' torch prefill of a Mamba-2 or gated DeltaNet layer multiplies, less the recurrence
    the convention counts (5 or 7 FLOPs per state number and token). Both pad P to nc chunks of Q (T = nc Q):

    Mamba-2's SSD (`mamba2_chunk_scan`: H heads of p values, state n): within each chunk C B^T (2 H Q^2 n) and its
    product with x (2 H Q^2 p); the chunk's final states B^T x (2 H T p n); the (nc + 1) x (nc + 1) decay across chunk
    states (2 H (nc + 1)^2 p n); their readout C h (2 H T p n). Quadratic only within a chunk, linear across chunks.
    Gated DeltaNet (`torch_chunk_gated_delta_rule`, Q = 64: Hv value heads, keys of dk, values of dv): per chunk the
    UT system k_beta k^T and q k^T (2 Hv Q^2 dk each), then k_cumdecay S, q S and k^T v_new (2 Hv Q dk dv each) and
    the intra-chunk product with v_new (2 Hv Q^2 dv); its two triangular solves are not matmuls the counter sees."""
    if config.state_kind(layer) == "mamba2":
        H, p, n = config.mamba_num_heads, config.mamba_head_dim, config.ssm_state_size
        Q = config.raw.get("chunk_size") or config.raw["mamba_chunk_size"]
        nc = -(-P // Q)
        chunked = 2 * H * (nc * Q * Q * (n + p) + 2 * nc * Q * p * n + (nc + 1) ** 2 * p * n)
        return chunked - 5 * H * p * n * P
    H, dk, dv, Q = config.linear_num_value_heads, config.linear_key_head_dim, config.linear_value_head_dim, 64
    nc = -(-P // Q)
    chunked = 2 * H * nc * Q * (2 * Q * dk + 3 * dk * dv + Q * dv)
    return chunked - 7 * H * dk * dv * P


@pytest.mark.parametrize("model_type", list(VARIANTS) + list(WRAPPER_CASES))
def test_small_variant_decode_flops_match_the_flop_counter(model_type):
    """One decoded token after context - 1 prefilled: the counter's FLOPs are `flops_per_token(context)`, with
    the MoE layers counting the k routed experts, up to `_implementation_extra` (each term named there)."""
    raw = _small_variant(model_type)
    config = ModelConfig.from_hf(raw)
    model = _eager_model(raw)
    for context in (6, 10):
        with torch.no_grad():
            cache = model(torch.arange(2, context + 1)[None], use_cache=True).past_key_values
        counted = _counted(lambda cache=cache: model(torch.tensor([[5]]), past_key_values=cache, use_cache=True))
        assert counted == config.flops_per_token(context, mla="expanded") + _implementation_extra(config, context)


@pytest.mark.parametrize("model_type", [f.model_type for f in FAMILIES
                                        if f.model_type not in ENCODER_DECODERS | WRAPPERS_ONLY] + list(WRAPPER_CASES))
def test_small_variant_prefill_flops_match_the_flop_counter(model_type):
    """A prefill of P tokens in one forward (transformers' torch path, as on a CPU): `prefill_flops(P)` plus what the
    eager code multiplies beyond it (`_prefill_extra`: masked attention pairs, a padded convolution's extra outputs,
    lightning's blockwise form, Mamba-1's token-by-token scan, Mamba-2's and DeltaNet's chunked algorithms in place
    of the recurrence, `_chunked_minus_recurrence`). Hybrids at three prompt lengths: inside one chunk, past it."""
    raw = _small_variant(model_type)
    config = ModelConfig.from_hf(raw)
    model = _eager_model(raw)
    for P in ((5, 9, 70) if config.is_hybrid else (9,)):
        counted = _counted(lambda P=P: model(torch.arange(2, P + 2)[None], use_cache=False))
        assert counted == config.prefill_flops(P, mla="expanded") + _prefill_extra(config, P), P


# -----------------------------------------------------------------------------
# Whisper, the encoder-decoder: a small variant with the real block structure (two sizes of heads, untied head)

WHISPER = dict(architectures=["WhisperForConditionalGeneration"], model_type="whisper", vocab_size=97, d_model=48,
               encoder_layers=2, decoder_layers=3, encoder_attention_heads=4, decoder_attention_heads=6,
               encoder_ffn_dim=40, decoder_ffn_dim=56, num_mel_bins=8, max_source_positions=10,
               max_target_positions=16, tie_word_embeddings=False, pad_token_id=0, bos_token_id=1, eos_token_id=1,
               decoder_start_token_id=1)


def _whisper_model(raw: dict, **kwargs):
    torch.manual_seed(0)
    return transformers.AutoModelForSpeechSeq2Seq.from_config(_hf_config(raw), **kwargs).eval()


def _features(config: ModelConfig):
    # the encoder takes 2 x max_source_positions mel frames (30 s is 3,000 frames, 1,500 positions)
    return torch.randn(1, config.num_mel_bins, 2 * config.encoder_positions)


@pytest.mark.parametrize("tie", [False, True])
def test_whisper_counts_match_transformers(tie):
    raw = {**WHISPER, "tie_word_embeddings": tie}
    config = _check_against_transformers(raw)
    total, active, encoder, layers = _whisper_counts(_hf_config(raw))
    assert config.encoder_params() == encoder and config.num_hidden_layers == layers
    assert next(p for p in config.param_breakdown() if p.part == "audio encoder").total == encoder


def test_whisper_cache_after_a_forward_matches_transformers():
    """Self-attention KV for the decoded tokens (one more position each) + the cross-attention KV of every encoder
    position, as transformers' EncoderDecoderCache holds them after a forward in bfloat16."""
    config = ModelConfig.from_hf(WHISPER)
    model = _whisper_model(WHISPER).to(torch.bfloat16)
    features = _features(config).to(torch.bfloat16)
    for context in (5, 12):
        with torch.no_grad():
            cache = model(input_features=features, decoder_input_ids=torch.arange(1, context)[None],
                          use_cache=True).past_key_values
        self_bytes = sum((layer.keys.shape[-2] + 1) * (layer.keys[..., :1, :].numel() + layer.values[..., :1, :].numel())
                         * layer.keys.element_size() for layer in cache.self_attention_cache.layers)
        cross_bytes = sum((layer.keys.numel() + layer.values.numel()) * layer.keys.element_size()
                          for layer in cache.cross_attention_cache.layers)
        assert config.cross_kv_bytes("bf16") == cross_bytes
        assert config.kv_cache_bytes(context, 1, "bf16") == self_bytes + cross_bytes
        assert sum(g.bytes for g in config.kv_cache_breakdown(context, "bf16")) == self_bytes + cross_bytes
    assert config.kv_cache_bytes(12) - config.kv_cache_bytes(5) == 7 * config.kv_cache_bytes_per_token("bf16")
    with pytest.raises(ValueError, match=r"context must be at most max_target_positions \(16\).*got 17"):
        config.kv_cache_bytes(17)


def test_whisper_flops_match_the_flop_counter():
    """Which part runs when: the encoder once per window (`encoder_flops`), a prefill adds cross-attention's k and v
    projections (`cross_kv_flops`) and the prompt's tokens; each decoded token costs `flops_per_token` (self-attention
    over its context, cross-attention over every encoder position, no encoder)."""
    config = ModelConfig.from_hf(WHISPER)
    model = _whisper_model(WHISPER, attn_implementation="eager")  # every score an aten matmul the counter sees
    assert type(model).__name__ == "WhisperForConditionalGeneration" and model.config._attn_implementation == "eager"
    features = _features(config)
    assert _counted(lambda: model.model.encoder(features)) == config.encoder_flops()
    P = 6
    counted = _counted(lambda: model(input_features=features, decoder_input_ids=torch.arange(1, P + 1)[None],
                                     use_cache=False))
    per_key = config.attention_flops_per_key()
    masked = config.num_hidden_layers * per_key * (P * P - P * (P + 1) // 2)  # eager scores all P x P, then masks
    assert counted == config.prefill_flops(P) + masked
    with torch.no_grad():
        encoded = model.model.encoder(features)
    for context in (4, 9):
        with torch.no_grad():
            cache = model(encoder_outputs=encoded, decoder_input_ids=torch.arange(1, context)[None],
                          use_cache=True).past_key_values
        counted = _counted(lambda cache=cache: model(encoder_outputs=encoded, decoder_input_ids=torch.tensor([[5]]),
                                                     past_key_values=cache, use_cache=True))
        assert counted == config.flops_per_token(context)


# -----------------------------------------------------------------------------
# Qwen2.5-VL: the language model inside its wrapper (4.x layout: text fields at the top), a small vision tower


QWEN2_5_VL = dict(architectures=["Qwen2_5_VLForConditionalGeneration"], model_type="qwen2_5_vl", **TINY,
                  use_sliding_window=True, sliding_window=4, max_window_layers=3, tie_word_embeddings=False,
                  rope_scaling={"type": "mrope", "mrope_section": [1, 1, 2]},
                  vision_config=dict(depth=2, hidden_size=16, intermediate_size=24, num_heads=2, patch_size=4,
                                     spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=48))


@pytest.mark.parametrize("layout", ["flat", "text_config"])
def test_qwen2_5_vl_counts_tower_and_cache_match_transformers(layout):
    raw = dict(QWEN2_5_VL)
    raw.pop("head_dim")  # Qwen2.5-VL's attention is hidden / heads wide
    if layout == "text_config":  # transformers 5 saves the language model under text_config
        text = {k: raw.pop(k) for k in list(raw) if k in TINY or k in (
            "use_sliding_window", "sliding_window", "max_window_layers", "rope_scaling")}
        raw["text_config"] = {**text, "model_type": "qwen2_5_vl_text"}
    config = _check_against_transformers(raw)  # total, active, layer kinds and windows, and the vision tower
    assert config.vision_params > 0 and config.sliding_window_layers == (3, 4, 5)
    torch.manual_seed(0)
    model = transformers.AutoModelForImageTextToText.from_config(_hf_config(raw)).eval().to(torch.bfloat16)
    for context in (7, 11):  # text only: the tower does not run, the language model's cache is the Qwen2 one
        assert config.kv_cache_bytes(context, 1, "bf16") == _measured_cache_bytes(model, context)
