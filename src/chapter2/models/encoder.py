"""An encoder-decoder's parts (section 2.1): an audio encoder run once per input window, a decoder run per token.

Whisper (Radford et al. 2022, arXiv:2212.04356, section 2.2; transformers' WhisperModel): the encoder turns 30 s
of audio (2 x `positions` log-mel frames of `mel_bins` bins) into `positions` vectors once; every decoder layer
attends to the tokens so far (self-attention, a KV cache that grows) and to all encoder positions
(cross-attention, whose keys and values are projected once per window and then cached: a fixed cache). The
decoder's sizes are `ModelConfig`'s own fields; `AudioEncoder` holds the encoder's and makes the parts.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layers import LayerKind
from .layers.attention import AttentionLayers, FullAttention, GroupedQueryAttention
from .part import KVGroup, Part, whole
from .parts import DenseMLPs, Embedding, LMHead, Norms

__all__ = ["AudioEncoder", "EncoderPass", "CrossAttention", "CrossAttentionKind", "LearnedPositions"]


@dataclass(frozen=True)
class AudioEncoder:
    """Whisper's encoder sizes: `layers` pre-LayerNorm blocks of `heads` heads, an MLP `ffn` wide, `positions`
    positions per input window (1,500 per 30 s, after the conv stem), `mel_bins` input channels."""

    layers: int
    heads: int
    ffn: int
    positions: int
    mel_bins: int
    flat = {"encoder_layers": "layers", "encoder_attention_heads": "heads", "encoder_ffn_dim": "ffn",
            "encoder_positions": "positions", "num_mel_bins": "mel_bins"}

    def parts(self, c) -> tuple[Part, ...]:
        """Encoder, embedding, learned positions, self-attention (no bias on k), cross-attention, MLPs (fc1, GELU,
        fc2, with biases), three LayerNorms per block and a final one, the LM head."""
        d, layers = c.hidden_size, c.num_hidden_layers
        self_attention = _WhisperAttention(d, c.num_attention_heads, c.num_key_value_heads, c.head_dim, qkv_bias=True,
                                           o_bias=True)
        return (EncoderPass(self, d), Embedding(c.vocab_size, d), LearnedPositions(c.max_position_embeddings, d),
                AttentionLayers(self_attention, FullAttention, layers),
                CrossAttention(d, layers, self.positions, c.num_attention_heads, c.head_dim),
                DenseMLPs(d, (c.intermediate_size,) * layers, True, False), Norms(d, layers, 3, True),
                LMHead(c.vocab_size, d, c.tie_word_embeddings))


@dataclass(frozen=True)
class _WhisperAttention(GroupedQueryAttention):
    """Whisper's attention: biases on q, v and o, none on k."""

    def weights(self) -> tuple[int, int]:
        matmul, other = super().weights()
        return matmul, other - self.kv_heads * self.head_dim


@dataclass(frozen=True)
class EncoderPass(Part):
    """The audio encoder, run once per input window (0 weights read per decoded token).

    Weights: a conv stem of two 3-tap convolutions with biases (mel bins -> d, then d -> d at stride 2, which
    halves 3,000 frames to 1,500 positions), a learned position table (positions x d), pre-LayerNorm blocks (q,
    k, v, o, k without a bias; fc1, fc2 with biases; two LayerNorms with biases), a final LayerNorm.
    FLOPs per window, in the convention of `ModelConfig.flops_per_token`: the stem (2 x taps x in x out channels
    per output position), 2 x each layer's matmul weights per position, and attention in both directions, each
    position attending to all of them at 4 d per key. whisper-large-v3: 2.27 TFLOPs per 30 s window.
    """

    encoder: AudioEncoder
    hidden: int
    label = "audio encoder"

    @property
    def total(self) -> int:
        d, f, mel, e = self.hidden, self.encoder.ffn, self.encoder.mel_bins, self.encoder
        stem = (mel * d * 3 + d) + (d * d * 3 + d)
        layer = (4 * d * d + 3 * d) + (2 * d * f + f + d) + 2 * 2 * d
        return stem + e.positions * d + e.layers * layer + 2 * d

    @property
    def active(self) -> int:
        return 0

    def window_flops(self) -> int:
        d, f, mel, S = self.hidden, self.encoder.ffn, self.encoder.mel_bins, self.encoder.positions
        stem = 2 * (2 * S) * 3 * mel * d + 2 * S * 3 * d * d
        per_layer = S * 2 * (4 * d * d + 2 * d * f) + 4 * d * S * S
        return stem + self.encoder.layers * per_layer


@dataclass(frozen=True)
class LearnedPositions(Part):
    """The decoder's learned position table: one vector per position it can hold."""

    positions: int
    hidden: int
    label = "positions"

    @property
    def total(self) -> int:
        return self.positions * self.hidden


class CrossAttentionKind(LayerKind):
    """The cache kind of cross-attention: the encoder's positions, projected once per window."""

    name = "cross_attention"
    label = "cross-attention (encoder positions)"


@dataclass(frozen=True)
class CrossAttention(Part):
    """Each decoder layer's attention to the encoder's `positions` outputs (q, k, v, o, biases on q, v, o).

    Its keys and values are projected once per input window (2 x 2 d^2 FLOPs per layer and position) and cached:
    a fixed cache of 2 d numbers per position and layer (whisper-large-v3 in bf16: 32 layers x 1,500 positions x
    2 x 1,280 x 2 bytes = 245.76 MB). A decoded token reads q and o only (k and v: 0 active) and attends to every
    position, at the self-attention's FLOPs per key.
    """

    hidden: int
    layers: int
    positions: int
    heads: int
    head_dim: int
    label = "cross-attention"

    def _layer(self) -> int:
        return 4 * self.hidden * self.hidden + 3 * self.hidden

    @property
    def total(self) -> int:
        return self.layers * self._layer()

    @property
    def active(self) -> int:
        return self.layers * (self._layer() - (2 * self.hidden * self.hidden + self.hidden))

    @property
    def matmul(self) -> int:
        return self.layers * 2 * self.hidden * self.hidden  # q and o

    def fixed_bytes(self, per_element, per_state):
        return self.layers * self.positions * 2 * self.hidden * per_element

    def kv_groups(self, context: int, per_element, per_state, mla: str) -> tuple[KVGroup, ...]:
        return (KVGroup(CrossAttentionKind.name, self.layers, None, 2 * self.hidden, self.positions,
                        whole(self.fixed_bytes(per_element, per_state))),)

    def attention_flops(self, context: int, mla: str) -> int:
        return 2 * self.heads * (self.head_dim + self.head_dim) * self.layers * self.positions

    def prefill_attention_flops(self, prompt_tokens: int, mla: str) -> int:
        return 2 * self.heads * (self.head_dim + self.head_dim) * prompt_tokens * self.layers * self.positions

    def window_flops(self) -> int:
        return self.layers * self.positions * 2 * 2 * self.hidden ** 2
