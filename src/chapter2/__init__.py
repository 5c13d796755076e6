"""chapter2: an executable companion to Chapter 2 ("Models") of *Inference Engineering*.

The numpy core (everything importable with numpy alone) also runs in the
reader's browser through Pyodide. PyTorch and Triton code lives in
`chapter2.kernels` and `chapter2.models.torch_model`, imported lazily.
"""

__version__ = "0.1.0"
