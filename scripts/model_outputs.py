"""Every number the model readers give, as text: run it before and after a refactor and compare the files byte for byte.

    .venv/bin/python scripts/model_outputs.py > /tmp/before.txt        # on the old code
    .venv/bin/python scripts/model_outputs.py > /tmp/after.txt         # on the new code
    cmp /tmp/before.txt /tmp/after.txt

One line per quantity, `section | what | value` (values as `repr`, errors as `ERROR Type: message`), for:

- every shipped config.json (`chapter2.models.list_configs()` and `list_family_configs()`): its fields, the
  parameter counts and breakdown, the cache (per token, at seven contexts, per layer kind, the fixed state) in
  several dtypes and both MLA forms, every FLOP count, the per-layer answers (kind, window, tokens held, keys
  attended, state), and the calculators' and the block diagram's names and drawing data;
- a config naming only its class (or only its model_type) for every supported class: the families' defaults;
- each shipped config with one key changed to a bad or other value (null, -1, 0, a string, a fraction, a bool,
  a list; booleans flipped): the counts it then gives, or the error's type and wording;
- the registry (`FAMILIES`), `describe_architecture`, `ModelConfig.from_numbers`, the readers' refusals of text;
- the views built on the model reader (`ssm.HybridConfig`, `moe.MoeSpec`, `roofline`);
- every published denoiser and text encoder (`chapter2.denoiser`, `chapter2.text_encoder`), with the same
  bad-value sweep over their config keys.

Sections are independent: `--only models,calculators` prints some (names: see SECTIONS). Only public names are
used, so the same script runs on both sides of a refactor that keeps the public API.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from chapter2 import models
from chapter2.models import FAMILIES, ModelConfig, describe_architecture

CONTEXTS = (1, 7, 448, 4097, 32768, 131072, 1_000_003)
DTYPES = ("bf16", "fp8", "fp4", "fp32")
MLA = ("absorbed", "expanded")
BAD_VALUES = (None, -1, 0, "x", 2.5, True, [1], {"a": 1})
# every field ModelConfig had when this script was written: read by name, so a field turned into a property reads alike
FIELDS = (
    "name", "architecture", "model_type", "family", "task", "vocab_size", "hidden_size", "intermediate_size",
    "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "max_position_embeddings",
    "rms_norm_eps", "rope_theta", "rope_scaling", "tie_word_embeddings", "qkv_bias", "o_bias", "mlp_bias", "qk_norm",
    "qk_norm_all_heads", "sliding_window", "sliding_window_layers", "layer_types", "attention_chunk_size",
    "attention_sinks", "norms_per_layer", "norm_bias", "lm_head_bias", "num_experts", "num_experts_per_tok",
    "experts_per_tok_by_layer", "moe_intermediate_size", "norm_topk_prob", "moe_layers", "ffn_free_layers",
    "mlp_gated", "attn_output_gate", "mlp_act_params", "mlp_widths", "per_layer_input_size", "per_layer_vocab_size",
    "altup_inputs", "laurel_rank", "kv_shared_layers", "activation_sparsity", "mamba_num_heads", "mamba_head_dim",
    "ssm_state_size", "n_groups", "mamba_bias", "mamba_norm", "mamba_out_bias", "mamba_d_inner", "mamba_dt_rank",
    "mamba_dt_norms", "parallel_state", "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
    "linear_value_head_dim", "conv_kernel", "conv_bias", "state_dtype", "shared_expert_intermediate_size",
    "shared_expert_gate", "router_bias", "expert_bias", "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
    "qk_nope_head_dim", "v_head_dim", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim",
    "encoder_positions", "num_mel_bins", "source", "family_label", "wrapper", "vision_params", "vision_defaulted",
    "towers_uncounted", "defaulted", "param_counts")
DERIVED = ("is_moe", "uses_mla", "gqa_group", "kinds", "attention_layers", "cached_layers", "state_layers",
           "is_hybrid", "is_encoder_decoder", "context_limit", "routed_experts_per_token",
           "per_layer_embedding_params")


def out(section: str, what: str, value) -> None:
    print(f"{section} | {what} | {value}")


def attempt(fn, *args, **kwargs):
    """fn's answer as text, or the error it raised (type and message)."""
    try:
        value = fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 (an error is an output like any other)
        return f"ERROR {type(err).__name__}: {err}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return repr(value)
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, default=repr)
    return repr(value)


def shipped() -> list[tuple[str, dict]]:
    names = [(models.CONFIG_DIR, n) for n in models.list_configs()]
    names += [(models.FAMILY_CONFIG_DIR, n) for n in models.list_family_configs()]
    return [(n, json.loads((folder / f"{n}.json").read_text())) for folder, n in names]


def model_numbers(section: str, c: ModelConfig, contexts=CONTEXTS, per_layer: bool = True) -> None:
    """Everything a ModelConfig answers, at `contexts`."""
    for name in FIELDS:
        out(section, f"field {name}", attempt(getattr, c, name))
    for name in DERIVED:
        out(section, f"derived {name}", attempt(getattr, c, name))
    p = attempt(c.params)
    out(section, "params", p)
    if not p.startswith("ERROR"):
        params = c.params()
        out(section, "params non_embedding", params.non_embedding)
        out(section, "params active_without_lookup", params.active_without_lookup)
    out(section, "param_breakdown", attempt(c.param_breakdown))
    for name in ("encoder_params", "state_flops_per_token", "altup_flops_per_token", "encoder_flops", "cross_kv_flops"):
        out(section, name, attempt(getattr(c, name)))
    for mla in MLA:
        out(section, f"kv_cache_elements_per_token mla={mla}", attempt(c.kv_cache_elements_per_token, mla=mla))
        out(section, f"attention_flops_per_key mla={mla}", attempt(c.attention_flops_per_key, mla))
        for dtype in DTYPES:
            out(section, f"kv_cache_bytes_per_token {dtype} mla={mla}", attempt(c.kv_cache_bytes_per_token, dtype, mla))
    for dtype in DTYPES:
        out(section, f"weights_bytes {dtype}", attempt(c.weights_bytes, dtype))
        out(section, f"cross_kv_bytes {dtype}", attempt(c.cross_kv_bytes, dtype))
        for state_dtype in (None, "bf16", "fp32"):
            out(section, f"state_bytes {dtype} {state_dtype}", attempt(c.state_bytes, dtype, state_dtype))
    for context in contexts:
        for mla in MLA:
            tag = f"context={context} mla={mla}"
            out(section, f"flops_per_token {tag}", attempt(c.flops_per_token, context, mla))
            out(section, f"prefill_flops {tag}", attempt(c.prefill_flops, context, mla))
            out(section, f"attention_flops_per_token {tag}", attempt(c.attention_flops_per_token, context, mla))
            out(section, f"prefill_attention_flops {tag}", attempt(c.prefill_attention_flops, context, mla))
            for dtype in ("bf16", "fp4"):
                out(section, f"kv_cache_bytes {tag} {dtype}", attempt(c.kv_cache_bytes, context, 1, dtype, mla))
                out(section, f"kv_cache_breakdown {tag} {dtype}", attempt(c.kv_cache_breakdown, context, dtype, mla))
        out(section, f"kv_cache_bytes context={context} batch=3 fp8 state=bf16",
            attempt(c.kv_cache_bytes, context, 3, "fp8", "absorbed", "bf16"))
    if not per_layer:
        return
    layers = attempt(lambda: range(c.num_hidden_layers))
    if layers.startswith("ERROR"):
        return
    for i in range(c.num_hidden_layers):
        row = [attempt(c.state_kind, i), attempt(c.state_elements, i), attempt(c.window_of, i),
               attempt(c.experts_per_tok_of, i), attempt(c.kv_cache_elements_per_token, i),
               attempt(c.kv_cache_elements_per_token, i, "expanded")]
        row += [attempt(c.tokens_held, i, n) for n in contexts] + [attempt(c.attended_keys, i, n) for n in contexts]
        out(section, f"layer {i}", " ; ".join(row))


def summary(c: ModelConfig) -> str:
    """A few numbers that most fields reach: the counts, the cache and FLOPs at one context."""
    return " ; ".join([attempt(c.params), attempt(c.param_breakdown), attempt(c.kv_cache_bytes, 4097),
                       attempt(c.kv_cache_breakdown, 4097), attempt(c.flops_per_token, 4097),
                       attempt(c.prefill_flops, 300), attempt(getattr, c, "defaulted"),
                       attempt(getattr, c, "layer_types"), attempt(getattr, c, "moe_layers"),
                       attempt(getattr, c, "vision_params")])


def variants(raw: dict):
    """(what, config) pairs: `raw` with one key (at the top level or in a sub-config) changed."""
    for key, value in raw.items():
        if key.startswith("_"):
            continue
        for bad in BAD_VALUES + ((not value,) if isinstance(value, bool) else ()):
            yield f"{key}={bad!r}", {**raw, key: bad}
        if isinstance(value, dict):
            for sub, sub_value in value.items():
                for bad in BAD_VALUES + ((not sub_value,) if isinstance(sub_value, bool) else ()):
                    yield f"{key}.{sub}={bad!r}", {**raw, key: {**value, sub: bad}}
        yield f"without {key}", {k: v for k, v in raw.items() if k != key}


def section_models() -> None:
    for name, raw in shipped():
        model_numbers(f"model {name}", models.load_config(name))
        out(f"model {name}", "from_hf equals load_config",
            attempt(lambda raw=raw, name=name: ModelConfig.from_hf(raw, name=name) == models.load_config(name)))


def section_defaults() -> None:
    for fam in FAMILIES:
        for cls in fam.classes:
            config = attempt(ModelConfig.from_hf, {"architectures": [cls]})
            out(f"default {cls}", "config", "ok" if not config.startswith("ERROR") else config)
            if not config.startswith("ERROR"):
                model_numbers(f"default {cls}", ModelConfig.from_hf({"architectures": [cls]}), (1, 4097, 131072),
                              per_layer=False)
    types = sorted({f.model_type for f in FAMILIES} | {"gemma3", "llama4", "kimi_k2", "qwen3_5", "qwen3_5_moe",
                                                      "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "mistral3", "gemma3n",
                                                      "bert", "", "LLAMA"})
    for model_type in types:
        raw = {"model_type": model_type}
        config = attempt(ModelConfig.from_hf, raw)
        if config.startswith("ERROR"):
            out(f"model_type {model_type!r}", "config", config)
        else:
            c = ModelConfig.from_hf(raw)
            out(f"model_type {model_type!r}", "class and summary", f"{c.architecture} ; {c.family_label} ; {summary(c)}")


def section_variants() -> None:
    for name, raw in shipped():
        for what, changed in variants(raw):
            config = attempt(ModelConfig.from_hf, changed, name=name)
            out(f"variant {name}", what, config if config.startswith("ERROR") else summary(ModelConfig.from_hf(changed)))


def section_registry() -> None:
    for fam in FAMILIES:
        out("family", fam.label, json.dumps([fam.model_type, list(fam.classes), fam.config_class, fam.defaults,
                                             [list(a) for a in fam.aliases], fam.examples], default=repr))
        for cls in fam.classes:
            out("describe_architecture", cls, attempt(describe_architecture, cls))
    for name in ("Qwen3MoeForCausalLM", "GPT2LMHeadModel", "BertModel", "T5ForConditionalGeneration", "llama", 3,
                 "DbrxForCausalLM", "Ernie4_5_ForCausalLM"):
        out("describe_architecture", repr(name), attempt(describe_architecture, name))
    for args in (("toy", 8e9, 8e9, 32, 32, 8, 128), ("toy", 100e9, 10e9, 40, 64, 8, 128, 64, 8),
                 ("toy", 8e9, 9e9, 32, 32, 8, 128), ("toy", 8e9, 8e9, 32, 30, 8, 128), ("toy", 8e9, 8e9, 0, 32, 8, 128),
                 ("toy", 8e9, 8e9, 32, 32, 8, 128, 4, 8), (3, 8e9, 8e9, 32, 32, 8, 128)):
        config = attempt(ModelConfig.from_numbers, *args)
        out("from_numbers", repr(args), config if config.startswith("ERROR") else "ok")
        if not config.startswith("ERROR"):
            model_numbers(f"from_numbers {args!r}", ModelConfig.from_numbers(*args), (1, 4097, 131072))
    for text in ("{", "[1, 2]", "{}", '{"architectures": []}', '{"architectures": "LlamaForCausalLM"}',
                 '{"architectures": [3]}', '{"architectures": ["BertForMaskedLM"]}',
                 '{"architectures": ["NotAClass"]}', '{"architectures": ["whatever"]}',
                 '{"architectures": ["T5ForConditionalGeneration"]}', '{"model_type": 3}'):
        out("from_text", text, attempt(ModelConfig.from_text, text))
    out("from_text", "not a str", attempt(ModelConfig.from_text, b"{}"))
    out("from_hf", "not a dict", attempt(ModelConfig.from_hf, [1]))
    out("from_json", "missing", attempt(ModelConfig.from_json, "/nonexistent/config.json"))
    out("load_config", "missing", attempt(models.load_config, "no-such-model"))
    out("load_config", "not a str", attempt(models.load_config, 3))


def section_calculators() -> None:
    """What the calculators and the block diagram show of each config (their names for each layer kind and part)."""
    from chapter2.calculators import compute
    from chapter2.calculators import _models, model_diagram

    out("calculators", "KIND_NAMES", json.dumps(_models.KIND_NAMES, sort_keys=True))
    out("calculators", "PART_NAMES", json.dumps(model_diagram.PART_NAMES, sort_keys=True))
    from chapter2.models import config as config_module
    for name in ("LAYER_KINDS", "STATE_KINDS", "MLA_FORMS"):
        out("models.config", name, attempt(getattr, config_module, name))
    for name, raw in shipped():
        c = models.load_config(name)
        out(f"diagram {name}", "block_diagram", attempt(model_diagram.block_diagram, c))
        out(f"diagram {name}", "layer_parts", attempt(lambda c=c: [model_diagram.layer_parts(c, i)
                                                                   for i in range(c.num_hidden_layers)]))
        text = json.dumps(raw)
        for calc, extra in (("model_config", {}), ("kv_cache", {"context": "4097", "batch": "2"}),
                            ("model_diagram", {})):
            out(f"calculator {name}", calc, attempt(compute, calc, {"config_json": text, **extra}))


def section_views() -> None:
    from chapter2 import moe, roofline, ssm

    for key, preset in ssm.HYBRID_PRESETS.items():
        out("ssm preset", key, repr(preset))
        for context in (1, 4097, 131072):
            out("ssm mixing_cost", f"{key} {context}", attempt(ssm.mixing_cost, preset, context))
            out("ssm mixing_cost decode", f"{key} {context}", attempt(ssm.mixing_cost, preset, context, phase="decode"))
            out("ssm compare", f"{key} {context}", attempt(ssm.compare_architectures, preset, context, window=4096))
    for name, _ in shipped():
        c = models.load_config(name)
        out("ssm from_model", name, attempt(ssm.HybridConfig.from_model, c))
        stacks = attempt(ssm.stacks_of, c)
        if stacks.startswith("ERROR"):
            out("ssm stacks_of", name, stacks)
        else:
            for key, stack in ssm.stacks_of(c).items():
                out("ssm stacks_of", f"{name} {key}", " ; ".join(attempt(stack.kv_cache_bytes, n)
                                                                 for n in (1, 4097, 131072)))
        out("moe spec", name, attempt(moe.MoeSpec.from_config, c))
        out("roofline prefill", name, attempt(roofline.prefill, c, 4096))
        out("roofline decode", name, attempt(roofline.decode, c, 4096, batch=8))
    for name in ("QWEN3_235B_A22B", "MIXTRAL_8X7B"):  # in chapter2.moe before issue 30, chapter2.models since
        out("moe presets", name, repr(getattr(moe, name, None) or getattr(models, name)))


def _denoiser_summary(raw: dict, frames: int) -> tuple:
    from chapter2.denoiser import Denoiser

    d = Denoiser.from_diffusers(raw)
    return d.params().total, d.pass_cost(1024, 1024, frames)


def _vae_summary(raw: dict) -> tuple:
    from chapter2.denoiser import vae_decoder

    d = vae_decoder(raw)
    return d.params(), d.pass_flops(1024, 1024)


def _encoder_summary(raw: dict) -> tuple:
    from chapter2.text_encoder import TextEncoder

    e = TextEncoder.from_transformers(raw)
    return e.params, e.flops(77)


def section_diffusion() -> None:
    """Every published denoiser, VAE and text encoder: parameters by part and FLOPs; then the bad-value sweep."""
    from importlib import resources

    from chapter2 import denoiser, text_encoder

    folder = resources.files("chapter2").joinpath("data", "diffusion")
    for name in denoiser.PUBLISHED:
        raw = denoiser.published_config(name)
        d = denoiser.Denoiser.from_diffusers(raw)
        out(f"denoiser {name}", "params", repr(d.params()))
        out(f"denoiser {name}", "shape", repr((d.class_name, d.vae_spatial, d.vae_temporal, d.patch,
                                                d.latent_channels, d.text_tokens, d.levels)))
        frames = 1 if d.vae_temporal == 1 else 1 + 2 * d.vae_temporal
        for side in (256, 512, 1024):
            out(f"denoiser {name}", f"pass_cost {side} {frames}", attempt(d.pass_cost, side, side, frames))
        for what, changed in variants(raw):
            out(f"denoiser variant {name}", what, attempt(_denoiser_summary, changed, frames))
    for path in sorted(folder.joinpath("vae").iterdir(), key=lambda p: p.name):
        raw = json.loads(path.read_text())
        out(f"vae {path.name}", "decoder", attempt(_vae_summary, raw))
        for what, changed in variants(raw):
            out(f"vae variant {path.name}", what, attempt(_vae_summary, changed))
    for path in sorted(folder.joinpath("text_encoders").iterdir(), key=lambda p: p.name):
        raw = json.loads(path.read_text())
        e = text_encoder.TextEncoder.from_transformers(raw)
        out(f"text encoder {path.name}", "params and flops", f"{e.architecture} ; {e.params} ; {e.flops(77)} ; "
                                                             f"{e.flops(512)}")
        for what, changed in variants(raw):
            out(f"text encoder variant {path.name}", what, attempt(_encoder_summary, changed))


SECTIONS = {"models": section_models, "defaults": section_defaults, "variants": section_variants,
            "registry": section_registry, "calculators": section_calculators, "views": section_views,
            "diffusion": section_diffusion}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {list(SECTIONS)}")
    args = parser.parse_args(argv)
    for name in args.only.split(","):
        SECTIONS[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main())
