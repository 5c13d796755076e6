"""The recall check: question cards, one per key idea, grouped by section.

Rendered by the `<!-- recall-cards -->` directive (docs/hooks/directives.py).
Each card is a button (the question) with `aria-expanded` controlling a region
(the answer), so it works by keyboard and screen reader; the page script
docs/assets/chapter2/recall.js reveals answers and remembers, in this browser's
localStorage only, which cards were seen and when.

Answers are Markdown. Every number in an answer is a `{{ py: EXPR }}`
expression, evaluated at build time by the same inline pass (and namespace,
`directives.namespace()`) as the rest of the site, so a card cannot quote a
number the code no longer produces. Each answer ends with a link back to the
idea's place in its section page; MkDocs' strict anchor validation checks it.

Only sections whose page is part of the site get cards, in the order and with
the titles of the chapter map (`chapter_map.SECTIONS`).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import chapter_map

REVIEW_AFTER_DAYS = 7  # spaced repetition: "coming back to these in a week" (the chapter's recall check)


@dataclass(frozen=True)
class Card:
    id: str        # stable: it is the key of the reader's progress in localStorage
    page: str      # the section page, e.g. "bottlenecks.md"
    anchor: str    # heading anchor on that page
    question: str  # plain text; `code` spans allowed
    answer: str    # Markdown with `{{ py: }}` numbers


def _card(card_id: str, page: str, anchor: str, question: str, answer: str) -> Card:
    """A card whose answer, written over several source lines, becomes one paragraph."""
    return Card(card_id, page, anchor, question, " ".join(answer.split()))


# Answers are one Markdown paragraph; `{{ py: }}` expressions give every number.
CARDS: tuple[Card, ...] = (
    # ------------------------------------------------------------- 2.1
    _card("nn-matmul-ops", "neural-networks.md", "211-linear-layers-and-matmul",
          "How many floating-point operations does a linear layer cost for an (m, k) input and a (k, n) weight?",
          """
          `2·m·k·n`: each of the `m·n` outputs is a dot product of length `k`, one multiply and one add
          per term. One token through a 4096 × 4096 projection is
          {{ py: fmt.si(linear.matmul_cost(1, 4096, 4096, 'fp16').ops, 'FLOP') }}.
          """),
    _card("nn-decode-intensity", "neural-networks.md", "211-linear-layers-and-matmul",
          "Why is a matmul for a single token mostly weight loading?",
          """
          With `m = 1` each weight is read to be used once: a 4096 × 4096 FP16 projection does about
          {{ py: fmt.number(linear.matmul_cost(1, 4096, 4096, 'fp16').intensity, 3) }} operation per
          byte. A 4,096-token prompt reuses each weight for every token and does
          {{ py: f"{linear.matmul_cost(4096, 4096, 4096, 'fp16').intensity / linear.matmul_cost(1, 4096, 4096, 'fp16').intensity:,.0f}" }}
          times more operations per byte.
          """),
    _card("nn-collapse", "neural-networks.md", "212-activation-functions",
          "Why must a nonlinear activation sit between two linear layers?",
          """
          Two linear layers compose into one: `W₂(W₁x + b₁) + b₂ = (W₂W₁)x + (W₂b₁ + b₂)`, so a stack
          without a nonlinearity is a single linear map. ReLU, SiLU or GELU between them breaks the
          collapse.
          """),
    _card("nn-silu", "neural-networks.md", "212-activation-functions",
          "What does SiLU do with negative inputs that ReLU does not?",
          """
          ReLU clips every negative input to 0; SiLU, `x·σ(x)`, lets a little through, bottoming out at
          {{ py: f"{float(activations.silu(activations.np.linspace(-5, 0, 50001)).min()):.4f}" }}, and
          has a slope everywhere. Llama and Qwen use it inside the SwiGLU gate.
          """),
    # ------------------------------------------------------------- 2.2
    _card("llm-prefill-decode", "llm-inference.md", "prefill-and-decode",
          "What do prefill and decode each do, and which latency does each set?",
          """
          Prefill runs all prompt tokens in one parallel pass and fills the KV cache: it sets the time
          to first token. Decode then makes one token per step from the cache: it sets the tokens per
          second.
          """),
    _card("llm-kv-bytes", "llm-inference.md", "prefill-and-decode",
          "How much KV cache does one token add in Llama 3.1 8B (BF16)?",
          """
          `2 × layers × KV heads × head_dim × 2 bytes` =
          2 × {{ py: models.load_config('Llama-3.1-8B').num_hidden_layers }}
          × {{ py: models.load_config('Llama-3.1-8B').num_key_value_heads }}
          × {{ py: models.load_config('Llama-3.1-8B').head_dim }} × 2 =
          {{ py: fmt.nbytes(models.load_config('Llama-3.1-8B').kv_cache_bytes_per_token('bf16')) }}.
          At the full {{ py: f"{models.load_config('Llama-3.1-8B').max_position_embeddings:,}" }}-token
          context one sequence needs
          {{ py: fmt.nbytes(models.load_config('Llama-3.1-8B').kv_cache_bytes(models.load_config('Llama-3.1-8B').max_position_embeddings)) }},
          more than the {{ py: fmt.nbytes(models.load_config('Llama-3.1-8B').weights_bytes('bf16')) }}
          of weights.
          """),
    _card("llm-sampling-order", "llm-inference.md", "sampling",
          "In which order are logit bias, temperature, top-k and top-p applied, and what is temperature 0?",
          """
          Logit bias, then temperature, then top-k, then top-p (the order of Hugging Face `generate`).
          Temperature 0 is greedy decoding: always the single likeliest token.
          """),
    _card("llm-kv-cache-why", "llm-inference.md", "223-attention",
          "Why can attention cache keys and values at all?",
          """
          The causal mask stops a token from seeing later ones, so earlier keys and values never
          change. A decode step computes only the new token's q, k and v and scores one query against
          the cache. Decoding 1,000 tokens after a 1,000-token prompt scores
          {{ py: f"{sum(attention.attended_pairs(t, causal=True) for t in range(1001, 2001)) / sum(attention.attended_pairs(1, t, causal=True) for t in range(1001, 2001)):,.0f}" }}
          times fewer query-key pairs with the cache than without.
          """),
    _card("llm-moe", "llm-inference.md", "224-mixture-of-experts",
          "Qwen3-235B-A22B: how many experts does a token use, and why does a large batch still read almost all of them?",
          """
          {{ py: moe.QWEN3_235B_A22B.k }} of {{ py: moe.QWEN3_235B_A22B.n_experts }} experts per
          layer, about {{ py: f"{models.load_config('Qwen3-235B-A22B').params().active / 1e9:.0f}" }}B
          of {{ py: f"{models.load_config('Qwen3-235B-A22B').params().total / 1e9:.0f}" }}B parameters
          per token. Each token picks its own experts, so a batch of
          {{ py: moe.tokens_for_coverage(moe.QWEN3_235B_A22B.n_experts, moe.QWEN3_235B_A22B.k, 0.9) }}
          tokens already touches 90 % of them: MoE saves compute, and memory only with expert
          parallelism.
          """),
    # ------------------------------------------------------------- 2.3
    _card("img-cfg-passes", "image-generation.md", "classifier-free-guidance",
          "How many denoiser forward passes do 50 steps with classifier-free guidance take?",
          """
          {{ py: diffusion.denoiser_passes(50, True) }}: guidance runs the denoiser twice per step,
          with the prompt and with the negative (or empty) prompt, and pushes the result away from the
          unconditioned one.
          """),
    _card("img-latent-tokens", "image-generation.md", "231-architecture",
          "What is a token for a diffusion transformer, and how many does a 1024 × 1024 image make?",
          """
          A 2 × 2 patch of the latent, which the VAE shrinks 8× per side from the pixels. A
          1024 × 1024 image is {{ py: f"{diffusion.latent_tokens_image(1024, 1024):,}" }} latent
          tokens, and every step runs the whole denoiser over all of them.
          """),
    _card("img-few-step", "image-generation.md", "232-and-233-few-step-models-and-video",
          "How much work does a few-step model save against 50 guided steps?",
          """
          8 guided steps save {{ py: f"{100 * diffusion.few_step_saving(50, True, 8, True):.0f}" }} %
          of the denoiser passes; 8 steps with guidance distilled into one pass save
          {{ py: f"{100 * diffusion.few_step_saving(50, True, 8, False):.0f}" }} %, at some cost in
          quality.
          """),
    # ------------------------------------------------------------- 2.4
    _card("bn-ops-byte", "bottlenecks.md", "241-opsbyte-and-arithmetic-intensity",
          "What is an H100's ops:byte ratio in FP16, and how is it computed?",
          """
          Peak compute over memory bandwidth:
          {{ py: f"{hardware.GPUS['H100-SXM'].tflops('fp16'):g}" }} TFLOP/s ÷
          {{ py: f"{hardware.GPUS['H100-SXM'].bandwidth_tb_s:g}" }} TB/s ≈
          {{ py: f"{hardware.GPUS['H100-SXM'].ops_per_byte('fp16'):.0f}" }} operations per byte. Work
          with a lower arithmetic intensity is memory bound, higher is compute bound.
          """),
    _card("bn-prefill-decode", "bottlenecks.md", "242-llm-bottlenecks",
          "Which phase of LLM inference is compute bound and which memory bound?",
          """
          Prefill is compute bound: Llama 3.1 8B on a 4,096-token prompt does
          {{ py: f"{roofline.prefill('Llama-3.1-8B', 4096).intensity:,.0f}" }} operations per byte.
          Decode is memory bound: one token at a time does
          {{ py: f"{roofline.decode('Llama-3.1-8B', 4096).intensity:.1f}" }}, so an H100 decodes one
          sequence at no more than {{ py: f"{1 / roofline.decode('Llama-3.1-8B', 4096).time:.0f}" }}
          tokens per second.
          """),
    _card("bn-attention-62", "bottlenecks.md", "242-llm-bottlenecks",
          "What is the arithmetic intensity of standard attention at N = 4096, d = 128 in FP16?",
          """
          `4N²d + 3N²` operations over `8N² + 8Nd` bytes:
          {{ py: f"{roofline.attention_intensity(4096, 128).intensity:.1f}" }} operations per byte, far
          below the H100's {{ py: f"{hardware.GPUS['H100-SXM'].ops_per_byte('fp16'):.0f}" }}, so it is
          memory bound. The `N²` score matrix written to memory and read back is why.
          """),
    _card("bn-batching", "bottlenecks.md", "242-llm-bottlenecks",
          "What does batching do to decode, and what can it not fix?",
          """
          A batch of B reads the weights once for all B sequences, so the weight matmuls' intensity
          grows with B: Llama 3.1 8B's cross the H100 ridge at a batch of
          {{ py: roofline.decode_critical_batch('Llama-3.1-8B', 4096, part='weights') }}. Each sequence
          still reads its own KV cache, so attention's intensity stays near
          {{ py: f"{roofline.decode('Llama-3.1-8B', 4096, batch=64).attention_intensity:.0f}" }}.
          """),
    _card("bn-image", "bottlenecks.md", "243-image-bottlenecks",
          "Are image and video models compute bound or memory bound?",
          """
          Compute bound, like prefill: every denoiser pass runs all weights over thousands of latent
          tokens. A Qwen-Image pass does
          {{ py: f"{diffusion.denoiser_pass('Qwen-Image').intensity:,.0f}" }} operations per byte in
          BF16.
          """),
    # ------------------------------------------------------------- 2.5
    _card("att-flash", "attention.md", "flashattention",
          "What does FlashAttention change, and what stays the same?",
          """
          The result and the operation count stay the same; S and P never leave on-chip memory, so
          only Q, K, V and O move (`8Nd` bytes in FP16). At N = 4096, d = 128 the intensity rises from
          {{ py: f"{roofline.attention_intensity(4096, 128).intensity:.0f}" }} to
          {{ py: f"{roofline.flash_attention_intensity(4096, 128).intensity:,.0f}" }} operations per
          byte.
          """),
    _card("att-window", "attention.md", "sliding-window-attention",
          "How much does a sliding window of w keys save?",
          """
          Each query sees at most `w` keys, so the work grows like `N·w` instead of `N²`. At N = 4096
          with w = 1024, causal attention scores
          {{ py: f"{100 * attention.attended_pairs(4096, causal=True, window=1024) / attention.attended_pairs(4096, causal=True):.0f}" }} %
          of the query-key pairs of full causal attention.
          """),
    _card("att-ssm", "attention.md", "state-space-models-and-hybrids",
          "Why do state-space models and hybrids scale better with context than attention?",
          """
          A state-space layer (Mamba) carries a fixed-size state from token to token instead of
          attending to every earlier token: work grows linearly with length and memory stays
          constant. Hybrids keep a few attention layers among many state-space layers.
          """),
)


def _inline_html(text: str) -> str:
    """Plain text to HTML, with `code` spans."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _sections(existing_pages: set[str]):
    for title, page, _ in chapter_map.SECTIONS:
        cards = [c for c in CARDS if c.page == page]
        if page in existing_pages and cards:
            yield title, page, cards


def _card_html(card: Card, prefix: str, section: str) -> str:
    q, a = f"recall-{card.id}-q", f"recall-{card.id}-a"
    link = f"{prefix}{card.page}#{card.anchor}"
    return f"""<div class="c2-recall__card" role="listitem" data-recall-card="{card.id}" markdown>
<p class="c2-recall__q"><button type="button" class="c2-recall__toggle" id="{q}" aria-expanded="false" aria-controls="{a}">{_inline_html(card.question)}</button></p>
<div class="c2-recall__a" id="{a}" role="region" aria-labelledby="{q}" hidden markdown>

{card.answer}

[Read it again in {section}]({link}){{ .c2-recall__back }}

</div>
<p class="c2-recall__seen" data-recall-seen hidden></p>
</div>
"""


def render(existing_pages: set[str], from_page: str) -> str:
    """Markdown for the recall check: a progress line, then each existing section's cards.

    `{{ py: }}` expressions in answers are left for the inline pass of `directives.expand`.
    """
    prefix = "../" * from_page.count("/")
    sections = list(_sections(existing_pages))
    total = sum(len(cards) for _, _, cards in sections)
    out = [f"""<div class="c2-recall" data-recall data-review-days="{REVIEW_AFTER_DAYS}" data-recall-total="{total}">
<p class="c2-recall__status" data-recall-status role="status">{total} cards. Which ones you have seen is kept in this browser only, never sent anywhere.</p>
<p class="c2-recall__tools"><button type="button" class="md-button c2-recall__reset" data-recall-reset hidden>Forget my progress</button></p>
</div>
<noscript><p>Without JavaScript every answer is shown below its question.</p><style>.c2-recall__a[hidden]{{display:block}}</style></noscript>
"""]
    for title, page, cards in sections:
        out.append(f"\n### {title}\n")
        out.append('<div class="c2-recall__deck" role="list" markdown>')
        out += [_card_html(c, prefix, title) for c in cards]
        out.append("</div>\n")
    return "\n".join(out)
