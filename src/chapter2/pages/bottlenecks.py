"""Facts of section 2.4 Bottlenecks (docs/bottlenecks.md)."""

from __future__ import annotations

from . import Card, Leaf, fact  # noqa: F401

PAGE = "bottlenecks.md"
TITLE = "2.4 Bottlenecks"

LEAVES = (
    Leaf('Ops:byte of the GPU vs arithmetic intensity', '241-opsbyte-and-arithmetic-intensity'),
    Leaf('Prefill is compute bound, decode memory bound', '242-llm-bottlenecks'),
)

# TODO(page-layer): answers still use legacy {{ py: }} expressions until this page is converted
CARDS = (
    Card('bn-ops-byte', '241-opsbyte-and-arithmetic-intensity',
         "What is an H100's ops:byte ratio in FP16, and how is it computed?",
         'Peak compute over memory bandwidth: {{ py: f"{hardware.GPUS[\'H100-SXM\'].tflops(\'fp16\'):g}" }} TFLOP/s ÷ {{ py: f"{hardware.GPUS[\'H100-SXM\'].bandwidth_tb_s:g}" }} TB/s ≈ {{ py: f"{hardware.GPUS[\'H100-SXM\'].ops_per_byte(\'fp16\'):.0f}" }} operations per byte. Work with a lower arithmetic intensity is memory bound, higher is compute bound.'),
    Card('bn-prefill-decode', '242-llm-bottlenecks',
         'Which phase of LLM inference is compute bound and which memory bound?',
         'Prefill is compute bound: Llama 3.1 8B on a 4,096-token prompt does {{ py: f"{roofline.prefill(\'Llama-3.1-8B\', 4096).intensity:,.0f}" }} operations per byte. Decode is memory bound: one token at a time does {{ py: f"{roofline.decode(\'Llama-3.1-8B\', 4096).intensity:.1f}" }}, so an H100 decodes one sequence at no more than {{ py: f"{1 / roofline.decode(\'Llama-3.1-8B\', 4096).time:.0f}" }} tokens per second.'),
    Card('bn-attention-62', '242-llm-bottlenecks',
         'What is the arithmetic intensity of standard attention at N = 4096, d = 128 in FP16?',
         '`4N²d + 3N²` operations over `8N² + 8Nd` bytes: {{ py: f"{roofline.attention_intensity(4096, 128).intensity:.1f}" }} operations per byte, far below the H100\'s {{ py: f"{hardware.GPUS[\'H100-SXM\'].ops_per_byte(\'fp16\'):.0f}" }}, so it is memory bound. The `N²` score matrix written to memory and read back is why.'),
    Card('bn-batching', '242-llm-bottlenecks',
         'What does batching do to decode, and what can it not fix?',
         'A batch of B reads the weights once for all B sequences, so the weight matmuls\' intensity grows with B: Llama 3.1 8B\'s cross the H100 ridge at a batch of {{ py: roofline.decode_critical_batch(\'Llama-3.1-8B\', 4096, part=\'weights\') }}. Each sequence still reads its own KV cache, so attention\'s intensity stays near {{ py: f"{roofline.decode(\'Llama-3.1-8B\', 4096, batch=64).attention_intensity:.0f}" }}.'),
    Card('bn-image', '243-image-bottlenecks',
         'Are image and video models compute bound or memory bound?',
         'Compute bound, like prefill: every denoiser pass runs all weights over thousands of latent tokens. A Qwen-Image pass does {{ py: f"{diffusion.denoiser_pass(\'Qwen-Image\').intensity:,.0f}" }} operations per byte in BF16.'),
)
