"""Facts of section 2.2, first page: inside the model (docs/llm-architecture.md).

The page opens the model before the next page (docs/llm-inference.md, `pages.llm_inference`) serves a
request with it: config.json and the class name, the transformer block, attention (queries, keys,
values, heads, grouped-query attention, the causal mask and why a KV cache exists, what one token adds
to it, multi-head latent attention) and mixture of experts.

Model sizes come from the shipped config.json files (`chapter2.models.load_config`, counted by
`ModelConfig.params()`); attention and MoE numbers from `chapter2.attention` and `chapter2.moe`. The
inputs of the worked examples (the LoRA rank, the sequence lengths, the batch sizes, ...) are the
constants below, and each one the page prints is a fact too. The helpers `decimals`, `share`,
`billions`, `kind_counts` and `cached_per_layer` are shared with `pages.llm_inference`.
"""

from __future__ import annotations

import functools

from .. import attention, moe, roofline
from ..format import Bytes, Int, Num, Pct, Table, Text, Times, billions, cached_per_layer, decimals, kind_counts, share
from ..models import FAMILIES, QWEN3_235B_A22B, ModelConfig, describe_architecture, list_configs, load_config
from . import Card, Leaf, fact

PAGE = "llm-architecture.md"
TITLE = "2.2b Inside an LLM"

# -- inputs of the worked examples ---------------------------------------------------------
ARCHITECTURE_EXAMPLE = "Qwen3MoeForCausalLM"
LORA_RANK = 16
CAUSAL_EXAMPLE_TOKENS = 8  # the causal-mask figure's sequence length
CACHE_PROMPT_TOKENS, CACHE_DECODE_TOKENS = 1_000, 1_000  # decoding with and without the KV cache
COVERAGE_MOST, COVERAGE_NEARLY_ALL = 0.9, 0.99  # shares of experts a batch touches
MOE_DECODE_BATCH = 256
# The chapter outline's rule of thumb: "MoE tends to appear above roughly 100B parameters, while small
# models stay dense" (chapter 2, section 2.2.4).
MOE_RULE_OF_THUMB_PARAMS = 100e9
QWEN3_MOE = QWEN3_235B_A22B  # the MoE part of Qwen3-235B-A22B's config.json
# the routing worked example before the MoE equation: one token's router scores for four experts, two per token
MOE_EXAMPLE_ROUTER_LOGITS, MOE_EXAMPLE_PER_TOKEN = (0.0, 1.6, 1.1, 0.0), 2
LLAMA = "Llama-3.1-8B"


# -- helpers (also used by pages.llm_inference) ------------------------------------------------
def _llama_q_proj() -> tuple[int, int]:
    """(out, in) of Llama 3.1 8B's query projection: query heads x head_dim, hidden size."""
    c = load_config(LLAMA)
    return c.num_attention_heads * c.head_dim, c.hidden_size


def _cache_pairs() -> tuple[int, int]:
    """Query-key pairs scored while decoding CACHE_DECODE_TOKENS tokens after the prompt: (with, without cache)."""
    lengths = range(CACHE_PROMPT_TOKENS + 1, CACHE_PROMPT_TOKENS + CACHE_DECODE_TOKENS + 1)
    with_cache = sum(attention.attended_pairs(1, t, causal=True) for t in lengths)
    without = sum(attention.attended_pairs(t, causal=True) for t in lengths)
    return with_cache, without


def _moe_step(n_tokens: int, dtype: str = "bf16") -> moe.MoeDecodeStep:
    s = QWEN3_MOE
    return moe.moe_decode_step(s.n_experts, s.k, n_tokens, expert_params=s.expert_params, n_layers=s.n_layers,
                               dtype=dtype)


def _configs() -> list[ModelConfig]:
    return [load_config(n) for n in list_configs()]


# -- 2.2.1 and 2.2.2 architecture and transformer blocks -------------------------------------------
@fact
def example_architecture_family() -> Text:
    """The family `describe_architecture` reads from the class name Qwen3MoeForCausalLM."""
    return Text(describe_architecture(ARCHITECTURE_EXAMPLE).family)


@fact
def example_architecture_is_moe() -> Text:
    """Whether `describe_architecture` reads Qwen3MoeForCausalLM as a mixture of experts ("yes"/"no")."""
    return Text("yes" if describe_architecture(ARCHITECTURE_EXAMPLE).is_moe else "no")


@fact
def example_architecture_task() -> Text:
    """The task `describe_architecture` reads from the class name's head ("ForCausalLM")."""
    return Text(describe_architecture(ARCHITECTURE_EXAMPLE).task)


@fact
def llama_lora_rank() -> Int:
    """The LoRA rank of the example."""
    return Int(LORA_RANK)


@fact
def llama_8b_q_proj_shape() -> Text:
    """Llama 3.1 8B's query projection weight, out x in = (query heads x head_dim) x hidden size."""
    n, k = _llama_q_proj()
    return Text(f"{n:,} × {k:,}")


@fact
def lora_q_proj_params() -> Int:
    """Numbers a rank-16 LoRA adapter trains on the query projection: W_up (out x r) plus W_down (r x in)."""
    n, k = _llama_q_proj()
    return Int(LORA_RANK * (n + k))


@fact
def llama_8b_q_proj_params() -> Int:
    """Weights of Llama 3.1 8B's query projection, out x in."""
    n, k = _llama_q_proj()
    return Int(n * k)


@fact
def lora_q_proj_share() -> Pct:
    """The LoRA adapter's size as a share of the query projection: r·(out + in) / (out·in)."""
    n, k = _llama_q_proj()
    return Pct(LORA_RANK * (n + k) / (n * k), 2)


@fact
def model_configs_table() -> Table:
    """Every shipped config: class, layers, hidden size, heads, what one layer caches per token, its layers by
    attention kind, vocabulary, total and active parameters (billions; language model only for the multimodal
    releases). For MLA the KV-heads column says "latent": its cache is one latent per layer, not per-head K and V."""
    rows = []
    for c in _configs():
        p = c.params()
        heads = f"{c.num_attention_heads} / latent" if c.uses_mla else f"{c.num_attention_heads} / {c.num_key_value_heads}"
        rows.append((Text(c.name), Text(f"`{c.architecture}`"), Int(c.num_hidden_layers), Int(c.hidden_size),
                     Text(heads), Text(cached_per_layer(c)), Text(kind_counts(c)), Int(c.vocab_size),
                     billions(p.total), billions(p.active)))
    header = ("model", "architecture", "layers", "hidden", "query / KV heads", "cached per token and layer",
              "layers by attention kind", "vocabulary", "total (billions)", "active (billions)")
    return Table(header, tuple(rows), align="llrrrllrrr")


@fact
def supported_families() -> Text:
    """The model families `ModelConfig` reads exactly (`chapter2.models.FAMILIES`), as a list of names."""
    return Text(", ".join(f.label for f in FAMILIES))


@fact
def llama_8b_total_params_billion() -> Num:
    """Llama 3.1 8B's total parameters in billions (`ModelConfig.params().total`)."""
    return Num(load_config(LLAMA).params().total / 1e9, 3)


@fact
def llama_8b_ffn_width() -> Int:
    """Llama 3.1 8B's feed-forward width (config.json `intermediate_size`)."""
    return Int(load_config(LLAMA).intermediate_size)


@fact
def llama_8b_layers() -> Int:
    """Llama 3.1 8B's transformer blocks L (config.json `num_hidden_layers`)."""
    return Int(load_config(LLAMA).num_hidden_layers)


def _llama_parts(c: ModelConfig) -> list[tuple[str, int]]:
    """Llama 3.1 8B's parameters by part (`ModelConfig.param_breakdown()`), named as the page names them."""
    layers = c.num_hidden_layers
    names = {"embedding": "embedding table (vocab × D)",
             "attention": f"attention, {layers} blocks (q, k, v, o projections)",
             "dense MLPs": f"feed-forward, {layers} blocks (gate, up, down)",
             "norms": "RMSNorm weights", "LM head": "LM head (vocab × D)"}
    return [(names[p.part], p.total) for p in c.param_breakdown()]


@fact
def llama_8b_param_breakdown() -> Table:
    """Where Llama 3.1 8B's parameters sit, part by part, with each part's share of `params().total`.

    The total row is the sum of the parts, and its share is that sum over
    `params().total` (tests/test_pages_llm_architecture.py counts the parts from
    config.json's sizes and checks both against the published total).
    """
    c = load_config(LLAMA)
    total = c.params().total
    parts = _llama_parts(c)
    rows = [(Text(name), Int(n), share(n / total)) for name, n in parts]
    summed = sum(n for _, n in parts)
    rows.append((Text("**total**"), Int(summed), share(summed / total)))
    return Table(("part", "parameters", "share"), tuple(rows))


@fact
def llama_8b_ffn_share() -> Pct:
    """Share of Llama 3.1 8B's parameters in its feed-forward networks (the breakdown's feed-forward row)."""
    c = load_config(LLAMA)
    ffn = next(p.total for p in c.param_breakdown() if p.part == "dense MLPs")
    return share(ffn / c.params().total)


# -- 2.2.3 attention -------------------------------------------------------------------------------
@fact
def llama_8b_query_heads() -> Int:
    """Llama 3.1 8B's query heads H_q (config.json `num_attention_heads`)."""
    return Int(load_config(LLAMA).num_attention_heads)


@fact
def llama_8b_kv_heads() -> Int:
    """Llama 3.1 8B's key/value heads H_kv (config.json `num_key_value_heads`)."""
    return Int(load_config(LLAMA).num_key_value_heads)


@fact
def llama_8b_gqa_group() -> Int:
    """Query heads per K/V head in Llama 3.1 8B, G = H_q / H_kv (`gqa_group`): how many times smaller GQA makes
    the KV cache."""
    return Int(load_config(LLAMA).gqa_group)


@fact
def llama_8b_head_dim() -> Int:
    """Llama 3.1 8B's head dimension d (hidden_size / num_attention_heads)."""
    return Int(load_config(LLAMA).head_dim)


# -- 2.2.3 attention, intuition first: the shipped tiny model on a sentence of this site ---------------------
# The worked example's inputs: one query and three tokens' keys and values, two numbers each (no 1/sqrt(d)).
WORKED_TOKENS = ("The", "keys", "and")
WORKED_QUERY = (1.0, 2.0)  # the query of the last token, "and"
WORKED_KEYS = ((1.0, 0.0), (2.0, 1.0), (0.0, 1.0))
WORKED_VALUES = ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0))


@functools.cache
def _tiny_example():
    """(the example sentence's token labels, `token_walk.one_query` of its last token in the example head)."""
    from .. import stepper, token_walk
    from ..calculators.token_walk import label

    model, tokenizer = stepper.load()
    ids = tokenizer.encode(token_walk.EXAMPLE_PROMPT)
    oq = token_walk.one_query(model, ids, token_walk.EXAMPLE_LAYER, token_walk.EXAMPLE_HEAD)
    return tuple(label(tokenizer.token_text(i)) for i in ids), oq


def _ranked(k: int) -> tuple[str, float]:
    """The k-th most attended token of the example (0 = the most) and its weight."""
    tokens, oq = _tiny_example()
    j = sorted(range(len(tokens)), key=lambda i: (-oq.weights[i], i))[k]
    return tokens[j], float(oq.weights[j])


def _tiny_config() -> ModelConfig:
    from .. import stepper

    return stepper.load()[0].config


@fact
def attention_example_prompt() -> Text:
    """The example sentence (`token_walk.EXAMPLE_PROMPT`): text of this site the tiny model read in training."""
    from .. import token_walk

    return Text(token_walk.EXAMPLE_PROMPT)


@fact
def attention_example_query() -> Text:
    """The example's last token, whose query the figure scores against every key."""
    return Text(_tiny_example()[0][-1])


@fact
def attention_example_layer() -> Int:
    """The layer of the example head (1-based)."""
    return Int(_tiny_example()[1].layer)


@fact
def attention_example_head() -> Int:
    """The example head within its layer (1-based)."""
    return Int(_tiny_example()[1].head)


@fact
def attention_example_top_token() -> Text:
    """The token the example query attends to most."""
    return Text(_ranked(0)[0])


@fact
def attention_example_top_weight() -> Pct:
    """Its attention weight (softmax of the scores)."""
    return Pct(_ranked(0)[1])


@fact
def tiny_lm_hidden_size() -> Int:
    """The shipped tiny model's hidden size D (its config.json)."""
    return Int(_tiny_config().hidden_size)


@fact
def tiny_lm_head_dim() -> Int:
    """The tiny model's head dimension d: the numbers in each head's query, key and value."""
    return Int(_tiny_config().head_dim)


@fact
def tiny_lm_query_heads() -> Int:
    """The tiny model's query heads per layer."""
    return Int(_tiny_config().num_attention_heads)


@fact
def tiny_lm_kv_heads() -> Int:
    """The tiny model's key/value heads per layer (grouped-query attention)."""
    return Int(_tiny_config().num_key_value_heads)


def _worked():
    """(scores, weights, output) of the worked example: `attention.attention_weights` and `attention.attention`
    with scale 1 (plain dot products), the query being the last of the three positions."""
    import numpy as np

    q = np.zeros((1, 1, len(WORKED_TOKENS), 2))
    q[0, 0, -1] = WORKED_QUERY  # only the last token's query is shown; the causal mask lets it see all three
    k, v = np.array(WORKED_KEYS)[None, None], np.array(WORKED_VALUES)[None, None]
    scores = np.array(WORKED_KEYS) @ np.array(WORKED_QUERY)
    weights = attention.attention_weights(q, k, causal=True, scale=1.0)[0, 0, -1]
    output = attention.attention(q, k, v, causal=True, scale=1.0)[0, 0, -1]
    return scores, weights, output


def _vector(v) -> str:
    return "(" + ", ".join(f"{x:g}" for x in v) + ")"


@fact
def attention_worked_query() -> Text:
    """The worked example's query, of its last token."""
    return Text(_vector(WORKED_QUERY))


@fact
def attention_worked_table() -> Table:
    """The worked example: each token's key, its score (query . key), weight (softmax) and value."""
    scores, weights, _ = _worked()
    rows = tuple((f"‘{t}’", _vector(k), str(Int(round(s))), str(Pct(w)), _vector(v))
                 for t, k, s, w, v in zip(WORKED_TOKENS, WORKED_KEYS, scores, weights, WORKED_VALUES, strict=True))
    return Table(("Token", "Key", "Score: query · key", "Weight: softmax", "Value"), rows, align="lllrl")


@fact
def attention_worked_output() -> Text:
    """The worked example's output: the weights times the values, to two decimals."""
    return Text("(" + ", ".join(f"{x:.2f}" for x in _worked()[2]) + ")")


@fact
def causal_example_tokens() -> Int:
    """Tokens in the causal-mask example."""
    return Int(CAUSAL_EXAMPLE_TOKENS)


@fact
def causal_example_attended_pairs() -> Int:
    """Query-key pairs the causal mask leaves for 8 tokens (`attention.attended_pairs`)."""
    return Int(attention.attended_pairs(CAUSAL_EXAMPLE_TOKENS, causal=True))


@fact
def causal_example_all_pairs() -> Int:
    """All query-key pairs of 8 tokens without a mask (`attention.attended_pairs`, not causal)."""
    return Int(attention.attended_pairs(CAUSAL_EXAMPLE_TOKENS))


@fact
def cache_example_decode_tokens() -> Int:
    """Tokens decoded in the KV cache example."""
    return Int(CACHE_DECODE_TOKENS)


@fact
def cache_example_prompt_tokens() -> Int:
    """Prompt tokens in the KV cache example."""
    return Int(CACHE_PROMPT_TOKENS)


@fact
def cache_example_pairs_with_cache() -> Int:
    """Query-key pairs scored decoding 1,000 tokens after a 1,000-token prompt with the cache: one query per step."""
    return Int(_cache_pairs()[0])


@fact
def cache_example_pairs_without_cache() -> Int:
    """The same without the cache: every step reruns causal attention over the whole sequence."""
    return Int(_cache_pairs()[1])


@fact
def cache_example_pairs_ratio() -> Num:
    """How many times more query-key pairs decoding scores without the KV cache than with it."""
    with_cache, without = _cache_pairs()
    return Num(without / with_cache, 3)


@fact
def llama_8b_kv_bytes_per_token() -> Int:
    """Bytes Llama 3.1 8B's KV cache grows by per token in BF16, exact: 2 x L x H_kv x d x 2."""
    return Int(load_config(LLAMA).kv_cache_bytes_per_token("bf16"))


@fact
def llama_8b_kv_per_token() -> Bytes:
    """The same per-token KV cache size with an SI prefix (131 kB)."""
    return Bytes(load_config(LLAMA).kv_cache_bytes_per_token("bf16"))


# -- multi-head latent attention -------------------------------------------------------------------
def _deepseek() -> ModelConfig:
    return load_config("DeepSeek-V3")


@fact
def deepseek_v3_layers() -> Int:
    """DeepSeek-V3's layers (config.json `num_hidden_layers`)."""
    return Int(_deepseek().num_hidden_layers)


@fact
def deepseek_v3_query_heads() -> Int:
    """DeepSeek-V3's attention heads (config.json `num_attention_heads`)."""
    return Int(_deepseek().num_attention_heads)


@fact
def deepseek_v3_kv_heads() -> Int:
    """DeepSeek-V3's config.json `num_key_value_heads` (128): a field MLA does not use for its cache."""
    return Int(_deepseek().num_key_value_heads)


@fact
def deepseek_v3_size_vs_llama_8b() -> Times:
    """DeepSeek-V3's total parameters over Llama 3.1 8B's (`params().total`)."""
    return Times(_deepseek().params().total / load_config(LLAMA).params().total, 2)


@fact
def deepseek_v3_kv_lora_rank() -> Int:
    """Width of DeepSeek-V3's compressed key/value latent (config.json `kv_lora_rank`)."""
    return Int(_deepseek().kv_lora_rank)


@fact
def deepseek_v3_qk_rope_head_dim() -> Int:
    """Width of the RoPE key DeepSeek-V3's heads share (config.json `qk_rope_head_dim`)."""
    return Int(_deepseek().qk_rope_head_dim)


@fact
def deepseek_v3_qk_nope_head_dim() -> Int:
    """Width of each head's key part without RoPE, decompressed from the latent (config.json `qk_nope_head_dim`)."""
    return Int(_deepseek().qk_nope_head_dim)


@fact
def deepseek_v3_v_head_dim() -> Int:
    """Width of each head's value, decompressed from the latent (config.json `v_head_dim`)."""
    return Int(_deepseek().v_head_dim)


@fact
def deepseek_v3_mla_cached_per_layer() -> Int:
    """Numbers DeepSeek-V3 caches per token and layer: kv_lora_rank + qk_rope_head_dim (`kv_cache_elements_per_token`)."""
    return Int(_deepseek().kv_cache_elements_per_token(0))


@fact
def deepseek_v3_expanded_per_layer() -> Int:
    """Numbers per token and layer if DeepSeek-V3 cached every head's key (nope + rope) and value:
    heads x (qk_nope + qk_rope + v_head_dim) (`kv_cache_elements_per_token(mla="expanded")`)."""
    return Int(_deepseek().kv_cache_elements_per_token(0, mla="expanded"))


@fact
def deepseek_v3_mla_saving() -> Times:
    """How many times smaller the latent cache is than per-head keys and values (expanded / latent)."""
    d = _deepseek()
    return Times(d.kv_cache_elements_per_token(0, mla="expanded") / d.kv_cache_elements_per_token(0))


@fact
def deepseek_v3_kv_bytes_per_token() -> Int:
    """Bytes DeepSeek-V3's cache grows by per token in BF16: layers x 576 x 2 (`kv_cache_bytes_per_token`)."""
    return Int(_deepseek().kv_cache_bytes_per_token("bf16"))


@fact
def deepseek_v3_kv_vs_llama_8b() -> Pct:
    """DeepSeek-V3's KV bytes per token as a share of Llama 3.1 8B's (both BF16)."""
    return Pct(_deepseek().kv_cache_bytes_per_token("bf16") / load_config(LLAMA).kv_cache_bytes_per_token("bf16"), 2)


@fact
def deepseek_v3_absorbed_flops_per_key() -> Int:
    """FLOPs per cached token and layer in MLA's absorbed form, all heads: 2 H (kv_lora_rank + qk_rope) for the
    scores plus 2 H kv_lora_rank for summing latents (`attention_flops_per_key`)."""
    return Int(_deepseek().attention_flops_per_key("absorbed"))


@fact
def deepseek_v3_expanded_flops_per_key() -> Int:
    """FLOPs per cached token and layer with per-head keys and values: 2 H (qk_nope + qk_rope + v_head_dim)."""
    return Int(_deepseek().attention_flops_per_key("expanded"))


def _attention_intensity(c: ModelConfig, mla: str = "absorbed") -> float:
    """Decode attention's FLOPs per byte of BF16 KV cache read: FLOPs per key / bytes per key, one layer."""
    return c.attention_flops_per_key(mla) / (c.kv_cache_elements_per_token(0, mla=mla) * 2)


@fact
def deepseek_v3_absorbed_intensity() -> Num:
    """DeepSeek-V3 decode attention, absorbed form over the BF16 latent cache: FLOPs per byte read."""
    return Num(_attention_intensity(_deepseek()), 3)


@fact
def deepseek_v3_expanded_intensity() -> Num:
    """DeepSeek-V3 decode attention over a BF16 cache of per-head keys and values: FLOPs per byte read."""
    return Num(_attention_intensity(_deepseek(), "expanded"), 3)


@fact
def deepseek_v3_mixed_intensity() -> Num:
    """The mixed accounting an earlier version of the page used: expanded-form FLOPs over latent-cache bytes."""
    d = _deepseek()
    return Num(d.attention_flops_per_key("expanded") / (d.kv_cache_elements_per_token(0) * 2), 3)


MLA_PREFILL_TOKENS = 32_768  # a long prompt, where attention is much of a prefill's work


@fact
def deepseek_v3_mla_prefill_tokens() -> Int:
    """Prompt length of the prefill costed in both MLA forms."""
    return Int(MLA_PREFILL_TOKENS)


@fact
def deepseek_v3_prefill_absorbed_over_expanded() -> Times:
    """How much longer `roofline.prefill` says a DeepSeek-V3 prefill takes if costed in the absorbed form instead
    of the expanded form engines prefill with (FP8 on an H100: compute bound either way, so a FLOP ratio)."""
    expanded = roofline.prefill(_deepseek(), MLA_PREFILL_TOKENS, dtype="fp8")
    absorbed = roofline.prefill(_deepseek(), MLA_PREFILL_TOKENS, dtype="fp8", mla="absorbed")
    return Times(absorbed.time / expanded.time)


@fact
def llama_8b_attention_intensity() -> Num:
    """Llama 3.1 8B decode attention: FLOPs per byte of BF16 KV cache read (its GQA group shares each K and V)."""
    return Num(_attention_intensity(load_config(LLAMA)), 3)


# -- 2.2.4 mixture of experts -------------------------------------------------------------------------
@fact
def moe_example_experts() -> Int:
    """Experts in the routing worked example's layer."""
    return Int(len(MOE_EXAMPLE_ROUTER_LOGITS))


@fact
def moe_example_per_token() -> Int:
    """Experts each token runs in the routing worked example."""
    return Int(MOE_EXAMPLE_PER_TOKEN)


@fact
def moe_routing_example_table() -> Table:
    """One token routed over four experts, two per token (`moe.route`, normalized as Qwen3-MoE): each expert's
    router probability (a softmax of the scores), whether it runs, and its weight in the mix (0 if it does not)."""
    r = moe.route([MOE_EXAMPLE_ROUTER_LOGITS], MOE_EXAMPLE_PER_TOKEN)
    weight = dict(zip(r.experts[0].tolist(), r.weights[0].tolist(), strict=True))
    rows = tuple((Int(e), Num(float(r.probs[0, e]), 2), Text("runs" if e in weight else "skipped"),
                  share(weight.get(e, 0.0), 0)) for e in range(len(MOE_EXAMPLE_ROUTER_LOGITS)))
    return Table(("expert", "router probability", "this token", "weight in the mix"), rows, align="rrlr")


@fact
def qwen3_235b_moe_layers() -> Int:
    """Qwen3-235B-A22B's MoE layers (all of its `num_hidden_layers`; `ModelConfig.moe_layers`)."""
    return Int(len(load_config("Qwen3-235B-A22B").moe_layers))


@fact
def qwen3_235b_experts() -> Int:
    """Qwen3-235B-A22B's routed experts per layer E (config.json `num_experts`)."""
    return Int(load_config("Qwen3-235B-A22B").num_experts)


@fact
def qwen3_235b_experts_per_token() -> Int:
    """Experts each token uses in Qwen3-235B-A22B, k (config.json `num_experts_per_tok`)."""
    return Int(load_config("Qwen3-235B-A22B").num_experts_per_tok)


@fact
def qwen3_235b_total_params_billion() -> Num:
    """Qwen3-235B-A22B's total parameters in billions, one decimal (`ModelConfig.params().total`)."""
    return billions(load_config("Qwen3-235B-A22B").params().total)


@fact
def qwen3_235b_active_params_billion() -> Num:
    """Qwen3-235B-A22B's parameters one token uses, in billions, one decimal (`params().active`)."""
    return billions(load_config("Qwen3-235B-A22B").params().active)


@fact
def qwen3_235b_active_share() -> Pct:
    """Share of Qwen3-235B-A22B's parameters one token uses (active / total)."""
    p = load_config("Qwen3-235B-A22B").params()
    return share(p.active / p.total)


@fact
def qwen3_235b_total_params_rounded() -> Num:
    """Qwen3-235B-A22B's total parameters rounded to whole billions: the "235B" of its name and of the chapter."""
    return Num(round(load_config("Qwen3-235B-A22B").params().total / 1e9))


@fact
def qwen3_235b_active_params_rounded() -> Num:
    """Qwen3-235B-A22B's active parameters rounded to whole billions: the "A22B" of its name and the chapter's 22B."""
    return Num(round(load_config("Qwen3-235B-A22B").params().active / 1e9))


@fact
def qwen3_235b_expert_params_million() -> Num:
    """Parameters of one Qwen3-235B-A22B expert (a SwiGLU MLP), in millions (`models.QWEN3_235B_A22B.expert_params`)."""
    return decimals(QWEN3_MOE.expert_params / 1e6, 1)


@fact
def qwen3_235b_expert_weight_share() -> Pct:
    """Share of Qwen3-235B-A22B's parameters held by its routed experts."""
    return share(QWEN3_MOE.total_expert_params / load_config("Qwen3-235B-A22B").params().total)


@fact
def qwen3_235b_experts_touched_one_token() -> Num:
    """Experts one token touches per layer (`moe.expected_experts_touched` with B = 1: k)."""
    return Num(moe.expected_experts_touched(QWEN3_MOE.n_experts, QWEN3_MOE.k, 1))


@fact
def coverage_most() -> Pct:
    """The first coverage target of the example: 90 % of a layer's experts."""
    return Pct(COVERAGE_MOST)


@fact
def coverage_nearly_all() -> Pct:
    """The second coverage target of the example: 99 % of a layer's experts."""
    return Pct(COVERAGE_NEARLY_ALL)


@fact
def qwen3_235b_tokens_touching_most() -> Int:
    """Smallest batch whose tokens touch 90 % of Qwen3-235B-A22B's experts on average (`moe.tokens_for_coverage`)."""
    return Int(moe.tokens_for_coverage(QWEN3_MOE.n_experts, QWEN3_MOE.k, COVERAGE_MOST))


@fact
def qwen3_235b_tokens_touching_nearly_all() -> Int:
    """Smallest batch whose tokens touch 99 % of Qwen3-235B-A22B's experts on average (`moe.tokens_for_coverage`)."""
    return Int(moe.tokens_for_coverage(QWEN3_MOE.n_experts, QWEN3_MOE.k, COVERAGE_NEARLY_ALL))


# the batch sizes of the coverage table: powers of two from one token to 1,024
COVERAGE_BATCHES = tuple(2 ** i for i in range(11))


@fact
def qwen3_235b_coverage_by_batch() -> Table:
    """Experts one Qwen3-235B-A22B layer touches, and the share of its expert weights a decode step reads, for
    batches of 1 to 1,024 tokens with uniform routing (`moe.expected_experts_touched`): the values along the
    live chart's curve at the calculator's defaults, in numbers."""
    rows = []
    for batch in COVERAGE_BATCHES:
        touched = moe.expected_experts_touched(QWEN3_MOE.n_experts, QWEN3_MOE.k, batch)
        rows.append((Int(batch), Num(touched, 4), share(touched / QWEN3_MOE.n_experts, places=2)))
    return Table(("tokens in the batch (B)", "experts touched per layer", "expert weights read"), tuple(rows))


@fact
def moe_decode_batch() -> Int:
    """The batch of the MoE decode-step example."""
    return Int(MOE_DECODE_BATCH)


@fact
def qwen3_235b_expert_bytes_one_request() -> Bytes:
    """Expert weights one decode step of a single request reads in BF16, all layers (`moe.moe_decode_step`)."""
    return Bytes(_moe_step(1).bytes_loaded)


@fact
def qwen3_235b_expert_bytes_batch() -> Bytes:
    """Expert weights one decode step of a 256-token batch reads in BF16, all layers (`moe.moe_decode_step`)."""
    return Bytes(_moe_step(MOE_DECODE_BATCH).bytes_loaded)


@fact
def qwen3_235b_expert_share_read_batch() -> Pct:
    """Share of all expert weights a 256-token decode step reads (`MoeDecodeStep.weight_share_loaded`)."""
    return share(_moe_step(MOE_DECODE_BATCH).weight_share_loaded)


@fact
def qwen3_235b_expert_compute_share() -> Pct:
    """Share of the expert arithmetic each token does: k / E (`MoeDecodeStep.compute_share`)."""
    return share(_moe_step(MOE_DECODE_BATCH).compute_share, 2)


@fact
def qwen3_235b_expert_compute_saving() -> Num:
    """How many times less expert arithmetic than running every expert: E / k (`MoeDecodeStep.compute_saving`)."""
    return Num(_moe_step(MOE_DECODE_BATCH).compute_saving)


def _named_sizes(configs, places: int, active: bool = False) -> Text:
    def size(c: ModelConfig) -> str:
        p = c.params()
        if active:
            return f"{billions(p.total, places)}B total, {billions(p.active, places)}B active"
        return f"{billions(p.total, places)}B"
    return Text(", ".join(f"{c.name} ({size(c)})" for c in configs))


@fact
def moe_rule_of_thumb_billion() -> Int:
    """The chapter's rule of thumb: MoE tends to appear above roughly this many billion parameters."""
    return Int(round(MOE_RULE_OF_THUMB_PARAMS / 1e9))


@fact
def configs_above_rule() -> Text:
    """The shipped configs above the rule's 100B, largest first, with total parameters in billions (all are MoE)."""
    big = sorted((c for c in _configs() if c.params().total > MOE_RULE_OF_THUMB_PARAMS), key=lambda c: -c.params().total)
    return _named_sizes(big, 0)


@fact
def small_moe_configs() -> Text:
    """The shipped mixtures of experts below the rule's 100B, with total and active parameters in billions."""
    small = [c for c in _configs() if c.is_moe and c.params().total <= MOE_RULE_OF_THUMB_PARAMS]
    return _named_sizes(small, 1, active=True)


@fact
def dense_configs() -> Text:
    """The shipped dense models, with their total parameters in billions (one decimal)."""
    return _named_sizes([c for c in _configs() if not c.is_moe], 1)


# -- the chapter map and the recall cards ------------------------------------------------------------
LEAVES = (
    Leaf("An embedding, L identical blocks of attention and feed-forward network, an LM head",
         "221-and-222-architecture-and-transformer-blocks"),
    Leaf("Attention reads every earlier token, so cache K and V: "
         "{{ fact: llm_architecture.llama_8b_kv_per_token }} per token for Llama 3.1 8B", "223-attention",
         idea="attention cost"),
    Leaf("MLA caches one latent per layer, not per-head K and V", "multi-head-latent-attention"),
    Leaf("MoE: {{ fact: llm_architecture.qwen3_235b_active_params_rounded }}B of "
         "{{ fact: llm_architecture.qwen3_235b_total_params_rounded }}B parameters active per token",
         "224-mixture-of-experts"),
)

CARDS = (
    Card("llm-kv-cache-why", "223-attention",
         "Why can attention cache keys and values at all?",
         """The causal mask stops a token from seeing later ones, so earlier keys and values never change. A
         decode step computes only the new token's query, key and value and scores one query against the cache.
         Decoding {{ fact: llm_architecture.cache_example_decode_tokens }} tokens after a
         {{ fact: llm_architecture.cache_example_prompt_tokens }}-token prompt scores
         {{ fact: llm_architecture.cache_example_pairs_ratio }} times fewer query-key pairs with the cache than
         without."""),
    Card("llm-kv-bytes", "what-one-token-adds-to-the-kv-cache",
         "How much KV cache does one token add in Llama 3.1 8B (BF16), and what does grouped-query attention save?",
         """`2 × layers × KV heads × head_dim × 2 bytes` = 2 × {{ fact: llm_architecture.llama_8b_layers }} ×
         {{ fact: llm_architecture.llama_8b_kv_heads }} × {{ fact: llm_architecture.llama_8b_head_dim }} × 2 =
         {{ fact: llm_architecture.llama_8b_kv_per_token }}. Its {{ fact: llm_architecture.llama_8b_query_heads }}
         query heads share those {{ fact: llm_architecture.llama_8b_kv_heads }} K/V heads, so the cache is
         {{ fact: llm_architecture.llama_8b_gqa_group }} times smaller than with one K/V head per query head."""),
    Card("llm-mla-cache", "multi-head-latent-attention",
         "What does DeepSeek-V3 cache per token and layer, and why does its attention come close to compute bound?",
         """Multi-head latent attention caches one latent of `kv_lora_rank` =
         {{ fact: llm_architecture.deepseek_v3_kv_lora_rank }} numbers plus a shared RoPE key of
         {{ fact: llm_architecture.deepseek_v3_qk_rope_head_dim }}:
         {{ fact: llm_architecture.deepseek_v3_mla_cached_per_layer }} numbers, not per-head K and V
         ({{ fact: llm_architecture.deepseek_v3_expanded_per_layer }}). Kernels work on the latent directly (the
         absorbed form): {{ fact: llm_architecture.deepseek_v3_absorbed_flops_per_key }} FLOPs per cached token and
         layer, about {{ fact: llm_architecture.deepseek_v3_absorbed_intensity }} FLOPs per byte, against
         {{ fact: llm_architecture.llama_8b_attention_intensity }} for Llama 3.1 8B's grouped-query attention."""),
    Card("llm-moe", "224-mixture-of-experts",
         "Qwen3-235B-A22B: how many experts does a token use, and why does a large batch still read almost all of them?",
         """{{ fact: llm_architecture.qwen3_235b_experts_per_token }} of
         {{ fact: llm_architecture.qwen3_235b_experts }} experts per layer, about
         {{ fact: llm_architecture.qwen3_235b_active_params_rounded }}B of
         {{ fact: llm_architecture.qwen3_235b_total_params_rounded }}B parameters per token. Each token picks its
         own experts, so a batch of {{ fact: llm_architecture.qwen3_235b_tokens_touching_most }} tokens already
         touches {{ fact: llm_architecture.coverage_most }} of them: MoE saves compute per token, not memory or weight
         traffic. Expert parallelism divides both among GPUs, each holding and reading its share of the experts;
         it does not shrink the total."""),
)
