"""Facts of section 2.5, "Optimizing attention" (docs/attention.md).

The page's worked examples: Llama 3.1 8B's decode step, FLOPs and bytes (its
shipped config.json through `roofline.decode`), one head of standard attention against FlashAttention at
N = 4,096, d = 128 in FP16 (the chapter's example from section 2.4.2), the tile
schedules drawn by the `flash_schedule` figure, Mistral 7B's sliding window,
the layer mix of NVIDIA Nemotron 3 Nano (`ssm.HYBRID_PRESETS`), and the
committed benchmark results (`chapter2/data/bench`).
"""

from __future__ import annotations

import math
from urllib.parse import urlsplit

from .. import attention, bench_results, hardware, roofline, ssm
from ..format import SI, Bytes, Int, Num, Pct, Table, Text, Times
from ..models import load_config
from . import Card, Leaf, fact
from .bottlenecks import ATTENTION_D, ATTENTION_N
from .notation import operands, step_name

PAGE = "attention.md"
TITLE = "2.5 Optimizing attention"

LLAMA = "Llama-3.1-8B"
MISTRAL = "Mistral-7B-v0.1"
NEMOTRON = "nemotron-3-nano"  # key of ssm.HYBRID_PRESETS


FLASH_N, FLASH_D = ATTENTION_N, ATTENTION_D  # one head, FP16: the chapter's worked example, at home in section 2.4.2

# The two panels of the `flash_schedule` figure (chapter2.host.figures.attention draws the same cases).
TILE = 128  # block_q = block_k
CAUSAL_TILES_N = 1024
WINDOW_TILES_N, WINDOW_TILES_W = 2048, 256

PAIR_SHARE_N, PAIR_SHARE_W = 4096, 1024  # the small-window example of the equation (and the recall card)
WINDOW_TABLE_N = (4096, 16384, 32768, 131072, 1048576)  # prompt lengths of the sliding-window table
WINDOW_SHORT_N = 4096  # the short prompt the worked example's text picks out (the window's own size); the long
# one is the position limit of Mistral 7B v0.1's config, `max_position_embeddings` (`_mistral_long_prompt`), not
# the 8,192 tokens it was trained at

HYBRID_CONTEXTS = (4096, 131072, 1048576)  # rows of the hybrid table
HYBRID_SHORT_N, HYBRID_LONG_N = 4096, 1048576  # the lengths the text picks out


# --------------------------------------------------------------------------- introduction


@fact
def prefill_work_doubling_factor() -> Num:
    """How many times more (query, key) pairs causal attention scores when the prompt doubles (4,096 to 8,192)."""
    return Num(attention.attended_pairs(8192, causal=True) / attention.attended_pairs(4096, causal=True), 2)


@fact
def decode_kv_read_doubling_factor() -> Times:
    """How many times more KV cache a Llama 3.1 8B decode step reads at 8,192 tokens than at 4,096."""
    c = load_config(LLAMA)
    return Times(c.kv_cache_bytes(8192) / c.kv_cache_bytes(4096))


def _llama_attention_share(context: int) -> float:
    c = load_config(LLAMA)
    return c.attention_flops_per_token(context) / c.flops_per_token(context)


@fact
def llama_8b_decode_attention_share_at_max_context() -> Pct:
    """Attention's share of a Llama 3.1 8B decode step's FLOPs at its full context (`max_position_embeddings`)."""
    return Pct(_llama_attention_share(load_config(LLAMA).max_position_embeddings))


def _llama_decode(context: int, batch: int = 1) -> roofline.PhaseEstimate:
    """One Llama 3.1 8B decode step in FP16/BF16 (2 bytes per weight and per cached number) on the roofline."""
    return roofline.decode(LLAMA, context, batch=batch, gpu="H100-SXM", dtype="fp16")


def _llama_attention_byte_share(context: int, batch: int = 1) -> float:
    step = _llama_decode(context, batch)
    return step.kv_bytes / step.bytes


@fact
def llama_8b_decode_attention_byte_share_at_max_context() -> Pct:
    """Attention's share of the bytes of a batch-1 Llama 3.1 8B decode step at its full 131,072-token context."""
    return Pct(_llama_attention_byte_share(load_config(LLAMA).max_position_embeddings))


@fact
def llama_8b_decode_programs_unsplit() -> Int:
    """Programs a batch-1 Llama 3.1 8B decode step would launch per layer with one per (sequence, KV head), the
    grid of `host.kernels.flash_decode` before it splits the cache: batch x num_key_value_heads."""
    return Int(1 * load_config(LLAMA).num_key_value_heads)


# --------------------------------------------------------------------------- the memory hierarchy

H100 = "H100-SXM"
A100 = "A100-SXM"
KIB, MIB = hardware.KIB, hardware.MIB


def _binary(nbytes: float) -> Num:
    """An on-chip size in the binary units vendors mean by KB and MB: KiB below 1 MiB, MiB above (3 digits)."""
    if nbytes < MIB:
        return Num(nbytes / KIB, 3, "KiB")
    return Num(nbytes / MIB, 3, "MiB")


_NOT_PUBLISHED = "–"


def _on_chip_source_label(url: str) -> str:
    """A short name for an on-chip figure's source."""
    if "arxiv.org/abs/2407.08608" in url:
        return "FlashAttention-3 paper"
    if "arxiv.org" in url:
        return "FlashAttention paper"
    if "rocm.docs.amd.com" in url:
        return "ROCm specs"
    if "tuning-guide" in url:
        return "tuning guide"
    if "programming-guide" in url:
        return "CUDA guide"
    if "whitepaper" in url or "architecture-whitepaper" in url:
        return "whitepaper"
    return urlsplit(url).netloc  # a third-party page: named by its site, never passed off as a vendor document


@fact
def memory_hierarchy_table() -> Table:
    """Every catalog GPU's memory hierarchy: SMs (AMD: compute units), the most shared memory per SM (AMD: LDS
    per CU) and all SMs together, the L2 cache (and MI300X's L3), HBM capacity and bandwidth, and on-chip SRAM
    bandwidth where a source estimates it, by catalog key; "–" where the catalog's documents publish no figure (gpus.json
    `on_chip.not_published` says why). Their sources: `memory_hierarchy_sources`."""
    rows = []
    for g in hardware.GPUS.values():
        chip = g.on_chip
        amd = g.vendor == "AMD"
        sms = _NOT_PUBLISHED if chip.sms is None else f"{Int(chip.sms)}" + (" CUs" if amd else "")
        per_sm = _NOT_PUBLISHED if chip.shared_memory_per_sm is None else \
            f"{_binary(chip.shared_memory_per_sm)}" + (" (LDS)" if amd else "")
        total = chip.shared_memory_total
        l2 = _NOT_PUBLISHED if chip.l2_bytes is None else str(_binary(chip.l2_bytes))
        if chip.l3_bytes is not None:
            l2 += f" (+ {_binary(chip.l3_bytes)} L3)"
        sram = _NOT_PUBLISHED if chip.sram_bandwidth is None else f"≈ {Num(chip.sram_bandwidth / hardware.TERA, 2)} TB/s"
        hbm = f"{Num(g.memory_gb, 4, 'GB')}, {Num(g.bandwidth_tb_s, 4, 'TB/s')}"
        rows.append((Text(g.key), Text(sms), Text(per_sm), Text(_NOT_PUBLISHED if total is None else str(_binary(total))),
                     Text(l2), Text(sram), Text(hbm)))
    return Table(("GPU", "SMs", "Shared memory per SM", "All SMs", "L2 cache", "SRAM bandwidth",
                  "HBM: size, bandwidth"), tuple(rows), align="lrrrrrr")


@fact
def memory_hierarchy_sources() -> Text:
    """Links to the documents the memory-hierarchy table's on-chip figures come from, by GPU (gpus.json
    `on_chip` sources); GPUs without an on-chip figure are left out."""
    parts = []
    for g in hardware.GPUS.values():
        urls = dict.fromkeys(g.on_chip.sources.values())
        if urls:
            parts.append(f"{g.key} " + ", ".join(f"[{_on_chip_source_label(u)}]({u})" for u in urls))
    return Text("; ".join(parts))


@fact
def h100_sms() -> Int:
    """Streaming multiprocessors of the H100 SXM (gpus.json on_chip, H100 whitepaper: 132)."""
    return Int(hardware.GPUS[H100].on_chip.sms)


@fact
def h100_shared_memory_per_sm() -> Num:
    """The most shared memory one H100 SM gives its programs: 228 KiB (Hopper tuning guide)."""
    return _binary(hardware.GPUS[H100].on_chip.shared_memory_per_sm)


@fact
def h100_shared_memory_total() -> Num:
    """Shared memory of all 132 H100 SMs together: 132 x 228 KiB, in MiB."""
    return _binary(hardware.GPUS[H100].on_chip.shared_memory_total)


@fact
def h100_l2() -> Num:
    """The H100 SXM's L2 cache, shared by all SMs: 50 MiB (H100 whitepaper)."""
    return _binary(hardware.GPUS[H100].on_chip.l2_bytes)


@fact
def h100_memory_gb() -> Num:
    """The H100 SXM's HBM capacity in GB (gpus.json: 80)."""
    return Num(hardware.GPUS[H100].memory_gb, 3)


@fact
def h100_hbm_over_shared_memory() -> Num:
    """How many times more bytes the H100's 80 GB of HBM holds than all its SMs' shared memory, rounded to two
    significant digits (the 80 GB is a nominal figure): about 2,600."""
    g = hardware.GPUS[H100]
    ratio = g.memory_bytes / g.on_chip.shared_memory_total
    return Num(float(f"{ratio:.2g}"))


@fact
def h100_registers_per_sm() -> Num:
    """One H100 SM's register file: 64K 32-bit registers, 256 KiB (Hopper tuning guide; gpus.json on_chip)."""
    return _binary(hardware.GPUS[H100].on_chip.registers_per_sm)


@fact
def h100_registers_total() -> Num:
    """The register files of all 132 H100 SMs together: 132 x 256 KiB, in MiB."""
    return _binary(hardware.GPUS[H100].on_chip.registers_total)


@fact
def h100_sram_bandwidth_tb_s() -> Num:
    """The H100 SXM's shared memory bandwidth, all SMs together, as the FlashAttention-3 paper gives it: about
    31 TB/s (arXiv:2407.08608, Table 1; gpus.json on_chip); NVIDIA publishes none."""
    return Num(hardware.GPUS[H100].on_chip.sram_bandwidth / hardware.TERA, 2)


@fact
def h100_l2_bandwidth_tb_s() -> Num:
    """The H100 SXM's L2 bandwidth as the FlashAttention-3 paper gives it: about 12 TB/s (Table 1)."""
    return Num(hardware.GPUS[H100].on_chip.l2_bandwidth / hardware.TERA, 2)


@fact
def h100_sram_over_hbm() -> Times:
    """How many times the H100's HBM bandwidth its shared memory reaches by the FlashAttention-3 paper's figure,
    one significant digit (31 / 3.35 = 9.3: the 31 TB/s is an estimate)."""
    g = hardware.GPUS[H100]
    return Times(g.on_chip.sram_bandwidth / g.bandwidth, 1)


def _tile_bytes() -> int:
    """One TILE x FLASH_D tile of FP16 numbers: a block of queries, keys or values."""
    return TILE * FLASH_D * 2


@fact
def flash_tile_bytes() -> Num:
    """One 128 x 128 tile of FP16 numbers (a block of 128 queries, keys or values of head dimension 128): 32 KiB."""
    return _binary(_tile_bytes())


@fact
def flash_three_tiles_bytes() -> Num:
    """A block of queries plus one tile of keys and one of values, FP16: the inputs one program holds at once."""
    return _binary(3 * _tile_bytes())


@fact
def a100_sram_bandwidth_tb_s() -> Num:
    """The A100's on-chip SRAM bandwidth as the FlashAttention paper estimates it, about 19 TB/s (arXiv:2205.14135,
    section 2.1; gpus.json on_chip): vendors publish no on-chip bandwidth."""
    return Num(hardware.GPUS[A100].on_chip.sram_bandwidth / hardware.TERA, 2)


@fact
def a100_hbm_bandwidth_tb_s() -> Num:
    """The A100 80GB SXM's HBM bandwidth in TB/s (gpus.json, A100 datasheet: 2.039)."""
    return Num(hardware.GPUS[A100].bandwidth_tb_s, 4)


@fact
def a100_sram_over_hbm() -> Times:
    """How many times the A100's HBM bandwidth its SRAM reaches by that estimate, one significant digit (the
    19 TB/s is itself "around")."""
    g = hardware.GPUS[A100]
    return Times(g.on_chip.sram_bandwidth / g.bandwidth, 1)


# --------------------------------------------------------------------------- FlashAttention


# -- the tiny example before the equations: one query, four keys in two tiles of two, through the package's own loop

ONLINE_SCORES = (2, 1, 3, 0)  # the query's scores against four keys; the second tile raises the maximum
ONLINE_TILE = 2
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def online_example_trace() -> attention.FlashTrace:
    """The tiny example run by `attention.flash_trace` (FlashAttention's loop, recorded tile by tile): a query of
    dimension 1 equal to 1 and keys equal to the scores, at scale 1, so that each score is its key."""
    import numpy as np

    k = np.array(ONLINE_SCORES, dtype=float)[:, None]
    return attention.flash_trace(np.ones((1, 1)), k, np.ones_like(k), block_q=1, block_k=ONLINE_TILE, scale=1.0)


def _e(power: float) -> str:
    """e to a whole power, as a reader writes it: e⁰, e⁻¹."""
    return "e" + str(int(power)).translate(_SUPERSCRIPT)


@fact
def online_example_table() -> Table:
    """The running maximum and running sum of the tiny example after each tile, and after all four scores at
    once: the second tile's larger maximum scales the first tile's sum by e^(old max - new max), and the result
    equals the sum taken over all four scores (the tiles from `online_example_trace`, the last row directly)."""
    trace = online_example_trace()
    rows = []
    for step in trace.steps[1:]:
        m_old, m_new = float(step.m_old[0]), float(step.m_new[0])
        scores = [float(x) for x in step.scores[0]]
        terms = " + ".join(_e(x - m_new) for x in scores)
        added = float(step.p[0].sum())  # this tile's e^(score - new maximum), summed
        if step.index == 1:
            work = f"{terms} = {Num(added)}"
        else:
            old_sum = float(trace.steps[step.index - 1].l_i[0])
            work = (f"{Num(old_sum)} × {_e(m_old - m_new)} + {terms} = "
                    f"{Num(old_sum * float(step.rescale[0]))} + {Num(added)} = {Num(float(step.l_i[0]))}")
        rose = " (it rose)" if m_new > m_old > -math.inf else ""
        rows.append((Text(f"tile {step.index}"), Text(", ".join(str(Int(x)) for x in scores)),
                     Text(f"{Int(m_new)}{rose}"), Text(work)))
    top = max(ONLINE_SCORES)
    total = sum(math.exp(x - top) for x in ONLINE_SCORES)
    rows.append((Text("all four at once"), Text(", ".join(str(Int(x)) for x in ONLINE_SCORES)), Text(str(Int(top))),
                 Text(" + ".join(_e(x - top) for x in ONLINE_SCORES) + f" = {Num(total)}")))
    return Table(("After", "Scores", "Running maximum", "Running sum"), tuple(rows),
                 align="llrl")


@fact
def online_example_sum() -> Num:
    """The tiny example's running sum after its last tile: the same as the sum over all four scores at once."""
    return Num(float(online_example_trace().steps[-1].l_i[0]))


def _standard() -> roofline.AttentionCost:
    return roofline.attention_intensity(FLASH_N, FLASH_D)


def _flash() -> roofline.AttentionCost:
    return roofline.flash_attention_intensity(FLASH_N, FLASH_D)


@fact
def flash_example_seq_len() -> Int:
    """Sequence length N of the worked example: one attention head (section 2.4.2)."""
    return Int(FLASH_N)


@fact
def flash_example_head_dim() -> Int:
    """Head dimension d of the worked example."""
    return Int(FLASH_D)


@fact
def standard_attention_bytes() -> SI:
    """Bytes standard attention moves for one head at N = 4,096, d = 128 in FP16: 8N² + 8Nd."""
    return Bytes(_standard().bytes)


@fact
def standard_attention_ops() -> SI:
    """Operations of one head of attention at N = 4,096, d = 128: 4N²d + 3N² (the same for FlashAttention)."""
    return SI(_standard().ops, "FLOP")


@fact
def flash_attention_steps_table() -> Table:
    """FlashAttention's steps in the worked example: what each reads and writes in device memory, bytes, operations.

    Rows from `roofline.flash_attention_intensity(4096, 128)`, with a total row.
    """
    cost = _flash()

    def formula(text: str, value: int) -> Text:  # "3Nd = 1,572,864", but a plain "0" for nothing
        return Text(str(Int(value)) if text == "0" else f"{text} = {Int(value)}")

    rows = []
    for s in cost.steps:
        rows.append((Text(step_name(s.name)), Text(operands(s.reads)), Text(operands(s.writes)),
                     formula(s.elements_formula, s.read_elements + s.write_elements),
                     Int(s.bytes), formula(s.ops_formula, s.ops)))
    rows.append((Text("**Total**"), Text(""), Text(""), Text(""),
                 Text(f"**{Int(cost.bytes)}**"), Text(f"**{Int(cost.ops)}**")))
    return Table(("Step", "Reads", "Writes", "Elements moved", "Bytes", "Operations"), tuple(rows), align="lllrrr")


@fact
def flash_attention_bytes() -> SI:
    """Bytes FlashAttention moves in the worked example: Q, K, V read and O written once, 8Nd in FP16."""
    return Bytes(_flash().bytes)


@fact
def flash_traffic_reduction() -> Num:
    """How many times fewer bytes FlashAttention moves than standard attention: (8N² + 8Nd) / 8Nd = N/d + 1."""
    return Num(_standard().bytes / _flash().bytes)


@fact
def standard_attention_bound() -> Text:
    """What limits standard attention on an H100 in the worked example (`roofline.bound`): memory."""
    return Text(f"{roofline.bound(_standard().intensity, 'H100-SXM', 'fp16')} bound")


@fact
def flash_attention_bound() -> Text:
    """What limits FlashAttention on an H100 in the worked example (`roofline.bound`): compute."""
    return Text(f"{roofline.bound(_flash().intensity, 'H100-SXM', 'fp16')} bound")


@fact
def standard_scores_bytes() -> SI:
    """Bytes of the N × N score matrix S that standard attention writes per head (FP16)."""
    first = _standard().steps[0]  # S = Q K^T: writes S
    return Bytes(first.write_elements * first.dtype_bytes)


@fact
def tile_shape() -> Text:
    """The tile size of the `flash_schedule` figure's panels: block_q × block_k positions."""
    return Text(f"{TILE} × {TILE}")


def _causal_tiles(n: int):
    return attention.flash_schedule(n, causal=True, block_q=TILE, block_k=TILE)


@fact
def causal_tiles_seq_len() -> Int:
    """Sequence length of the figure's causal panel."""
    return Int(CAUSAL_TILES_N)


@fact
def causal_tiles_visited() -> Int:
    """Tiles the tiled kernel visits for causal attention over 1,024 tokens (`attention.flash_schedule`)."""
    return Int(int((_causal_tiles(CAUSAL_TILES_N) != attention.TILE_SKIPPED).sum()))


@fact
def causal_tiles_total() -> Int:
    """All tiles of the 1,024-token causal panel, visited or not."""
    return Int(_causal_tiles(CAUSAL_TILES_N).size)


@fact
def causal_tiles_masked() -> Int:
    """Visited tiles of the causal panel that apply the mask: the diagonal ones."""
    return Int(int((_causal_tiles(CAUSAL_TILES_N) == attention.TILE_MASKED).sum()))


# --------------------------------------------------------------------------- the third roof: exponentials

ROOFS_N = 16384  # a long sequence, FlashAttention-3's benchmark length: memory is far from limiting
ROOFS_D = 128  # the head dimension the running text picks out (Llama's, and FA3's statement)
ROOFS_GPUS = ("A100-SXM", "H100-SXM", "H200-SXM", "B200", "GB200", "GB300")  # the table's rows (others: the catalog)

FA3_URL = "https://arxiv.org/abs/2407.08608"
FA3_ROWS = (
    # (label, math dtype, head dim, measured TFLOP/s, where it was read), one H100 SXM5, forward pass, no causal mask
    ("FP16, Figure 5(a)", "fp16", 64, 497, "Figure 5(a), 16k tokens"),
    ("FP16, Figure 5(c)", "fp16", 128, 648, "Figure 5(c), 16k tokens"),
    ("FP16, Figure 5(e)", "fp16", 256, 756, "Figure 5(e), 16k tokens"),
    ("FP16, abstract", "fp16", 256, 740, "abstract: 'up to 740 TFLOPs/s'; Figure 5(e) reaches 736 to 756"),
    ("FP8, abstract", "fp8", 256, 1200, "abstract: 'close to 1.2 PFLOPs/s'; head dimension not stated, the bound "
     "taken at the paper's largest, 256"),
)
"""FlashAttention-3's published forward speeds on one H100 SXM5 (Shah et al. 2024, arXiv:2407.08608; the FP16
figure is also assets/flash3_fp16_fwd.png in github.com/Dao-AILab/flash-attention): batch x sequence = 16k tokens,
hidden 2,048, FLOPs counted as 4 x N^2 x d per head."""


EXP_METHOD_WORDS = {"SMs x clock": "SMs × clock × 16", "tensor peak": "FP16 peak ÷ 4,096 × 16",
                    "published": "NVIDIA's figure"}
"""How each rate was obtained, in the table's words (`hardware.EXP_METHODS`)."""


def _roofs(gpu: str, d: int = ROOFS_D, dtype: str = "fp16", n: int = ROOFS_N) -> roofline.AttentionBound:
    return roofline.attention_bound(roofline.flash_attention_intensity(n, d, dtype), gpu, dtype)


@fact
def h100_exp_rate() -> Num:
    """Exponentials per second of an H100 SXM's special-function units, in trillions: the CUDA guide's 16 exp2 per
    clock per SM x 132 SMs x 1.83 GHz (`hardware.GPU.exponentials`); FlashAttention-3's paper says 3.9."""
    return Num(hardware.get_gpu("H100-SXM").exp_rate() / 1e12)


@fact
def h100_exp_share() -> Pct:
    """On an H100 SXM in FP16 at d = 128, the exponentials' time over the matmuls' time (peak / (4d x rate))."""
    b = _roofs("H100-SXM")
    return Pct(b.exp_time / b.tensor_time)


@fact
def b200_exp_share() -> Pct:
    """The same on a B200: its FP16 matmuls are 2.27 times an H100's, its exponentials 1.29 times."""
    b = _roofs("B200")
    return Pct(b.exp_time / b.tensor_time)


@fact
def roofs_head_dim() -> Int:
    """The head dimension the running text compares the two roofs at."""
    return Int(ROOFS_D)


@fact
def roofs_seq_len() -> Int:
    """The sequence length of the three-roof table: long enough that memory does not limit."""
    return Int(ROOFS_N)


@fact
def h100_exp_crossover_fp16() -> Num:
    """The head dimension below which the exponentials, not the matmuls, limit attention on an H100 in FP16."""
    return Num(roofline.exponential_crossover_head_dim("H100-SXM", "fp16"))


@fact
def h100_exp_crossover_fp8() -> Num:
    """The same in FP8: the matmuls run twice as fast, the exponentials do not."""
    return Num(roofline.exponential_crossover_head_dim("H100-SXM", "fp8"))


@fact
def b200_exp_crossover_fp16() -> Num:
    """The same on a B200 in FP16."""
    return Num(roofline.exponential_crossover_head_dim("B200", "fp16"))


LIMIT_WORDS = {"tensor cores": "matmuls", "exponentials": "exponentials", "memory": "memory"}


def _limit_text(b: roofline.AttentionBound) -> str:
    """The roof that limits, in a table's words: "both" where the matmuls and the exponentials tie."""
    return "both" if len(b.limits) > 1 else LIMIT_WORDS[b.limit]


def _gpu_label(g: hardware.GPU) -> str:
    return g.key.replace("-SXM", " SXM")


@fact
def exp_roof_table() -> Table:
    """Attention's third roof per GPU: the exponential rate and how the catalog obtained it, the head dimension below
    which the exponentials limit (FP16 and FP8), and what limits a long FP16 sequence at d = 64, 128 and 256."""
    rows = []
    for key in ROOFS_GPUS:
        g = hardware.get_gpu(key)
        e = g.exponentials
        fp8 = (Num(roofline.exponential_crossover_head_dim(g, "fp8")) if "fp8" in g.dense_flops else Text("no FP8"))
        limits = " / ".join(_limit_text(_roofs(key, d)) for d in (64, 128, 256))
        rows.append((Text(_gpu_label(g)), Num(e.per_s / 1e12), Text(EXP_METHOD_WORDS[e.method]),
                     Num(roofline.exponential_crossover_head_dim(g)), fp8, Text(limits)))
    return Table(("GPU", "Exponentials/s (T)", "From", "Exponentials limit below d: FP16", "FP8",
                  "Limit at d = 64 / 128 / 256, FP16"), tuple(rows), align="lrlrrl")


@fact
def no_exp_rate_gpus() -> Text:
    """The catalog GPUs without an exponential rate (each says why in gpus.json)."""
    return Text(", ".join(g.name for g in hardware.GPUS.values() if g.exponentials.per_s is None))


def _fa3_bound(dtype: str, d: int) -> roofline.AttentionBound:
    return _roofs("H100-SXM", d, dtype)


@fact
def fa3_rows_table() -> Table:
    """FlashAttention-3's published speeds on an H100 SXM beside attention's three-roof bound at the same math dtype
    and head dimension (16k tokens): the bound (the largest of the three times), measured over bound, and the speed
    if the three did not overlap at all (their times added). Each row links the paper and names the figure."""
    rows = []
    for label, dtype, d, measured, _ in FA3_ROWS:
        b = _fa3_bound(dtype, d)
        rows.append((Text(f"[{label}]({FA3_URL})"), Int(d), Int(measured), Num(b.flops_per_s / 1e12),
                     Num(measured / (b.flops_per_s / 1e12), 2), Num(b.serial_flops_per_s / 1e12)))
    return Table(("FlashAttention-3", "d", "Measured TFLOP/s", "Bound", "Measured ÷ bound", "No overlap"),
                 tuple(rows), align="lrrrrr")


@fact
def fa3_serial_gap() -> Pct:
    """The largest gap between FA3's FP16 speeds at d = 64, 128, 256 (Figure 5) and the speed with no overlap at all."""
    gaps = [abs(measured / (_fa3_bound(dtype, d).serial_flops_per_s / 1e12) - 1)
            for _, dtype, d, measured, where in FA3_ROWS if where.startswith("Figure")]
    return Pct(max(gaps))


@fact
def fa3_fp8_d64_bound() -> Num:
    """The exponential roof of FP8 attention at d = 64 on an H100, in TFLOP/s: 4 x 64 FLOPs per exponential x the
    exponential rate, half the FP8 peak and below FA3's 1,200."""
    return Num(_fa3_bound("fp8", 64).flops_per_s / 1e12)


# --------------------------------------------------------------------------- sliding window


@fact
def mistral_7b_window() -> Int:
    """Mistral 7B's sliding window in tokens (config.json `sliding_window`)."""
    return Int(load_config(MISTRAL).sliding_window)


@fact
def mistral_7b_layers() -> Int:
    """Mistral 7B's layer count (config.json `num_hidden_layers`); every layer uses the window."""
    return Int(load_config(MISTRAL).num_hidden_layers)


@fact
def mistral_7b_reach() -> Int:
    """How far back a token can be influenced through Mistral 7B's stacked windows: layers × window (L·w)."""
    c = load_config(MISTRAL)
    return Int(c.num_hidden_layers * c.sliding_window)


def _mistral_long_prompt() -> int:
    return load_config(MISTRAL).max_position_embeddings


@fact
def pair_share_example_seq_len() -> Int:
    """Sequence length N of the small-window example."""
    return Int(PAIR_SHARE_N)


@fact
def pair_share_example_window() -> Int:
    """Window w of the small-window example."""
    return Int(PAIR_SHARE_W)


@fact
def window_pair_share() -> Pct:
    """Share of full causal attention's (query, key) pairs that a window of 1,024 scores at N = 4,096."""
    return Pct(attention.attended_pairs(PAIR_SHARE_N, causal=True, window=PAIR_SHARE_W)
               / attention.attended_pairs(PAIR_SHARE_N, causal=True))


@fact
def window_saving_table() -> Table:
    """Scores computed with and without Mistral 7B's window at growing prompt lengths (`ssm.sliding_window_saving`)."""
    window = load_config(MISTRAL).sliding_window
    rows = []
    for n in WINDOW_TABLE_N:
        s = ssm.sliding_window_saving(n, window)
        rows.append((Int(s.n), SI(s.full_pairs), SI(s.window_pairs), Times(s.ratio)))
    return Table(("Prompt length N", "Full causal scores", "Window scores", "Work ratio"), tuple(rows), align="rrrr")


@fact
def window_short_prompt() -> Int:
    """The short prompt of the sliding-window example (the window's own size)."""
    return Int(WINDOW_SHORT_N)


@fact
def window_long_prompt() -> Int:
    """The long prompt of the sliding-window example: 32,768 tokens, the position limit of Mistral 7B v0.1's config
    (`max_position_embeddings`), not the context it was trained at (8,192, `llm_inference.mistral_7b_trained_context`)."""
    return Int(_mistral_long_prompt())


@fact
def window_saving_at_long_prompt() -> Num:
    """How many times less work Mistral 7B's window does than full causal attention at its config's 32,768-position limit (3
    significant digits, as the table's row and the sliding-window calculator write it)."""
    return Num(ssm.sliding_window_saving(_mistral_long_prompt(), load_config(MISTRAL).sliding_window).ratio)


@fact
def mistral_7b_kv_cache_short() -> SI:
    """Mistral 7B's BF16 KV cache for one sequence of 4,096 tokens."""
    return Bytes(load_config(MISTRAL).kv_cache_bytes(WINDOW_SHORT_N))


@fact
def mistral_7b_kv_cache_long() -> SI:
    """Mistral 7B's BF16 KV cache for one sequence of 32,768 tokens: capped by the window's rolling buffer."""
    return Bytes(load_config(MISTRAL).kv_cache_bytes(_mistral_long_prompt()))


@fact
def mistral_7b_kv_cache_long_without_window() -> SI:
    """What the same 32,768-token BF16 KV cache would be if every layer kept every token (no window)."""
    c = load_config(MISTRAL)
    return Bytes(c.kv_cache_bytes_per_token() * _mistral_long_prompt())


def _window_tiles():
    return attention.flash_schedule(WINDOW_TILES_N, window=WINDOW_TILES_W, block_q=TILE, block_k=TILE)


@fact
def window_tiles_window() -> Int:
    """The window of the figure's right panel."""
    return Int(WINDOW_TILES_W)


@fact
def window_tiles_seq_len() -> Int:
    """Sequence length of the figure's right panel."""
    return Int(WINDOW_TILES_N)


@fact
def window_tiles_visited() -> Int:
    """Tiles the tiled kernel visits with a window of 256 over 2,048 tokens (`attention.flash_schedule`)."""
    return Int(int((_window_tiles() != attention.TILE_SKIPPED).sum()))


@fact
def window_tiles_total() -> Int:
    """All tiles of the 2,048-token panel, visited or not."""
    return Int(_window_tiles().size)


@fact
def causal_tiles_visited_at_window_length() -> Int:
    """Tiles full causal attention visits over the same 2,048 tokens, for comparison."""
    return Int(int((_causal_tiles(WINDOW_TILES_N) != attention.TILE_SKIPPED).sum()))


# --------------------------------------------------------------------------- state-space models and hybrids


def _nemotron() -> ssm.HybridConfig:
    return ssm.HYBRID_PRESETS[NEMOTRON]


def _stacks(context: int) -> dict[str, ssm.MixingCost]:
    return ssm.compare_architectures(_nemotron(), context)


@fact
def nemotron_nano_layers() -> Int:
    """Nemotron 3 Nano's layers: Mamba-2, mixture-of-experts and attention together (its config.json)."""
    return Int(_nemotron().total_layers)


@fact
def nemotron_nano_mamba_layers() -> Int:
    """Nemotron 3 Nano's Mamba-2 layers (`M` in its hybrid_override_pattern)."""
    return Int(_nemotron().ssm_layers)


@fact
def nemotron_nano_moe_layers() -> Int:
    """Nemotron 3 Nano's mixture-of-experts layers (`E` in its hybrid_override_pattern)."""
    return Int(_nemotron().ffn_layers)


@fact
def nemotron_nano_attention_layers() -> Int:
    """Nemotron 3 Nano's attention layers (`*` in its hybrid_override_pattern)."""
    return Int(_nemotron().attention_layers)


@fact
def nemotron_nano_kv_heads() -> Int:
    """KV heads of Nemotron 3 Nano's attention layers (config.json `num_key_value_heads`)."""
    return Int(_nemotron().n_kv_heads)


@fact
def nemotron_nano_head_dim() -> Int:
    """Head dimension of Nemotron 3 Nano's attention layers (config.json `head_dim`)."""
    return Int(_nemotron().head_dim)


@fact
def nemotron_nano_mixing_layers() -> Int:
    """Nemotron 3 Nano's sequence-mixing layers: attention plus Mamba-2."""
    return Int(_nemotron().mixing_layers)


def _flops_and_memory(cost: ssm.MixingCost) -> Text:
    return Text(f"{SI(cost.flops, 'FLOP')} / {Bytes(cost.memory_bytes)}")


@fact
def hybrid_cost_table() -> Table:
    """One sequence's prefill FLOPs and memory (BF16 KV cache + FP32 Mamba state) of Nemotron 3 Nano's mixing
    layers, built as all attention, as shipped (hybrid) and as all Mamba-2 (`ssm.compare_architectures`)."""
    rows = []
    for n in HYBRID_CONTEXTS:
        c = _stacks(n)
        rows.append((Int(n), _flops_and_memory(c["attention"]), _flops_and_memory(c["hybrid"]),
                     _flops_and_memory(c["ssm"])))
    return Table(("Context", "All attention: FLOPs / memory", "Hybrid: FLOPs / memory", "All Mamba-2: FLOPs / memory"),
                 tuple(rows), align="rrrr")


def _whole_prefill_flops(context: int) -> dict[str, float]:
    """FLOPs of one whole-model prefill of `context` tokens for the shipped Nemotron 3 Nano and its mixing layers
    rebuilt as all attention or all Mamba-2 (`ssm.stacks_of`): every projection of the mixers, the MoE layers'
    active experts and router, the mixing itself, and the LM head on the last position (`roofline.prompt_flops`)."""
    stacks = ssm.stacks_of(load_config(ssm.PRESET_CONFIGS[NEMOTRON]))
    return {key: roofline.prompt_flops(model, context) for key, model in stacks.items()}


@fact
def hybrid_whole_model_table() -> Table:
    """Whole-model prefill FLOPs of one sequence for the three stacks (`_whole_prefill_flops`), and the hybrid's
    share of the all-attention one counted over the whole model and over the mixing layers alone (the other table)."""
    rows = []
    for n in HYBRID_CONTEXTS:
        whole, mixing = _whole_prefill_flops(n), _stacks(n)
        rows.append((Int(n), SI(whole["attention"], "FLOP"), SI(whole["hybrid"], "FLOP"), SI(whole["ssm"], "FLOP"),
                     Pct(whole["hybrid"] / whole["attention"]), Pct(mixing["hybrid"].flops / mixing["attention"].flops)))
    return Table(("Context", "All attention", "Hybrid", "All Mamba-2", "Hybrid ÷ all attention, whole model",
                  "Hybrid ÷ all attention, mixing alone"), tuple(rows), align="rrrrrr")


@fact
def hybrid_whole_flops_share_short() -> Pct:
    """The hybrid's whole-model prefill FLOPs as a share of the all-attention model's at 4,096 tokens: the
    projections and experts, the same in both, outweigh the mixing."""
    whole = _whole_prefill_flops(HYBRID_SHORT_N)
    return Pct(whole["hybrid"] / whole["attention"])


@fact
def hybrid_whole_flops_share_long() -> Pct:
    """The same share at 1,048,576 tokens, where attention's N² term dominates the whole model."""
    whole = _whole_prefill_flops(HYBRID_LONG_N)
    return Pct(whole["hybrid"] / whole["attention"])


@fact
def mamba_stack_memory() -> SI:
    """Memory of the all-Mamba-2 stack (its fixed state), the same at any context length."""
    return Bytes(_stacks(HYBRID_SHORT_N)["ssm"].memory_bytes)


@fact
def hybrid_short_context() -> Int:
    """The short context the hybrid example's text picks out."""
    return Int(HYBRID_SHORT_N)


@fact
def hybrid_long_context() -> Int:
    """The long context the hybrid example's text picks out."""
    return Int(HYBRID_LONG_N)


@fact
def hybrid_state_share_short() -> Pct:
    """Share of the hybrid's memory at 4,096 tokens that is the fixed Mamba-2 state (the rest is KV cache)."""
    h = _stacks(HYBRID_SHORT_N)["hybrid"]
    return Pct(h.ssm_state_bytes / h.memory_bytes)


@fact
def hybrid_memory_saving_short() -> Pct:
    """How much less memory the hybrid needs than all attention at 4,096 tokens, as a share."""
    c = _stacks(HYBRID_SHORT_N)
    return Pct(1 - c["hybrid"].memory_bytes / c["attention"].memory_bytes)


@fact
def hybrid_memory_share_long() -> Pct:
    """The hybrid's memory as a share of all attention's at 1,048,576 tokens."""
    c = _stacks(HYBRID_LONG_N)
    return Pct(c["hybrid"].memory_bytes / c["attention"].memory_bytes)


@fact
def hybrid_flops_share_long() -> Pct:
    """The hybrid's mixing FLOPs as a share of all attention's at 1,048,576 tokens."""
    c = _stacks(HYBRID_LONG_N)
    return Pct(c["hybrid"].flops / c["attention"].flops)


@fact
def nemotron_nano_attention_share() -> Pct:
    """Attention layers as a share of Nemotron 3 Nano's sequence-mixing layers (6 of 29: attention + Mamba-2), the
    share the hybrid table's all-attention and all-Mamba-2 stacks are built from."""
    return Pct(_nemotron().attention_share)


@fact
def nemotron_nano_attention_share_of_all_layers() -> Pct:
    """Attention layers as a share of all Nemotron 3 Nano's layers, MoE layers included (6 of 52)."""
    return Pct(_nemotron().attention_share_of_all_layers)


# --------------------------------------------------------------------------- measured kernels


def _cpu() -> bench_results.DeviceRoofline:
    return bench_results.device_roofline("cpu")


@fact
def cpu_bench_device() -> Text:
    """The CPU the committed benchmark results were measured on (their provenance)."""
    return Text(_cpu().name)


@fact
def cpu_bench_dates() -> Text:
    """The dates of the committed CPU benchmark runs."""
    return Text(", ".join(_cpu().dates))


@fact
def cpu_matmul_rate() -> SI:
    """The CPU's compute roof: numpy's float32 matmul rate, measured in the committed CPU attention run."""
    return SI(_cpu().compute_roofs[0].value, "FLOP/s")


@fact
def cpu_copy_bandwidth() -> SI:
    """The CPU's memory roof: numpy's large-array copy bandwidth, measured in the same run."""
    return SI(_cpu().memory_roofs[0].value, "B/s")


@fact
def cpu_ridge() -> Num:
    """The committed CPU run's ops:byte ratio: its matmul rate over its copy bandwidth (the figure's ridge)."""
    return Num(_cpu().compute_roofs[0].value / _cpu().memory_roofs[0].value)


@fact
def tiny_lm_decode_intensity() -> Num:
    """The lowest intensity (ops/byte) of the tiny model's measured decode steps: about 0.5, memory bound."""
    return Num(min(p.intensity for p in _cpu().points if p.kernel == "decode"), 1)


def _window_case() -> tuple[int, int]:
    """(N, w) of the GPU benchmark's sliding-window case (`bench_results.GPU_SIZES`, device size)."""
    _label, _b, _h, n, _d, w = bench_results.GPU_SIZES["device"]["window"][0]
    return n, w


@fact
def goal_attention_vs_sdpa() -> Times:
    """Goal of the GPU benchmark: the Triton forward's speed over PyTorch SDPA's default (`bench_results.GPU_GOALS`)."""
    return Times(bench_results.GPU_GOALS["attention_vs_sdpa_default"])


@fact
def goal_decode_vs_copy() -> Times:
    """Goal of the GPU benchmark: decode's bytes per second over the device's copy bandwidth."""
    return Times(bench_results.GPU_GOALS["decode_vs_copy_bandwidth"])


@fact
def window_bench_seq_len() -> Int:
    """Sequence length N of the GPU benchmark's sliding-window case."""
    return Int(_window_case()[0])


@fact
def window_bench_window() -> Int:
    """Window w of the GPU benchmark's sliding-window case."""
    return Int(_window_case()[1])


@fact
def window_bench_ideal_speedup() -> Times:
    """The ideal speedup of that case: full causal pairs over windowed pairs (`ssm.sliding_window_saving`)."""
    return Times(ssm.sliding_window_saving(*_window_case()).ratio)


@fact
def goal_window_speedup() -> Times:
    """Goal of the GPU benchmark: the windowed forward's speedup over full causal attention."""
    return Times(bench_results.GPU_GOALS["window_speedup"])


# --------------------------------------------------------------------------- map and recall

LEAVES = (
    Leaf("FlashAttention: exact result, tiles in on-chip SRAM, no N×N matrix in GPU memory", "flashattention",
         idea="attention cost"),
    Leaf("Decode attention stays memory bound at any batch unless queries share cached entries; flash-decoding "
         "adds parallelism, not intensity",
         "decode-attention-stays-memory-bound", idea="decode"),
    Leaf("Sliding window: N·w instead of N², and a KV cache capped at w tokens", "sliding-window-attention",
         idea="attention cost"),
    Leaf("State-space layers: fixed-size state, linear time; a hybrid's few attention layers still cost N² in prefill",
         "state-space-models-and-hybrids"),
)

CARDS = (
    Card("att-flash", "flashattention",
         "What does FlashAttention change, and what stays the same?",
         """The result stays the same (exact, up to rounding), and so do the matmul and softmax operations, plus a
         small rescaling cost; the tiles of the scores S and the attention weights A live in on-chip SRAM and never
         reach GPU memory, so only
         Q, K, V and O move (`8Nd` bytes in FP16, counting each read once). In the prefill-shaped example
         N = {{ fact: attention.flash_example_seq_len }}, d = {{ fact: attention.flash_example_head_dim }}
         the intensity rises from
         {{ fact: bottlenecks.attention_intensity }} to {{ fact: bottlenecks.flash_attention_intensity }}
         operations per byte."""),
    Card("att-memory", "the-gpus-memory-hierarchy",
         "Where does FlashAttention keep its tiles, and why is that worth it?",
         """In shared memory, the on-chip SRAM of each SM: up to
         {{ fact: attention.h100_shared_memory_per_sm }} per SM on an H100,
         {{ fact: attention.h100_shared_memory_total }} over all its SMs, against
         {{ fact: attention.h100_memory_gb }} GB of HBM. It is tiny but fast: the FlashAttention paper estimates
         the A100's at about {{ fact: attention.a100_sram_bandwidth_tb_s }} TB/s, some
         {{ fact: attention.a100_sram_over_hbm }} its HBM bandwidth, so work that stays in it skips the slow
         trips to HBM."""),
    Card("att-decode", "decode-attention-stays-memory-bound",
         "Does FlashAttention make decode attention compute bound?",
         """No. In decode each sequence brings one new query per head and reads its own KV cache, so each byte
         of K and V serves only the query heads of one group: `2G/b` operations per byte. For Llama 3.1 8B in
         BF16 that is {{ fact: llm_architecture.llama_8b_attention_intensity }} (G =
         {{ fact: llm_architecture.llama_8b_gqa_group }}), whatever the batch, far below the H100's
         {{ fact: bottlenecks.h100_ops_per_byte }}, unless more queries share a cached entry: a shared prefix
         read once for the sequences that hold it, speculative verification (k + 1 queries per cached key), or
         MLA's absorbed form ({{ fact: llm_architecture.deepseek_v3_absorbed_intensity }} for DeepSeek-V3).
         Flash-decoding splits the cache length across programs so that enough of them run; it does not change
         the intensity."""),
    Card("att-window", "sliding-window-attention",
         "How much does a sliding window of w keys save?",
         """Each query sees at most `w` keys, so the work grows like `N·w` instead of `N²`. At
         N = {{ fact: attention.pair_share_example_seq_len }} with w = {{ fact: attention.pair_share_example_window }},
         windowed attention scores {{ fact: attention.window_pair_share }} of the query-key pairs of full
         causal attention."""),
    Card("att-ssm", "state-space-models-and-hybrids",
         "Why do state-space models and hybrids scale better with context than attention?",
         """A state-space layer (Mamba) carries a fixed-size state from token to token instead of attending
         to every earlier token: its work grows linearly with length and its memory stays constant. Hybrids
         keep a few attention layers among many state-space layers; those layers' prefill work still grows as
         `N²` and their KV cache as `N`, so at long context a hybrid's memory and FLOPs shrink roughly to the
         attention layers' share of its sequence-mixing layers
         ({{ fact: attention.nemotron_nano_attention_share }} in the page's worked example), not to a linear cost."""),
)
