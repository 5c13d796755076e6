"""Three linear layers with no activation between them are one linear layer.

Run: python snippets/collapse_linear.py
"""
import numpy as np

from chapter2.activations import relu
from chapter2.linear import collapse, linear

rng = np.random.default_rng(0)
sizes = [8, 32, 32, 4]  # input width, two hidden widths, output width
layers = [(rng.normal(size=(n_out, n_in)) / np.sqrt(n_in), rng.normal(size=n_out))
          for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True)]
x = rng.normal(size=(5, sizes[0]))  # 5 tokens, 8 features each

# Stack the layers with nothing in between...
h = x
for w, c in layers:  # weight and bias c
    h = linear(h, w, c)

# ...and compare with one layer whose weight is W3 W2 W1.
w_one, c_one = collapse(layers)
print("one layer's weight shape:", w_one.shape)
gap = np.abs(h - linear(x, w_one, c_one)).max()
print(f"max |stacked - collapsed| = {gap:.1e}")
assert gap < 1e-12, "without activations the stack must equal the one collapsed layer"

# Put a ReLU between the layers and the shortcut no longer works.
h = x
for i, (w, c) in enumerate(layers):
    h = linear(h, w, c)
    if i < len(layers) - 1:
        h = relu(h)
gap = np.abs(h - linear(x, w_one, c_one)).max()
print("with ReLU, max |stacked - collapsed| =", gap.round(3))
assert gap > 0.1, "with a ReLU between the layers, the collapsed layer must no longer match"
