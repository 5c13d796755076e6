"""A SwiGLU feed-forward block, the MLP of Llama and Qwen: down(silu(gate(x)) * up(x)).

Run: python snippets/swiglu_ffn.py
"""
from fractions import Fraction

import numpy as np

from chapter2.activations import swiglu
from chapter2.linear import linear, matmul_cost
from chapter2.models import load_config


def llama_d_ff(d_model, multiple_of, ffn_dim_multiplier=None):
    """Meta's Llama rule: 2/3 of a plain MLP's 4 * d_model, times an optional multiplier, rounded up."""
    d_ff = int(2 * 4 * d_model / 3)
    if ffn_dim_multiplier is not None:
        d_ff = int(ffn_dim_multiplier * d_ff)
    return multiple_of * -(-d_ff // multiple_of)


# d_ff = 8/3 d_model (SwiGLU paper, Shazeer 2020; LLaMA, Touvron et al. 2023): three d x 8d/3 matrices
# hold as many weights as a plain MLP's two d x 4d. LLaMA 1 rounds up to a multiple of 256.
assert 3 * Fraction(8, 3) == 2 * 4, "3 matrices of (8/3) d^2 weights = 2 of 4 d^2"
assert llama_d_ff(4096, multiple_of=256) == 11008, "LLaMA-7B's d_ff (its params.json: multiple_of 256)"
# Llama 3.1 8B widens it: ffn_dim_multiplier 1.3, a multiple of 1024 (Meta's params.json): 3.5 x d_model.
llama = load_config("Llama-3.1-8B")
assert llama_d_ff(llama.hidden_size, 1024, 1.3) == llama.intermediate_size == 3.5 * llama.hidden_size, \
    "Llama 3.1 8B's config.json intermediate_size"
print(f"d_ff / d_model: LLaMA-7B {11008 / 4096:.2f} (8/3 = {8 / 3:.2f}),"
      f" Llama 3.1 8B {llama.intermediate_size / llama.hidden_size:.2f}")

rng = np.random.default_rng(0)
d_model, tokens = 64, 3
d_ff = llama_d_ff(d_model, multiple_of=4)  # 172, the LLaMA 1 rule at toy size
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
