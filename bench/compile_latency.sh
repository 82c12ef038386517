#!/usr/bin/env bash
# How long `drtc compile --device cuda` takes to give a verified module, on a GPU machine:
# per task, cold (a fresh drtc home and Triton cache, no verification service: the first
# compile on a machine), warm (the service running and another program compiled before:
# this program's kernels still compile), again (the same program with --no-cache: an
# edit-compile loop's next step, kernels in Triton's cache) and repeated (the
# verified-module cache's answer), each with `--timings`; and torch.compile's first call of
# the same model in a fresh process with a fresh Inductor cache, in the same run.
#
#   bash bench/compile_latency.sh TASKS_DIR DRTC_BINARY [STEP] [LIMIT_S]
#
#   TASKS_DIR    a copy of ../shared/kernelbench/levelN (every STEP-th task, by number)
#   STEP         default 5
#   LIMIT_S      start no task after this many seconds (default 480)
#
# Environment: OUT (results, default /tmp/compile_latency), NAME (file prefix, default
# compile_latency), DRTC_PYTHON (default python3), MODES (default "cold warm again repeat
# torch"), DEVICE (default cuda; cpu to try the script without a GPU), TIMEOUT (seconds per
# compile, default 300). Writes $OUT/$NAME.jsonl (a row per task and mode: wall seconds, exit status,
# verified, the report's phases) and $OUT/$NAME.md (bench/compile_latency_table.py).
set -u
if [ $# -lt 2 ]; then
  sed -n '2,21p' "$0"
  exit 2
fi
TASKS=$(cd "$1" && pwd)
DRTC=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
STEP=${3:-5}
LIMIT_S=${4:-480}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/compile_latency}
NAME=${NAME:-compile_latency}
MODES=${MODES:-"cold warm again repeat torch"}
DEVICE=${DEVICE:-cuda}
TIMEOUT=${TIMEOUT:-300}
export DRTC_PYTHON=${DRTC_PYTHON:-python3} PYTHONUNBUFFERED=1
mkdir -p "$OUT"
ROWS="$OUT/$NAME.jsonl"
: >"$ROWS"
START=$(date +%s)
mapfile -t LIST < <(ls "$TASKS" | grep '\.py$' | sort -n | awk -v s="$STEP" '(NR - 1) % s == 0')
WORK=$(mktemp -d)
WARM_HOME="$WORK/warm-home"
WARM_TRITON="$WORK/warm-triton"
mkdir -p "$WARM_HOME" "$WARM_TRITON"

# row TASK MODE T0 T1 RC REPORT
row() {
  "$DRTC_PYTHON" - "$@" >>"$ROWS" <<'PY'
import json, sys
task, mode, t0, t1, rc, report = sys.argv[1:7]
wall = float(t1) - float(t0)
r = {}
try:
    r = json.load(open(report))
except Exception:
    pass
v = r.get("verification") or {}
print(json.dumps({"task": task, "mode": mode, "wall_s": float(wall), "rc": int(rc),
                  "verified": v.get("verified"), "phases": v.get("phases"),
                  "cache_hit": bool((r.get("cache") or {}).get("hit")),
                  "search": r.get("search"), "reasons": v.get("reasons")}))
PY
}

# compile TASK MODE HOME TRITON_DIR SERVICE EXTRA...
compile() {
  local task=$1 mode=$2 home=$3 triton=$4 service=$5
  shift 5
  local out="$WORK/$mode-${task%.py}"
  local t0 t1 rc
  t0=$EPOCHREALTIME
  DRTC_HOME="$home" TRITON_CACHE_DIR="$triton" DRTC_SERVICE="$service" \
    timeout "$TIMEOUT" "$DRTC" compile "$TASKS/$task" -o "$out.py" --report "$out.json" \
    --device "$DEVICE" --timings "$@" >"$out.log" 2>&1
  rc=$?
  t1=$EPOCHREALTIME
  row "$task" "$mode" "$t0" "$t1" "$rc" "$out.json"
  echo "$mode $task rc=$rc $(tail -1 "$out.log")"
}

"$DRTC_PYTHON" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu")'
echo "tasks: ${LIST[*]}"
# the warm service first compiles a program outside the list (not counted)
if [[ " $MODES " == *" warm "* ]]; then
  first=$(ls "$TASKS" | grep '\.py$' | sort -n | awk -v s="$STEP" 's > 1 && (NR - 1) % s == 1' | head -1)
  if [ -n "$first" ]; then
    compile "$first" warmup "$WARM_HOME" "$WARM_TRITON" on
  fi
fi
for task in "${LIST[@]}"; do
  if [ $(( $(date +%s) - START )) -gt "$LIMIT_S" ]; then
    echo "stopping: ${LIMIT_S} s passed"
    break
  fi
  for mode in $MODES; do
    case $mode in
      cold)
        h=$(mktemp -d) && tc=$(mktemp -d)
        compile "$task" cold "$h" "$tc" off
        rm -rf "$h" "$tc" ;;
      warm) compile "$task" warm "$WARM_HOME" "$WARM_TRITON" on ;;
      again) compile "$task" again "$WARM_HOME" "$WARM_TRITON" on --no-cache ;;
      repeat) compile "$task" repeat "$WARM_HOME" "$WARM_TRITON" on ;;
      torch)
        ic=$(mktemp -d)
        TORCHINDUCTOR_CACHE_DIR="$ic" TRITON_CACHE_DIR="$ic/triton" timeout "$TIMEOUT" \
          "$DRTC_PYTHON" "$HERE/compile_first_call.py" "$TASKS/$task" "$DEVICE" >>"$ROWS" 2>"$WORK/torch.err" \
          || echo "torch.compile failed on $task: $(tail -1 "$WORK/torch.err")"
        rm -rf "$ic" ;;
    esac
  done
done
DRTC_HOME="$WARM_HOME" "$DRTC" service stop
"$DRTC_PYTHON" "$HERE/compile_latency_table.py" "$ROWS" >"$OUT/$NAME.md"
cat "$OUT/$NAME.md"
