"""A diffusion denoiser from its diffusers config.json: parameters and FLOPs of one pass (sections 2.3, 2.4.3).

    d = Denoiser.from_diffusers(config)   # a pipeline's transformer/config.json or unet/config.json, as a dict
    d.params().total                      # nn.Parameter count of the diffusers model (buffers excluded)
    d.pass_flops(width=1024, height=1024, frames=1, text_tokens=512)   # one forward pass, one sample

The FLOP convention: 2 per multiply-add of every matmul at the rows it really sees, every convolution at the
positions it produces, and attention's QKᵀ and PV (joint, cross or text-only); elementwise work (norms,
activations, RoPE, softmax) is left out. The rows a layer sees are what makes a denoiser differ from
"2 × parameters × tokens":

    IMAGE   latent tokens (the patchified latent: frames × height × width after the VAE and the patches)
    TEXT    prompt tokens (a dual-stream block's text weights see only these; cross-attention K/V act on them)
    JOINT   image + text tokens (single-stream blocks, joint attention)
    SAMPLE  1 per sample (timestep and pooled-text embedders, adaLN modulation linears)

A model is a tuple of parts (`Linear`, `Conv`, `Attention`, `LinearAttention`, `Weights`), each with the rows
it sees; one function per diffusers class family builds that tuple from the config (`FAMILIES`). The
oracle is diffusers itself: tests/test_diffusion_denoisers.py builds every class on the meta device from
published configs and compares parameters (equal) and FLOPs (torch's FlopCounterMode, within 2 %).

Pixels become tokens as the class's pipeline does: the VAE shrinks each side by `vae_spatial` (and time by
`vae_temporal`: latent frames = (frames − 1) / t + 1), then patches of `patch` = (t, h, w) latent pixels are
one token each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from numbers import Integral

from ._checks import positive_int
from .config_reader import ConfigReader

__all__ = ["Denoiser", "DenoiserParams", "PassFlops", "Linear", "Conv", "Attention", "LinearAttention", "Weights",
           "FAMILIES", "SUPPORTED", "IMAGE", "TEXT", "JOINT", "SAMPLE", "published_config",
           "PUBLISHED", "vae_decoder"]

IMAGE, TEXT, JOINT, SAMPLE = "image", "text", "joint", "sample"


# ------------------------------------------------------------------ parts
@dataclass(frozen=True)
class Linear:
    """nn.Linear(fan_in, fan_out) applied to `rows` rows, `count` identical copies (one per block)."""

    name: str
    fan_in: int
    fan_out: int
    rows: str
    bias: bool = True
    count: int = 1

    @property
    def params(self) -> int:
        return self.count * (self.fan_in * self.fan_out + (self.fan_out if self.bias else 0))

    def flops(self, rows: dict) -> int:
        return 2 * self.count * self.fan_in * self.fan_out * rows[self.rows]


@dataclass(frozen=True)
class Conv:
    """A convolution with `kernel` taps (k×k or t×k×k), producing `rows` output positions."""

    name: str
    c_in: int
    c_out: int
    kernel: int
    rows: str
    bias: bool = True
    count: int = 1

    @property
    def params(self) -> int:
        return self.count * (self.c_in * self.c_out * self.kernel + (self.c_out if self.bias else 0))

    def flops(self, rows: dict) -> int:
        return 2 * self.count * self.c_in * self.c_out * self.kernel * rows[self.rows]


@dataclass(frozen=True)
class Attention:
    """Softmax attention: QKᵀ and PV, 2 · q · kv · width each (width = heads × head_dim)."""

    name: str
    q: str
    kv: str
    width: int
    count: int = 1
    params = 0

    def flops(self, rows: dict) -> int:
        return 4 * self.count * rows[self.q] * rows[self.kv] * self.width


@dataclass(frozen=True)
class LinearAttention:
    """ReLU linear attention (Sana): VᵀK then (VᵀK)Q per head, V padded by a row of ones:
    4 · rows · heads · head_dim · (head_dim + 1)."""

    name: str
    rows: str
    heads: int
    head_dim: int
    count: int = 1
    params = 0

    def flops(self, rows: dict) -> int:
        return 4 * self.count * rows[self.rows] * self.heads * self.head_dim * (self.head_dim + 1)


@dataclass(frozen=True)
class Weights:
    """Parameters that do no matmul (norm scales, modulation tables, learned positions): counted, no FLOPs."""

    name: str
    n: int
    count: int = 1

    @property
    def params(self) -> int:
        return self.count * self.n

    def flops(self, rows: dict) -> int:
        return 0


def _mlp(name, d, hidden, rows, count, gated=False, bias=True):
    """A feed-forward: d -> hidden (two of them for a gated unit) -> d."""
    return [Linear(f"{name}.up", d, hidden * (2 if gated else 1), rows, bias, count),
            Linear(f"{name}.down", hidden, d, rows, bias, count)]


def _embedder(name, fan_in, d, rows=SAMPLE, count=1):
    """diffusers' TimestepEmbedding / PixArtAlphaTextProjection: Linear(fan_in, d), act, Linear(d, d)."""
    return [Linear(f"{name}.1", fan_in, d, rows, True, count), Linear(f"{name}.2", d, d, rows, True, count)]


# ------------------------------------------------------------------ config fields
class _Fields(ConfigReader):
    """A diffusers config read with its class's defaults (`chapter2.config_reader.ConfigReader`): a null is a value,
    as diffusers passes it to the class; messages name the class, the field, the value and what was expected."""

    def __init__(self, config: dict, defaults: dict):
        self.cls = config.get("_class_name")
        super().__init__(config, defaults, f"{self.cls} config", owner=str(self.cls), config_class=str(self.cls),
                         null_is_value=True)
        self.config = config


# ------------------------------------------------------------------ families
@dataclass(frozen=True)
class _Family:
    """One diffusers class: its defaults (the class's __init__), how pixels become tokens, its parts."""

    defaults: dict
    build: object  # (fields) -> list of parts
    vae_spatial: int
    vae_temporal: int  # 1 for image models
    patch: object  # (fields) -> (t, h, w)
    text_tokens: int  # what its pipeline feeds by default
    latent_channels: object  # (fields) -> int
    levels: object = lambda f: 1  # (fields) -> UNet resolutions (the latent must divide by 2^(levels-1))


def _double_stream(d, head_dim, blocks, mod_img, mod_txt, ff_hidden, txt_out=True, txt_ff=True, qk_norm=True):
    """An MMDiT dual-stream block (SD3, FLUX.1 double blocks, Qwen-Image): image weights see image tokens,
    text weights text tokens, one attention over both."""
    n = blocks
    parts = [Linear("mod.image", d, mod_img * d, SAMPLE, True, n), Linear("mod.text", d, mod_txt * d, SAMPLE, True, n),
             Linear("attn.qkv.image", d, 3 * d, IMAGE, True, n), Linear("attn.qkv.text", d, 3 * d, TEXT, True, n),
             Attention("attn.joint", JOINT, JOINT, d, n), Linear("attn.out.image", d, d, IMAGE, True, n),
             *_mlp("ff.image", d, ff_hidden, IMAGE, n)]
    if txt_out:
        parts.append(Linear("attn.out.text", d, d, TEXT, True, n))
    if txt_ff:
        parts += _mlp("ff.text", d, ff_hidden, TEXT, n)
    if qk_norm:
        parts.append(Weights("attn.qk_norm", 4 * head_dim, n))
    return parts


def _single_stream(d, head_dim, blocks, hidden):
    """A single-stream block (FLUX.1, HunyuanVideo): one set of weights over image and text tokens together, the
    attention and MLP inputs fused into one projection and their outputs into another."""
    n = blocks
    return [Linear("single.mod", d, 3 * d, SAMPLE, True, n), Linear("single.qkv", d, 3 * d, JOINT, True, n),
            Linear("single.mlp_in", d, hidden, JOINT, True, n), Linear("single.out", d + hidden, d, JOINT, True, n),
            Attention("single.attn", JOINT, JOINT, d, n), Weights("single.qk_norm", 2 * head_dim, n)]


def _flux(f: _Fields):
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n2, n1 = heads * hd, f.int("num_layers"), f.int("num_single_layers", zero=True)
    p = f.int("patch_size")
    out = f.int("out_channels", optional=True) or f.int("in_channels")
    parts = [*_embedder("time", 256, d), *_embedder("pooled_text", f.int("pooled_projection_dim"), d),
             Linear("context_embedder", f.int("joint_attention_dim"), d, TEXT), Linear("x_embedder", f.int("in_channels"), d, IMAGE),
             *_double_stream(d, hd, n2, 6, 6, 4 * d),
             *_single_stream(d, hd, n1, 4 * d),
             Linear("norm_out", d, 2 * d, SAMPLE), Linear("proj_out", d, p * p * out, IMAGE)]
    if f.bool("guidance_embeds"):
        parts += _embedder("guidance", 256, d)
    return parts


def _sd3(f: _Fields):
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, p = heads * hd, f.int("num_layers"), f.int("patch_size")
    c_in, out = f.int("in_channels"), f.int("out_channels")
    dual = f.raw("dual_attention_layers") or ()
    qk = f.choice("qk_norm", (None, "rms_norm")) is not None
    if f.int("caption_projection_dim") != d:
        raise ValueError(f"{f.name('caption_projection_dim')} must equal num_attention_heads × "
                         f"attention_head_dim ({d}), got {f.raw('caption_projection_dim')!r}")
    n_dual = len([i for i in dual if isinstance(i, Integral) and 0 <= i < n])
    if n_dual != len(dual):
        raise ValueError(f"{f.name('dual_attention_layers')} must list block indices below "
                         f"num_layers ({n}), got {dual!r}")
    parts = [Conv("pos_embed", c_in, d, p * p, IMAGE), *_embedder("time", 256, d),
             *_embedder("pooled_text", f.int("pooled_projection_dim"), d),
             Linear("context_embedder", f.int("joint_attention_dim"), d, TEXT),
             # every block but the last, whose text stream only feeds attention (context_pre_only)
             *_double_stream(d, hd, n - 1, 6, 6, 4 * d, qk_norm=qk),
             *_double_stream(d, hd, 1, 6, 2, 4 * d, txt_out=False, txt_ff=False, qk_norm=qk),
             Linear("norm_out", d, 2 * d, SAMPLE), Linear("proj_out", d, p * p * out, IMAGE)]
    if n_dual:  # SD3.5 Medium (MMDiT-X): a second, image-only attention; modulation grows from 6d to 9d
        parts += [Linear("attn2.mod", d, 3 * d, SAMPLE, True, n_dual), Linear("attn2.qkv", d, 3 * d, IMAGE, True, n_dual),
                  Attention("attn2", IMAGE, IMAGE, d, n_dual), Linear("attn2.out", d, d, IMAGE, True, n_dual)]
        if qk:
            parts.append(Weights("attn2.qk_norm", 2 * hd, n_dual))
    return parts


def _qwen(f: _Fields):
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, p = heads * hd, f.int("num_layers"), f.int("patch_size")
    txt = f.int("joint_attention_dim")
    return [*_embedder("time", 256, d), Weights("txt_norm", txt), Linear("txt_in", txt, d, TEXT),
            Linear("img_in", f.int("in_channels"), d, IMAGE), *_double_stream(d, hd, n, 6, 6, 4 * d),
            Linear("norm_out", d, 2 * d, SAMPLE), Linear("proj_out", d, p * p * f.int("out_channels"), IMAGE)]


def _wan(f: _Fields):
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, ffn = heads * hd, f.int("num_layers"), f.int("ffn_dim")
    pt, ph, pw = f.ints("patch_size", 3)
    if f.raw("image_dim") is not None or f.raw("added_kv_proj_dim") is not None:
        raise ValueError(f"{f.name('image_dim')} and ['added_kv_proj_dim'] must be null "
                         f"(text-to-video), got {f.raw('image_dim')!r} and {f.raw('added_kv_proj_dim')!r}")
    qk = f.choice("qk_norm", (None, "rms_norm_across_heads")) is not None
    parts = [Conv("patch_embedding", f.int("in_channels"), d, pt * ph * pw, IMAGE),
             *_embedder("time", f.int("freq_dim"), d), Linear("time_proj", d, 6 * d, SAMPLE),
             *_embedder("text", f.int("text_dim"), d, TEXT),
             Weights("scale_shift_table", 6 * d, n), Weights("out_scale_shift", 2 * d),
             Linear("self.qkv", d, 3 * d, IMAGE, True, n), Attention("self", IMAGE, IMAGE, d, n),
             Linear("self.out", d, d, IMAGE, True, n),
             Linear("cross.q", d, d, IMAGE, True, n), Linear("cross.kv", d, 2 * d, TEXT, True, n),
             Attention("cross", IMAGE, TEXT, d, n), Linear("cross.out", d, d, IMAGE, True, n),
             *_mlp("ffn", d, ffn, IMAGE, n), Linear("proj_out", d, pt * ph * pw * f.int("out_channels"), IMAGE)]
    if qk:
        parts.append(Weights("qk_norm", 4 * d, n))
    if f.bool("cross_attn_norm"):
        parts.append(Weights("norm2", 2 * d, n))
    return parts


def _resnet(name, c_in, c_out, temb, level, n=1):
    """diffusers' ResnetBlock2D: GroupNorm, 3×3 conv, time projection (per sample), GroupNorm, 3×3 conv, and a 1×1
    shortcut when the channels change."""
    parts = [Weights(f"{name}.norms", 2 * c_in + 2 * c_out, n), Conv(f"{name}.conv1", c_in, c_out, 9, level, True, n),
             Linear(f"{name}.time", temb, c_out, SAMPLE, True, n), Conv(f"{name}.conv2", c_out, c_out, 9, level, True, n)]
    if c_in != c_out:
        parts.append(Conv(f"{name}.shortcut", c_in, c_out, 1, level, True, n))
    return parts


def _spatial_transformer(name, c, depth, cross_dim, level, n=1):
    """diffusers' Transformer2DModel inside a UNet: GroupNorm, 1×1 projection in, `depth` blocks of self-attention,
    cross-attention (K/V from the text) and a GEGLU feed-forward, projection out. Attention width = channels."""
    k = depth * n
    return [Weights(f"{name}.norm", 2 * c, n), Linear(f"{name}.proj_in", c, c, level, True, n),
            Linear(f"{name}.proj_out", c, c, level, True, n), Weights(f"{name}.block_norms", 6 * c, k),
            Linear(f"{name}.self.qkv", c, 3 * c, level, False, k), Attention(f"{name}.self", level, level, c, k),
            Linear(f"{name}.self.out", c, c, level, True, k), Linear(f"{name}.cross.q", c, c, level, False, k),
            Linear(f"{name}.cross.kv", cross_dim, 2 * c, TEXT, False, k), Attention(f"{name}.cross", level, TEXT, c, k),
            Linear(f"{name}.cross.out", c, c, level, True, k), *_mlp(f"{name}.ff", c, 4 * c, level, k, gated=True)]


_DOWN = ("CrossAttnDownBlock2D", "DownBlock2D")
_UP = ("CrossAttnUpBlock2D", "UpBlock2D")


def _unet_encoder(f: _Fields, cls: str, check_up: bool = True):
    """The down half and middle of a UNet2DConditionModel (a ControlNet copies exactly these): conv_in, the
    timestep (and SDXL's text_time) embedders, the down blocks and the mid block. Returns the parts and the shape."""
    chans = f.ints("block_out_channels")
    levels = len(chans)
    checks = (("down_block_types", _DOWN),) + ((("up_block_types", _UP),) if check_up else ())
    for key, options in checks:
        value = f.raw(key)
        if not isinstance(value, list | tuple) or len(value) != levels or any(v not in options for v in value):
            raise ValueError(f"{f.name(key)} must list {levels} of {list(options)}, got {value!r}")
    down = f.raw("down_block_types")
    f.choice("mid_block_type", ("UNetMidBlock2DCrossAttn",))
    f.choice("addition_embed_type", (None, "text_time"))
    f.choice("class_embed_type", (None,))
    f.choice("encoder_hid_dim_type", (None,))
    f.choice("time_embedding_type", ("positional",))
    f.choice("resnet_time_scale_shift", ("default",))
    lpb = f.int("layers_per_block")
    depth = f.ints("transformer_layers_per_block", levels)
    cross = f.ints("cross_attention_dim", levels)
    temb = 4 * chans[0]
    parts = [Conv("conv_in", f.int("in_channels"), chans[0], 9, "s0"), *_embedder("time", chans[0], temb)]
    if f.raw("addition_embed_type") == "text_time":
        parts += [Linear("add_embedding.1", f.int("projection_class_embeddings_input_dim"), temb, SAMPLE),
                  Linear("add_embedding.2", temb, temb, SAMPLE)]
    c_prev = chans[0]
    for i, (c, kind) in enumerate(zip(chans, down, strict=True)):
        lvl = f"s{i}"
        for j in range(lpb):
            parts += _resnet(f"down{i}.res{j}", c_prev if j == 0 else c, c, temb, lvl)
        if kind == "CrossAttnDownBlock2D":
            parts += _spatial_transformer(f"down{i}.attn", c, depth[i], cross[i], lvl, lpb)
        if i < levels - 1:
            parts.append(Conv(f"down{i}.downsample", c, c, 9, f"s{i + 1}"))
        c_prev = c
    last = f"s{levels - 1}"
    parts += [*_resnet("mid.res", chans[-1], chans[-1], temb, last, 2),
              *_spatial_transformer("mid.attn", chans[-1], depth[-1], cross[-1], last)]
    return parts, chans, levels, lpb, depth, cross, temb


def _unet(f: _Fields):
    """UNet2DConditionModel (SD 1.x, SDXL): resolution level i holds s_i latent pixels (each side halved per level)."""
    parts, chans, levels, lpb, depth, cross, temb = _unet_encoder(f, "UNet2DConditionModel")
    up = f.raw("up_block_types")
    rev, rdepth, rcross = chans[::-1], depth[::-1], cross[::-1]
    for i, (c, kind) in enumerate(zip(rev, up, strict=True)):
        level = levels - 1 - i
        lvl = f"s{level}"
        prev = rev[max(i - 1, 0)]
        c_in = rev[min(i + 1, levels - 1)]
        for j in range(lpb + 1):
            skip = c_in if j == lpb else c
            parts += _resnet(f"up{i}.res{j}", (prev if j == 0 else c) + skip, c, temb, lvl)
        if kind == "CrossAttnUpBlock2D":
            parts += _spatial_transformer(f"up{i}.attn", c, rdepth[i], rcross[i], lvl, lpb + 1)
        if level > 0:
            parts.append(Conv(f"up{i}.upsample", c, c, 9, f"s{level - 1}"))
    parts += [Weights("conv_norm_out", 2 * chans[0]), Conv("conv_out", chans[0], f.int("out_channels"), 9, "s0")]
    return parts


def _controlnet(f: _Fields):
    """ControlNetModel (Zhang et al. 2023, arXiv:2302.05543): a trainable copy of the UNet's down half and middle,
    run every step beside the UNet, fed the condition image through a small convolutional encoder at pixel
    resolution ("p0" = every output pixel, "p1" a quarter, ...) and returning through 1 × 1 zero convolutions."""
    parts, chans, levels, lpb, _, _, _ = _unet_encoder(f, "ControlNetModel", check_up=False)
    f.choice("global_pool_conditions", (False,))
    emb = f.ints("conditioning_embedding_out_channels")
    parts += [Conv("cond.conv_in", f.int("conditioning_channels"), emb[0], 9, "p0")]
    for i in range(len(emb) - 1):
        parts += [Conv(f"cond.{i}", emb[i], emb[i], 9, f"p{i}"), Conv(f"cond.{i}.down", emb[i], emb[i + 1], 9, f"p{i + 1}")]
    parts += [Conv("cond.conv_out", emb[-1], chans[0], 9, f"p{len(emb) - 1}"),
              Conv("zero.conv_in", chans[0], chans[0], 1, "s0")]
    for i, c in enumerate(chans):
        parts.append(Conv(f"zero.down{i}", c, c, 1, f"s{i}", True, lpb))
        if i < levels - 1:
            parts.append(Conv(f"zero.down{i}.downsample", c, c, 1, f"s{i + 1}"))
    parts.append(Conv("zero.mid", chans[-1], chans[-1], 1, f"s{levels - 1}"))
    return parts


def _pixart(f: _Fields):
    """PixArt-α/Σ: a DiT with adaLN-single (one modulation linear per pass, a learned table per block), self-attention
    over the image, cross-attention to the projected T5 text."""
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, p = heads * hd, f.int("num_layers"), f.int("patch_size")
    f.choice("norm_type", ("ada_norm_single",))
    if f.raw("use_additional_conditions") is not False:
        raise ValueError(f"{f.name('use_additional_conditions')} must be false (PixArt-Σ), "
                         f"got {f.raw('use_additional_conditions')!r}")
    if f.int("cross_attention_dim") != d:
        raise ValueError(f"{f.name('cross_attention_dim')} must equal num_attention_heads × "
                         f"attention_head_dim ({d}), got {f.raw('cross_attention_dim')!r}")
    bias = f.bool("attention_bias")
    parts = [Conv("pos_embed", f.int("in_channels"), d, p * p, IMAGE), *_embedder("time", 256, d),
             Linear("adaln_single", d, 6 * d, SAMPLE), *_embedder("caption", f.int("caption_channels"), d, TEXT),
             Weights("scale_shift_tables", 6 * d, n), Weights("out_scale_shift", 2 * d),
             Linear("self.qkv", d, 3 * d, IMAGE, bias, n), Attention("self", IMAGE, IMAGE, d, n),
             Linear("self.out", d, d, IMAGE, True, n), Linear("cross.q", d, d, IMAGE, bias, n),
             Linear("cross.kv", d, 2 * d, TEXT, bias, n), Attention("cross", IMAGE, TEXT, d, n),
             Linear("cross.out", d, d, IMAGE, True, n), *_mlp("ff", d, 4 * d, IMAGE, n),
             Linear("proj_out", d, p * p * f.int("out_channels"), IMAGE)]
    if f.bool("norm_elementwise_affine"):
        parts.append(Weights("block_norms", 4 * d, n))
    return parts


def _sana(f: _Fields):
    """Sana: linear (ReLU) self-attention over the image, softmax cross-attention to Gemma text, and a GLU
    feed-forward of 1×1 and depthwise 3×3 convolutions (GLUMBConv)."""
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, p = heads * hd, f.int("num_layers"), f.int("patch_size")
    xw = f.int("num_cross_attention_heads") * f.int("cross_attention_head_dim")
    f.choice("qk_norm", (None,))
    f.choice("guidance_embeds", (False,))
    f.choice("interpolation_scale", (None,))
    if f.int("cross_attention_dim") != d:
        raise ValueError(f"{f.name('cross_attention_dim')} must equal num_attention_heads × "
                         f"attention_head_dim ({d}), got {f.raw('cross_attention_dim')!r}")
    hidden = int(f.real("mlp_ratio") * d)
    bias = f.bool("attention_bias")
    parts = [Conv("patch_embed", f.int("in_channels"), d, p * p, IMAGE), *_embedder("time", 256, d),
             Linear("adaln_single", d, 6 * d, SAMPLE), *_embedder("caption", f.int("caption_channels"), d, TEXT),
             Weights("caption_norm", d), Weights("scale_shift_tables", 6 * d, n), Weights("out_scale_shift", 2 * d),
             Linear("self.qkv", d, 3 * d, IMAGE, bias, n), LinearAttention("self", IMAGE, heads, hd, n),
             Linear("self.out", d, d, IMAGE, True, n), Linear("cross.q", d, xw, IMAGE, True, n),
             Linear("cross.kv", d, 2 * xw, TEXT, True, n), Attention("cross", IMAGE, TEXT, xw, n),
             Linear("cross.out", xw, d, IMAGE, True, n),
             Conv("ff.inverted", d, 2 * hidden, 1, IMAGE, True, n), Conv("ff.depthwise", 1, 2 * hidden, 9, IMAGE, True, n),
             Conv("ff.point", hidden, d, 1, IMAGE, False, n),
             Linear("proj_out", d, p * p * (f.int("out_channels", optional=True) or f.int("in_channels")), IMAGE)]
    if f.bool("norm_elementwise_affine"):
        parts.append(Weights("norm2", 2 * d, n))
    return parts


def _hunyuan_video(f: _Fields):
    """HunyuanVideo: FLUX.1's double- and single-stream blocks over a 3D patch embedding, after a token refiner
    (small transformer blocks with self-attention over the text tokens alone)."""
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n2, n1, nr = heads * hd, f.int("num_layers"), f.int("num_single_layers", zero=True), f.int("num_refiner_layers")
    p, pt = f.int("patch_size"), f.int("patch_size_t")
    hidden, txt = int(d * f.real("mlp_ratio")), f.int("text_embed_dim")
    f.choice("qk_norm", ("rms_norm",))
    f.choice("image_condition_type", (None,))
    parts = [Conv("x_embedder", f.int("in_channels"), d, pt * p * p, IMAGE),
             # the token refiner: its own timestep and mean-pooled-text embedders, then blocks over the text alone
             Linear("refiner.proj_in", txt, d, TEXT), *_embedder("refiner.time", 256, d),
             *_embedder("refiner.pooled_text", txt, d),
             Weights("refiner.norms", 4 * d, nr), Linear("refiner.qkv", d, 3 * d, TEXT, True, nr),
             Attention("refiner.attn", TEXT, TEXT, d, nr), Linear("refiner.out", d, d, TEXT, True, nr),
             *_mlp("refiner.ff", d, 4 * d, TEXT, nr), Linear("refiner.mod", d, 2 * d, SAMPLE, True, nr),
             *_embedder("time", 256, d), *_embedder("pooled_text", f.int("pooled_projection_dim"), d),
             *_double_stream(d, hd, n2, 6, 6, hidden), *_single_stream(d, hd, n1, hidden),
             Linear("norm_out", d, 2 * d, SAMPLE), Linear("proj_out", d, pt * p * p * f.int("out_channels"), IMAGE)]
    if f.bool("guidance_embeds"):
        parts += _embedder("guidance", 256, d)
    return parts


def _ltx_video(f: _Fields):
    """LTX-Video: a PixArt-style DiT (adaLN-single, cross-attention to T5) on a 32× spatial, 8× temporal latent
    with 1 × 1 × 1 patches."""
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n = heads * hd, f.int("num_layers")
    f.choice("qk_norm", ("rms_norm_across_heads",))
    if f.int("cross_attention_dim") != d:
        raise ValueError(f"{f.name('cross_attention_dim')} must equal num_attention_heads × "
                         f"attention_head_dim ({d}), got {f.raw('cross_attention_dim')!r}")
    p, pt = f.int("patch_size"), f.int("patch_size_t")
    bias, out_bias = f.bool("attention_bias"), f.bool("attention_out_bias")
    return [Linear("proj_in", f.int("in_channels") * pt * p * p, d, IMAGE), *_embedder("time", 256, d),
            Linear("adaln_single", d, 6 * d, SAMPLE), *_embedder("caption", f.int("caption_channels"), d, TEXT),
            Weights("scale_shift_tables", 6 * d, n), Weights("out_scale_shift", 2 * d), Weights("qk_norms", 4 * d, n),
            Linear("self.qkv", d, 3 * d, IMAGE, bias, n), Attention("self", IMAGE, IMAGE, d, n),
            Linear("self.out", d, d, IMAGE, out_bias, n), Linear("cross.q", d, d, IMAGE, bias, n),
            Linear("cross.kv", d, 2 * d, TEXT, bias, n), Attention("cross", IMAGE, TEXT, d, n),
            Linear("cross.out", d, d, IMAGE, out_bias, n), *_mlp("ff", d, 4 * d, IMAGE, n),
            Linear("proj_out", d, pt * p * p * f.int("out_channels"), IMAGE)]


def _cogvideox(f: _Fields):
    """CogVideoX: text tokens are concatenated with the video tokens before the first block, so every block
    linear and the attention see both (an "expert" adaLN per stream, run per sample)."""
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, p, te = heads * hd, f.int("num_layers"), f.int("patch_size"), f.int("time_embed_dim")
    if f.raw("patch_size_t") is not None or f.raw("ofs_embed_dim") is not None:
        raise ValueError(f"{f.name('patch_size_t')} and ['ofs_embed_dim'] must be null "
                         f"(CogVideoX 1.0), got {f.raw('patch_size_t')!r} and {f.raw('ofs_embed_dim')!r}")
    if f.bool("use_learned_positional_embeddings"):
        raise ValueError(f"{f.name('use_learned_positional_embeddings')} must be false, "
                         "got True")
    affine = 2 * d if f.bool("norm_elementwise_affine") else 0
    return [Conv("patch_embed", f.int("in_channels"), d, p * p, IMAGE), Linear("text_proj", f.int("text_embed_dim"), d, TEXT),
            Linear("time.1", d, te, SAMPLE), Linear("time.2", te, te, SAMPLE),
            Linear("mod", te, 12 * d, SAMPLE, True, n), Weights("norms", 2 * affine, n), Weights("qk_norms", 4 * hd, n),
            Linear("qkv", d, 3 * d, JOINT, f.bool("attention_bias"), n), Attention("attn", JOINT, JOINT, d, n),
            Linear("out", d, d, JOINT, True, n), *_mlp("ff", d, 4 * d, JOINT, n), Weights("norm_final", 2 * d),
            Linear("norm_out", te, 2 * d, SAMPLE), Weights("norm_out.norm", affine),
            Linear("proj_out", d, p * p * f.int("out_channels"), IMAGE)]


def _mochi(f: _Fields):
    """Mochi 1 (AsymmDiT): a dual-stream model whose text stream is narrower (pooled_projection_dim) than its
    image stream; text K/V/Q project up into the joint attention, and the last block keeps no text output."""
    heads, hd = f.int("num_attention_heads"), f.int("attention_head_dim")
    d, n, p = heads * hd, f.int("num_layers"), f.int("patch_size")
    dt, txt = f.int("pooled_projection_dim"), f.int("text_embed_dim")
    f.choice("qk_norm", ("rms_norm",))
    f.choice("activation_fn", ("swiglu",))
    ff, ff_t = (4 * d * 2) // 3, (4 * dt * 2) // 3
    out = f.int("out_channels", optional=True) or f.int("in_channels")
    return [Conv("patch_embed", f.int("in_channels"), d, p * p, IMAGE), *_embedder("time", f.int("time_embed_dim"), d),
            # attention pooling of the prompt: one query (the masked mean) over the mean and the tokens, 8 heads
            Linear("pooler.kv", txt, 2 * txt, "text+1"), Linear("pooler.q", txt, txt, SAMPLE),
            Attention("pooler", SAMPLE, "text+1", txt), Linear("pooler.out", txt, d, SAMPLE),
            Linear("caption_proj", txt, dt, TEXT),
            # RoPE angles: the (t, h, w) position of each token times a learned (3, heads × head_dim/2) table
            Linear("rope.frequencies", 3, heads * hd // 2, IMAGE, False),
            Linear("mod.image", d, 4 * d, SAMPLE, True, n), Linear("mod.text", d, 4 * dt, SAMPLE, True, n - 1),
            Linear("mod.text.last", d, dt, SAMPLE, True, 1), Weights("qk_norms", 4 * hd, n),
            Linear("qkv.image", d, 3 * d, IMAGE, False, n), Linear("qkv.text", dt, 3 * d, TEXT, False, n),
            Attention("joint", JOINT, JOINT, d, n), Linear("out.image", d, d, IMAGE, True, n),
            Linear("out.text", d, dt, TEXT, True, n - 1),
            *_mlp("ff.image", d, ff, IMAGE, n, gated=True, bias=False),
            *_mlp("ff.text", dt, ff_t, TEXT, n - 1, gated=True, bias=False),
            Linear("norm_out", d, 2 * d, SAMPLE), Linear("proj_out", d, p * p * out, IMAGE)]


_FLUX_DEFAULTS = dict(patch_size=1, in_channels=64, out_channels=None, num_layers=19, num_single_layers=38,
                      attention_head_dim=128, num_attention_heads=24, joint_attention_dim=4096,
                      pooled_projection_dim=768, guidance_embeds=False)
_SD3_DEFAULTS = dict(sample_size=128, patch_size=2, in_channels=16, num_layers=18, attention_head_dim=64,
                     num_attention_heads=18, joint_attention_dim=4096, caption_projection_dim=1152,
                     pooled_projection_dim=2048, out_channels=16, pos_embed_max_size=96, dual_attention_layers=(),
                     qk_norm=None)
_QWEN_DEFAULTS = dict(patch_size=2, in_channels=64, out_channels=16, num_layers=60, attention_head_dim=128,
                      num_attention_heads=24, joint_attention_dim=3584, guidance_embeds=False)
_WAN_DEFAULTS = dict(patch_size=(1, 2, 2), num_attention_heads=40, attention_head_dim=128, in_channels=16,
                     out_channels=16, text_dim=4096, freq_dim=256, ffn_dim=13824, num_layers=40,
                     cross_attn_norm=True, qk_norm="rms_norm_across_heads", image_dim=None, added_kv_proj_dim=None)

_UNET_DEFAULTS = dict(in_channels=4, out_channels=4, down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
                      mid_block_type="UNetMidBlock2DCrossAttn", up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
                      block_out_channels=(320, 640, 1280, 1280), layers_per_block=2, cross_attention_dim=1280,
                      transformer_layers_per_block=1, addition_embed_type=None, class_embed_type=None,
                      encoder_hid_dim_type=None, time_embedding_type="positional", resnet_time_scale_shift="default",
                      projection_class_embeddings_input_dim=None)

_PIXART_DEFAULTS = dict(num_attention_heads=16, attention_head_dim=72, in_channels=4, out_channels=None, num_layers=28,
                        attention_bias=True, patch_size=None, norm_type="ada_norm_single", norm_elementwise_affine=False,
                        caption_channels=None, cross_attention_dim=None, use_additional_conditions=None)
_SANA_DEFAULTS = dict(in_channels=32, out_channels=32, num_attention_heads=70, attention_head_dim=32, num_layers=20,
                      num_cross_attention_heads=20, cross_attention_head_dim=112, cross_attention_dim=2240,
                      caption_channels=2304, mlp_ratio=2.5, attention_bias=False, patch_size=1,
                      norm_elementwise_affine=False, interpolation_scale=None, guidance_embeds=False, qk_norm=None)

_HUNYUAN_DEFAULTS = dict(in_channels=16, out_channels=16, num_attention_heads=24, attention_head_dim=128, num_layers=20,
                         num_single_layers=40, num_refiner_layers=2, mlp_ratio=4.0, patch_size=2, patch_size_t=1,
                         qk_norm="rms_norm", guidance_embeds=True, text_embed_dim=4096, pooled_projection_dim=768,
                         image_condition_type=None)
_LTX_DEFAULTS = dict(in_channels=128, out_channels=128, patch_size=1, patch_size_t=1, num_attention_heads=32,
                     attention_head_dim=64, cross_attention_dim=2048, num_layers=28, caption_channels=4096,
                     attention_bias=True, attention_out_bias=True, qk_norm="rms_norm_across_heads")
_COG_DEFAULTS = dict(num_attention_heads=30, attention_head_dim=64, in_channels=16, out_channels=16, num_layers=30,
                     patch_size=2, patch_size_t=None, text_embed_dim=4096, time_embed_dim=512, ofs_embed_dim=None,
                     attention_bias=True, norm_elementwise_affine=True, use_learned_positional_embeddings=False)
_MOCHI_DEFAULTS = dict(patch_size=2, num_attention_heads=24, attention_head_dim=128, num_layers=48,
                       pooled_projection_dim=1536, in_channels=12, out_channels=None, qk_norm="rms_norm",
                       text_embed_dim=4096, time_embed_dim=256, activation_fn="swiglu")


def _packed(f):
    """FLUX.1 and Qwen-Image pack 2 × 2 latent pixels into one token before the transformer (in_channels = 4c)."""
    return (1, 2, 2)


FAMILIES = {
    "FluxTransformer2DModel": _Family(_FLUX_DEFAULTS, _flux, 8, 1, _packed, 512,
                                      lambda f: f.int("in_channels") // 4),
    "SD3Transformer2DModel": _Family(_SD3_DEFAULTS, _sd3, 8, 1, lambda f: (1, f.int("patch_size"), f.int("patch_size")),
                                     333, lambda f: f.int("in_channels")),
    "QwenImageTransformer2DModel": _Family(_QWEN_DEFAULTS, _qwen, 8, 1, _packed, 256,
                                           lambda f: f.int("in_channels") // 4),
    "WanTransformer3DModel": _Family(_WAN_DEFAULTS, _wan, 8, 4, lambda f: f.ints("patch_size", 3), 512,
                                     lambda f: f.int("in_channels")),
    "PixArtTransformer2DModel": _Family(_PIXART_DEFAULTS, _pixart, 8, 1,
                                        lambda f: (1, f.int("patch_size"), f.int("patch_size")), 300,
                                        lambda f: f.int("in_channels")),
    "SanaTransformer2DModel": _Family(_SANA_DEFAULTS, _sana, 32, 1,
                                      lambda f: (1, f.int("patch_size"), f.int("patch_size")), 300,
                                      lambda f: f.int("in_channels")),
    "HunyuanVideoTransformer3DModel": _Family(
        _HUNYUAN_DEFAULTS, _hunyuan_video, 8, 4, lambda f: (f.int("patch_size_t"), f.int("patch_size"), f.int("patch_size")),
        256, lambda f: f.int("in_channels")),
    "LTXVideoTransformer3DModel": _Family(
        _LTX_DEFAULTS, _ltx_video, 32, 8, lambda f: (f.int("patch_size_t"), f.int("patch_size"), f.int("patch_size")),
        128, lambda f: f.int("in_channels")),
    "CogVideoXTransformer3DModel": _Family(
        _COG_DEFAULTS, _cogvideox, 8, 4, lambda f: (1, f.int("patch_size"), f.int("patch_size")), 226,
        lambda f: f.int("in_channels")),
    "MochiTransformer3DModel": _Family(
        _MOCHI_DEFAULTS, _mochi, 8, 6, lambda f: (1, f.int("patch_size"), f.int("patch_size")), 256,
        lambda f: f.int("in_channels")),
    "ControlNetModel": _Family({**_UNET_DEFAULTS, "conditioning_embedding_out_channels": (16, 32, 96, 256),
                                "conditioning_channels": 3, "global_pool_conditions": False}, _controlnet, 8, 1,
                               lambda f: (1, 1, 1), 77, lambda f: f.int("in_channels"),
                               levels=lambda f: len(f.ints("block_out_channels"))),
    "UNet2DConditionModel": _Family(_UNET_DEFAULTS, _unet, 8, 1, lambda f: (1, 1, 1), 77,
                                    lambda f: f.int("in_channels"),
                                    levels=lambda f: len(f.ints("block_out_channels"))),
}
SUPPORTED = tuple(FAMILIES)


# ------------------------------------------------------------------ the denoiser
_LORA_TARGETS = {"qkv": 3, "kv": 2, "q": 1, "out": 1}  # fused parts hold 3 (Q, K, V) or 2 (K, V) linears


def _lora_adapters(name: str) -> int:
    """How many attention projections (Q, K, V, output) a part stands for: "attn.qkv.image" 3, "cross.kv" 2,
    "self.out" 1, an MLP or embedder 0. A single-stream block's fused output (attention and MLP together) and the
    token refiner's and pooler's layers are not adapted."""
    names = name.split(".")
    if names[0] in ("pooler", "refiner") or name == "single.out":
        return 0
    return next((_LORA_TARGETS[n] for n in names if n in _LORA_TARGETS), 0)

@dataclass(frozen=True)
class DenoiserParams:
    """Parameter count of a denoiser, in total and by part name."""

    total: int
    by_part: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PassFlops:
    """FLOPs of one pass, split by kind: weight matmuls, convolutions, attention (QKᵀ and PV)."""

    linear: int
    conv: int
    attention: int
    tokens: int
    text_tokens: int

    @property
    def total(self) -> int:
        return self.linear + self.conv + self.attention

    @property
    def attention_share(self) -> float:
        return self.attention / self.total


@dataclass(frozen=True)
class Denoiser:
    """A denoiser built from a diffusers config: `parts` with the rows each sees, and how pixels become tokens."""

    class_name: str
    parts: tuple
    vae_spatial: int
    vae_temporal: int
    patch: tuple  # (t, h, w) latent pixels per token
    latent_channels: int
    text_tokens: int  # the pipeline's default prompt length
    levels: int = 1

    @classmethod
    def from_diffusers(cls, config, *, vae_spatial=None, vae_temporal=None) -> Denoiser:
        """From a transformer/config.json or unet/config.json (a dict, or its JSON text), `_class_name` included.

        `vae_spatial` / `vae_temporal` override the class's usual VAE factors (a pipeline passes its VAE's).
        """
        if isinstance(config, str):
            try:
                config = json.loads(config)
            except json.JSONDecodeError as err:
                raise ValueError(f"config is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}") from None
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict parsed from a diffusers config.json, got {type(config).__name__}")
        name = config.get("_class_name")
        if name not in FAMILIES:
            raise ValueError(f"config _class_name must be one of {', '.join(SUPPORTED)}, got {name!r}")
        fam = FAMILIES[name]
        f = _Fields(config, fam.defaults)
        parts = tuple(fam.build(f))
        vs = fam.vae_spatial if vae_spatial is None else positive_int("vae_spatial", vae_spatial)
        vt = fam.vae_temporal if vae_temporal is None else positive_int("vae_temporal", vae_temporal)
        return cls(name, parts, vs, vt, tuple(fam.patch(f)), fam.latent_channels(f), fam.text_tokens,
                   fam.levels(f))

    @property
    def video(self) -> bool:
        return self.vae_temporal > 1

    def params(self) -> DenoiserParams:
        by = {}
        for p in self.parts:
            by[p.name] = by.get(p.name, 0) + p.params
        return DenoiserParams(sum(by.values()), by)

    def params_seen_by(self, *kinds) -> int:
        """Parameters of the matmuls and convolutions whose rows are one of `kinds` (IMAGE, TEXT, JOINT, SAMPLE):
        `params_seen_by(IMAGE, JOINT)` are the weights that touch an image token."""
        return sum(p.params for p in self.parts if isinstance(p, Linear | Conv) and p.rows in kinds)

    def lora_flops(self, rank, width, height, frames=1, text_tokens=None) -> int:
        """Extra FLOPs per pass of an UNMERGED LoRA of rank r on the attention projections (Q, K, V, output):
        each adapted linear (in → out) adds x·A·B, 2·r·(in + out) FLOPs per row it sees. A merged LoRA
        (W + BA folded into W before serving) adds nothing."""
        rank = positive_int("rank", rank)
        rows = self.rows(width, height, frames, text_tokens)
        total = 0
        for p in self.parts:
            if not isinstance(p, Linear):
                continue
            k = _lora_adapters(p.name)
            if k:
                total += 2 * rank * (p.fan_in + p.fan_out // k) * k * p.count * rows[p.rows]
        return total

    def latent_shape(self, width, height, frames=1) -> tuple:
        """(frames, height, width) of the latent: sides ÷ vae_spatial, frames (F − 1) ÷ vae_temporal + 1."""
        frames = positive_int("frames", frames)
        if not self.video and frames != 1:
            raise ValueError(f"frames must be 1 for an image denoiser ({self.class_name}), got {frames}")
        if self.video and (frames - 1) % self.vae_temporal:
            below = 1 + (frames - 1) // self.vae_temporal * self.vae_temporal
            raise ValueError(f"frames must be 1 + a multiple of {self.vae_temporal} for {self.class_name} "
                             f"({below} or {below + self.vae_temporal}), got {frames}")
        step = self.vae_spatial * 2 ** (self.levels - 1)
        sides = []
        for name, px, patch in (("height", height, self.patch[1]), ("width", width, self.patch[2])):
            px = positive_int(name, px)
            if px % (step * patch):
                raise ValueError(f"{name} must be a multiple of {step * patch} for {self.class_name}, got {px}")
            sides.append(px // self.vae_spatial)
        t = (frames - 1) // self.vae_temporal + 1
        if t % self.patch[0]:
            raise ValueError(f"latent frames ({t}) must be a multiple of the temporal patch {self.patch[0]}")
        return (t, *sides)

    def tokens(self, width, height, frames=1) -> int:
        """Image (latent) tokens one pass sees."""
        t, h, w = self.latent_shape(width, height, frames)
        return (t // self.patch[0]) * (h // self.patch[1]) * (w // self.patch[2])

    def rows(self, width, height, frames=1, text_tokens=None) -> dict:
        """Rows each kind of layer sees at this size; a UNet adds one key per resolution ("s0", "s1", ...)."""
        text = self.text_tokens if text_tokens is None else positive_int("text_tokens", text_tokens)
        n = self.tokens(width, height, frames)
        rows = {IMAGE: n, TEXT: text, JOINT: n + text, SAMPLE: 1, "text+1": text + 1}
        _, h, w = self.latent_shape(width, height, frames)
        for level in range(self.levels):
            rows[f"s{level}"] = (h >> level) * (w >> level)
        for k in range(5):  # pixel-resolution rows (a ControlNet's condition encoder): p0 = every output pixel
            rows[f"p{k}"] = (height >> k) * (width >> k)
        return rows

    def pass_cost(self, width, height, frames=1, text_tokens=None) -> PassFlops:
        return self._cost(self.rows(width, height, frames, text_tokens))

    def cost_at_tokens(self, tokens, text_tokens=None) -> PassFlops:
        """One pass over `tokens` image tokens, whatever pixel size makes them (transformer denoisers only: a
        UNet's rows depend on the shape at every resolution)."""
        if self.levels > 1:
            raise ValueError(f"{self.class_name} is a UNet: give its cost a pixel size (pass_cost), not a token count")
        n = positive_int("tokens", tokens)
        text = self.text_tokens if text_tokens is None else positive_int("text_tokens", text_tokens)
        return self._cost({IMAGE: n, TEXT: text, JOINT: n + text, SAMPLE: 1, "text+1": text + 1, "s0": n})

    def attention_crossover_tokens(self, text_tokens=None) -> float:
        """Image tokens at which attention's FLOPs equal everything else's (the weights' matmuls and convolutions).

        Attention is a quadratic in the tokens N (a·N² + b·N + c: joint attention over N + text), the rest a
        line (d·N + e); three evaluations give the coefficients exactly, and the positive root of
        a·N² + (b − d)·N + (c − e) = 0 is the crossover."""
        ev = [self.cost_at_tokens(n, text_tokens) for n in (1, 2, 3)]
        att = [e.attention for e in ev]
        rest = [e.linear + e.conv for e in ev]
        a = (att[2] - 2 * att[1] + att[0]) / 2
        b = att[1] - att[0] - 3 * a
        c = att[0] - a - b
        d = rest[1] - rest[0]
        e = rest[0] - d
        if a <= 0:
            raise ValueError(f"{self.class_name}'s attention does not grow with the square of the tokens (linear attention)")
        bb, cc = b - d, c - e
        return (-bb + (bb * bb - 4 * a * cc) ** 0.5) / (2 * a)

    def _cost(self, rows) -> PassFlops:
        kinds = {"linear": 0, "conv": 0, "attention": 0}
        for p in self.parts:
            kind = "conv" if isinstance(p, Conv) else "attention" if isinstance(p, Attention | LinearAttention) else "linear"
            kinds[kind] += p.flops(rows)
        return PassFlops(**kinds, tokens=rows[IMAGE], text_tokens=rows[TEXT])

    def pass_flops(self, width, height, frames=1, text_tokens=None) -> int:
        """FLOPs of ONE forward pass of ONE sample (no CFG doubling), under the module's convention."""
        return self.pass_cost(width, height, frames, text_tokens).total


# ------------------------------------------------------------------ the VAE decoder
_VAE_DEFAULTS = dict(in_channels=3, out_channels=3, up_block_types=("UpDecoderBlock2D",), block_out_channels=(64,),
                     layers_per_block=1, latent_channels=4, mid_block_add_attention=True, use_post_quant_conv=True)


def vae_decoder(config) -> Denoiser:
    """The decoder half of a diffusers AutoencoderKL (its vae/config.json), run once per image at the output size.

    Rows are counted from the output: "s0" is every output pixel, "s1" a quarter of them, and the latent is
    level len(block_out_channels) − 1. `pass_flops(width, height)` takes the image size in pixels; parameters are
    the decoder's and post_quant_conv's (the encoder does not run in text-to-image).
    """
    if not isinstance(config, dict):
        raise TypeError(f"config must be a dict parsed from a vae/config.json, got {type(config).__name__}")
    if config.get("_class_name") != "AutoencoderKL":
        raise ValueError(f"config _class_name must be 'AutoencoderKL', got {config.get('_class_name')!r}")
    f = _Fields(config, _VAE_DEFAULTS)
    chans = f.ints("block_out_channels")
    up = f.raw("up_block_types")
    if not isinstance(up, list | tuple) or len(up) != len(chans) or any(u != "UpDecoderBlock2D" for u in up):
        raise ValueError(f"{f.name('up_block_types')} must list {len(chans)} 'UpDecoderBlock2D', "
                         f"got {up!r}")
    z, lpb, top = f.int("latent_channels"), f.int("layers_per_block"), len(chans) - 1
    latent, c = f"s{top}", chans[-1]
    parts = [Conv("conv_in", z, c, 9, latent), *_vae_resnet("mid.res", c, c, latent, 2)]
    if f.bool("use_post_quant_conv"):
        parts.append(Conv("post_quant_conv", z, z, 1, latent))
    if f.bool("mid_block_add_attention"):  # one head as wide as the channels, over every latent pixel
        parts += [Weights("mid.attn.norm", 2 * c), Linear("mid.attn.qkv", c, 3 * c, latent),
                  Attention("mid.attn", latent, latent, c), Linear("mid.attn.out", c, c, latent)]
    rev, prev = chans[::-1], chans[-1]
    for i, c in enumerate(rev):
        lvl = f"s{top - i}"
        for j in range(lpb + 1):
            parts += _vae_resnet(f"up{i}.res{j}", prev if j == 0 else c, c, lvl)
        if i < top:
            parts.append(Conv(f"up{i}.upsample", c, c, 9, f"s{top - i - 1}"))
        prev = c
    parts += [Weights("conv_norm_out", 2 * chans[0]), Conv("conv_out", chans[0], f.int("out_channels"), 9, "s0")]
    return Denoiser("AutoencoderKL", tuple(parts), 1, 1, (1, 1, 1), z, 1, len(chans))


def _vae_resnet(name, c_in, c_out, level, n=1):
    """A VAE ResnetBlock2D: no timestep projection."""
    return [p for p in _resnet(name, c_in, c_out, 1, level, n) if not isinstance(p, Linear)]


# ------------------------------------------------------------------ published configs
PUBLISHED = ("flux1-dev", "flux1-schnell", "sd3.5-medium", "sd3.5-large", "qwen-image", "sana-1600m-1024px",
             "pixart-sigma-xl-2-1024", "sdxl-base-1.0", "sd1.5", "wan2.1-t2v-1.3b", "wan2.1-t2v-14b", "hunyuanvideo",
             "ltx-video", "cogvideox-5b", "mochi-1-preview", "wan2.2-t2v-a14b", "controlnet-canny-sdxl-1.0")
"""The denoiser configs shipped in chapter2/data/diffusion/denoisers, each a published transformer/ or unet/
config.json with its `_source` URL."""


def published_config(name) -> dict:
    """The shipped config.json called `name` (one of `PUBLISHED`), `_source` included."""
    if name not in PUBLISHED:
        raise ValueError(f"name must be one of {', '.join(PUBLISHED)}, got {name!r}")
    path = resources.files("chapter2").joinpath("data", "diffusion", "denoisers", f"{name}.json")
    return json.loads(path.read_text(encoding="utf-8"))
