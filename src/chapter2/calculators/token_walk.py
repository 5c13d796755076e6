"""Calculator of section 2.2.3 (attention): a prompt walked through the tiny model, one step at a time.

`token_walk`: the shipped tiny Llama (`chapter2/data/tiny_lm`, 4 layers of 4 query heads) reads the
prompt, and the step slider follows it: the tokens, their embedding vectors, each layer's heads one
by one (a heatmap of the attention weights: row = a token, cells = how much it attends to each
earlier token), each layer's MLP, the final hidden state, the ten likeliest next tokens under the
sampling settings, and the token drawn and appended. Every number is `chapter2.token_walk.walk`
(equal to transformers' forward on the same weights, tests/test_token_walk.py); the sampler is
section 2.2's (`chapter2.sampling`: temperature, then top-k, then top-p). One caption per step says
what the step shows. Pointing at a row of the picture, or tapping it, shows that token's numbers.

The walk of the default prompt is drawn at build time, every step, into a file of its own that the
page fetches when the reader comes to the walk (`defer_frames`: 25 drawings would double the page's
weight for readers who never use it); another prompt runs in the reader's browser. A walk is kept
between calls, so moving the slider only redraws.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import stepper, token_walk
from ..charts import ChartSpec
from ..format import sig
from ..heatmap import MAX_LABEL, heatmap
from ._registry import Field, FieldError, Output, calculator

MAX_PROMPT_CHARS = 200
MAX_TOKENS = 32  # rows of the heatmap: 32 x 18 units stay readable on a phone
SHOWN_DIMS = 16  # a vector's first numbers drawn (of 128): enough to see that each token's differs
ID_SHADE = 0.25  # a token's cell in the tokens' table (the appended token's is full)
DEFAULT_PROMPT = "The KV cache stores the keys and"
PICTURE = ChartSpec("what each token is spread over", "the prompt's tokens", kind="heatmap")  # each step names its own
VECTOR_X = f"its vector's first {SHOWN_DIMS} numbers"


@dataclass(frozen=True)
class Step:
    """One step of the walk: `kind` is tokens, embedding, attention, mlp, hidden, logits or sampled."""

    kind: str
    layer: int = 0  # 1-based, for attention and mlp
    head: int = 0  # 1-based, for attention


def walk_steps(n_layers: int, n_heads: int) -> list[Step]:
    """The steps in order: tokens, embedding, then per layer each head and the MLP, then hidden, logits, sampled."""
    steps = [Step("tokens"), Step("embedding")]
    for layer in range(1, n_layers + 1):
        steps += [Step("attention", layer, head) for head in range(1, n_heads + 1)] + [Step("mlp", layer)]
    return steps + [Step("hidden"), Step("logits"), Step("sampled")]


N_STEPS = len(walk_steps(4, 4))  # the shipped tiny model (tests check it against its config)


@calculator(
    "token_walk",
    title="A token's walk through the tiny model: tokens, attention heads, MLPs, logits, the next token",
    defer_frames=True,  # its 25 prebuilt steps (about 230 kB) are fetched when a reader comes to it
    fields=[
        Field("prompt", "Prompt", DEFAULT_PROMPT, kind="text", max=MAX_PROMPT_CHARS,
              help=f"any text up to {MAX_TOKENS} tokens; the tiny model was trained on this site's pages"),
        Field("step", "Step", 0, kind="range", min=0, max=N_STEPS - 1, step=1, integer=True, stepper=True,
              help="0 is the tokens; the last step draws the next token"),
        Field("temperature", "Temperature", 1.0, kind="range", min=0, max=2, step=0.05,
              help="0 = greedy (the likeliest token)"),
        Field("top_k", "Top-k", 10, min=0, max=1024, integer=True, help="keep the k likeliest; 0 keeps all", unit="tokens"),
        Field("top_p", "Top-p", 0.9, kind="range", min=0.05, max=1, step=0.05,
              help="keep the likeliest whose probabilities add up to p"),
        Field("seed", "Seed", 0, min=0, max=1_000_000, integer=True, help="the random draw's seed"),
    ],
    outputs=[
        Output("caption", "This step", kind="caption", free_text=True),
        Output("picture", "The walk at this step (tap or point at a row for its numbers)", kind="chart", chart=PICTURE),
    ],
)
def token_walk_calc(prompt, step, temperature, top_k, top_p, seed):
    """Walk the prompt through the tiny model (chapter2.token_walk.walk) and show one step of it."""
    w = _walk(prompt, temperature, top_k, top_p, seed)
    model, _ = stepper.load()
    steps = walk_steps(model.config.num_hidden_layers, model.config.num_attention_heads)
    s = steps[min(step, len(steps) - 1)]
    caption, picture = DRAW[s.kind](w, s, model)
    return {"caption": caption[0].upper() + caption[1:], "picture": picture, "numbers": step_numbers(w, s, model)}


def step_numbers(w, s, model) -> dict:
    """The numbers a step's caption gives (calculators.NUMBERS), beside the walk's tokens and settings."""
    c = model.config
    out = {"step_kind": s.kind, "layer": s.layer or None, "head": s.head or None, "tokens": len(w.ids),
           "token_ids": [int(t) for t in w.ids], "token_texts": list(w.tokens), "vocabulary": c.vocab_size,
           "layers": c.num_hidden_layers, "query_heads": c.num_attention_heads, "kv_heads": c.num_key_value_heads,
           "hidden_size": int(w.trace.embeddings.shape[1]), "numbers_drawn": SHOWN_DIMS,
           "temperature": float(w.temperature), "top_k": w.top_k, "top_p": float(w.top_p), "seed": w.seed}
    last = len(w.ids) - 1
    if s.kind == "attention":
        a = w.trace.attention[s.layer - 1][0, s.head - 1]
        j = int(np.argmax(a[last]))
        out.update({"last_token_weights (%)": [100 * float(x) for x in a[last, :last + 1]],
                    "most_attended_token": j + 1, "most_attended_weight (%)": 100 * float(a[last, j])})
    elif s.kind == "mlp":
        out.update({"length_before": float(w.trace.residual_norms[2 * s.layer - 1][last]),
                    "length_after": float(w.trace.residual_norms[2 * s.layer][last])})
    elif s.kind == "logits":
        logits = w.trace.logits[-1]
        out.update({"logits_scored": len(logits), "tokens_with_a_chance": int(np.count_nonzero(w.probs)),
                    "top_token_ids": [c.token for c in w.top], "top_tokens": [c.text for c in w.top],
                    "top_logits": [float(logits[c.token]) for c in w.top],
                    "top_model_probabilities (%)": [100 * c.model_prob for c in w.top],
                    "top_sampled_probabilities (%)": [100 * c.prob for c in w.top]})
    elif s.kind == "sampled":
        out.update({"next_token_id": int(w.token), "next_token": w.token_text,
                    "next_token_probability (%)": 100 * float(w.probs[w.token])})
    return out


_WALKS: dict = {}  # the last few walks: moving the step slider only redraws


def _walk(prompt, temperature, top_k, top_p, seed) -> token_walk.Walk:
    if not prompt.strip():
        raise FieldError("prompt", "Prompt: enter some text (the walk needs at least one token)")
    key = (prompt, temperature, top_k, top_p, seed)
    if key not in _WALKS:
        model, tokenizer = stepper.load()
        n = len(tokenizer.encode(prompt))
        if n > MAX_TOKENS:
            raise FieldError("prompt", f"Prompt: {n} tokens, more than the {MAX_TOKENS} the picture shows; "
                                       f"shorten it")
        if len(_WALKS) >= 8:
            _WALKS.pop(next(iter(_WALKS)))
        _WALKS[key] = token_walk.walk(model, tokenizer, prompt, temperature=temperature, top_k=top_k, top_p=top_p,
                                      seed=seed)
    return _WALKS[key]


# -----------------------------------------------------------------------------
# words and numbers


def label(token_text: str) -> str:
    """A token as a row label: its text without the leading space the tokenizer keeps; '↵' for a line break,
    '␣' for a token of spaces only."""
    text = token_text.replace("\n", "↵").strip(" ")
    return text or "␣"


def quoted(token_text: str) -> str:
    """A token in a sentence: its label in quotes, cut to the heatmap's label length (a caption stays one line)."""
    text = label(token_text)
    return f"‘{text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + '…'}’"


def pct(p: float) -> str:
    """A probability as a percentage, two significant digits: 0.7213 -> '72 %', 0.0043 -> '0.43 %'."""
    return "0 %" if p == 0 else f"{sig(100 * p, 2)} %"


def _signed_cells(vectors: np.ndarray) -> list[list[float]]:
    """The first SHOWN_DIMS numbers of each row, scaled by the largest magnitude among them (-1 to 1)."""
    shown = vectors[:, :SHOWN_DIMS]
    top = float(np.abs(shown).max()) or 1.0
    return (shown / top).tolist()


def _vector_picture(w, vectors, norms, focus, keys, what: str) -> dict:
    """Rows: the tokens; columns: the first numbers of each token's vector (blue positive, orange negative)."""
    rows = [label(t) for t in w.tokens]
    details = [f"{quoted(t)}: {what} of {vectors.shape[1]} numbers, length {sig(float(n), 3)}; first four "
               + ", ".join(sig(float(x), 2) for x in v[:4]) for t, v, n in zip(w.tokens, vectors, norms, strict=True)]
    return heatmap(rows, [str(j + 1) for j in range(SHOWN_DIMS)], _signed_cells(vectors), details=details,
                   focus=focus, signed=True, keys=keys, x_label=VECTOR_X, y_label="token",
                   summary=f"The first {SHOWN_DIMS} of each vector's {vectors.shape[1]} numbers are drawn.")


# -----------------------------------------------------------------------------
# one drawing per kind of step: (caption, heatmap data)


def _tokens(w, s, model):
    ids = w.ids
    rows = [label(t) for t in w.tokens]
    details = [f"token {i + 1}: {quoted(t)}, id {tid}" for i, (t, tid) in enumerate(zip(w.tokens, ids, strict=True))]
    cells = [[ID_SHADE] for _ in ids]
    return (f"tokens: the prompt becomes {len(ids)} tokens, each a number (its id) in a vocabulary of "
            f"{model.config.vocab_size:,}.",
            heatmap(rows, [""], cells, texts=[[str(t)] for t in ids], details=details, focus=len(ids) - 1,
                    keys=("a token",), x_label="its id", y_label="token",
                    summary="Each row is one token of the prompt with its id."))


def _embedding(w, s, model):
    t = w.trace
    d = t.embeddings.shape[1]
    return (f"embedding: each id picks one row of a learned table, a vector of {d} numbers "
            f"({SHOWN_DIMS} drawn).",
            _vector_picture(w, t.embeddings, t.residual_norms[0], len(w.ids) - 1, ("positive", "negative"),
                            "embedding"))


def _attention(w, s, model):
    a = w.trace.attention[s.layer - 1][0, s.head - 1]  # (N, N): row i = query token i
    n, rows = a.shape[0], [label(t) for t in w.tokens]
    cells = [[float(a[i, j]) if j <= i else None for j in range(n)] for i in range(n)]
    details = []
    for i in range(n):
        order = sorted(range(i + 1), key=lambda j: (-a[i, j], j))[:3]
        details.append(f"{quoted(w.tokens[i])} attends to " + ", ".join(
            f"{quoted(w.tokens[j])} {pct(float(a[i, j]))}" for j in order))
    last = n - 1
    j = int(np.argmax(a[last]))
    h, h_kv = model.config.num_attention_heads, model.config.num_key_value_heads
    return (f"layer {s.layer}, head {s.head} of {h}: each row shows how much a token attends to each earlier "
            f"one. {quoted(w.tokens[last])} looks most at {quoted(w.tokens[j])} ({pct(float(a[last, j]))}).",
            heatmap(rows, [label(t) for t in w.tokens], cells, details=details, focus=last, keys=("attention weight",),
                    x_label="attends to (earlier tokens)", y_label="token",
                    summary=f"Layer {s.layer}, head {s.head}; it shares its keys and values with head "
                            f"{_partner(s.head, h, h_kv)}. Each row adds up to 100 %. Cells above the diagonal "
                            f"are empty: a token never sees a later one."))


def _partner(head: int, h_q: int, h_kv: int) -> str:
    group = h_q // h_kv
    first = (head - 1) // group * group + 1
    others = [str(k) for k in range(first, first + group) if k != head]
    return " and ".join(others)


def _mlp(w, s, model):
    t = w.trace
    before, after = t.residual_norms[2 * s.layer - 1], t.residual_norms[2 * s.layer]
    vectors = t.layer_output(s.layer - 1)
    last = len(w.ids) - 1
    return (f"layer {s.layer}, MLP: each token's vector goes through a small network on its own, and the "
            f"result is added to it ({quoted(w.tokens[last])}: length {sig(float(before[last]), 3)} to "
            f"{sig(float(after[last]), 3)}).",
            _vector_picture(w, vectors, after, last, ("positive", "negative"), f"after layer {s.layer},"))


def _hidden(w, s, model):
    t = w.trace
    last = len(w.ids) - 1
    return ("final hidden state: a last normalization rescales each vector; the last token's (outlined) "
            "predicts the next token.",
            _vector_picture(w, t.hidden, np.linalg.norm(t.hidden, axis=-1), last, ("positive", "negative"),
                            "final hidden state,"))


def _settings(w) -> str:
    k = "off" if w.top_k in (None, 0, -1) else str(w.top_k)
    return f"temperature {sig(w.temperature, 3)}, top-k {k}, top-p {sig(w.top_p, 3)}"


def _logits(w, s, model):
    top = w.top
    logits = w.trace.logits[-1]
    rows = [label(c.text) for c in top]
    cells = [[c.model_prob, c.prob] for c in top]
    texts = [[pct(c.model_prob), pct(c.prob)] for c in top]
    details = [f"{quoted(c.text)} (id {c.token}): logit {sig(float(logits[c.token]), 3)}, {pct(c.model_prob)} "
               f"from the model, {pct(c.prob)} after the settings" for c in top]
    kept = int(np.count_nonzero(w.probs))
    return (f"logits: a score for each of the {len(logits):,} tokens, made probabilities by softmax (left); "
            f"{_settings(w)} {'leave' if kept != 1 else 'leaves'} {kept:,} {'token' if kept == 1 else 'tokens'} "
            f"a chance (right).",
            heatmap(rows, ["model", "sampled"], cells, texts=texts, details=details, focus=0, keys=("probability",),
                    x_label="from the model, after the settings", y_label="next token",
                    summary=f"The ten likeliest next tokens; {_settings(w)}."))


def _sampled(w, s, model):
    rows = [label(t) for t in w.tokens] + [label(w.token_text)]
    ids = [*w.ids, w.token]
    details = [f"token {i + 1}: {quoted(t)}, id {tid}" for i, (t, tid) in enumerate(zip(w.tokens, w.ids, strict=True))]
    details.append(f"appended: {quoted(w.token_text)}, id {w.token}, drawn with probability {pct(float(w.probs[w.token]))}")
    return (f"the next token: {quoted(w.token_text)} is drawn (seed {w.seed}) and appended; a decode step "
            f"walks it through the model next.",
            heatmap(rows, [""], [[ID_SHADE] for _ in ids[:-1]] + [[1.0]], texts=[[str(t)] for t in ids],
                    details=details, focus=len(ids) - 1, marks=[len(ids) - 1], keys=("a token",), x_label="its id",
                    y_label="token", summary="The prompt's tokens, then the drawn one."))


DRAW = {"tokens": _tokens, "embedding": _embedding, "attention": _attention, "mlp": _mlp, "hidden": _hidden,
        "logits": _logits, "sampled": _sampled}
