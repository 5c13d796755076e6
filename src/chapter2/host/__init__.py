"""Code that needs a host Python with torch, Triton or matplotlib; never shipped to the browser.

Everything else in `chapter2` is the numpy core, which runs in Pyodide. What
lives here does not:

- `chapter2.host.kernels`: the Triton FlashAttention and flash-decoding kernels
  (torch + triton; `TRITON_INTERPRET=1` runs them on a CPU).
- `chapter2.host.torch_model`: the PyTorch twin of the numpy transformer.
- `chapter2.host.bench`: the benchmarks, `python -m chapter2.host.bench
  {cpu,gpu,summary}` and `python -m chapter2.host.bench.tiny_lm` (timing,
  provenance, the GPU suite needs torch + triton).
- `chapter2.host.figures`: the site's SVG figures, drawn with matplotlib at
  build time.

The site's wheel builder (`docs/hooks/wheel.py`) leaves this one folder out,
so the folder layout alone says what the browser gets. Importing
`chapter2.host` imports nothing beyond the standard library; each subpackage
imports its heavy dependencies itself.
"""
