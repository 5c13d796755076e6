"""Facts of section 2.4 Bottlenecks (docs/bottlenecks.md).

The hardware numbers come from the GPU catalog (`data/gpus.json`, through
`chapter2.hardware`); the LLM worked example is Llama 3.1 8B in FP16 on one
H100 SXM (`chapter2.roofline` over its shipped config.json); attention is the
book's one-head example, N = 4096, d = 128, FP16; the image worked example is
one denoiser pass of each costed diffusion transformer (`chapter2.diffusion`).
"""

from __future__ import annotations

from .. import diffusion, hardware, roofline
from .._checks import DTYPE_BYTES
from ..format import SI, Bytes, Int, Num, Pct, Table, Text, Times
from ..models import load_config
from . import Card, Leaf, fact

PAGE = "bottlenecks.md"
TITLE = "2.4 Bottlenecks"

GPU = "H100-SXM"               # the page's reference GPU
LLM = "Llama-3.1-8B"           # the LLM worked example (section 2.4.2)
MOE_LLM = "Qwen3-235B-A22B"    # the mixture-of-experts comparison
PROMPT_TOKENS = 4096           # prefill prompt length of the worked example
CONTEXT = 4096                 # decode context of the worked example
BIG_BATCH = 64                 # the batched decode step of the worked example
ATTENTION_N, ATTENTION_D = 4096, 128  # the book's standard-attention example
IMAGE_MODELS = ("FLUX.1-dev", "Qwen-Image", "Wan2.1-T2V-1.3B", "Wan2.1-T2V-14B")
TABLE_DTYPES = ("fp16", "fp8")  # the dtypes of the catalog table

DATASHEET_DIGITS = 6
"""Enough significant digits to print a datasheet figure as published (989.4, 362.05, 2.039); `sig`
drops trailing zeros, so a round figure stays round (80, 3.35)."""


def _gpu(key: str = GPU) -> hardware.GPU:
    return hardware.GPUS[key]


def _datasheet(value: float) -> Num:
    """A catalog figure (TFLOP/s, TB/s, GB) as its datasheet prints it."""
    return Num(value, DATASHEET_DIGITS)


def _ops_per_byte(value: float) -> Num:
    """An ops:byte ratio: three significant digits, whole numbers for every catalog GPU (153, 295, 848)."""
    return Num(value, 3)


# ------------------------------------------------------------------ 2.4.1 ops:byte


@fact
def h100_fp16_tflops() -> Num:
    """H100 SXM dense FP16 tensor throughput in TFLOP/s (gpus.json, Hopper whitepaper: 989.4)."""
    return _datasheet(_gpu().tflops("fp16"))


@fact
def h100_bandwidth_tb_s() -> Num:
    """H100 SXM HBM bandwidth in TB/s (gpus.json, nvidia.com H100 page: 3.35)."""
    return _datasheet(_gpu().bandwidth_tb_s)


@fact
def h100_ops_per_byte() -> Num:
    """H100 SXM FP16 ops:byte ratio, dense peak FLOP/s over bandwidth: the chapter's 295."""
    return _ops_per_byte(_gpu().ops_per_byte("fp16"))


@fact
def h100_ops_per_byte_one_decimal() -> Num:
    """The same ratio to four significant digits (295.3), as the calculator prints it, before rounding to 295."""
    return Num(_gpu().ops_per_byte("fp16"), 4)


@fact
def gpu_ops_per_byte_table() -> Table:
    """Every catalog GPU: memory, bandwidth, and dense TFLOP/s and ops:byte in FP16 and FP8 (n/a without FP8).

    Figures from `data/gpus.json` (each with its datasheet URL); ratios = dense peak FLOP/s / bandwidth.
    """
    header = ["GPU", "Memory (GB)", "Bandwidth (TB/s)"]
    for d in TABLE_DTYPES:
        header += [f"Dense {d.upper()} TFLOP/s", f"{d.upper()} ops:byte"]
    rows = []
    for g in hardware.GPUS.values():
        cells: list = [Text(g.name), _datasheet(g.memory_gb), _datasheet(g.bandwidth_tb_s)]
        for d in TABLE_DTYPES:
            if d in g.dense_flops:
                cells += [_datasheet(g.tflops(d)), _ops_per_byte(g.ops_per_byte(d))]
            else:
                cells += [Text("n/a"), Text("n/a")]
        rows.append(tuple(cells))
    return Table(tuple(header), tuple(rows))


@fact
def h100_fp16_sparse_tflops() -> Num:
    """The FP16 figure the H100 product page headlines: 2:4 structured sparsity, 1,979 TFLOP/s (gpus.json)."""
    return _datasheet(_gpu().sparse_flops["fp16"] / hardware.TERA)


@fact
def h100_sparse_over_dense() -> Times:
    """How many times the dense FP16 peak the sparse headline is (2:4 sparsity doubles it): 2×."""
    g = _gpu()
    return Times(g.sparse_flops["fp16"] / g.peak_flops("fp16"))


@fact
def h200_bandwidth_tb_s() -> Num:
    """H200 SXM HBM3e bandwidth in TB/s (gpus.json, nvidia.com H200 page: 4.8)."""
    return _datasheet(_gpu("H200-SXM").bandwidth_tb_s)


@fact
def h200_ops_per_byte() -> Num:
    """H200 SXM FP16 ops:byte: the H100's compute over more bandwidth, so a lower ratio (206)."""
    return _ops_per_byte(_gpu("H200-SXM").ops_per_byte("fp16"))


@fact
def h100_fp8_over_fp16_ops_per_byte() -> Num:
    """How many times larger the H100's FP8 ops:byte is than its FP16 one (same bandwidth, 2× the FLOP/s)."""
    g = _gpu()
    return Num(g.ops_per_byte("fp8") / g.ops_per_byte("fp16"))


@fact
def h100_fp8_ops_per_byte() -> Num:
    """H100 SXM FP8 ops:byte ratio: dense FP8 peak (1,978.9 TFLOP/s) over 3.35 TB/s."""
    return _ops_per_byte(_gpu().ops_per_byte("fp8"))


# ------------------------------------------------------------------ 2.4.2 LLM bottlenecks


@fact
def fp16_bytes() -> Int:
    """Bytes per FP16 element (`chapter2._checks.DTYPE_BYTES`): `b` in intensity ≈ 2·m ÷ b."""
    return Int(DTYPE_BYTES["fp16"])


@fact
def llama_8b_matvec_intensity() -> Num:
    """Ops per byte of one token times a hidden x hidden FP16 weight of Llama 3.1 8B: about 1."""
    h = load_config(LLM).hidden_size
    return Num(roofline.matvec_intensity(h, h, "fp16"))


def _prefill() -> roofline.PhaseEstimate:
    return roofline.prefill(LLM, PROMPT_TOKENS, gpu=GPU, dtype="fp16")


def _decode(batch: int = 1) -> roofline.PhaseEstimate:
    return roofline.decode(LLM, CONTEXT, batch=batch, gpu=GPU, dtype="fp16")


def _intensity(e: roofline.PhaseEstimate) -> Num:
    return Num(e.intensity)


def _milliseconds(seconds: float) -> Num:
    return Num(seconds * 1e3, 3, "ms")


@fact
def llama_8b_phase_table() -> Table:
    """Llama 3.1 8B on one H100 in FP16: prefill of 4,096 tokens, and one decode step at a 4,096-token
    context for batch 1 and batch 64. FLOPs, bytes, intensity, bound and lower-bound time (`roofline`)."""
    phases = (
        (f"Prefill, {PROMPT_TOKENS:,} tokens (TTFT)", _prefill()),
        (f"Decode step, batch {_decode().batch} (TPOT)", _decode()),
        (f"Decode step, batch {BIG_BATCH}", _decode(BIG_BATCH)),
    )
    rows = tuple((Text(name), SI(e.flops, "FLOP"), Bytes(e.bytes), _intensity(e), Text(e.bound), _milliseconds(e.time))
                 for name, e in phases)
    return Table(("Phase", "FLOPs", "Bytes moved", "Intensity (ops/byte)", "Bound", "Lower-bound time"), rows,
                 align="lrrrlr")


@fact
def llama_8b_prefill_intensity() -> Num:
    """Ops per byte of Llama 3.1 8B's 4,096-token prefill in FP16 (the phase table's first row)."""
    return _intensity(_prefill())


@fact
def llama_8b_decode_intensity() -> Num:
    """Ops per byte of one Llama 3.1 8B decode step, batch 1, context 4,096, FP16: about 1."""
    return _intensity(_decode())


@fact
def llama_8b_decode_tokens_per_s() -> Num:
    """Upper bound on one sequence's decode speed on an H100: 1 / lower-bound time per step."""
    return Num(1 / _decode().time)


@fact
def llama_8b_decode_bytes() -> SI:
    """Bytes one Llama 3.1 8B decode step reads and writes (weights + 4,096-token KV cache), FP16."""
    return Bytes(_decode().bytes)


def _attention() -> roofline.AttentionCost:
    return roofline.attention_intensity(ATTENTION_N, ATTENTION_D, "fp16")


@fact
def attention_steps_table() -> Table:
    """Standard attention for one head, N = 4096, d = 128, FP16, step by step: what each step reads and
    writes, the elements and bytes it moves and the operations it does, with a total row
    (`roofline.attention_intensity` steps)."""
    cost = _attention()
    rows = [
        (Text(s.name), Text(s.reads), Text(s.writes),
         Text(f"{s.elements_formula} = {s.read_elements + s.write_elements:,}"),
         Int(s.bytes), Text(f"{s.ops_formula} = {s.ops:,}"))
        for s in cost.steps
    ]
    rows.append((Text("**Total**"), Text(""), Text(""), Text(""), Text(f"**{Int(cost.bytes)}**"),
                 Text(f"**{Int(cost.ops)}**")))
    return Table(("Step", "Reads", "Writes", "Elements moved", "Bytes", "Operations"), tuple(rows), align="lllrrr")


@fact
def attention_dtype_bytes() -> Int:
    """Bytes per element in the attention example (FP16)."""
    return Int(_attention().dtype_bytes)


@fact
def attention_intensity() -> Num:
    """Standard attention's ops per byte at N = 4096, d = 128, FP16: (4N²d + 3N²) / (8N² + 8Nd), about 62."""
    return Num(_attention().intensity)


@fact
def flash_attention_intensity() -> Num:
    """FlashAttention's ideal ops per byte at the same shape: (4N²d + 3N²) / 8Nd = 2,060."""
    return Num(roofline.flash_attention_intensity(ATTENTION_N, ATTENTION_D, "fp16").intensity)


@fact
def llama_8b_weights_critical_batch() -> Int:
    """Smallest decode batch at which Llama 3.1 8B's weight matmuls turn compute bound on an H100 (FP16).

    The weights' intensity does not depend on the context, so this is the same at any context length.
    """
    return Int(roofline.decode_critical_batch(LLM, CONTEXT, gpu=GPU, dtype="fp16", part="weights"))


@fact
def llama_8b_decode_attention_intensity() -> Num:
    """Attention's ops per byte in a Llama 3.1 8B decode step (batch 64, context 4,096): its GQA group, 4."""
    return Num(_decode(BIG_BATCH).attention_intensity)


@fact
def llama_8b_gqa_group() -> Int:
    """Query heads per K/V head in Llama 3.1 8B (config.json: num_attention_heads / num_key_value_heads)."""
    return Int(load_config(LLM).gqa_group)


@fact
def llama_8b_decode_step_ridge_crossing() -> Text:
    """Whether and where a whole Llama 3.1 8B decode step (KV reads included) at a 4,096-token context
    crosses the H100's ridge as the batch grows (`roofline.decode_critical_batch`, part "step")."""
    batch = roofline.decode_critical_batch(LLM, CONTEXT, gpu=GPU, dtype="fp16")
    return Text("never crosses the ridge" if batch is None else f"crosses the ridge only at a batch of {batch:,}")


@fact
def qwen3_235b_weights_critical_batch() -> Int:
    """Smallest decode batch at which Qwen3-235B-A22B's weight matmuls turn compute bound on an H100 (FP16):
    a bigger batch touches more experts, so the bytes grow with it. Like the dense model's, it does not
    depend on the context."""
    return Int(roofline.decode_critical_batch(MOE_LLM, CONTEXT, gpu=GPU, dtype="fp16", part="weights"))


# ------------------------------------------------------------------ 2.4.3 image bottlenecks


@fact
def qwen_image_over_qwen3_235b_params() -> Num:
    """Qwen-Image's denoiser parameters (20B) as a fraction of Qwen3-235B-A22B's total (one significant digit)."""
    return Num(diffusion.MODELS["Qwen-Image"].denoiser_params / load_config(MOE_LLM).params().total, 1)


@fact
def denoiser_pass_table() -> Table:
    """One denoiser pass of each costed diffusion transformer at its default size, BF16 on an H100:
    latent tokens, FLOPs, attention's share of them, intensity and bound (`diffusion.denoiser_pass`)."""
    rows = []
    for name in IMAGE_MODELS:
        p = diffusion.denoiser_pass(name)
        rows.append((Text(name), Int(p.tokens), SI(p.flops, "FLOP"), Pct(p.attention_share), Num(p.intensity),
                     Text(roofline.bound(p.intensity, GPU, "bf16"))))
    return Table(("Model", "Latent tokens", "FLOPs per pass", "Attention share", "Intensity", "Bound"), tuple(rows),
                 align="lrrrrl")


@fact
def qwen_image_pass_intensity() -> Num:
    """Ops per byte of one Qwen-Image denoiser pass (BF16, 1328 x 1328): its latent token count."""
    return Num(diffusion.denoiser_pass("Qwen-Image").intensity)


@fact
def denoiser_min_intensity_over_ridge() -> Num:
    """The lowest denoiser-pass intensity of the table over the H100's BF16 ops:byte (two significant digits)."""
    lowest = min(diffusion.denoiser_pass(n).intensity for n in IMAGE_MODELS)
    return Num(lowest / _gpu().ops_per_byte("bf16"), 2)


LEAVES = (
    Leaf("Ops:byte of the GPU vs arithmetic intensity", "241-opsbyte-and-arithmetic-intensity"),
    Leaf("Prefill is compute bound, decode memory bound", "242-llm-bottlenecks"),
)

CARDS = (
    Card("bn-ops-byte", "241-opsbyte-and-arithmetic-intensity",
         "What is an H100's ops:byte ratio in FP16, and how is it computed?",
         """Peak compute over memory bandwidth: {{ fact: bottlenecks.h100_fp16_tflops }} TFLOP/s ÷
         {{ fact: bottlenecks.h100_bandwidth_tb_s }} TB/s ≈ {{ fact: bottlenecks.h100_ops_per_byte }}
         operations per byte. Work with a lower arithmetic intensity is memory bound, higher is compute bound."""),
    Card("bn-prefill-decode", "242-llm-bottlenecks",
         "Which phase of LLM inference is compute bound and which memory bound?",
         """Prefill is compute bound: Llama 3.1 8B on a 4,096-token prompt does
         {{ fact: bottlenecks.llama_8b_prefill_intensity }} operations per byte. Decode is memory bound: one
         token at a time does {{ fact: bottlenecks.llama_8b_decode_intensity }}, so an H100 decodes one
         sequence at no more than {{ fact: bottlenecks.llama_8b_decode_tokens_per_s }} tokens per second."""),
    Card("bn-attention-62", "242-llm-bottlenecks",
         "What is the arithmetic intensity of standard attention at N = 4096, d = 128 in FP16?",
         """`4N²d + 3N²` operations over `8N² + 8Nd` bytes: {{ fact: bottlenecks.attention_intensity }}
         operations per byte, far below the H100's {{ fact: bottlenecks.h100_ops_per_byte }}, so it is memory
         bound. The `N²` score matrix written to memory and read back is why."""),
    Card("bn-batching", "242-llm-bottlenecks",
         "What does batching do to decode, and what can it not fix?",
         """A batch of B reads the weights once for all B sequences, so the weight matmuls' intensity grows
         with B: Llama 3.1 8B's cross the H100 ridge at a batch of
         {{ fact: bottlenecks.llama_8b_weights_critical_batch }}. Each sequence still reads its own KV cache,
         so attention's intensity stays near {{ fact: bottlenecks.llama_8b_decode_attention_intensity }}."""),
    Card("bn-image", "243-image-bottlenecks",
         "Are image and video models compute bound or memory bound?",
         """Compute bound, like prefill: every denoiser pass runs all weights over thousands of latent tokens.
         A Qwen-Image pass does {{ fact: bottlenecks.qwen_image_pass_intensity }} operations per byte in
         BF16."""),
)
