"""Figure for section 2.1.2: the activation functions and their slopes."""

import numpy as np

from ... import activations as act
from . import figure


@figure("activations", alt="Curves of ReLU, SiLU, Swish with beta 2, GELU and its tanh approximation for x from -5 to 5: "
        "all are near zero for negative x and near the identity for positive x; the smooth ones dip slightly below zero "
        "around x = -1. A second panel shows their slopes: a step for ReLU, smooth S-shaped curves for the others.")
def activations_figure():
    import matplotlib.pyplot as plt

    x = np.linspace(-5, 5, 401)
    curves = {
        "ReLU": (act.relu(x), act.relu_slope(x)),
        "SiLU (Swish, beta=1)": (act.silu(x), act.silu_slope(x)),
        "Swish, beta=2": (act.swish(x, 2.0), act.swish_slope(x, 2.0)),
        "GELU": (act.gelu(x), act.gelu_slope(x)),
        "GELU (tanh)": (act.gelu(x, "tanh"), act.gelu_slope(x, "tanh")),
    }
    fig, (ax_value, ax_slope) = plt.subplots(1, 2, figsize=(8.8, 3.6))
    for label, (value, slope) in curves.items():
        dash = (0, (4, 2)) if "tanh" in label else "-"
        ax_value.plot(x, value, label=label, linestyle=dash, linewidth=1.6)
        ax_slope.plot(x, slope, linestyle=dash, linewidth=1.6)
    ax_value.set(title="value f(x)", xlabel="x", ylim=(-1.2, 5.2))
    ax_slope.set(title="slope f'(x)", xlabel="x", ylim=(-0.25, 1.25))
    ax_value.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig
