"""The chapter map: one branch per section, one leaf per idea to remember.

Rendered by the `<!-- chapter-map -->` directive as a mermaid diagram (vendored
mermaid, links on every node) plus the same map as a nested list, the text
alternative. Sections whose page is not in the site are left out, so the map
only ever shows what exists.
"""

from __future__ import annotations

# (section title, page, [(leaf text, anchor on that page), ...])
SECTIONS = [
    ("2.1 Neural networks", "neural-networks.md", [
        ("Layers are matmuls: 2·m·k·n operations", "211-linear-layers-and-matmul"),
        ("Activations keep stacked layers from collapsing", "212-activation-functions"),
    ]),
    ("2.2 LLM inference", "llm-inference.md", [
        ("Prefill reads the prompt in parallel; decode makes one token per step", "prefill-and-decode"),
        ("Sampling: bias, temperature, top-k, top-p", "sampling"),
        ("Attention reads every earlier token, so cache K and V", "223-attention"),
        ("MoE: {{ py: f\"{models.load_config('Qwen3-235B-A22B').params().active / 1e9:.0f}B of {models.load_config('Qwen3-235B-A22B').params().total / 1e9:.0f}B\" }} parameters active per token", "224-mixture-of-experts"),
    ]),
    ("2.3 Image generation", "image-generation.md", [
        ("Guidance doubles the passes: 50 steps, {{ py: diffusion.denoiser_passes(50, guidance=True) }} passes", "classifier-free-guidance"),
        ("Few-step models: 8 steps or fewer, {{ py: f'{100 * diffusion.few_step_saving(few_steps=8, few_guidance=True):.0f}' }} % less work", "232-and-233-few-step-models-and-video"),
    ]),
    ("2.4 Bottlenecks", "bottlenecks.md", [
        ("Ops:byte of the GPU vs arithmetic intensity", "241-opsbyte-and-arithmetic-intensity"),
        ("Prefill is compute bound, decode memory bound", "242-llm-bottlenecks"),
    ]),
    ("2.5 Optimizing attention", "attention.md", [
        ("FlashAttention: same result, no N×N matrix in memory", "flashattention"),
        ("Sliding window: N·w instead of N²", "sliding-window-attention"),
        ("State-space models and hybrids scale linearly", "state-space-models-and-hybrids"),
    ]),
]


def render(existing_pages: set[str], from_page: str, leaf_text=lambda text: text) -> str:
    """Mermaid flowchart + nested list; `leaf_text` evaluates the `{{ py: }}` numbers in leaves."""
    prefix = "../" * from_page.count("/")
    sections = [s for s in SECTIONS if s[1] in existing_pages]
    lines = ["```mermaid", "flowchart LR", '  ch2["Chapter 2 · Models"]']
    clicks = []
    for i, (title, page, leaves) in enumerate(sections):
        url = prefix + page.removesuffix(".md") + "/"
        lines.append(f'  ch2 --> s{i}["{title}"]')
        clicks.append(f'  click s{i} "{url}" "{title}"')
        for j, (leaf, anchor) in enumerate(leaves):
            leaf = leaf_text(leaf)
            lines.append(f'  s{i} --> s{i}l{j}["{leaf}"]')
            clicks.append(f'  click s{i}l{j} "{url}#{anchor}" "{leaf}"')
    lines += clicks + ["```", "", "The same map as text:", ""]
    for title, page, leaves in sections:
        lines.append(f"- [{title}]({prefix}{page})")
        lines += [f"    - [{leaf_text(leaf)}]({prefix}{page}#{anchor})" for leaf, anchor in leaves]
    return "\n".join(lines) + "\n"
