"""Read Hugging Face `.safetensors` checkpoints with numpy alone (so it runs in Pyodide).

The format (https://huggingface.co/docs/safetensors, "Format" section) is:

    8 bytes   N, an unsigned little-endian 64-bit integer
    N bytes   a UTF-8 JSON header: {"tensor name": {"dtype": "BF16",
              "shape": [rows, cols], "data_offsets": [begin, end]}, ...,
              optionally "__metadata__": {str: str}}
    rest      the byte buffer; offsets are relative to its start, tensors are
              stored row-major and little-endian, back to back

numpy has no bfloat16, but bf16 is the top half of a float32: shifting the
16 bits left by 16 gives the exact float32 value.

A large checkpoint is split into shards listed by `model.safetensors.index.json`
({"weight_map": {tensor name: shard file}}); `load_checkpoint` follows it.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from .._checks import path as _path

__all__ = ["read_header", "read_safetensors", "load_checkpoint", "DTYPES"]

# safetensors dtype -> numpy dtype of the stored bytes (little-endian)
DTYPES = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # decoded to float32 below
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}

_MAX_HEADER = 100_000_000  # the format's own limit on the header size


def bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    """Decode raw bfloat16 bit patterns (uint16) to float32 exactly."""
    if not isinstance(bits, np.ndarray) or bits.dtype != np.uint16:
        raise TypeError(f"bits must be a numpy array of uint16 bfloat16 bit patterns, got {type(bits).__name__}"
                        + (f" of {bits.dtype}" if isinstance(bits, np.ndarray) else ""))
    return (bits.astype(np.uint32) << 16).view(np.float32)


def read_header(path) -> tuple[dict, int]:
    """Return (header dict without __metadata__, byte offset where the data buffer starts)."""
    path = Path(_path("path", path))
    if not path.is_file():
        raise ValueError(f"path must be a .safetensors file, got {str(path)!r}")
    with open(path, "rb") as f:
        prefix = f.read(8)
        if len(prefix) != 8:
            raise ValueError(f"{path.name}: too short to be a safetensors file")
        (n,) = struct.unpack("<Q", prefix)
        if n > _MAX_HEADER:
            raise ValueError(f"{path.name}: header length {n} is implausible; not a safetensors file?")
        raw = f.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"{path.name}: header is not valid JSON ({err})") from None
    header.pop("__metadata__", None)
    return header, 8 + n


def read_safetensors(path, names=None) -> dict[str, np.ndarray]:
    """Read tensors (all, or those in `names`) from one .safetensors file.

    F32, F16 and BF16 come back as float32 (F16 widened, BF16 decoded exactly),
    F64 as float64, integer and bool types as themselves.
    """
    header, data_start = read_header(path)
    wanted = header.keys() if names is None else names
    out = {}
    with open(path, "rb") as f:
        for name in wanted:
            if name not in header:
                raise KeyError(f"{Path(path).name}: no tensor named {name!r}")
            out[name] = _read_tensor(f, name, header[name], data_start)
    return out


def _read_tensor(f, name: str, info: dict, data_start: int) -> np.ndarray:
    dtype_name, shape, (begin, end) = info["dtype"], tuple(info["shape"]), info["data_offsets"]
    if dtype_name not in DTYPES:
        raise ValueError(f"tensor {name!r}: dtype {dtype_name} is not supported (supported: {', '.join(DTYPES)})")
    stored = DTYPES[dtype_name]
    count = int(np.prod(shape, dtype=np.int64))
    if end - begin != count * stored.itemsize:
        raise ValueError(f"tensor {name!r}: {end - begin} bytes do not hold shape {list(shape)} of {dtype_name}")
    f.seek(data_start + begin)
    buf = f.read(end - begin)
    if len(buf) != end - begin:
        raise ValueError(f"tensor {name!r}: the file ends before its data does (truncated?)")
    arr = np.frombuffer(buf, dtype=stored, count=count).reshape(shape)
    if dtype_name == "BF16":
        return bf16_to_float32(arr)
    if dtype_name == "F16":
        return arr.astype(np.float32)
    return arr.astype(stored.newbyteorder("="), copy=True)  # native byte order, writable


def load_checkpoint(folder) -> dict[str, np.ndarray]:
    """Every tensor of a Hugging Face checkpoint folder (single file or sharded with an index)."""
    folder = Path(_path("folder", folder))
    single = folder / "model.safetensors"
    index = folder / "model.safetensors.index.json"
    if single.is_file():
        return read_safetensors(single)
    if index.is_file():
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        by_shard: dict[str, list[str]] = {}
        for name, shard in weight_map.items():
            by_shard.setdefault(shard, []).append(name)
        out = {}
        for shard, names in sorted(by_shard.items()):
            out.update(read_safetensors(folder / shard, names))
        return out
    raise ValueError(f"folder must hold model.safetensors or model.safetensors.index.json, got {str(folder)!r}")
