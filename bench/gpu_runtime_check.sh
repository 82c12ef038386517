#!/usr/bin/env bash
# GPU checks of drtc's runtime, for a machine with a CUDA GPU and no cargo.
#
#   Build here:  cargo build --release
#   Run there, from the repository root (with target/release/drtc carried along):
#       bash bench/gpu_runtime_check.sh
#   Environment: DRTC (binary, default target/release/drtc), DRTC_PYTHON (default python3:
#   the machine's own Python with torch and Triton), OUT (where outputs go; default
#   bench/out), KB (KernelBench root; default ../shared/kernelbench or
#   shared/kernelbench when ../shared is absent).
#
# It runs: `drtc devices`; the verifier's GPU suite (correct candidates must verify, each
# broken one must fail with the named check; each `drtc verify` is its own process, so
# worker restarts are covered by the pool tests and bench/gpu_worker_drive.py); a
# KernelBench level-2 pair verified and timed twice (with torch.compile as a second baseline). PART=suite or PART=l2 runs one
# half only (each fits in 10 minutes). Everything printed is also
# written under $OUT; the last line says how many expectations held.
set -u
cd "$(dirname "$0")/.."
DRTC=${DRTC:-target/release/drtc}
export DRTC_PYTHON=${DRTC_PYTHON:-python3}
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
export DRTC_HOME=${DRTC_HOME:-${TMPDIR:-/tmp}/drtc-gpu-check}
D=tests/data/verifier
if [ -z "${KB:-}" ]; then
  if [ -d ../shared/kernelbench ]; then KB=../shared/kernelbench; else KB=shared/kernelbench; fi
fi
LOG="$OUT/gpu_runtime_check.log"
: > "$LOG"
pass=0
fail=0

say() { echo "$@" | tee -a "$LOG"; }

# expect NAME WANT(ok|CHECK) -- drtc args...
expect() {
  local name=$1 want=$2
  shift 3
  local t0=$(date +%s.%N)
  "$DRTC" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  local dt=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  say "== $name: drtc $* (expect $want; rc=$rc; ${dt}s)"
  sed 's/^/   /' "$OUT/$name.txt" | tee -a "$LOG" > /dev/null
  sed 's/^/   /' "$OUT/$name.txt"
  if [ "$want" = ok ]; then
    if [ $rc -eq 0 ]; then pass=$((pass+1)); say "   -> as expected"; else fail=$((fail+1)); say "   -> UNEXPECTED"; fi
  else
    if [ $rc -ne 0 ] && grep -q "^  $want: " "$OUT/$name.txt"; then
      pass=$((pass+1)); say "   -> as expected"
    else
      fail=$((fail+1)); say "   -> UNEXPECTED"
    fi
  fi
}

say "== drtc devices"
"$DRTC" devices 2>&1 | tee -a "$LOG"
ps -eo pid= | wc -l > "$OUT/procs_before.txt"

S=$D/seed_relu_add.py
V="verify --device cuda"
PART=${PART:-all}   # all | suite | l2
if [ "$PART" != l2 ]; then
expect ok_relu_add ok -- $V $S $D/ok_relu_add.py
expect ok_reordered ok -- $V $S $D/ok_reordered.py
expect gpu_ok_side_stream ok -- $V $S $D/gpu_ok_side_stream.py
expect kb_ok ok -- $V $D/kb_linear_bn.py $D/kb_ok.py
expect bad_values values -- $V $S $D/bad_values.py
expect bad_tolerance values -- $V $S $D/bad_tolerance.py
expect bad_dtype dtype -- $V $S $D/bad_dtype.py
expect bad_shape shape -- $V $S $D/bad_shape.py
expect bad_nan nan_inf -- $V $S $D/bad_nan.py
expect bad_inf nan_inf -- $V $S $D/bad_inf.py
expect bad_half_written nan_inf -- $V $S $D/bad_half_written.py
expect bad_empty nan_inf -- $V $S $D/bad_empty.py
expect bad_return_input alias -- $V $D/seed_copy.py $D/bad_return_input.py
expect bad_mutate inputs_modified -- $V $S $D/bad_mutate.py
expect bad_pointer_cache values -- $V $S $D/bad_pointer_cache.py
expect bad_replay values -- $V $S $D/bad_replay.py
expect bad_hang timeout -- $V --timeout 20 $S $D/bad_hang.py
expect bad_abort worker_died -- $V $S $D/bad_abort.py
expect bad_tamper tampering -- $V $S $D/bad_tamper.py
expect kb_bad_state state -- $V $D/kb_linear_bn.py $D/kb_bad_state.py
expect strict_torch_only strict -- $V --strict $S $D/ok_torch_only.py
expect gpu_bad_oob gpu_fault -- $V $S $D/gpu_bad_oob.py
expect gpu_bad_side_stream side_stream -- $V $S $D/gpu_bad_side_stream.py
"$DRTC" $V --json $S $D/bad_values.py > "$OUT/bad_values.json" 2>&1
fi

# The KernelBench level-2 pair, end to end: verify, then time twice.
if [ "$PART" != suite ]; then
REF=$KB/level2/63_Gemm_ReLU_Divide.py
[ -f "$REF" ] || { echo "KernelBench not found at $KB: set KB" >&2; exit 2; }
CAND=$D/level2_63_gemm_relu_divide_new.py
expect l2_verify ok -- $V $REF $CAND
expect l2_bench_1 ok -- bench-pair --compile-baseline $REF $CAND
expect l2_bench_2 ok -- bench-pair --compile-baseline $REF $CAND
"$DRTC" bench-pair --json $REF $CAND > "$OUT/l2_bench_3.json" 2>&1
say "== spread of the two timed runs (medians, ms)"
python3 - "$OUT" <<'PY' | tee -a "$LOG"
import re, sys
out = sys.argv[1]
rows = {}
for run in (1, 2):
    for line in open(f"{out}/l2_bench_{run}.txt"):
        m = re.match(r"(reference|candidate|compiled)\s+median\s+([0-9.]+) ms", line)
        if m:
            rows.setdefault(m.group(1), []).append(float(m.group(2)))
for name, v in rows.items():
    if len(v) == 2:
        spread = abs(v[0] - v[1]) / min(v) * 100
        print(f"{name:<10} run1 {v[0]:.4f}  run2 {v[1]:.4f}  spread {spread:.2f}%")
PY
fi
sleep 1
ps -eo pid= | wc -l > "$OUT/procs_after.txt"
say "processes on the machine before: $(cat $OUT/procs_before.txt), after: $(cat $OUT/procs_after.txt)"
say "== $pass expectations held, $fail did not"
[ $fail -eq 0 ]
