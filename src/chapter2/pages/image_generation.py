"""Facts of section 2.3 Image generation (docs/image-generation.md)."""

from __future__ import annotations

from . import Card, Leaf, fact  # noqa: F401

PAGE = "image-generation.md"
TITLE = "2.3 Image generation"

LEAVES = (
    Leaf('Guidance doubles the passes: 50 steps, {{ py: diffusion.denoiser_passes(50, guidance=True) }} passes', 'classifier-free-guidance'),
    Leaf("Few-step models: 8 steps or fewer, {{ py: f'{100 * diffusion.few_step_saving(few_steps=8, few_guidance=True):.0f}' }} % less work", '232-and-233-few-step-models-and-video'),
)

# TODO(page-layer): answers still use legacy {{ py: }} expressions until this page is converted
CARDS = (
    Card('img-cfg-passes', 'classifier-free-guidance',
         'How many denoiser forward passes do 50 steps with classifier-free guidance take?',
         '{{ py: diffusion.denoiser_passes(50, True) }}: guidance runs the denoiser twice per step, with the prompt and with the negative (or empty) prompt, and pushes the result away from the unconditioned one.'),
    Card('img-latent-tokens', '231-architecture',
         'What is a token for a diffusion transformer, and how many does a 1024 × 1024 image make?',
         'A 2 × 2 patch of the latent, which the VAE shrinks 8× per side from the pixels. A 1024 × 1024 image is {{ py: f"{diffusion.latent_tokens_image(1024, 1024):,}" }} latent tokens, and every step runs the whole denoiser over all of them.'),
    Card('img-few-step', '232-and-233-few-step-models-and-video',
         'How much work does a few-step model save against 50 guided steps?',
         '8 guided steps save {{ py: f"{100 * diffusion.few_step_saving(50, True, 8, True):.0f}" }} % of the denoiser passes; 8 steps with guidance distilled into one pass save {{ py: f"{100 * diffusion.few_step_saving(50, True, 8, False):.0f}" }} %, at some cost in quality.'),
)
