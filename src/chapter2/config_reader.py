"""One checked reader of config.json dicts, for every model the package sizes.

A Hugging Face `config.json` (transformers for LLMs and text encoders, diffusers for denoisers and VAEs)
is a JSON object of the arguments its config class takes. Every number the package derives from one goes
through `ConfigReader`: each key is read with what it must be (a whole number >= 1, a boolean, one of a
few names, a list of whole numbers), a key the file leaves out takes the class's default (and is recorded
in `defaulted`), and bad input is refused naming the dict, the key, what was expected and what came:

    config['num_key_value_heads'] must be >= 1, got 0
    config['text_config']['hidden_size'] must be a whole number, got '4096'
    SD3Transformer2DModel config['qk_norm'] must be one of [None, 'rms_norm'], got 'layer_norm'

A wrong type raises TypeError, a wrong value ValueError. What a null means is the reader's policy:
transformers configs write null for "unset" (the default applies, `null_is_value=False`), diffusers configs
pass it to the class as a value (`null_is_value=True`).

Only the stdlib is imported: this runs in the browser (Pyodide).
"""

from __future__ import annotations

import math
from numbers import Integral

__all__ = ["ConfigReader"]


class ConfigReader:
    """Reads one config dict: each key checked, an absent key defaulted from `defaults` (and recorded).

    config:        the dict (a config.json, or one of its sub-configs such as its text_config).
    defaults:      key -> the config class's default (None: unset, or derived from other keys).
    where:         how messages name the dict: "config", "config['text_config']", "FluxTransformer2DModel config".
    owner:         what needs the keys ("Llama"), and `config_class` the class whose defaults apply ("LlamaConfig"):
                   named when a key has neither a value nor a default.
    aliases:       (alias, key) pairs naming one field twice (transformers' `attribute_map`): both must agree.
    renamed:       (old key, key) pairs: an older name the class reads in place of the key, and which wins.
    null_is_value: an explicit null is the value None (diffusers), not "use the default" (transformers).
    """

    def __init__(self, config: dict, defaults: dict, where: str = "config", *, owner: str = "", config_class: str = "",
                 aliases=(), renamed=(), null_is_value: bool = False):
        self.c, self.defaults, self.where, self.defaulted = config, defaults, where, []
        self.owner, self.config_class, self.null_is_value = owner, config_class, null_is_value
        for alias, canonical in aliases:  # two names for one field must agree
            if alias in config and canonical in config and config[alias] != config[canonical]:
                raise ValueError(f"{where}: {alias!r} ({config[alias]!r}) and {canonical!r} ({config[canonical]!r}) "
                                 f"name the same field of {config_class} and must agree")
        self.alias_of = {canonical: alias for alias, canonical in aliases}
        self.renamed_to = {key: old for old, key in renamed}  # key -> the old key read in its place

    def name(self, key: str) -> str:
        """How a message names one key: config['hidden_size']."""
        return f"{self.where}[{key!r}]"

    def _keys(self, key: str) -> tuple:
        return tuple(k for k in (self.renamed_to.get(key), key, self.alias_of.get(key)) if k is not None)

    def has(self, key: str) -> bool:
        """The config gives `key` (or its alias) a value other than null."""
        alias = self.alias_of.get(key)
        return (key in self.c and self.c[key] is not None) or (alias is not None and self.c.get(alias) is not None)

    def is_null(self, key: str) -> bool:
        return any(k in self.c and self.c[k] is None for k in self._keys(key))

    def raw(self, key: str, *, null_is_value: bool | None = None):
        """The value in the config, else the default (recorded as defaulted); None if neither.

        An explicit null counts as absent, unless null is a value (`null_is_value`, the reader's policy when not
        given: sliding_window, q_lora_rank and attention_chunk_size, where null means "off"; every diffusers key).
        """
        null_is_value = self.null_is_value if null_is_value is None else null_is_value
        for k in self._keys(key):
            if k in self.c and (self.c[k] is not None or null_is_value):
                return self.c[k]
        if key not in self.defaults:
            return None
        value = self.defaults[key]
        if value is not None and key not in self.defaulted:
            self.defaulted.append(key)
        return value

    def missing(self, key: str) -> ValueError:
        """The error for a key with neither a value nor a default."""
        needed = f"needed for {self.owner}; " if self.owner and self.owner != self.config_class else ""
        return ValueError(f"{self.where} is missing {key!r} ({needed}{self.config_class or 'its class'} "
                          f"has no default for it)")

    def int(self, key: str, *, zero: bool = False, derived=None, optional: bool = False,
            null_is_value: bool | None = None) -> int | None:
        """A whole number >= 1 (>= 0 with zero=True). derived: the value when config and default give none;
        optional: None then."""
        null_is_value = self.null_is_value if null_is_value is None else null_is_value
        absent_ok = optional or derived is not None
        if self.is_null(key) and not (null_is_value or absent_ok):
            raise TypeError(f"{self.name(key)} must be a whole number, got null")
        value = self.raw(key, null_is_value=null_is_value)
        if value is None:
            if absent_ok:
                return derived
            if self.is_null(key):
                raise TypeError(f"{self.name(key)} must be a whole number, got null")
            raise self.missing(key)
        if isinstance(value, bool) or not isinstance(value, Integral | float):
            raise TypeError(f"{self.name(key)} must be a whole number, got {value!r}")
        if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
            raise TypeError(f"{self.name(key)} must be a whole number, got {value!r}")
        value = int(value)
        if value < (0 if zero else 1):
            raise ValueError(f"{self.name(key)} must be {'>= 0' if zero else '>= 1'}, got {value}")
        return value

    def bool(self, key: str, default: bool | None = False) -> bool:
        """true or false; `default` when neither the config nor the defaults give one (None: required). Where null is
        a value (diffusers), every key has one: a null or a key without a default is refused."""
        value = self.raw(key)
        if value is None and default is not None and not self.null_is_value:
            return default
        if not isinstance(value, bool):
            shown = "null" if value is None else repr(value)
            raise TypeError(f"{self.name(key)} must be true or false (a JSON boolean), got {shown}"
                            + (" (a string)" if isinstance(value, str) else ""))
        return value

    def real(self, key: str, *, optional: bool = False) -> float | None:
        """A finite number > 0 (None when absent and `optional`)."""
        value = self.raw(key)
        if value is None:
            if optional:
                return None
            if self.is_null(key):
                raise TypeError(f"{self.name(key)} must be a number, got null")
            raise self.missing(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{self.name(key)} must be a number, got {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{self.name(key)} must be a finite number > 0, got {value!r}")
        return float(value)

    def choice(self, key: str, options):
        """One of `options` (None among them where null is allowed)."""
        value = self.raw(key)
        if value not in options:
            raise ValueError(f"{self.name(key)} must be one of {list(options)}, got {value!r}")
        return value

    def int_list(self, key: str, length: int | None = None, *, low: int = 0, high: int | None = None) -> list | None:
        """A list of whole numbers in [low, high] (of `length` entries if given), or None when absent."""
        value = self.raw(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
            raise TypeError(f"{self.name(key)} must be a list of whole numbers, got {value!r}")
        if length is not None and len(value) != length:
            raise ValueError(f"{self.name(key)} must have one entry per layer ({length}), got {len(value)}")
        bad = [x for x in value if x < low or (high is not None and x > high)]
        if bad:
            where = f"in [{low}, {high}]" if high is not None else f">= {low}"
            raise ValueError(f"{self.name(key)} entries must be {where}, got {bad[0]}")
        return value

    def ints(self, key: str, n: int | None = None) -> tuple:
        """A non-empty list of whole numbers >= 1 (of `n` entries if given; one number stands for n of them)."""
        value = self.raw(key)
        if isinstance(value, Integral) and not isinstance(value, bool) and n is not None:
            value = [value] * n
        if not isinstance(value, list | tuple) or not value or (n is not None and len(value) != n) or not all(
                isinstance(v, Integral) and not isinstance(v, bool) and v > 0 for v in value):
            size = f"{n} " if n is not None else ""
            raise ValueError(f"{self.name(key)} must be a list of {size}positive whole numbers, got {value!r}")
        return tuple(int(v) for v in value)
