"""Recurrent layers (section 2.5): a fixed-size state instead of a KV cache.

A recurrent kind (`Mixer`) carries a state through the sequence: its work and memory per token do not
depend on how many tokens came before. What transformers 5 keeps per layer and sequence is a convolution
state (the last `kernel` inputs of each channel of its short causal convolution, in the model's dtype) and a
recurrent state (in `state_dtype`: "fp32", or "model" for the model's dtype). `RecurrentLayers` is the part of
a model that holds the layers of one recurrent kind.

The FLOP convention of one recurrent step (`flops_per_state`, per state number and token): the decay, the
write and the read of the state, 2 FLOPs per multiply-add; the gates and the discretisation are left out like
the norms. The projections and the convolution's taps are weights (in `weights()[0]`, 2 FLOPs each).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..part import KVGroup, Part, whole
from . import LayerKind

__all__ = ["Mixer", "RecurrentLayers"]


class Mixer(LayerKind):
    """A recurrent layer kind: its sizes (a frozen dataclass) and, for one layer of a model `hidden` wide:
    `weights(hidden)` (matmul and convolution weights, other weights), `state(hidden)` (convolution and
    recurrent state numbers per sequence), `describe(hidden)` (its sizes in words, for the block diagram).

    `flops_per_state`: FLOPs per recurrent-state number and token. `flat`: the names `ModelConfig` gave these
    sizes when they were fields of its own (ModelConfig attribute -> this class's attribute).
    """

    flops_per_state: ClassVar[int]
    flat: ClassVar[dict[str, str]] = {}
    state_dtype: str

    def weights(self, hidden: int) -> tuple[int, int]:
        raise NotImplementedError

    def state(self, hidden: int) -> tuple[int, int]:
        raise NotImplementedError

    def describe(self, hidden: int) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class RecurrentLayers(Part):
    """The `layers` layers of one recurrent kind in a model `hidden` wide."""

    mixer: Mixer
    layers: int
    hidden: int

    @property
    def label(self) -> str:
        return f"{self.mixer.label} layers"

    @property
    def total(self) -> int:
        return self.layers * sum(self.mixer.weights(self.hidden))

    @property
    def matmul(self) -> int:
        return self.layers * self.mixer.weights(self.hidden)[0]

    def fixed_bytes(self, per_element, per_state):
        conv, rec = self.mixer.state(self.hidden)
        return self.layers * conv * per_element + self.layers * rec * per_state

    def kv_groups(self, context: int, per_element, per_state, mla: str) -> tuple[KVGroup, ...]:
        conv, rec = self.mixer.state(self.hidden)
        return (KVGroup(self.mixer.name, self.layers, None, 0, 0, whole(self.layers * (conv * per_element + rec * per_state)),
                        conv + rec),)

    def step_flops(self) -> int:
        return self.layers * self.mixer.flops_per_state * self.mixer.state(self.hidden)[1]
