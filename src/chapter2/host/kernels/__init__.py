"""Triton GPU kernels for section 2.5 ("Optimizing attention").

Two kernels, each a kernel/wrapper pair in its own module (Triton-tutorial
style), validated against a float64 oracle before anything is timed:

- `flash_attention(q, k, v, *, causal, window, scale)` (module `flash_fwd`):
  the FlashAttention forward pass (Dao et al. 2022, arXiv:2205.14135, Alg. 1;
  FlashAttention-2 loop order, arXiv:2307.08691) with causal masking, a
  sliding window whose key blocks outside the window are never visited, and
  grouped-query attention.
- `decode_attention(q, k_cache, v_cache, ...)` (module `flash_decode`): one
  decode step against a KV cache, the cache length split across programs
  (flash-decoding, Dao et al. 2023, https://crfm.stanford.edu/2023/10/12/flashdecoding.html):
  each split writes a partial (m, l, acc), a second kernel merges them.

Importing `chapter2.host.kernels` imports neither torch nor triton: the public
functions below import their module on first call, so the numpy core (and the
site running in Pyodide) never pays for them.

Running without a GPU: Triton's interpreter runs the same kernels on CPU
tensors when the environment variable ``TRITON_INTERPRET=1`` is set *before*
Triton and the kernel modules are imported (``@triton.jit`` reads it when a
function is defined, Triton's own helpers included). Each kernel module
records what it saw in ``INTERPRET`` when first imported. `use_interpreter()`
sets the variable and re-imports Triton and the kernel modules if they were
imported without it; the context manager `interpreter()` does the same and
restores the variable on exit (what tests use). Interpreter gaps the kernels work around
(Triton 3.9): bfloat16 arithmetic is wrong (tiles are cast to float32 right
after loading), out-of-bounds loads do not fail (every load is masked anyway),
autotuning with several configs fails (a fixed config is used), and
``tl.make_block_ptr`` is gone (plain pointer arithmetic is used throughout).

Precision: on a GPU a float32 ``tl.dot`` runs in TF32 unless
``input_precision="ieee"``; the kernels pass "ieee" for float32 inputs so that
float32 means float32 on both the GPU and the interpreter. The interpreter
ignores ``input_precision`` (it always computes in full float32).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

_KERNEL_MODULES = ("flash_fwd", "flash_decode")


def flash_attention(q, k, v, *, causal: bool = False, window: int | None = None, scale: float | None = None):
    """FlashAttention forward on torch tensors shaped (B, H, N, d); see `flash_fwd.flash_attention`."""
    from .flash_fwd import flash_attention as _impl

    return _impl(q, k, v, causal=causal, window=window, scale=scale)


def decode_attention(q, k_cache, v_cache, *, cache_seqlens=None, window: int | None = None,
                     scale: float | None = None, num_splits: int | None = None):
    """One decode step against a KV cache (flash-decoding); see `flash_decode.decode_attention`."""
    from .flash_decode import decode_attention as _impl

    return _impl(q, k_cache, v_cache, cache_seqlens=cache_seqlens, window=window, scale=scale,
                 num_splits=num_splits)


def _triton_python_modules() -> dict:
    """Triton's pure-Python modules now imported (its compiled `triton._C` core is shared and kept)."""
    return {name: module for name, module in sys.modules.items()
            if (name == "triton" or name.startswith("triton.")) and not name.startswith("triton._C")}


def _triton_compiled_mode() -> bool:
    """True if triton.language was imported without the interpreter (its @jit helpers are JITFunctions)."""
    standard = sys.modules.get("triton.language.standard")
    if standard is None:
        return False
    from triton.runtime.jit import JITFunction

    return any(isinstance(value, JITFunction) for value in vars(standard).values())


def _reimport_kernels() -> None:
    """Drop Triton's Python modules if they were imported in the other mode; redefine our kernels."""
    for name in _triton_python_modules():
        del sys.modules[name]
    for name in _KERNEL_MODULES:
        module = sys.modules.get(f"{__name__}.{name}")
        if module is not None:
            importlib.reload(module)


def use_interpreter() -> None:
    """Run the kernels in Triton's CPU interpreter from now on (tests, machines without a GPU).

    Sets ``TRITON_INTERPRET=1``. If Triton was already imported without it
    (transformers, for one, imports triton), its Python modules are dropped
    from ``sys.modules`` so they are imported again in interpreter mode, and
    kernel modules imported earlier are redefined.
    """
    os.environ["TRITON_INTERPRET"] = "1"
    stale = [sys.modules.get(f"{__name__}.{name}") for name in _KERNEL_MODULES]
    if _triton_compiled_mode() or any(m is not None and not m.INTERPRET for m in stale):
        _reimport_kernels()


@contextlib.contextmanager
def interpreter():
    """Context manager: the kernels run in the interpreter inside; TRITON_INTERPRET is restored on exit.

    Triton's modules and the kernel modules stay in interpreter mode after the
    block (re-importing them once more would only add copies of Triton's
    Python modules; compiled kernels cannot run on a machine without a GPU
    anyway). Tests use it so the environment variable does not leak into
    other test modules.
    """
    saved_env = os.environ.get("TRITON_INTERPRET")
    use_interpreter()
    try:
        yield
    finally:
        if saved_env is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = saved_env


__all__ = ["flash_attention", "decode_attention", "use_interpreter", "interpreter"]
