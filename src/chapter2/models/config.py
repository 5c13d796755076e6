"""What a model's config.json says (chapter section 2.2.1, "Architecture"): `ModelConfig`.

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

A model is a tuple of parts (`parts()`, `part.Part`): the embedding table, the attention layers of each kind,
the layers of each recurrent kind (`layers/`: one class per kind), the dense MLPs, the experts and routers, the
norms, the LM head, and what a family adds (Gemma 3n's per-layer embeddings, AltUp, LAuReL; Whisper's encoder
and cross-attention, `encoder.py`). Each part counts its weights, its cache and its FLOPs; every number above is
a sum over the parts, so each weight is counted in one place.

Supported families: `FAMILIES` (`families/`, one entry per family, in files by shape: dense, MoE, hybrid,
multimodal, encoder-decoder), chosen by the `architectures[0]` class name (`reader.py`). Every count is the
one the family's `transformers` model class builds (the tests instantiate each on the meta device and
compare); a field a config.json leaves out takes the default of the family's transformers config class, and
`defaulted` lists which ones did. Any other class is refused by name, before any field is read. A multimodal
wrapper's language model is read through its `text_config`, its towers counted beside it (`vision_params`).

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
from dataclasses import dataclass, field
from functools import cached_property, wraps
from pathlib import Path

from .._checks import dtype_bytes, finite_real, positive_int
from .architecture import Architecture, describe_architecture
from .encoder import AudioEncoder, CrossAttention, EncoderPass
from .families import FAMILIES, Family, family_of
from .layers import KINDS, attends, recurs
from .layers.attention import ATTENTION_KINDS, ChunkedAttention, SlidingAttention
from .layers.mla import MLA_FORMS, LatentAttention, mla_form
from .layers.recurrent import Mixer, RecurrentLayers
from .part import KVGroup, Part, whole
from .parts import AltUp, Embedding, LMHead, PerLayerEmbeddings, attention_form, parts_of
from .reader import parse

__all__ = ["ModelConfig", "ParamCount", "ParamPart", "KVGroup", "Architecture", "describe_architecture", "FAMILIES",
           "Family", "MLA_FORMS", "family_of"]


# Layer kinds (`layers/`): the attention kinds of the KV cache (transformers' `layer_types` names) and the recurrent
# kinds, a fixed-size state instead (section 2.5), with their FLOPs per state number and token of one step.
LAYER_KINDS = tuple(k.name for k in ATTENTION_KINDS)
STATE_KINDS = tuple(name for name in KINDS if recurs(name))
STATE_FLOPS_PER_ELEMENT = {name: KINDS[name].flops_per_state for name in STATE_KINDS}


# -----------------------------------------------------------------------------
# parameter counts


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
    """One row of `ModelConfig.param_breakdown()`: its weights in total and per token."""

    part: str
    total: int
    active: int


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


# The names ModelConfig gave the sizes of one kind of layer when they were fields of its own, and their value in a
# model without that kind: each now lives on the part that holds it (a mixer's `flat`, `latent`, `encoder`, an extra).
_FLAT_ABSENT = {
    "mamba_num_heads": 0, "mamba_head_dim": 0, "ssm_state_size": 0, "n_groups": 0, "mamba_bias": False,
    "mamba_norm": True, "mamba_out_bias": None, "mamba_d_inner": 0, "mamba_dt_rank": 0, "mamba_dt_norms": False,
    "linear_num_key_heads": 0, "linear_num_value_heads": 0, "linear_key_head_dim": 0, "linear_value_head_dim": 0,
    "conv_kernel": 0, "conv_bias": False, "state_dtype": "fp32",
    "q_lora_rank": None, "kv_lora_rank": None, "qk_rope_head_dim": None, "qk_nope_head_dim": None, "v_head_dim": None,
    "encoder_layers": 0, "encoder_attention_heads": 0, "encoder_ffn_dim": 0, "encoder_positions": 0, "num_mel_bins": 0,
    "per_layer_input_size": 0, "per_layer_vocab_size": 0, "altup_inputs": 0, "laurel_rank": 0,
}


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of a model, read from a Hugging Face config.json: a decoder (a transformer, a hybrid) or an
    encoder-decoder, as a tuple of parts (`parts()`) whose sums are every count below.

    Field names follow config.json where one exists. Derived fields:
    `head_dim` (given, the family's default, else hidden_size // num_attention_heads;
    for MLA the query/key width qk_nope_head_dim + qk_rope_head_dim),
    `intermediate_size` (the width of the dense MLP layers: Llama 4's
    `intermediate_size_mlp`), `moe_layers` (indices of layers whose MLP is a
    mixture of experts), `layer_types` (per layer: "full_attention",
    "sliding_attention" or "chunked_attention", as transformers names them, or a recurrent kind of
    `layers.KINDS`), `sliding_window_layers` (the sliding layers; the window counts the token
    itself, as in transformers), `defaulted` (the config keys that were absent and
    took the family's transformers default).

    The sizes of one kind of layer sit on the object that describes it: `mixers` (the recurrent kinds a hybrid
    stacks, `layers/`), `latent` (multi-head latent attention), `encoder` (an encoder-decoder's encoder),
    `extras` (parts a family adds: Gemma 3n's). Their older flat names (`mamba_num_heads`, `kv_lora_rank`,
    `encoder_layers`, ...) still read them.
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
    mlp_widths: tuple[int, ...] = ()  # one dense MLP width per layer where the config lists them; () = intermediate_size
    kv_shared_layers: tuple[int, ...] = ()  # layers that attend over an earlier layer's cached K/V: no k/v, no cache
    activation_sparsity: tuple[float, ...] = ()  # per layer, the share of MLP activations zeroed (changes no count)
    shared_expert_intermediate_size: int = 0  # width of the always-on shared expert(s), 0 = none
    shared_expert_gate: bool = False  # Qwen2-MoE: a sigmoid gate (hidden -> 1) on the shared expert
    router_bias: bool = False  # one extra number per expert: a router bias (gpt-oss) or DeepSeek's correction bias
    expert_bias: bool = False  # gpt-oss: biases inside every expert
    # the sizes of one kind of layer or part (see the class docstring)
    mixers: tuple = ()  # the recurrent layer kinds of a hybrid (`layers.recurrent.Mixer`), one object per kind
    parallel_state: str = ""  # a recurrent mixer beside the attention of every attention layer (Falcon-H1: "mamba2")
    latent: LatentAttention | None = None  # multi-head latent attention (DeepSeek-V2/V3)
    encoder: AudioEncoder | None = None  # an encoder-decoder (Whisper): the encoder; the other fields, its decoder
    extras: tuple = ()  # parts a family adds to the decoder (`parts.Extra`: Gemma 3n's PLE, AltUp, LAuReL)
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

    def __getattr__(self, name: str):
        """A flat name of the sizes of one kind (see `_FLAT_ABSENT`), read from the object that now holds them."""
        if name.startswith("_") or name not in _FLAT_ABSENT:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        for holder in (*self.mixers, *self.extras, self.encoder, self.latent):
            attr = getattr(holder, "flat", {}).get(name)
            if attr is not None:
                return getattr(holder, attr)
        return _FLAT_ABSENT[name]

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
    def from_hub(cls, model_id: str, revision: str | None = None, cache_dir=None) -> ModelConfig:
        """Read the config.json of a model on the Hugging Face Hub ('org/name', optionally '@revision', or
        `revision`) through huggingface_hub (pip install "chapter2[hub]"): its cache, token and offline mode
        (HF_HUB_OFFLINE=1) apply. The model is named by its id. `chapter2.hub.stored_bytes` reads the bytes its
        checkpoint stores. Errors say what the Hub answered (unknown id, gated, no such revision, no network)."""
        from ..hub import from_hub

        return from_hub(model_id, revision, cache_dir)

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
        return cls(**parse(config, name))

    # -- the parts -------------------------------------------------------------

    @_once
    def parts(self) -> tuple[Part, ...]:
        """The model as a tuple of parts (`part.Part`), in the order `param_breakdown` lists them: every count,
        cache size and FLOP count below is a sum over these."""
        return parts_of(self)

    def mixer(self, kind: str) -> Mixer:
        """The sizes of this model's recurrent layers of `kind` ("mamba2", ...)."""
        for m in self.mixers:
            if m.name == kind:
                return m
        raise ValueError(f"{self.name}: layer_types names {kind!r}, but the config gives no {kind} sizes")

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
        return self.latent is not None

    @property
    def gqa_group(self) -> int:
        """Query heads sharing one K/V head (1 = multi-head attention, num_attention_heads = multi-query)."""
        return self.num_attention_heads // self.num_key_value_heads

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """The kind of every layer ("full_attention", "sliding_attention", "chunked_attention", a recurrent kind,
        or "none")."""
        return self.layer_types or ("full_attention",) * self.num_hidden_layers

    def _attends(self, layer: int) -> bool:
        return attends(self.kinds[layer])

    @cached_property
    def attention_layers(self) -> tuple[int, ...]:
        """The layers that attend (and so keep a KV cache): every layer of a transformer, a few of a hybrid."""
        return tuple(i for i in range(self.num_hidden_layers) if self._attends(i))

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
        if recurs(self.kinds[layer]):
            return self.kinds[layer]
        return self.parallel_state if self._attends(layer) else ""

    @cached_property
    def state_layers(self) -> tuple[int, ...]:
        """The layers with a recurrent mixer: a fixed-size state, whatever the context."""
        return tuple(i for i in range(self.num_hidden_layers) if self.state_kind(i))

    @property
    def is_hybrid(self) -> bool:
        return bool(self.state_layers)

    @property
    def is_encoder_decoder(self) -> bool:
        """An encoder-decoder (Whisper): the fields other than `encoder` describe its decoder."""
        return self.encoder is not None

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
        if kind == SlidingAttention.name:
            return self.sliding_window
        if kind == ChunkedAttention.name:
            return self.attention_chunk_size
        return None

    def state_elements(self, layer: int) -> tuple[int, int]:
        """(convolution state, recurrent state) numbers one sequence keeps in layer `layer`; (0, 0) if it attends
        only (each recurrent kind's `state`, as transformers 5 caches it)."""
        kind = self.state_kind(layer)
        return self.mixer(kind).state(self.hidden_size) if kind else (0, 0)

    # -- parameters --------------------------------------------------------------

    def _sum(self, what: str, kind=Part) -> int:
        return sum(getattr(p, what) for p in self.parts() if isinstance(p, kind))

    @_once
    def param_breakdown(self) -> tuple[ParamPart, ...]:
        """Where the parameters sit: embedding, attention, each recurrent kind's layers, dense MLPs, routed experts,
        shared experts, routers, norms, LM head, and a family's own parts; a row per part label (rows with no
        weights left out). Sums to `params()`. An encoder-decoder lists its encoder apart ("audio encoder", 0
        active: it runs once per input window) and its decoder's cross-attention (k and v active 0: see
        `cross_kv_flops`)."""
        rows: dict[str, list] = {}
        for p in self.parts():
            row = rows.setdefault(p.label, [0, 0])
            row[0] += p.total
            row[1] += p.active
        return tuple(ParamPart(label, total, active) for label, (total, active) in rows.items() if total)

    @_once
    def params(self) -> ParamCount:
        """Total and per-token active parameter counts (see `ParamCount`): sums over `parts()`.

        The embedding table counts once when tied to the LM head. A multi-token-prediction
        module (DeepSeek-V3's and GLM-4.5's `num_nextn_predict_layers`, used for speculative
        decoding) is not part of the main model, as in transformers, and is not counted;
        nor is a multimodal model's vision tower (`wrapper`): it is `vision_params`, beside these.
        A config built `from_numbers` returns the counts it was given.
        """
        return ParamCount(total=self._sum("total"), active=self._sum("active"), embedding=self._sum("total", Embedding),
                          lm_head=self._sum("weights", LMHead), matmul_active=self._sum("matmul"))

    def encoder_params(self) -> int:
        """Weights of an encoder-decoder's encoder (0 for a decoder-only model): `encoder.EncoderPass`."""
        return self._sum("total", EncoderPass)

    @property
    def per_layer_embedding_params(self) -> int:
        """Gemma 3n's per-layer embedding table: `per_layer_vocab_size` rows of layers x `per_layer_input_size`
        (each layer reads its own slice; a lookup, like the token embedding). 0 for other models."""
        return self._sum("total", PerLayerEmbeddings)

    def weights_bytes(self, dtype="bf16"):
        """Bytes to hold every weight (`params().total`) at `dtype`."""
        return whole(self.params().total * dtype_bytes("dtype", dtype))

    # -- KV cache ------------------------------------------------------------------

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
        """Numbers one attention layer caches per token, in form `mla` (its attention form's `kv_per_layer`)."""
        return attention_form(self).kv_per_layer(mla_form(mla))

    def kv_cache_bytes_per_token(self, dtype="bf16", mla: str = "absorbed"):
        """Bytes the KV cache grows by per token, all attention layers (window caps ignored; see `kv_cache_bytes`).

        A recurrent layer's state does not grow with the context: it is in `kv_cache_bytes`, not here.

        Llama-3.1-8B in bf16: 2 (K and V) * 32 layers * 8 KV heads * 128 * 2 bytes = 131072.
        Returns an int when the result is whole (always, except for 4-bit dtypes).
        """
        return whole(self.kv_cache_elements_per_token(mla=mla) * dtype_bytes("dtype", dtype))

    def tokens_held(self, layer: int, context: int) -> int:
        """Tokens layer `layer` keeps in its cache for a sequence of `context` tokens (`AttentionKind.tokens_held`:
        all of them, or the last `window`; Llama 4's chunked layers keep min(context, chunk), what must be reserved
        per sequence). A recurrent layer, one with no mixer, or one reading another layer's keys keeps none."""
        if not self._attends(layer) or layer in self.kv_shared_layers:
            return 0
        return KINDS[self.kinds[layer]].tokens_held(context, self.window_of(layer))

    def _state_bytes_per_element(self, dtype, state_dtype=None):
        """Bytes of one recurrent-state number: `state_dtype` (default `self.state_dtype`); "model": `dtype`
        (MiniMax's lightning state, which transformers keeps in the model's dtype)."""
        state_dtype = self.state_dtype if state_dtype is None else state_dtype
        return dtype_bytes("dtype", dtype) if state_dtype == "model" else dtype_bytes("state_dtype", state_dtype)

    def state_bytes(self, dtype="bf16", state_dtype=None):
        """Bytes of every recurrent layer's fixed state for one sequence, whatever its length.

        Convolution states in `dtype` (transformers: the model's dtype), recurrent states in
        `state_dtype` (default `self.state_dtype`: transformers keeps Mamba-2's and gated DeltaNet's
        in float32, MiniMax's lightning state in the model's dtype). 0 for a model with no recurrent layers.
        """
        per_element = dtype_bytes("dtype", dtype)
        per_state = self._state_bytes_per_element(dtype, state_dtype)
        return whole(sum(p.fixed_bytes(per_element, per_state) for p in self.parts() if isinstance(p, RecurrentLayers)))

    def cross_kv_bytes(self, dtype="bf16"):
        """An encoder-decoder's cross-attention cache for one sequence: every decoder layer keeps the keys and
        values of all `encoder_positions` encoder outputs (fixed: projected once per input window). 0 otherwise.

        whisper-large-v3 in bf16: 32 layers x 1,500 positions x 2 x 1,280 x 2 bytes = 245.76 MB.
        """
        per_element = dtype_bytes("dtype", dtype)
        return whole(sum(p.fixed_bytes(per_element, 0) for p in self.parts() if isinstance(p, CrossAttention)))

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
        mla = mla_form(mla)
        numbers = sum(p.kv_numbers(context, mla) for p in self.parts())
        return whole((numbers * per_element + self.state_bytes(dtype, state_dtype) + self.cross_kv_bytes(dtype))
                     * batch)

    def kv_cache_breakdown(self, context: int, dtype="bf16", mla: str = "absorbed") -> tuple[KVGroup, ...]:
        """The cache of one sequence of `context` tokens, per layer kind (see `KVGroup`): each part's groups, an
        encoder-decoder's "cross_attention" group holding `encoder_positions` tokens last."""
        context = self._decoder_context(context)
        per_element = dtype_bytes("dtype", dtype)
        mla = mla_form(mla)
        per_state = self._state_bytes_per_element(dtype)
        return tuple(g for p in self.parts() for g in p.kv_groups(context, per_element, per_state, mla))

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
        return attention_form(self).flops_per_key(mla_form(mla))

    def attended_keys(self, layer: int, context: int) -> int:
        """Keys the newest of `context` tokens attends to in layer `layer`, itself included.

        Full attention: context; sliding window w: min(context, w); chunked attention
        with chunk c: the tokens of the current chunk so far, ((context - 1) mod c) + 1.
        """
        if not self._attends(layer):
            return 0
        return KINDS[self.kinds[layer]].attended_keys(context, self.window_of(layer))

    def attention_flops_per_token(self, context: int, mla: str = "absorbed") -> int:
        """FLOPs of the score (q k^T) and value (p V) products for one new token.

        The token attends to `context` keys, itself included, capped by each
        layer's window or chunk (`attended_keys`), at `attention_flops_per_key(mla)` each;
        an encoder-decoder's token also attends to all `encoder_positions` in every decoder layer.
        """
        context = self._decoder_context(context)
        mla = mla_form(mla)
        return sum(p.attention_flops(context, mla) for p in self.parts())

    def prefill_attention_flops(self, prompt_tokens: int, mla: str = "absorbed") -> int:
        """sum over positions 1..P of `attention_flops_per_token`: the attention of a causal prefill.

        In closed form per layer: full P(P+1)/2 keys; sliding w: P(P+1)/2 up to w,
        then w(w+1)/2 + (P - w) w; chunked c: q c(c+1)/2 + r(r+1)/2 with P = q c + r.
        """
        P = positive_int("prompt_tokens", prompt_tokens)
        mla = mla_form(mla)
        if self.is_encoder_decoder:
            self._decoder_context(P)
        return sum(p.prefill_attention_flops(P, mla) for p in self.parts())

    def state_flops_per_token(self) -> int:
        """FLOPs of one recurrent step in every recurrent layer: each kind's `flops_per_state` per state number.

        Independent of the context: a Mamba-2 or gated DeltaNet layer's work is linear in
        the sequence length (its projections and convolution are in `params().matmul_active`).
        """
        return self._sum_of("step_flops", RecurrentLayers)

    def altup_flops_per_token(self) -> int:
        """FLOPs of AltUp's mixing that are not a weight times the token (0 without AltUp): `parts.AltUp`."""
        return self._sum_of("step_flops", AltUp)

    def _sum_of(self, method: str, kind) -> int:
        return sum(getattr(p, method)() for p in self.parts() if isinstance(p, kind))

    def flops_per_token(self, context: int, mla: str = "absorbed") -> int:
        """FLOPs to decode one token whose attention sees `context` keys (itself included): each part's, summed.

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
        context = self._decoder_context(context)
        mla = mla_form(mla)
        return sum(p.flops_per_token(context, mla) for p in self.parts())

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
        mla = mla_form(mla)
        if self.is_encoder_decoder:
            self._decoder_context(P)
        return sum(p.prefill_flops(P, mla) for p in self.parts())

    def encoder_flops(self) -> int:
        """FLOPs of one encoder pass over an input window (Whisper: 30 s of audio); 0 for a decoder-only model
        (`encoder.EncoderPass`: whisper-large-v3, 2.27 TFLOPs per 30 s window, 2.7 times the 0.84 TFLOPs of
        decoding all 448 tokens)."""
        return self._sum_of("window_flops", EncoderPass)

    def cross_kv_flops(self) -> int:
        """FLOPs of projecting the encoder output to every decoder layer's cross-attention keys and values,
        once per input window (they are then cached): 2 x 2 d^2 per layer and encoder position; 0 otherwise."""
        return self._sum_of("window_flops", CrossAttention)
