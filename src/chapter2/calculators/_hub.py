"""The model id field: a calculator that takes a pasted config also takes a Hugging Face Hub id.

The field is named `model_id` (the permalink and export code know it by that name): 'org/name', optionally
'@revision'. A calculator is a pure function of its fields, so the lookup itself is not done here:

- in the browser, the page fetches the files only when the reader asks (Look up, or Enter in the field;
  docs/assets/chapter2/hub.js drives `chapter2.hub.plan`) and sends the `Record` it found with every
  recompute of that calculator; `remember` keeps it for the computation;
- in CPython, a model id without a remembered record is looked up through huggingface_hub (`chapter2.hub`),
  when it is installed; in the browser, without a record, the field asks the reader to press Look up.

Precedence, the same in every calculator: a pasted config.json, then the model id, then the select.
"""

from __future__ import annotations

import json
from functools import lru_cache

from .. import hub
from ..format import nbytes, number
from ._registry import Field, FieldError

FIELD = "model_id"
MAX_ID_CHARS = 300
DENOISERS = ("transformer", "unet", "prior", "decoder")  # a pipeline's denoiser, by its component's name
RECORDS: dict[str, hub.Record] = {}  # id text -> its record, as the page sent it (or CPython looked it up)


def model_id_field(kind: str = "llm") -> Field:
    what = "config.json" if kind == "llm" else "model_index.json and components' config.json"
    return Field(FIELD, "Or a Hugging Face model id (org/name, optionally @revision)", "", kind="text",
                 max=MAX_ID_CHARS,
                 help=f"fetched from huggingface.co only when you press Look up or Enter: its {what}"
                      + (" and its safetensors headers (two small range requests a file)" if kind == "llm" else ""))


def remember(records_json: str | None) -> None:
    """Keep the records the page sends with a recompute ({id text: record}); called by chapter2._browser.calc."""
    if not records_json:
        return
    for text, data in _parse(records_json).items():
        RECORDS[text] = data


@lru_cache(maxsize=8)
def _parse(records_json: str) -> dict[str, hub.Record]:
    return {text: hub.Record.from_json(data) for text, data in json.loads(records_json).items()}


def record(model_id: str, kind: str = "llm") -> hub.Record:
    """The record of `model_id`: the one the page sent, else (CPython with huggingface_hub) looked up now."""
    try:
        mid = hub.parse_model_id(model_id)
    except (hub.HubError, TypeError) as err:
        raise FieldError(FIELD, f"Model id: {err}") from None
    found = RECORDS.get(mid.text)
    if found is not None and found.kind == kind:
        return found
    try:
        import huggingface_hub  # noqa: F401  (CPython with the extra: look it up now)
    except ImportError:
        raise FieldError(FIELD, f"Model id: press Look up (or Enter) to fetch {mid.text} from the Hub") from None
    try:
        found = hub.lookup(mid, kind, lambda requests: hub.fetch_with_hub(mid, requests))
    except hub.HubError as err:
        raise FieldError(FIELD, f"Model id: {err}") from None
    RECORDS[mid.text] = found
    return found


def hub_config(model_id: str):
    """The ModelConfig of a looked-up LLM id, or a FieldError on the id field that says why not (with the
    checkpoint's stored bytes when they were read: a reader whose model the reader refuses still learns them)."""
    rec = record(model_id, "llm")
    try:
        return _config(rec.config, rec.model_id.text)
    except (ValueError, TypeError) as err:
        stored = f"; its checkpoint, read from the Hub: {stored_summary(rec)}" if rec.checkpoint else ""
        raise FieldError(FIELD, f"{rec.model_id.text}: config.json: {err}{stored}") from None


@lru_cache(maxsize=8)
def _config(text: str, name: str):
    from ..models import ModelConfig

    return ModelConfig.from_text(text, name=name, what=f"config.json of {name}")


def hub_denoiser_config(model_id: str) -> tuple[str, str, str]:
    """(id text, component, config.json text) of a looked-up diffusers pipeline's denoiser: its transformer or
    unet (or, for a two-stage pipeline, its prior or decoder), or a FieldError on the id field that says why not."""
    rec = record(model_id, "pipeline")
    for component in DENOISERS:
        if component in rec.components:
            return rec.model_id.text, component, rec.components[component]
    raise FieldError(FIELD, f"{rec.model_id.text}: its model_index.json names no {' or '.join(DENOISERS[:2])} "
                            f"component (components with a config: {', '.join(sorted(rec.components)) or 'none'}): "
                            "paste its denoiser's config.json instead")


# --------------------------------------------------------------------------------------- stored bytes, in words

def stored_summary(rec: hub.Record) -> str:
    """'90,856,960 bytes (90.9 MB) in 104 tensors of 1 file (F32 90.9 MB, I64 4.1 kB)'."""
    ck = rec.checkpoint
    dtypes = ", ".join(f"{d} {nbytes(g.nbytes)}" for d, g in ck.by_dtype.items())
    files = f"{len(ck.files)} file" + ("s" if len(ck.files) != 1 else "")
    return f"{ck.stored_bytes:,} bytes ({nbytes(ck.stored_bytes)}) in {ck.tensors:,} tensors of {files} ({dtypes})"


def stored_text(rec: hub.Record | None, params: int) -> str:
    """The checkpoint's stored bytes beside parameters x format, and where they differ; for a config that did
    not come from the Hub, what to do to see them."""
    if rec is None:
        return ("type a Hugging Face model id above and press Look up to read its checkpoint's exact stored bytes "
                "from its safetensors headers")
    if rec.checkpoint is None:
        return f"not read: {rec.note}"
    ck = rec.checkpoint
    config = json.loads(rec.config)
    fmt = hub.config_format(config)
    text = stored_summary(rec)
    if fmt is None:
        return text + "; the config names no dtype to compare parameters x format with"
    name, size = fmt
    nominal = params * size
    diff = ck.stored_bytes - nominal
    text += (f"; parameters x format ({name}, {size} bytes each): {params:,} x {size} = {nominal:,} bytes, "
             + ("the same" if diff == 0 else f"{'more' if diff > 0 else 'less'} stored by {abs(diff):,} bytes "
                f"({number(100 * abs(diff) / nominal, 3)}%)"))
    reasons = [f"{hub.PART_LABELS[p]} {nbytes(g.nbytes)} ({g.tensors:,} tensors)" for p, g in ck.by_part.items()
               if p != "weights"]
    if ck.quantization:
        reasons.append(f"quantized ({ck.quantization}): the weights are stored in fewer bytes than {name}")
    weights = ck.by_part.get("weights")
    if weights is not None:
        reasons.append(f"weights {nbytes(weights.nbytes)} for {weights.elements:,} values "
                       f"({'the config counts' if weights.elements != params else 'as the config counts'} {params:,})")
    return text + ("; where they differ: " if diff else "; stored: ") + "; ".join(reasons)


def stored_numbers(rec: hub.Record | None, params: int) -> dict:
    """The numbers of `stored_text` (calculators.NUMBERS): the stored bytes, tensors and files, bytes per dtype
    and per part, and parameters x format with the difference; {} when no checkpoint was read."""
    if rec is None or rec.checkpoint is None:
        return {}
    ck = rec.checkpoint
    out = {"stored (B)": ck.stored_bytes, "stored_tensors": ck.tensors, "stored_files": len(ck.files),
           "stored_dtypes": list(ck.by_dtype), "stored_bytes_per_dtype (B)": [g.nbytes for g in ck.by_dtype.values()],
           "stored_parts": list(ck.by_part), "stored_bytes_per_part (B)": [g.nbytes for g in ck.by_part.values()],
           "stored_tensors_per_part": [g.tensors for g in ck.by_part.values()],
           "stored_values_per_part": [g.elements for g in ck.by_part.values()]}
    fmt = hub.config_format(json.loads(rec.config))
    if fmt is not None:
        name, size = fmt
        nominal = params * size
        out.update({"format": name, "format_bytes (B)": size, "parameters_times_format (B)": nominal,
                    "stored_minus_nominal (B)": ck.stored_bytes - nominal,
                    "stored_difference (%)": 100 * abs(ck.stored_bytes - nominal) / nominal})
    return out
