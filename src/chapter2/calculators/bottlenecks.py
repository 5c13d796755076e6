"""Calculators of section 2.4 (calculating inference bottlenecks).

Every number comes from `chapter2.hardware` and `chapter2.roofline`; these
functions only pick the inputs and format the results.
"""

from __future__ import annotations

import functools

from .. import efficiency, hardware, roofline
from ..format import SI, Duration, Num, Text, duration, nbytes, plain, si, sig
from . import _charts
from ._charts import bars
from ._gpus import TENSOR_DTYPES, gpu_fields, gpu_numbers, pick_gpu
from ._models import fit_context, model_fields, model_numbers, model_summary, pick_model
from ._registry import Field, FieldError, Output, calculator

WEIGHT_OPTIONS = (("same", "Same as the math (FP4 math: NVFP4)"), ("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"),
                  ("int8", "INT8"), ("int4", "INT4, group-128 scales (4.125 bits)"),
                  ("int4_zp", "INT4, group-128 scales and zero points (4.156 bits)"), ("nvfp4", "NVFP4 (4.5 bits)"),
                  ("mxfp4", "MXFP4 (4.25 bits)"))
KV_OPTIONS = (("same", "Same as the math (FP4 math: FP8)"), ("fp16", "FP16"), ("bf16", "BF16"), ("fp8", "FP8"),
              ("int8", "INT8"))
PARALLEL_OPTIONS = (("sharded", "Each weight matrix split over them (tensor parallel)"),
                    ("replicated", "A copy on each (data parallel)"),
                    ("expert", "Experts split, attention data parallel (expert parallel)"),
                    ("pipeline", "Layers split into stages (pipeline parallel)"))
LINK_OPTIONS = (("own", "The GPU's own (catalog)"),
                *((key, link.name) for key, link in hardware.LINKS.items()))
LOGITS_OPTIONS = (("last", "Last position only (serving)"), ("all", "Every position (scoring a prompt)"))


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


def _kinds(est: roofline.PhaseEstimate) -> dict:
    """A pass's collectives by kind: {kind: (count, bytes each, total seconds)}."""
    kinds: dict[str, tuple] = {}
    for c in est.communication.collectives:
        count, each, total = kinds.get(c.kind, (0, c.nbytes, 0.0))
        kinds[c.kind] = (count + c.count, each, total + c.total)
    return kinds


def _collectives(est: roofline.PhaseEstimate) -> str:
    """What one pass sends between GPUs, by kind of collective: how many, each one's size, their time."""
    return "; ".join(f"{count:,} {kind}{'s' if count != 1 else ''} of {nbytes(each)}, {duration(total)}"
                     for kind, (count, each, total) in _kinds(est).items())


def _link_words(talk) -> str:
    """The link(s) in words, each name quoted (its digits are a name's) with its rate each way per GPU."""
    up = f"“{talk.scale_up.short}” ({si(talk.scale_up.bandwidth, 'B/s')} each way per GPU)"
    if talk.domains == 1:
        return up
    return (f"{up} inside {talk.domains:,} domains of {talk.domain_gpus:,} GPUs, “{talk.scale_out.short}” "
            f"({si(talk.scale_out.bandwidth, 'B/s')} each way per GPU) between them")


def _communication_line(pre: roofline.PhaseEstimate, dec: roofline.PhaseEstimate) -> str:
    """The communication term of a decode step and of the prefill, and the link it used."""
    if dec.communication is None:
        return "none: one GPU" if dec.n_gpus == 1 else "none: each GPU holds a copy and serves its own sequences"
    how = {"expert": "overlapped with the computation", "pipeline": "added to the time: the next stage waits for it",
           "sharded": "added to the time: the next layer waits for the sum"}[dec.parallel]
    return f"decode step: {_collectives(dec)}; prefill: {_collectives(pre)}; {how}; over {_link_words(dec.communication)}"


def communication_numbers(phase: str, est: roofline.PhaseEstimate) -> dict:
    """A phase's communication between GPUs as numbers (calculators.NUMBERS): its time, each kind's count, size and
    time, and the links' rates and levels; {} where the GPUs do not talk."""
    talk = est.communication
    if talk is None:
        return {f"{phase}_communication (s)": 0.0}
    out = {f"{phase}_communication (s)": est.communication_s, f"{phase}_time_without_communication (s)": est.roofline_time}
    for kind, (count, each, total) in _kinds(est).items():
        key = kind.replace("-", "_")
        out.update({f"{phase}_{key}_count": count, f"{phase}_{key}_bytes (B)": float(each),
                    f"{phase}_{key}_time (s)": total})
    out.update({"link": talk.link, "link_bandwidth (B/s)": talk.scale_up.bandwidth, "domains": talk.domains,
                "gpus_per_domain": talk.domain_gpus})
    if talk.scale_out is not None:
        out["scale_out_bandwidth (B/s)"] = talk.scale_out.bandwidth
    return out


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
def _crossover(model, gpu, dtype, logits, weight_dtype=None, kv_dtype=None) -> int | None:
    """The shortest prompt whose prefill is compute bound (None: none the model holds)."""
    limit = model.context_limit  # Whisper: a prompt of at most 448 tokens
    return roofline.prefill_critical_tokens(model, gpu=gpu, dtype=dtype, logits=logits, weight_dtype=weight_dtype,
                                            kv_dtype=kv_dtype, **({"max_tokens": limit} if limit else {}))


def _crossover_line(model, tokens: int | None) -> str:
    limit = model.context_limit
    if tokens is None:
        return f"never, at any prompt the model holds (up to {limit:,} tokens)" if limit else "never, at any prompt length"
    return f"a prompt of about {tokens:,} tokens or more (tokens processed together, across the prompts of a batch)"


@_remember
def _critical(model, context, gpu, dtype, weight_dtype=None, kv_dtype=None) -> tuple:
    """(batch from which the weight matmuls are compute bound, from which the whole step is), None for never."""
    formats = dict(gpu=gpu, dtype=dtype, weight_dtype=weight_dtype, kv_dtype=kv_dtype)
    return (roofline.decode_critical_batch(model, context, part="weights", **formats),
            roofline.decode_critical_batch(model, context, part="step", **formats))


def _critical_line(context: int, critical: tuple) -> str:
    weights, step = critical
    line = f"weight matmuls: a batch of about {weights:,} or more" if weights else "weight matmuls: never"
    if step is None:
        return line + (f"; whole step at {context:,} tokens of context: never (every sequence reads its own KV "
                       "cache: no shared prefix or speculative verification assumed)")
    return line + f"; whole step at {context:,} tokens of context: a batch of about {step:,} or more"


def phase_numbers(phase: str, est: roofline.PhaseEstimate) -> dict:
    """One phase's roofline estimate as numbers (calculators.NUMBERS), each name beginning with `phase`."""
    return {f"{phase}_flops (FLOP)": float(est.flops), f"{phase}_bytes (B)": float(est.bytes),
            f"{phase}_intensity (FLOP/B)": float(est.intensity), f"{phase}_bound": est.bound,
            f"{phase}_attained (FLOP/s)": float(est.flops / est.time), f"{phase}_time (s)": float(est.time),
            f"{phase}_weight_bytes (B)": float(est.weight_bytes), f"{phase}_kv_cache_bytes (B)": float(est.kv_bytes),
            f"{phase}_activation_bytes (B)": float(est.activation_bytes),
            f"{phase}_weight_byte_share (%)": 100 * est.weight_bytes / est.bytes,
            f"{phase}_attention_byte_share (%)": 100 * est.attention_byte_share,
            f"{phase}_attention_flop_share (%)": 100 * est.attention_flop_share,
            f"{phase}_weights_intensity (FLOP/B)": float(est.weights_intensity),
            f"{phase}_attention_intensity (FLOP/B)": float(est.attention_intensity) if est.kv_bytes else None,
            f"{phase}_tokens_per_s_per_sequence (tokens/s)": 1 / est.time,
            f"{phase}_tokens_per_s (tokens/s)": float(est.tokens_per_s), f"{phase}_memory (B)": float(est.memory_needed),
            f"{phase}_fits": "yes" if est.fits else "no"}


SETUP_WORDS = {
    "one sequence, 1 GPU": "published runs of one sequence on one GPU",
    "one sequence, several GPUs": "published runs of one sequence on several GPUs",
    "serving, 1 GPU": "published servers on one GPU",
    "serving, several GPUs": "published servers on several GPUs",
    "kernel, compute bound": "compute-bound kernels",
    "kernel, memory bound": "memory-bound kernels",
}
"""What the published runs behind each expected range were (`efficiency.SETUPS`), as a calculator says it."""
SETUP_NOTES = {"kernel, compute bound": " (optimistic: no published prefill without prefix caching)"}


def expected_range(name: str, bound_time: float, setup: str, n_gpus: int = 1) -> tuple[str, dict]:
    """An expected range beside a bound: the bound divided by the shares of their bounds that published runs of
    `setup` reached (`efficiency.expected`), labelled as a range; and its numbers. On several GPUs the bound is the
    one with their communication, as are the published runs' shares (`efficiency.fit`)."""
    e = efficiency.published(setup)
    fast, slow = efficiency.expected(bound_time, setup)
    bound = "the bound with communication" if n_gpus > 1 else "the bound"
    text = (f"{duration(fast)} to {duration(slow)}: {bound} ÷ {_pct(e.low)} to {_pct(e.high)}, what {e.count} "
            f"{SETUP_WORDS[setup]} reached{SETUP_NOTES.get(setup, '')}")
    return text, {f"{name}_expected_fast (s)": fast, f"{name}_expected_slow (s)": slow,
                  f"{name}_efficiency_low (%)": 100 * e.low, f"{name}_efficiency_high (%)": 100 * e.high,
                  f"{name}_expected_runs": e.count}


def _attention_roofs(prompt: int, head_dim: int, g: hardware.GPU, dtype: str) -> tuple[str, dict]:
    """FlashAttention's three roofs at the prompt's length and head dimension (`roofline.attention_bound`)."""
    b = roofline.attention_bound(roofline.flash_attention_intensity(prompt, head_dim, dtype), g, dtype)
    numbers = {"flash_attention_bound_time (s)": b.time, "flash_attention_bound (FLOP/s)": b.flops_per_s}
    if b.exp_time is None:
        return (f"; FlashAttention's roofs: {b.limit} ({g.key} has no exponential rate in the catalog)", numbers)
    numbers["exponential_time_over_matmul_time (%)"] = 100 * b.exp_time / b.tensor_time
    limit = " and ".join(b.limits)
    return (f"; FlashAttention: {limit} bound (exponentials {_pct(b.exp_time / b.tensor_time)} of matmul time)",
            numbers)


def _critical_numbers(critical: tuple, crossover: int | None = None) -> dict:
    weights, step = critical
    return {"compute_bound_batch_weights (sequences)": weights, "compute_bound_batch_step (sequences)": step,
            **({} if crossover is False else {"compute_bound_prompt (tokens)": crossover})}


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
        "ratio": f"{plain(r)} operations per byte",
        "meaning": (f"a kernel doing fewer than {plain(r)} operations per byte it moves leaves the tensor "
                    f"cores waiting on memory (memory bound); above it, memory waits on compute"),
        "numbers": gpu_numbers(g, dtype),
    }


@calculator(
    "roofline",
    title="Prefill, decode and attention on the roofline",
    fields=[
        *model_fields(label="Model"),
        *gpu_fields(),
        Field("dtype", "Math (sets the peak)", "fp16", kind="select", options=TENSOR_DTYPES),
        Field("weight_dtype", "Weights stored as", "same", kind="select", options=WEIGHT_OPTIONS),
        Field("kv_dtype", "KV cache stored as", "same", kind="select", options=KV_OPTIONS),
        Field("n_gpus", "GPUs", 1, min=1, max=64, integer=True, unit="GPUs"),
        Field("parallel", "With several GPUs", "sharded", kind="select", options=PARALLEL_OPTIONS),
        Field("link", "Link between the GPUs", "own", kind="select", options=LINK_OPTIONS),
        Field("prompt", "Prompt tokens (prefill)", 4096, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("logits", "Prefill computes logits for", "last", kind="select", options=LOGITS_OPTIONS),
        Field("context", "Context per sequence at decode (tokens)", 4096, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("batch", "Decode batch size", 1, min=1, max=100_000, integer=True, unit="sequences"),
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
        Output("ttft_expected", "Time to first token, expected range (not a bound)"),
        Output("tpot_expected", "Time per output token, expected range (not a bound)"),
        Output("communication", "Communication between the GPUs (its own term of each time)"),
        Output("attention", "Attention alone (prompt length N, head dim d, unfused vs FlashAttention)"),
        Output("critical", "Decode turns compute bound at"),
        Output("memory", "Memory for weights + KV cache"),
        Output("model_info", "Model read"),
    ],
    compare={"model": "Llama-3.1-8B", "model_id": "", "gpu": "B200", "dtype": "fp16", "weight_dtype": "same", "kv_dtype": "same"},
)
def roofline_calc(model, model_id, config_json, gpu, custom_tflops, custom_tb_s, dtype, weight_dtype, kv_dtype, n_gpus, parallel,
                  link, prompt, logits, context, batch, head_dim):
    config = pick_model(model, config_json, model_id=model_id)
    prompt, prompt_capped = fit_context(config, prompt, "Prompt")
    context, context_capped = fit_context(config, context)
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    if parallel == "expert" and not config.moe_layers:
        raise FieldError("parallel", f"{config.name} has no experts to split: choose another way to use several GPUs")
    chosen = None if link == "own" else link
    if chosen is None and n_gpus > 1 and parallel != "replicated" and g.key not in hardware.INTERCONNECTS:
        raise FieldError("link", f"a custom GPU has no link in the catalog: choose the link between the {n_gpus} GPUs")
    formats = dict(gpu=g, dtype=dtype, weight_dtype=_same(weight_dtype), kv_dtype=_same(kv_dtype), link=chosen)
    pre = roofline.prefill(config, prompt, n_gpus=n_gpus, parallel=parallel, logits=logits, **formats)
    dec = roofline.decode(config, context, batch=batch, n_gpus=n_gpus, parallel=parallel, **formats)
    att = roofline.attention_intensity(prompt, head_dim, dtype)
    flash = roofline.flash_attention_intensity(prompt, head_dim, dtype)
    fits = "fits" if dec.fits else "does NOT fit"
    crossover = _crossover(config, g, dtype, logits, _same(weight_dtype), _same(kv_dtype))
    critical = _critical(config, context, g, dtype, _same(weight_dtype), _same(kv_dtype))
    ttft_expected, ttft_numbers = expected_range("ttft", pre.time, efficiency.phase_setup("prefill", n_gpus=n_gpus),
                                            n_gpus)
    tpot_expected, tpot_numbers = expected_range("tpot", dec.time,
                                            efficiency.phase_setup("decode", batch=batch, n_gpus=n_gpus), n_gpus)
    roofs, roof_numbers = _attention_roofs(prompt, head_dim, g, dtype)
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
        "ttft_expected": ttft_expected,
        "crossover": _crossover_line(config, crossover),
        "decode": _phase_line(dec) + (f"; {context_capped}" if context_capped else ""),
        "parts": _decode_parts_line(dec),
        "tpot": (f"{duration(dec.time)} per step → {plain(1 / dec.time)} tokens/s per sequence, "
                 f"{plain(dec.tokens_per_s)} tokens/s for the batch"),
        "tpot_expected": tpot_expected,
        "communication": _communication_line(pre, dec),
        "attention": (f"standard {plain(att.intensity)} ops/byte ({roofline.bound(att.intensity, g, dtype)} bound), "
                      f"FlashAttention {plain(flash.intensity)} ({roofline.bound(flash.intensity, g, dtype)} bound)"
                      + roofs),
        "critical": _critical_line(context, critical),
        "memory": (f"{nbytes(dec.memory_needed)} at decode (weights {dec.weight_dtype}, KV cache {dec.kv_dtype}"
                   f"{', a copy per GPU' if parallel == 'replicated' and n_gpus > 1 else ''}"
                   f"{', a copy per GPU of all but the experts' if parallel == 'expert' and n_gpus > 1 else ''}); "
                   f"{fits} in {n_gpus} × {g.memory_gb:g} GB"),
        "model_info": model_summary(config),
        "numbers": {**model_numbers(config), **gpu_numbers(g, dtype), "prompt (tokens)": prompt,
                    "context (tokens)": context, "batch (sequences)": batch, "gpus": n_gpus, "head_dim_attention": head_dim,
                    **phase_numbers("prefill", pre), **phase_numbers("decode", dec),
                    **communication_numbers("prefill", pre), **communication_numbers("decode", dec),
                    "standard_attention_intensity (FLOP/B)": float(att.intensity),
                    "flash_attention_intensity (FLOP/B)": float(flash.intensity), **roof_numbers,
                    **ttft_numbers, **tpot_numbers, **_critical_numbers(critical, crossover)},
        "compared": [  # A beside B (the compare toggle): the numbers above, as they are written there
            ("The GPU's ops:byte", Num(g.ops_per_byte(dtype), 3)),
            ("Prefill intensity", Num(pre.intensity, 3, "ops/byte")),
            ("Prefill bound", Text(pre.bound)),
            ("Time to first token", Duration(pre.time)),
            ("Decode intensity", Num(dec.intensity, 3, "ops/byte")),
            ("Decode bound", Text(dec.bound)),
            ("Time per output token", Duration(dec.time)),
            ("Tokens/s for the batch", Num(dec.tokens_per_s, 3)),
            ("Memory for weights + KV cache", SI(dec.memory_needed, "B")),
        ],
    }


@calculator(
    "decode_batching",
    title="Batching raises decode's intensity",
    fields=[
        Field("batch", "Decode batch size", 1, kind="range", min=1, max=1024, step=1, integer=True, unit="sequences"),
        *model_fields(label="Model"),
        Field("context", "Context per sequence (tokens)", 4096, min=1, max=1_000_000, integer=True, unit="tokens"),
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
        Output("step_expected", "Time per step, expected range (not a bound)"),
        Output("throughput", "Tokens per second"),
        Output("critical", "Compute bound from"),
        Output("memory", "Memory for weights + KV cache"),
        Output("model_info", "Model read"),
    ],
)
def decode_batching_calc(batch, model, model_id, config_json, context, gpu, custom_tflops, custom_tb_s, dtype):
    config = pick_model(model, config_json, model_id=model_id)
    context, capped = fit_context(config, context)
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    dec = roofline.decode(config, context, batch=batch, gpu=g, dtype=dtype)
    critical = _critical(config, context, g, dtype)
    step_expected, step_numbers = expected_range("step", dec.time, efficiency.phase_setup("decode", batch=batch))
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
        "step_expected": step_expected,
        "throughput": f"{plain(1 / dec.time)} per sequence, {plain(dec.tokens_per_s)} for the batch",
        "critical": _critical_line(context, critical),
        "memory": f"{nbytes(dec.memory_needed)} ({'fits' if dec.fits else 'does NOT fit'} in {g.memory_gb:g} GB)",
        "model_info": model_summary(config),
        "numbers": {**model_numbers(config), **gpu_numbers(g, dtype), "batch (sequences)": batch,
                    "context (tokens)": context, **phase_numbers("decode", dec), **step_numbers,
                    **_critical_numbers(critical, False)},
    }
