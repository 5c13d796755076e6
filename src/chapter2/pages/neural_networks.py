"""Facts of section 2.1, "Neural networks" (docs/neural-networks.md).

The page opens on a drawn matmul (the figure `matmul_picture`): `chapter2.linear.matmul_example`, three tokens
of four numbers through a layer with two outputs. The worked example is the query projection of Llama 3.1 8B:
`n` = query heads x head dimension, `k` = hidden size, both from its shipped config.json.
"""

from __future__ import annotations


from .. import activations, linear
from ..format import Int, Num, SI, Bytes, Table, Text
from ..models import load_config
from . import Card, Leaf, fact

PAGE = "neural-networks.md"
TITLE = "2.1 Neural networks"

PREFILL_TOKENS = 4096  # the prompt length of the worked example
TOKEN_COUNTS = (1, 16, 256, PREFILL_TOKENS)


def _q_proj(tokens: int) -> linear.MatmulCost:
    """Cost of Llama 3.1 8B's query projection for `tokens` tokens in FP16."""
    c = load_config("Llama-3.1-8B")
    return linear.matmul_cost(tokens, c.hidden_size, c.num_attention_heads * c.head_dim, "fp16")


def _drawn() -> linear.MatmulCost:
    """The cost of the drawn matmul, (m, k) = (3, 4) times (k, n) = (4, 2), from its arrays' shapes."""
    x, weight, _ = linear.matmul_example()
    return linear.matmul_cost(x.shape[0], x.shape[1], weight.shape[0])


@fact
def example_m() -> Int:
    """Rows of x in the drawn matmul: tokens."""
    return Int(_drawn().m)


@fact
def example_k() -> Int:
    """Numbers per token in the drawn matmul, the length of each dot product: k."""
    return Int(_drawn().k)


@fact
def example_n() -> Int:
    """Outputs per token in the drawn matmul: columns of W^T, n."""
    return Int(_drawn().n)


@fact
def example_cells() -> Int:
    """Cells of the drawn matmul's result y: m x n dot products."""
    return Int(_drawn().m * _drawn().n)


@fact
def example_ops() -> Int:
    """Operations of the drawn matmul: 2 m k n (a multiply and an add per term of every dot product)."""
    return Int(_drawn().ops)


@fact
def llama_8b_hidden_size() -> Int:
    """Llama 3.1 8B's hidden size (config.json `hidden_size`)."""
    return Int(load_config("Llama-3.1-8B").hidden_size)


@fact
def deepseek_v3_hidden_size() -> Int:
    """DeepSeek-V3's hidden size (config.json `hidden_size`)."""
    return Int(load_config("DeepSeek-V3").hidden_size)


@fact
def q_proj_shape() -> Text:
    """The query projection's weight shape, n x k: (query heads x head_dim) x hidden size."""
    c = load_config("Llama-3.1-8B")
    return Text(f"{c.num_attention_heads * c.head_dim:,} × {c.hidden_size:,}")


@fact
def q_proj_cost_table() -> Table:
    """Operations, bytes and intensity of the query projection for 1 to 4,096 tokens (FP16)."""
    rows = []
    for m in TOKEN_COUNTS:
        x = _q_proj(m)
        rows.append((Int(m), SI(x.ops, "FLOP"), Bytes(x.bytes), Num(x.intensity)))
    return Table(("tokens `m`", "operations", "bytes moved", "intensity (ops/byte)"), tuple(rows), align="rrrr")


@fact
def q_proj_decode_intensity() -> Num:
    """Intensity (ops/byte) of the query projection for one token: about 1, all weight loading."""
    return Num(_q_proj(1).intensity, 2)


@fact
def q_proj_prefill_intensity() -> Num:
    """Intensity (ops/byte) of the query projection over a 4,096-token prompt in FP16, counting its input, weight
    and output: 2mkn / 2(mk + kn + mn) = 4096 / 3 (the table's last row; section 2.4 quotes it)."""
    return Num(_q_proj(PREFILL_TOKENS).intensity)


@fact
def prefill_tokens() -> Int:
    """The worked example's prompt length in tokens."""
    return Int(PREFILL_TOKENS)


ACTIVATION_EXAMPLE_X = (-2.0, -0.5, 0.5, 2.0)  # the inputs of the activations' worked example


@fact
def activation_examples_table() -> Table:
    """ReLU, SiLU and GELU at a few inputs: ReLU clips negatives to 0, the smooth ones let a little through."""
    rows = tuple((Num(x), Num(float(activations.relu(x)), 3), Num(float(activations.silu(x)), 3),
                  Num(float(activations.gelu(x)), 3)) for x in ACTIVATION_EXAMPLE_X)
    return Table(("x", "ReLU(x)", "SiLU(x)", "GELU(x)"), rows, align="rrrr")


def _silu_minimum() -> tuple[float, float]:
    """(x, silu(x)) at SiLU's minimum: the root of its slope (`activations.minimum`)."""
    return activations.minimum(activations.silu, activations.silu_slope)


def _gelu_minimum() -> tuple[float, float]:
    """(x, gelu(x)) at GELU's (exact erf form) minimum: the root of its slope (`activations.minimum`)."""
    return activations.minimum(activations.gelu, activations.gelu_slope)


@fact
def silu_min_value() -> Num:
    """SiLU's minimum value (about -0.2785), where the smooth activation bottoms out."""
    return Num(_silu_minimum()[1], 4)


@fact
def silu_min_x() -> Num:
    """Where SiLU has its minimum (x about -1.278)."""
    return Num(_silu_minimum()[0], 4)


@fact
def gelu_min_value() -> Text:
    """GELU's minimum value, four decimals (about -0.1700; trailing zero kept, so it reads as precise as SiLU's)."""
    return Text(f"{_gelu_minimum()[1]:.4f}")


@fact
def gelu_min_x() -> Num:
    """Where GELU has its minimum (x about -0.752)."""
    return Num(_gelu_minimum()[0], 3)


@fact
def sigmoid_of_most_negative() -> Num:
    """`activations.sigmoid(-1e308)`: 0 exactly, no overflow warning (evaluated through e^-|x|)."""
    return Num(float(activations.sigmoid(-1e308)))


@fact
def q_proj_decode_ops() -> SI:
    """Operations of the query projection for one token: 2·k·n FLOP."""
    return SI(_q_proj(1).ops, "FLOP")


LEAVES = (
    Leaf("Layers are matmuls: 2·m·k·n operations; one token uses each weight once",
         "211-linear-layers-and-matmul", idea="arithmetic intensity"),
    Leaf("Activations keep stacked layers from collapsing", "212-activation-functions"),
)

CARDS = (
    Card("nn-matmul-ops", "211-linear-layers-and-matmul",
         "How many floating-point operations does a linear layer cost for an (m, k) input and a (k, n) weight?",
         """`2·m·k·n`: each of the `m·n` outputs is a dot product of length `k`, one multiply and one add
         per term. One token through Llama 3.1 8B's {{ fact: neural_networks.q_proj_shape }} query
         projection is {{ fact: neural_networks.q_proj_decode_ops }}."""),
    Card("nn-decode-intensity", "211-linear-layers-and-matmul",
         "Why is a matmul for a single token mostly weight loading?",
         """With `m = 1` each weight is read to be used once: the FP16 query projection does about
         {{ fact: neural_networks.q_proj_decode_intensity }} operation per byte. A
         {{ fact: neural_networks.prefill_tokens }}-token prompt reuses each weight for every token and
         does {{ fact: neural_networks.q_proj_prefill_intensity }} operations per byte."""),
    Card("nn-collapse", "212-activation-functions",
         "Why must a nonlinear activation sit between two linear layers?",
         """Two linear layers compose into one: `W₂(W₁x + c₁) + c₂ = (W₂W₁)x + (W₂c₁ + c₂)` (bias `c`), so a stack
         without a nonlinearity is a single linear map. ReLU, SiLU or GELU between them breaks the
         collapse."""),
    Card("nn-silu", "212-activation-functions",
         "What does SiLU do with negative inputs that ReLU does not?",
         """ReLU clips every negative input to 0; SiLU, `x·σ(x)`, lets a little through, bottoming out
         at {{ fact: neural_networks.silu_min_value }}, and has a slope everywhere. Llama and Qwen use it
         inside the SwiGLU gate."""),
)
