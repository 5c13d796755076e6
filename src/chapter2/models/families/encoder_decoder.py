"""Encoder-decoders (section 2.1): an encoder run once per input window, a decoder per token. One `Family` each.

Whisper reads its own keys (`d_model`, `decoder_layers`, ...) with a reader of its own (`read`): the decoder's sizes
go to `ModelConfig`'s fields, the encoder's to `encoder.AudioEncoder`, which makes its parts (the encoder pass, the
cross-attention and its fixed cache: `models/encoder.py`). Defaults are those of WhisperConfig in transformers 5.
"""

from __future__ import annotations

from ..encoder import AudioEncoder
from . import family

__all__ = ["FAMILIES"]


def _whisper(r, c: dict, fam, arch: str, described, name: str | None) -> dict:
    """Whisper: the decoder's sizes in the decoder-only fields, the encoder's in `encoder`.

    The decoder has `decoder_layers` blocks of self-attention, cross-attention and an ungated
    MLP (fc1, GELU, fc2), learned positions for `max_target_positions` tokens, and LayerNorms
    with biases (three per block); the encoder sees `max_source_positions` positions.
    """
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
        encoder=AudioEncoder(layers=r.int("encoder_layers"), heads=heads["encoder_attention_heads"],
                             ffn=r.int("encoder_ffn_dim"), positions=r.int("max_source_positions"),
                             mel_bins=r.int("num_mel_bins")),
        source=c.get("_source", ""), family_label=fam.label, raw=dict(c),
        defaulted=tuple(r.defaulted))


FAMILIES = (
    family("Whisper", "whisper", ["WhisperForConditionalGeneration"], "WhisperConfig",
         "Whisper (tiny to large-v3, large-v3-turbo), Distil-Whisper", {
        "vocab_size": 51865, "num_mel_bins": 80, "encoder_layers": 4, "encoder_attention_heads": 6,
        "decoder_layers": 4, "decoder_attention_heads": 6, "decoder_ffn_dim": 1536, "encoder_ffn_dim": 1536,
        "d_model": 384, "max_source_positions": 1500, "max_target_positions": 448, "tie_word_embeddings": True},
        [("hidden_size", "d_model"), ("num_hidden_layers", "encoder_layers")],
        qkv_bias=True, o_bias=True, mlp_bias=True, norm_bias=True, norms_per_layer=3, read=_whisper,
        mlp_gated=False),
)
