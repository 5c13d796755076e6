"""Read a model's config.json and size it: parameters, active parameters, KV cache per token.

Run: python snippets/model_params.py
"""
from chapter2.models import describe_architecture, list_configs, load_config

config = load_config("Qwen3-235B-A22B")  # the real config.json values, with their source URL
arch = describe_architecture(config.architecture)
print(f"{config.name}: {config.architecture} -> "
      f"family {arch.family}, MoE {arch.is_moe}, {arch.task}")
print(f"  {config.num_hidden_layers} layers, hidden {config.hidden_size}, "
      f"{config.num_attention_heads} query heads / {config.num_key_value_heads} KV heads "
      f"of {config.head_dim}, "
      f"{config.num_experts_per_tok} of {config.num_experts} experts per token")

p = config.params()
print(f"  total parameters  {p.total / 1e9:6.1f} B   (all must sit in GPU memory)")
print(f"  active per token  {p.active / 1e9:6.1f} B   (what one token reads)")
kv = config.kv_cache_bytes_per_token("bf16")
print(f"  KV cache          {kv:,} bytes per token in BF16")
print()

print(f"{'model':18s} {'total':>8s} {'active':>8s} {'KV/token':>10s}")
for name in list_configs():
    c = load_config(name)
    p, kv = c.params(), c.kv_cache_bytes_per_token("bf16")
    print(f"{name:18s} {p.total / 1e9:7.1f}B {p.active / 1e9:7.1f}B {kv / 1e3:7.1f} kB")
