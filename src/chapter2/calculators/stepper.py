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

from .. import hardware, roofline, stepper
from ..format import nbytes, si
from ..models import list_configs
from ._models import shipped
from . import _charts
from ._registry import Field, FieldError, Output, calculator

MAX_STEPS = 24  # a table that fits on a page, and well under 200 ms in CPython
MAX_PROMPT_CHARS = 400
SEED = 0  # draws at temperature > 0 are reproducible: numpy default_rng(0)


@calculator(
    "prefill_decode",
    title="Prefill, then decode: the tiny model one token at a time",
    fields=[
        Field("prompt", "Prompt", "The KV cache stores the keys and values", kind="text", max=MAX_PROMPT_CHARS,
              help="any text; the tiny model was trained on this site's pages"),
        Field("n_steps", "Decode steps", 0, kind="range", min=0, max=MAX_STEPS, step=1, integer=True, stepper=True,
              help="0 is the prefill: the whole prompt in one pass"),
        Field("temperature", "Temperature", 0.0, kind="range", min=0, max=2, step=0.05,
              help="0 = greedy; above 0, seeded draws"),
    ],
    outputs=[
        Output("text", "Prompt and generated text (a tiny model trained on this site's pages: its text is nonsense; "
                       "the point is the cache)", free_text=True),
        Output("step", "This forward pass", free_text=True),
        Output("cache", "KV cache after the last step"),
        Output("top", "Last step: the model's five likeliest next tokens", kind="bars"),
        Output("grid", "The KV cache after the last step: layers x positions", kind="chart", chart=_charts.KV_GRID),
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
        "text": stepper.generated_text(tokenizer, steps),
        "step": line,
        "cache": (f"{last.cache_length} tokens x {per_token:,} B/token = {nbytes(last.cache_bytes)} "
                  f"({model.dtype.name} here; {nbytes(served)} in bf16, as served)"),
        "top": [[repr(c.text), c.prob] for c in last.top],
        "grid": _charts.kv_grid_chart(steps, tokenizer, model.config.num_hidden_layers, per_token, MAX_STEPS),
    }


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

MAX_OUTPUT = 2048  # output tokens: one roofline decode estimate each, well under 0.2 s in CPython
GPU_OPTIONS = tuple((key, gpu.name) for key, gpu in hardware.GPUS.items())


@calculator(
    "request_timeline",
    title="A request on a timeline: prefill, then one decode step per output token",
    fields=[
        Field("model", "Model (config.json)", "Llama-3.1-8B", kind="select",
              options=tuple((name, name) for name in list_configs())),
        Field("gpu", "GPU", "H100-SXM", kind="select", options=GPU_OPTIONS),
        Field("prompt_tokens", "Prompt (tokens)", 2048, min=1, max=1_000_000, integer=True),
        Field("output_tokens", "Output (tokens)", 256, min=1, max=MAX_OUTPUT, integer=True),
        Field("batch", "Batch (sequences decoded together)", 8, min=1, max=4096, integer=True),
        Field("token", "Output token", 1, kind="range", min=1, max=MAX_OUTPUT, step=1, integer=True, stepper=True,
              max_from="output_tokens", help="1 is the prefill's token"),
    ],
    outputs=[
        Output("chart", "The request over time, and the batch's KV cache", kind="chart", chart=_charts.TIMELINE),
        Output("ttft", "Time to first token (the prefill)"),
        Output("tpot", "Time per output token (a decode step)"),
        Output("now", "At this output token"),
        Output("capacity", "Sequences the GPU's memory holds at this context"),
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
        tpot = (f"{_charts._seconds(first.time)} at the first decode step, {_charts._seconds(last.time)} at the last "
                f"({first.bound} bound: each step reads {nbytes(first.weight_bytes)} of weights, all but the "
                f"embedding table it only looks up, and the batch's KV cache, {nbytes(first.kv_bytes)} to "
                f"{nbytes(last.kv_bytes)})")
    else:
        tpot = "no decode step: the prefill gives the only output token"
    fits = tl.capacity(ctx)
    return {
        "chart": _charts.timeline_chart(tl, token),
        "ttft": (f"{_charts._seconds(tl.ttft)}: one pass over {batch:,} x {prompt_tokens:,} prompt tokens, "
                 f"{pre.bound} bound ({si(pre.flops, 'FLOP')} at {si(g.peak_flops(pre.dtype), 'FLOP/s')})"),
        "tpot": tpot,
        "now": (f"token {token:,} of {output_tokens:,}, ready at {_charts._seconds(tl.token_times[token - 1])}; "
                f"each sequence's KV cache holds {ctx:,} tokens ({nbytes(per_seq)}), the batch's "
                f"{nbytes(tl.kv_bytes[token - 1])}"),
        "capacity": (f"{fits:,} sequences: {nbytes(tl.memory)} − {nbytes(tl.weight_bytes)} of weights = "
                     f"{nbytes(tl.memory_left)} for KV caches, {nbytes(per_seq)} per sequence at {ctx:,} tokens"
                     f"{'' if fits >= batch else f'; the batch of {batch:,} does not fit'}"),
    }


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
