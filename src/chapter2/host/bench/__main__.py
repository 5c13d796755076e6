"""Command line: `python -m chapter2.host.bench {cpu,gpu,summary} [options]` (see chapter2.host.bench)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from . import DEFAULT_OUT


def _summary(directory: str) -> int:
    """Print the goals from the newest gpu-attention JSON in `directory`."""
    files = sorted(Path(directory).glob("gpu-attention-*.json"), key=lambda p: p.stat().st_mtime)
    if not files:
        print(f"no gpu-attention-*.json in {directory}")
        return 1
    doc = json.loads(files[-1].read_text(encoding="utf-8"))
    device = doc["provenance"]["device"].get("name")
    print(f"{files[-1].name}: {device}, commit {doc['provenance']['git'].get('commit')}")
    summary = doc["summary"]
    goals = summary.get("goals", {})
    lines = {
        "attention_vs_sdpa_default": ("FlashAttention forward, SDPA default time / Triton time", "min"),
        "decode_vs_copy_bandwidth": ("decode GB/s / device copy GB/s", "min"),
        "window_speedup": ("sliding window speedup over full causal", "min"),
    }
    for key, (text, stat) in lines.items():
        if key not in summary:
            print(f"  {text}: not measured")
            continue
        value = summary[key][stat]
        verdict = "meets" if summary[key]["met"] else "misses"
        print(f"  {text}: {value:.2f} ({verdict} the goal >= {goals.get(key)})")
        for case, per in summary[key]["per_case"].items():
            print(f"      {case}: {per}")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chapter2.host.bench", description="Benchmarks of section 2.5.")
    sub = parser.add_subparsers(dest="suite", required=True)
    cpu = sub.add_parser("cpu", help="numpy: tiled FlashAttention vs naive attention vs matmul rate")
    cpu.add_argument("--quick", action="store_true", help="toy shapes (seconds)")
    cpu.add_argument("--n", type=int, nargs="*", help="sequence lengths (default 512 1024 2048)")
    cpu.add_argument("--out", default=DEFAULT_OUT, help=f"results folder (default {DEFAULT_OUT}/)")
    gpu = sub.add_parser("gpu", help="torch + triton: attention vs SDPA, decode vs copy bandwidth, sliding window")
    gpu.add_argument("--size", default="device", choices=("device", "tiny"))
    gpu.add_argument("--parts", nargs="*", default=["attention", "decode", "window"],
                     choices=["attention", "decode", "window"])
    gpu.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    gpu.add_argument("--out", default=DEFAULT_OUT)
    summary = sub.add_parser("summary", help="print the goals from the newest GPU result in a folder")
    summary.add_argument("directory", nargs="?", default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    if args.suite == "cpu":
        from . import cpu as suite

        shapes = [(1, 4, n, 64) for n in args.n] if args.n else None
        path = suite.run(args.out, quick=args.quick, shapes=shapes)
    elif args.suite == "gpu":
        from . import gpu as suite

        path = suite.run(args.out, size=args.size, parts=tuple(args.parts), dtype=args.dtype)
    else:
        return _summary(args.directory)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
