"""What an architecture class name says (chapter section 2.2.1): "Qwen3MoeForCausalLM" -> family Qwen3, MoE, causal LM.

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Architecture", "describe_architecture"]

# The head class after "For" says what the model was trained to do.
_TASKS = {
    "CausalLM": "causal language modeling",
    "MaskedLM": "masked language modeling",
    "ConditionalGeneration": "conditional generation",
    "SequenceClassification": "sequence classification",
    "TokenClassification": "token classification",
    "QuestionAnswering": "question answering",
}

# Class-name stems whose display name is not the stem itself, or which are
# mixtures of experts without "Moe" at the end of the stem.
_NAMES = {
    "Mixtral": ("Mixtral", True),
    "DeepseekV2": ("DeepSeek-V2", True),
    "DeepseekV3": ("DeepSeek-V3", True),
    "Dbrx": ("DBRX", True),
    "GptOss": ("gpt-oss", True),
    "Phimoe": ("Phi-MoE", True),
    "Olmoe": ("OLMoE", True),
    "Llama4": ("Llama4", True),
    "Ernie4_5_": ("Ernie4_5", True),
}


@dataclass(frozen=True)
class Architecture:
    """What an architecture class name says: `family`, `is_moe`, `task`."""

    name: str
    family: str
    is_moe: bool
    task: str


def describe_architecture(name: str) -> Architecture:
    """Read a transformers class name such as "Qwen3MoeForCausalLM".

    The name is `<Family>[Moe]For<Task>` (or `<Family>Model`, a bare backbone
    with no head; or GPT-2's `<Family>LMHeadModel`, a causal LM). "Moe" marks a
    mixture of experts model; a few MoE families (Mixtral, DeepSeek-V2/V3, DBRX,
    gpt-oss, Phi-MoE, OLMoE, Llama 4) are known by name. This reads the name
    only; `ModelConfig.from_hf` decides from the config whether layers are MoE.

    >>> describe_architecture("Qwen3MoeForCausalLM")
    Architecture(name='Qwen3MoeForCausalLM', family='Qwen3', is_moe=True, task='causal language modeling')
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string such as 'LlamaForCausalLM', got {type(name).__name__}")
    if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be a transformers class name such as 'LlamaForCausalLM', got {name!r}")
    stem, sep, head = name.rpartition("For")
    if name.endswith("LMHeadModel") and len(name) > len("LMHeadModel"):  # GPT-2 style naming
        stem, task = name[: -len("LMHeadModel")], _TASKS["CausalLM"]
    elif sep and stem and head:
        task = _TASKS.get(head) or _split_camel(head)
    elif name.endswith("Model") and len(name) > len("Model"):
        stem, task = name[: -len("Model")], "backbone only (hidden states, no head)"
    else:
        raise ValueError(f"name must look like '<Family>For<Task>' or '<Family>Model', got {name!r}")
    is_moe = stem.endswith("Moe")
    if is_moe:
        stem = stem[: -len("Moe")]
    family, known_moe = _NAMES.get(stem, (stem, False))
    return Architecture(name, family, is_moe or known_moe, task)


def _split_camel(text: str) -> str:
    return " ".join(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*", text))
