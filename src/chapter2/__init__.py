"""chapter2: an executable companion to Chapter 2 ("Models") of *Inference Engineering*.

The numpy core (everything importable with numpy alone) also runs in the
reader's browser through Pyodide. What needs a host Python with torch,
Triton or matplotlib (kernels, the torch twin, benchmarks, figures) lives in
one subpackage, `chapter2.host`, which is never shipped to the browser.
"""

__version__ = "0.1.0"
