"""Calculator of section 2.2 (LLM architecture): a transformer drawn as blocks, with the chosen config's sizes.

Token embedding, then the same block N times (norm, attention with its Q, K and V
heads and the KV cache beside it, norm, a feed-forward network or a mixture of
experts), then the final norm and the LM head. An encoder-decoder (Whisper) has
its encoder's block above, run once per input window, feeding every decoder
block's cross-attention. Every size is read from the
config (`chapter2.models.ModelConfig`: a shipped config.json or one the reader
pastes); the drawing is `chapter2.charts.diagram`, rendered at build time for the
default model and again in the browser for another.
"""

from __future__ import annotations

from .. import charts
from ..format import nbytes
from ._models import experts_picked, model_fields, pick_model
from ._registry import Output, calculator

BLOCK = charts.ChartSpec("data flow, top to bottom", "the model's parts", kind="diagram")


def _attention(c) -> str:
    """What one attention layer computes: its query heads, and where K and V come from."""
    if c.uses_mla:
        text = (f"{c.num_attention_heads} query heads; K and V rebuilt from one {c.kv_lora_rank}-number latent "
                f"per token (multi-head latent attention)")
    elif c.num_key_value_heads == c.num_attention_heads:
        text = f"Q, K, V: {c.num_attention_heads} heads of {c.head_dim} each"
    else:
        share = c.num_attention_heads // c.num_key_value_heads
        text = (f"Q: {c.num_attention_heads} heads of {c.head_dim}; K, V: {c.num_key_value_heads} heads, "
                f"each shared by {share} query heads")
    windowed = len(c.sliding_window_layers)
    if c.sliding_window and windowed:
        text += f"; {windowed} of {c.num_hidden_layers} layers see only the last {c.sliding_window:,} tokens"
    return text


def _ffn(c) -> tuple[str, str]:
    """The feed-forward part: its name and its sizes."""
    if not c.is_moe:
        return "Feed-forward (MLP)", f"{c.hidden_size:,} → {c.intermediate_size:,} → {c.hidden_size:,}, every token"
    text = (f"a router picks {experts_picked(c)} of {c.num_experts} experts per token, each "
            f"{c.hidden_size:,} → {c.moe_intermediate_size:,} → {c.hidden_size:,}")
    if c.shared_expert_intermediate_size:
        text += f", plus a shared expert of {c.shared_expert_intermediate_size:,} every token uses"
    dense = c.num_hidden_layers - len(c.moe_layers)
    if c.moe_layers and dense:
        text += f"; {dense} of {c.num_hidden_layers} layers have a dense MLP instead"
    return "Mixture of experts", text


def encoder_decoder_diagram(c) -> dict:
    """An encoder-decoder (Whisper) as boxes: the audio encoder's stem and block, run once per 30 s window, whose
    output every decoder layer's cross-attention reads; then the decoder's block, run once per token.

    Whisper (Radford et al. 2022, arXiv:2212.04356, section 2.2): two convolutions (the second of stride 2) turn
    the window's 2 x 1,500 log-mel frames into 1,500 positions; pre-norm blocks; the decoder's learned positions
    (`max_target_positions`) bound its context. Sizes from the config; caches in BF16.
    """
    d, S, T = c.hidden_size, c.encoder_positions, c.max_position_embeddings
    enc_head = d // c.encoder_attention_heads
    self_kv = nbytes(c.kv_cache_bytes_per_token("bf16") / c.num_hidden_layers)
    cross_kv = nbytes(c.cross_kv_bytes("bf16") / c.num_hidden_layers)
    boxes = [
        ("Audio in", f"one 30 s window: {2 * S:,} frames of {c.num_mel_bins} mel bins", 0),
        ("Conv stem + positions", f"two convolutions, {c.num_mel_bins} → {d:,} channels, the second of "
                                  f"stride 2: {S:,} positions of {d:,} numbers, plus a position vector each", 0),
        ("Norm", f"over the {d:,} numbers of each position", -1),
        ("Encoder self-attention", f"{c.encoder_attention_heads} heads of {enc_head}; every one of the {S:,} "
                                   f"positions sees all the others, no causal mask", 1),
        ("Norm", "", -1),
        ("Feed-forward (MLP)", f"{d:,} → {c.encoder_ffn_dim:,} → {d:,}, every position", 2),
        ("Encoder output", f"final norm: {S:,} × {d:,} numbers, computed once per window; every decoder layer's "
                           f"cross-attention reads them", 0),
        ("Decoder: token embedding", f"{c.vocab_size:,} rows of {d:,} numbers, plus one of {T:,} learned positions", 0),
        ("Norm", f"over the {d:,} numbers of each token", -1),
        ("Self-attention (causal)", _attention(c), 1, f"KV cache: {self_kv} per token and layer, up to {T:,} tokens"),
        ("Norm", "", -1),
        ("Cross-attention", f"{c.num_attention_heads} query heads from the token; K and V projected from the "
                            f"encoder's {S:,} positions", 1,
         f"cross-attention cache: {cross_kv} per layer, fixed, projected once per window"),
        ("Norm", "", -1),
        ("Feed-forward (MLP)", f"{d:,} → {c.intermediate_size:,} → {d:,}, every token", 2),
        ("Final norm", "", -1),
        ("LM head", f"{d:,} → {c.vocab_size:,} scores, one per token of the vocabulary "
                    f"({'tied to the embedding' if c.tie_word_embeddings else 'its own weights'})", 3),
    ]
    return charts.diagram(boxes, repeat=[(2, 6, f"× {c.encoder_layers} encoder layers"),
                                         (8, 14, f"× {c.num_hidden_layers} decoder layers")],
                          summary=(f"{c.name}: an encoder of {c.encoder_layers} blocks runs once per 30 s of audio "
                                   f"({S:,} positions); its output fills a fixed cross-attention cache of "
                                   f"{nbytes(c.cross_kv_bytes('bf16'))}; then a decoder of {c.num_hidden_layers} "
                                   f"blocks runs once per token, its own KV cache growing by "
                                   f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} per token (BF16)."))


def block_diagram(c) -> dict:
    """The model as boxes: embedding, N x (norm, attention + KV cache, norm, FFN or MoE), final norm, LM head;
    an encoder-decoder's encoder first (`encoder_decoder_diagram`)."""
    if c.is_encoder_decoder:
        return encoder_decoder_diagram(c)
    per_layer = c.kv_cache_bytes_per_token("bf16") / c.num_hidden_layers
    ffn, ffn_detail = _ffn(c)
    head = "tied to the embedding" if c.tie_word_embeddings else "its own weights"
    boxes = [
        ("Token embedding", f"looks up each token: {c.vocab_size:,} rows of {c.hidden_size:,} numbers", 0),
        ("Norm", f"over the {c.hidden_size:,} numbers of each token", -1),
        ("Attention", _attention(c), 1,
         f"KV cache: K and V of every earlier token, {nbytes(per_layer)} per token (BF16)"),
        ("Norm", "then each part adds its output to the token's running sum (the residual stream)", -1),
        (ffn, ffn_detail, 2),
        ("Final norm", "", -1),
        ("LM head", f"{c.hidden_size:,} → {c.vocab_size:,} scores, one per token of the vocabulary ({head})", 3),
    ]
    return charts.diagram(boxes, repeat=(1, 5, f"× {c.num_hidden_layers} layers"),
                          summary=(f"{c.name}: {c.num_hidden_layers} identical blocks; the KV cache holds "
                                   f"{nbytes(c.kv_cache_bytes_per_token('bf16'))} per token over all layers in BF16."))


@calculator(
    "model_diagram",
    title="A transformer, block by block, with this model's sizes",
    fields=[*model_fields()],
    outputs=[Output("diagram", "The model's blocks, input at the top", kind="chart", chart=BLOCK)],
)
def model_diagram_calc(model, config_json):
    """Defaults: Llama-3.1-8B."""
    return {"diagram": block_diagram(pick_model(model, config_json))}
