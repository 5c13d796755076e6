"""Calculators of section 2.2 (LLM inference mechanics): prefill and decode, step by step.

`prefill_decode`: type a prompt; the shipped tiny model (`chapter2/data/tiny_lm`,
loaded once and kept in memory) prefills it in one pass, then decodes `n_steps`
tokens one at a time. The step slider picks a pass (0 is the prefill), shown as
one line: the tokens that went in, the KV cache afterwards (one entry per token
seen), the five likeliest next tokens and the one chosen. All of it is `chapter2.stepper.step_through`. The
decode-step slider is a stepper (Back / Forward): the grid shows the KV cache
(layers x positions) after that many steps, the prompt's block written by the
prefill and one column per decode step.

`request_timeline`: the same two phases at a real model's scale, timed by the
roofline (`chapter2.roofline.request_timeline`): one prefill block (time to
first token), then one decode step per output token, the KV cache growing
under them and the sequences the GPU's memory can hold at that context.
"""

from __future__ import annotations

from .. import efficiency, hardware, roofline, stepper
from ..format import nbytes, si
from . import _charts
from ._gpus import CATALOG_OPTIONS
from ._models import MODEL_OPTIONS, shipped
from ._registry import Field, FieldError, Output, calculator
from .bottlenecks import expected_range

NUMBERS = "Numbers: this pass, the bytes of the cache, the text"
MAX_STEPS = 24  # a table that fits on a page, and well under 200 ms in CPython
MAX_PROMPT_CHARS = 400
SEED = 0  # draws at temperature > 0 are reproducible: numpy default_rng(0)


@calculator(
    "prefill_decode",
    title="Prefill, then decode: the tiny model one token at a time",
    fields=[
        Field("prompt", "Prompt", "The KV cache stores the keys and values", kind="text", max=MAX_PROMPT_CHARS,
              help="any text; the tiny model was trained on this site's pages"),
        Field("temperature", "Temperature", 0.0, kind="range", min=0, max=2, step=0.05,
              help="0 = greedy; above 0, seeded draws"),
        Field("n_steps", "Decode steps", 0, kind="range", min=0, max=MAX_STEPS, step=1, integer=True, stepper=True,
              help="0 is the prefill: the whole prompt in one pass", unit="steps"),
    ],
    outputs=[
        Output("caption", "This step", kind="caption", free_text=True),
        Output("grid", "The KV cache: a key and a value per token in every layer, one column per token", kind="chart",
               chart=_charts.KV_GRID),
        Output("tokens", "The text as tokens (a tiny model trained on this site's pages: its text is nonsense; the "
                         "point is the cache)", kind="chart", chart=_charts.TOKENS),
        Output("top", "The model's five likeliest next tokens", kind="bars"),
        Output("step", "This forward pass", free_text=True, details=NUMBERS),
        Output("cache", "KV cache after this pass", details=NUMBERS),
        Output("text", "Prompt and generated text, decoded", free_text=True, details=NUMBERS),
    ],
)
def prefill_decode_calc(prompt, n_steps, temperature):
    """Prefill the prompt, decode n_steps tokens (stopping early at <|endoftext|>), show every pass."""
    if not prompt.strip():
        raise FieldError("prompt", "Prompt: enter some text (prefill needs at least one token)")
    model, tokenizer = stepper.load()
    n_prompt, context = len(tokenizer.encode(prompt)), model.config.max_position_embeddings
    if context is not None and n_prompt + n_steps > context:
        raise FieldError("prompt", f"Prompt: {n_prompt} tokens + {n_steps} decode steps = {n_prompt + n_steps} "
                                   f"positions, more than the model's context of {context}; shorten the prompt "
                                   f"or decode fewer steps")
    stop = [tokenizer.special_tokens["<|endoftext|>"]] if "<|endoftext|>" in tokenizer.special_tokens else []
    steps = _steps(model, tokenizer, prompt, n_steps, temperature, stop)
    last = steps[-1]
    line = stepper.format_step(last)
    if len(steps) < n_steps + 1:
        line += f"\nstopped: the model chose {last.token_text!r} (end of text) after {len(steps) - 1} decode steps"
    per_token = model.new_cache().bytes_per_token
    served = model.config.kv_cache_bytes(last.cache_length, dtype="bf16")  # what a serving engine would store
    return {
        "caption": _pass_caption(steps, len(steps) < n_steps + 1),
        "grid": _charts.kv_grid_chart(steps, tokenizer, model.config.num_hidden_layers, per_token, MAX_STEPS),
        "tokens": _charts.tokens_chart(steps, tokenizer, MAX_STEPS),
        "top": [[_charts._token_label(c.text), c.prob] for c in last.top],
        "step": line,
        "cache": (f"{last.cache_length} tokens × {per_token:,} B per token = {nbytes(last.cache_bytes)}. The tiny model "
                  f"computes in {model.dtype.name} (8 bytes a number) so that your browser and the tests agree to "
                  f"the last digit; a server stores 16-bit numbers (bf16): {nbytes(served)} for this cache"),
        "text": stepper.generated_text(tokenizer, steps),
        "numbers": {"step": last.index, "decode_steps_run": len(steps) - 1, "prompt (tokens)": n_prompt,
                    "tokens_in (tokens)": len(last.input_ids), "input_ids": list(last.input_ids),
                    "cache (tokens)": last.cache_length, "cache_per_token (B)": per_token,
                    "cache (B)": last.cache_bytes, "number_bytes (B)": model.dtype.itemsize,
                    "cache_bf16 (B)": served, "layers": model.config.num_hidden_layers,
                    "top_tokens": [c.text for c in last.top], "top_token_ids": [c.token for c in last.top],
                    "top_probabilities": [float(c.prob) for c in last.top], "chosen_token": last.token_text,
                    "stopped": "yes" if len(steps) < n_steps + 1 else "no"},
    }


def _pass_caption(steps, stopped: bool) -> str:
    """One line: what this forward pass put in the cache, and the token it chose."""
    last, n_prompt = steps[-1], len(steps[0].input_ids)
    chose = "end of text, so generation stops" if stopped else f"“{_charts._token_label(last.token_text)}”"
    if last.index == 0:
        return (f"Prefill: all {n_prompt} prompt tokens go through the model in one pass and fill "
                f"{n_prompt} cache columns in every layer; the model picks {chose}.")
    return (f"Decode step {last.index}: one token, “{_charts._token_label(last.input_text)}”, goes in; the cache "
            f"grows by one column, to {last.cache_length} tokens; the model picks {chose}.")


_RUNS: dict = {}  # (id(model), prompt, temperature, stop) -> (model, iterator, records so far): the last runs


def _steps(model, tokenizer, prompt, n_steps, temperature, stop):
    """The first n_steps + 1 records of `stepper.step_through`, from a run kept between calls.

    A run is `stepper.iter_steps` for as many steps as the slider and the context allow; each call
    takes the records it needs, so stepping forward costs one decode step and stepping back none
    (tests check that the records equal step_through's).
    """
    key = (id(model), prompt, temperature, tuple(stop))
    run = _RUNS.get(key)
    if run is None or run[0] is not model:
        context = model.config.max_position_embeddings
        longest = MAX_STEPS if context is None else min(MAX_STEPS, context - len(tokenizer.encode(prompt)))
        run = (model, stepper.iter_steps(model, tokenizer, prompt, max(longest, n_steps), temperature=temperature,
                                         seed=SEED, stop_ids=stop), [])
        if len(_RUNS) >= 8:
            _RUNS.pop(next(iter(_RUNS)))
        _RUNS[key] = run
    _, passes, records = run
    while len(records) < n_steps + 1:
        step = next(passes, None)
        if step is None:  # it stopped at end of text
            break
        records.append(step)
    return records[: n_steps + 1]


# -----------------------------------------------------------------------------
# a request on a timeline

TIMELINE_NUMBERS = "Numbers: the arithmetic and the bytes behind each phase's time"
MAX_OUTPUT = 2048  # output tokens: one roofline decode estimate each, well under 0.2 s in CPython


@calculator(
    "request_timeline",
    title="A request on a timeline: prefill, then one decode step per output token",
    defer_frames=True,  # its prebuilt steps (about 236 kB) are fetched when a reader comes to it, below 2.2a's hero
    fields=[
        Field("model", "Model (config.json)", "Llama-3.1-8B", kind="select", options=MODEL_OPTIONS),
        Field("gpu", "GPU", "H100-SXM", kind="select", options=CATALOG_OPTIONS),
        Field("prompt_tokens", "Prompt (tokens)", 2048, min=1, max=1_000_000, integer=True, unit="tokens"),
        Field("output_tokens", "Output (tokens)", 256, min=1, max=MAX_OUTPUT, integer=True, unit="tokens"),
        Field("batch", "Batch (sequences decoded together)", 8, min=1, max=4096, integer=True, unit="sequences"),
        Field("token", "Output token", 1, kind="range", min=1, max=MAX_OUTPUT, step=1, integer=True, stepper=True,
              max_from="output_tokens", help="1 is the prefill's token"),
    ],
    outputs=[
        Output("caption", "This step", kind="caption"),
        Output("chart", "The request over time, and the batch's KV cache", kind="chart", chart=_charts.TIMELINE),
        Output("ttft", "Time to first token (the prefill)"),
        Output("tpot", "Time per output token (a decode step)"),
        Output("ttft_expected", "Time to first token, expected range (not a bound)"),
        Output("tpot_expected", "Time per output token, expected range (not a bound)"),
        Output("now", "At this output token"),
        Output("capacity", "Sequences the GPU's memory holds at this context"),
        Output("limits", "What limits each phase, in numbers (section 2.4 explains the terms)", details=TIMELINE_NUMBERS),
    ],
)
def request_timeline_calc(model, gpu, prompt_tokens, output_tokens, batch, token):
    """Roofline times of one prefill and every decode step (chapter2.roofline.request_timeline), 16-bit numbers."""
    tl = _timeline(model, gpu, prompt_tokens, output_tokens, batch)
    if tl.memory_left <= 0:
        raise FieldError("gpu", f"GPU: {model}'s 16-bit weights take {nbytes(tl.weight_bytes)}, more than one "
                                f"{gpu} holds ({nbytes(tl.memory)}): choose a smaller model or a GPU with more memory")
    token = min(token, output_tokens)  # the page keeps the slider within the output (data-max-from) too
    ctx, per_seq = tl.contexts[token - 1], tl.kv_bytes_per_sequence(tl.contexts[token - 1])
    pre, g = tl.prefill, hardware.get_gpu(gpu)
    if output_tokens > 1:
        first, last = tl.decode[0], tl.decode[-1]
        tpot = (f"{_charts._seconds(first.time)} at the first decode step, {_charts._seconds(last.time)} at the last: "
                f"{LIMITS[first.bound]}")
        decode = (f"Each decode step reads {nbytes(first.weight_bytes)} of weights (all but the embedding table, "
                  f"which it only looks up) and the batch's KV cache, {nbytes(first.kv_bytes)} to "
                  f"{nbytes(last.kv_bytes)}, at {si(g.bandwidth, 'B/s')}: {first.bound} bound.")
    else:
        tpot, decode = "no decode step: the prefill gives the only output token", "No decode step."
    fits = tl.capacity(ctx)
    ttft_expected, expected_numbers = expected_range("ttft", tl.ttft, efficiency.phase_setup("prefill"))
    if output_tokens > 1:
        tpot_expected, tpot_numbers = expected_range("tpot", tl.decode[0].time,
                                                     efficiency.phase_setup("decode", batch=batch))
        tpot_expected, expected_numbers = f"at the first decode step, {tpot_expected}", expected_numbers | tpot_numbers
    else:
        tpot_expected = "no decode step"
    return {
        "caption": _token_caption(tl, token),
        "chart": _charts.timeline_chart(tl, token),
        "ttft": (f"{_charts._seconds(tl.ttft)}: one pass over {batch:,} × {prompt_tokens:,} prompt tokens; "
                 f"{LIMITS[pre.bound]}"),
        "tpot": tpot,
        "ttft_expected": ttft_expected,
        "tpot_expected": tpot_expected,
        "now": (f"token {token:,} of {output_tokens:,}, ready at {_charts._seconds(tl.token_times[token - 1])}; "
                f"each sequence's KV cache holds {ctx:,} tokens ({nbytes(per_seq)}), the batch's "
                f"{nbytes(tl.kv_bytes[token - 1])}"),
        "capacity": (f"{fits:,} sequences: {nbytes(tl.memory)} − {nbytes(tl.weight_bytes)} of weights = "
                     f"{nbytes(tl.memory_left)} for KV caches, {nbytes(per_seq)} per sequence at {ctx:,} tokens"
                     f"{'' if fits >= batch else f'; the batch of {batch:,} does not fit'}"),
        "limits": (f"The prefill does {si(pre.flops, 'FLOP')} at {si(g.peak_flops(pre.dtype), 'FLOP/s')} and moves "
                   f"{nbytes(pre.bytes)}: {pre.bound} bound. {decode}"),
        "numbers": {"model": model, "gpu": g.key, "token": token, "prompt (tokens)": prompt_tokens,
                    "output (tokens)": output_tokens, "batch (sequences)": batch, "ttft (s)": float(tl.ttft),
                    "token_ready (s)": float(tl.token_times[token - 1]),
                    "decode_step": token - 1, "step_time (s)": float(tl.decode[token - 2].time) if token > 1 else None,
                    "context_now (tokens)": ctx, "kv_cache_per_sequence (B)": float(per_seq),
                    "kv_cache_batch (B)": float(tl.kv_bytes[token - 1]), "prefill_flops (FLOP)": float(pre.flops),
                    "prefill_bytes (B)": float(pre.bytes), "prefill_bound": pre.bound,
                    "peak (FLOP/s)": float(g.peak_flops(pre.dtype)), "bandwidth (B/s)": float(g.bandwidth),
                    "first_decode_time (s)": float(tl.decode[0].time) if output_tokens > 1 else None,
                    "last_decode_time (s)": float(tl.decode[-1].time) if output_tokens > 1 else None,
                    "decode_weight_bytes (B)": float(tl.decode[0].weight_bytes) if output_tokens > 1 else None,
                    "first_decode_kv_cache (B)": float(tl.decode[0].kv_bytes) if output_tokens > 1 else None,
                    "last_decode_kv_cache (B)": float(tl.decode[-1].kv_bytes) if output_tokens > 1 else None,
                    "decode_bound": tl.decode[0].bound if output_tokens > 1 else None,
                    "sequences_that_fit": fits, "gpu_memory (B)": float(tl.memory),
                    "weights (B)": float(tl.weight_bytes), "memory_for_kv_caches (B)": float(tl.memory_left),
                    **expected_numbers},
    }


LIMITS = {"compute": "the GPU's arithmetic is the limit",  # the one-line intuition of 2.4's "compute bound"
          "memory": "reading the weights and the cache from memory is the limit"}  # ... and of "memory bound"


def _token_caption(tl, token: int) -> str:
    """One line: when output token `token` is ready, which phase made it, and what limits that phase."""
    ready = _charts._seconds(tl.token_times[token - 1])
    if token == 1:
        return (f"Token 1 at {ready}: the prefill runs all {tl.batch:,} × {tl.prompt_tokens:,} prompt tokens in one "
                f"pass; {LIMITS[tl.prefill.bound]}.")
    step = tl.decode[token - 2]
    return (f"Token {token:,} at {ready}: decode step {token - 1:,} adds one token per sequence in "
            f"{_charts._seconds(step.time)}; {LIMITS[step.bound]}.")


_TIMELINES: dict = {}  # the last few timelines: stepping through the tokens only redraws


def _timeline(model, gpu, prompt_tokens, output_tokens, batch):
    key = (model, gpu, prompt_tokens, output_tokens, batch)
    if key not in _TIMELINES:
        config = shipped(model)
        context = config.max_position_embeddings
        if context is not None and prompt_tokens + output_tokens > context:
            raise FieldError("prompt_tokens", f"Prompt: {prompt_tokens:,} + {output_tokens:,} output tokens = "
                                              f"{prompt_tokens + output_tokens:,}, more than {model}'s context of "
                                              f"{context:,} tokens")
        tl = roofline.request_timeline(config, prompt_tokens, output_tokens, batch=batch, gpu=gpu)
        if len(_TIMELINES) >= 8:
            _TIMELINES.pop(next(iter(_TIMELINES)))
        _TIMELINES[key] = tl
    return _TIMELINES[key]
