"""The rules several model families share (section 2.2): which layers slide, which layers route among experts.

A layout rule takes a reader of the (text) config and the number of layers, and returns the kind of every
layer (transformers' `layer_types` names, or a recurrent kind of `layers/`), the sliding window and the
attention chunk, as the family's transformers classes decide them; a rule whose config class may list
`layer_types` reads that list first (`given`). An expert rule takes the reader, the family, the number of
layers and the dense MLP width, and returns the mixture-of-experts fields (`ModelConfig.num_experts`,
`moe_layers`, ...). A rule only one family uses sits next to that family (`families/`).

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

from functools import wraps

from ..config_reader import ConfigReader

__all__ = ["rule", "full", "one_window", "qwen", "qwen_window", "alternating", "alternate", "no_rope_layers", "every_layer",
           "qwen_experts", "period"]


def rule(fn):
    """A rule reads a config only through a `ConfigReader` (`r`): anything else is refused by name."""
    if not callable(fn):
        raise TypeError(f"fn must be a rule (a function of a config reader), got {type(fn).__name__}")
    @wraps(fn)
    def checked(r, *args, **kwargs):
        if not isinstance(r, ConfigReader):
            raise TypeError(f"r must be a config reader (chapter2.config_reader.ConfigReader), got {type(r).__name__}")
        return fn(r, *args, **kwargs)

    return checked


# -- layer layouts: (reader, layers) -> (kind per layer, sliding window, attention chunk)


@rule
def full(r, layers: int) -> tuple:
    """Every layer attends to the whole context."""
    return ["full_attention"] * layers, None, None


@rule
def one_window(r, layers: int) -> tuple:
    """One window for every layer, if set (Mistral, Mixtral, Phi-3)."""
    window = r.int("sliding_window", optional=True, null_is_value=True)
    return ["sliding_attention" if window else "full_attention"] * layers, window, None


@rule
def qwen_window(r) -> int | None:
    """The Qwen configs' window: `sliding_window` when `use_sliding_window`, else none."""
    on = r.bool("use_sliding_window")
    return r.int("sliding_window", optional=True, null_is_value=True) if on else None


@rule
def qwen(r, layers: int) -> tuple:
    """Qwen2, Qwen3: `layer_types`, else sliding from layer `max_window_layers` on, when `use_sliding_window`."""
    given = r.layer_types(layers)
    window = qwen_window(r)
    if given is not None:
        return given, window, None
    start = r.int("max_window_layers", zero=True)
    return ["sliding_attention" if window and i >= start else "full_attention" for i in range(layers)], window, None


@rule
def alternate(r, layers: int, given, every: int) -> tuple:
    """`given` (a listed layer_types), else one full layer in `every`, the others sliding."""
    window = r.int("sliding_window", optional=True, null_is_value=True)
    if given is not None:
        return given, window, None
    return ["sliding_attention" if (i + 1) % every else "full_attention" for i in range(layers)], window, None


@rule
def alternating(r, layers: int) -> tuple:
    """Gemma 2, gpt-oss: `layer_types`, else one full layer in two, the others sliding."""
    return alternate(r, layers, r.layer_types(layers), 2)


@rule
def no_rope_layers(r, layers: int) -> list:
    """Llama 4's and SmolLM3's `no_rope_layers` (1: a RoPE layer, 0: a NoPE layer), else every
    `no_rope_layer_interval`-th layer without RoPE."""
    value = r.int_list("no_rope_layers", low=0, high=1)
    if value:  # an empty list means "use the interval", as in transformers
        if len(value) != layers:
            raise ValueError(f"{r.name('no_rope_layers')} must have one entry per layer ({layers}), got {len(value)}")
        return value
    every = r.int("no_rope_layer_interval")
    return [int((i + 1) % every != 0) for i in range(layers)]


@rule
def period(r, period_key: str, offset_key: str) -> tuple[int, int]:
    """A (period, offset) pair: layer i is chosen when i % period == offset (offset < period)."""
    every, offset = r.int(period_key), r.int(offset_key, zero=True)
    if offset >= every:
        raise ValueError(f"{r.name(offset_key)} ({offset}) must be smaller than {period_key} ({every})")
    return every, offset


# -- experts: (reader, family, layers, dense width) -> mixture-of-experts fields


@rule
def every_layer(r, fam, layers: int, intermediate: int) -> dict:
    """Every layer routes among full-width experts (Mixtral, Phi-3.5-MoE, GraniteMoE, gpt-oss, OLMoE, MiniMax)."""
    return dict(num_experts=r.int(fam.experts_key), num_experts_per_tok=r.int("num_experts_per_tok"),
                moe_intermediate_size=intermediate, moe_layers=tuple(range(layers)))


@rule
def qwen_experts(r, fam, layers: int, intermediate: int) -> dict:
    """Qwen2-MoE, Qwen3-MoE, Qwen3-VL-MoE, Qwen3-Next: every `decoder_sparse_step`-th layer not in `mlp_only_layers`;
    with the family's `shared_expert_gate`, a gated shared expert beside them."""
    experts = r.int("num_experts", zero=True)
    step = r.int("decoder_sparse_step")
    dense = set(r.int_list("mlp_only_layers", low=0, high=layers - 1) or ())
    out = dict(num_experts=experts, num_experts_per_tok=r.int("num_experts_per_tok"),
               moe_intermediate_size=r.int("moe_intermediate_size"),
               moe_layers=tuple(i for i in range(layers) if experts and i not in dense and (i + 1) % step == 0))
    if fam.shared_expert_gate:
        out["shared_expert_intermediate_size"] = r.int("shared_expert_intermediate_size", zero=True)
    return out
