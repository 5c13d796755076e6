"""What a model's config.json says (chapter section 2.2.1, "Architecture").

A Hugging Face checkpoint ships a `config.json` that lists every size of the
network: width (`hidden_size`), depth (`num_hidden_layers`), attention heads,
feed-forward width, vocabulary, and for a mixture of experts the expert count
and how many are routed per token. `ModelConfig` reads those files for the
families the chapter discusses and turns them into the three numbers an
inference engineer needs first:

- `params()`: total parameters (what must sit in GPU memory) and active
  parameters (what one token actually reads: the router picks a few experts);
- `kv_cache_bytes_per_token(dtype)` and `kv_cache_bytes(context, batch, dtype)`:
  the memory the KV cache grows by, with grouped-query attention, sliding
  windows and DeepSeek's multi-head latent attention taken into account;
- `flops_per_token(context)`: the compute one decoded token costs.

`ModelConfig.from_numbers(...)` describes a model by plain numbers instead
(parameter counts and attention sizes), for estimates without a config.json:
`chapter2.roofline` takes a ModelConfig (or a shipped config's name) and nothing else.

Supported layouts (the `architectures[0]` class name decides):
Llama, Mistral (sliding window), Mixtral (MoE), Qwen2 (q/k/v bias), Qwen2-MoE
(shared expert), Qwen3 (q/k RMSNorm), Qwen3-MoE, DeepSeek-V3 (multi-head
latent attention, shared expert, dense first layers).

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .._checks import dtype_bytes, finite_real, positive_int

__all__ = ["ModelConfig", "ParamCount", "Architecture", "describe_architecture"]


# -----------------------------------------------------------------------------
# architecture names: "Qwen3MoeForCausalLM" -> family Qwen3, MoE, causal LM

# The head class after "For" says what the model was trained to do.
_TASKS = {
    "CausalLM": "causal language modeling",
    "MaskedLM": "masked language modeling",
    "ConditionalGeneration": "conditional generation",
    "SequenceClassification": "sequence classification",
    "TokenClassification": "token classification",
    "QuestionAnswering": "question answering",
}

# Class-name stems whose display name is not the stem itself, or which are
# mixtures of experts without "Moe" in the name.
_FAMILIES = {
    "Mixtral": ("Mixtral", True),
    "DeepseekV2": ("DeepSeek-V2", True),
    "DeepseekV3": ("DeepSeek-V3", True),
    "Dbrx": ("DBRX", True),
    "GptOss": ("gpt-oss", True),
}


# model_type -> causal LM class, for configs without an "architectures" entry
_CAUSAL_LM_BY_MODEL_TYPE = {
    "llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
    "qwen2": "Qwen2ForCausalLM", "qwen2_moe": "Qwen2MoeForCausalLM", "qwen3": "Qwen3ForCausalLM",
    "qwen3_moe": "Qwen3MoeForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
}


@dataclass(frozen=True)
class Architecture:
    """What an architecture class name says: `family`, `is_moe`, `task`."""

    name: str
    family: str
    is_moe: bool
    task: str


def describe_architecture(name: str) -> Architecture:
    """Read a transformers class name such as "Qwen3MoeForCausalLM".

    The name is `<Family>[Moe]For<Task>` (or `<Family>Model`, a bare backbone
    with no head; or GPT-2's `<Family>LMHeadModel`, a causal LM). "Moe" marks a mixture of experts model; a few MoE families
    (Mixtral, DeepSeek-V2/V3, DBRX, gpt-oss) are known by name.

    >>> describe_architecture("Qwen3MoeForCausalLM")
    Architecture(name='Qwen3MoeForCausalLM', family='Qwen3', is_moe=True, task='causal language modeling')
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'LlamaForCausalLM', got {type(name).__name__}")
    if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be a transformers class name such as 'LlamaForCausalLM', got {name!r}")
    stem, sep, head = name.rpartition("For")
    if name.endswith("LMHeadModel") and len(name) > len("LMHeadModel"):  # GPT-2 style naming
        stem, task = name[: -len("LMHeadModel")], _TASKS["CausalLM"]
    elif sep and stem and head:
        task = _TASKS.get(head) or _split_camel(head)
    elif name.endswith("Model") and len(name) > len("Model"):
        stem, task = name[: -len("Model")], "backbone only (hidden states, no head)"
    else:
        raise ValueError(f"name must look like '<Family>For<Task>' or '<Family>Model', got {name!r}")
    is_moe = stem.endswith("Moe")
    if is_moe:
        stem = stem[: -len("Moe")]
    family, known_moe = _FAMILIES.get(stem, (stem, False))
    return Architecture(name, family, is_moe or known_moe, task)


def _split_camel(text: str) -> str:
    return " ".join(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*", text))


# -----------------------------------------------------------------------------
# parameter counts


@dataclass(frozen=True)
class ParamCount:
    """Parameter counts of one model (numbers of weights, not bytes).

    total:         every weight stored in the checkpoint (what must fit in memory).
    active:        the weights one token reads: everything except the experts the
                   router did not pick. Counts both embedding tables, as published
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


# -----------------------------------------------------------------------------
# the config


@dataclass(frozen=True)
class ModelConfig:
    """The sizes of a decoder-only transformer, read from a Hugging Face config.json.

    Field names follow config.json. Derived fields: `head_dim` (given, else
    hidden_size / num_attention_heads), `moe_layers` (indices of layers whose
    MLP is a mixture of experts), `sliding_window_layers` (indices of layers
    that attend to the last `sliding_window` tokens only; the window counts the
    token itself, as in transformers).
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
    qkv_bias: bool = False  # biases on q_proj, k_proj, v_proj (Qwen2; attention_bias elsewhere)
    o_bias: bool = False  # bias on o_proj (Llama/Qwen3 attention_bias)
    mlp_bias: bool = False
    qk_norm: bool = False  # RMSNorm over head_dim on q and k before RoPE (Qwen3)
    sliding_window: int | None = None
    sliding_window_layers: tuple[int, ...] = ()
    # mixture of experts
    num_experts: int = 0  # routed experts per MoE layer
    num_experts_per_tok: int = 0
    moe_intermediate_size: int = 0
    norm_topk_prob: bool = False  # renormalise the top-k router weights to sum to 1
    moe_layers: tuple[int, ...] = ()
    shared_expert_intermediate_size: int = 0  # width of the always-on shared expert(s), 0 = none
    shared_expert_gate: bool = False  # Qwen2-MoE: a sigmoid gate (hidden -> 1) on the shared expert
    router_bias: bool = False  # DeepSeek-V3: e_score_correction_bias (one per expert)
    # multi-head latent attention (DeepSeek-V3)
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    source: str = ""
    raw: dict = field(default_factory=dict, hash=False, compare=False, repr=False)
    # parameter counts given as plain numbers (`from_numbers`); None: counted from the sizes above
    param_counts: ParamCount | None = None

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
                   num_experts=n_experts if moe else 0, num_experts_per_tok=experts_per_token if moe else 0,
                   moe_layers=tuple(range(n_layers)) if moe else (),
                   param_counts=ParamCount(total=params_total, active=params_active, embedding=0, lm_head=0,
                                           matmul_active=params_active))

    @classmethod
    def from_json(cls, path, name: str | None = None) -> ModelConfig:
        """Read a config.json file (a `_source` key, if present, becomes `source`)."""
        path = Path(path)
        if path.is_dir():
            path = path / "config.json"
        if not path.is_file():
            raise ValueError(f"path must be a config.json file or a folder holding one, got {str(path)!r}")
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if name is None and path.name != "config.json":
            name = path.stem  # shipped configs are named after their model, e.g. Qwen3-8B.json
        return cls.from_hf(data, name=name)

    @classmethod
    def from_hf(cls, config: dict, name: str | None = None) -> ModelConfig:
        """Build from a parsed config.json dict (transformers 4.x or 5.x layout)."""
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict parsed from config.json, got {type(config).__name__}")
        c = config
        archs = c.get("architectures")
        if not archs and c.get("model_type") in _CAUSAL_LM_BY_MODEL_TYPE:  # e.g. a config built in code, never saved
            archs = [_CAUSAL_LM_BY_MODEL_TYPE[c["model_type"]]]
        if not (isinstance(archs, list) and archs and isinstance(archs[0], str)):
            raise ValueError("config must have an 'architectures' list naming the model class, e.g. ['LlamaForCausalLM'], "
                             f"or a known model_type ({', '.join(_CAUSAL_LM_BY_MODEL_TYPE)})")
        arch = describe_architecture(archs[0])
        model_type = c.get("model_type", "")
        if arch.task != "causal language modeling":
            raise ValueError(f"config: only decoder-only causal LMs are supported, got {archs[0]!r} ({arch.task})")

        def req(key):
            if key not in c or c[key] is None:
                raise ValueError(f"config is missing {key!r} (needed for {archs[0]})")
            return positive_int(f"config[{key!r}]", c[key])

        hidden = req("hidden_size")
        heads = req("num_attention_heads")
        layers = req("num_hidden_layers")
        kv_heads = positive_int("config['num_key_value_heads']", c.get("num_key_value_heads") or heads)
        if heads % kv_heads:
            raise ValueError(f"config: num_attention_heads ({heads}) must be a multiple of num_key_value_heads ({kv_heads})")
        head_dim = c.get("head_dim") or hidden // heads
        rope_theta, rope_scaling = _rope(c)
        fields = dict(
            name=name or c.get("_name") or archs[0],
            architecture=archs[0],
            model_type=model_type,
            family=arch.family,
            task=arch.task,
            vocab_size=req("vocab_size"),
            hidden_size=hidden,
            intermediate_size=req("intermediate_size"),
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            head_dim=positive_int("config['head_dim']", head_dim),
            max_position_embeddings=c.get("max_position_embeddings"),
            rms_norm_eps=float(c.get("rms_norm_eps", 1e-6)),
            rope_theta=rope_theta,
            rope_scaling=rope_scaling,
            tie_word_embeddings=bool(c.get("tie_word_embeddings", False)),
            mlp_bias=bool(c.get("mlp_bias", False)),
            source=c.get("_source", ""),
            raw=dict(c),
        )
        family_key = archs[0].split("For")[0]
        attention_bias = bool(c.get("attention_bias", False))
        if family_key in ("Qwen2", "Qwen2Moe"):
            fields.update(qkv_bias=True, o_bias=False)  # Qwen2 hard-codes bias on q, k, v only
        else:
            fields.update(qkv_bias=attention_bias, o_bias=attention_bias)
        fields["qk_norm"] = family_key in ("Qwen3", "Qwen3Moe")
        fields.update(_sliding_window(c, family_key, layers))
        if family_key == "DeepseekV3":
            fields.update(_deepseek_v3(c, layers))
        elif arch.is_moe:
            fields.update(_moe(c, family_key, layers))
        elif family_key not in ("Llama", "Mistral", "Qwen2", "Qwen3"):
            raise ValueError(f"config: architecture {archs[0]!r} is not supported; supported families: "
                             "Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, Qwen3, Qwen3-MoE, DeepSeek-V3")
        return cls(**fields)

    # -- derived facts -----------------------------------------------------------

    @property
    def is_moe(self) -> bool:
        return bool(self.moe_layers)

    @property
    def uses_mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3): K and V come from a cached low-rank latent."""
        return self.kv_lora_rank is not None

    @property
    def gqa_group(self) -> int:
        """Query heads sharing one K/V head (1 = multi-head attention, num_attention_heads = multi-query)."""
        return self.num_attention_heads // self.num_key_value_heads

    def window_of(self, layer: int) -> int | None:
        """The sliding window of layer `layer` (None: it sees the whole context)."""
        return self.sliding_window if layer in self.sliding_window_layers else None

    # -- parameters --------------------------------------------------------------

    def _attention_params(self) -> tuple[int, int, int]:
        """(weights in matmuls, norm weights, biases) of one attention block."""
        h, n_q, n_kv, d = self.hidden_size, self.num_attention_heads, self.num_key_value_heads, self.head_dim
        if self.uses_mla:
            qk_dim = self.qk_nope_head_dim + self.qk_rope_head_dim
            if self.q_lora_rank:  # x -> q latent (q_a_proj) -> per-head q (q_b_proj)
                q = h * self.q_lora_rank + self.q_lora_rank * n_q * qk_dim
                norms = self.q_lora_rank  # q_a_layernorm
            else:
                q, norms = h * n_q * qk_dim, 0
            kv_a = h * (self.kv_lora_rank + self.qk_rope_head_dim)  # latent + shared RoPE key
            kv_b = self.kv_lora_rank * n_q * (self.qk_nope_head_dim + self.v_head_dim)
            o = n_q * self.v_head_dim * h
            return q + kv_a + kv_b + o, norms + self.kv_lora_rank, 0
        matmul = h * n_q * d + 2 * h * n_kv * d + n_q * d * h  # q, k, v, o projections
        norms = 2 * d if self.qk_norm else 0
        biases = (n_q * d + 2 * n_kv * d if self.qkv_bias else 0) + (h if self.o_bias else 0)
        return matmul, norms, biases

    def _mlp_params(self, width: int) -> tuple[int, int]:
        """(matmul weights, biases) of one SwiGLU MLP: gate and up (h -> width), down (width -> h)."""
        h = self.hidden_size
        return 3 * h * width, (2 * width + h if self.mlp_bias else 0)

    def params(self) -> ParamCount:
        """Total and per-token active parameter counts (see `ParamCount`).

        The embedding table counts once when tied to the LM head. DeepSeek-V3's
        multi-token-prediction module (`num_nextn_predict_layers`, 14B, used for
        speculative decoding) is not part of the 671B main model and is not counted.
        A config built `from_numbers` returns the counts it was given.
        """
        if self.param_counts is not None:
            return self.param_counts
        h, v = self.hidden_size, self.vocab_size
        embedding = v * h
        lm_head = 0 if self.tie_word_embeddings else v * h
        total = active = embedding + lm_head + h  # + final norm
        matmul_active = v * h  # the LM head multiply, tied or not
        attn_matmul, attn_norms, attn_bias = self._attention_params()
        for layer in range(self.num_hidden_layers):
            block = attn_matmul + attn_norms + attn_bias + 2 * h  # + input and post-attention norms
            total += block
            active += block
            matmul_active += attn_matmul
            if layer in self.moe_layers:  # experts and shared experts carry no biases
                expert = 3 * h * self.moe_intermediate_size
                shared = 3 * h * self.shared_expert_intermediate_size
                router = self.num_experts * h + (h if self.shared_expert_gate else 0)
                always = shared + router + (self.num_experts if self.router_bias else 0)
                total += self.num_experts * expert + always
                active += self.num_experts_per_tok * expert + always
                matmul_active += self.num_experts_per_tok * expert + shared + router
            else:
                mlp, mlp_bias = self._mlp_params(self.intermediate_size)
                total += mlp + mlp_bias
                active += mlp + mlp_bias
                matmul_active += mlp
        return ParamCount(total=total, active=active, embedding=embedding, lm_head=lm_head, matmul_active=matmul_active)

    # -- KV cache ------------------------------------------------------------------

    def kv_cache_elements_per_token(self, layer: int | None = None) -> int:
        """Numbers cached per token, in one layer (or summed over all layers if `layer` is None).

        Standard and grouped-query attention cache one key and one value vector
        per K/V head: 2 * num_key_value_heads * head_dim. Multi-head latent
        attention (DeepSeek-V3) caches the compressed latent (kv_lora_rank) and
        the shared RoPE key (qk_rope_head_dim) instead, the layout of DeepSeek's
        own inference code and of vLLM/SGLang (DeepSeek-V2 paper, arXiv:2405.04434,
        section 2.1.2); transformers' eager code caches decompressed K and V instead.
        """
        if self.uses_mla:
            per_layer = self.kv_lora_rank + self.qk_rope_head_dim
        else:
            per_layer = 2 * self.num_key_value_heads * self.head_dim
        if layer is None:
            return per_layer * self.num_hidden_layers
        if not (isinstance(layer, int) and 0 <= layer < self.num_hidden_layers):
            raise ValueError(f"layer must be an int in [0, {self.num_hidden_layers}), got {layer!r}")
        return per_layer

    def kv_cache_bytes_per_token(self, dtype="bf16"):
        """Bytes the KV cache grows by per token, all layers (window caps ignored; see `kv_cache_bytes`).

        Llama-3.1-8B in bf16: 2 (K and V) * 32 layers * 8 KV heads * 128 * 2 bytes = 131072.
        Returns an int when the result is whole (always, except for 4-bit dtypes).
        """
        return _whole(self.kv_cache_elements_per_token() * dtype_bytes("dtype", dtype))

    def kv_cache_bytes(self, context: int, batch: int = 1, dtype="bf16"):
        """KV cache bytes for `batch` sequences of `context` tokens each.

        A sliding-window layer keeps only its last `sliding_window` tokens
        (a rolling buffer), so its share stops growing at the window.
        """
        context = positive_int("context", context)
        batch = positive_int("batch", batch)
        per_element = dtype_bytes("dtype", dtype)
        per_layer = self.kv_cache_elements_per_token(0)
        tokens = sum(min(context, self.window_of(i) or context) for i in range(self.num_hidden_layers))
        return _whole(per_layer * tokens * batch * per_element)

    # -- compute ---------------------------------------------------------------------

    def attention_flops_per_token(self, context: int) -> int:
        """FLOPs of the score (q k^T) and value (p V) products for one new token.

        The token attends to `context` keys, itself included (capped at the
        window in sliding-window layers); per head that is 2 * d_qk * keys for
        the scores and 2 * d_v * keys for the weighted sum. MLA is counted in
        its plain form (d_qk = qk_nope_head_dim + qk_rope_head_dim, d_v = v_head_dim).
        """
        context = positive_int("context", context)
        if self.uses_mla:
            d_qk, d_v = self.qk_nope_head_dim + self.qk_rope_head_dim, self.v_head_dim
        else:
            d_qk = d_v = self.head_dim
        per_key = 2 * self.num_attention_heads * (d_qk + d_v)
        return sum(per_key * min(context, self.window_of(i) or context) for i in range(self.num_hidden_layers))

    def flops_per_token(self, context: int) -> int:
        """FLOPs to decode one token whose attention sees `context` keys (itself included).

        Convention: a multiply-add is 2 FLOPs; the count is 2 * `params().matmul_active`
        (every weight the token multiplies by, LM head included, embedding lookup
        excluded) plus `attention_flops_per_token(context)`. Norms, RoPE,
        softmax, activations and the router's top-k are left out (they are a
        fraction of a percent). Summing it over positions 1..N gives the cost
        of a prefill of N tokens.
        """
        return 2 * self.params().matmul_active + self.attention_flops_per_token(context)

    def weights_bytes(self, dtype="bf16"):
        """Bytes to hold every weight (`params().total`) at `dtype`."""
        return _whole(self.params().total * dtype_bytes("dtype", dtype))


# -----------------------------------------------------------------------------
# config.json dialects


def _whole(x):
    return int(x) if float(x).is_integer() else float(x)


def _rope(c: dict) -> tuple[float, dict | None]:
    """(rope_theta, rope_scaling) from transformers 4.x keys or 5.x `rope_parameters`."""
    params = c.get("rope_parameters")
    if isinstance(params, dict):  # transformers >= 5: {"rope_type": ..., "rope_theta": ..., ...}
        theta = params.get("rope_theta", c.get("rope_theta", 10000.0))
        scaling = {k: v for k, v in params.items() if k != "rope_theta"}
    else:
        theta = c.get("rope_theta", 10000.0)
        scaling = dict(c["rope_scaling"]) if c.get("rope_scaling") else {}
    kind = scaling.pop("rope_type", None) or scaling.pop("type", None) or "default"
    scaling.pop("type", None)
    if kind == "default":
        return float(theta), None
    return float(theta), {"rope_type": kind, **scaling}


def _sliding_window(c: dict, family_key: str, layers: int) -> dict:
    window = c.get("sliding_window")
    layer_types = c.get("layer_types")
    if isinstance(layer_types, list) and len(layer_types) == layers and window:
        which = tuple(i for i, t in enumerate(layer_types) if t == "sliding_attention")
    elif family_key in ("Qwen2", "Qwen2Moe", "Qwen3", "Qwen3Moe"):
        # Qwen: the window applies only with use_sliding_window, from layer max_window_layers on.
        start = c.get("max_window_layers", layers)
        which = tuple(range(start, layers)) if (c.get("use_sliding_window") and window) else ()
    else:
        which = tuple(range(layers)) if window else ()
    if not which:
        return {"sliding_window": None, "sliding_window_layers": ()}
    return {"sliding_window": positive_int("config['sliding_window']", window), "sliding_window_layers": which}


def _moe(c: dict, family_key: str, layers: int) -> dict:
    experts = c.get("num_experts") or c.get("num_local_experts")
    if not experts:
        raise ValueError("config of a mixture of experts model must set num_experts or num_local_experts")
    top_k = positive_int("config['num_experts_per_tok']", c.get("num_experts_per_tok"))
    out = dict(num_experts=positive_int("config['num_experts']", experts), num_experts_per_tok=top_k)
    if family_key == "Mixtral":
        # Mixtral experts are full-width SwiGLU MLPs; the top-2 weights are always renormalised.
        out.update(moe_intermediate_size=positive_int("config['intermediate_size']", c["intermediate_size"]),
                   norm_topk_prob=True, moe_layers=tuple(range(layers)))
        return out
    step = c.get("decoder_sparse_step", 1) or 1
    dense = set(c.get("mlp_only_layers") or ())
    out.update(
        moe_intermediate_size=positive_int("config['moe_intermediate_size']", c.get("moe_intermediate_size")),
        norm_topk_prob=bool(c.get("norm_topk_prob", False)),
        moe_layers=tuple(i for i in range(layers) if i not in dense and (i + 1) % step == 0),
    )
    if c.get("shared_expert_intermediate_size"):  # Qwen2-MoE
        out.update(shared_expert_intermediate_size=int(c["shared_expert_intermediate_size"]), shared_expert_gate=True)
    return out


def _deepseek_v3(c: dict, layers: int) -> dict:
    def get(key):
        return positive_int(f"config[{key!r}]", c.get(key))

    first_dense = int(c.get("first_k_dense_replace", 0))
    freq = int(c.get("moe_layer_freq", 1))
    moe_width = get("moe_intermediate_size")
    return dict(
        num_experts=get("n_routed_experts"),
        num_experts_per_tok=get("num_experts_per_tok"),
        moe_intermediate_size=moe_width,
        norm_topk_prob=bool(c.get("norm_topk_prob", False)),
        moe_layers=tuple(i for i in range(first_dense, layers) if i % freq == 0),
        shared_expert_intermediate_size=moe_width * int(c.get("n_shared_experts") or 0),
        router_bias=c.get("topk_method", "noaux_tc") == "noaux_tc",  # V3 always has the correction bias
        head_dim=get("qk_nope_head_dim") + get("qk_rope_head_dim"),  # query/key width per head
        q_lora_rank=c.get("q_lora_rank"),
        kv_lora_rank=get("kv_lora_rank"),
        qk_rope_head_dim=get("qk_rope_head_dim"),
        qk_nope_head_dim=get("qk_nope_head_dim"),
        v_head_dim=get("v_head_dim"),
    )
