"""Facts of section 2.4 Bottlenecks (docs/bottlenecks.md).

The hardware numbers come from the GPU catalog (`data/gpus.json`, through
`chapter2.hardware`); the LLM worked example is Llama 3.1 8B in FP16 on one
H100 SXM (`chapter2.roofline` over its shipped config.json); attention is the
book's one-head example, N = 4096, d = 128, FP16; the image worked example is
one denoiser pass of each costed diffusion transformer (`chapter2.diffusion`).

Bytes follow the chapter's one convention, stated on the page (#byte-convention) and defined in
`chapter2.roofline`: weights read once, KV cache read or written once, activations (each block's input
and output hidden states, and the output) read or written once per pass.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .. import communication, diffusion, efficiency, hardware, measurements, roofline
from .._checks import DTYPE_BYTES
from ..format import SI, Bytes, Int, Num, Pct, Table, Text, Times
from ..models import load_config
from . import Card, Leaf, fact
from .notation import operands, step_name

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
TABLE_DTYPES = ("fp16", "fp8", "fp4")  # the dtypes of the catalog table (FP4: Blackwell and CDNA 4 only)

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


# -- the tiny example that opens 2.4.1: one FP16 weight, used once (decode) or once per prompt token (prefill)

FLOPS_PER_MULTIPLY_ADD = 2  # a multiply and an add
TINY_PROMPT_TOKENS = 1024  # the roofline chart's default context (2**10): its prefill point


def _tiny_intensity(uses: int) -> float:
    """Operations per byte of one FP16 weight read once and used in `uses` multiply-adds (the weights alone)."""
    return FLOPS_PER_MULTIPLY_ADD * uses / DTYPE_BYTES["fp16"]


@fact
def tiny_decode_ops() -> Int:
    """Operations one decode step (one sequence) does with each weight: one multiply and one add."""
    return Int(FLOPS_PER_MULTIPLY_ADD)


@fact
def tiny_decode_intensity() -> Num:
    """Those 2 operations over the weight's 2 FP16 bytes: 1 operation per byte."""
    return Num(_tiny_intensity(1))


@fact
def tiny_prompt_tokens() -> Int:
    """The prompt of the tiny prefill example: the roofline chart's default context, 1,024 tokens."""
    return Int(TINY_PROMPT_TOKENS)


@fact
def tiny_prefill_ops() -> Int:
    """Operations a prefill of 1,024 tokens does with each weight it reads: a multiply-add per token."""
    return Int(FLOPS_PER_MULTIPLY_ADD * TINY_PROMPT_TOKENS)


@fact
def tiny_prefill_intensity() -> Int:
    """Those 2,048 operations over the weight's 2 FP16 bytes: 1,024 operations per byte."""
    return Int(round(_tiny_intensity(TINY_PROMPT_TOKENS)))


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


def _source_label(url: str) -> str:
    """A short name for a source: a whitepaper says so (NVIDIA writes "whitepaper", AMD "white-paper"), another PDF
    is a datasheet, NVIDIA's and AMD's technical blogs say so, a vendor's other page is a product page, anything
    else is named by its site."""
    if "whitepaper" in url or "white-paper" in url:
        return "whitepaper"
    if url.endswith(".pdf"):
        return "datasheet (PDF)"
    host = urlsplit(url).netloc
    if host == "developer.nvidia.com":
        return "NVIDIA blog"
    if host == "rocm.blogs.amd.com":
        return "AMD blog"
    if host.endswith(("nvidia.com", "amd.com")):
        return "product page"
    return host  # a third-party page (or a paper, a repository): named by its site


def _sources(g: hardware.GPU) -> Text:
    """Links to the documents a GPU's memory, bandwidth and dense peaks were read from, each once."""
    urls = dict.fromkeys(url for key, url in g.sources.items() if not key.startswith("sparse_"))
    return Text(", ".join(f"[{_source_label(u)}]({u})" for u in urls))


@fact
def gpu_ops_per_byte_table() -> Table:
    """Every catalog GPU: memory, bandwidth, dense TFLOP/s and ops:byte in FP16, FP8 and FP4 (n/a where the GPU's
    tensor cores lack the format), and links to the vendor documents the figures were read from.

    Figures from `data/gpus.json` (each with its source URL); ratios = dense peak FLOP/s / bandwidth.
    """
    header = ["GPU", "Memory (GB)", "Bandwidth (TB/s)"]
    for d in TABLE_DTYPES:
        header += [f"Dense {d.upper()} TFLOP/s", f"{d.upper()} ops:byte"]
    header.append("Sources")
    rows = []
    for g in hardware.GPUS.values():
        cells: list = [Text(g.name), _datasheet(g.memory_gb), _datasheet(g.bandwidth_tb_s)]
        for d in TABLE_DTYPES:
            if d in g.dense_flops:
                cells += [_datasheet(g.tflops(d)), _ops_per_byte(g.ops_per_byte(d))]
            else:
                cells += [Text("n/a"), Text("n/a")]
        cells.append(_sources(g))
        rows.append(tuple(cells))
    return Table(tuple(header), tuple(rows), align="l" + "r" * (len(header) - 2) + "l")


@fact
def b200_bandwidth_tb_s() -> Num:
    """B200 HBM3e bandwidth per GPU in the catalog: 7.7 TB/s, the HGX B200 column of NVIDIA's Blackwell datasheet,
    the same document as its memory and FLOP/s (gpus.json)."""
    return _datasheet(_gpu("B200").bandwidth_tb_s)


@fact
def b200_dgx_bandwidth_tb_s() -> Num:
    """What NVIDIA's DGX B200 page implies per GPU, 64 TB/s over 8 GPUs = 8 TB/s (gpus.json `other_figures`: not
    the catalog's figure, but the one the bounds of runs measured on a DGX B200 use, measurements.json `system`)."""
    return _datasheet(_gpu("B200").other_figures["bandwidth_tb_s"][0])


@fact
def b200_dgx_ops_per_byte() -> Num:
    """The B200's FP16 ops:byte if the DGX page's 8 TB/s were paired with the datasheet's 2,250 dense TFLOP/s."""
    g = _gpu("B200")
    return _ops_per_byte(g.peak_flops("fp16") / (g.other_figures["bandwidth_tb_s"][0] * hardware.TERA))


@fact
def b200_ops_per_byte() -> Num:
    """The B200's FP16 ops:byte in the catalog: 2,250 dense TFLOP/s over 7.7 TB/s, both from the one datasheet."""
    return _ops_per_byte(_gpu("B200").ops_per_byte("fp16"))


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


# -- the byte convention, on Llama 3.1 8B's weights


def _llama_params():
    return load_config(LLM).params()


@fact
def llama_8b_embedding_bytes() -> SI:
    """The input embedding table of Llama 3.1 8B in FP16 (vocab x hidden x 2 bytes): held in memory, but a
    pass reads only the rows of its tokens."""
    return Bytes(_llama_params().embedding * DTYPE_BYTES["fp16"])


# -- prefill and decode of the worked example


def _prefill(logits: str = "last", prompt: int = PROMPT_TOKENS) -> roofline.PhaseEstimate:
    return roofline.prefill(LLM, prompt, gpu=GPU, dtype="fp16", logits=logits)


def _decode(batch: int = 1) -> roofline.PhaseEstimate:
    return roofline.decode(LLM, CONTEXT, batch=batch, gpu=GPU, dtype="fp16")


def _intensity(e: roofline.PhaseEstimate) -> Num:
    return Num(e.intensity)


def _milliseconds(seconds: float) -> Num:
    return Num(seconds * 1e3, 3, "ms")


@fact
def llama_8b_phase_table() -> Table:
    """Llama 3.1 8B on one H100 in FP16: prefill of a 4,096-token prompt (logits for the last position only),
    and one decode step at a 4,096-token context for batch 1 and batch 64. FLOPs, bytes (weights + KV cache +
    activations), intensity, bound and lower-bound time (`roofline`). The row labels are short: the page states
    the prompt and the context just above the table."""
    phases = (
        ("Prefill (TTFT)", _prefill()),
        ("Decode, batch 1 (TPOT)", _decode()),
        (f"Decode, batch {BIG_BATCH}", _decode(BIG_BATCH)),
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
def llama_8b_prefill_activation_share() -> Pct:
    """Share of the 4,096-token prefill's bytes that are activations: every block's input and output hidden
    states (2 x 32 x 4,096 x 4,096 numbers) and the last position's logits, 2 bytes each."""
    e = _prefill()
    return Pct(e.activation_bytes / e.bytes)


@fact
def llama_8b_all_logits_extra_flops() -> SI:
    """FLOPs the 4,096-token prefill would add if it computed logits at every position (scoring a prompt)
    instead of the last one only: 4,095 more LM-head products of 2 x vocab x hidden."""
    return SI(_prefill("all").flops - _prefill().flops, "FLOP")


@fact
def llama_8b_all_logits_extra_share() -> Pct:
    """The same extra FLOPs as a share of the last-position prefill's FLOPs."""
    return Pct(_prefill("all").flops / _prefill().flops - 1)


@fact
def llama_8b_all_logits_extra_bytes() -> SI:
    """Bytes of logits a prefill that scores all 4,096 positions writes beyond the last position's: 4,095 x vocab
    x 2 bytes (activations in the byte convention)."""
    return Bytes(_prefill("all").activation_bytes - _prefill().activation_bytes)


@fact
def llama_8b_prefill_crossover_tokens() -> Int:
    """Shortest prompt whose Llama 3.1 8B prefill is compute bound on an H100 in FP16 (intensity ≥ 295.3), one
    prompt per pass, logits for the last position (`roofline.prefill_critical_tokens`)."""
    return Int(roofline.prefill_critical_tokens(LLM, gpu=GPU, dtype="fp16"))


@fact
def llama_8b_weight_read_ms() -> Num:
    """Time to read Llama 3.1 8B's FP16 weights once at 3.35 TB/s: the floor under any prefill or decode step."""
    return _milliseconds(_decode().weight_bytes / _gpu().bandwidth)


@fact
def llama_8b_decode_intensity() -> Num:
    """Ops per byte of one Llama 3.1 8B decode step, batch 1, context 4,096, FP16: about 1."""
    return _intensity(_decode())


@fact
def llama_8b_decode_tokens_per_s() -> Num:
    """Upper bound on one sequence's decode speed on an H100 at a 4,096-token context: 1 / lower-bound time per step."""
    return Num(1 / _decode().time)


@fact
def llama_8b_decode_bytes() -> SI:
    """Bytes one Llama 3.1 8B decode step moves (batch 1, 4,096-token context, FP16): weights + KV cache +
    activations."""
    return Bytes(_decode().bytes)


@fact
def llama_8b_decode_kv_bytes() -> SI:
    """KV cache bytes of one sequence at a 4,096-token context in FP16: 4,096 x 131,072 bytes."""
    return Bytes(_decode().kv_bytes)


@fact
def llama_8b_decode_activation_bytes() -> SI:
    """Activation bytes of one decode step for one sequence: 2 x 32 blocks x 4,096 hidden + 128,256 logits, 2 bytes
    each."""
    return Bytes(_decode().activation_bytes)


@fact
def llama_8b_decode_parts_table() -> Table:
    """One Llama 3.1 8B decode step at a 4,096-token context in FP16, by part (`PhaseEstimate.parts`): FLOPs and
    bytes of batch 1, each part's share of the FLOPs (the same at any batch) and of the bytes at batch 1 and 64.
    Activations do no counted FLOPs (norms, softmax and activation functions are left out of every FLOP count)."""
    one, big = _decode(), _decode(BIG_BATCH)
    names = {"weights": "Weights (matmuls)", "KV cache": "KV cache (attention)", "activations": "Activations"}
    rows = []
    for p1, pb in zip(one.parts, big.parts, strict=True):
        flops = (SI(p1.flops, "FLOP"), Pct(p1.flops / one.flops)) if p1.flops else (Text("not counted"), Text("–"))
        rows.append((Text(names[p1.name]), *flops, Bytes(p1.bytes), Pct(p1.bytes / one.bytes),
                     Pct(pb.bytes / big.bytes)))
    rows.append((Text("**Total**"), SI(one.flops, "FLOP"), Pct(1.0), Bytes(one.bytes), Pct(1.0), Pct(1.0)))
    return Table(("Part", "FLOPs, batch 1", "Share of FLOPs (any batch)", "Bytes, batch 1", "Share of bytes, batch 1",
                  f"Share of bytes, batch {BIG_BATCH}"), tuple(rows), align="lrrrrr")


@fact
def llama_8b_decode_attention_flop_share() -> Pct:
    """Attention's share (its products over the KV cache) of a Llama 3.1 8B decode step's FLOPs, 4,096-token
    context: the same at any batch."""
    return Pct(_decode().attention_flop_share)


@fact
def llama_8b_decode_attention_byte_share() -> Pct:
    """Attention's share (the KV cache) of the bytes of a batch-1 Llama 3.1 8B decode step at 4,096 tokens."""
    return Pct(_decode().attention_byte_share)


@fact
def llama_8b_decode_attention_byte_share_batched() -> Pct:
    """Attention's share of the bytes of a Llama 3.1 8B decode step for 64 sequences of 4,096 tokens."""
    return Pct(_decode(BIG_BATCH).attention_byte_share)


@fact
def big_batch() -> Int:
    """The batch of the worked example's batched decode step."""
    return Int(BIG_BATCH)


@fact
def decode_context() -> Int:
    """The context length of every decode step of the worked example (and the calculators' default)."""
    return Int(CONTEXT)


def _attention() -> roofline.AttentionCost:
    return roofline.attention_intensity(ATTENTION_N, ATTENTION_D, "fp16")


@fact
def attention_steps_table() -> Table:
    """Standard attention for one head, N = 4096, d = 128, FP16, step by step: what each step reads and
    writes, the elements and bytes it moves and the operations it does, with a total row
    (`roofline.attention_intensity` steps; the softmax output written A, the chapter's notation)."""
    cost = _attention()
    rows = [
        (Text(step_name(s.name)), Text(operands(s.reads)), Text(operands(s.writes)),
         Text(f"{s.elements_formula} = {s.read_elements + s.write_elements:,}"),
         Int(s.bytes), Text(f"{s.ops_formula} = {s.ops:,}"))
        for s in cost.steps
    ]
    rows.append((Text("**Total**"), Text(""), Text(""), Text(""), Text(f"**{Int(cost.bytes)}**"),
                 Text(f"**{Int(cost.ops)}**")))
    return Table(("Step", "Reads", "Writes", "Elements moved", "Bytes", "Operations"), tuple(rows), align="lllrrr")


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
def llama_8b_decode_step_ridge_crossing() -> Text:
    """Whether and where a whole Llama 3.1 8B decode step (KV cache and activations included) at a 4,096-token context
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
    """Qwen-Image's denoiser parameters (20.4B, from its config) as a fraction of Qwen3-235B-A22B's total (one
    significant digit)."""
    return Num(diffusion.MODELS["Qwen-Image"].denoiser_params / load_config(MOE_LLM).params().total, 1)


@fact
def qwen_image_over_qwen3_235b_active_params() -> Num:
    """Qwen-Image's denoiser parameters (all of them run in every pass) as a fraction of the parameters
    Qwen3-235B-A22B runs per token (its active 22.2B, from its config); two significant digits."""
    return Num(diffusion.MODELS["Qwen-Image"].denoiser_params / load_config(MOE_LLM).params().active, 2)


@fact
def denoiser_pass_table() -> Table:
    """One denoiser pass of each costed diffusion transformer at its default size, BF16 on an H100:
    latent tokens, FLOPs, attention's share of them, bytes (weights + activations, the byte convention) and the
    activations' share of them, intensity and bound (`diffusion.denoiser_pass`)."""
    rows = []
    for name in IMAGE_MODELS:
        p = diffusion.denoiser_pass(name)
        rows.append((Text(name), Int(p.tokens), SI(p.flops, "FLOP"), Pct(p.attention_share), Bytes(p.bytes),
                     Pct(p.activation_bytes / p.bytes), Num(p.intensity), Text(roofline.bound(p.intensity, GPU, "bf16"))))
    return Table(("Model", "Latent tokens", "FLOPs per pass", "Attention share of FLOPs", "Bytes per pass",
                  "Activations share of bytes", "Intensity", "Bound"), tuple(rows), align="lrrrrrrl")


@fact
def qwen_image_pass_intensity() -> Num:
    """Ops per byte of one Qwen-Image denoiser pass (BF16, 1328 x 1328, exact FLOPs from its config): about 2,900."""
    return Num(diffusion.denoiser_pass("Qwen-Image").intensity)


@fact
def denoiser_min_intensity_over_ridge() -> Num:
    """The lowest denoiser-pass intensity of the table over the H100's BF16 ops:byte (two significant digits)."""
    lowest = min(diffusion.denoiser_pass(n).intensity for n in IMAGE_MODELS)
    return Num(lowest / _gpu().ops_per_byte("bf16"), 2)


# ------------------------------------------------------------------ bounds meet measurements


def _setup(m: measurements.Measurement) -> str:
    """A measurement's setup in a few words: GPUs (and the link between them), formats (weights/math/KV), batch or
    lengths."""
    gpus = f"{m.n_gpus} × {m.gpu} on {hardware.interconnect(m.gpu).link.short}" if m.n_gpus > 1 else m.gpu
    if m.system is not None:  # the system's own figures, which the bound used instead of the catalog's
        g = measurements.gpu_of(m)
        gpus += f" ({m.system.name}: {g.bandwidth_tb_s:g} TB/s, {g.memory_gb:g} GB)"
    formats = f"{m.weight_dtype}/{m.dtype}/{m.kv_dtype}".upper()
    shape = []
    if m.batch:
        shape.append(f"batch {m.batch}")
    if m.input_tokens and m.output_tokens:
        shape.append(f"{m.input_tokens:,} in, {m.output_tokens:,} out")
    return ", ".join([gpus, formats, *shape])


def _row_name(m: measurements.Measurement) -> str:
    """The model a row measured, and the config it was costed with where that is another of the same shapes."""
    return f"{m.measured_model} (costed as {m.model})" if m.measured_model else m.model


@fact
def measurement_count() -> Int:
    """Published measurements on the page (data/measurements.json)."""
    return Int(len(measurements.compare()))


@fact
def measurements_table() -> Table:
    """Every published measurement beside its roofline bound (`chapter2.measurements.compare`): the model, the
    setup (GPUs and their link; weight/math/KV formats; batch or input/output lengths), the engine, what was
    measured, the bound in the same unit (communication between GPUs included), measured / bound, the same ratio
    against the bound without communication (multi-GPU rows only), MFU and MBU (the fractions of peak FLOP/s and
    bandwidth of all its GPUs that its speed implies), what the bound leaves out (if the row beats it), and the
    source."""
    rows = []
    for c in measurements.compare():
        m = c.measurement
        without = Num(c.ratio_without_communication, 2) if m.n_gpus > 1 else Text("–")
        name = _row_name(m)
        rows.append((Text(name), Text(_setup(m)), Text(m.engine), Text(m.unit), _datasheet(m.value), Num(c.bound),
                     Num(c.ratio, 2), without, _share(c.mfu), _share(c.mbu), Text(m.trick or ""),
                     Text(f"[{urlsplit(m.url).netloc}]({m.url}), {m.date}")))
    return Table(("Model", "Setup (GPUs, weights/math/KV, shape)", "Engine", "Unit", "Measured", "Bound",
                  "Measured ÷ bound", "÷ bound without communication", "MFU", "MBU", "Not in the bound", "Source"),
                 tuple(rows), align="lllrrrrrrrll")


def _share(x: float | None):
    """MFU or MBU as the table prints it: a percentage, or a dash where the row gives no count of its work."""
    return Text("–") if x is None else Pct(x)


def _ratio(row_id: str) -> float:
    return next(c.ratio for c in measurements.compare() if c.measurement.id == row_id)


@fact
def gpt_fast_7b_ratio() -> Num:
    """gpt-fast decoding Llama 2 7B (BF16, batch 1) on one A100: measured tokens/s over the roofline's."""
    return Num(_ratio("gpt-fast-7b-bf16"), 2)


def _comparison(row_id: str) -> measurements.Comparison:
    return next(c for c in measurements.compare() if c.measurement.id == row_id)


@fact
def gpt_fast_7b_tp8_ratio() -> Num:
    """The same model split over eight A100s (tensor parallel): measured over the bound, its all-reduces included."""
    return Num(_ratio("gpt-fast-7b-tp8"), 2)


@fact
def gpt_fast_7b_tp8_ratio_without_communication() -> Num:
    """The same row against the bound that lets the eight GPUs talk for free: eight GPUs' bandwidth over the weights."""
    return Num(_comparison("gpt-fast-7b-tp8").ratio_without_communication, 2)


def _gpt_fast_tp8_decode() -> roofline.PhaseEstimate:
    """One decode step of the gpt-fast row's setup: Llama 2 7B, BF16, batch 1, on eight A100s."""
    m = next(c.measurement for c in measurements.compare() if c.measurement.id == "gpt-fast-7b-tp8")
    return roofline.decode(measurements.model(m.model), m.input_tokens + 1, gpu=m.gpu, dtype=m.dtype, n_gpus=m.n_gpus)


@fact
def gpt_fast_7b_tp8_all_reduces() -> Int:
    """All-reduces in each decode step of Llama 2 7B split over eight GPUs: 2 in each of its 32 layers."""
    return Int(_gpt_fast_tp8_decode().communication.collectives[0].count)


@fact
def gpt_fast_7b_tp8_all_reduce_us() -> Num:
    """Microseconds one of those all-reduces takes at least: a ring of 8 A100s on NVLink 3, 14 steps of NCCL's
    0.6 us and 7/4 of the 8,192-byte hidden state at 300 GB/s each way."""
    return Num(_gpt_fast_tp8_decode().communication.collectives[0].seconds * 1e6, 3, "µs")


def _multi_gpu() -> list[measurements.Comparison]:
    """The multi-GPU rows that name no trick: what communication can explain the gap of."""
    return [c for c in measurements.compare() if c.measurement.n_gpus > 1 and c.measurement.trick is None]


@fact
def multi_gpu_row_count() -> Int:
    """Published measurements on several GPUs that name no trick the bound leaves out."""
    return Int(len(_multi_gpu()))


def _shares() -> list[float]:
    return sorted(c.communication_share for c in _multi_gpu())


@fact
def communication_gap_share_median() -> Pct:
    """The median, over the multi-GPU rows, of the part of the time between the bound without communication and
    the measurement that the communication term accounts for (`Comparison.communication_share`)."""
    shares = _shares()
    mid = len(shares) // 2
    return Pct(shares[mid] if len(shares) % 2 else (shares[mid - 1] + shares[mid]) / 2)


@fact
def communication_gap_share_max() -> Pct:
    """The largest such share among the multi-GPU rows (Llama 2 7B on eight A100s, batch 1)."""
    return Pct(_shares()[-1])


def _link_source_label(url: str) -> str:
    """A short name for a link's or a run's source: a GitHub issue as repo#number, a README, NVIDIA's blog and
    docs as such, else as `_source_label` names it."""
    host, path = urlsplit(url).netloc, urlsplit(url).path.strip("/").split("/")
    if host == "github.com" and len(path) >= 4 and path[2] in ("issues", "pull"):
        return f"{path[1]}#{path[3]}"
    if host == "github.com" and path[-1].lower() == "readme.md":
        return f"{path[1]} README"
    if host == "developer.nvidia.com":
        return "NVIDIA blog"
    if host == "docs.nvidia.com":
        return "NVIDIA docs"
    return _source_label(url)


@fact
def links_table() -> Table:
    """The links between GPUs in the catalog (`hardware.LINKS`, data/links.json): each way's bandwidth per GPU
    (half the vendor's both-ways figure, an InfiniBand rate over 8), how GPUs share it, NCCL's latency per step,
    whether the switches reduce, the catalog GPUs that use it (with their domain), and its source."""
    users: dict[str, list[str]] = {}
    for key, ic in hardware.INTERCONNECTS.items():
        users.setdefault(ic.link.key, []).append(f"{key} ({ic.domain})")
        users.setdefault(ic.scale_out.key, [])
    how = {"switch": "switch", "mesh": "a link per peer", "network": "a NIC per GPU"}
    rows = []
    for link in hardware.LINKS.values():
        rows.append((Text(link.short), Num(link.bandwidth / 1e9, 4), Text(how[link.topology]),
                     Num(link.hop_latency * 1e6, 2), Text("yes" if link.in_switch_reduction else "no"),
                     Text(", ".join(users.get(link.key, [])) or "between domains"),
                     Text(f"[{_link_source_label(link.sources['bandwidth'])}]({link.sources['bandwidth']})")))
    return Table(("Link", "Each way, per GPU (GB/s)", "Shared through", "Latency per step (µs)", "Switch adds",
                  "Catalog GPUs (GPUs per domain)", "Source"), tuple(rows), align="lrlrlll")


@fact
def nccl_check_table() -> Table:
    """Collectives measured and published (`communication.PUBLISHED_RUNS`): the bus bandwidth printed, the rate each
    way of the link the traffic crossed, and their ratio (a ring stays below 1; NVLink SHARP's in-switch sums pass
    it, since nccl-tests' bus bandwidth assumes the GPUs add), and the source."""
    rows = tuple((Text(r.what), Text(r.collective.replace("_", "-")), Num(r.busbw, 3), Num(r.link.bandwidth / 1e9, 4),
                  Num(r.share_of_link, 2), Text(f"[{_link_source_label(r.source)}]({r.source})"))
                 for r in communication.PUBLISHED_RUNS)
    return Table(("Run", "Collective", "Bus bandwidth (GB/s)", "Link each way (GB/s)", "Bus ÷ link", "Source"), rows,
                 align="llrrrl")


@fact
def hgx_domain_gpus() -> Int:
    """GPUs one NVLink domain joins on an HGX board (the H100's, data/links.json: eight, with four NVSwitches)."""
    return Int(hardware.INTERCONNECTS["H100-SXM"].domain)


@fact
def nvl72_domain_gpus() -> Int:
    """GPUs one NVLink domain joins in a GB200 NVL72 rack (data/links.json: 72)."""
    return Int(hardware.INTERCONNECTS["GB200"].domain)


@fact
def h100_ring_share_of_nvlink() -> Pct:
    """NCCL's ring all-reduce on 8 H100s: its published bus bandwidth (370 GB/s) over NVLink 4's 450 GB/s each way."""
    return Pct(next(r for r in communication.PUBLISHED_RUNS if r.id == "h100-ring").share_of_link)


@fact
def flashmla_bandwidth_ratio() -> Num:
    """FlashMLA's 3000 GB/s over the H800's 3.35 TB/s: a decode-attention kernel near the memory roof."""
    return Num(_ratio("flashmla-memory-bound"), 2)


@fact
def serving_ratio_range() -> Text:
    """The lowest and highest measured / bound among the engines' serving-throughput rows (output_tokens_per_s)."""
    ratios = [c.ratio for c in measurements.compare() if c.measurement.metric == "output_tokens_per_s"]
    return Text(f"{Num(min(ratios), 2)} to {Num(max(ratios), 2)}")


@fact
def medusa_405b_ratio() -> Num:
    """Medusa-decoded Llama 3.1 405B on eight H200s: measured over the batch-1 bound without speculation (above 1)."""
    return Num(_ratio("medusa-405b-h200"), 3)


# ------------------------------------------------------------------ from a bound to an expected range


@fact
def loo_median_error() -> Pct:
    """The median error of predicting each measurement from the others: its bound x the median efficiency of the
    other rows of its setup (`efficiency.leave_one_out`)."""
    return Pct(efficiency.loo_errors()[0])


@fact
def loo_worst_error() -> Pct:
    """The worst error of the same leave-one-out predictions."""
    return Pct(efficiency.loo_errors()[1])


@fact
def loo_median_error_without_communication() -> Pct:
    """The same check's median error with the bound that lets GPUs talk for free (efficiencies refitted to it)."""
    return Pct(efficiency.loo_errors(communication=False)[0])


@fact
def loo_worst_error_without_communication() -> Pct:
    """The same check's worst error with the bound that lets GPUs talk for free."""
    return Pct(efficiency.loo_errors(communication=False)[1])


@fact
def loo_row_count() -> Int:
    """Measurement rows the leave-one-out check predicts (every row without a trick, but a prefill server's)."""
    return Int(len(efficiency.leave_one_out()))


@fact
def efficiency_table() -> Table:
    """The efficiency (measured / bound) that published runs of each setup reached: how many runs, their range
    (what the calculators' expected ranges divide by) and their median (what the leave-one-out check predicts with)."""
    rows = []
    for setup in efficiency.SETUPS:
        e = efficiency.fit(setup)
        shares = f"{Pct(e.low)} to {Pct(e.high)}" if e.count > 1 else str(Pct(e.low))
        rows.append((Text(setup), Int(e.count), Text(shares), Pct(e.median)))
    return Table(("Setup", "Runs", "Measured ÷ bound", "Median"), tuple(rows), align="lrrr")


@fact
def loo_table() -> Table:
    """Each measurement predicted from the others (`efficiency.leave_one_out`): measured, predicted and the error,
    worst first."""
    by_id = {c.measurement.id: c.measurement for c in measurements.compare()}
    rows = []
    for p in sorted(efficiency.leave_one_out(), key=lambda p: -p.error):
        m = by_id[p.id]
        name = _row_name(m)
        rows.append((Text(name), Text(_setup(m)), Text(f"{_datasheet(p.measured)} {m.unit}"),
                     Text(f"{Num(p.predicted)} {m.unit}"), Pct(p.error)))
    return Table(("Model", "Setup", "Measured", "Predicted", "Error"), tuple(rows), align="llrrr")


LEAVES = (
    Leaf("Ops:byte of the GPU vs arithmetic intensity", "241-opsbyte-and-arithmetic-intensity",
         idea="arithmetic intensity"),
    Leaf("Prefill is compute bound (from about {{ fact: bottlenecks.llama_8b_prefill_crossover_tokens }} tokens "
         "on an H100) and sets the time to first token", "242-llm-bottlenecks", idea="prefill"),
    Leaf("Decode is memory bound and sets tokens per second: count its bytes", "242-llm-bottlenecks",
         idea="decode"),
    Leaf("Image and video passes are compute bound, like prefill", "243-image-bottlenecks"),
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
         sequence at a 4,096-token context does {{ fact: bottlenecks.llama_8b_decode_intensity }} per step, so
         an H100 decodes it at no more than about {{ fact: bottlenecks.llama_8b_decode_tokens_per_s }} tokens per
         second."""),
    Card("bn-prefill-crossover", "242-llm-bottlenecks",
         "Is every prefill compute bound?",
         """No: only once the tokens processed together pass roughly the GPU's ops:byte ratio. Llama 3.1 8B's
         prefill on an H100 in FP16 crosses the ridge at a prompt of about
         {{ fact: bottlenecks.llama_8b_prefill_crossover_tokens }} tokens; a shorter one is memory bound and
         takes about the {{ fact: bottlenecks.llama_8b_weight_read_ms }} it takes to read the weights."""),
    Card("bn-decode-shares", "242-llm-bottlenecks",
         "How much of a decode step is attention?",
         """It depends on what you count. For Llama 3.1 8B at a 4,096-token context attention is
         {{ fact: bottlenecks.llama_8b_decode_attention_flop_share }} of the FLOPs but only
         {{ fact: bottlenecks.llama_8b_decode_attention_byte_share }} of the bytes for one sequence. Decode is
         memory bound, so the bytes set the time; with {{ fact: bottlenecks.big_batch }} sequences the KV cache
         is {{ fact: bottlenecks.llama_8b_decode_attention_byte_share_batched }} of them."""),
    Card("bn-attention-62", "242-llm-bottlenecks",
         "What is the arithmetic intensity of standard attention at N = 4096, d = 128 in FP16?",
         """`4N²d + 3N²` operations over `8N² + 8Nd` bytes: {{ fact: bottlenecks.attention_intensity }}
         operations per byte, far below the H100's {{ fact: bottlenecks.h100_ops_per_byte }}, so it is memory
         bound. The `N²` score matrix written to memory and read back is why."""),
    Card("bn-batching", "242-llm-bottlenecks",
         "What does batching do to decode, and what can it not fix?",
         """A batch of B reads the weights once for all B sequences, so the weight matmuls' intensity grows
         with B: Llama 3.1 8B's cross the H100 ridge at a batch of about
         {{ fact: bottlenecks.llama_8b_weights_critical_batch }}. Each sequence still reads its own KV cache,
         so attention's intensity stays near {{ fact: llm_architecture.llama_8b_attention_intensity }}, unless
         queries share cached entries (a shared prefix, speculative verification, MLA's absorbed form)."""),
    Card("bn-image", "243-image-bottlenecks",
         "Are image and video models compute bound or memory bound?",
         """Compute bound, like prefill: every denoiser pass runs all weights over thousands of latent tokens.
         A Qwen-Image pass does {{ fact: bottlenecks.qwen_image_pass_intensity }} operations per byte in
         BF16."""),
)
