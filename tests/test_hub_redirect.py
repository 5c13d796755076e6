"""The package's lookup follows the Hub's storage redirect: a checkpoint's resolve URL answers 302 to a signed URL
on another host (the Hub's large-file storage), and the range requests for its safetensors header are answered
there. The Hub is tests/_local_hub.py on 127.0.0.1, serving the recorded real files of
sentence-transformers/all-MiniLM-L6-v2 (tests/fixtures/hub/PROVENANCE.md); huggingface_hub is pointed at it with
HF_ENDPOINT, and the redirect names the same server by another host name (localhost), so the client crosses
hosts as it does on the real Hub. Oracle: the stored bytes measured on the whole published file (90,856,960).

The same local Hub, serving SDXL's recorded pipeline files, answers the script that Copy as Python gives for 2.3's
"any denoiser" calculator with a Hub id: it looks the pipeline up through huggingface_hub and prints what the
page shows for the record the page fetched.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from _local_hub import STORAGE_PATH, LocalHub

FIXTURES = Path(__file__).parent / "fixtures" / "hub"
MINILM, MINILM_REV = "sentence-transformers/all-MiniLM-L6-v2", "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
MINILM_DIR = FIXTURES / "sentence-transformers--all-MiniLM-L6-v2"
MINILM_STORED = 90_868_376 - 8 - 11_408  # measured on the whole published model.safetensors (PROVENANCE.md)
SRC = str(Path(__file__).resolve().parents[1] / "src")


def test_stored_bytes_follow_the_redirect_to_the_storage_host(tmp_path):
    header = (MINILM_DIR / "model.safetensors.header").read_bytes()  # the file's first 8 + N bytes stand for it
    hub = LocalHub({(MINILM, MINILM_REV): {"config.json": (MINILM_DIR / "config.json").read_bytes(),
                                           "model.safetensors": header}})
    port = hub.start()
    hub.storage = f"http://localhost:{port}"  # another host: the redirect crosses hosts, as the Hub's does
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE_"))}
    env.update({"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_CACHE": str(tmp_path / "cache"),
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1", "HF_HOME": str(tmp_path),
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", "PYTHONPATH": SRC})
    code = ("import json\nfrom chapter2.hub import stored_bytes\n"
            f"print(json.dumps(stored_bytes({MINILM!r}).to_json()))")
    try:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    finally:
        hub.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["stored_bytes"] == MINILM_STORED and out["tensors"] == 104 and out["files"] == ["model.safetensors"]

    sha = hashlib.sha256(header).hexdigest()
    checkpoint = [(s.method, s.host, s.path.split("?")[0], s.range, s.status) for s in hub.seen
                  if s.path.split("?")[0].endswith("model.safetensors") or s.path.startswith(STORAGE_PATH)]
    resolve = f"/{MINILM}/resolve/main/model.safetensors"
    assert checkpoint == [
        ("GET", f"127.0.0.1:{port}", resolve, "bytes=0-7", 302),
        ("GET", f"localhost:{port}", f"{STORAGE_PATH}{sha}", "bytes=0-7", 206),
        ("GET", f"127.0.0.1:{port}", resolve, "bytes=8-11415", 302),
        ("GET", f"localhost:{port}", f"{STORAGE_PATH}{sha}", "bytes=8-11415", 206),
    ], hub.seen
    # config.json came from the Hub itself; the index is not there (404, EntryNotFound): one unsharded file
    # config.json came from the Hub itself (HEAD, then GET); the index is not there (404): one unsharded file
    assert [(s.method, s.path, s.status) for s in hub.seen if not s.path.endswith("model.safetensors")
            and not s.path.startswith(STORAGE_PATH)] == [
        ("HEAD", f"/{MINILM}/resolve/main/config.json", 200), ("GET", f"/{MINILM}/resolve/main/config.json", 200),
        ("HEAD", f"/{MINILM}/resolve/main/model.safetensors.index.json", 404)]


def test_the_copied_script_of_a_pipeline_id_prints_what_the_page_shows(tmp_path):
    """Copy as Python with a Hub id: the script looks the pipeline up itself (huggingface_hub, here pointed at the
    local Hub serving SDXL's recorded files) and prints exactly what the page shows for the record it fetched."""
    from chapter2 import calculators
    from chapter2.calculators._script import expected_output, python_script
    from test_hub_pipeline import SDXL, SDXL_DIR, SDXL_REV, _lookup, _remember

    files = {p.relative_to(SDXL_DIR).as_posix(): p.read_bytes() for p in sorted(SDXL_DIR.rglob("*")) if p.is_file()}
    hub = LocalHub({(SDXL, SDXL_REV): files})
    port = hub.start()
    raw = {"model_id": SDXL, "width": "896", "height": "1152"}
    _remember(_lookup(SDXL, SDXL_DIR))  # what the page sends with its recompute
    shown = calculators.evaluate("denoiser_any", raw)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING_FACE_"))}
    env.update({"HF_ENDPOINT": f"http://127.0.0.1:{port}", "HF_HUB_CACHE": str(tmp_path / "cache"),
                "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1", "HF_HOME": str(tmp_path),
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost", "PYTHONPATH": SRC})
    try:
        done = subprocess.run([sys.executable, "-c", python_script("denoiser_any", shown["inputs"])], env=env,
                              capture_output=True, text=True, timeout=300)
    finally:
        hub.stop()
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == expected_output("denoiser_any", shown)
    assert f"Denoiser: {SDXL}, unet/config.json: UNet2DConditionModel: " in done.stdout
    assert [s.path for s in hub.seen if s.method == "GET"] == [f"/{SDXL}/resolve/main/{p}" for p in (
        "model_index.json", "text_encoder/config.json", "text_encoder_2/config.json", "unet/config.json",
        "vae/config.json")]
