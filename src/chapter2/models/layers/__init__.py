"""The kinds of layer a model stacks (sections 2.2 and 2.5): one class per kind, each in its own module.

A layer kind is what transformers' `layer_types` names for one layer: how it mixes the sequence. Attention
kinds (`attention.py`: full, sliding window, chunked) keep the keys and values of the tokens they hold, a
cache that grows with the context; recurrent kinds (`mamba2.py`, `gated_deltanet.py`, `short_conv.py`,
`lightning.py`, `mamba1.py`) keep a fixed state instead. Each class holds one layer's sizes and says, for one
layer: its weights, its state, its FLOPs per token, its label, and how it reads its sizes from a config.json.

Defining a subclass with a `name` registers it (`KINDS`, and its label in `LABELS`, which the calculators and
the block diagram read): a model whose layout names that kind then counts it with no other change
(CONTRIBUTING.md, "Add a layer kind").

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["LayerKind", "KINDS", "LABELS", "NONE", "attends", "recurs"]

KINDS: dict[str, type[LayerKind]] = {}  # layer_types name -> its class, in the order they were defined
LABELS: dict[str, str] = {}  # layer_types name (and a cache group's kind) -> its name on the page
NONE = "none"  # a layer with no sequence mixer (NemotronH's MLP-only and MoE-only layers)


class LayerKind:
    """One kind of layer: `name` (transformers' `layer_types` word, or ours where it has none) and `label`."""

    name: ClassVar[str]
    label: ClassVar[str]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a concrete kind, not a family of them
            KINDS[cls.name] = cls
            LABELS[cls.name] = cls.label


def _name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a layer kind's name (a str such as 'full_attention'), got {type(name).__name__}")
    return name


def attends(name: str) -> bool:
    """A layer of kind `name` attends, keeping keys and values (full, sliding, chunked attention)."""
    _name(name)
    return issubclass(KINDS.get(name, LayerKind), attention.AttentionKind)


def recurs(name: str) -> bool:
    """A layer of kind `name` is recurrent, keeping a state of fixed size (`recurrent.Mixer`)."""
    _name(name)
    return issubclass(KINDS.get(name, LayerKind), recurrent.Mixer)


# The shipped kinds, registered in this order (the order of `STATE_KINDS` and of a cache breakdown).
from . import attention, mla  # noqa: E402,F401  (full, sliding, chunked; MLA)
from . import recurrent  # noqa: E402  (the recurrent kinds' base)
from . import mamba2, gated_deltanet, short_conv, lightning, mamba1  # noqa: E402,F401,I001
