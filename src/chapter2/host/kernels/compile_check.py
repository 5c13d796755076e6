"""Compile the kernels for a GPU without having one: `python -m chapter2.host.kernels.compile_check`.

Triton lowers a kernel to PTX and runs ptxas (shipped in the triton wheel)
without a driver, so a CPU-only machine can check that every variant
compiles for Hopper (sm_90, H100/H200) and report what the compiler made of
it: shared memory per program (it must fit the 227 KiB a Hopper block may
use, NVIDIA Hopper tuning guide,
https://docs.nvidia.com/cuda/hopper-tuning-guide/index.html#unified-shared-memory-l1-texture-cache),
whether tl.dot became Hopper tensor-core instructions (warp_group_dot, i.e.
wgmma), whether the loads of the key loop are software pipelined (async
copies), and registers per thread and bytes spilled to local memory (from
`ptxas -v`, run on the PTX with the ptxas Triton itself uses). The interpreter
checks numerics; this checks the GPU path compiles, and compiles well.

Runs only without TRITON_INTERPRET (interpreted kernels cannot be compiled).
Arguments are specialized as the launcher would for aligned tensors (pointers
and strides divisible by 16).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HOPPER_SHARED_LIMIT = 227 * 1024  # bytes of shared memory one block may opt into on sm_90 (guide above)

_POINTER_DTYPES = {"bf16": "*bf16", "fp16": "*fp16", "fp32": "*fp32"}


def _signature(fn, constexprs: dict, pointers: dict, floats=()):
    """Signature and alignment attributes for `triton.compile`, like the runtime specialization."""
    signature, attrs = {}, {}
    for i, name in enumerate(fn.arg_names):
        if name in constexprs:
            signature[name] = "constexpr"
        elif name in pointers:
            signature[name] = pointers[name]
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif name in floats:
            signature[name] = "fp32"
        else:
            signature[name] = "i32"
            if name.startswith("stride"):
                attrs[(i,)] = [["tt.divisibility", 16]]
    return signature, attrs


def _compile(fn, constexprs, pointers, floats, num_warps, num_stages, arch):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    signature, attrs = _signature(fn, constexprs, pointers, floats)
    start = time.perf_counter()
    kernel = triton.compile(ASTSource(fn, signature, constexprs=constexprs, attrs=attrs),
                            target=GPUTarget("cuda", arch, 32),
                            options={"num_warps": num_warps, "num_stages": num_stages})
    ttgir = kernel.asm["ttgir"]
    shared = int(kernel.metadata.shared)
    return {**_ptxas_usage(kernel.asm["ptx"], arch),
        "seconds": round(time.perf_counter() - start, 2),
        "shared_bytes": shared,
        "fits_shared": shared <= HOPPER_SHARED_LIMIT,
        "wgmma": "warp_group_dot" in ttgir,
        "pipelined": "async_copy_global_to_local" in ttgir or "async_tma_copy" in ttgir,
        "ptx_lines": len(kernel.asm["ptx"].splitlines()),
        "cubin_bytes": len(kernel.asm["cubin"]),
    }


def _ptxas_usage(ptx: str, arch: int) -> dict:
    """Registers per thread and spilled bytes reported by `ptxas -v` (None if ptxas cannot be run)."""
    try:
        from triton.backends.nvidia.compiler import get_ptxas

        ptxas = get_ptxas(arch).path
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "kernel.ptx")
            with open(src, "w", encoding="utf-8") as fh:
                fh.write(ptx)
            suffix = "a" if arch >= 90 else ""
            log = subprocess.run([ptxas, "-v", f"--gpu-name=sm_{arch}{suffix}", src, "-o", os.path.join(tmp, "k.cubin")],
                                 capture_output=True, text=True, timeout=120).stderr
    except Exception:  # noqa: BLE001 - informative only
        return {"registers": None, "spill_bytes": None}
    registers = re.search(r"Used (\d+) registers", log)
    spills = re.search(r"(\d+) bytes spill stores", log)
    return {"registers": int(registers.group(1)) if registers else None,
            "spill_bytes": int(spills.group(1)) if spills else None}


def flash_fwd_variant(*, dtype="bf16", head_dim=128, group=4, mode="causal", block_m=128, block_n=64,
                      num_warps=8, num_stages=3, arch=90):
    """Compile one `flash_fwd._attn_fwd` variant; mode is 'full', 'causal' or 'window'."""
    from . import flash_fwd
    from ._common import padded_head_dim

    d_pad = padded_head_dim(head_dim)
    constexprs = dict(GROUP=group, HEAD_DIM=head_dim, D_PAD=d_pad, EVEN_D=head_dim == d_pad, BLOCK_M=block_m,
                      BLOCK_N=block_n, CAUSAL=mode != "full", HAS_WINDOW=mode == "window", UPCAST=False,
                      DOT_PRECISION="ieee" if dtype == "fp32" else "tf32", TRACE=False)
    ptr = _POINTER_DTYPES[dtype]
    pointers = {"Q": ptr, "K": ptr, "V": ptr, "Out": ptr, "Steps": "*i32"}
    report = _compile(flash_fwd._attn_fwd, constexprs, pointers, ("qk_scale",), num_warps, num_stages, arch)
    return {"kernel": "flash_fwd", "dtype": dtype, "head_dim": head_dim, "group": group, "mode": mode,
            "block_m": block_m, "block_n": block_n, "num_warps": num_warps, "num_stages": num_stages, **report}


def flash_decode_variant(*, dtype="bf16", head_dim=128, group=4, window=False, block_n=64, num_warps=4,
                         num_stages=3, arch=90):
    """Compile `flash_decode._decode_split` (and the merge kernel) for one variant."""
    import triton

    from . import flash_decode
    from ._common import padded_head_dim

    d_pad = padded_head_dim(head_dim)
    constexprs = dict(GROUP=group, GROUP_PAD=max(16, triton.next_power_of_2(group)), HEAD_DIM=head_dim,
                      D_PAD=d_pad, BLOCK_N=block_n, HAS_WINDOW=window, UPCAST=False,
                      DOT_PRECISION="ieee" if dtype == "fp32" else "tf32")
    ptr = _POINTER_DTYPES[dtype]
    pointers = {"Q": ptr, "K": ptr, "V": ptr, "Seqlens": "*i32", "M_part": "*fp32", "L_part": "*fp32",
                "Acc_part": "*fp32"}
    report = _compile(flash_decode._decode_split, constexprs, pointers, ("qk_scale",), num_warps, num_stages, arch)
    merge = _compile(flash_decode._decode_reduce, dict(HEAD_DIM=head_dim, D_PAD=d_pad, SPLITS_PAD=64),
                     {"M_part": "*fp32", "L_part": "*fp32", "Acc_part": "*fp32", "Out": ptr}, (), 4, 1, arch)
    return {"kernel": "flash_decode", "dtype": dtype, "head_dim": head_dim, "group": group, "window": window,
            "block_n": block_n, "num_warps": num_warps, "num_stages": num_stages, **report,
            "merge_compiles": merge["cubin_bytes"] > 0}


def all_variants(arch: int = 90, quick: bool = False) -> list[dict]:
    """Every autotuning config of both kernels at d = 128 (bf16), plus awkward head dims."""
    from . import flash_decode, flash_fwd

    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        raise RuntimeError("unset TRITON_INTERPRET: interpreted kernels cannot be compiled for a GPU")
    results = []
    fwd_configs = flash_fwd.GPU_CONFIGS[:1] if quick else flash_fwd.GPU_CONFIGS
    for config in fwd_configs:
        for mode in (("window",) if quick else ("full", "causal", "window")):
            results.append(flash_fwd_variant(mode=mode, block_m=config.kwargs["BLOCK_M"], block_n=config.kwargs["BLOCK_N"],
                                             num_warps=config.num_warps, num_stages=config.num_stages, arch=arch))
    if not quick:
        for head_dim, dtype in ((40, "fp16"), (59, "bf16"), (64, "fp32")):
            results.append(flash_fwd_variant(dtype=dtype, head_dim=head_dim, group=1, block_m=64, block_n=64,
                                             num_warps=4, num_stages=2, arch=arch))
    dec_configs = flash_decode.GPU_CONFIGS[:1] if quick else flash_decode.GPU_CONFIGS
    for config in dec_configs:
        results.append(flash_decode_variant(block_n=config.kwargs["BLOCK_N"], num_warps=config.num_warps,
                                            num_stages=config.num_stages, window=quick, arch=arch))
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", type=int, default=90, help="compute capability x10 (90 = Hopper H100/H200)")
    parser.add_argument("--quick", action="store_true", help="one config per kernel")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 warns when unset
    results = all_variants(args.arch, args.quick)
    for r in results:
        tiles = (f"{r['mode']:<6} {r['block_m']}x{r['block_n']}" if r["kernel"] == "flash_fwd"
                 else f"window={r['window']!s:<5} n={r['block_n']}")
        shape = f"{r['kernel']:<12} {r['dtype']:>4} d={r['head_dim']:<3} " + tiles
        print(f"{shape:<44} warps={r['num_warps']} stages={r['num_stages']} shared={r['shared_bytes'] / 1024:6.1f} KiB "
              f"regs={r['registers']} spill={r['spill_bytes']} B wgmma={r['wgmma']} pipelined={r['pipelined']} ({r['seconds']} s)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    bad = [r for r in results if not r["fits_shared"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
