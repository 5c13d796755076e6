"""Hand-derived FLOPs of image and video passes, block by block from the published configs, for the tests.

Written from the configs' numbers, not from chapter2.denoiser: 2 per multiply-add at the rows each matmul sees,
attention 4 × q × kv × width; biases, norms and elementwise work left out (chapter2.denoiser's convention, which
tests/test_diffusion_denoisers.py checks against diffusers itself).
"""

from __future__ import annotations


def qwen_image_flops(n, t=256):
    """(total, attention) FLOPs of one Qwen-Image pass over n image and t text tokens (transformer/config.json:
    60 dual-stream blocks, 24 × 128 = 3072 wide, FF 4×, img_in from 64, txt_in from 3584, out to 64)."""
    d, L = 3072, 60
    block = 2 * 12 * d * d * (n + t) + 2 * 12 * d * d + 4 * (n + t) ** 2 * d  # both streams, two modulations
    outside = 2 * (256 * d + d * d + 2 * d * d) + 2 * 64 * d * n + 2 * 3584 * d * t + 2 * d * 64 * n
    return L * block + outside, L * 4 * (n + t) ** 2 * d


def flux_dev_flops(n, t=512):
    """(total, attention) FLOPs of one FLUX.1 [dev] pass (19 dual-stream and 38 single-stream blocks, 3072 wide,
    FF 4×, packed latent 64 in and out, T5 4096 in, pooled CLIP 768, timestep and guidance embedders)."""
    d = 3072
    double = 2 * 12 * d * d * (n + t) + 2 * 12 * d * d + 4 * (n + t) ** 2 * d
    single = 2 * 12 * d * d * (n + t) + 2 * 3 * d * d + 4 * (n + t) ** 2 * d  # qkv 3d + mlp 4d in, 5d -> d out
    outside = 2 * (2 * (256 * d + d * d) + 768 * d + d * d + 2 * d * d) + 2 * 4096 * d * t + 2 * 2 * 64 * d * n
    return 19 * double + 38 * single + outside, 57 * 4 * (n + t) ** 2 * d


def wan_14b_flops(n, t=512, d=5120, L=40, ff=13824):
    """(total, attention) FLOPs of one Wan 2.1 pass (14B: 40 blocks, 5120 wide, FFN 13824; 1.3B: 30, 1536, 8960;
    text 4096, a 1 × 2 × 2 patch over 16 channels): self-attention over the video, cross-attention to the text."""
    block = 2 * (6 * d * d + 2 * d * ff) * n + 2 * 2 * d * d * t + 4 * n * n * d + 4 * n * t * d
    outside = 2 * 64 * d * n + 2 * (256 * d + d * d + 6 * d * d) + 2 * (4096 * d + d * d) * t + 2 * d * 64 * n
    return L * block + outside, L * (4 * n * n * d + 4 * n * t * d)


def qwen_vl_encoder_flops(t):
    """One prompt of t tokens through Qwen2.5-VL-7B's language model to its last hidden state, all Qwen-Image's
    pipeline reads (28 layers, 3584 wide, GQA 28 / 4 heads of 128, MLP 18944; no LM head)."""
    h = 3584
    layer = h * h + 2 * h * 512 + h * h + 3 * h * 18944
    return 2 * 28 * layer * t + 28 * 4 * t * t * h


def umt5_xxl_flops(t):
    """One prompt of t tokens through umT5-XXL's encoder (24 layers, 4096 wide, 64 × 64 heads, gated FF 10240)."""
    d, ff = 4096, 10240
    return 24 * (2 * (4 * d * d + 3 * d * ff) * t + 4 * t * t * d)


QWEN_IMAGE_PARAMS = 20_430_401_088  # diffusers' QwenImageTransformer2DModel from transformer/config.json
QWEN_VL_PARAMS = 7_070_619_136  # Qwen2.5-VL-7B's language model, no LM head (transformers' model.language_model)
QWEN_VL_LM_HEAD = 3584 * 152064  # 544,997,376: hidden size x vocabulary, untied
QWEN_VL_VISION = 676_550_144  # the vision tower (transformers' model.visual, from Qwen-Image's vision_config)
FLUX_DEV_PARAMS = 11_901_408_320  # diffusers' FluxTransformer2DModel, FLUX.1-dev
WAN_1_3B_PARAMS = 1_418_996_800  # diffusers' WanTransformer3DModel, Wan2.1-T2V-1.3B
WAN_14B_PARAMS = 14_288_491_584  # diffusers' WanTransformer3DModel, Wan2.1-T2V-14B
UMT5_XXL_PARAMS = 5_680_910_336  # transformers' UMT5EncoderModel, umt5-xxl


def sd_vae_decoder_flops(width, height, latent=16):
    """One decode of the SD / SDXL / FLUX.1 AutoencoderKL (channels 128, 256, 512, 512; 2 + 1 resnets per up block;
    one single-head attention over the latent; no post_quant_conv when latent = 16) to width × height pixels."""
    p = [(width >> k) * (height >> k) for k in range(4)]  # pixels at full, 1/2, 1/4 and 1/8 resolution

    def conv(c_in, c_out, px, k=9):
        return 2 * c_in * c_out * k * px

    def res(c_in, c_out, px):
        return conv(c_in, c_out, px) + conv(c_out, c_out, px) + (conv(c_in, c_out, px, 1) if c_in != c_out else 0)

    total = conv(latent, 512, p[3]) + 2 * res(512, 512, p[3]) + 2 * 4 * 512 * 512 * p[3] + 4 * p[3] ** 2 * 512
    total += 3 * res(512, 512, p[3]) + conv(512, 512, p[2]) + 3 * res(512, 512, p[2]) + conv(512, 512, p[1])
    total += res(512, 256, p[1]) + 2 * res(256, 256, p[1]) + conv(256, 256, p[0])
    total += res(256, 128, p[0]) + 2 * res(128, 128, p[0]) + conv(128, 3, p[0])
    if latent == 4:
        total += 2 * 4 * 4 * p[3]  # post_quant_conv, 1 x 1
    return total


def clip_l_flops(t=77):
    """One prompt through CLIP ViT-L/14's text model (12 layers, 768 wide, MLP 3072)."""
    h = 768
    return 12 * (2 * (4 * h * h + 2 * h * 3072) * t + 4 * t * t * h)


def t5_xxl_flops(t):
    """One prompt through T5-v1.1-XXL's encoder: the same shape as umT5-XXL's (24 layers, 4096, gated FF 10240)."""
    return umt5_xxl_flops(t)


FLUX_VAE_PARAMS = 49_545_475  # diffusers' AutoencoderKL decoder, FLUX.1 vae/config.json
CLIP_L_PARAMS, T5_XXL_PARAMS = 123_060_480, 4_762_310_656  # transformers' CLIPTextModel, T5EncoderModel
FLUX_SCHNELL_PARAMS = 11_891_178_560  # diffusers' FluxTransformer2DModel without the guidance embedder
