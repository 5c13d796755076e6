"""One token's walk through the tiny model, every intermediate kept (chapter section 2.2.3).

A forward pass of the shipped tiny Llama (`chapter2.stepper.load`: hidden 128, 4 layers, 4 query
heads sharing 2 key/value heads) over a prompt, written out so that each step can be shown:

    ids --embed--> h                                        (N, D)   the embedding vectors
    for each layer:
        x = rms_norm(h)
        A = softmax(Q K^T / sqrt(d) + causal mask)          (H, N, N) each head's attention weights
        h = h + o_proj(A V)                                 the residual stream after attention
        h = h + mlp(rms_norm(h))                            ... and after the MLP (SwiGLU)
    hidden = rms_norm(h)                                    the final hidden state
    logits = hidden @ embed.T                               (N, V)   tied LM head

then the last position's logits go through the sampler of section 2.2
(`chapter2.sampling`: temperature, then top-k, then top-p) and one token is drawn and appended.

`trace(model, ids)` is the forward (no KV cache: the whole prompt at once, as a prefill) and
returns a `Trace`; `walk(model, tokenizer, prompt, ...)` adds the tokens' texts, the ten likeliest
next tokens and the sampled one, and returns a `Walk`. The pieces are the package's own:
`models.transformer.rms_norm`, `models.rope`, `attention.attention_weights` (each head's weights,
grouped-query attention) and `activations.silu`; the logits equal the tiny transformer's
`prefill`, and every array equals transformers' LlamaForCausalLM with eager attention
(`output_attentions`, `output_hidden_states`) on the same weights (tests/test_token_walk.py).

Pure numpy and the standard library, so it runs in the browser (Pyodide); float64 by default, the
dtype `chapter2.stepper.load` gives, so CPython and the browser agree to about 1e-15.

    model, tokenizer = stepper.load()
    w = walk(model, tokenizer, "The KV cache stores the keys and values", temperature=0.8, top_k=10)
    w.trace.attention[0][0, 1]          # layer 1, head 2: (N, N), row i = what token i attends to
    w.tokens, w.top[0], w.token_text    # the prompt's tokens, the likeliest next token, the one drawn
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import sampling
from ._checks import positive_int
from .activations import silu
from .attention import attention_weights
from .models.rope import apply_rope, rope_cos_sin
from .models.transformer import DENSE_MLP, Transformer, rms_norm
from .tokenizer import BPETokenizer

__all__ = ["TOP_N", "EXAMPLE_PROMPT", "EXAMPLE_LAYER", "EXAMPLE_HEAD", "Trace", "Candidate", "Walk", "OneQuery",
           "trace", "walk", "one_query"]

TOP_N = 10  # next-token candidates a walk lists
# The section's example: a real sentence of this site, and the head whose last row the page draws (1-based).
# In layer 1, head 4 the last token, ' and', puts most of its weight on ' keys': what is being listed.
EXAMPLE_PROMPT = "The KV cache stores the keys and"
EXAMPLE_LAYER, EXAMPLE_HEAD = 1, 4


# -----------------------------------------------------------------------------
# records


@dataclass(frozen=True)
class Trace:
    """Every intermediate of one forward pass over `ids` (N,), batch of one.

    - `embeddings` (N, D): the rows of the embedding table for `ids`.
    - `attention`: one array per layer, (1, H_q, N, N): head h's weights, row i (a query token) over
      columns j (key tokens); zero above the diagonal (the causal mask), each row sums to 1.
    - `residual` (2 L + 1, N, D): the residual stream after the embedding, then after each layer's
      attention and after its MLP, in order (entry 2 l + 2 is the output of layer l + 1).
    - `hidden` (N, D): the final hidden state, the last residual after the final RMSNorm.
    - `logits` (N, V): `hidden` times the LM head (the tied embedding table); row N - 1 predicts
      the next token.
    """

    ids: np.ndarray
    embeddings: np.ndarray
    attention: tuple[np.ndarray, ...]
    residual: np.ndarray
    hidden: np.ndarray
    logits: np.ndarray

    @property
    def n_layers(self) -> int:
        return len(self.attention)

    @property
    def residual_norms(self) -> np.ndarray:
        """(2 L + 1, N): the length (Euclidean norm) of each token's vector at each point of the stream."""
        return np.linalg.norm(self.residual, axis=-1)

    def layer_output(self, layer: int) -> np.ndarray:
        """(N, D): the residual stream after layer `layer` (0-based), attention and MLP both added."""
        return self.residual[2 * layer + 2]


@dataclass(frozen=True)
class Candidate:
    """A possible next token: id, text, the model's probability (softmax of the logits, temperature 1)
    and its probability under the walk's sampling settings (0 where top-k or top-p cut it)."""

    token: int
    text: str
    model_prob: float
    prob: float


@dataclass(frozen=True)
class Walk:
    """A prompt's walk: its tokens, the `Trace`, the `TOP_N` likeliest next tokens and the drawn one.

    `top` is ordered by the model's probability, likeliest first (ties: lower id first); `probs` (V,)
    is the sampling distribution (`chapter2.sampling.probs` of the last logits with the settings);
    `token` was drawn from it with `numpy.random.default_rng(seed)`, the draw
    `chapter2.models.transformer.generate` makes for its first token with the same settings and rng.
    """

    prompt: str
    tokens: tuple[str, ...]
    trace: Trace
    top: tuple[Candidate, ...]
    probs: np.ndarray
    token: int
    token_text: str
    temperature: float
    top_k: int | None
    top_p: float
    seed: int

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(int(i) for i in self.trace.ids)


# -----------------------------------------------------------------------------
# the forward, traced


def _linear(w: dict, x: np.ndarray, name: str) -> np.ndarray:
    y = x @ w[name + ".weight"].T
    bias = w.get(name + ".bias")
    return y if bias is None else y + bias


def _check_model(model) -> None:
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a chapter2 Transformer (see chapter2.stepper.load), got {type(model).__name__}")
    c = model.config
    if c.moe_layers or c.qk_norm or c.sliding_window_layers or c.sliding_window:
        raise ValueError(f"the token walk traces dense, full-attention Llama-style models without QK-norm; "
                         f"{c.name!r} has mixture-of-experts, QK-norm or sliding-window layers")


def _check_ids(ids, vocab_size: int) -> np.ndarray:
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"ids must be a non-empty 1-D sequence of token ids, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"ids must be integers, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= vocab_size:
        raise ValueError(f"ids must be in [0, {vocab_size}), got min {arr.min()} max {arr.max()}")
    return arr.astype(np.int64)


def trace(model: Transformer, ids) -> Trace:
    """The forward pass over `ids` (1-D token ids), every intermediate kept (see `Trace`).

    The same computation as `model.prefill(ids)` (whose logits it returns), written out so that
    each head's attention weights are kept: the queries, keys and values of a head are the whole
    normalized hidden state times that head's rows of W_Q, W_K and W_V.
    """
    _check_model(model)
    ids = _check_ids(ids, model.config.vocab_size)
    c, w = model.config, model.weights
    n, d, h_q, h_kv = len(ids), c.head_dim, c.num_attention_heads, c.num_key_value_heads
    positions = np.arange(n)
    cos, sin = rope_cos_sin(positions, d, c.rope_theta, c.rope_scaling, model.dtype)  # (N, d)
    h = w["model.embed_tokens.weight"][ids]  # (N, D)
    residual, attention = [h], []
    for i in range(c.num_hidden_layers):
        p = f"model.layers.{i}."
        x = rms_norm(h, w[p + "input_layernorm.weight"], c.rms_norm_eps)  # (N, D)
        q = _linear(w, x, p + "self_attn.q_proj").reshape(n, h_q, d).transpose(1, 0, 2)  # (H_q, N, d)
        k = _linear(w, x, p + "self_attn.k_proj").reshape(n, h_kv, d).transpose(1, 0, 2)  # (H_kv, N, d)
        v = _linear(w, x, p + "self_attn.v_proj").reshape(n, h_kv, d).transpose(1, 0, 2)  # (H_kv, N, d)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        a = attention_weights(q[None], k[None], causal=True)  # (1, H_q, N, N)
        group = h_q // h_kv  # query heads per K/V head: head j reads K/V head j // group
        out = a[0] @ np.repeat(v, group, axis=0)  # (H_q, N, d)
        out = out.transpose(1, 0, 2).reshape(n, h_q * d)  # (N, H_q*d): the heads side by side
        h = h + _linear(w, out, p + "self_attn.o_proj")
        residual.append(h)
        x = rms_norm(h, w[p + "post_attention_layernorm.weight"], c.rms_norm_eps)
        gate, up, down = (p + "mlp." + name for name in DENSE_MLP)
        h = h + _linear(w, silu(_linear(w, x, gate)) * _linear(w, x, up), down)  # SwiGLU
        residual.append(h)
        attention.append(a)
    hidden = rms_norm(h, w["model.norm.weight"], c.rms_norm_eps)  # (N, D)
    lm_head = w["model.embed_tokens.weight"] if c.tie_word_embeddings else w["lm_head.weight"]
    return Trace(ids, residual[0], tuple(attention), np.stack(residual), hidden, hidden @ lm_head.T)


# -----------------------------------------------------------------------------
# the walk: tokens in, one token out


def _text(tokenizer: BPETokenizer, token: int) -> str:
    return tokenizer.token_text(token) if token in tokenizer.id_to_token else f"<id {token}>"


def walk(model: Transformer, tokenizer: BPETokenizer, prompt: str, *, temperature: float = 1.0, top_k=None,
         top_p: float = 1.0, seed: int = 0) -> Walk:
    """Tokenize `prompt`, trace the forward pass, and draw the next token (see `Walk`).

    Sampling is `chapter2.sampling` with the order and semantics of section 2.2: temperature (0 is
    greedy), then top-k (None, 0 or -1 disables it), then top-p in (0, 1]. The prompt must be
    non-empty and fit the model's context.
    """
    if not isinstance(tokenizer, BPETokenizer):
        raise TypeError(f"tokenizer must be a BPETokenizer (see chapter2.stepper.load), got {type(tokenizer).__name__}")
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    if prompt == "":
        raise ValueError("prompt must be non-empty text (the walk needs at least one token)")
    seed = positive_int("seed", seed, allow_zero=True)
    settings = dict(temperature=temperature, top_k=top_k, top_p=top_p)
    sampling.probs(np.zeros(1), **settings)  # check the settings before the forward pass
    ids = tokenizer.encode(prompt)
    context = model.config.max_position_embeddings if isinstance(model, Transformer) else None
    if context is not None and len(ids) > context:
        raise ValueError(f"prompt is {len(ids)} tokens, more than the model's context of {context}")
    t = trace(model, ids)
    last = t.logits[-1]  # (V,): only the last position predicts the next token
    model_probs = sampling.probs(last, temperature=1.0)
    probs = sampling.probs(last, **settings)
    order = np.argsort(-last, kind="stable")[:TOP_N]  # likeliest first; ties: lower id first
    top = tuple(Candidate(int(i), _text(tokenizer, int(i)), float(model_probs[i]), float(probs[i])) for i in order)
    token = int(sampling.sample(last, rng=np.random.default_rng(seed), **settings))
    return Walk(prompt, tuple(_text(tokenizer, int(i)) for i in ids), t, top, probs, token, _text(tokenizer, token),
                float(temperature), top_k, float(top_p), seed)


# -----------------------------------------------------------------------------
# one query, written out: what a head does for one token


@dataclass(frozen=True)
class OneQuery:
    """One head's attention for one token, every vector kept (`one_query`).

    `query` (d,) is the token's query; `keys` and `values` (P + 1, d) those of the tokens up to
    and including it (P is its position); `scores` (P + 1,) are query . key / sqrt(d), `weights`
    their softmax (adding up to 1), `output` (d,) the weights times the values. `rows` is the
    slice of W_Q's rows that make this head's query, `kv_rows` the slice of W_K's and W_V's rows
    of the key/value head it reads.
    """

    layer: int
    head: int
    position: int
    query: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    rows: slice
    kv_rows: slice


def one_query(model: Transformer, ids, layer: int, head: int, position: int = -1) -> OneQuery:
    """What head `head` of layer `layer` (both 1-based) does for the token at `position` (default: the last).

    The head's own rows of W_Q, W_K and W_V multiply the token's whole normalized hidden state (all D
    numbers): d rows give the query, and the d rows of its key/value head give each earlier token's key
    and value (query heads h share K/V head h // (H_q / H_kv), grouped-query attention). The query scores
    every key up to the token itself with a dot product over sqrt(d); softmax makes the weights.
    """
    t = trace(model, ids)
    c, w = model.config, model.weights
    n_layers, h_q, h_kv, d = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    layer, head = positive_int("layer", layer), positive_int("head", head)
    if layer > n_layers or head > h_q:
        raise ValueError(f"layer must be 1 to {n_layers} and head 1 to {h_q}, got layer {layer}, head {head}")
    n = len(t.ids)
    if isinstance(position, bool) or not isinstance(position, int) or not -n <= position < n:
        raise ValueError(f"position must be an int from {-n} to {n - 1} for {n} tokens, got {position!r}")
    pos = position % n
    p = f"model.layers.{layer - 1}."
    x = rms_norm(t.residual[2 * (layer - 1)], w[p + "input_layernorm.weight"], c.rms_norm_eps)  # (N, D): the input
    rows = slice((head - 1) * d, head * d)  # this head's rows of W_Q
    kv = (head - 1) // (h_q // h_kv)
    kv_rows = slice(kv * d, (kv + 1) * d)  # its key/value head's rows of W_K and W_V
    seen = x[: pos + 1]  # (P + 1, D): the token and every one before it
    cos, sin = rope_cos_sin(np.arange(pos + 1), d, c.rope_theta, c.rope_scaling, model.dtype)  # (P + 1, d)
    query = apply_rope((x[pos] @ w[p + "self_attn.q_proj.weight"][rows].T)[None], cos[pos:], sin[pos:])[0]  # (d,)
    keys = apply_rope(seen @ w[p + "self_attn.k_proj.weight"][kv_rows].T, cos, sin)  # (P + 1, d)
    values = seen @ w[p + "self_attn.v_proj.weight"][kv_rows].T  # (P + 1, d)
    scores = keys @ query / np.sqrt(d)  # (P + 1,)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    return OneQuery(layer, head, pos, query, keys, values, scores, weights, weights @ values, rows, kv_rows)
