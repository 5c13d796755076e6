"""Models (chapter section 2.2): config.json arithmetic and a tiny decoder-only transformer.

- `config`: `ModelConfig` (parameters, KV cache bytes, FLOPs per token), a tuple of parts (`parts`,
  `layers/`: one class per kind of layer); `describe_architecture` ("Qwen3MoeForCausalLM" -> Qwen3, MoE,
  causal LM, `architecture`); `FAMILIES` (`families/`, one entry per family, in files by shape) lists the
  model classes it reads exactly, `reader` reads a config.json by them.
- `load_config(name)` / `list_configs()`: real config.json files of published
  models, shipped in `chapter2/data/configs/` (each with its `_source` URL);
  `list_family_configs()`: one more real config per supported family, in
  `chapter2/data/configs/families/`, whose published totals the tests check.
- `transformer`: the numpy reference model (prefill, decode, KV cache,
  `load_pretrained` of a Hugging Face checkpoint, `generate`).
- `TINY_LM_DIR`: the folder of the shipped tiny model.

The same model in PyTorch is `chapter2.host.torch_model` (needs torch).

Only numpy and the stdlib are imported here, so this runs in Pyodide.
"""

from __future__ import annotations

from pathlib import Path

from ..moe import MoeSpec
from .config import FAMILIES, Architecture, Family, KVGroup, ModelConfig, ParamCount, ParamPart, describe_architecture

__all__ = ["ModelConfig", "ParamCount", "ParamPart", "KVGroup", "Architecture", "Family", "FAMILIES",
           "describe_architecture", "load_config", "list_configs", "list_family_configs", "CONFIG_DIR",
           "FAMILY_CONFIG_DIR", "TINY_LM_DIR", "QWEN3_235B_A22B", "MIXTRAL_8X7B"]

# Paths next to the package (not importlib.resources): `chapter2/data` is not a
# package, and a pure-Python wheel installed in Pyodide unpacks to real files.
CONFIG_DIR = Path(__file__).resolve().parent.parent / "data" / "configs"
FAMILY_CONFIG_DIR = CONFIG_DIR / "families"
# The shipped tiny model (config.json, model.safetensors, tokenizer.json; trained by
# scripts/train_tiny_lm.py). The one place its folder is named: everything else imports it.
TINY_LM_DIR = Path(__file__).resolve().parent.parent / "data" / "tiny_lm"


def list_configs() -> list[str]:
    """Names of the configs the site compares (page table, calculators), e.g. ['DeepSeek-V3', ...] (sorted)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


def list_family_configs() -> list[str]:
    """Names of the extra real configs, one per supported family not covered by `list_configs()` (sorted)."""
    return sorted(p.stem for p in FAMILY_CONFIG_DIR.glob("*.json"))


def load_config(name: str) -> ModelConfig:
    """The shipped config of model `name` (a Hugging Face repo name such as "Qwen3-235B-A22B").

    Looks in `list_configs()` and then in `list_family_configs()`.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a model name string, got {type(name).__name__}")
    for folder in (CONFIG_DIR, FAMILY_CONFIG_DIR):
        if name in {p.stem for p in folder.glob("*.json")}:
            return ModelConfig.from_json(folder / f"{name}.json")
    raise ValueError(f"name must be one of the shipped configs {list_configs() + list_family_configs()}, got {name!r}")


# The MoE part of two shipped configs (`chapter2.moe.MoeSpec`, a view), section 2.2.4's examples.
# https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json (hidden_size 4096, moe_intermediate_size 1536,
# num_experts 128, num_experts_per_tok 8, num_hidden_layers 94, norm_topk_prob true, every layer MoE);
# Qwen3 Technical Report, arXiv:2505.09388, Table 2 (94 layers, 128 experts, 8 activated).
QWEN3_235B_A22B = MoeSpec.from_config(load_config("Qwen3-235B-A22B"))
# https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json (hidden_size 4096,
# intermediate_size 14336, num_local_experts 8, num_experts_per_tok 2, num_hidden_layers 32);
# Jiang et al. 2024, "Mixtral of Experts", arXiv:2401.04088 (softmax over the top-2 logits).
MIXTRAL_8X7B = MoeSpec.from_config(load_config("Mixtral-8x7B-v0.1"), "Mixtral-8x7B")
