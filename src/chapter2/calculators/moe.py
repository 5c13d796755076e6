"""Calculator of section 2.2.4 (mixture of experts): how many experts a decode batch touches.

Uniform routing: each token picks k distinct experts out of E, so a batch of T
tokens touches E (1 - (1 - k/E)^T) experts per layer on average
(`chapter2.moe.expected_experts_touched`). Compute per token stays at k/E of
running every expert; weight traffic climbs towards all experts. E and k come
from the fields, or from a mixture-of-experts config.json: a shipped one or one
the reader pastes (`_models.pick_model`).
"""

from __future__ import annotations

from .. import moe
from ..models import QWEN3_235B_A22B, load_config
from . import _charts
from ._models import MODEL_OPTIONS, experts_picked, model_fields, model_numbers, pick_model
from ._registry import Field, FieldError, Output, calculator

CUSTOM = "custom"
MOE_OPTIONS = ((CUSTOM, "E and E_tok typed below"),) + tuple(
    (name, label) for name, label in MODEL_OPTIONS if load_config(name).is_moe)


@calculator(
    "moe_coverage",
    title="MoE: experts touched by a decode batch",
    fields=[
        *model_fields(default=CUSTOM, label="E and E_tok from", options=MOE_OPTIONS),
        Field("n_experts", "Experts per layer (E)", QWEN3_235B_A22B.n_experts, min=1, max=4096, integer=True,
              show_when=("model", CUSTOM), unit="experts"),
        Field("k", "Experts per token (E_tok)", QWEN3_235B_A22B.k, min=1, max=4096, integer=True,
              show_when=("model", CUSTOM), unit="experts"),
        Field("n_tokens", "Tokens in the batch (B)", 64, min=1, max=1e7, integer=True, unit="tokens"),
    ],
    outputs=[
        Output("source", "Experts per layer (E) and per token (E_tok)"),
        Output("touched", "Experts touched per layer (expected)"),
        Output("weights_loaded", "Share of expert weights loaded"),
        Output("compute_share", "Share of expert FLOPs per token"),
        Output("batch_for_coverage", "Batch that touches 90 % / 99 % of experts"),
        Output("chart", "Share of experts touched against the batch, marked at B", kind="chart", chart=_charts.MOE),
    ],
)
def moe_coverage_calc(model, model_id, config_json, n_experts, k, n_tokens):
    """Defaults are Qwen3-235B-A22B's E and k: 8 of 128 experts in each of its 94 layers."""
    c = None
    if config_json.strip() or model_id.strip() or model != CUSTOM:
        c = pick_model(model, config_json, options=MOE_OPTIONS[1:], model_id=model_id)
        if not c.is_moe:
            raise FieldError("config_json" if config_json.strip() else "model_id" if model_id.strip() else "model",
                             f"{c.name} ({c.family_label}) is a dense model: every token uses the whole MLP")
        n_experts, k = c.num_experts, c.num_experts_per_tok
        source = (f"{c.name}: E = {n_experts}, E_tok = {k} (in {len(c.moe_layers)} of its {c.num_hidden_layers} layers"
                  + (f", plus {c.shared_expert_intermediate_size:,} units of shared expert MLP that every token uses"
                     if c.shared_expert_intermediate_size else "") + ")")
        if c.experts_per_tok_by_layer:  # Hunyuan's moe_topk list: the layers that route the most
            source += f"; E_tok differs by layer ({experts_picked(c)}): shown for the layers with the most, {k}"
    else:
        source = f"typed: E = {n_experts}, E_tok = {k}"
    if k > n_experts:
        raise FieldError("k", f"Experts per token (E_tok): must be at most E = {n_experts}, got {k}")
    touched = moe.expected_experts_touched(n_experts, k, n_tokens)
    if k == n_experts:
        for_90 = for_99 = 1
        coverage = "1 / 1 tokens (every token uses every expert)"
    else:
        for_90, for_99 = moe.tokens_for_coverage(n_experts, k, 0.9), moe.tokens_for_coverage(n_experts, k, 0.99)
        coverage = f"{for_90:,} / {for_99:,} tokens"
    config = {} if c is None else {**model_numbers(c), "experts_per_token_shown": k}
    return {
        "source": source,
        "touched": f"{touched:.1f} of {n_experts}",
        "weights_loaded": f"{100 * touched / n_experts:.1f} %",
        "compute_share": f"{100 * k / n_experts:.2f} % (E_tok / E = {k} / {n_experts})",
        "batch_for_coverage": coverage,
        "chart": _charts.moe_chart(n_experts, k, n_tokens),
        "numbers": {**config, "experts (E)": n_experts, "experts_per_token (E_tok)": k, "batch (tokens)": n_tokens,
                    "experts_touched": float(touched), "weights_loaded (%)": 100 * touched / n_experts,
                    "compute_share (%)": 100 * k / n_experts, "batch_for_90_percent (tokens)": for_90,
                    "batch_for_99_percent (tokens)": for_99},
    }
