"""Decoder-only transformers with dense MLPs (section 2.2): one `Family` each, and the layout rules only they use.

Defaults are those of the config classes of transformers 5 (tests/test_model_families.py compares every entry
with the installed class).
"""

from __future__ import annotations

from ..rules import alternating, no_rope_layers, one_window, qwen, qwen_window
from . import family

__all__ = ["FAMILIES"]


def _smollm3(r, layers: int) -> tuple:
    """SmolLM3: `layer_types`, else the RoPE layers slide (when `use_sliding_window`), the NoPE layers see
    everything."""
    given = r.layer_types(layers)
    window = qwen_window(r)
    if given is not None:
        return given, window, None
    rope = no_rope_layers(r, layers)
    return ["sliding_attention" if window and not rope[i] else "full_attention" for i in range(layers)], window, None


def _exaone4(r, layers: int) -> tuple:
    """EXAONE 4: `layer_types`, else one full layer in `sliding_window_pattern` (none slides without a window)."""
    given = r.layer_types(layers)
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if given is not None:
        return given, window, None
    every = r.int("sliding_window_pattern") if window else None
    return (["sliding_attention" if every and (i + 1) % every else "full_attention" for i in range(layers)],
            window, None)


FAMILIES = (
    family("Llama", "llama", ["LlamaForCausalLM"], "LlamaConfig", "Llama 2, Llama 3.x", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
        mlp_bias="mlp_bias"),
    family("Qwen2", "qwen2", ["Qwen2ForCausalLM"], "Qwen2Config", "Qwen2, Qwen2.5", {
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "sliding_window": 4096, "use_sliding_window": False,
        "max_window_layers": 28, "layer_types": None},
        qkv_bias=True, o_bias=False, layout=qwen),
    family("Qwen3", "qwen3", ["Qwen3ForCausalLM"], "Qwen3Config", "Qwen3 dense (0.6B to 32B)", {
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "sliding_window": 4096,
        "use_sliding_window": False, "max_window_layers": 28, "layer_types": None},
        qk_norm=True, layout=qwen),
    family("Gemma", "gemma", ["GemmaForCausalLM"], "GemmaConfig", "Gemma 2B, Gemma 7B", {
        "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576, "num_hidden_layers": 28,
        "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False}),
    family("Gemma 2", "gemma2", ["Gemma2ForCausalLM"], "Gemma2Config", "Gemma 2 (2B, 9B, 27B)", {
        "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
        "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 8192,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "sliding_window": 4096,
        "layer_types": None},
        norms_per_layer=4, layout=alternating),
    family("Phi-3", "phi3", ["Phi3ForCausalLM"], "Phi3Config", "Phi-3 mini/medium, Phi-3.5-mini, Phi-4, Phi-4-mini", {
        "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None},
        qkv_bias=False, o_bias=False, layout=one_window),
    family("OLMo 2", "olmo2", ["Olmo2ForCausalLM"], "Olmo2Config", "OLMo 2 (1B, 7B, 13B, 32B)", {
        "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False},
        qk_norm=True, qk_norm_all_heads=True),
    family("Granite", "granite", ["GraniteForCausalLM"], "GraniteConfig", "Granite 3.x dense", {
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
        mlp_bias="mlp_bias"),
    family("Cohere", "cohere", ["CohereForCausalLM"], "CohereConfig", "Command R, Command R+", {
        "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528, "num_hidden_layers": 40,
        "num_attention_heads": 64, "num_key_value_heads": None, "max_position_embeddings": 8192,
        "layer_norm_eps": 1e-05, "tie_word_embeddings": True, "attention_bias": False, "use_qk_norm": False},
        qk_norm="use_qk_norm", qk_norm_all_heads=True, norms_per_layer=1, eps_key="layer_norm_eps"),
    family("Hunyuan dense", "hunyuan_v1_dense", ["HunYuanDenseV1ForCausalLM"], "HunYuanDenseV1Config",
         "Hunyuan 0.5B-7B, Hunyuan-MT-7B", {
        "vocab_size": 290943, "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False},
        qk_norm=True),
    family("SmolLM3", "smollm3", ["SmolLM3ForCausalLM"], "SmolLM3Config", "SmolLM3-3B", {
        "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008, "num_hidden_layers": 36,
        "num_attention_heads": 16, "num_key_value_heads": 4, "max_position_embeddings": 32768,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": True, "attention_bias": False, "mlp_bias": False,
        "sliding_window": None, "use_sliding_window": False, "layer_types": None, "no_rope_layers": None,
        "no_rope_layer_interval": 4},
        mlp_bias="mlp_bias", layout=_smollm3),
    family("GLM-4", "glm4", ["Glm4ForCausalLM"], "Glm4Config", "GLM-4-9B-0414, GLM-4-32B-0414", {
        "vocab_size": 151552, "hidden_size": 4096, "intermediate_size": 13696, "num_hidden_layers": 40,
        "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "max_position_embeddings": 131072,
        "rms_norm_eps": 1.5625e-07, "tie_word_embeddings": False, "attention_bias": True},
        qkv_bias="attention_bias", o_bias=False, norms_per_layer=4),
    family("EXAONE 4", "exaone4", ["Exaone4ForCausalLM"], "Exaone4Config", "EXAONE 4.0 (1.2B, 32B)", {
        "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 16384, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 32, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": 4096, "sliding_window_pattern": 4,
        "layer_types": None},
        qkv_bias=False, o_bias=False, qk_norm=True, layout=_exaone4),
    family("Seed-OSS", "seed_oss", ["SeedOssForCausalLM"], "SeedOssConfig", "Seed-OSS-36B", {
        "vocab_size": 155136, "hidden_size": 4096, "intermediate_size": 27648, "num_hidden_layers": 64,
        "num_attention_heads": 80, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 524288,
        "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "attention_bias": True, "attention_out_bias": False,
        "mlp_bias": False},
        o_bias="attention_out_bias", mlp_bias="mlp_bias"),
    family("Apertus", "apertus", ["ApertusForCausalLM"], "ApertusConfig", "Apertus-8B, Apertus-70B", {
        "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "max_position_embeddings": 65536,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False},
        qk_norm=True, mlp_gated=False, mlp_act_params=2),
    family("Ministral 3", "ministral3", ["Ministral3ForCausalLM"], "Ministral3Config",
         "Ministral 3 (3B, 8B, 14B), Devstral 2 (the language model; Mistral3ForConditionalGeneration with a ministral3 "
         "text_config)", {
        "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 34,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "max_position_embeddings": 262144,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "sliding_window": None},
        qkv_bias=False, o_bias=False, layout=one_window),
    family("AFM (Arcee)", "arcee", ["ArceeForCausalLM"], "ArceeConfig", "Arcee AFM-4.5B, AFM-4.5B-Base", {
        "vocab_size": 32000, "hidden_size": 2560, "intermediate_size": 18432, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": None, "head_dim": None, "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False},
        mlp_bias="mlp_bias", mlp_gated=False),
)
