"""The text encoders of image and video pipelines, from their transformers config.json (section 2.3).

    e = TextEncoder.from_transformers(config)   # a pipeline's text_encoder/config.json, "architectures" included
    e.params                                    # parameters that run on the prompt (nn.Parameter count)
    e.stored_params                             # all the checkpoint holds (a VLM's vision tower, an unused LM head)
    e.flops(text_tokens)                        # FLOPs of encoding one prompt of that many tokens

Same convention as `chapter2.denoiser`: 2 per multiply-add of every matmul at the rows it sees (every prompt
token; a CLIP projection sees only the pooled token), attention's QKᵀ and PV over the prompt; elementwise work
left out. Embedding lookups cost nothing. Checked against transformers (built on the meta device, FLOPs by
FlopCounterMode) in tests/test_diffusion_pipelines.py.

Supported: CLIPTextModel and CLIPTextModelWithProjection (SD 1.5, SDXL, SD3, FLUX.1, HunyuanVideo),
T5EncoderModel and UMT5EncoderModel (FLUX.1, SD3, PixArt, LTX, CogVideoX, Mochi; Wan), and decoder LLMs used
as encoders: LlamaModel (HunyuanVideo), Gemma2Model (Sana), Qwen2_5_VLForConditionalGeneration (Qwen-Image).

Qwen-Image's pipeline reads Qwen2.5-VL's last hidden state (`hidden_states[-1]`) and throws the logits away, so
the encoder is costed to that hidden state: the language model, without its LM head (diffusers' call still runs
the head, and a server need not) and without its vision tower (it sees no image in text-to-image). Both stay in
the checkpoint: `stored_params` counts them, from the config's `vision_config` (depth, widths, patch).
"""

from __future__ import annotations

from dataclasses import dataclass

from ._checks import positive_int
from .denoiser import SAMPLE, TEXT, Attention, Linear, Weights, _Fields

__all__ = ["TextEncoder", "ENCODERS"]


def _clip(f: _Fields, projection: bool):
    h, n, i = f.int("hidden_size"), f.int("num_hidden_layers"), f.int("intermediate_size")
    parts = [Weights("embeddings", (f.int("vocab_size") + f.int("max_position_embeddings")) * h),
             Linear("qkv", h, 3 * h, TEXT, True, n), Attention("attn", TEXT, TEXT, h, n), Linear("out", h, h, TEXT, True, n),
             Linear("fc1", h, i, TEXT, True, n), Linear("fc2", i, h, TEXT, True, n), Weights("norms", 4 * h, n),
             Weights("final_norm", 2 * h)]
    if projection:
        parts.append(Linear("text_projection", h, f.int("projection_dim"), SAMPLE, False))
    return parts


def _t5(f: _Fields, per_layer_bias: bool):
    d, n, ff = f.int("d_model"), f.int("num_layers"), f.int("d_ff")
    inner = f.int("num_heads") * f.int("d_kv")
    gated = f.choice("feed_forward_proj", ("gated-gelu", "relu", "gelu")) == "gated-gelu"
    bias_tables = n if per_layer_bias else 1
    return [Weights("shared", f.int("vocab_size") * d),
            Weights("relative_attention_bias", f.int("relative_attention_num_buckets") * f.int("num_heads"), bias_tables),
            Linear("qkv", d, 3 * inner, TEXT, False, n), Attention("attn", TEXT, TEXT, inner, n),
            Linear("o", inner, d, TEXT, False, n), Linear("wi", d, ff * (2 if gated else 1), TEXT, False, n),
            Linear("wo", ff, d, TEXT, False, n), Weights("norms", 2 * d, n), Weights("final_norm", d)]


def _decoder_llm(f: _Fields, *, norms: int, qkv_bias: bool, lm_head: bool):
    h, n, i = f.int("hidden_size"), f.int("num_hidden_layers"), f.int("intermediate_size")
    heads, kv = f.int("num_attention_heads"), f.int("num_key_value_heads")
    hd = f.int("head_dim", optional=True) or h // heads
    q, k = heads * hd, kv * hd
    parts = [Weights("embed_tokens", f.int("vocab_size") * h), Linear("q", h, q, TEXT, qkv_bias, n),
             Linear("kv", h, 2 * k, TEXT, qkv_bias, n), Attention("attn", TEXT, TEXT, q, n), Linear("o", q, h, TEXT, False, n),
             Linear("gate_up", h, 2 * i, TEXT, False, n), Linear("down", i, h, TEXT, False, n),
             Weights("norms", norms * h, n), Weights("final_norm", h)]
    if lm_head:
        parts.append(Linear("lm_head", h, f.int("vocab_size"), TEXT, False))
    return parts


def _qwen2_5_vl(f: _Fields):
    """The language model to its last hidden state: what Qwen-Image's pipeline reads."""
    return _decoder_llm(_qwen2_5_vl_text(f), norms=2, qkv_bias=True, lm_head=False)


def _qwen2_5_vl_text(f: _Fields) -> _Fields:
    text = f.raw("text_config")
    return _Fields({"_class_name": f.cls, **f.config, **(text if isinstance(text, dict) else {})}, f.defaults)


def _qwen2_5_vl_stored(f: _Fields):
    """What the checkpoint holds beyond the hidden-state path: the LM head (unless tied) and the vision tower.

    The vision tower (transformers' Qwen2_5_VisionTransformerPretrainedModel): a 3-D patch convolution (channels x
    temporal_patch x patch² -> hidden, no bias), `depth` blocks (two RMSNorms, a qkv and an output projection with
    biases, a gated MLP with biases) and the merger (an RMSNorm, then 4·hidden -> 4·hidden -> out_hidden_size, with
    biases: it merges 2 x 2 patches into one token of the language model's width)."""
    text = _qwen2_5_vl_text(f)
    parts = [] if text.raw("tie_word_embeddings") else [Weights("lm_head", text.int("vocab_size") * text.int("hidden_size"))]
    vision = f.raw("vision_config")
    if isinstance(vision, dict):
        v = _Fields({"_class_name": f"{f.cls} vision_config", **vision}, {"in_channels": 3})
        h, i, out = v.int("hidden_size"), v.int("intermediate_size"), v.int("out_hidden_size")
        merged = v.int("spatial_merge_size") ** 2 * h
        block = 2 * h + (3 * h * h + 3 * h) + (h * h + h) + 2 * (h * i + i) + (i * h + h)
        parts += [Weights("vision_patch_embed", v.int("in_channels") * v.int("temporal_patch_size") * v.int("patch_size") ** 2 * h),
                  Weights("vision_blocks", block, v.int("depth")),
                  Weights("vision_merger", h + merged * merged + merged + merged * out + out)]
    return parts


ENCODERS = {
    "CLIPTextModel": (dict(max_position_embeddings=77), lambda f: _clip(f, False)),
    "CLIPTextModelWithProjection": (dict(max_position_embeddings=77), lambda f: _clip(f, True)),
    "T5EncoderModel": (dict(relative_attention_num_buckets=32, feed_forward_proj="relu"), lambda f: _t5(f, False)),
    "UMT5EncoderModel": (dict(relative_attention_num_buckets=32, feed_forward_proj="gated-gelu"), lambda f: _t5(f, True)),
    "LlamaModel": (dict(head_dim=None), lambda f: _decoder_llm(f, norms=2, qkv_bias=f.bool("attention_bias"), lm_head=False)),
    "Gemma2Model": (dict(head_dim=256), lambda f: _decoder_llm(f, norms=4, qkv_bias=False, lm_head=False)),
    "Qwen2_5_VLForConditionalGeneration": (dict(head_dim=None, tie_word_embeddings=False), _qwen2_5_vl),
}

_STORED = {"Qwen2_5_VLForConditionalGeneration": _qwen2_5_vl_stored}
"""Weights an encoder's checkpoint holds that do not run on a text prompt, by architecture."""


@dataclass(frozen=True)
class TextEncoder:
    """A text encoder's parts, each with the rows it sees (every prompt token, or the one pooled token), and
    `idle`: weights its checkpoint holds that do not run on a text prompt (a VLM's vision tower, an unused LM
    head)."""

    architecture: str
    parts: tuple
    idle: tuple = ()

    @classmethod
    def from_transformers(cls, config) -> TextEncoder:
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict parsed from a text_encoder/config.json, got {type(config).__name__}")
        arch = config.get("architectures")
        name = arch[0] if isinstance(arch, list) and len(arch) == 1 else arch
        if name not in ENCODERS:
            raise ValueError(f"config architectures must be one of {', '.join(ENCODERS)}, got {arch!r}")
        defaults, build = ENCODERS[name]
        fields = _Fields({"_class_name": name, **config}, defaults)
        return cls(name, tuple(build(fields)), tuple(_STORED[name](fields)) if name in _STORED else ())

    @property
    def params(self) -> int:
        """Parameters that run on a text prompt."""
        return sum(p.params for p in self.parts)

    @property
    def stored_params(self) -> int:
        """Every parameter of the checkpoint the config describes: `params` and the `idle` weights."""
        return self.params + sum(p.params for p in self.idle)

    def idle_params(self, prefix: str = "") -> int:
        """Parameters of the idle weights whose name starts with `prefix` ("vision": the vision tower)."""
        return sum(p.params for p in self.idle if p.name.startswith(prefix))

    def flops(self, text_tokens) -> int:
        """FLOPs of encoding one prompt of `text_tokens` tokens."""
        rows = {TEXT: positive_int("text_tokens", text_tokens), SAMPLE: 1}
        return sum(p.flops(rows) for p in self.parts)
