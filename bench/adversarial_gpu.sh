#!/usr/bin/env bash
# The verifier's isolation on a GPU machine: what an untrusted answer's own sandboxed process
# costs there (bench/isolation_cost.py), the adversarial corpus verified on the GPU
# (tests/adversarial.rs with DRTC_ADVERSARIAL_DEVICE=cuda: hostile answers, honest ones,
# sandbox probes, persisting answers, drtc killed mid-verification, the GPU-only timing
# cheats through bench-pair), and the sandbox report of one verification.
#
#   OUT=results bash bench/adversarial_gpu.sh DRTC_BIN ADVERSARIAL_TEST_BIN
#
# DRTC_BIN is a drtc binary, ADVERSARIAL_TEST_BIN the compiled tests/adversarial.rs
# (target/debug/deps/adversarial-*); both built on the development machine. Uses the
# machine's own Python (DRTC_PYTHON, default python3). Writes under $OUT:
# isolation_cost_cuda.{json,txt}, adversarial_cuda.txt, sandbox_cuda.txt.
set -uo pipefail
DRTC=$(realpath "$1")
ADV=$(realpath "$2")
OUT=${OUT:-results}
mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export DRTC_PYTHON=${DRTC_PYTHON:-python3} PYTHONUNBUFFERED=1
export DRTC_HOME=${DRTC_HOME:-/tmp/drtc_home_adv}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/sandbox_cuda.txt"
"$DRTC_PYTHON" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' \
    | tee -a "$OUT/sandbox_cuda.txt"

echo "== one verification's sandbox report" | tee -a "$OUT/sandbox_cuda.txt"
timeout 300 "$DRTC" verify "$ROOT/tests/data/verifier/seed_relu_add.py" \
    "$ROOT/tests/data/verifier/ok_relu_add.py" --device cuda --json \
    | "$DRTC_PYTHON" -c 'import json,sys; r=json.load(sys.stdin); print("verified", r["verified"]); print(json.dumps(r.get("isolation"), indent=1))' \
    2>&1 | tee -a "$OUT/sandbox_cuda.txt"

echo "== isolation cost"
timeout 240 "$DRTC_PYTHON" "$ROOT/bench/isolation_cost.py" --device cuda --n 20 \
    --json "$OUT/isolation_cost_cuda.json" 2>&1 | tee "$OUT/isolation_cost_cuda.txt"

echo "== adversarial corpus on cuda"
DRTC_ADVERSARIAL_DEVICE=cuda DRTC_ADVERSARIAL_CORPUS="$ROOT/tests/adversarial" \
    DRTC_ADVERSARIAL_BIN="$DRTC" DRTC_ADVERSARIAL_JOBS=${JOBS:-6} \
    timeout "${ADV_TIMEOUT:-420}" "$ADV" --nocapture --test-threads 5 2>&1 \
    | tee "$OUT/adversarial_cuda.txt"
