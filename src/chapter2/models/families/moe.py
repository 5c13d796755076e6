"""Mixtures of experts (section 2.2.4): one `Family` each, and the layout and expert rules only they use.

Defaults are those of the config classes of transformers 5 (tests/test_model_families.py compares every entry
with the installed class). DeepSeek's `moe_layer_freq` is not a transformers field (its model classes ignore
it); its default 1 is that of DeepSeek's own configuration_deepseek.py, whose layer rule this module follows.
"""

from __future__ import annotations

from ..layers.mla import LatentAttention
from ..rules import alternating, every_layer, one_window, qwen_experts, qwen_window
from . import family

__all__ = ["FAMILIES"]


def _olmoe_head_dim(r, sizes: dict) -> None:
    """OLMoE's q and k norms span hidden_size: transformers builds it only with head_dim = hidden / heads."""
    hidden, heads, head_dim = sizes["hidden_size"], sizes["num_attention_heads"], sizes["head_dim"]
    if head_dim * heads != hidden:
        raise ValueError(f"{r.where}['head_dim'] must be hidden_size / num_attention_heads = {hidden / heads:g} "
                         f"for OLMoE (its q and k norms span hidden_size), got {head_dim}")


def _dots1(r, layers: int) -> tuple:
    """dots.llm1: `layer_types`, else sliding from layer `max_window_layers` on whenever `sliding_window` is set
    (no on/off key)."""
    given = r.layer_types(layers)
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if given is not None:
        return given, window, None
    start = r.int("max_window_layers", zero=True)
    return ["sliding_attention" if window and i >= start else "full_attention" for i in range(layers)], window, None


def _qwen2_moe(r, layers: int) -> tuple:
    """Qwen2-MoE (transformers): `layer_types`, else every other layer below `max_window_layers` slides."""
    given = r.layer_types(layers)
    window = qwen_window(r)
    if given is not None:
        return given, window, None
    start = r.int("max_window_layers", zero=True)
    return (["sliding_attention" if window and (i + 1) % 2 and i < start else "full_attention" for i in range(layers)],
            window, None)


def _qwen3_moe(r, layers: int) -> tuple:
    """Qwen3-MoE: every layer slides when `use_sliding_window` (its config has no layer_types)."""
    window = qwen_window(r)
    return ["sliding_attention" if window else "full_attention"] * layers, window, None


def _deepseek_experts(r, fam, layers: int, intermediate: int) -> dict:
    """DeepSeek-V2/V3, GLM-4.5: MoE from layer `first_k_dense_replace` on, with shared experts."""
    first = r.int("first_k_dense_replace", zero=True)
    freq = r.int("moe_layer_freq") if fam.moe_layer_freq else 1
    width = r.int("moe_intermediate_size")
    return dict(num_experts=r.int("n_routed_experts"), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=width,
                # DeepSeek's rule (its modeling code and vLLM's); transformers ignores moe_layer_freq
                moe_layers=tuple(i for i in range(first, layers) if i % freq == 0),
                shared_expert_intermediate_size=width * r.int("n_shared_experts", zero=True))


def _hunyuan_experts(r, fam, layers: int, intermediate: int) -> dict:
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


def _ernie_experts(r, fam, layers: int, intermediate: int) -> dict:
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


FAMILIES = (
    family("Mixtral", "mixtral", ["MixtralForCausalLM"], "MixtralConfig", "Mixtral 8x7B, Mixtral 8x22B", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": None, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None, "num_local_experts": 8,
        "num_experts_per_tok": 2}, [("num_experts", "num_local_experts")],
        qkv_bias=False, o_bias=False, layout=one_window, experts=every_layer, norm_topk_prob=True),
    family("Qwen2-MoE", "qwen2_moe", ["Qwen2MoeForCausalLM"], "Qwen2MoeConfig", "Qwen1.5-MoE, Qwen2-57B-A14B", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 24,
        "num_attention_heads": 16, "num_key_value_heads": 16, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "qkv_bias": True, "sliding_window": 4096,
        "use_sliding_window": False, "max_window_layers": 28, "layer_types": None, "num_experts": 60,
        "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
        "decoder_sparse_step": 1, "mlp_only_layers": None},
        qkv_bias="qkv_bias", o_bias=False, layout=_qwen2_moe, experts=qwen_experts, norm_topk_prob="norm_topk_prob",
        shared_expert_gate=True),
    family("Qwen3-MoE", "qwen3_moe", ["Qwen3MoeForCausalLM"], "Qwen3MoeConfig", "Qwen3-30B-A3B, Qwen3-235B-A22B", {
        "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144, "num_hidden_layers": 24,
        "num_attention_heads": 32, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096,
        "use_sliding_window": False, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
        "decoder_sparse_step": 1, "mlp_only_layers": None}, [("num_local_experts", "num_experts")],
        qk_norm=True, layout=_qwen3_moe, experts=qwen_experts, norm_topk_prob="norm_topk_prob"),
    family("DeepSeek-V2", "deepseek_v2", ["DeepseekV2ForCausalLM"], "DeepseekV2Config", "DeepSeek-V2, DeepSeek-V2-Lite", {
        "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False,
        "n_routed_experts": 64, "num_experts_per_tok": None, "moe_intermediate_size": 1407, "n_shared_experts": 2,
        "first_k_dense_replace": 0, "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512,
        "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}, [("num_experts", "n_routed_experts")],
        mlp_bias="mlp_bias", experts=_deepseek_experts, norm_topk_prob="norm_topk_prob", moe_layer_freq=True, latent=LatentAttention.read),
    family("DeepSeek-V3", "deepseek_v3", ["DeepseekV3ForCausalLM"], "DeepseekV3Config",
         "DeepSeek-V3, DeepSeek-R1, Kimi-K2, Moonlight", {
        "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432, "num_hidden_layers": 61,
        "num_attention_heads": 128, "num_key_value_heads": 128, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": 256,
        "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "n_shared_experts": 1, "first_k_dense_replace": 3,
        "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "v_head_dim": 128}, [("num_local_experts", "n_routed_experts")],
        experts=_deepseek_experts, norm_topk_prob="norm_topk_prob", router_bias=True, moe_layer_freq=True,
        latent=LatentAttention.read, model_types=("kimi_k2",)),
    family("Phi-3.5-MoE", "phimoe", ["PhimoeForCausalLM", "PhiMoEForCausalLM"], "PhimoeConfig", "Phi-3.5-MoE", {
        "vocab_size": 32064, "hidden_size": 4096, "intermediate_size": 6400, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "lm_head_bias": False,
        "sliding_window": None, "num_local_experts": 16, "num_experts_per_tok": 2},
        norm_bias=True, lm_head_bias="lm_head_bias", layout=one_window, experts=every_layer),
    family("OLMoE", "olmoe", ["OlmoeForCausalLM"], "OlmoeConfig", "OLMoE-1B-7B", {
        "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 16, "num_key_value_heads": None, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "num_experts": 64,
        "num_experts_per_tok": 8}, [("num_local_experts", "num_experts")],
        qk_norm=True, qk_norm_all_heads=True, experts=every_layer, experts_key="num_experts", check=_olmoe_head_dim),
    family("GraniteMoE", "granitemoe", ["GraniteMoeForCausalLM"], "GraniteMoeConfig", "Granite 3.0 1B-A400M, 3B-A800M", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "num_local_experts": 8,
        "num_experts_per_tok": 2},
        experts=every_layer),
    family("gpt-oss", "gpt_oss", ["GptOssForCausalLM"], "GptOssConfig", "gpt-oss-20b, gpt-oss-120b", {
        "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "num_hidden_layers": 36,
        "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": True, "sliding_window": 128,
        "layer_types": None, "num_local_experts": 128, "num_experts_per_tok": 4}, [("num_experts", "num_local_experts")],
        attention_sinks=True, layout=alternating, experts=every_layer, router_bias=True, expert_bias=True),
    family("GLM-4.5", "glm4_moe", ["Glm4MoeForCausalLM"], "Glm4MoeConfig", "GLM-4.5, GLM-4.5-Air, GLM-4.6", {
        "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 10944, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": 128,
        "num_experts_per_tok": 8, "moe_intermediate_size": 1408, "n_shared_experts": 1, "first_k_dense_replace": 1,
        "use_qk_norm": False}, [("num_local_experts", "n_routed_experts")],
        qkv_bias="attention_bias", o_bias=False, qk_norm="use_qk_norm", experts=_deepseek_experts,
        norm_topk_prob="norm_topk_prob", router_bias=True),
    family("dots.llm1", "dots1", ["Dots1ForCausalLM"], "Dots1Config", "dots.llm1.base, dots.llm1.inst", {
        "vocab_size": 152064, "hidden_size": 4608, "intermediate_size": 10944, "num_hidden_layers": 62,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "n_routed_experts": None,
        "num_experts_per_tok": None, "moe_intermediate_size": 1408, "n_shared_experts": None,
        "first_k_dense_replace": 0, "sliding_window": 4096, "max_window_layers": 62, "layer_types": None},
        [("num_local_experts", "n_routed_experts")],
        qk_norm=True, layout=_dots1, experts=_deepseek_experts, norm_topk_prob="norm_topk_prob", router_bias=True),
    family("Hunyuan MoE", "hunyuan_v1_moe", ["HunYuanMoEV1ForCausalLM"], "HunYuanMoEV1Config", "Hunyuan-A13B", {
        "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "num_experts": 1,
        "moe_topk": 1}, [("num_experts_per_tok", "moe_topk"), ("num_local_experts", "num_experts")],
        qk_norm=True, experts=_hunyuan_experts),
    family("ERNIE 4.5 MoE", "ernie4_5_moe", ["Ernie4_5_MoeForCausalLM"], "Ernie4_5_MoeConfig",
         "ERNIE-4.5-21B-A3B, ERNIE-4.5-300B-A47B", {
        "vocab_size": 103424, "hidden_size": 2560, "intermediate_size": 12288, "num_hidden_layers": 28,
        "num_attention_heads": 20, "num_key_value_heads": 4, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": True, "use_bias": False, "moe_num_experts": 64, "moe_k": 6,
        "moe_intermediate_size": 1536, "moe_num_shared_experts": 2, "moe_layer_start_index": 1,
        "moe_layer_end_index": -1, "moe_layer_interval": 1},
        [("num_experts", "moe_num_experts"), ("num_experts_per_tok", "moe_k")],
        qkv_bias="use_bias", o_bias="use_bias", mlp_bias="use_bias", lm_head_bias="use_bias", experts=_ernie_experts,
        router_bias=True, k_key="moe_k"),
    family("MiniMax-M2", "minimax_m2", ["MiniMaxM2ForCausalLM"], "MiniMaxM2Config", "MiniMax-M2", {
        "vocab_size": 200064, "hidden_size": 3072, "intermediate_size": 1536, "num_hidden_layers": 62,
        "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 196608,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "num_experts_per_tok": 8, "num_local_experts": 256},
        [("num_experts", "num_local_experts")],
        qkv_bias=False, o_bias=False, qk_norm=True, qk_norm_all_heads=True, experts=every_layer, router_bias=True),
)
