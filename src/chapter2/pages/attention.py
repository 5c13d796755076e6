"""Facts of section 2.5 Optimizing attention (docs/attention.md)."""

from __future__ import annotations

from . import Card, Leaf, fact  # noqa: F401

PAGE = "attention.md"
TITLE = "2.5 Optimizing attention"

LEAVES = (
    Leaf('FlashAttention: same result, no N×N matrix in memory', 'flashattention'),
    Leaf('Sliding window: N·w instead of N²', 'sliding-window-attention'),
    Leaf('State-space models and hybrids scale linearly', 'state-space-models-and-hybrids'),
)

# TODO(page-layer): answers still use legacy {{ py: }} expressions until this page is converted
CARDS = (
    Card('att-flash', 'flashattention',
         'What does FlashAttention change, and what stays the same?',
         'The result and the operation count stay the same; S and P never leave on-chip memory, so only Q, K, V and O move (`8Nd` bytes in FP16). At N = 4096, d = 128 the intensity rises from {{ py: f"{roofline.attention_intensity(4096, 128).intensity:.0f}" }} to {{ py: f"{roofline.flash_attention_intensity(4096, 128).intensity:,.0f}" }} operations per byte.'),
    Card('att-window', 'sliding-window-attention',
         'How much does a sliding window of w keys save?',
         'Each query sees at most `w` keys, so the work grows like `N·w` instead of `N²`. At N = 4096 with w = 1024, causal attention scores {{ py: f"{100 * attention.attended_pairs(4096, causal=True, window=1024) / attention.attended_pairs(4096, causal=True):.0f}" }} % of the query-key pairs of full causal attention.'),
    Card('att-ssm', 'state-space-models-and-hybrids',
         'Why do state-space models and hybrids scale better with context than attention?',
         'A state-space layer (Mamba) carries a fixed-size state from token to token instead of attending to every earlier token: work grows linearly with length and memory stays constant. Hybrids keep a few attention layers among many state-space layers.'),
)
