"""Calculators of section 2.2a (serving a request): how servers keep the KV cache.

`kv_blocks`: the sequences a GPU's free memory holds when the cache is handed out in blocks, and when requests
share the blocks of a common system prompt, with the prefill a prefix-cache hit skips. `chunked_prefill`: a
long prompt prefilled in chunks beside requests already decoding, its time to first token against their time
per output token. `speculative_decoding`: tokens per step from the acceptance rate and the draft length, the
drafter's cost, and the speedup on the roofline. Every number comes from `chapter2.serving` (and through it
`chapter2.roofline`); these functions pick the inputs and write the results.
"""

from __future__ import annotations

import math

from .. import charts, efficiency, serving
from ..format import duration, nbytes, plain, sig
from ._gpus import TENSOR_DTYPES, gpu_fields, gpu_numbers, pick_gpu
from ._models import count, model_fields, model_numbers, model_summary, pick_model
from ._registry import Field, FieldError, Output, calculator
from .bottlenecks import SETUP_NOTES, SETUP_WORDS

CHUNK_CHART = charts.ChartSpec("chunk size (prompt tokens per step)", "time (ms)", x_log=True, y_log=True)
SPECULATION_CHART = charts.ChartSpec("drafted tokens per step", "speedup over plain decoding (×)")
MAX_STEPS = 4096  # chunks of one prompt: each is a roofline estimate
MAX_DRAFT = 16
DRAFTERS = (("head", "A one-layer draft head on the model (EAGLE, MTP)"),
            ("custom", "Another drafter: its cost per drafted token below"))


def _pct(x: float) -> str:
    return f"{plain(100 * x)} %"


def _ms(seconds: float) -> float:
    return seconds * 1e3


def _weights(dtype: str) -> str:
    return "NVFP4 weights, FP8 cache" if dtype == "fp4" else f"weights and cache in {dtype.upper()}"


def _memory(est, g, n_gpus: int) -> str:
    """Weights and KV caches of a step against the GPUs' memory (the roofline does not stop at a full GPU)."""
    fits = "fits" if est.fits else "does NOT fit"
    gpus = f"{n_gpus} × " if n_gpus > 1 else ""
    return f"{nbytes(est.memory_needed)} of weights and KV caches: {fits} in {gpus}{nbytes(g.memory_bytes)}"


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _decoder_only(c, field: str = "model") -> None:
    """Refuse an encoder-decoder (Whisper): its decoder holds a few hundred learned positions, too few for a
    mixed batch of prompt chunks and decode tokens or for drafts past its last position."""
    if c.is_encoder_decoder:
        raise FieldError(field, f"Model: {c.family_label or c.name} is an encoder-decoder whose decoder holds at most "
                                f"{c.context_limit:,} tokens; this calculator serves decoder-only language models")


def _windows(c) -> str:
    """A note for a model whose layers do not all keep every token (counted here as if they did)."""
    notes = []
    if c.sliding_window_layers or c.attention_chunk_size:
        notes.append("its sliding-window or chunked layers are counted keeping every token, as one block table for "
                     "all layers does (vLLM's hybrid allocator frees their old blocks and holds less)")
    if c.is_hybrid or c.is_encoder_decoder:
        notes.append("each sequence also holds a fixed state outside the blocks")
    return "; ".join(notes) or "none"


def _setup_fields() -> list[Field]:
    """The serving setup both KV-cache workbenches start from: a model, a GPU, the math's format, how many GPUs."""
    return [*model_fields(label="Model"), *gpu_fields(),
            Field("dtype", "Math (weights and KV cache follow it)", "fp16", kind="select", options=TENSOR_DTYPES),
            Field("n_gpus", "GPUs (the weights split over them)", 1, min=1, max=64, integer=True, unit="GPUs")]


# --------------------------------------------------------------------------- paged blocks and a shared prefix


@calculator(
    "kv_blocks",
    title="Paged blocks and a shared system prompt: how many sequences fit",
    fields=[
        *_setup_fields(),
        Field("utilization", "Share of GPU memory the server plans with", 0.9, min=0.01, max=1,
              help="vLLM's gpu_memory_utilization, 0.9 unless set"),
        Field("prompt_tokens", "Prompt (tokens)", 2500, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("prefix_tokens", "Of which a system prompt every request shares (tokens)", 2000, min=0, max=1_000_000,
              integer=True, unit="tokens"),
        Field("output_tokens", "Output (tokens)", 500, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("max_tokens", "max_tokens (reserved up front without blocks)", 4096, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("block_size", "Block size (tokens)", 16, min=1, max=4096, integer=True, unit="tokens",
              help="vLLM's default on CUDA GPUs is 16"),
        Field("hit_rate", "Prefix-cache hit rate (share of requests)", 0.8, min=0, max=1),
    ],
    outputs=[
        Output("pool", "Memory for KV caches"),
        Output("blocks", "One sequence (prompt + output) in blocks"),
        Output("fit", "Sequences that fit at once", kind="bars"),
        Output("fit_text", "Counted four ways"),
        Output("prefill", "Prefill per request (lower bound): a prefix-cache miss, a hit, and the mean"),
        Output("note", "Note"),
        Output("model_info", "Model read"),
    ],
)
def kv_blocks_calc(model, model_id, config_json, gpu, custom_tflops, custom_tb_s, dtype, n_gpus, utilization,
                   prompt_tokens, prefix_tokens, output_tokens, max_tokens, block_size, hit_rate):
    """Defaults: Llama 3.1 8B on one H100, a 2,500-token prompt opening with a 2,000-token system prompt."""
    c = pick_model(model, config_json, model_id=model_id)
    if prefix_tokens > prompt_tokens:
        raise FieldError("prefix_tokens", f"System prompt: at most the prompt's {prompt_tokens:,} tokens, "
                                          f"got {prefix_tokens:,}")
    if output_tokens > max_tokens:
        raise FieldError("max_tokens", f"max_tokens: at least the output's {output_tokens:,} tokens (a request writes "
                                       f"no more than it reserved), got {max_tokens:,}")
    tokens = prompt_tokens + output_tokens
    if c.context_limit is not None and tokens > c.context_limit:
        raise FieldError("prompt_tokens", f"Prompt: with the output, {tokens:,} tokens, more than the "
                                          f"{c.context_limit:,} {c.family_label or c.name}'s decoder holds")
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    setup = dict(gpu=g, dtype=dtype, n_gpus=n_gpus)
    pool = serving.kv_pool(c, memory_utilization=utilization, **setup)
    weights = utilization * g.memory_bytes * n_gpus - pool.free_bytes
    if pool.free_bytes <= 0:
        raise FieldError("n_gpus", f"GPUs: the weights take {nbytes(weights)}, more than {plain(utilization)} of "
                                   f"{n_gpus} × {nbytes(g.memory_bytes)}: add GPUs or choose a smaller model")
    fit = serving.paged_fit(pool, tokens, block_size=block_size, reserved_tokens=prompt_tokens + max_tokens,
                            prefix_tokens=prefix_tokens, hit_rate=hit_rate)
    pc = serving.prefix_cache(c, prompt_tokens, prefix_tokens, hit_rate=hit_rate, block_size=block_size, **setup)
    shared = fit.shared_tokens // block_size
    gpus = f"{n_gpus} × " if n_gpus > 1 else ""
    return {
        "pool": (f"{plain(utilization)} × {gpus}{nbytes(g.memory_bytes)} − {nbytes(weights)} of weights = "
                 f"{nbytes(pool.free_bytes)} ({_weights(dtype)}): {fit.total_blocks:,} blocks of {block_size:,} "
                 f"tokens × {nbytes(pool.kv_bytes_per_token)} = {nbytes(fit.block_bytes)} each"),
        "blocks": (f"{tokens:,} tokens take {fit.blocks_per_sequence:,} blocks ({fit.blocks_per_sequence * block_size:,} "
                   f"token slots): the last block leaves {fit.waste_tokens:,} empty ({_pct(fit.waste_share)}); "
                   f"over many lengths {plain(serving.mean_last_block_waste(block_size))} on average"),
        "fit": [[f"reserving prompt + max_tokens ({fit.reserved_tokens:,} tokens)", float(fit.sequences_reserved)],
                [f"in blocks of {block_size:,}", float(fit.sequences_paged)],
                [f"blocks, the system prompt shared by {_pct(hit_rate)}", float(fit.sequences)],
                [f"every byte used ({tokens:,} tokens each)", float(fit.sequences_exact)]],
        "fit_text": (f"{fit.sequences_reserved:,} reserving {fit.reserved_tokens:,} tokens each; "
                     f"{fit.sequences_paged:,} in blocks; {fit.sequences:,} when {_pct(hit_rate)} of them share the "
                     f"system prompt's {shared:,} whole blocks ({fit.shared_tokens:,} of its {prefix_tokens:,} tokens, "
                     f"held once); {fit.sequences_exact:,} if every byte held a token"),
        "prefill": (f"a miss computes all {prompt_tokens:,} tokens in {duration(pc.miss.time)}; a hit computes the "
                    f"last {prompt_tokens - pc.cached_tokens:,} over {pc.cached_tokens:,} cached in "
                    f"{duration(pc.hit.time)}; with {_pct(hit_rate)} of requests hitting, {duration(pc.ttft)} on average and "
                    f"{_pct(pc.flops_saved)} of the prefill FLOPs skipped (SGLang's token hit rate: "
                    f"{_pct(pc.token_hit_rate)})"),
        "note": _windows(c),
        "model_info": model_summary(c),
        "numbers": {**model_numbers(c), **gpu_numbers(g, dtype), "memory_utilization": utilization, "n_gpus": n_gpus,
                    "weights (B)": weights, "kv_pool (B)": pool.free_bytes,
                    "kv_cache_per_token (B)": pool.kv_bytes_per_token, "block_size (tokens)": block_size,
                    "block (B)": fit.block_bytes, "blocks": fit.total_blocks, "tokens": tokens,
                    "blocks_per_sequence": fit.blocks_per_sequence,
                    "block_slots (tokens)": fit.blocks_per_sequence * block_size,
                    "last_block_empty (tokens)": fit.waste_tokens, "last_block_empty_share": fit.waste_share,
                    "mean_last_block_empty (tokens)": serving.mean_last_block_waste(block_size),
                    "reserved (tokens)": fit.reserved_tokens, "sequences_reserved": fit.sequences_reserved,
                    "sequences_paged": fit.sequences_paged, "sequences_shared_prefix": fit.sequences,
                    "sequences_exact": fit.sequences_exact, "shared_blocks": shared,
                    "shared_tokens": fit.shared_tokens, "hit_rate": hit_rate,
                    "prefill_miss (s)": pc.miss.time, "prefill_hit (s)": pc.hit.time,
                    "cached_tokens": pc.cached_tokens, "computed_on_hit (tokens)": prompt_tokens - pc.cached_tokens,
                    "mean_ttft (s)": pc.ttft, "prefill_flops_skipped": pc.flops_saved,
                    "token_hit_rate": pc.token_hit_rate},
    }


# --------------------------------------------------------------------------- chunked prefill


def _chunk_sizes(prompt: int, chunk: int) -> list[int]:
    """Chunk sizes for the chart: powers of two up to the whole prompt (at most 64 chunks at the smallest), the
    reader's chunk and the prompt itself."""
    lo = max(16, 2 ** math.ceil(math.log2(max(1, prompt / 64))))
    sizes = {2 ** k for k in range(int(math.log2(lo)), math.ceil(math.log2(prompt)) + 1)}
    return sorted({min(s, prompt) for s in sizes} | {chunk, prompt})


def _chunk_chart(c, prompt, chunk, batch, context, now, setup) -> dict:
    sizes = _chunk_sizes(prompt, chunk)
    runs = [now if s == chunk else serving.chunked_prefill(c, prompt, s, decode_batch=batch, decode_context=context,
                                                           **setup) for s in sizes]
    series = [charts.series("new prompt: time to first token", sizes, [_ms(r.ttft) for r in runs])]
    points = [charts.point(chunk, _ms(now.ttft), f"chunks of {chunk:,}: first token", color=0)]
    rules = [charts.rule("x", chunk, f"{chunk:,}")]
    if batch:
        series.append(charts.series(f"the {batch:,} running: time per output token", sizes,
                                    [_ms(r.tpot) for r in runs]))
        points.append(charts.point(chunk, _ms(now.tpot), f"chunks of {chunk:,}: time per token", color=1))
        rules.append(charts.rule("y", _ms(now.tpot_decode), "a decode step alone"))
    return charts.chart(series, points, rules, summary=(
        "Smaller chunks keep the running sequences' steps short but make the new prompt wait for more steps, each "
        "reading the weights again; while a chunk fits in a memory-bound decode step it rides along almost free."))


@calculator(
    "chunked_prefill",
    title="Chunked prefill: a long prompt beside requests already decoding",
    fields=[
        *_setup_fields(),
        Field("prompt_tokens", "New prompt (tokens)", 8192, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("chunk_tokens", "Chunk (prompt tokens per step)", 512, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("decode_batch", "Sequences already decoding", 64, min=0, max=4096, integer=True, unit="sequences"),
        Field("decode_context", "Their context (tokens each)", 4096, min=1, max=1_000_000, integer=True, unit="tokens"),
    ],
    outputs=[
        Output("chart", "Time to first token against time per output token, by chunk size", kind="chart",
               chart=CHUNK_CHART),
        Output("ttft", "The new prompt's time to first token"),
        Output("tpot", "The running sequences' time per output token meanwhile"),
        Output("expected", "Expected range (not a bound)"),
        Output("limits", "What limits a step"),
        Output("memory", "Memory at the last step"),
        Output("model_info", "Model read"),
    ],
)
def chunked_prefill_calc(model, model_id, config_json, gpu, custom_tflops, custom_tb_s, dtype, n_gpus, prompt_tokens,
                         chunk_tokens, decode_batch, decode_context):
    """Defaults: Llama 3.1 8B on one H100, an 8,192-token prompt in chunks of 512 beside 64 sequences at 4,096."""
    c = pick_model(model, config_json, model_id=model_id)
    _decoder_only(c, "config_json" if config_json.strip() else "model")
    chunk = min(chunk_tokens, prompt_tokens)
    if math.ceil(prompt_tokens / chunk) > MAX_STEPS:
        raise FieldError("chunk_tokens", f"Chunk: at most {MAX_STEPS:,} chunks a prompt, so at least "
                                         f"{math.ceil(prompt_tokens / MAX_STEPS):,} tokens for this prompt")
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    setup = dict(gpu=g, dtype=dtype, n_gpus=n_gpus)
    now = serving.chunked_prefill(c, prompt_tokens, chunk, decode_batch=decode_batch, decode_context=decode_context,
                                  **setup)
    whole = serving.chunked_prefill(c, prompt_tokens, prompt_tokens, decode_batch=decode_batch,
                                    decode_context=decode_context, **setup)
    steps = len(now.steps)
    numbers = {**model_numbers(c), **gpu_numbers(g, dtype), "prompt_tokens": prompt_tokens, "chunk (tokens)": chunk,
               "steps": steps, "ttft (s)": now.ttft,
               "prefill_alone (s)": now.alone.time, "ttft_unchunked (s)": whole.ttft,
               "first_step (s)": now.steps[0].time, "last_step (s)": now.steps[-1].time}
    if decode_batch:
        tpot = (f"{duration(now.tpot)} at the slowest step (the last chunk attends over the most), against "
                f"{duration(now.tpot_decode)} for a decode step alone; unchunked they would wait "
                f"{duration(whole.tpot)} for one token")
        numbers |= {"decode_batch": decode_batch, "decode_context (tokens)": decode_context, "tpot (s)": now.tpot,
                    "tpot_decode (s)": now.tpot_decode, "tpot_unchunked (s)": whole.tpot}
    else:
        tpot = "no sequence is decoding: chunks only add steps, each reading the weights again"
    expected, expected_numbers = _expected(now.ttft, now.tpot if decode_batch else None, decode_batch, n_gpus)
    first, last = now.steps[0], now.steps[-1]
    return {
        "chart": _chunk_chart(c, prompt_tokens, chunk, decode_batch, decode_context, now, setup),
        "ttft": (f"{duration(now.ttft)} in {_plural(steps, 'step')} of up to {chunk:,} tokens; "
                 f"{duration(whole.ttft)} unchunked, {duration(now.alone.time)} with nothing beside it"),
        "tpot": tpot,
        "expected": expected,
        "limits": (f"the first step takes {duration(first.time)}, {first.bound} bound; the last "
                   f"{duration(last.time)}, {last.bound} bound"),
        "memory": _memory(last, g, n_gpus),
        "model_info": model_summary(c),
        "numbers": numbers | expected_numbers | {"memory_needed (B)": last.memory_needed, "n_gpus": n_gpus},
    }


def _expected(ttft: float, tpot: float | None, decode_batch: int, n_gpus: int) -> tuple[str, dict]:
    """The expected ranges beside the bounds (`chapter2.efficiency`): each bound divided by the highest and lowest
    share of their bounds that published runs of the same setup reached. With sequences decoding the steps are a
    server's (the prompt joins `decode_batch` others); with none, the chunks are a prefill alone."""
    if decode_batch:
        setup = efficiency.phase_setup("decode", batch=decode_batch + 1, n_gpus=n_gpus)
    else:
        setup = efficiency.phase_setup("prefill", n_gpus=n_gpus)
    e = efficiency.published(setup)
    ttft_fast, ttft_slow = efficiency.expected(ttft, setup)
    parts = [f"first token {duration(ttft_fast)} to {duration(ttft_slow)}"]
    numbers = {"ttft_expected_fast (s)": ttft_fast, "ttft_expected_slow (s)": ttft_slow}
    if tpot is not None:
        tpot_fast, tpot_slow = efficiency.expected(tpot, setup)
        parts.append(f"each output token {duration(tpot_fast)} to {duration(tpot_slow)}")
        numbers |= {"tpot_expected_fast (s)": tpot_fast, "tpot_expected_slow (s)": tpot_slow}
    bounds = ("the bounds" if tpot is not None else "the bound") + (" with communication" if n_gpus > 1 else "")
    text = (f"{'; '.join(parts)}: {bounds} ÷ {sig(100 * e.low, 2)} % to {sig(100 * e.high, 2)} %, what {e.count} "
            f"{SETUP_WORDS[setup]} reached{SETUP_NOTES.get(setup, '')}")
    return text, numbers | {"efficiency_low (%)": 100 * e.low, "efficiency_high (%)": 100 * e.high,
                            "expected_runs": e.count}


# --------------------------------------------------------------------------- speculative decoding


def _speedup_chart(c, context, batch, alpha, cost, draft, now, setup) -> dict:
    gs = list(range(MAX_DRAFT + 1))
    runs = [now if g == draft else serving.speculative_decode(c, context, draft_tokens=g, acceptance=alpha,
                                                              drafter_cost=cost, batch=batch, **setup) for g in gs]
    return charts.chart(
        [charts.series("on the roofline (verification's own cost)", gs, [r.speedup for r in runs]),
         charts.series("Leviathan et al.: E / (γc + 1)", gs,
                       [serving.leviathan_speedup(alpha, g, cost) for g in gs], dash=True)],
        [charts.point(draft, now.speedup, f"{draft} drafted: {plain(now.speedup)}×", color=0)],
        [charts.rule("y", 1.0, "plain decoding")],
        summary=("Each drafted token adds less than the one before (it is kept only if all before it were) and costs "
                 "the same drafting time, so the speedup peaks; at a large batch the verification itself turns "
                 "compute bound and the roofline curve falls below the formula."))


@calculator(
    "speculative_decoding",
    title="Speculative decoding: drafted tokens, acceptance and the drafter's cost",
    fields=[
        Field("draft_tokens", "Drafted tokens per step (γ)", 3, kind="range", min=0, max=MAX_DRAFT, step=1,
              integer=True, unit="tokens"),
        Field("acceptance", "Acceptance rate per drafted token (α)", 0.8, kind="range", min=0, max=1, step=0.01),
        *model_fields(label="Target model"),
        *gpu_fields(),
        Field("dtype", "Math (weights and KV cache follow it)", "fp16", kind="select", options=TENSOR_DTYPES),
        Field("context", "Context per sequence (tokens)", 4096, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("batch", "Sequences decoded together", 1, min=1, max=4096, integer=True, unit="sequences"),
        Field("n_gpus", "GPUs (the weights split over them)", 1, min=1, max=64, integer=True, unit="GPUs"),
        Field("drafter", "Drafter", "head", kind="select", options=DRAFTERS),
        Field("drafter_cost", "Drafter's cost per drafted token (c, a share of a decode step)", 0.05, min=0, max=10,
              show_when=("drafter", "custom")),
    ],
    outputs=[
        Output("chart", "Speedup against the draft length, at this acceptance rate", kind="chart",
               chart=SPECULATION_CHART),
        Output("tokens", "Tokens per step"),
        Output("drafter_info", "Drafter"),
        Output("step", "One step"),
        Output("speedup", "Against plain decoding"),
        Output("best", "Best draft length at this acceptance and cost (Leviathan et al.'s formula)"),
        Output("memory", "Memory"),
        Output("model_info", "Model read"),
    ],
)
def speculative_decoding_calc(draft_tokens, acceptance, model, model_id, config_json, gpu, custom_tflops, custom_tb_s,
                              dtype, context, batch, n_gpus, drafter, drafter_cost):
    """Defaults: Llama 3.1 8B on one H100, one sequence at 4,096 tokens, 3 drafts kept with probability 0.8."""
    c = pick_model(model, config_json, model_id=model_id)
    _decoder_only(c, "config_json" if config_json.strip() else "model")
    if drafter == "head":
        if not c.hidden_size or not c.vocab_size:
            raise FieldError("drafter", "Drafter: this model gives no hidden or vocabulary size to size a draft head; "
                                        "choose another drafter and its cost")
        cost = serving.draft_head_cost(c)
        head = serving.draft_head_params(c)
        lm = c.vocab_size * c.hidden_size
        info = (f"a one-layer head of {count(round(head))} weights (a layer and its 2h × h fusion) that reads the "
                f"target's {count(lm)}-weight LM head too: c = {plain(cost)} of a decode step per drafted token")
        extra = {"draft_head_params": head, "lm_head_params": lm}
    else:
        cost = drafter_cost
        info = f"c = {plain(cost)} of a decode step per drafted token"
        extra = {}
    g = pick_gpu(gpu, custom_tflops, custom_tb_s, dtype)
    setup = dict(gpu=g, dtype=dtype, n_gpus=n_gpus)
    sd = serving.speculative_decode(c, context, draft_tokens=draft_tokens, acceptance=acceptance, drafter_cost=cost,
                                    batch=batch, **setup)
    best = serving.best_draft_tokens(acceptance, cost, MAX_DRAFT)
    best_speedup = serving.leviathan_speedup(acceptance, best, cost)
    formula = serving.leviathan_speedup(acceptance, draft_tokens, cost)
    return {
        "chart": _speedup_chart(c, context, batch, acceptance, cost, draft_tokens, sd, setup),
        "tokens": (f"E = {plain(sd.tokens_per_step)} of the {_plural(draft_tokens + 1, 'position')} verified "
                   f"(acceptance {plain(acceptance)}, {draft_tokens:,} drafted)"),
        "drafter_info": info,
        "step": (f"verifying {_plural(draft_tokens + 1, 'position')} {duration(sd.verify.time)} ({sd.verify.bound} "
                 f"bound) + {_plural(draft_tokens, 'draft')} {duration(sd.draft_time)} = {duration(sd.step_time)}, "
                 f"against {duration(sd.plain.time)} for a plain step" if draft_tokens else
                 f"no drafts: a plain step, {duration(sd.plain.time)} ({sd.plain.bound} bound)"),
        "speedup": (f"{plain(sd.speedup)}× on the roofline ({plain(formula)}× by Leviathan et al.'s formula): "
                    f"{plain(sd.tokens_per_s)} tokens/s for the batch, {plain(1 / sd.time_per_token)} per sequence"),
        "best": (f"{_plural(best, 'drafted token')}: {plain(best_speedup)}×" if best else
                 f"do not speculate: no draft length beats plain decoding at c = {plain(cost)}"),
        "memory": _memory(sd.verify, g, n_gpus),
        "model_info": model_summary(c),
        "numbers": {**model_numbers(c), **gpu_numbers(g, dtype), "draft_tokens": draft_tokens,
                    "acceptance": acceptance, "drafter_cost": cost,
                    "tokens_per_step": sd.tokens_per_step, "positions": draft_tokens + 1,
                    "verify (s)": sd.verify.time, "drafts (s)": sd.draft_time, "step (s)": sd.step_time,
                    "plain_step (s)": sd.plain.time, "speedup": sd.speedup, "speedup_formula": formula,
                    "tokens_per_s": sd.tokens_per_s, "tokens_per_s_per_sequence": 1 / sd.time_per_token,
                    "best_draft_tokens": best, "best_speedup": best_speedup, "n_gpus": n_gpus,
                    "memory_needed (B)": sd.verify.memory_needed, **extra},
    }
