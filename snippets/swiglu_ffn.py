"""A SwiGLU feed-forward block, the MLP of Llama and Qwen: down(silu(gate(x)) * up(x)).

Run: python snippets/swiglu_ffn.py
"""
import numpy as np

from chapter2.activations import swiglu
from chapter2.linear import linear, matmul_cost

rng = np.random.default_rng(0)
d_model, d_ff, tokens = 64, 172, 3  # Llama keeps d_ff near 8/3 of d_model
w_gate = rng.normal(size=(d_ff, d_model)) / np.sqrt(d_model)
w_up = rng.normal(size=(d_ff, d_model)) / np.sqrt(d_model)
w_down = rng.normal(size=(d_model, d_ff)) / np.sqrt(d_ff)
x = rng.normal(size=(tokens, d_model))

hidden = swiglu(x, w_gate, w_up)  # (tokens, d_ff)
y = linear(hidden, w_down)        # (tokens, d_model)
print("x", x.shape, "-> hidden", hidden.shape, "-> y", y.shape)

# Three matmuls per token: gate and up (d_model -> d_ff), down (d_ff -> d_model).
ops = 2 * matmul_cost(tokens, d_model, d_ff).ops + matmul_cost(tokens, d_ff, d_model).ops
print(f"FLOPs for {tokens} tokens: {ops:,} = 6 x tokens x d_model x d_ff = {6 * tokens * d_model * d_ff:,}")
assert ops == 6 * tokens * d_model * d_ff, "three matmuls of 2 x d_model x d_ff FLOPs per token"
