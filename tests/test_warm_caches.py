"""The caches behind a fast warm redraw (scripts/bench_site.py) change no result.

A ModelConfig keeps what it computes from its fields (parameter counts, layer lists, layer groups);
the calculators keep parsed configs and results that the input a reader moves does not change. Each
test compares a cached answer with the same quantity worked out another way: per layer from the
public per-layer methods, on a fresh copy of the config, or with the cache bypassed.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from chapter2 import ssm
from chapter2.calculators import compute, compute_json
from chapter2.calculators import _gpus, _models, attention_opt, bottlenecks
from chapter2.models import ModelConfig, list_configs, list_family_configs, load_config

ALL = list_configs() + list_family_configs()
CONTEXTS = (1, 7, 100, 4096, 4097, 8192 + 3, 131072, 1_000_000)


def _fresh(config: ModelConfig) -> ModelConfig:
    """The same fields in a new object: nothing cached yet."""
    return dataclasses.replace(config)


@pytest.mark.parametrize("name", ALL)
def test_grouped_sums_equal_the_per_layer_sums(name):
    """kv_cache_bytes and attention_flops_per_token sum one term per group of alike layers; the per-layer
    definitions (tokens_held, attended_keys, each layer on its own) give the same integers."""
    c = load_config(name)
    limit = c.max_position_embeddings if c.is_encoder_decoder else None
    per_element = 2  # bf16
    for context in CONTEXTS:
        if limit and context > limit:
            continue
        tokens = sum(c.tokens_held(i, context) for i in range(c.num_hidden_layers))
        by_layer = (c._kv_per_attention_layer("absorbed") * tokens * per_element + c.state_bytes("bf16")
                    + c.cross_kv_bytes("bf16"))
        assert c.kv_cache_bytes(context, 1, "bf16") == by_layer
        keys = sum(c.attended_keys(i, context) for i in range(c.num_hidden_layers))
        cross = c.num_hidden_layers * c.encoder_positions if c.is_encoder_decoder else 0
        assert c.attention_flops_per_token(context) == c.attention_flops_per_key() * (keys + cross)


@pytest.mark.parametrize("name", ALL)
def test_cached_counts_equal_a_fresh_copys(name):
    c = load_config(name)
    first = (c.params(), c.param_breakdown(), c.kinds, c.attention_layers, c.state_layers, c.state_bytes("bf16"))
    again = (c.params(), c.param_breakdown(), c.kinds, c.attention_layers, c.state_layers, c.state_bytes("bf16"))
    fresh = _fresh(c)
    assert first == again
    assert first == (fresh.params(), fresh.param_breakdown(), fresh.kinds, fresh.attention_layers,
                     fresh.state_layers, fresh.state_bytes("bf16"))
    assert c == fresh and hash(c) == hash(fresh)  # the caches sit beside the fields, outside eq and hash


def test_a_replaced_config_does_not_inherit_the_caches():
    """ssm.stacks_of rebuilds a hybrid's mixing layers with dataclasses.replace: the rebuilt configs count
    their own layers, not the ones cached on the original."""
    hybrid = load_config(ssm.PRESET_CONFIGS["nemotron-3-nano"])
    hybrid.kv_cache_bytes(4096), hybrid.params(), hybrid.state_bytes()  # fill the caches first
    stacks = ssm.stacks_of(hybrid)
    attention, mamba = stacks["attention"], stacks["ssm"]
    assert attention.state_layers == () and len(attention.attention_layers) > len(hybrid.attention_layers)
    assert mamba.attention_layers == () and mamba.kv_cache_bytes(4096) == mamba.state_bytes()
    assert attention.kv_cache_bytes(4096) > hybrid.kv_cache_bytes(4096)


def test_shipped_configs_are_parsed_once_and_equal_a_fresh_read():
    assert _models.shipped("Llama-3.1-8B") is _models.shipped("Llama-3.1-8B")
    assert _models.shipped("Llama-3.1-8B") == load_config("Llama-3.1-8B")


def test_a_pasted_config_is_parsed_once_and_errors_still_name_the_field():
    text = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 1000,
                       "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
                       "num_attention_heads": 4, "num_key_value_heads": 2})
    a = _models.pick_model("Llama-3.1-8B", text)
    assert _models.pick_model("Llama-3.1-8B", text) is a
    assert a == ModelConfig.from_text(text, name="pasted config.json")
    for _ in range(2):  # a refused text is not cached as an answer
        out = json.loads(compute_json("kv_cache", json.dumps({"config_json": "{not json"})))
        assert out["ok"] is False and out["field"] == "config_json"


def test_remembered_lines_equal_a_fresh_computation():
    """The roofline's crossover lines are kept per input; with the memo bypassed (__wrapped__) they are the same,
    for a catalog GPU and for custom numbers (a new GPU object each time, compared by its figures)."""
    config = load_config("Llama-3.1-8B")
    for gpu in ("H100-SXM", "custom"):
        g = _gpus.pick_gpu(gpu, 500.0, 2.0, "fp16")
        for context in (1024, 4096):
            args = (config, context, g, "fp16", None, None)
            assert bottlenecks._critical(*args) == bottlenecks._critical.__wrapped__(*args)
        args = (config, g, "fp16", "last", None, None)
        assert bottlenecks._crossover(*args) == bottlenecks._crossover.__wrapped__(*args)
    slow = _gpus.pick_gpu("custom", 100.0, 2.0, "fp16")
    fast = _gpus.pick_gpu("custom", 2000.0, 2.0, "fp16")
    assert bottlenecks._critical(config, 4096, slow, "fp16") != bottlenecks._critical(config, 4096, fast, "fp16")


def test_calculator_outputs_are_the_callers_own():
    """Charts kept between calls come back as new data each time: changing one result leaves the next intact."""
    for name, raw in (("hybrid_cost", {"share": "40"}), ("activations", {"x": "2.5"})):
        first = compute(name, raw)
        chart = next(v for v in first.values() if isinstance(v, dict))
        chart["series"][0]["y"][0] = -1.0
        chart["series"].clear()
        assert compute(name, raw) != first
        assert compute(name, raw) == compute(name, raw)
    assert attention_opt.hybrid_cache_chart("nemotron-3-nano", 1000, "bf16")["series"]
