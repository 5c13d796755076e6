"""The oracle of `chapter2.denoiser`: diffusers' own denoisers, built on the meta device, FLOPs by FlopCounterMode.

`build(config)` makes the model diffusers makes from a published config.json (no weights: the meta device
allocates nothing), `params(model)` counts its nn.Parameters (buffers excluded), and `pass_flops(model,
config, ...)` runs one forward pass of one sample at a size, with the inputs its pipeline feeds it, under
torch.utils.flop_counter.FlopCounterMode.

What the counter sees and misses: it counts matmuls (mm/bmm/addmm/baddbmm/linear) and convolutions at 2 per
multiply-add; on the meta device it counts scaled_dot_product_attention through its math decomposition, as the
two matmuls QKᵀ and PV (4·q·kv·head_dim per head). Elementwise work (norms, activations, RoPE, softmax) is not
counted, which is the convention of `chapter2.denoiser` too. (Under FakeTensorMode it counts CPU flash attention
as 0, so this harness uses the meta device, never fake tensors.) Mochi's RoPE runs under
torch.autocast("meta"), which torch refuses; the harness switches autocast off around that forward.
"""

from __future__ import annotations

import contextlib

from _oracles import require

torch = require("torch")
diffusers = require("diffusers")
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

META = torch.device("meta")


def build(config: dict):
    """diffusers' model for `config` (its `_class_name`), on the meta device."""
    cls = getattr(diffusers, config["_class_name"])
    fields = {k: v for k, v in config.items() if not k.startswith("_")}
    with META:
        return cls.from_config(fields).eval()


def params(model) -> int:
    return sum(p.numel() for p in model.parameters())


def _z(*shape, dtype=None):
    return torch.zeros(*shape, device=META, dtype=dtype or torch.float32)


@contextlib.contextmanager
def _mochi_on_meta():
    """Two things Mochi does that the meta device cannot: its RoPE wraps its math in torch.autocast(device_type=
    "meta"), which torch rejects (made a no-op here), and its attention keeps each prompt's valid tokens with
    torch.nonzero(mask), whose output size depends on data (here: every prompt token is valid)."""
    real_autocast, real_nonzero = torch.autocast, torch.nonzero

    class _Off(contextlib.nullcontext):
        def __init__(self, *args, **kwargs):
            super().__init__()

    def nonzero(x, *args, **kwargs):
        if x.device.type != "meta":
            return real_nonzero(x, *args, **kwargs)
        return torch.arange(x.numel(), device=META).unsqueeze(1)

    torch.autocast, torch.nonzero = _Off, nonzero
    try:
        yield
    finally:
        torch.autocast, torch.nonzero = real_autocast, real_nonzero


def inputs(config: dict, width: int, height: int, frames: int, text: int) -> dict:
    """The forward() arguments each pipeline passes its denoiser (one sample), at a pixel size."""
    name = config["_class_name"]
    t = _z(1)
    if name == "FluxTransformer2DModel":
        h, w = height // 16, width // 16
        kw = dict(hidden_states=_z(1, h * w, config.get("in_channels", 64)),
                  encoder_hidden_states=_z(1, text, config.get("joint_attention_dim", 4096)),
                  pooled_projections=_z(1, config.get("pooled_projection_dim", 768)), timestep=t,
                  img_ids=_z(h * w, 3), txt_ids=_z(text, 3))
        if config.get("guidance_embeds"):
            kw["guidance"] = _z(1)
        return kw
    if name == "SD3Transformer2DModel":
        return dict(hidden_states=_z(1, config.get("in_channels", 16), height // 8, width // 8),
                    encoder_hidden_states=_z(1, text, config.get("joint_attention_dim", 4096)),
                    pooled_projections=_z(1, config.get("pooled_projection_dim", 2048)), timestep=t)
    if name == "QwenImageTransformer2DModel":
        h, w = height // 16, width // 16
        return dict(hidden_states=_z(1, h * w, config.get("in_channels", 64)),
                    encoder_hidden_states=_z(1, text, config.get("joint_attention_dim", 3584)),
                    timestep=t, img_shapes=[[(1, h, w)]])
    if name == "WanTransformer3DModel":
        lf = (frames - 1) // 4 + 1
        return dict(hidden_states=_z(1, config.get("in_channels", 16), lf, height // 8, width // 8), timestep=t,
                    encoder_hidden_states=_z(1, text, config.get("text_dim", 4096)))
    if name in ("UNet2DConditionModel", "ControlNetModel"):
        kw = dict(sample=_z(1, config.get("in_channels", 4), height // 8, width // 8), timestep=t,
                  encoder_hidden_states=_z(1, text, config["cross_attention_dim"]))
        if config.get("addition_embed_type") == "text_time":
            n_ids = (config["projection_class_embeddings_input_dim"] - 1280) // config["addition_time_embed_dim"]
            kw["added_cond_kwargs"] = {"text_embeds": _z(1, 1280), "time_ids": _z(1, n_ids)}
        if name == "ControlNetModel":  # the condition image (an edge map, a pose) at the output size
            kw["controlnet_cond"] = _z(1, config.get("conditioning_channels", 3), height, width)
        return kw
    if name == "PixArtTransformer2DModel":
        return dict(hidden_states=_z(1, config.get("in_channels", 4), height // 8, width // 8),
                    encoder_hidden_states=_z(1, text, config["caption_channels"]), timestep=t,
                    added_cond_kwargs={"resolution": None, "aspect_ratio": None})
    if name == "SanaTransformer2DModel":
        return dict(hidden_states=_z(1, config.get("in_channels", 32), height // 32, width // 32),
                    encoder_hidden_states=_z(1, text, config.get("caption_channels", 2304)), timestep=t)
    if name == "HunyuanVideoTransformer3DModel":
        lf = (frames - 1) // 4 + 1
        kw = dict(hidden_states=_z(1, config.get("in_channels", 16), lf, height // 8, width // 8), timestep=t,
                  encoder_hidden_states=_z(1, text, config.get("text_embed_dim", 4096)),
                  encoder_attention_mask=_z(1, text), pooled_projections=_z(1, config.get("pooled_projection_dim", 768)))
        if config.get("guidance_embeds", True):
            kw["guidance"] = _z(1)
        return kw
    if name == "LTXVideoTransformer3DModel":
        lf, h, w = (frames - 1) // 8 + 1, height // 32, width // 32
        return dict(hidden_states=_z(1, lf * h * w, config.get("in_channels", 128)), timestep=t,
                    encoder_hidden_states=_z(1, text, config.get("caption_channels", 4096)),
                    encoder_attention_mask=_z(1, text), num_frames=lf, height=h, width=w)
    if name == "CogVideoXTransformer3DModel":
        lf = (frames - 1) // 4 + 1
        return dict(hidden_states=_z(1, lf, config.get("in_channels", 16), height // 8, width // 8), timestep=t,
                    encoder_hidden_states=_z(1, text, config.get("text_embed_dim", 4096)))
    if name == "MochiTransformer3DModel":
        lf = (frames - 1) // 6 + 1
        return dict(hidden_states=_z(1, config.get("in_channels", 12), lf, height // 8, width // 8), timestep=t,
                    encoder_hidden_states=_z(1, text, config.get("text_embed_dim", 4096)),
                    encoder_attention_mask=_z(1, text))
    raise KeyError(name)


def pass_flops(model, config: dict, *, width: int, height: int, frames: int = 1, text: int) -> int:
    """FlopCounterMode's total for one forward pass of one sample at this size."""
    kw = inputs(config, width, height, frames, text)
    guard = _mochi_on_meta() if config["_class_name"] == "MochiTransformer3DModel" else contextlib.nullcontext()
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), guard, counter:
        model(**kw, return_dict=False)
    return counter.get_total_flops()


def vae_decode(config: dict, *, width: int, height: int):
    """(decoder + post_quant_conv parameters, FlopCounterMode's FLOPs of decoding one latent to width × height)."""
    model = build(config)
    factor = 2 ** (len(config["block_out_channels"]) - 1)
    n = params(model.decoder) + (params(model.post_quant_conv) if model.post_quant_conv is not None else 0)
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        model.decode(_z(1, config["latent_channels"], height // factor, width // factor), return_dict=False)
    return n, counter.get_total_flops()


def text_encoder(config: dict, text: int, *, stored: bool = False):
    """(parameters that run on the prompt, FlopCounterMode's FLOPs of encoding `text` tokens) from transformers;
    with `stored`, (every parameter of the model, None).

    Qwen2.5-VL: the language model to its last hidden state, which is all the Qwen-Image pipeline reads
    (`hidden_states[-1]`): no LM head, no vision tower (both are in the stored count)."""
    transformers = require("transformers")
    arch = config["architectures"][0]
    fields = {k: v for k, v in config.items() if not k.startswith("_") and k not in ("architectures", "vision_config")}
    kind = {"CLIPTextModel": "CLIPTextConfig", "CLIPTextModelWithProjection": "CLIPTextConfig",
            "T5EncoderModel": "T5Config", "UMT5EncoderModel": "UMT5Config", "LlamaModel": "LlamaConfig",
            "Gemma2Model": "Gemma2Config", "Qwen2_5_VLForConditionalGeneration": "Qwen2_5_VLConfig"}[arch]
    if arch == "Qwen2_5_VLForConditionalGeneration":
        cfg = getattr(transformers, kind)(text_config=fields, vision_config=config.get("vision_config", {"depth": 1}),
                                          **fields)
    else:
        cfg = getattr(transformers, kind)(**fields)
    with META:
        model = getattr(transformers, arch)(cfg).eval()
    if stored:
        return params(model), None
    run = model.model.language_model if arch == "Qwen2_5_VLForConditionalGeneration" else model
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        run(input_ids=torch.zeros(1, text, dtype=torch.long, device=META))
    return params(run), counter.get_total_flops()
