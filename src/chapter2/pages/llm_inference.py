"""Facts of section 2.2 LLM inference (docs/llm-inference.md)."""

from __future__ import annotations

from . import Card, Leaf, fact  # noqa: F401

PAGE = "llm-inference.md"
TITLE = "2.2 LLM inference"

LEAVES = (
    Leaf('Prefill reads the prompt in parallel; decode makes one token per step', 'prefill-and-decode'),
    Leaf('Sampling: bias, temperature, top-k, top-p', 'sampling'),
    Leaf('Attention reads every earlier token, so cache K and V', '223-attention'),
    Leaf('MoE: {{ py: f"{models.load_config(\'Qwen3-235B-A22B\').params().active / 1e9:.0f}B of {models.load_config(\'Qwen3-235B-A22B\').params().total / 1e9:.0f}B" }} parameters active per token', '224-mixture-of-experts'),
)

# TODO(page-layer): answers still use legacy {{ py: }} expressions until this page is converted
CARDS = (
    Card('llm-prefill-decode', 'prefill-and-decode',
         'What do prefill and decode each do, and which latency does each set?',
         'Prefill runs all prompt tokens in one parallel pass and fills the KV cache: it sets the time to first token. Decode then makes one token per step from the cache: it sets the tokens per second.'),
    Card('llm-kv-bytes', 'prefill-and-decode',
         'How much KV cache does one token add in Llama 3.1 8B (BF16)?',
         '`2 × layers × KV heads × head_dim × 2 bytes` = 2 × {{ py: models.load_config(\'Llama-3.1-8B\').num_hidden_layers }} × {{ py: models.load_config(\'Llama-3.1-8B\').num_key_value_heads }} × {{ py: models.load_config(\'Llama-3.1-8B\').head_dim }} × 2 = {{ py: fmt.nbytes(models.load_config(\'Llama-3.1-8B\').kv_cache_bytes_per_token(\'bf16\')) }}. At the full {{ py: f"{models.load_config(\'Llama-3.1-8B\').max_position_embeddings:,}" }}-token context one sequence needs {{ py: fmt.nbytes(models.load_config(\'Llama-3.1-8B\').kv_cache_bytes(models.load_config(\'Llama-3.1-8B\').max_position_embeddings)) }}, more than the {{ py: fmt.nbytes(models.load_config(\'Llama-3.1-8B\').weights_bytes(\'bf16\')) }} of weights.'),
    Card('llm-sampling-order', 'sampling',
         'In which order are logit bias, temperature, top-k and top-p applied, and what is temperature 0?',
         'Logit bias, then temperature, then top-k, then top-p (the order of Hugging Face `generate`). Temperature 0 is greedy decoding: always the single likeliest token.'),
    Card('llm-kv-cache-why', '223-attention',
         'Why can attention cache keys and values at all?',
         'The causal mask stops a token from seeing later ones, so earlier keys and values never change. A decode step computes only the new token\'s q, k and v and scores one query against the cache. Decoding 1,000 tokens after a 1,000-token prompt scores {{ py: f"{sum(attention.attended_pairs(t, causal=True) for t in range(1001, 2001)) / sum(attention.attended_pairs(1, t, causal=True) for t in range(1001, 2001)):,.0f}" }} times fewer query-key pairs with the cache than without.'),
    Card('llm-moe', '224-mixture-of-experts',
         'Qwen3-235B-A22B: how many experts does a token use, and why does a large batch still read almost all of them?',
         '{{ py: moe.QWEN3_235B_A22B.k }} of {{ py: moe.QWEN3_235B_A22B.n_experts }} experts per layer, about {{ py: f"{models.load_config(\'Qwen3-235B-A22B\').params().active / 1e9:.0f}" }}B of {{ py: f"{models.load_config(\'Qwen3-235B-A22B\').params().total / 1e9:.0f}" }}B parameters per token. Each token picks its own experts, so a batch of {{ py: moe.tokens_for_coverage(moe.QWEN3_235B_A22B.n_experts, moe.QWEN3_235B_A22B.k, 0.9) }} tokens already touches 90 % of them: MoE saves compute, and memory only with expert parallelism.'),
)
