"""Language models released inside a multimodal wrapper (section 2.2): one `Family` each with its `Wrapper`, the
towers counted beside the language model (`ModelConfig.vision_params`), and the rules only they use.

A wrapper (…ForConditionalGeneration) holds the language model under `text_config` and a vision (or audio) tower
under `vision_config` (`audio_config`); each `Tower` counts its encoder and its projector into the language model
as transformers builds them, a key its config leaves out taking its config class's default. Defaults are those of
the config classes of transformers 5 (tests/test_model_families.py compares them with the installed classes).
"""

from __future__ import annotations

from ...config_reader import ConfigReader
from ..parts import AltUp, Laurel, PerLayerEmbeddings
from ..rules import alternate, no_rope_layers, one_window, qwen, qwen_experts
from . import Wrapper, family, tied_by_outer, tied_by_text, tower

__all__ = ["FAMILIES", "QWEN3_5_TOWER", "QWEN3_5_MOE_TOWER", "MISTRAL3_PROJECTOR"]


# -- towers


def _siglip_tower(r, text_hidden: int, _outer: dict) -> int:
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


def _llama4_tower(r, text_hidden: int, _outer: dict) -> int:
    """Llama 4: a bias-free patch projection, a class embedding, one position per patch and the class, LayerNorms
    before and after, blocks with biased q, k, v, o and fc1, fc2 and two LayerNorms; a pixel-shuffle adapter of two
    bias-free layers (intermediate -> projector_input -> projector_output); the projector (vision_output_dim -> text)."""
    d, ff, layers = r.int("hidden_size"), r.int("intermediate_size"), r.int("num_hidden_layers")
    ch, image, patch = r.int("num_channels"), r.int("image_size"), r.int("patch_size")
    p_in, p_out, out = r.int("projector_input_dim"), r.int("projector_output_dim"), r.int("vision_output_dim")
    blocks = layers * (4 * d * d + 4 * d + 2 * d * ff + ff + d + 4 * d)
    n = ch * patch * patch * d + d + ((image // patch) ** 2 + 1) * d + 4 * d + blocks + ff * p_in + p_in * p_out
    return n + out * text_hidden + (text_hidden if r.bool("multi_modal_projector_bias") else 0)


def _qwen_vl_tower(r, text_hidden: int, *, gated: bool, layernorm: bool, positions: bool) -> int:
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


def _qwen3_vl_tower(r, text_hidden: int, _outer: dict) -> int:
    """Qwen3-VL: the Qwen3.5 tower (LayerNorms, an ungated MLP, a biased conv, learned positions) plus one DeepStack
    merger per `deepstack_visual_indexes` entry: the hidden states of those blocks are merged (a LayerNorm over the
    concatenated neighbours, then the two biased layers) and added into the first language-model layers."""
    indexes = r.raw("deepstack_visual_indexes")
    if not isinstance(indexes, list | tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
        raise TypeError(f"{r.name('deepstack_visual_indexes')} must be a list of block indices, got {indexes!r}")
    merged, out = r.int("hidden_size") * r.int("spatial_merge_size") ** 2, r.int("out_hidden_size")
    deepstack = 2 * merged + merged * merged + merged + merged * out + out
    return _qwen_vl_tower(r, text_hidden, gated=False, layernorm=True, positions=True) + len(indexes) * deepstack


def _pixtral_tower(r, text_hidden: int, outer: dict) -> int:
    """Mistral 3: Pixtral (a bias-free patch conv, an RMSNorm before the blocks, blocks of two RMSNorms, bias-free q, k,
    v, o and a gated bias-free MLP; 2-D RoPE, no learned positions) and the wrapper's projector: an RMSNorm over the
    vision width, a patch merger (spatial_merge_size^2 neighbours -> the vision width, no bias), then two layers to the
    language model's width (with biases if multimodal_projector_bias), the first reading one vision width per layer
    named in vision_feature_layer."""
    d, ff, layers = r.int("hidden_size"), r.int("intermediate_size"), r.int("num_hidden_layers")
    ch, patch = r.int("num_channels"), r.int("patch_size")
    tower = ch * patch * patch * d + d + layers * (2 * d + 4 * d * d + 3 * d * ff)
    p = ConfigReader(outer, MISTRAL3_PROJECTOR.defaults, "config", owner=MISTRAL3_PROJECTOR.label,
                     config_class=MISTRAL3_PROJECTOR.config_class)
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


def _pairs(r, key: str) -> list:
    """Two (height, width) pairs: the kernel or stride sizes of Gemma 3n's two audio stem convolutions."""
    value = r.raw(key)
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool)
                                                                 and x >= 1 for x in p) for p in value)):
        raise ValueError(f"{r.name(key)} must be two [height, width] pairs of whole numbers >= 1, got {value!r}")
    return [tuple(p) for p in value]


def _gemma3n_audio(a, text_hidden: int, _outer: dict) -> int:
    """Gemma 3n's audio tower and its embedder, as transformers 5 builds them (the vision embedder: `_gemma3n_vision`).

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
    return encoder + _embedder(a.int("vocab_size"), d, text_hidden)


def _embedder(vocab: int, width: int, text_hidden: int) -> int:
    """A Gemma 3n multimodal embedder: its vocabulary's table, two RMSNorms over the width, width -> text hidden."""
    return vocab * width + 2 * width + width * text_hidden


def _gemma3n_vision(v, text_hidden: int, _outer: dict) -> int:
    """Gemma 3n's vision embedder (its timm MobileNetV5 tower, named by `architecture`, is not counted)."""
    width, _ = v.int("hidden_size"), v.raw("architecture")
    return _embedder(v.int("vocab_size"), width, text_hidden)


def _gemma3n_uncounted(v) -> tuple[str, ...]:
    return (f"vision tower (timm {v.raw('architecture')!r}, a MobileNetV5)",)


def _qwen2_5_vl_tower(r, text_hidden: int, _outer: dict) -> int:
    return _qwen_vl_tower(r, text_hidden, gated=True, layernorm=False, positions=False)


def _qwen3_5_tower(r, text_hidden: int, _outer: dict) -> int:
    return _qwen_vl_tower(r, text_hidden, gated=False, layernorm=True, positions=True)


SIGLIP = tower("SigLIP vision tower", "SiglipVisionConfig", {
    "hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12, "num_channels": 3, "image_size": 224,
    "patch_size": 16, "vision_use_head": True}, _siglip_tower)
LLAMA4_TOWER = tower("Llama 4 vision tower", "Llama4VisionConfig", {
    "hidden_size": 768, "intermediate_size": 5632, "num_hidden_layers": 34, "num_channels": 3, "image_size": 448,
    "patch_size": 14, "vision_output_dim": 7680, "projector_input_dim": 4096, "projector_output_dim": 4096,
    "multi_modal_projector_bias": False}, _llama4_tower)
QWEN3_5_TOWER = tower("Qwen3.5 vision tower", "Qwen3_5VisionConfig", {
    "depth": 27, "hidden_size": 1152, "intermediate_size": 4304, "in_channels": 3, "patch_size": 16,
    "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 3584, "num_position_embeddings": 2304},
    _qwen3_5_tower)
QWEN3_5_MOE_TOWER = tower("Qwen3.5 vision tower", "Qwen3_5MoeVisionConfig", dict(QWEN3_5_TOWER.defaults), _qwen3_5_tower)
QWEN2_5_VL_TOWER = tower("Qwen2.5-VL vision tower", "Qwen2_5_VLVisionConfig", {
    "depth": 32, "hidden_size": 3584, "intermediate_size": 3420, "in_channels": 3, "patch_size": 14,
    "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 3584}, _qwen2_5_vl_tower)
QWEN3_VL_TOWER = tower("Qwen3-VL vision tower", "Qwen3VLVisionConfig", {
    **QWEN3_5_TOWER.defaults, "deepstack_visual_indexes": (8, 16, 24)}, _qwen3_vl_tower)
QWEN3_VL_MOE_TOWER = tower("Qwen3-VL vision tower", "Qwen3VLMoeVisionConfig", dict(QWEN3_VL_TOWER.defaults),
                           _qwen3_vl_tower)
# Mistral 3: a Pixtral tower; the keys of the wrapper's own config that size its projector (Mistral3Config's
# defaults); the sizes Mistral3Config gives its vision and text configs when config.json has none (Mistral Small
# 3.1's), not those of PixtralVisionConfig and MistralConfig
MISTRAL3_PROJECTOR = tower("Mistral 3 projector", "Mistral3Config", {
    "spatial_merge_size": 2, "multimodal_projector_bias": False, "vision_feature_layer": -1})
PIXTRAL = tower("Pixtral vision tower", "PixtralVisionConfig", {
    "hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24, "num_channels": 3, "patch_size": 16},
    _pixtral_tower, absent_defaults={"intermediate_size": 4096, "hidden_size": 1024, "patch_size": 14,
                                     "num_hidden_layers": 24})
# Gemma 3n: its audio encoder and embedder (Gemma3nAudioConfig), its vision embedder (Gemma3nVisionConfig)
GEMMA3N_AUDIO = tower("Gemma 3n audio tower", "Gemma3nAudioConfig", {
    "hidden_size": 1536, "vocab_size": 128, "input_feat_size": 128, "conf_num_attention_heads": 8,
    "conf_num_hidden_layers": 12, "conf_conv_kernel_size": 5, "sscp_conv_channel_size": (128, 32),
    "sscp_conv_kernel_size": ((3, 3), (3, 3)), "sscp_conv_stride_size": ((2, 2), (2, 2))}, _gemma3n_audio,
    key="audio_config")
GEMMA3N_VISION = tower("Gemma 3n vision embedder", "Gemma3nVisionConfig", {
    "hidden_size": 2048, "vocab_size": 128, "architecture": "mobilenetv5_300m_enc"}, _gemma3n_vision,
    uncounted=_gemma3n_uncounted)


def _mistral3_tied(c: dict, r) -> bool:
    """Mistral 3's head: the outer tie_word_embeddings when the file has it, else the text_config's (its class
    default false), else, with no text_config at all, the outer default (true). Transformers 5 reads the outer key
    alone, whose default became true (huggingface/transformers#43429, for Ministral 3, whose text_config says
    true); it then ties the head of Mistral Small 3.1, whose config.json names no tie at all and whose checkpoint
    stores its own LM head (24.0B parameters, not 23.3B; vllm-project/vllm#51063). Only that case departs from
    transformers 5."""
    value = c.get("tie_word_embeddings")
    if value is not None and not isinstance(value, bool):
        raise TypeError(f"config['tie_word_embeddings'] must be true or false (a JSON boolean), got {value!r}")
    return value if value is not None else r.bool("tie_word_embeddings") if c.get("text_config") is not None else True


LLAMA4_WRAPPER = Wrapper("Llama4ForConditionalGeneration", "llama4", tied_by_text, (LLAMA4_TOWER,))
MISTRAL3 = Wrapper("Mistral3ForConditionalGeneration", "mistral3", _mistral3_tied, (PIXTRAL,),
                   text_types=("mistral", "ministral3"), text_defaults={
                       "head_dim": 128, "hidden_size": 5120, "intermediate_size": 32768,
                       "max_position_embeddings": 131072, "num_attention_heads": 32, "num_hidden_layers": 40,
                       "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "sliding_window": None, "vocab_size": 131072})
GEMMA3_WRAPPER = Wrapper("Gemma3ForConditionalGeneration", "gemma3", tied_by_outer(True), (SIGLIP,))
QWEN2_5_VL_WRAPPER = Wrapper("Qwen2_5_VLForConditionalGeneration", "qwen2_5_vl", tied_by_outer(False),
                             (QWEN2_5_VL_TOWER,), flat_text=True)
QWEN3_VL_WRAPPER = Wrapper("Qwen3VLForConditionalGeneration", "qwen3_vl", tied_by_outer(False), (QWEN3_VL_TOWER,))
QWEN3_VL_MOE_WRAPPER = Wrapper("Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe", tied_by_outer(False),
                               (QWEN3_VL_MOE_TOWER,))
GEMMA3N_WRAPPER = Wrapper("Gemma3nForConditionalGeneration", "gemma3n", tied_by_outer(True),
                          (GEMMA3N_AUDIO, GEMMA3N_VISION))


# -- layouts, experts and Gemma 3n's own parts


def _llama4(r, layers: int) -> tuple:
    """Llama 4: `layer_types`, else RoPE layers attend within chunks of `attention_chunk_size`; NoPE layers
    globally."""
    given = r.layer_types(layers)
    chunk = r.int("attention_chunk_size", optional=True, null_is_value=True)
    if given is not None:
        return given, None, chunk
    rope = no_rope_layers(r, layers)  # 1: a RoPE layer, chunked; 0: a NoPE layer with global attention
    return ["chunked_attention" if rope[i] and chunk else "full_attention" for i in range(layers)], None, chunk


def _llama4_experts(r, fam, layers: int, intermediate: int) -> dict:
    """Llama 4: `moe_layers` (or every `interleave_moe_layer_step`-th), one shared expert; dense layers wider."""
    moe_layers = r.int_list("moe_layers", low=0, high=layers - 1)
    if moe_layers is None:
        step = r.int("interleave_moe_layer_step")
        moe_layers = list(range(step - 1, layers, step))
    return dict(num_experts=r.int("num_local_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate, shared_expert_intermediate_size=intermediate,
                intermediate_size=r.int("intermediate_size_mlp"),  # the dense layers' width
                moe_layers=tuple(sorted(set(moe_layers))))


def _gemma3(r, layers: int) -> tuple:
    """Gemma 3: `layer_types`, else one full layer in `sliding_window_pattern`."""
    given = r.layer_types(layers)
    return alternate(r, layers, given, r.int("sliding_window_pattern") if given is None else 2)


def _causal_only(r, sizes: dict) -> None:
    """Gemma 3's text config may describe a bidirectional (embedding) model: not a causal LM, refused."""
    if r.c.get("use_bidirectional_attention"):
        raise ValueError(f"{r.name('use_bidirectional_attention')} is true: a bidirectional (embedding) model, "
                         "not a causal LM")


def _gemma3n_layout(r, layers: int) -> tuple:
    """Gemma 3n: `layer_types`, else every fifth layer full, the others sliding (Gemma3nTextConfig's default)."""
    return alternate(r, layers, r.layer_types(layers), 5)


def _gemma3n_widths(r, layers: int) -> tuple[int, ...]:
    """Gemma 3n's `intermediate_size`: one width for every layer, or a list of one per layer."""
    value = r.raw("intermediate_size")
    if isinstance(value, list):
        return tuple(r.int_list("intermediate_size", layers, low=1))
    return (r.int("intermediate_size"),) * layers


def _gemma3n_extras(r, layers: int, kinds: tuple) -> dict:
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
    ple = PerLayerEmbeddings(r.int("hidden_size_per_layer_input"), r.int("vocab_size_per_layer_input"))
    extras = (ple, AltUp(r.int("altup_num_inputs")), Laurel(r.int("laurel_rank")))
    return dict(extras=extras, kv_shared_layers=tuple(range(first, layers)),
                activation_sparsity=tuple(float(x) for x in sparsity))


FAMILIES = (
    family("Llama 4", "llama4_text", ["Llama4ForCausalLM"], "Llama4TextConfig",
         "Llama 4 Scout, Llama 4 Maverick", {
        "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192, "num_hidden_layers": 48,
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "layer_types": None,
        "attention_chunk_size": 8192, "no_rope_layers": None, "no_rope_layer_interval": 4, "num_local_experts": 16,
        "num_experts_per_tok": 1, "intermediate_size_mlp": 16384, "interleave_moe_layer_step": 1,
        "moe_layers": None},
        layout=_llama4, experts=_llama4_experts, wrapper=LLAMA4_WRAPPER),
    family("Mistral", "mistral", ["MistralForCausalLM"], "MistralConfig",
         "Mistral 7B, Mistral Nemo, Mistral Small (3.1 and 3.2: the language model of Mistral3ForConditionalGeneration)", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "sliding_window": 4096},
        qkv_bias=False, o_bias=False, layout=one_window, wrapper=MISTRAL3),
    family("Gemma 3", "gemma3_text", ["Gemma3ForCausalLM"], "Gemma3TextConfig",
         "Gemma 3 (1B text-only; 4B, 12B, 27B multimodal)", {
        "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 4096,
        "layer_types": None, "sliding_window_pattern": 6, "use_bidirectional_attention": False},
        qk_norm=True, norms_per_layer=4, layout=_gemma3, wrapper=GEMMA3_WRAPPER, check=_causal_only),
    family("Qwen2.5-VL", "qwen2_5_vl_text", [], "Qwen2_5_VLTextConfig",
         "Qwen2.5-VL (3B, 7B, 32B, 72B; the language model, its vision tower counted beside it)", {
        "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
        "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-05, "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 80,
        "layer_types": None},
        qkv_bias=True, o_bias=False, layout=qwen, wrapper=QWEN2_5_VL_WRAPPER),
    family("Qwen3-VL", "qwen3_vl_text", [], "Qwen3VLTextConfig",
         "Qwen3-VL dense (2B, 4B, 8B, 32B; the language model, its vision tower counted beside it)", {
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 128000,
        "rms_norm_eps": 1e-06, "attention_bias": False},
        qk_norm=True, wrapper=QWEN3_VL_WRAPPER),
    family("Qwen3-VL-MoE", "qwen3_vl_moe_text", [], "Qwen3VLMoeTextConfig",
         "Qwen3-VL-30B-A3B, Qwen3-VL-235B-A22B (the language model, its vision tower counted beside it)", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": None, "max_position_embeddings": 128000,
        "rms_norm_eps": 1e-06, "attention_bias": False, "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
        "num_experts_per_tok": 4, "num_experts": 60, "mlp_only_layers": None}, [("num_local_experts", "num_experts")],
        qk_norm=True, experts=qwen_experts, norm_topk_prob=True, wrapper=QWEN3_VL_MOE_WRAPPER),
    family("Gemma 3n", "gemma3n_text", ["Gemma3nForCausalLM"], "Gemma3nTextConfig",
         "Gemma 3n E2B, E4B (the language model; its vision and audio towers counted beside it)", {
        "vocab_size": 262400, "hidden_size": 2048, "intermediate_size": 16384, "num_hidden_layers": 35,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 512,
        "layer_types": None, "vocab_size_per_layer_input": 262144, "hidden_size_per_layer_input": 256,
        "altup_num_inputs": 4, "laurel_rank": 64, "num_kv_shared_layers": 15, "activation_sparsity_pattern": None},
        qk_norm=True, norms_per_layer=4, layout=_gemma3n_layout, wrapper=GEMMA3N_WRAPPER,
        mlp_widths=_gemma3n_widths, extras=_gemma3n_extras),
)
