#!/bin/bash
# One device call: drtc's GEMM kernel against cuBLAS (bench/gemm_vs_cublas.py), then
# end-to-end compiles (verify + time) of a few GEMM tasks under each precision policy.
# Run from the root of a checkout that carries DIR (default .devcarry/gemm) holding the
# drtc binary, this folder's scripts and the KernelBench task files under DIR/kb.
#   bash DIR/gpu_gemm_call.sh DIR BENCH_BUDGET_S "E2E_TASK:POLICY[:search] ..."
set -u
DIR=${1:-.devcarry/gemm}
BUDGET=${2:-200}
E2E=${3:-}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export DRTC_PYTHON=python3 PYTHONUNBUFFERED=1 DRTC_HOME=/tmp/drtc_home
chmod +x "$DIR/drtc"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$OUT/env.txt"
python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)' | tee -a "$OUT/env.txt"
if [ "$BUDGET" != 0 ]; then
  timeout $((BUDGET + 60)) python3 "$DIR/gemm_vs_cublas.py" --drtc "$DIR/drtc" --out "$OUT/gemm.jsonl" \
    --sweep --budget-s "$BUDGET" 2>&1 | tee "$OUT/gemm.log" | grep -v "^\s*$" | tail -40
fi
for spec in $E2E; do
  IFS=: read -r task policy search <<<"$spec"
  f=$(ls "$DIR"/kb/"$task"*.py | head -1)
  extra=""; [ "$search" = search ] && extra="--search"
  echo "== $task $policy $extra"
  timeout 200 "$DIR/drtc" compile "$f" -o "/tmp/e2e_${task}_${policy}.py" --device cuda \
    --precision "$policy" $extra --report "/tmp/e2e_${task}_${policy}${search}.json" 2>&1 | tail -8
  python3 - "/tmp/e2e_${task}_${policy}${search}.json" "$task" "$policy" "$search" >>"$OUT/e2e.jsonl" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"error": str(e)}
v = r.get("verification", {})
print(json.dumps({"task": sys.argv[2], "policy": sys.argv[3], "search": sys.argv[4] == "search",
                  "verified": v.get("verified"), "summary": v.get("summary"),
                  "reasons": v.get("reasons"), "eager_ms": v.get("eager_ms"),
                  "drtc_ms": v.get("drtc_ms"), "speedup": v.get("speedup"),
                  "gemm": [x.get("gemm") for x in r.get("regions", []) if x.get("gemm")],
                  "search_log": r.get("search"), "retries": r.get("retries")}))
PY
done
