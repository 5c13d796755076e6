"""`python -m chapter2.host.bench.tiny_lm` at toy size: it runs, prints its table and writes well-formed JSON.

No timing is asserted (benchmarks are not tests); the byte counts are checked
against first principles: a decode step reads every parameter once (the tied
embedding table in full, as the LM head, plus the input token's row), the
whole KV cache, and writes one token's keys and values.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _oracles import require

torch = require("torch")
transformers = require("transformers")

from chapter2.host.bench import SCHEMA  # noqa: E402
from chapter2.host.bench import tiny_lm  # noqa: E402
from chapter2.devices import device_name  # noqa: E402

VOCAB, HIDDEN, LAYERS, KV_HEADS, HEAD_DIM, CONTEXT = 96, 32, 2, 1, 8, 40
PROMPTS, STEPS = [4, 12], 3


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """(folder, parameter count) of a tiny random Llama (no tokenizer: the benchmark feeds random ids)."""
    folder = tmp_path_factory.mktemp("bench_ckpt")
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=48,
                                      num_hidden_layers=LAYERS, num_attention_heads=4, num_key_value_heads=KV_HEADS,
                                      max_position_embeddings=CONTEXT, tie_word_embeddings=True)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    model.save_pretrained(folder, safe_serialization=True)
    return folder, sum(p.numel() for p in model.parameters())


def run_module(*args, cwd):
    return subprocess.run([sys.executable, "-m", "chapter2.host.bench.tiny_lm", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # runs the benchmark module in a subprocess
def test_module_writes_json_with_provenance_and_first_principles_bytes(checkpoint, tmp_path):
    folder, params = checkpoint
    out = tmp_path / "sub" / "tiny.json"
    proc = run_module("--model", folder, "--prompt-tokens", *PROMPTS, "--decode-steps", STEPS, "--copy-mib", 1,
                      "--reps", 1, "--out", out, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "prefill tok/s" in proc.stdout and f"wrote {out}" in proc.stdout
    doc = json.loads(out.read_text())

    assert doc["schema"] == SCHEMA and doc["suite"] == "cpu-tiny-lm"
    prov = doc["provenance"]
    dt.datetime.fromisoformat(prov["date"])
    assert set(prov["git"]) >= {"commit", "dirty"}
    assert prov["versions"]["numpy"] == np.__version__
    assert prov["device"]["name"] == device_name("cpu") and prov["device"]["name"]
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and "model name" in cpuinfo.read_text():
        line = next(x for x in cpuinfo.read_text().splitlines() if x.startswith("model name"))
        assert prov["device"]["name"] == line.split(":", 1)[1].strip()
    assert doc["config"]["blas_threads"]["OPENBLAS_NUM_THREADS"] == "1"  # the default --threads 1

    # float32 in memory: 4 bytes per parameter, plus the input token's embedding row
    weight_bytes = 4 * params + 4 * HIDDEN
    kv_per_token = 2 * LAYERS * KV_HEADS * HEAD_DIM * 4  # K and V, per layer and KV head, float32
    assert doc["config"]["parameters"] == params
    assert doc["config"]["decode_weight_bytes"] == weight_bytes
    assert doc["config"]["kv_bytes_per_token"] == kv_per_token
    assert doc["summary"]["decode_max_abs_err_vs_prefill"] < 1e-5  # validated before timing
    assert doc["copy"]["large"]["array_bytes"] == 2**20 and doc["copy"]["large"]["bytes_moved"] == 2 * 2**20

    assert [r["prompt_tokens"] for r in doc["results"]] == PROMPTS
    for r in doc["results"]:
        n, d, p = r["prompt_tokens"], r["decode"], r["prefill"]
        # after decode step k the cache holds n + k tokens, all read; one token's K and V written
        mean_kv_read = np.mean([(n + k) * kv_per_token for k in range(1, STEPS + 1)])
        assert d["bytes_per_step"] == pytest.approx(weight_bytes + mean_kv_read + kv_per_token)
        assert d["steps_timed"] == STEPS  # reps = 1, after one warm-up round
        assert d["tokens_per_s"] == pytest.approx(1 / d["median_s"])
        assert p["tokens_per_s"] == pytest.approx(n / p["median_s"])
        assert d["bytes_per_s"] == pytest.approx(d["bytes_per_step"] / d["median_s"])
        assert d["share_of_copy_bandwidth"] == pytest.approx(d["bytes_per_s"] / doc["copy"]["large"]["bytes_per_s"])
        assert r["prefill_over_decode_tokens_per_s"] == pytest.approx(p["tokens_per_s"] / d["tokens_per_s"])
        assert doc["summary"]["decode_share_of_copy_bandwidth"][str(n)] == d["share_of_copy_bandwidth"]


@pytest.mark.slow  # runs the benchmark module in subprocesses
def test_default_prints_only_and_a_folder_gets_a_named_file(checkpoint, tmp_path):
    folder, _ = checkpoint
    args = ("--model", folder, "--prompt-tokens", 4, "--decode-steps", 2, "--copy-mib", 1, "--reps", 1)
    proc = run_module(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "decode ms/step" in proc.stdout and "wrote" not in proc.stdout
    assert not list(tmp_path.iterdir())  # nothing written
    proc = run_module(*args, "--out", tmp_path, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (written,) = tmp_path.glob("cpu-tiny-lm-*.json")
    assert json.loads(written.read_text())["suite"] == "cpu-tiny-lm"


@pytest.mark.parametrize("args,match", [
    (("--prompt-tokens", CONTEXT, "--decode-steps", 1), "exceeds the model's context of 40"),
    (("--decode-steps", 0), "decode_steps must be >= 1"),
    (("--copy-mib", 0), "copy_mib must be > 0"),
    (("--threads", -1), "--threads must be >= 0"),
])
@pytest.mark.slow  # runs the benchmark module in subprocesses
def test_bad_arguments_are_refused(checkpoint, tmp_path, args, match):
    proc = run_module("--model", checkpoint[0], "--reps", 1, "--copy-mib", 1, *args, cwd=tmp_path)
    assert proc.returncode == 2 and match in proc.stderr


@pytest.mark.parametrize("tied", [True, False])
def test_decode_weight_bytes_reads_one_embedding_row(tied):
    """Tied: the table is read in full by the LM head; untied: only the token's row of it, plus lm_head."""
    from chapter2.models import ModelConfig
    from chapter2.models.transformer import Transformer, random_weights

    config = ModelConfig.from_hf({"architectures": ["LlamaForCausalLM"], "vocab_size": 50, "hidden_size": 16,
                                  "intermediate_size": 24, "num_hidden_layers": 1, "num_attention_heads": 2,
                                  "num_key_value_heads": 1, "tie_word_embeddings": tied})
    model = Transformer(config, random_weights(config))
    # per layer: 2 norms (16) + q (16x16) + k, v (8x16 each) + o (16x16) + gate, up (24x16) + down (16x24)
    layer = 2 * 16 + 256 + 2 * 128 + 256 + 3 * 384
    embed, final_norm = 50 * 16, 16
    lm_head = 0 if tied else 50 * 16
    table_read = embed if tied else 0
    assert tiny_lm.decode_weight_bytes(model) == 4 * (layer + final_norm + lm_head + table_read + 16)
