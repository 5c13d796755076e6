"""Train the tiny language model shipped in src/chapter2/data/tiny_lm/ (CPU, seeded, a few minutes).

    python scripts/train_tiny_lm.py                      # the shipped run (writes src/chapter2/data/tiny_lm/)
    python scripts/train_tiny_lm.py --steps 20 --out /tmp/tiny_lm   # a quick trial

Pipeline:

1. Corpus: this site's own pages (docs/**/*.md with code blocks, directives
   and markup removed, `{{ py: }}` expressions replaced by their values) and
   the docstrings of the `chapter2` package (modules, classes, functions).
   One paragraph or docstring in ten (at least 80 characters long) is held
   out for evaluation.
2. Tokenizer: `chapter2.tokenizer.train_bpe` on the training documents.
3. Model: a decoder-only transformer with transformers' LlamaForCausalLM
   (hidden 128, 4 layers, 4 query heads and 2 KV heads, SwiGLU width 352,
   context 128, tied embeddings), trained with AdamW on random 128-token
   windows of the token stream (documents joined by <|endoftext|>).
4. Output: config.json + model.safetensors (float16), tokenizer.json,
   tokenizer_config.json, corpus.txt and heldout.txt (the exact training and
   evaluation text) and PROVENANCE.md (command, seed, data hashes, losses,
   versions), so the tests can re-derive the tokenizer and check the model.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import hashlib
import json
import math
import platform
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from chapter2.models import TINY_LM_DIR  # noqa: E402
from chapter2.tokenizer import DEFAULT_SPECIAL_TOKENS, BPETokenizer, train_bpe  # noqa: E402

DOC_SEPARATOR = "\n<|endoftext|>\n"  # between documents in corpus.txt (the token that ends each document)
EOT = "<|endoftext|>"


# -----------------------------------------------------------------------------
# corpus


def strip_markdown(text: str) -> str:
    """Prose of a page: no front matter, code blocks, HTML, directives, `{{ py: }}` or table rows."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # front matter
    text = re.sub(r"^(```|~~~).*?^\1[ \t]*$", "", text, flags=re.S | re.M)  # fenced code
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)  # comments and directives
    text = re.sub(r"\{\{.*?\}\}", "", text, flags=re.S)  # build-time expressions left over
    text = re.sub(r"<[^>\n]+>", "", text)  # HTML tags
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images -> their text
    text = re.sub(r"^\s*\|.*\|\s*$", "", text, flags=re.M)  # table rows
    text = re.sub(r"^(#+|!!!|\?\?\?\+?)\s*", "", text, flags=re.M)  # heading and admonition markers
    text = re.sub(r"^--8<--.*$", "", text, flags=re.M)  # snippet includes
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def docstrings(path: Path) -> list[str]:
    """Docstrings of a module and of its classes and functions, in source order."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
    nodes.sort(key=lambda n: getattr(n, "lineno", 0))
    return [d for n in nodes if (d := ast.get_docstring(n))]


def inline_values(text: str) -> str:
    """Replace each `{{ py: EXPR }}` by its value, as the site build does (by nothing if it fails)."""
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from directives import INLINE_PY, namespace
        ns = namespace()
    except Exception:  # the hook cannot load: drop the expressions
        return re.sub(r"\{\{.*?\}\}", "", text, flags=re.S)

    def value(match):
        try:
            return str(eval(match.group(1), dict(ns)))  # noqa: S307 - the project's own pages
        except Exception:
            return ""

    return INLINE_PY.sub(value, text)


def build_corpus(root: Path) -> tuple[list[str], list[str], list[Path]]:
    """(training documents, held-out paragraphs, source files).

    Every 10th paragraph of the pages and every 10th docstring (counting from
    the 8th, at least 80 characters long) is held out for evaluation.
    """
    pages = sorted((root / "docs").rglob("*.md"))
    modules = sorted(p for p in (root / "src" / "chapter2").rglob("*.py") if "__pycache__" not in p.parts)
    train, held_out = [], []
    k = 0

    def hold_out(text: str) -> bool:
        nonlocal k
        k += 1
        if (k - 1) % 10 == 7 and len(text) >= 80:
            held_out.append(" ".join(text.split()))
            return True
        return False

    for page in pages:
        prose = strip_markdown(inline_values(page.read_text(encoding="utf-8")))
        kept = [p.strip() for p in prose.split("\n\n") if p.strip() and not hold_out(p.strip())]
        if kept:
            train.append("\n\n".join(kept))
    for module in modules:
        # a docstring that writes the separator itself would break the corpus file format
        train.extend(d for d in docstrings(module) if EOT not in d and not hold_out(d))
    return train, held_out, pages + modules


def read_corpus(path) -> list[str]:
    """The training documents stored in corpus.txt (the inverse of how `train` writes it)."""
    text = Path(path).read_text(encoding="utf-8")
    return text.removesuffix("\n").split(DOC_SEPARATOR)


# -----------------------------------------------------------------------------
# training


def train(args) -> None:
    import numpy as np
    import torch
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    t_start = time.time()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    docs, held_out, sources = build_corpus(ROOT)
    corpus_text = DOC_SEPARATOR.join(docs) + "\n"
    heldout_text = "\n".join(held_out) + "\n"
    (out / "corpus.txt").write_text(corpus_text, encoding="utf-8")
    (out / "heldout.txt").write_text(heldout_text, encoding="utf-8")
    assert read_corpus(out / "corpus.txt") == docs, "corpus.txt does not read back as the documents"

    data = train_bpe(docs, args.vocab_size, special_tokens=DEFAULT_SPECIAL_TOKENS, path=out / "tokenizer.json")
    tok = BPETokenizer.from_json(data)
    eot = tok.special_tokens[EOT]
    stream = []
    for d in docs:
        stream += tok.encode(d) + [eot]
    stream = torch.tensor(stream, dtype=torch.long)
    print(f"corpus: {len(docs)} documents, {len(corpus_text):,} characters, {len(stream):,} tokens; "
          f"vocab {tok.vocab_size}; held out {len(held_out)} paragraphs", flush=True)

    config = LlamaConfig(
        vocab_size=tok.vocab_size, hidden_size=128, intermediate_size=352, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=args.context,
        rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True, hidden_act="silu",
        attention_bias=False, mlp_bias=False, bos_token_id=eot, eos_token_id=eot, pad_token_id=eot,
    )
    model = LlamaForCausalLM(config)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params:,} parameters", flush=True)

    decay = [p for n, p in model.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))

    def lr_at(step):  # linear warm-up, then cosine decay to 10 %
        warm = max(1, args.steps // 20)
        if step < warm:
            return args.lr * (step + 1) / warm
        frac = (step - warm) / max(1, args.steps - warm)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

    window = args.context + 1
    model.train()
    losses = []
    for step in range(args.steps):
        starts = rng.integers(0, len(stream) - window, size=args.batch)
        batch = torch.stack([stream[s:s + window] for s in starts])  # (B, context + 1)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        loss = model(input_ids=batch[:, :-1], labels=batch[:, :-1].clone(), use_cache=False).loss
        # transformers shifts labels inside the loss: position t predicts token t + 1
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 100 == 0 or step == args.steps - 1:
            model.eval()
            held = heldout_mean_loss(model, tok, held_out, args.context)
            model.train()
            print(f"step {step:5d}  loss {loss.item():.3f}  held-out {held:.3f}  lr {lr_at(step):.2e}  "
                  f"{time.time() - t_start:6.1f} s", flush=True)
        if time.time() - t_start > args.max_seconds:
            print(f"stopping at step {step}: time limit {args.max_seconds} s", flush=True)
            break
    steps_done = len(losses)

    model = model.to(torch.float16).eval()
    model.save_pretrained(out, safe_serialization=True)
    (out / "model.safetensors").chmod(0o644)  # save_pretrained writes it owner-only
    (out / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": EOT, "bos_token": EOT, "pad_token": EOT,
        "model_max_length": args.context, "clean_up_tokenization_spaces": False,
    }, indent=1) + "\n")

    reloaded = LlamaForCausalLM.from_pretrained(out, dtype=torch.float32).eval()
    train_loss = sum(losses[-20:]) / len(losses[-20:])
    heldout_loss = heldout_mean_loss(reloaded, tok, held_out, args.context)
    elapsed = time.time() - t_start
    print(f"done: {steps_done} steps in {elapsed:.0f} s; train loss (mean of last 20) {train_loss:.3f}; "
          f"held-out loss (float16 weights) {heldout_loss:.3f}; uniform log(V) = {math.log(tok.vocab_size):.3f}")

    write_provenance(out, args, sources, corpus_text, heldout_text, tok, n_params, steps_done, train_loss,
                     heldout_loss, elapsed, torch.__version__, transformers.__version__, np.__version__)


def heldout_mean_loss(model, tok, held_out, context) -> float:
    import torch

    total, count = 0.0, 0
    with torch.no_grad():
        for para in held_out:
            ids = torch.tensor([tok.encode(para)[:context]])
            if ids.shape[1] < 2:
                continue
            loss = model(input_ids=ids, labels=ids).loss.item()
            total += loss * (ids.shape[1] - 1)
            count += ids.shape[1] - 1
    return total / count


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_provenance(out, args, sources, corpus_text, heldout_text, tok, n_params, steps, train_loss, heldout_loss,
                     elapsed, torch_version, transformers_version, numpy_version) -> None:
    import tokenizers

    files = "\n".join(f"| `{p.relative_to(ROOT).as_posix()}` | `{sha256(p.read_bytes())}` |" for p in sources)
    sizes = "\n".join(f"| `{p.name}` | {p.stat().st_size:,} |" for p in sorted(out.iterdir()) if p.name != "PROVENANCE.md")
    command = "python scripts/train_tiny_lm.py " + " ".join(sys.argv[1:])
    text = f"""# tiny_lm: provenance

A tiny decoder-only language model (LlamaForCausalLM, {n_params:,} parameters) trained
on this project's own text, for demonstrations of prefill, decode and sampling.
Generated by `scripts/train_tiny_lm.py`; do not edit these files by hand, rerun the script.

| item | value |
|---|---|
| command | `{command.strip()}` |
| date (UTC) | {datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")} |
| seed | {args.seed} |
| CPU threads | {args.threads} |
| steps | {steps} (batch {args.batch} x {args.context} tokens, AdamW lr {args.lr}, warm-up then cosine to 10 %) |
| training time | {elapsed:.0f} s on {platform.machine()} CPU |
| vocabulary | {tok.vocab_size} (byte-level BPE, `chapter2.tokenizer.train_bpe`, vocab_size={args.vocab_size}) |
| final training loss (mean of last 20 steps) | {train_loss:.4f} |
| held-out loss (float16 weights, heldout.txt) | {heldout_loss:.4f} |
| uniform loss log(vocab) | {math.log(tok.vocab_size):.4f} |
| corpus.txt sha256 | `{sha256(corpus_text.encode("utf-8"))}` |
| heldout.txt sha256 | `{sha256(heldout_text.encode("utf-8"))}` |
| python | {platform.python_version()} |
| torch | {torch_version} |
| transformers | {transformers_version} |
| tokenizers | {tokenizers.__version__} |
| numpy | {numpy_version} |

The training text (corpus.txt: documents separated by `<|endoftext|>` lines) was
extracted from these files at training time:

| source file | sha256 |
|---|---|
{files}

Files written:

| file | bytes |
|---|---|
{sizes}
"""
    (out / "PROVENANCE.md").write_text(text, encoding="utf-8")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(TINY_LM_DIR))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--vocab-size", type=int, default=1024)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1: steady on a shared machine)")
    p.add_argument("--max-seconds", type=float, default=math.inf,
                   help="stop early past this wall time (for trials; the result then depends on machine speed)")
    train(p.parse_args(argv))


if __name__ == "__main__":
    main()
