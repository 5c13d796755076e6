#!/usr/bin/env bash
# Device check for a lent GPU: one H200, no internet, with what that machine has installed:
# Python 3.12, torch 2.11 and triton 3.6 (CUDA builds). CI and the CPU machines run --dry-run
# with torch 2.13.0 (CPU build) and triton 3.9.0. Step 1 prints the versions it finds and warns,
# without failing, when a major.minor version differs from those (the expected versions can be
# overridden with EXPECT_PYTHON, EXPECT_TORCH and EXPECT_TRITON; an empty value is not checked).
#
#   bash scripts/device_check.sh            on the GPU machine, from the repository root
#   bash scripts/device_check.sh --dry-run  anywhere: CPU + Triton interpreter + toy shapes (checks this script)
#
# Steps (each under a time limit; a failing step is reported and the next one still runs):
#   1. environment: versions (warning on an unexpected one), nvidia-smi, whether numpy is importable
#   2. validate: every Triton kernel against a float64 oracle at real shapes
#      (bf16 d=128 N=8192 with GQA; decode over a 1.07 GB KV cache; window 4096 over N=16384;
#      awkward d=40/59/64 in fp16/bf16/fp32)          -> $OUT/validate.json
#   3. bench: Triton vs SDPA (every backend), decode vs copy bandwidth, window vs full causal
#                                                      -> $OUT/gpu-attention-*.json
#   4. summary: the goals (FA fwd >= 1.0x SDPA default; decode >= 0.8x copy bandwidth;
#      window >= 1.8x full causal), reported, not asserted
# Optional: DEVICE_CHECK_PYTEST=1 also runs tests/test_kernels.py on the GPU (needs pytest).
# Nothing is installed: the package is used from src/ through PYTHONPATH.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
MODE=device
if [[ "${1:-}" == "--dry-run" ]]; then
  MODE=tiny
  export TRITON_INTERPRET=1
fi
if [[ "$MODE" == device ]]; then  # the lent H200
  export EXPECT_PYTHON="${EXPECT_PYTHON-3.12}" EXPECT_TORCH="${EXPECT_TORCH-2.11}" EXPECT_TRITON="${EXPECT_TRITON-3.6}"
else  # CI and the CPU machines (any Python >= 3.11)
  export EXPECT_PYTHON="${EXPECT_PYTHON-}" EXPECT_TORCH="${EXPECT_TORCH-2.13}" EXPECT_TRITON="${EXPECT_TRITON-3.9}"
fi
OUT="${OUT:-$ROOT/device-check-out}"
mkdir -p "$OUT"
export PYTHONPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
export TRITON_DEFAULT_FP_FUSION="${TRITON_DEFAULT_FP_FUSION:-1}"  # Triton >= 3.9 warns when unset
PY="${PYTHON:-$(command -v python3 || command -v python)}"
STEP_LIMIT_VALIDATE="${STEP_LIMIT_VALIDATE:-240}"
STEP_LIMIT_BENCH="${STEP_LIMIT_BENCH:-330}"
status=0

step() {  # step NAME LIMIT_SECONDS COMMAND...: run with a time limit, log to $OUT/NAME.log
  local name="$1" limit="$2"
  shift 2
  echo "=== $name (limit ${limit}s)"
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" > >(tee "$OUT/$name.log") 2>&1
  local rc=$?
  echo "$name rc=$rc seconds=$((SECONDS - start))" | tee -a "$OUT/steps.txt"
  if [[ $rc -ne 0 ]]; then status=1; fi
}

: > "$OUT/steps.txt"
step environment 60 "$PY" - <<'EOF'
import importlib, os, platform, subprocess, sys
print("python", sys.version.split()[0], platform.platform())
found = {"python": platform.python_version()}
for name in ("torch", "triton", "numpy"):
    try:
        module = importlib.import_module(name)
        found[name] = str(getattr(module, "__version__", "?"))
        print(name, found[name])
    except Exception as err:
        print(name, "not importable:", err)
for name in ("python", "torch", "triton"):  # a different version is reported, not fatal
    want = os.environ.get(f"EXPECT_{name.upper()}", "")
    have = found.get(name)
    if want and have and ".".join(have.split("+")[0].split(".")[:2]) != want:
        print(f"WARNING: {name} {have} found; this check was prepared for {name} {want}.x here. Continuing.")
import torch
print("cuda available", torch.cuda.is_available(), "torch.version.cuda", torch.version.cuda)
if torch.cuda.is_available():
    print("device", torch.cuda.get_device_name(0), "capability", torch.cuda.get_device_capability(0),
          "SMs", torch.cuda.get_device_properties(0).multi_processor_count)
print("TRITON_INTERPRET", os.environ.get("TRITON_INTERPRET"))
try:
    print(subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=20).stdout)
except Exception as err:
    print("nvidia-smi unavailable:", err)
EOF

step validate "$STEP_LIMIT_VALIDATE" "$PY" -m chapter2.host.kernels.validate --size "$MODE" --json "$OUT/validate.json"
step bench "$STEP_LIMIT_BENCH" "$PY" -m chapter2.host.bench gpu --size "$MODE" --out "$OUT"
step summary 60 "$PY" -m chapter2.host.bench summary "$OUT"

if [[ "${DEVICE_CHECK_PYTEST:-0}" == "1" ]]; then
  if [[ "$MODE" == device ]]; then export TRITON_INTERPRET=0; fi
  step pytest 300 "$PY" -m pytest -q -x tests/test_kernels.py -k "not compile_for_hopper"
fi

echo "=== done: results in $OUT (status $status)"
cat "$OUT/steps.txt"
exit $status
