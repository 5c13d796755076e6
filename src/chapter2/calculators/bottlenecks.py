"""Calculators of section 2.4 (calculating inference bottlenecks).

Every number comes from `chapter2.hardware` and `chapter2.roofline`; these
functions only pick the inputs and format the results.
"""

from __future__ import annotations

import functools

from .. import hardware, models, roofline
from ..format import duration, nbytes, number, plain, si, sig
from . import _charts
from ._models import fit_context, model_fields, model_summary, pick_model
from ._registry import Field, Output, calculator

GPU_OPTIONS = tuple((key, gpu.name) for key, gpu in hardware.GPUS.items()) + (
    ("custom", "Custom: enter TFLOP/s and TB/s below"),
)
TENSOR_DTYPES = (("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"), ("fp4", "FP4"))
WEIGHT_OPTIONS = (("same", "Same as the math (FP4 math: NVFP4)"), ("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"),
                  ("int8", "INT8"), ("int4", "INT4, group-128 scales (4.125 bits)"), ("nvfp4", "NVFP4 (4.5 bits)"),
                  ("mxfp4", "MXFP4 (4.25 bits)"))
KV_OPTIONS = (("same", "Same as the math (FP4 math: FP8)"), ("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"),
              ("int8", "INT8"))
PARALLEL_OPTIONS = (("sharded", "Weights split over them (tensor/expert parallel)"),
                    ("replicated", "A copy on each (data parallel)"))
MODEL_OPTIONS = tuple((name, name) for name in models.list_configs())
LOGITS_OPTIONS = (("last", "Last position only (serving)"), ("all", "Every position (scoring a prompt)"))


def gpu_fields(default="H100-SXM"):
    """The GPU picker shared by the calculators of sections 2.3 and 2.4: a catalog entry or custom numbers."""
    return [
        Field("gpu", "GPU", default, kind="select", options=GPU_OPTIONS),
        Field("custom_tflops", "Custom GPU: dense TFLOP/s", 989.4, min=0.001, max=1e6,
              help="used only when GPU is Custom"),
        Field("custom_tb_s", "Custom GPU: memory bandwidth (TB/s)", 3.35, min=0.001, max=1e3,
              help="used only when GPU is Custom"),
    ]


def pick_gpu(gpu, custom_tflops, custom_tb_s, dtype) -> hardware.GPU:
    """The catalog GPU `gpu`, or a custom one whose peak for `dtype` is `custom_tflops`."""
    if gpu == "custom":
        return hardware.custom_gpu(custom_tflops, custom_tb_s, memory_gb=80, dtype=dtype, name="custom GPU")
    return hardware.get_gpu(gpu)


def bars(pairs) -> list:
    """[label, value] bars, values as floats (chapter2.charts.render_bars draws and rounds them, at build time and in
    the browser alike)."""
    return [[label, float(value)] for label, value in pairs]


def _phase_line(est: roofline.PhaseEstimate) -> str:
    attained = est.flops / est.time
    return (f"{plain(est.intensity)} ops/byte vs ops:byte {plain(est.ridge)} → {est.bound} bound; "
            f"at most {si(attained, 'FLOP/s')}")


def _pct(x: float) -> str:
    return f"{sig(100 * x, 2)} %"


def _decode_parts_line(est: roofline.PhaseEstimate) -> str:
    """Each part's bytes and share of the step's bytes; attention's share of the FLOPs too."""
    weights, kv, acts = est.parts
    return (f"weights {nbytes(weights.bytes)} ({_pct(weights.bytes / est.bytes)} of the bytes), "
            f"KV cache {nbytes(kv.bytes)} ({_pct(est.attention_byte_share)} of the bytes, "
            f"{_pct(est.attention_flop_share)} of the FLOPs), activations {nbytes(acts.bytes)}")


def _same(choice):
    """A format field's value for the library: None for "same as the math"."""
    return None if choice == "same" else choice


def _remember(fn):
    """`fn` with its last 32 answers kept. A crossover search runs about 20 roofline estimates, and the inputs a
    reader moves most (batch, prompt, GPUs) do not change it. Keys: the arguments themselves (a ModelConfig is
    frozen and compared by value), a GPU by its repr (every figure it holds)."""
    memo = {}

    @functools.wraps(fn)
    def remembered(*args):
        key = tuple(repr(a) if isinstance(a, hardware.GPU) else a for a in args)
        try:
            hash(key)
        except TypeError:  # a config holding a list (none does today): not remembered
            return fn(*args)
        if key not in memo:
            if len(memo) >= 32:
                memo.pop(next(iter(memo)))
            memo[key] = fn(*args)
        return memo[key]

    return remembered


@_remember
def _crossover_line(model, gpu, dtype, logits, weight_dtype=None, kv_dtype=None) -> str:
    limit = model.context_limit  # Whisper: a prompt of at most 448 tokens
    tokens = roofline.prefill_critical_tokens(model, gpu=gpu, dtype=dtype, logits=logits, weight_dtype=weight_dtype,
                                              kv_dtype=kv_dtype, **({"max_tokens": limit} if limit else {}))
    if tokens is None:
        return f"never, at any prompt the model holds (up to {limit:,} tokens)" if limit else "never, at any prompt length"
    return f"a prompt of {tokens:,} tokens or more (tokens processed together, across the prompts of a batch)"


@_remember
def _critical_line(model, context, gpu, dtype, weight_dtype=None, kv_dtype=None) -> str:
    formats = dict(gpu=gpu, dtype=dtype, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    weights = roofline.decode_critical_batch(model, context, part="weights", **formats)
    step = roofline.decode_critical_batch(model, context, part="step", **formats)
    line = f"weight matmuls: batch ≥ {weights:,}" if weights else "weight matmuls: never"
    if step is None:
        return line + f"; whole step at {context:,} tokens of context: never (every sequence reads its own KV cache)"
    return line + f"; whole step at {context:,} tokens of context: batch ≥ {step:,}"


@calculator(
    "ops_per_byte",
    title="A GPU's ops:byte ratio",
    fields=[*gpu_fields(), Field("dtype", "Data type", "fp16", kind="select", options=TENSOR_DTYPES)],
    outputs=[
        Output("peak", "Dense tensor peak"),
        Output("bandwidth", "Memory bandwidth"),
        Output("ratio", "ops:byte = peak / bandwidth"),
        Output("meaning", "What it means"),
    ],
)
def ops_per_byte_calc(gpu, custom_tflops, custom_tb_s, dtype):
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    r = g.ops_per_byte(dtype)
    return {
        "peak": si(g.peak_flops(dtype), "FLOP/s", 4),
        "bandwidth": si(g.bandwidth, "B/s", 4),
        "ratio": f"{number(r, 4)} operations per byte",
        "meaning": (f"a kernel doing fewer than {r:.0f} operations per byte it moves leaves the tensor "
                    f"cores waiting on memory (memory bound); above it, memory waits on compute"),
    }


@calculator(
    "roofline",
    title="Prefill, decode and attention on the roofline",
    fields=[
        *model_fields(label="Model", options=MODEL_OPTIONS),
        *gpu_fields(),
        Field("dtype", "Math (sets the peak)", "fp16", kind="select", options=TENSOR_DTYPES),
        Field("weight_dtype", "Weights stored as", "same", kind="select", options=WEIGHT_OPTIONS),
        Field("kv_dtype", "KV cache stored as", "same", kind="select", options=KV_OPTIONS),
        Field("n_gpus", "GPUs", 1, min=1, max=64, integer=True),
        Field("parallel", "With several GPUs", "sharded", kind="select", options=PARALLEL_OPTIONS),
        Field("prompt", "Prompt tokens (prefill)", 4096, min=1, max=1_000_000, integer=True),
        Field("logits", "Prefill computes logits for", "last", kind="select", options=LOGITS_OPTIONS),
        Field("context", "Context per sequence at decode (tokens)", 4096, min=1, max=1_000_000, integer=True),
        Field("batch", "Decode batch size", 1, min=1, max=100_000, integer=True),
        Field("head_dim", "Attention head dimension d", 128, min=1, max=4096, integer=True),
    ],
    outputs=[
        Output("intensity", "Arithmetic intensity (ops/byte) against the GPU's ops:byte", kind="bars"),
        Output("chart", "Prefill, decode and attention on the GPU's roofline", kind="chart", chart=_charts.ROOFLINE),
        Output("prefill", "Prefill (one prompt)"),
        Output("ttft", "Time to first token, lower bound"),
        Output("crossover", "Prefill turns compute bound at"),
        Output("decode", "Decode step (the batch at its context)"),
        Output("parts", "Decode step by part: bytes, and attention's share of bytes and FLOPs"),
        Output("tpot", "Time per output token, lower bound"),
        Output("attention", "Attention alone (prompt length N, head dim d, unfused vs FlashAttention)"),
        Output("critical", "Decode turns compute bound at"),
        Output("memory", "Memory for weights + KV cache"),
        Output("model_info", "Model read"),
    ],
)
def roofline_calc(model, config_json, gpu, custom_tflops, custom_tb_s, dtype, weight_dtype, kv_dtype, n_gpus, parallel,
                  prompt, logits, context, batch, head_dim):
    config = pick_model(model, config_json, MODEL_OPTIONS)
    prompt, prompt_capped = fit_context(config, prompt, "Prompt")
    context, context_capped = fit_context(config, context)
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    formats = dict(gpu=g, dtype=dtype, weight_dtype=_same(weight_dtype), kv_dtype=_same(kv_dtype))
    pre = roofline.prefill(config, prompt, n_gpus=n_gpus, parallel=parallel, logits=logits, **formats)
    dec = roofline.decode(config, context, batch=batch, n_gpus=n_gpus, parallel=parallel, **formats)
    att = roofline.attention_intensity(prompt, head_dim, dtype)
    flash = roofline.flash_attention_intensity(prompt, head_dim, dtype)
    fits = "fits" if dec.fits else "does NOT fit"
    return {
        "intensity": bars([
            [f"{g.key} ops:byte", g.ops_per_byte(dtype)],
            [f"Prefill, {prompt:,} tokens", pre.intensity],
            [f"Decode, batch {batch:,}, {context:,}-token context", dec.intensity],
            ["Standard attention", att.intensity],
            ["FlashAttention", flash.intensity],
        ]),
        "chart": _charts.roofline_chart(g, dtype, [
            (f"Prefill, {prompt:,} tokens", pre.intensity),
            (f"Decode, batch {batch:,}, {context:,}-token context", dec.intensity),
            ("Standard attention", att.intensity),
            ("FlashAttention", flash.intensity),
        ]),
        "prefill": _phase_line(pre) + (f"; {prompt_capped}" if prompt_capped else ""),
        "ttft": duration(pre.time),
        "crossover": _crossover_line(config, g, dtype, logits, _same(weight_dtype), _same(kv_dtype)),
        "decode": _phase_line(dec) + (f"; {context_capped}" if context_capped else ""),
        "parts": _decode_parts_line(dec),
        "tpot": (f"{duration(dec.time)} per step → {plain(1 / dec.time)} tokens/s per sequence, "
                 f"{plain(dec.tokens_per_s)} tokens/s for the batch"),
        "attention": (f"standard {plain(att.intensity)} ops/byte ({roofline.bound(att.intensity, g, dtype)} bound), "
                      f"FlashAttention {plain(flash.intensity)} ({roofline.bound(flash.intensity, g, dtype)} bound)"),
        "critical": _critical_line(config, context, g, dtype, _same(weight_dtype), _same(kv_dtype)),
        "memory": (f"{nbytes(dec.memory_needed)} at decode (weights {dec.weight_dtype}, KV cache {dec.kv_dtype}"
                   f"{', a copy per GPU' if parallel == 'replicated' and n_gpus > 1 else ''}); "
                   f"{fits} in {n_gpus} × {g.memory_gb:g} GB"),
        "model_info": model_summary(config),
    }


@calculator(
    "decode_batching",
    title="Batching raises decode's intensity",
    fields=[
        Field("batch", "Decode batch size", 1, kind="range", min=1, max=1024, step=1, integer=True),
        *model_fields(label="Model", options=MODEL_OPTIONS),
        Field("context", "Context per sequence (tokens)", 4096, min=1, max=1_000_000, integer=True),
        *gpu_fields(),
        Field("dtype", "Weights and math", "fp16", kind="select", options=TENSOR_DTYPES),
    ],
    outputs=[
        Output("bars", "Decode intensity against the GPU's ops:byte", kind="bars"),
        Output("chart", "Decode intensity against the batch size, and the GPU's ops:byte", kind="chart",
               chart=_charts.DECODE_BATCHING),
        Output("intensity", "Decode intensity"),
        Output("parts", "Weight matmuls vs attention"),
        Output("bytes", "Bytes per step: weights + KV cache + activations"),
        Output("shares", "Attention's share of the step"),
        Output("step", "Time per step (TPOT), lower bound"),
        Output("throughput", "Tokens per second"),
        Output("critical", "Compute bound from"),
        Output("memory", "Memory for weights + KV cache"),
        Output("model_info", "Model read"),
    ],
)
def decode_batching_calc(batch, model, config_json, context, gpu, custom_tflops, custom_tb_s, dtype):
    config = pick_model(model, config_json, MODEL_OPTIONS)
    context, capped = fit_context(config, context)
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    dec = roofline.decode(config, context, batch=batch, gpu=g, dtype=dtype)
    return {
        "bars": bars([[f"Decode step, batch {batch:,}, {context:,}-token context", dec.intensity],
                      ["Weight matmuls only", dec.weights_intensity],
                      [f"{g.key} ops:byte", dec.ridge]]),
        "chart": _charts.decode_batching_chart(config, context, g, dtype, batch),
        "intensity": f"{plain(dec.intensity)} ops/byte → {dec.bound} bound" + (f"; {capped}" if capped else ""),
        "parts": (f"weight matmuls {plain(dec.weights_intensity)} ops/byte, "
                  f"attention over the KV cache {plain(dec.attention_intensity)} ops/byte"),
        "bytes": (f"{nbytes(dec.weight_bytes)} of weights + {nbytes(dec.kv_bytes)} of KV cache + "
                  f"{nbytes(dec.activation_bytes)} of activations"),
        "shares": (f"{_pct(dec.attention_flop_share)} of the FLOPs but {_pct(dec.attention_byte_share)} of the bytes; "
                   f"the step is {dec.bound} bound, so its share of the "
                   f"{'bytes' if dec.bound == 'memory' else 'FLOPs'} sets its share of the time"),
        "step": duration(dec.time),
        "throughput": f"{plain(1 / dec.time)} per sequence, {plain(dec.tokens_per_s)} for the batch",
        "critical": _critical_line(config, context, g, dtype),
        "memory": f"{nbytes(dec.memory_needed)} ({'fits' if dec.fits else 'does NOT fit'} in {g.memory_gb:g} GB)",
        "model_info": model_summary(config),
    }
