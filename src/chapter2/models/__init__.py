"""Models (chapter section 2.2): config.json arithmetic and a tiny decoder-only transformer.

- `config`: `ModelConfig` (parameters, KV cache bytes, FLOPs per token) and
  `describe_architecture` ("Qwen3MoeForCausalLM" -> Qwen3, MoE, causal LM).
- `load_config(name)` / `list_configs()`: real config.json files of published
  models, shipped in `chapter2/data/configs/` (each with its `_source` URL).
- `transformer`: the numpy reference model (prefill, decode, KV cache,
  `load_pretrained` of a Hugging Face checkpoint, `generate`).
- `TINY_LM_DIR`: the folder of the shipped tiny model.

The same model in PyTorch is `chapter2.host.torch_model` (needs torch).

Only numpy and the stdlib are imported here, so this runs in Pyodide.
"""

from __future__ import annotations

from pathlib import Path

from .config import Architecture, ModelConfig, ParamCount, describe_architecture

__all__ = ["ModelConfig", "ParamCount", "Architecture", "describe_architecture", "load_config", "list_configs",
           "CONFIG_DIR", "TINY_LM_DIR"]

# Paths next to the package (not importlib.resources): `chapter2/data` is not a
# package, and a pure-Python wheel installed in Pyodide unpacks to real files.
CONFIG_DIR = Path(__file__).resolve().parent.parent / "data" / "configs"
# The shipped tiny model (config.json, model.safetensors, tokenizer.json; trained by
# scripts/train_tiny_lm.py). The one place its folder is named: everything else imports it.
TINY_LM_DIR = Path(__file__).resolve().parent.parent / "data" / "tiny_lm"


def list_configs() -> list[str]:
    """Names of the shipped configs, e.g. ['DeepSeek-V3', 'Llama-3.1-8B', ...] (sorted)."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.json"))


def load_config(name: str) -> ModelConfig:
    """The shipped config of model `name` (a Hugging Face repo name such as "Qwen3-235B-A22B")."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a model name string, got {type(name).__name__}")
    known = list_configs()
    if name not in known:
        raise ValueError(f"name must be one of the shipped configs {known}, got {name!r}")
    return ModelConfig.from_json(CONFIG_DIR / f"{name}.json")
