"""The chapter's notation: one symbol, one meaning, as data (shown on docs/chapter-map.md#notation).

Pages write these symbols in their equations and prose; `tests/test_teaching.py` checks that no
symbol has two meanings and that the pages of sections 2.1 and 2.3 to 2.5 use only symbols of this
table. A symbol whose `scope` names one section is local to it (the matmul shape letters `k` and `n`
of section 2.1); every other symbol means the same thing on every page.

Two letters that the usual papers use differently are renamed here, and the pages say so where they
first appear: the softmax output of attention is `A` (attention weights), not `P`, since `P` counts
parameters; FlashAttention's running row maximum and sum are `μ_i` and `ℓ_i` (the paper's and the
kernels' `m_i` and `l_i`), since `m` counts tokens. A Mamba layer's own parameters keep the paper's
letters in bold (`𝐀`, `𝐁_t`, `𝐂_t`, `𝐃`), apart from the attention weights `A`, the batch `B` and the
hidden size `D`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..format import Table, Text
from . import fact

CHAPTER = "chapter"
"""`Symbol.scope` of a symbol that means the same on every page."""


@dataclass(frozen=True)
class Symbol:
    """One symbol of the chapter: its TeX (inline math), what it means, and where it is used."""

    tex: str
    meaning: str
    used_in: str
    scope: str = CHAPTER  # CHAPTER, or the one section ("2.1") where the symbol is local


SYMBOLS: tuple[Symbol, ...] = (
    # sizes of a model and of the work
    Symbol("N", "sequence length: tokens of the prompt or context (for a denoiser, its latent tokens)", "2.2–2.5"),
    Symbol("B", "batch: sequences processed together", "2.2, 2.4, 2.5"),
    Symbol("m", "tokens a matmul processes together, the rows of its input: \\(N\\) in prefill, \\(B\\) in decode",
           "2.1, 2.4"),
    Symbol("k", "a matmul's inner width: \\(x\\) is \\(m \\times k\\), \\(W\\) is \\(n \\times k\\)", "2.1", "2.1"),
    Symbol("n", "a matmul's output width", "2.1", "2.1"),
    Symbol("L", "layers (transformer blocks)", "2.2–2.5"),
    Symbol("D", "hidden size (`hidden_size`, d_model): the width of the hidden state", "2.2–2.4"),
    Symbol("d", "head dimension (`head_dim`)", "2.2, 2.4, 2.5"),
    Symbol("H_q", "query heads per layer", "2.2, 2.5"),
    Symbol("H_\\text{kv}", "key/value heads per layer", "2.2, 2.5"),
    Symbol("G", "query heads per key/value head, \\(H_q / H_\\text{kv}\\) (grouped-query attention)", "2.2, 2.4, 2.5"),
    Symbol("P", "parameters (a count)", "2.4"),
    Symbol("b", "bytes per number: 2 in FP16 or BF16, 1 in FP8", "2.2, 2.4, 2.5"),
    Symbol("E", "experts per mixture-of-experts layer", "2.2"),
    Symbol("E_\\text{tok}", "experts each token is routed to (`num_experts_per_tok`, the router's top-k)", "2.2"),
    Symbol("w", "sliding window: the keys each query sees, itself included", "2.2, 2.5"),
    Symbol("T", "sampling temperature", "2.2"),
    Symbol("\\gamma", "tokens drafted per step of speculative decoding (Leviathan et al., arXiv 2211.17192)",
           "2.2, 2.4, 2.5"),
    Symbol("N_\\text{GPU}", "GPUs a model is split over (tensor, expert or pipeline parallelism)", "2.4"),
    Symbol("M", "bytes each GPU holds in a collective (all-reduce, all-to-all) or sends to the next", "2.4"),
    Symbol("R", "a link's bandwidth between two GPUs, bytes per second each way", "2.4"),
    Symbol("\\alpha", "a link's latency per step of a collective", "2.4"),
    # attention
    Symbol("Q, K, V", "queries, keys and values of one head: \\(N \\times d\\) each", "2.2, 2.4, 2.5"),
    Symbol("S", "attention scores \\(QK^\\top\\), scaled by \\(1/\\sqrt{d}\\)", "2.2, 2.4, 2.5"),
    Symbol("A", "attention weights \\(\\operatorname{softmax}(S)\\): each row sums to 1", "2.2, 2.4, 2.5"),
    Symbol("O", "attention output \\(AV\\)", "2.2, 2.4, 2.5"),
    Symbol("i, j", "a query's and a key's position", "2.2, 2.5"),
    Symbol("\\mu_i, \\ell_i", "FlashAttention's running row maximum and row sum (`m_i`, `l_i` in the paper and "
           "the kernels)", "2.5"),
    # layers and activations
    Symbol("x, W, c, y", "a linear layer's input, weight, bias and output: \\(y = xW^\\top + c\\) (\\(x\\) is "
           "also an activation function's argument)", "2.1"),
    Symbol("d_\\text{ff}", "the feed-forward (MLP) inner width (`intermediate_size`)", "2.1, 2.2"),
    Symbol("\\sigma", "the logistic sigmoid \\(1/(1 + e^{-x})\\)", "2.1"),
    Symbol("\\Phi", "the standard normal CDF (in GELU)", "2.1"),
    Symbol("\\beta", "Swish's slope parameter", "2.1"),
    Symbol("\\varepsilon", "the noise mixed into a latent", "2.3"),
    # state-space layers
    Symbol("h_t", "a state-space layer's state after token \\(t\\)", "2.5"),
    Symbol("t", "a token's position in a state-space scan", "2.5"),
    Symbol("\\Delta_t", "a Mamba layer's step size for token \\(t\\)", "2.5"),
    Symbol("\\mathbf{A}, \\mathbf{B}_t, \\mathbf{C}_t, \\mathbf{D}",
           "a Mamba layer's state matrix (negative, so the state decays), write vector, read vector and skip "
           "weight: the Mamba paper's letters, in bold",
           "2.5"),
)
"""The chapter's symbols, in the order the table shows them."""


def symbols(tex: str) -> list[str]:
    """The separate symbols of one table entry: "Q, K, V" -> ["Q", "K", "V"]."""
    if not isinstance(tex, str):
        raise TypeError(f"tex must be a str such as 'Q, K, V', got {type(tex).__name__}")
    return [part.strip() for part in tex.split(", ")]


def meaning_of(symbol: str) -> Symbol:
    """The table row that defines `symbol` (TeX, e.g. "H_q"); KeyError if the chapter does not define it."""
    for row in SYMBOLS:
        if symbol in symbols(row.tex):
            return row
    raise KeyError(f"the chapter's notation has no symbol {symbol!r}")


# What the attention steps of `chapter2.roofline` are called in this notation: the roofline's step names and
# their read/write columns still call the softmax output P (the papers' letter); P is parameters here.
_STEP_WORDS = {
    "S = Q K^T": "S = QKᵀ",
    "P = softmax(S)": "A = softmax(S)",
    "O = P V": "O = AV",
    "S = Q K^T (on chip)": "S = QKᵀ (on chip)",
    "P = softmax(S) (on chip)": "A = softmax(S) (on chip)",
    "O = P V (on chip)": "O = AV (on chip)",
    "read Q, K, V": "read Q, K, V",
    "write O": "write O",
}
_OPERAND_WORDS = {"P": "A", "P, V": "A, V"}


def step_name(name: str) -> str:
    """An attention step's name (`roofline.AttentionStep.name`) in the chapter's notation.

    Raises KeyError for a step this table does not know, so that a renamed step in the roofline
    fails the page's tests instead of showing a stale letter.
    """
    if not isinstance(name, str) or name not in _STEP_WORDS:
        raise KeyError(f"name must be an attention step ({', '.join(_STEP_WORDS)}), got {name!r}")
    return _STEP_WORDS[name]


def operands(text: str) -> str:
    """A step's "reads" or "writes" column in the chapter's notation ("P, V" -> "A, V")."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str such as 'P, V', got {type(text).__name__}")
    return _OPERAND_WORDS.get(text, text)


def _cell(tex: str) -> str:
    return ", ".join(f"\\({s}\\)" for s in symbols(tex))


@fact
def symbol_table() -> Table:
    """The chapter's notation (`SYMBOLS`): each symbol with its one meaning and the sections that use it; a
    symbol local to one section says so."""
    rows = []
    for row in SYMBOLS:
        where = row.used_in if row.scope == CHAPTER else f"{row.used_in} only"
        rows.append((Text(_cell(row.tex)), Text(row.meaning), Text(where)))
    return Table(("Symbol", "Meaning", "Sections"), tuple(rows), align="lll")
