"""Hybrids (section 2.5): recurrent layers among attention layers, one `Family` each, and the rules only they use.

The recurrent kinds are classes of `layers/` (Mamba-1 and -2, gated DeltaNet, short convolution, lightning
attention); a family names the kind's reader (`mixer`), its own where its config spells the sizes its own way
(Granite 4.0-H's and Falcon-H1's `mamba_*` keys). Defaults are those of the config classes of transformers 5.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..layers.gated_deltanet import GatedDeltaNet
from ..layers.lightning import Lightning
from ..layers.mamba1 import Mamba1
from ..layers.mamba2 import Mamba2
from ..layers.short_conv import ShortConv
from ..rules import every_layer, period, qwen_experts
from . import Wrapper, family, tied_by_outer
from .multimodal import QWEN3_5_TOWER, QWEN3_5_MOE_TOWER

__all__ = ["FAMILIES"]

QWEN3_5_WRAPPER = Wrapper("Qwen3_5ForConditionalGeneration", "qwen3_5", tied_by_outer(False), (QWEN3_5_TOWER,))
QWEN3_5_MOE_WRAPPER = Wrapper("Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe", tied_by_outer(False),
                              (QWEN3_5_MOE_TOWER,))


_NEMOTRON_SYMBOLS = {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"}
# transformers 5 names (and the names of older NemotronH configs) of a NemotronH layer
_NEMOTRON_BLOCKS = {"linear_attention": "mamba", "mamba": "mamba", "full_attention": "attention",
                    "attention": "attention", "moe": "moe", "mlp": "mlp"}


def _nemotron_blocks(r) -> list:
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


def _nemotron_layers(r) -> int:
    """NemotronH: as many layers as its pattern lists (transformers ignores num_hidden_layers)."""
    return len(_nemotron_blocks(r))


def _nemotron_h(r, layers: int) -> tuple:
    """NemotronH: one block per layer; Mamba-2 and attention layers mix, MoE and MLP layers have no mixer."""
    kinds = {"mamba": "mamba2", "attention": "full_attention", "moe": "none", "mlp": "none"}
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if window:
        raise ValueError(f"{r.name('sliding_window')}: a NemotronH with sliding-window attention is not read "
                         f"(transformers' NemotronH attends to the whole context), got {window}")
    return [kinds[b] for b in _nemotron_blocks(r)], None, None


def _qwen3_next(r, layers: int) -> tuple:
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


def _granite_hybrid(r, layers: int) -> tuple:
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


def _lfm2(r, layers: int) -> tuple:
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


def _minimax(r, layers: int) -> tuple:
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


def _jamba(r, layers: int) -> tuple:
    """Jamba: attention in every layer i with i % attn_layer_period == attn_layer_offset, Mamba-1 elsewhere."""
    every, offset = period(r, "attn_layer_period", "attn_layer_offset")
    return ["full_attention" if i % every == offset else "mamba1" for i in range(layers)], None, None


def _nemotron_experts(r, fam, layers: int, intermediate: int) -> dict:
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


def _every_layer_shared(r, fam, layers: int, intermediate: int) -> dict:
    """Qwen3.5-MoE: every layer routes among `num_experts` experts of moe_intermediate_size, beside a gated
    shared expert of shared_expert_intermediate_size (its config has no intermediate_size: no dense MLP)."""
    return dict(num_experts=r.int(fam.experts_key), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=r.int("moe_intermediate_size"), moe_layers=tuple(range(layers)),
                shared_expert_intermediate_size=r.int("shared_expert_intermediate_size", zero=True))


def _granite_hybrid_experts(r, fam, layers: int, intermediate: int) -> dict:
    """Granite 4.0-H: every layer has a gated shared MLP of shared_intermediate_size; with experts, every layer
    also routes among `num_local_experts` of intermediate_size. Without, the shared MLP is the dense MLP."""
    shared = r.int("shared_intermediate_size")
    experts = r.int("num_local_experts", zero=True)
    if not experts:
        return dict(intermediate_size=shared, moe_layers=())
    return dict(num_experts=experts, num_experts_per_tok=r.int("num_experts_per_tok"), moe_intermediate_size=intermediate,
                moe_layers=tuple(range(layers)), shared_expert_intermediate_size=shared)


def _lfm2_mlp(r, fam, layers: int, intermediate: int) -> dict:
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


def _lfm2_moe_experts(r, fam, layers: int, intermediate: int) -> dict:
    """LFM2-MoE: the first `num_dense_layers` layers have a gated MLP of intermediate_size (as given), the others
    route among `num_experts` experts of moe_intermediate_size. (Its router's `expert_bias`, one number per expert
    that steers the choice, is a buffer in transformers, not a parameter, and is not counted.)"""
    dense = r.int("num_dense_layers", zero=True)
    return dict(num_experts=r.int("num_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=r.int("moe_intermediate_size"), moe_layers=tuple(range(min(dense, layers), layers)))


def _jamba_experts(r, fam, layers: int, intermediate: int) -> dict:
    """Jamba: every layer i with i % expert_layer_period == expert_layer_offset routes among `num_experts`
    experts of intermediate_size (none when num_experts is 1: transformers then builds the dense MLP)."""
    every, offset = period(r, "expert_layer_period", "expert_layer_offset")
    experts = r.int("num_experts")
    return dict(num_experts=experts, num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate,
                moe_layers=tuple(i for i in range(layers) if experts > 1 and i % every == offset))


def _falcon_h1_mixer(r, sizes: dict) -> Mamba2:
    """Falcon-H1's Mamba-2 mixers: mamba_d_ssm channels (mamba_expand x hidden_size when null) in mamba_n_heads
    heads of mamba_d_head ("auto": d_ssm / heads); in_proj's bias is mamba_proj_bias, out_proj's projectors_bias;
    the gated RMSNorm only with mamba_rms_norm. State in float32, as transformers keeps it."""
    inner = r.int("mamba_d_ssm", derived=r.int("mamba_expand") * r.int("hidden_size"), null_is_value=True)
    return replace(Mamba2.read_mamba_keys(r, inner, f"mamba_d_ssm ({inner}), as FalconH1Config requires"),
                   out_bias=r.bool("projectors_bias"), norm=r.bool("mamba_rms_norm"))


def _granite_mixer(r, sizes: dict) -> Mamba2:
    """Granite 4.0-H's Mamba-2 mixers: mamba_expand x hidden_size channels."""
    inner = r.int("mamba_expand") * r.int("hidden_size")
    return Mamba2.read_mamba_keys(r, inner, f"mamba_expand x hidden_size ({inner})")


FAMILIES = (
    family("Nemotron-H", "nemotron_h", ["NemotronHForCausalLM"], "NemotronHConfig",
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
        layout=_nemotron_h, experts=_nemotron_experts, router_bias=True, mixer=Mamba2.read, mlp_gated=False, count_layers=_nemotron_layers),
    family("Qwen3-Next", "qwen3_next", ["Qwen3NextForCausalLM"], "Qwen3NextConfig", "Qwen3-Next-80B-A3B", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 48,
        "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "layer_types": None,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
        "decoder_sparse_step": 1, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
        "num_experts_per_tok": 10, "num_experts": 512, "mlp_only_layers": None},
        qk_norm=True, layout=_qwen3_next, experts=qwen_experts, norm_topk_prob="norm_topk_prob", shared_expert_gate=True,
        mixer=GatedDeltaNet.read, attn_output_gate=True),
    family("Granite 4.0-H", "granitemoehybrid", ["GraniteMoeHybridForCausalLM"], "GraniteMoeHybridConfig",
         "IBM Granite 4.0-H (Micro, Tiny, Small)", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8,
        "num_experts_per_tok": 2, "shared_intermediate_size": 1024, "layer_types": None, "mamba_n_heads": 128,
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_head": "auto", "mamba_d_conv": 4, "mamba_expand": 2,
        "mamba_conv_bias": True, "mamba_proj_bias": False},
        [("layers_block_type", "layer_types")],
        layout=_granite_hybrid, experts=_granite_hybrid_experts, mixer=_granite_mixer),
    family("Jamba", "jamba", ["JambaForCausalLM"], "JambaConfig", "Jamba-v0.1, Jamba 1.5 Mini and Large, Jamba Mini 1.6", {
        "vocab_size": 65536, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 262144,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "num_experts": 16, "num_experts_per_tok": 2,
        "expert_layer_period": 2, "expert_layer_offset": 1, "attn_layer_period": 8, "attn_layer_offset": 4,
        "mamba_d_state": 16, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_dt_rank": "auto", "mamba_conv_bias": True,
        "mamba_proj_bias": False},
        [("num_local_experts", "num_experts")],
        qkv_bias=False, o_bias=False, layout=_jamba, experts=_jamba_experts, mixer=Mamba1.read),
    family("Falcon-H1", "falcon_h1", ["FalconH1ForCausalLM"], "FalconH1Config",
         "Falcon-H1 (0.5B to 34B), Falcon-H1R, Falcon-H1-Tiny", {
        "vocab_size": 128000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
        "projectors_bias": False, "mamba_d_ssm": 1024, "mamba_n_heads": 128, "mamba_d_head": "auto",
        "mamba_n_groups": 1, "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_expand": 2, "mamba_conv_bias": True,
        "mamba_proj_bias": False, "mamba_rms_norm": False},
        mlp_bias="mlp_bias", mixer=_falcon_h1_mixer, parallel=True),
    family("Qwen3.5", "qwen3_5_text", ["Qwen3_5ForCausalLM"], "Qwen3_5TextConfig",
         "Qwen3.5 dense (language model; the multimodal release is read through text_config)", {
        "vocab_size": 248320, "hidden_size": 4096, "intermediate_size": 12288, "num_hidden_layers": 32,
        "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "layer_types": None,
        "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32},
        qk_norm=True, layout=_qwen3_next, mixer=GatedDeltaNet.read, attn_output_gate=True, wrapper=QWEN3_5_WRAPPER),
    family("Qwen3.5-MoE", "qwen3_5_moe_text", ["Qwen3_5MoeForCausalLM"],
         "Qwen3_5MoeTextConfig", "Qwen3.5-397B-A17B (language model; the multimodal release is read through text_config)", {
        "vocab_size": 248320, "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
        "num_key_value_heads": 2, "head_dim": 256, "max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
        "tie_word_embeddings": False, "attention_bias": False, "layer_types": None, "full_attention_interval": 4,
        "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "num_experts_per_tok": 8, "num_experts": 256},
        qk_norm=True, layout=_qwen3_next, experts=_every_layer_shared, experts_key="num_experts",
        norm_topk_prob="norm_topk_prob", shared_expert_gate=True, mixer=GatedDeltaNet.read, attn_output_gate=True,
        wrapper=QWEN3_5_MOE_WRAPPER, mlp=False),
    family("LFM2", "lfm2", ["Lfm2ForCausalLM"], "Lfm2Config", "Liquid AI LFM2 (350M, 700M, 1.2B, 2.6B), LFM2.5", {
        "vocab_size": 65536, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 128000, "norm_eps": 1e-05,
        "tie_word_embeddings": True, "conv_bias": False, "conv_L_cache": 3, "block_multiple_of": 256,
        "block_ffn_dim_multiplier": 1.0, "block_auto_adjust_ff_dim": True, "full_attn_idxs": None,
        "layer_types": None},
        qkv_bias=False, o_bias=False, qk_norm=True, eps_key="norm_eps", layout=_lfm2, experts=_lfm2_mlp,
        mixer=ShortConv.read, renamed=(("block_ff_dim", "intermediate_size"), ("tie_embedding", "tie_word_embeddings"))),
    family("LFM2-MoE", "lfm2_moe", ["Lfm2MoeForCausalLM"], "Lfm2MoeConfig", "Liquid AI LFM2-8B-A1B", {
        "vocab_size": 65536, "hidden_size": 2048, "intermediate_size": 7168, "moe_intermediate_size": 1792,
        "num_hidden_layers": 32, "tie_word_embeddings": True, "max_position_embeddings": 128000, "norm_eps": 1e-05,
        "num_attention_heads": 32, "num_key_value_heads": 8, "conv_bias": False, "conv_L_cache": 3,
        "num_dense_layers": 2, "num_experts_per_tok": 4, "num_experts": 32, "layer_types": None},
        qkv_bias=False, o_bias=False, qk_norm=True, eps_key="norm_eps", layout=_lfm2, experts=_lfm2_moe_experts,
        norm_topk_prob="norm_topk_prob", mixer=ShortConv.read, renamed=(("tie_embedding", "tie_word_embeddings"),)),
    family("MiniMax", "minimax", ["MiniMaxForCausalLM", "MiniMaxM1ForCausalLM", "MiniMaxText01ForCausalLM"],
         "MiniMaxConfig", "MiniMax-Text-01, MiniMax-M1 (40k, 80k)", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None, "num_experts_per_tok": 2,
        "num_local_experts": 8, "layer_types": None}, [("num_experts", "num_local_experts")],
        qkv_bias=False, o_bias=False, layout=_minimax, experts=every_layer, norm_topk_prob=True, mixer=Lightning.read),
)
