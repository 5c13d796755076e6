"""The numpy transformer (and its torch twin) against Hugging Face transformers.

Oracle: tiny random LlamaForCausalLM, Qwen2, Qwen3, Qwen3-MoE, Mixtral and
Mistral models built offline with transformers, saved with
`save_pretrained(..., safe_serialization=True)` and loaded back by our
pure-numpy safetensors reader. Logits must agree to 1e-4 in float32.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from _oracles import require

torch = require("torch")
transformers = require("transformers")

from chapter2.models import ModelConfig, load_config  # noqa: E402
from chapter2.kv_cache import KVCache  # noqa: E402
from chapter2.models.rope import inv_frequencies, rope_cos_sin  # noqa: E402
from chapter2.models.safetensors_reader import load_checkpoint, read_safetensors  # noqa: E402
from chapter2.models.transformer import (  # noqa: E402
    Transformer, generate, load_pretrained, random_weights, weight_shapes)
from chapter2.host.torch_model import TorchTransformer, load_pretrained_torch  # noqa: E402

ATOL = 1e-4
PROMPT = np.array([3, 17, 99, 5, 64, 2, 8, 120, 45, 7, 7, 31])  # 12 tokens: longer than the sliding windows below

# Tiny sizes; initializer_range 0.2 (not 0.02) so attention is far from uniform and
# the logits are O(5): a wrong mask, RoPE or router shows up as an O(1) error.
COMMON = dict(vocab_size=128, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=256, initializer_range=0.2)
LLAMA3_ROPE = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 32}
CASES = {
    # Llama 3.1 RoPE scaling, with a short original context so every band (kept, blended, stretched) occurs
    "llama": ("LlamaConfig", dict(rope_scaling=LLAMA3_ROPE, rope_theta=500000.0)),
    "llama_biases_tied": ("LlamaConfig", dict(attention_bias=True, mlp_bias=True, tie_word_embeddings=True)),
    "qwen2": ("Qwen2Config", {}),  # biases on q, k, v
    "qwen3": ("Qwen3Config", dict(head_dim=16, tie_word_embeddings=True)),  # q/k norm, tied LM head
    # 8 experts, top-2, renormalised; layer 1 dense (mlp_only_layers); head_dim 24 != hidden/heads
    "qwen3_moe": ("Qwen3MoeConfig", dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32, head_dim=24,
                                         norm_topk_prob=True, mlp_only_layers=[1])),
    "qwen3_moe_unnormed": ("Qwen3MoeConfig", dict(num_experts=8, num_experts_per_tok=2, moe_intermediate_size=32,
                                                  norm_topk_prob=False)),
    "mixtral": ("MixtralConfig", dict(num_local_experts=4, num_experts_per_tok=2, sliding_window=4)),
    "mistral": ("MistralConfig", dict(sliding_window=5)),
}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """name -> (folder, transformers model, transformers logits of PROMPT)."""
    out = {}
    root = tmp_path_factory.mktemp("ckpt")
    for name, (cls_name, extra) in CASES.items():
        config = getattr(transformers, cls_name)(**COMMON, **extra)
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager").float().eval()
        with torch.no_grad():  # transformers initialises biases to 0 and norm weights to 1: make them matter
            for param_name, param in model.named_parameters():
                if param_name.endswith(".bias"):
                    param.normal_(0.0, 0.2)
                elif param_name.endswith("norm.weight"):
                    param.add_(torch.randn_like(param) * 0.2)
        folder = root / name
        model.save_pretrained(folder, safe_serialization=True)
        with torch.no_grad():
            logits = model(torch.tensor(PROMPT)[None]).logits[0].numpy()
        out[name] = (folder, model, logits)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_prefill_matches_transformers(checkpoints, name):
    folder, _, expected = checkpoints[name]
    model = load_pretrained(folder)
    logits, cache = model.prefill(PROMPT)
    assert logits.shape == (len(PROMPT), COMMON["vocab_size"])
    assert logits.dtype == np.float32
    np.testing.assert_allclose(logits, expected, atol=ATOL, rtol=0)
    assert len(cache) == len(PROMPT)


@pytest.mark.parametrize("name", list(CASES))
def test_cached_decode_equals_full_recomputation(checkpoints, name):
    folder, _, expected = checkpoints[name]
    model = load_pretrained(folder)
    full, _ = model.prefill(PROMPT)
    split = 5
    logits, cache = model.prefill(PROMPT[:split])
    steps = [logits[-1]]
    for token in PROMPT[split:]:
        step, cache = model.decode(int(token), cache)
        assert step.shape == (COMMON["vocab_size"],)
        steps.append(step)
    np.testing.assert_allclose(np.array(steps), full[split - 1:], atol=1e-5, rtol=0)
    np.testing.assert_allclose(np.array(steps), expected[split - 1:], atol=ATOL, rtol=0)


@pytest.mark.parametrize("name", ["llama", "qwen3_moe", "mixtral"])
def test_torch_twin_matches_transformers(checkpoints, name):
    folder, _, expected = checkpoints[name]
    twin = load_pretrained_torch(folder)
    logits, cache = twin.prefill(PROMPT)
    np.testing.assert_allclose(logits.numpy(), expected, atol=ATOL, rtol=0)
    logits, cache = twin.prefill(PROMPT[:4])
    steps = [logits[-1]]
    for token in PROMPT[4:]:
        step, cache = twin.decode(int(token), cache)
        steps.append(step)
    np.testing.assert_allclose(torch.stack(steps).numpy(), expected[3:], atol=ATOL, rtol=0)
    assert cache.nbytes == load_pretrained(folder).prefill(PROMPT)[1].nbytes


@pytest.mark.parametrize("name", ["qwen3", "mixtral"])
def test_greedy_generate_matches_transformers_generate(checkpoints, name):
    folder, hf_model, _ = checkpoints[name]
    new = 10
    with torch.no_grad():
        out = hf_model.generate(torch.tensor(PROMPT)[None], max_new_tokens=new, do_sample=False,
                                eos_token_id=None, pad_token_id=0)
    expected = out[0, len(PROMPT):].tolist()
    result = generate(load_pretrained(folder), PROMPT, max_tokens=new)
    assert result.tokens == expected
    assert result.finish_reason == "length"


def test_generate_stops_on_stop_token(checkpoints):
    model = load_pretrained(checkpoints["llama"][0])
    free = generate(model, PROMPT, max_tokens=8).tokens
    stop = free[3]
    first = free.index(stop)  # the first time the stop token appears
    result = generate(model, PROMPT, max_tokens=8, stop_ids=[stop])
    assert result.tokens == free[: first + 1]
    assert result.finish_reason == "stop"


def test_generate_sampling_is_reproducible_and_uses_the_rng(checkpoints):
    model = load_pretrained(checkpoints["qwen2"][0])
    a = generate(model, PROMPT, max_tokens=12, temperature=1.5, rng=np.random.default_rng(1)).tokens
    b = generate(model, PROMPT, max_tokens=12, temperature=1.5, rng=np.random.default_rng(1)).tokens
    draws = {tuple(generate(model, PROMPT, max_tokens=12, temperature=1.5, rng=np.random.default_rng(s)).tokens)
             for s in range(2, 6)}
    assert a == b
    assert len(draws | {tuple(a)}) > 1  # at T = 1.5 over 128 tokens, 5 seeds cannot all agree on 12 tokens


def test_kv_cache_size_matches_config_arithmetic(checkpoints):
    for name in ("llama", "qwen3_moe", "mistral"):
        model = load_pretrained(checkpoints[name][0])
        c = model.config
        _, cache = model.prefill(PROMPT)
        # fp32 = 4 bytes; per token 2 (K and V) * layers * kv heads * head_dim * 4
        assert cache.bytes_per_token == 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * 4
        assert cache.bytes_per_token == c.kv_cache_bytes_per_token(4)
        assert cache.nbytes == c.kv_cache_bytes(len(PROMPT), 1, 4)
    # Mistral tiny has sliding_window 5: the rolling buffer holds 5 of the 12 tokens per layer
    mistral = load_pretrained(checkpoints["mistral"][0])
    _, cache = mistral.prefill(PROMPT)
    assert cache.stored == [5, 5] and cache.seq_len == 12
    assert cache.nbytes == 2 * 2 * 2 * 16 * 5 * 4  # K,V * layers * kv heads * head_dim * window * fp32


def test_weight_shapes_match_transformers_state_dict(checkpoints):
    for name, (folder, hf_model, _) in checkpoints.items():
        config = ModelConfig.from_json(folder / "config.json")
        expected = {k: tuple(v.shape) for k, v in hf_model.state_dict().items()}
        if config.tie_word_embeddings:
            expected.pop("lm_head.weight", None)
        stored = {k: v.shape for k, v in load_checkpoint(folder).items()}
        assert weight_shapes(config) == stored, name
        assert sum(int(np.prod(s)) for s in weight_shapes(config).values()) == config.params().total, name
        assert sum(int(np.prod(s)) for s in expected.values()) == config.params().total, name


def test_llama3_rope_frequencies_match_transformers():
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    config = transformers.LlamaConfig(**COMMON, rope_scaling=LLAMA3_ROPE, rope_theta=500000.0)
    expected, scale = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    ours = inv_frequencies(16, 500000.0, LLAMA3_ROPE)
    assert scale == 1.0
    np.testing.assert_allclose(ours, expected.double().numpy(), rtol=1e-6)
    plain = inv_frequencies(16, 500000.0)
    assert (ours <= plain).all() and (ours < plain).any() and ours[0] == plain[0]  # high frequencies untouched


def test_rope_rotation_preserves_norm_and_depends_on_distance_only():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(1, 1, 32)), rng.normal(size=(1, 1, 32))
    from chapter2.models.rope import apply_rope

    def rotated(x, pos):
        cos, sin = rope_cos_sin(np.array([pos]), 32, 10000.0, dtype=np.float64)
        return apply_rope(x, cos, sin)

    assert np.isclose(np.linalg.norm(rotated(q, 7)), np.linalg.norm(q))
    a = (rotated(q, 10) * rotated(k, 4)).sum()
    b = (rotated(q, 106) * rotated(k, 100)).sum()
    assert np.isclose(a, b)


def test_unsupported_rope_scaling_is_rejected():
    with pytest.raises(ValueError, match="yarn"):
        inv_frequencies(16, 10000.0, {"rope_type": "yarn", "factor": 4.0})
    config = ModelConfig.from_hf({**_tiny_llama_dict(), "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}})
    with pytest.raises(ValueError, match="dynamic"):
        Transformer(config, random_weights(config))


def test_safetensors_reader_dtypes(tmp_path):
    from safetensors.torch import save_file

    values = torch.tensor([[1.0, -2.5, 3.140625], [1e-3, 65504.0, -0.0]])
    tensors = {"f32": values.float(), "f16": values.half(), "bf16": values.bfloat16(), "i64": torch.arange(6).view(2, 3)}
    save_file(tensors, tmp_path / "t.safetensors")
    out = read_safetensors(tmp_path / "t.safetensors")
    for name, t in tensors.items():
        expected = t.float().numpy() if t.is_floating_point() else t.numpy()
        assert out[name].shape == tuple(t.shape)
        np.testing.assert_array_equal(out[name], expected)  # bf16/f16 widen to float32 exactly
    assert out["bf16"].dtype == np.float32 and out["i64"].dtype == np.int64


def test_safetensors_reader_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 5) + b"{nope")
    with pytest.raises(ValueError, match="JSON"):
        read_safetensors(bad)
    header = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    short = tmp_path / "short.safetensors"
    short.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    with pytest.raises(ValueError, match="truncated"):
        read_safetensors(short)


def test_sharded_checkpoint_loads(checkpoints, tmp_path):
    _, hf_model, expected = checkpoints["qwen3"]
    hf_model.save_pretrained(tmp_path, safe_serialization=True, max_shard_size="100KB")
    assert (tmp_path / "model.safetensors.index.json").is_file()
    np.testing.assert_allclose(load_pretrained(tmp_path).prefill(PROMPT)[0], expected, atol=ATOL, rtol=0)


def test_bf16_checkpoint_loads_exactly(checkpoints, tmp_path):
    _, hf_model, _ = checkpoints["llama"]
    hf_model.to(torch.bfloat16).save_pretrained(tmp_path, safe_serialization=True)
    hf_model.float()
    loaded = load_pretrained(tmp_path)
    expected = hf_model.to(torch.bfloat16).state_dict()["model.layers.0.mlp.up_proj.weight"].float().numpy()
    hf_model.float()
    np.testing.assert_array_equal(loaded.weights["model.layers.0.mlp.up_proj.weight"], expected)


def test_float64_numpy_and_torch_agree(checkpoints):
    # transformers keeps RoPE angles and router softmax in float32 even for a float64 model,
    # so its float64 logits are only a 1e-5 oracle; the numpy and torch twins in float64 are
    # independent implementations of the same math and must agree to rounding.
    folder, _, _ = checkpoints["qwen3_moe"]
    hf64 = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float64, attn_implementation="eager",
                                                             experts_implementation="eager").eval()
    with torch.no_grad():
        expected = hf64(torch.tensor(PROMPT)[None]).logits[0].numpy()
    ours = load_pretrained(folder, dtype=np.float64).prefill(PROMPT)[0]
    assert ours.dtype == np.float64
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=0)
    twin = load_pretrained_torch(folder, dtype=torch.float64).prefill(PROMPT)[0].numpy()
    np.testing.assert_allclose(twin, ours, atol=1e-11, rtol=0)


def test_random_weights_model_runs_and_is_deterministic():
    config = ModelConfig.from_hf(_tiny_llama_dict())
    a = Transformer(config, random_weights(config, seed=3)).prefill([1, 2, 3])[0]
    b = Transformer(config, random_weights(config, seed=3)).prefill([1, 2, 3])[0]
    np.testing.assert_array_equal(a, b)
    twin = TorchTransformer.from_numpy(Transformer(config, random_weights(config, seed=3)))
    np.testing.assert_allclose(twin.prefill([1, 2, 3])[0].numpy(), a, atol=1e-5)


def test_input_validation(checkpoints):
    model = load_pretrained(checkpoints["llama"][0])
    with pytest.raises(ValueError, match="ids"):
        model.prefill([])
    with pytest.raises(ValueError, match="ids"):
        model.prefill([[1, 2]])
    with pytest.raises(ValueError, match=r"\[0, 128\)"):
        model.prefill([1, 128])
    with pytest.raises(TypeError, match="ids"):
        model.prefill([1.5, 2.0])
    _, cache = model.prefill([1, 2])
    with pytest.raises(TypeError, match="token"):
        model.decode(1.0, cache)
    with pytest.raises(TypeError, match="cache"):
        model.decode(1, None)
    with pytest.raises(ValueError, match="max_tokens"):
        generate(model, [1, 2], max_tokens=0)
    with pytest.raises(ValueError, match="architecture"):
        weight_shapes(load_config("DeepSeek-V3"))
    with pytest.raises(ValueError, match="folder"):
        load_pretrained(checkpoints["llama"][0] / "nope")
    config = model.config
    weights = dict(model.weights)
    weights.pop("model.norm.weight")
    with pytest.raises(ValueError, match="missing"):
        Transformer(config, weights)
    assert isinstance(model.new_cache(), KVCache)


def test_decode_copy_branches_independently(checkpoints):
    model = load_pretrained(checkpoints["qwen2"][0])
    _, cache = model.prefill(PROMPT[:6])
    branch = cache.copy()
    a, _ = model.decode(1, cache)
    b, _ = model.decode(1, branch)
    np.testing.assert_array_equal(a, b)
    assert len(cache) == len(branch) == 7


def _tiny_llama_dict() -> dict:
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32, "hidden_size": 16,
            "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "rope_theta": 10000.0, "rms_norm_eps": 1e-6}


def test_numpy_core_runs_without_torch_or_safetensors(checkpoints):
    """What Pyodide will do: load and run a checkpoint with only numpy and the stdlib importable."""
    import subprocess
    import sys

    folder = checkpoints["qwen3_moe"][0]
    code = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "transformers", "safetensors", "matplotlib", "scipy"):
            raise ImportError("blocked: " + name)
sys.meta_path.insert(0, Block())
from chapter2.models import load_config
from chapter2.models.transformer import load_pretrained, generate
model = load_pretrained({str(folder)!r})
print(generate(model, [1, 2, 3], max_tokens=4).tokens, load_config("DeepSeek-V3").params().total)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith(str(load_config("DeepSeek-V3").params().total))
