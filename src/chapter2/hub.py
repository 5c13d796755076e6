"""Look a model up on the Hugging Face Hub by its id: its config.json, and the bytes its checkpoint really stores.

A reader knows "Qwen/Qwen3-8B", not its config.json. The Hub serves every file of a model repository at

    https://huggingface.co/<org>/<name>/resolve/<revision>/<path>

(the revision is a branch, a tag or a commit; "main" by default; large files redirect to a storage host).
A safetensors checkpoint starts with an 8-byte little-endian length N and an N-byte JSON header that gives
every tensor's dtype, shape and byte range (https://huggingface.co/docs/safetensors, "Format"), so two small
HTTP range requests per file give the exact bytes the checkpoint stores, scales and buffers included, without
downloading the weights (the approach of safetensors issue 44 and of hf-mem). A sharded checkpoint lists its
files in `model.safetensors.index.json` (`weight_map`: tensor name -> file).

Counting a checkpoint as parameters x bytes per parameter goes wrong in known ways: FP8 and NVFP4 checkpoints
store scale tensors beside their weights, int4 and FP4 pack two or eight values per stored element, a tied LM
head is stored once (or, in some repositories, twice), multimodal repositories hold a vision tower the language
model's count leaves out, and some hold extra heads (multi-token prediction layers). `Checkpoint.parts` sorts
every stored tensor into those groups, so a page can say where stored bytes and parameters x format differ.

The lookup itself is transport-free (`plan`): it says which files (or byte ranges) it needs next, given the
replies so far, until it can return a `Record`. Two transports drive it:

- the site's page (docs/assets/chapter2/hub.js) fetches what `plan` asks with the browser's fetch, only when
  the reader asks, and hands the bytes back to this module in the calculators' Web Worker (Pyodide);
- `fetch_with_hub` here uses `huggingface_hub` (an optional extra: pip install "chapter2[hub]"), with its
  cache, token and offline mode: `from_hub` and `stored_bytes` below, and `ModelConfig.from_hub`.

This module imports with the standard library alone (numpy is not needed), in CPython and in Pyodide.
"""

from __future__ import annotations

import base64
import json
import math
import re
import struct
from dataclasses import dataclass, field
from urllib.parse import quote

__all__ = ["HUB", "ModelId", "HubError", "Tensor", "Checkpoint", "Request", "Reply", "Record", "DTYPE_BITS",
           "parse_model_id", "header_length", "parse_header", "plan", "fetch_with_hub", "lookup", "from_hub",
           "stored_bytes", "status_message"]

HUB = "https://huggingface.co"
MAX_HEADER = 100_000_000  # the safetensors format's own limit on a header (bytes)
MAX_NAME = 96  # the Hub's limit on an organisation's or a repository's name

# bits per stored element of every safetensors dtype (the format's Dtype list: safetensors 0.6 added the
# sub-byte floats F4 (e2m1), F6_E2M3 and F6_E3M2, and F8_E8M0, the exponent-only scale of MX formats)
DTYPE_BITS = {
    "BOOL": 8, "U8": 8, "I8": 8, "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16,
    "I32": 32, "U32": 32, "F32": 32,
    "I64": 64, "U64": 64, "F64": 64, "C64": 64,
    "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6,
}

# config.json's torch_dtype (transformers 4) or dtype (transformers 5) -> bytes per parameter
FORMAT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


class HubError(ValueError):
    """A lookup that cannot go on: a bad id, an answer of the Hub that is an error, a file that is not what it
    should be. The message is what a calculator shows, inline, under the id field."""


# ----------------------------------------------------------------------------------------------------- ids

_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_REVISION = re.compile(r"[A-Za-z0-9._/-]{1,255}")


@dataclass(frozen=True)
class ModelId:
    """A model repository on the Hub and a revision of it (a branch, a tag or a commit hash)."""

    repo: str
    revision: str = "main"

    def url(self, path: str) -> str:
        """Where the Hub serves `path` of this revision (the revision quoted whole, "refs/pr/1" -> "refs%2Fpr%2F1",
        as huggingface_hub's hf_hub_url does)."""
        return f"{HUB}/{self.repo}/resolve/{quote(self.revision, safe='')}/{quote(path)}"

    @property
    def text(self) -> str:
        """The id as a reader types it: 'org/name', or 'org/name@revision' for another revision than main."""
        return self.repo if self.revision == "main" else f"{self.repo}@{self.revision}"


def parse_model_id(model_id: str, revision: str | None = None) -> ModelId:
    """'org/name' or 'org/name@revision' as a `ModelId`; `revision`, if given, is the revision (then the id
    may not carry one). Names follow the Hub's rule: letters, digits, '-', '_' and '.', at most 96, neither
    starting nor ending with '-' or '.', no '--' or '..'."""
    if not isinstance(model_id, str):
        raise TypeError(f"model_id must be a string like 'Qwen/Qwen3-8B', got {type(model_id).__name__}")
    text = model_id
    raw = text.strip()
    if "@" in raw:
        raw, _, rev = raw.partition("@")
        if revision is not None:
            raise HubError(f"model id {text.strip()!r} names a revision and revision={revision!r} names another: "
                           "give one")
        revision = rev.strip()
        if not revision:
            raise HubError(f"model id {text.strip()!r}: nothing after '@' (write org/name@revision, e.g. "
                           "Qwen/Qwen3-8B@main)")
    parts = raw.split("/")
    if len(parts) != 2 or not all(parts):
        raise HubError(f"model id must be org/name (e.g. Qwen/Qwen3-8B), optionally @revision; got {text.strip()!r}")
    for part in parts:
        if len(part) > MAX_NAME or not _NAME.fullmatch(part) or "--" in part or ".." in part:
            raise HubError(f"model id {raw!r}: {part!r} is not a Hub name (letters, digits, '-', '_' and '.', at "
                           f"most {MAX_NAME}, not starting or ending with '-' or '.', no '--' or '..')")
    if revision is None:
        revision = "main"
    if not isinstance(revision, str):
        raise TypeError(f"revision must be a string (a branch, a tag or a commit hash), got {type(revision).__name__}")
    if not _REVISION.fullmatch(revision) or ".." in revision or revision.startswith("/") or revision.endswith("/"):
        raise HubError(f"revision {revision!r} is not a branch, tag or commit name (letters, digits, '-', '_', '.' "
                       "and '/')")
    return ModelId(raw, revision)


def _need(name: str, value, kind, what: str) -> None:
    """A programming error, not a reader's: `value` (the argument `name`) is not of type `kind`."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")


# ------------------------------------------------------------------------------------------ the Hub's answers

def status_message(mid: ModelId, path: str, status: int, error_code: str = "") -> str:
    """What a failed answer of the Hub means for the reader, from its HTTP status and, where the Hub sends one
    the page may read, its X-Error-Code (RepoNotFound, GatedRepo, RevisionNotFound, EntryNotFound).

    The Hub answers 401 for a repository that does not exist as well as for one that is gated or private (it
    does not tell a stranger which), and 404 for a file or revision that does not exist.
    """
    _need("mid", mid, ModelId, "a ModelId (see parse_model_id)")
    if error_code == "RevisionNotFound":
        return f"{mid.repo} has no revision {mid.revision!r} on the Hub (check the branch, tag or commit after '@')"
    if error_code == "GatedRepo" or status == 403:
        return f"{mid.repo} is gated on the Hub: paste its config.json (from its page once you have access)"
    if error_code == "RepoNotFound" or (status == 404 and error_code == "" and path == "config.json"
                                        and mid.revision == "main"):
        return f"{mid.repo} is not a model on the Hub (unknown id: check the spelling, org/name)"
    if status == 401:
        return (f"{mid.repo}: the Hub answers 401, which it gives for an id that does not exist and for a gated or "
                f"private model: check the spelling; if it is gated on the Hub, paste its config.json")
    if status == 404 and path == PIPELINE_INDEX and error_code in ("", "EntryNotFound"):
        return (f"{mid.text} has no {PIPELINE_INDEX}: it is not a diffusers pipeline (paste its denoiser's "
                "transformer/ or unet/config.json instead)")
    if status == 404:
        where = "" if mid.revision == "main" else f" at revision {mid.revision!r} (or that revision does not exist)"
        return f"{mid.repo} has no {path}{where}"
    if status == 0 and path in ("config.json", "model_index.json"):
        return f"could not reach the Hub for {mid.text} (no network?): paste its config.json instead"
    if status == 0:
        return (f"no answer for {path} of {mid.text} (no network, or the storage host the Hub sends it from is "
                "out of reach)")
    return f"the Hub answered HTTP {status} for {path} of {mid.text}"


# ---------------------------------------------------------------------------------------------- safetensors

@dataclass(frozen=True)
class Tensor:
    """One tensor of a safetensors header: its name, dtype, shape and the bytes it occupies (end - begin)."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


def header_length(prefix: bytes, what: str = "the file") -> int:
    """N, the header's length, from the first 8 bytes of a safetensors file (unsigned 64-bit little-endian)."""
    if not isinstance(prefix, bytes | bytearray):
        raise TypeError(f"prefix must be bytes, got {type(prefix).__name__}")
    if len(prefix) < 8:
        raise HubError(f"{what} is not a safetensors file: it has {len(prefix)} bytes, fewer than the 8 of the "
                       "header's length")
    (n,) = struct.unpack("<Q", bytes(prefix[:8]))
    if n < 2 or n > MAX_HEADER:
        raise HubError(f"{what} is not a safetensors file: its first 8 bytes give a header of {n:,} bytes "
                       f"(the format allows 2 to {MAX_HEADER:,}); first bytes {bytes(prefix[:8])!r}")
    return n


def parse_header(raw: bytes, what: str = "the file") -> tuple[Tensor, ...]:
    """Every tensor of a safetensors file from its first 8 + N bytes (more may follow; they are ignored).

    Checked as the format requires: UTF-8 JSON of an object; per tensor a known dtype, a shape of non-negative
    whole numbers and data_offsets [begin, end] whose length is what the dtype and shape need (sub-byte dtypes
    rounded up to whole bytes); the tensors tile the data buffer from 0 without gap or overlap.
    """
    _need("raw", raw, bytes | bytearray, "bytes (the file's first 8 + N bytes)")
    n = header_length(raw, what)
    if len(raw) < 8 + n:
        raise HubError(f"{what}: the header is {n:,} bytes but only {len(raw) - 8:,} arrived")
    try:
        data = json.loads(bytes(raw[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise HubError(f"{what} is not a safetensors file: its header is not UTF-8 JSON ({err})") from None
    if not isinstance(data, dict):
        raise HubError(f"{what} is not a safetensors file: its header is a JSON {type(data).__name__}, not an object")
    tensors = []
    spans = []
    for name, info in data.items():
        if name == "__metadata__":
            continue
        tensors.append(_tensor(name, info, what))
        spans.append((info["data_offsets"][0], info["data_offsets"][1], name))
    at = 0
    for begin, end, name in sorted(spans):
        if begin != at:
            raise HubError(f"{what}: tensor {name!r} starts at byte {begin:,} of the data, expected {at:,} "
                           "(tensors must tile the buffer without gap or overlap)")
        at = end
    return tuple(tensors)


def _tensor(name: str, info, what: str) -> Tensor:
    if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
        raise HubError(f"{what}: tensor {name!r} must give dtype, shape and data_offsets")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if dtype not in DTYPE_BITS:
        raise HubError(f"{what}: tensor {name!r} has dtype {dtype!r}, not a safetensors dtype "
                       f"({', '.join(DTYPE_BITS)})")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise HubError(f"{what}: tensor {name!r} has shape {shape!r}, expected a list of whole numbers >= 0")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
            or offsets[1] < offsets[0]):
        raise HubError(f"{what}: tensor {name!r} has data_offsets {offsets!r}, expected [begin, end] with "
                       "0 <= begin <= end")
    need = -(-math.prod(shape) * DTYPE_BITS[dtype] // 8)
    if offsets[1] - offsets[0] != need:
        raise HubError(f"{what}: tensor {name!r} ({dtype} {shape}) needs {need:,} bytes but its data_offsets give "
                       f"{offsets[1] - offsets[0]:,}")
    return Tensor(name, dtype, tuple(shape), offsets[1] - offsets[0])


# ------------------------------------------------------------------------------------ where the bytes sit

PARTS = ("weights", "packed", "scales", "lm head", "vision", "extra heads", "buffers")
PART_LABELS = {
    "weights": "weights",
    "packed": "packed low-bit weights",
    "scales": "quantization scales and zero points",
    "lm head": "LM head stored though the config ties it to the embedding",
    "vision": "vision and audio towers",
    "extra heads": "extra heads (multi-token prediction layers)",
    "buffers": "buffers that are not parameters",
}
_SCALE = re.compile(r"(^|[._])(weight_scale(_inv|_2)?|input_scale|output_scale|[kvq]_scale|scales?|scale_inv|"
                    r"\w+_scales?|\w*global_scale|\w*zero_point|qzeros|zeros|g_idx)$")
_TOWER = re.compile(r"(^|\.)(vision_tower|vision_model|visual|vision_encoder|multi_modal_projector|mm_projector|"
                    r"audio_tower|audio_encoder|embed_vision|embed_audio|image_newline|vision)(\.|$)")
_BUFFER = re.compile(r"(^|\.)(position_ids|inv_freq|masked_bias|token_type_ids)$|(^|\.)attn\.bias$")
_LAYER = re.compile(r"(^|\.)layers\.(\d+)\.")
_MTP = re.compile(r"(^|\.)(mtp|nextn|mtp_layers|eh_proj|enorm|hnorm)(\.|$)")


def part_of(name: str, dtype: str, config: dict | None) -> str:
    """Which group of `PARTS` a stored tensor belongs to, from its name and dtype (and the config's layer count
    and tie_word_embeddings). Scales first (a vision tower's scales are scales), then towers, extra heads,
    buffers, a head stored against the tie, packed weights (qweight, *_blocks, U8/I32 weight tensors), weights."""
    _need("name", name, str, "a tensor's name (a string)")
    _need("dtype", dtype, str, "a safetensors dtype (a string such as 'BF16')")
    _need("config", config, dict | None, "a parsed config.json (a dict) or None")
    if _SCALE.search(name):
        return "scales"
    if _TOWER.search(name):
        return "vision"
    layers = _layers(config)
    m = _LAYER.search(name)
    if _MTP.search(name) or (m and layers is not None and int(m.group(2)) >= layers and "decoder" not in name):
        return "extra heads"
    if _BUFFER.search(name):
        return "buffers"
    if name in ("lm_head.weight", "language_model.lm_head.weight") and config and _tied(config):
        return "lm head"
    last = name.rsplit(".", 1)[-1]
    if last in ("qweight", "weight_packed") or last.endswith("_blocks") or dtype == "F4" or (
            dtype in ("U8", "I32", "U32", "I8") and last == "weight"):
        return "packed"
    return "weights"


def _layers(config: dict | None) -> int | None:
    if not config:
        return None
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    n = text.get("num_hidden_layers")
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _tied(config: dict) -> bool:
    value = config.get("tie_word_embeddings")
    if value is None and isinstance(config.get("text_config"), dict):
        value = config["text_config"].get("tie_word_embeddings")
    return bool(value)


def config_format(config: dict | None) -> tuple[str, int] | None:
    """The config's declared dtype and its bytes per parameter ('bfloat16', 2), or None when it declares none
    that maps to bytes (transformers 5 writes "dtype", transformers 4 "torch_dtype")."""
    _need("config", config, dict | None, "a parsed config.json (a dict) or None")
    if not config:
        return None
    for holder in (config, config.get("text_config") if isinstance(config.get("text_config"), dict) else {}):
        for key in ("dtype", "torch_dtype"):
            value = holder.get(key)
            if isinstance(value, str) and value.removeprefix("torch.") in FORMAT_BYTES:
                value = value.removeprefix("torch.")
                return value, FORMAT_BYTES[value]
    return None


@dataclass(frozen=True)
class Group:
    """Tensors that share a dtype or a part: how many, how many stored elements, how many bytes."""

    tensors: int = 0
    elements: int = 0
    nbytes: int = 0

    def add(self, t: Tensor) -> Group:
        return Group(self.tensors + 1, self.elements + t.elements, self.nbytes + t.nbytes)


@dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint's safetensors headers say, summed: its files, and its tensors by dtype and by part.

    `stored_bytes` is the sum over every tensor of its byte range (end - begin), the bytes a GPU must hold to load
    the checkpoint as stored (headers excluded). `quantization` is the config's quant_method, if any.
    """

    files: tuple[str, ...]
    by_dtype: dict[str, Group]
    by_part: dict[str, Group]
    tensors: int
    stored_bytes: int
    quantization: str = ""

    @classmethod
    def from_tensors(cls, files, tensors, config: dict | None = None) -> Checkpoint:
        by_dtype: dict[str, Group] = {}
        by_part: dict[str, Group] = {}
        for t in tensors:
            by_dtype[t.dtype] = by_dtype.get(t.dtype, Group()).add(t)
            part = part_of(t.name, t.dtype, config)
            by_part[part] = by_part.get(part, Group()).add(t)
        quant = (config or {}).get("quantization_config") or {}
        method = quant.get("quant_method", "") if isinstance(quant, dict) else ""
        return cls(tuple(files), dict(sorted(by_dtype.items(), key=lambda kv: -kv[1].nbytes)),
                   {p: by_part[p] for p in PARTS if p in by_part}, len(tensors), sum(t.nbytes for t in tensors),
                   str(method))

    def to_json(self) -> dict:
        return {"files": list(self.files), "tensors": self.tensors, "stored_bytes": self.stored_bytes,
                "quantization": self.quantization,
                "by_dtype": {k: [g.tensors, g.elements, g.nbytes] for k, g in self.by_dtype.items()},
                "by_part": {k: [g.tensors, g.elements, g.nbytes] for k, g in self.by_part.items()}}

    @classmethod
    def from_json(cls, data: dict) -> Checkpoint:
        return cls(tuple(data["files"]), {k: Group(*v) for k, v in data["by_dtype"].items()},
                   {k: Group(*v) for k, v in data["by_part"].items()}, data["tensors"], data["stored_bytes"],
                   data.get("quantization", ""))


# ---------------------------------------------------------------------------------------------- the lookup

@dataclass(frozen=True)
class Request:
    """One file, or one byte range of it (first and last byte, inclusive, as in an HTTP Range header)."""

    path: str
    url: str
    first: int | None = None
    last: int | None = None

    @property
    def key(self) -> str:
        return self.path if self.first is None else f"{self.path}#{self.first}-{self.last}"

    def to_json(self) -> dict:
        return {"key": self.key, "path": self.path, "url": self.url,
                "range": None if self.first is None else f"bytes={self.first}-{self.last}"}


@dataclass(frozen=True)
class Reply:
    """The Hub's answer to a `Request`: its HTTP status (0: no answer at all, the network failed), its body, and
    its X-Error-Code header where there is one (and the page may read it)."""

    status: int
    body: bytes = b""
    error_code: str = ""

    @property
    def ok(self) -> bool:
        return self.status in (200, 206)

    @classmethod
    def from_json(cls, data: dict) -> Reply:
        return cls(int(data["status"]), base64.b64decode(data.get("body") or ""), data.get("error_code") or "")


@dataclass(frozen=True)
class Record:
    """What a lookup found: the id, the text of its config.json (or, for a diffusers pipeline, of its
    model_index.json and of each component's config.json), and its checkpoint's summary, or why there is none."""

    model_id: ModelId
    kind: str
    config: str
    checkpoint: Checkpoint | None = None
    note: str = ""
    components: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"id": self.model_id.text, "repo": self.model_id.repo, "revision": self.model_id.revision,
                "kind": self.kind, "config": self.config, "note": self.note, "components": self.components,
                "checkpoint": self.checkpoint.to_json() if self.checkpoint else None}

    @classmethod
    def from_json(cls, data: dict) -> Record:
        return cls(ModelId(data["repo"], data["revision"]), data["kind"], data["config"],
                   Checkpoint.from_json(data["checkpoint"]) if data.get("checkpoint") else None,
                   data.get("note", ""), dict(data.get("components") or {}))


KINDS = ("llm", "pipeline")
INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
PIPELINE_INDEX = "model_index.json"
# a diffusers pipeline's components whose folder holds a config.json (tokenizers, schedulers and processors
# keep other files)
_NO_CONFIG = re.compile(r"Tokenizer|Scheduler|Processor|FeatureExtractor", re.I)


def plan(mid: ModelId, kind: str, replies: dict[str, Reply]) -> list[Request] | Record:
    """The next requests of a lookup of `mid`, given the `replies` so far (by `Request.key`), or its `Record`.

    kind "llm": config.json and model.safetensors.index.json; then, for each shard the index names (or
    model.safetensors alone when there is no index), bytes 0-7, then bytes 8 to 8 + N - 1. kind "pipeline":
    model_index.json, then each component's config.json. Raises HubError for an answer that ends the lookup
    (config.json missing, gated, no such revision, no network); a checkpoint that cannot be read does not end
    it: the Record says why in `note`.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "pipeline":
        return _plan_pipeline(mid, replies)
    config_reply = replies.get("config.json")
    index_reply = replies.get(INDEX)
    if config_reply is None or index_reply is None:
        return [Request(p, mid.url(p)) for p in ("config.json", INDEX) if p not in replies]
    config_text, config = _json_file(mid, "config.json", config_reply)
    if index_reply.ok:
        _, index = _json_file(mid, INDEX, index_reply)
        weight_map = index.get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            return Record(mid, kind, config_text, note=f"{INDEX} has no weight_map: the stored bytes are unknown")
        shards = sorted(set(map(str, weight_map.values())))
    elif index_reply.status == 404 and index_reply.error_code in ("", "EntryNotFound"):
        shards = [SINGLE]
    else:
        return Record(mid, kind, config_text, note=status_message(mid, INDEX, index_reply.status, index_reply.error_code))
    wanted, tensors = [], []
    for shard in shards:
        prefix = replies.get(f"{shard}#0-7")
        if prefix is None:
            wanted.append(Request(shard, mid.url(shard), 0, 7))
            continue
        if not prefix.ok:
            if shard == SINGLE and prefix.status == 404:
                return Record(mid, kind, config_text, note=f"{mid.text} has no model.safetensors (a .bin, GGUF or "
                                                           "other checkpoint?): its stored bytes are not read")
            return Record(mid, kind, config_text, note=status_message(mid, shard, prefix.status, prefix.error_code))
        try:
            n = header_length(prefix.body, shard)
        except HubError as err:
            return Record(mid, kind, config_text, note=str(err))
        header = replies.get(f"{shard}#8-{7 + n}")
        if header is None:
            wanted.append(Request(shard, mid.url(shard), 8, 7 + n))
            continue
        if not header.ok:
            return Record(mid, kind, config_text, note=status_message(mid, shard, header.status, header.error_code))
        try:
            tensors += parse_header(prefix.body[:8] + header.body, shard)
        except HubError as err:
            return Record(mid, kind, config_text, note=str(err))
    if wanted:
        return wanted
    return Record(mid, kind, config_text, Checkpoint.from_tensors(shards, tensors, config))


def _plan_pipeline(mid: ModelId, replies: dict[str, Reply]) -> list[Request] | Record:
    reply = replies.get(PIPELINE_INDEX)
    if reply is None:
        return [Request(PIPELINE_INDEX, mid.url(PIPELINE_INDEX))]
    text, index = _json_file(mid, PIPELINE_INDEX, reply)
    components = {name: value for name, value in index.items()
                  if not name.startswith("_") and isinstance(value, list) and len(value) == 2
                  and value[0] in ("diffusers", "transformers") and isinstance(value[1], str)
                  and not _NO_CONFIG.search(value[1])}
    wanted, configs = [], {}
    for name in sorted(components):
        path = f"{name}/config.json"
        got = replies.get(path)
        if got is None:
            wanted.append(Request(path, mid.url(path)))
        else:
            configs[name] = _json_file(mid, path, got)[0]
    if wanted:
        return wanted
    return Record(mid, "pipeline", text, components=configs)


def _json_file(mid: ModelId, path: str, reply: Reply) -> tuple[str, dict]:
    if not reply.ok:
        raise HubError(status_message(mid, path, reply.status, reply.error_code))
    try:
        text = reply.body.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise HubError(f"{path} of {mid.text} is not UTF-8 JSON ({err})") from None
    if not isinstance(data, dict):
        raise HubError(f"{path} of {mid.text} is a JSON {type(data).__name__}, not an object")
    return text, data


def step_json(model_id: str, kind: str, replies_json: str) -> str:
    """The browser's entry point (chapter2._browser.hub): JSON in, JSON out; {"fetch": [request...]},
    {"record": {...}} or {"error": message}. Replies carry their body base64-encoded. A reader's mistake (a bad
    id, a failed answer) is an {"error"}; arguments that are not strings are the caller's and raise TypeError."""
    _need("model_id", model_id, str, "a string (the id the reader typed)")
    _need("kind", kind, str, "a string (the calculator's kind of lookup)")
    _need("replies_json", replies_json, str, "a JSON string of the replies so far")
    try:
        mid = parse_model_id(model_id)
        replies = {k: Reply.from_json(v) for k, v in json.loads(replies_json or "{}").items()}
        result = plan(mid, kind, replies)
    except (HubError, ValueError, TypeError) as err:
        return json.dumps({"error": str(err)})
    if isinstance(result, Record):
        return json.dumps({"record": result.to_json()})
    return json.dumps({"fetch": [r.to_json() for r in result]})


def lookup(mid: ModelId, kind: str, fetch) -> Record:
    """Drive `plan` to its `Record` with `fetch(requests) -> {key: Reply}` (a transport)."""
    replies: dict[str, Reply] = {}
    for _ in range(16):  # config + index, 8-byte prefixes, headers: four rounds at most; the bound is a guard
        result = plan(mid, kind, replies)
        if isinstance(result, Record):
            return result
        replies.update(fetch(result))
    raise HubError(f"the lookup of {mid.text} did not finish")  # pragma: no cover - plan always converges


# ------------------------------------------------------------------------------- CPython: huggingface_hub

def _hub():
    try:
        import huggingface_hub
    except ImportError:
        raise ImportError("looking a model up on the Hub from Python needs huggingface_hub: "
                          'pip install "chapter2[hub]" (or pip install huggingface_hub), or read a config.json you '
                          "have with ModelConfig.from_json") from None
    return huggingface_hub


def fetch_with_hub(mid: ModelId, requests: list[Request], cache_dir=None) -> dict[str, Reply]:
    """Answer `requests` through huggingface_hub: whole files with hf_hub_download (its cache, token and offline
    mode, HF_HUB_OFFLINE=1, apply), byte ranges from the cached file when it is there, else by an HTTP range
    request through huggingface_hub's session. Its errors become the statuses the page would see."""
    _need("mid", mid, ModelId, "a ModelId (see parse_model_id)")
    _need("requests", requests, list | tuple, "a list of Request")
    hub = _hub()
    from huggingface_hub import constants, errors

    out = {}
    for req in requests:
        try:
            if req.first is None:
                known = hub.try_to_load_from_cache(mid.repo, req.path, cache_dir=cache_dir, revision=mid.revision)
                if known is not None and not isinstance(known, str):  # huggingface_hub's mark: the Hub said 404
                    out[req.key] = Reply(404, error_code="EntryNotFound")
                    continue
                path = hub.hf_hub_download(mid.repo, req.path, revision=mid.revision, cache_dir=cache_dir)
                with open(path, "rb") as f:
                    out[req.key] = Reply(200, f.read())
            else:
                out[req.key] = _range(hub, mid, req, cache_dir)
        except errors.GatedRepoError:
            out[req.key] = Reply(403, error_code="GatedRepo")
        except errors.RepositoryNotFoundError:
            out[req.key] = Reply(404, error_code="RepoNotFound")
        except errors.RevisionNotFoundError:
            out[req.key] = Reply(404, error_code="RevisionNotFound")
        except errors.LocalEntryNotFoundError as err:
            if constants.HF_HUB_OFFLINE or "offline" in str(err).lower():
                raise HubError(f"{req.path} of {mid.text} is not in the local Hugging Face cache and the Hub is not "
                               "reachable (HF_HUB_OFFLINE is set, or no network)") from None
            out[req.key] = Reply(0)
        except errors.EntryNotFoundError:
            out[req.key] = Reply(404, error_code="EntryNotFound")
        except errors.HfHubHTTPError as err:
            response = getattr(err, "response", None)
            out[req.key] = Reply(getattr(response, "status_code", 0) or 0)
    return out


def _range(hub, mid: ModelId, req: Request, cache_dir) -> Reply:
    cached = hub.try_to_load_from_cache(mid.repo, req.path, cache_dir=cache_dir, revision=mid.revision)
    if isinstance(cached, str):
        with open(cached, "rb") as f:
            f.seek(req.first)
            return Reply(206, f.read(req.last - req.first + 1))
    if cached is not None:  # huggingface_hub's marker of a file known not to exist at this revision
        return Reply(404, error_code="EntryNotFound")
    from huggingface_hub import constants, errors

    if constants.HF_HUB_OFFLINE:
        raise errors.LocalEntryNotFoundError(f"{req.path} is not cached (offline mode)")
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    url = hub.hf_hub_url(mid.repo, req.path, revision=mid.revision)
    response = get_session().get(url, headers={**build_hf_headers(), "Range": f"bytes={req.first}-{req.last}"},
                                 follow_redirects=True)
    hf_raise_for_status(response)
    return Reply(response.status_code, response.content[:req.last - req.first + 1])


def from_hub(model_id: str, revision: str | None = None, cache_dir=None):
    """The `ModelConfig` of a model on the Hub, read from its config.json (see `ModelConfig.from_hub`)."""
    from .models import ModelConfig

    mid = parse_model_id(model_id, revision)
    replies = fetch_with_hub(mid, [Request("config.json", mid.url("config.json"))], cache_dir)
    text, _ = _json_file(mid, "config.json", replies["config.json"])
    return ModelConfig.from_text(text, name=mid.text, what=f"config.json of {mid.text}")


def stored_bytes(model_id: str, revision: str | None = None, cache_dir=None) -> Checkpoint:
    """The `Checkpoint` of a model on the Hub: its safetensors headers read with two range requests per file
    (or from the local cache), summed by dtype and by part. Raises HubError when there is none to read."""
    mid = parse_model_id(model_id, revision)
    record = lookup(mid, "llm", lambda reqs: fetch_with_hub(mid, reqs, cache_dir))
    if record.checkpoint is None:
        raise HubError(record.note)
    return record.checkpoint
