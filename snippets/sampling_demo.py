"""From logits to a token: temperature, top-k, top-p and logit bias, in that order.

Run: python snippets/sampling_demo.py
"""
import numpy as np

from chapter2.sampling import probs, sample

logits = np.array([2.0, 1.0, 0.5, 0.1, -1.0])  # one score per token of a 5-token vocabulary


def show(label, **settings):
    p = probs(logits, **settings)
    bars = "  ".join(f"{x:5.3f}" for x in p)
    print(f"{label:<28} {bars}")
    return p


print(f"{'settings':<28} " + "  ".join(f"tok {i}" for i in range(len(logits))))
show("plain softmax")
show("temperature 0.5 (sharper)", temperature=0.5)
show("temperature 2.0 (flatter)", temperature=2.0)
greedy = show("temperature 0 (greedy)", temperature=0)
top2 = show("top_k=2", top_k=2)
show("top_p=0.8", top_p=0.8)
show("bias token 3 by +2", logit_bias={3: 2.0})
banned = show("ban token 0 (bias -inf)", logit_bias={0: -np.inf})
assert greedy.tolist() == [1, 0, 0, 0, 0], "temperature 0: all on the largest logit"
assert np.count_nonzero(top2) == 2, "top-k keeps exactly k tokens"
assert banned[0] == 0, "a bias of -inf bans the token"

rng = np.random.default_rng(0)  # seeded: the same draws every run
draws = [sample(logits, temperature=0.7, top_p=0.9, rng=rng) for _ in range(20)]
print("20 draws at T=0.7, top_p=0.9:", draws)
