"""The parts of a decoder (section 2.2) and `parts_of(config)`, the tuple of parts a `ModelConfig` is.

Beside the layers of `layers/` (attention of each kind, each recurrent kind), a decoder has its embedding table,
its dense MLPs, the routed experts, shared experts and routers of its mixture-of-experts layers, its norms and
its LM head; a family may add parts of its own (`ModelConfig.extras`: Gemma 3n's per-layer embeddings, AltUp and
LAuReL, below; Whisper's encoder and cross-attention, in `families/encoder_decoder.py`). Each part counts what
it holds and computes (`part.Part`).

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .layers import KINDS, attends, recurs
from .layers.attention import AttentionLayers, GroupedQueryAttention
from .layers.recurrent import RecurrentLayers
from .part import Part

__all__ = ["parts_of", "Embedding", "DenseMLPs", "RoutedExperts", "SharedExperts", "Routers", "Norms", "LMHead",
           "GivenCounts", "Extra", "PerLayerEmbeddings", "AltUp", "Laurel", "attention_form"]


def _mlp_weights(hidden: int, width: int, bias: bool, gated: bool) -> tuple[int, int]:
    """(matmul weights, biases) of one MLP: gate and up (h -> width), down (width -> h); no gate when not gated."""
    mats = 3 if gated else 2
    return mats * hidden * width, ((mats - 1) * width + hidden if bias else 0)


@dataclass(frozen=True)
class GivenCounts(Part):
    """Parameter counts given as plain numbers (`ModelConfig.from_numbers`): every active weight a matmul weight."""

    given_total: float
    given_active: float
    label = "given as numbers"

    @property
    def total(self):
        return self.given_total

    @property
    def active(self):
        return self.given_active

    @property
    def matmul(self):
        return self.given_active


@dataclass(frozen=True)
class Embedding(Part):
    """The input embedding table, vocab x hidden: a lookup, not a matmul."""

    vocab: int
    hidden: int
    label = "embedding"

    @property
    def total(self) -> int:
        return self.vocab * self.hidden


@dataclass(frozen=True)
class DenseMLPs(Part):
    """The dense MLPs: one of `widths[i]` per dense layer, with `act_params` learned numbers in each one's
    activation (Apertus' xIELU: 2)."""

    hidden: int
    widths: tuple[int, ...]
    bias: bool
    gated: bool
    act_params: int = 0
    label = "dense MLPs"

    @property
    def total(self) -> int:
        return sum(sum(_mlp_weights(self.hidden, w, self.bias, self.gated)) + self.act_params for w in self.widths)

    @property
    def matmul(self) -> int:
        return sum(_mlp_weights(self.hidden, w, False, self.gated)[0] for w in self.widths)


@dataclass(frozen=True)
class RoutedExperts(Part):
    """The routed experts of `layers` MoE layers, `experts` per layer, of which a token runs `per_token` in all
    (summed over the layers: each layer's own k). Biases inside each expert with `bias` (gpt-oss)."""

    hidden: int
    width: int
    experts: int
    layers: int
    per_token: int
    bias: bool
    gated: bool
    label = "routed experts"

    def _expert(self) -> tuple[int, int]:
        return _mlp_weights(self.hidden, self.width, self.bias, self.gated)

    @property
    def total(self) -> int:
        return self.layers * self.experts * sum(self._expert())

    @property
    def active(self) -> int:
        return self.per_token * sum(self._expert())

    @property
    def matmul(self) -> int:
        return self.per_token * _mlp_weights(self.hidden, self.width, False, self.gated)[0]


@dataclass(frozen=True)
class SharedExperts(Part):
    """The shared expert(s) every token runs in each of `layers` MoE layers, `width` wide in all."""

    hidden: int
    width: int
    layers: int
    bias: bool
    gated: bool
    label = "shared experts"

    @property
    def total(self) -> int:
        return self.layers * sum(_mlp_weights(self.hidden, self.width, self.bias, self.gated))

    @property
    def matmul(self) -> int:
        return self.layers * _mlp_weights(self.hidden, self.width, False, self.gated)[0]


@dataclass(frozen=True)
class Routers(Part):
    """Each MoE layer's router, hidden -> experts, with one bias per expert (`bias`: a router bias, or DeepSeek's
    correction bias) and Qwen2-MoE's sigmoid gate on the shared expert (`shared_gate`, hidden -> 1)."""

    hidden: int
    experts: int
    layers: int
    bias: bool
    shared_gate: bool
    label = "routers"

    @property
    def total(self) -> int:
        one = self.experts * self.hidden + (self.experts if self.bias else 0) + (self.hidden if self.shared_gate else 0)
        return self.layers * one

    @property
    def matmul(self) -> int:
        return self.layers * (self.experts * self.hidden + (self.hidden if self.shared_gate else 0))


@dataclass(frozen=True)
class Norms(Part):
    """`per_layer` norms in each of `layers` layers and the final norm, each `hidden` wide (twice: LayerNorm)."""

    hidden: int
    layers: int
    per_layer: int
    bias: bool
    label = "norms"

    @property
    def total(self) -> int:
        norm = self.hidden * (2 if self.bias else 1)
        return self.layers * self.per_layer * norm + norm


@dataclass(frozen=True)
class LMHead(Part):
    """The output projection hidden -> vocab: its own weights unless tied to the embedding table, a bias with
    `bias`. A tied head holds no weight of its own, but every token still multiplies by it."""

    vocab: int
    hidden: int
    tied: bool
    bias: bool = False
    label = "LM head"

    @property
    def weights(self) -> int:
        """Its own weight matrix (0 when tied)."""
        return 0 if self.tied else self.vocab * self.hidden

    @property
    def total(self) -> int:
        return self.weights + (self.vocab if self.bias else 0)

    @property
    def matmul(self) -> int:
        return self.vocab * self.hidden


# -- Gemma 3n's parts (transformers' Gemma3nTextModel; Google's overview, ai.google.dev/gemma/docs/gemma-3n)


class Extra:
    """A part a family adds to the decoder (`ModelConfig.extras`), sized by its own fields and, through `of`, the
    model's width and depth. `flat`: the names `ModelConfig` gave its sizes when they were fields of its own."""

    flat: dict = {}

    def of(self, c):
        return replace(self, hidden=c.hidden_size, layers=c.num_hidden_layers)

    def parts(self) -> tuple[Part, ...]:
        return (self,)


@dataclass(frozen=True)
class PerLayerEmbeddings(Part, Extra):
    """Per-layer embeddings (PLE): a second token table of `vocab` rows, one `input_size`-wide slice per layer (a
    lookup, like the token embedding). `parts` adds the projection that mixes them in ("per-layer inputs"): the
    token embedding projected h -> layers x p and added (an RMSNorm over p), and in every layer a gate h -> p and a
    projection p -> h with an RMSNorm over h. Legacy names: per_layer_input_size, per_layer_vocab_size."""

    input_size: int
    vocab: int
    hidden: int = 0
    layers: int = 0
    label = "per-layer embeddings"
    flat = {"per_layer_input_size": "input_size", "per_layer_vocab_size": "vocab"}

    @property
    def total(self) -> int:
        return self.vocab * self.layers * self.input_size

    def parts(self) -> tuple[Part, ...]:
        return self, _PerLayerInputs(self.input_size, self.hidden, self.layers)


@dataclass(frozen=True)
class _PerLayerInputs(Part):
    input_size: int
    hidden: int
    layers: int
    label = "per-layer inputs"

    @property
    def total(self) -> int:
        h, p, layers = self.hidden, self.input_size, self.layers
        return h * layers * p + p + layers * (2 * h * p + h)

    @property
    def matmul(self) -> int:
        return self.hidden * self.layers * self.input_size + self.layers * 2 * self.hidden * self.input_size


@dataclass(frozen=True)
class AltUp(Part, Extra):
    """AltUp (Baykal et al. 2023, arXiv:2301.13310) with `inputs` = n copies of the hidden state: n - 1 projections
    h -> h in and n - 1 out, and per layer a router h -> n (with an RMSNorm), prediction coefficients n -> n^2,
    correction coefficients n -> n and an output scale over h. Beyond its weights, each layer mixes the predicted
    copies (n vectors of h by an n x n matrix: 2 n^2 h FLOPs) and runs the router again on its output (2 h n)."""

    inputs: int
    hidden: int = 0
    layers: int = 0
    label = "AltUp"
    flat = {"altup_inputs": "inputs"}

    def _layer(self) -> int:
        n = self.inputs
        return self.hidden * n + n ** 3 + n * n

    @property
    def total(self) -> int:
        n, h = self.inputs, self.hidden
        return 2 * (n - 1) * h * h + self.layers * (self._layer() + 2 * h) if n else 0

    @property
    def matmul(self) -> int:
        n, h = self.inputs, self.hidden
        return 2 * (n - 1) * h * h + self.layers * self._layer() if n else 0

    def step_flops(self) -> int:
        h, n = self.hidden, self.inputs
        return self.layers * (2 * n * n * h + 2 * h * n) if n else 0


@dataclass(frozen=True)
class Laurel(Part, Extra):
    """LAuReL (Menghani et al. 2024, arXiv:2411.07501): a low-rank residual per layer, h -> `rank` -> h, and an
    RMSNorm over h."""

    rank: int
    hidden: int = 0
    layers: int = 0
    label = "LAuReL"
    flat = {"laurel_rank": "rank"}

    @property
    def total(self) -> int:
        return self.layers * (2 * self.hidden * self.rank + self.hidden) if self.rank else 0

    @property
    def matmul(self) -> int:
        return self.layers * 2 * self.hidden * self.rank


# -- the tuple


def _model(c):
    if not hasattr(c, "num_hidden_layers"):
        raise TypeError(f"c must be a ModelConfig, got {type(c).__name__}")
    return c


def attention_form(c):
    """The form of `c`'s attention layers: MLA (`c.latent`) or grouped-query attention."""
    _model(c)
    if c.latent is not None:
        return c.latent.of(c)
    return GroupedQueryAttention(c.hidden_size, c.num_attention_heads, c.num_key_value_heads, c.head_dim,
                                 qkv_bias=c.qkv_bias, o_bias=c.o_bias, qk_norm=c.qk_norm,
                                 qk_norm_all_heads=c.qk_norm_all_heads, output_gate=c.attn_output_gate,
                                 sinks=c.attention_sinks)


def _attention_parts(c) -> list:
    """One `AttentionLayers` per attention kind present, in the order of `KINDS`."""
    form, shared, out = attention_form(c), set(c.kv_shared_layers), []
    for name, kind in KINDS.items():
        if not attends(name):
            continue
        layers = [i for i, k in enumerate(c.kinds) if k == name]
        if layers:
            out.append(AttentionLayers(form, kind, len(layers), c.window_of(layers[0]),
                                       sum(1 for i in layers if i in shared)))
    return out


def _recurrent_parts(c) -> list:
    """One `RecurrentLayers` per recurrent kind present (a parallel hybrid's mixers beside attention counted)."""
    mixers = [i for i in range(c.num_hidden_layers) if c.state_kind(i)]
    out = []
    for name in KINDS:
        if recurs(name):
            layers = sum(1 for i in mixers if c.state_kind(i) == name)
            if layers:
                out.append(RecurrentLayers(c.mixer(name), layers, c.hidden_size))
    return out


def _ffn_parts(c) -> list:
    h, moe, free = c.hidden_size, set(c.moe_layers), set(c.ffn_free_layers)
    dense = [i for i in range(c.num_hidden_layers) if i not in moe and i not in free]
    widths = tuple(c.mlp_widths[i] if c.mlp_widths else c.intermediate_size for i in dense)
    n_moe = len(moe)
    return [DenseMLPs(h, widths, c.mlp_bias, c.mlp_gated, c.mlp_act_params),
            RoutedExperts(h, c.moe_intermediate_size, c.num_experts, n_moe, c.routed_experts_per_token, c.expert_bias,
                          c.mlp_gated),
            SharedExperts(h, c.shared_expert_intermediate_size, n_moe, c.mlp_bias, c.mlp_gated),
            Routers(h, c.num_experts, n_moe, c.router_bias, c.shared_expert_gate)]


def parts_of(c) -> tuple[Part, ...]:
    """The parts of model `c`, in the order `param_breakdown` lists them."""
    _model(c)
    if c.param_counts is not None:
        p = c.param_counts
        return (GivenCounts(p.total, p.active), *_attention_parts(c))
    if c.encoder is not None:
        return c.encoder.parts(c)
    extras = [p for extra in c.extras for p in extra.of(c).parts()] if c.extras else []
    return (Embedding(c.vocab_size, c.hidden_size), *_attention_parts(c), *_recurrent_parts(c), *_ffn_parts(c),
            Norms(c.hidden_size, c.num_hidden_layers, c.norms_per_layer, c.norm_bias),
            LMHead(c.vocab_size, c.hidden_size, c.tie_word_embeddings, c.lm_head_bias), *extras)
