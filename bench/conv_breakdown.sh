#!/usr/bin/env bash
# Issue 10 on a GPU machine: for each level-2 convolution task, where the time goes
# (library convolution vs Triton epilogue vs layout copies vs launch gaps), drtc against
# torch.compile (default mode), everyone at PyTorch's defaults (cuDNN in TF32).
#
#   bash bench/conv_breakdown.sh DRTC_BINARY TASKS_DIR
#
#   DRTC_BINARY  a drtc build (release or debug: the compile step is milliseconds)
#   TASKS_DIR    a copy of ../shared/kernelbench/level2
#
# 1. generates the modules: `drtc compile TASK --device $DEVICE -o M/NAME.py --report
#    M/NAME.report.json` for each task whose file name contains FILTER (default Conv),
#    COMPILE_JOBS at once (default JOBS), each under `timeout COMPILE_TIMEOUT` (default 120);
#    a task that fails to compile or verify gets no module (its log M/NAME.log says why) and
#    a `no_module` row; modules already there are kept (delete M to regenerate);
# 2. runs bench/conv_breakdown.py over them: one process per task, JOBS at once (load,
#    build, torch.compile), the measuring phase one task at a time (an exclusive lock).
#
# Writes under OUT (default bench/out), NAME (default conv_breakdown_h200):
#   ${NAME}.jsonl         one row per task, appended as each finishes
#   ${NAME}.md            the table (rewritten after every row)
#   ${NAME}_modules/      the generated modules, compile reports and logs
#   ${NAME}_logs/         each measuring process's stderr
# A call starts no task process after STOP_AFTER seconds from its start (default 360; those
# in flight finish within TASK_TIMEOUT, default 180: under 10 minutes in all) and exits 3
# with tasks left: run the same command again and it resumes (rows with status ok stay).
# Expected on one H200 with 16 cores: ~1 min of drtc compiles, then ~3-4 min (33 tasks;
# each process ~5 s of imports, 20-40 s of torch.compile, ~3-5 s of exclusive measuring).
# Environment: DRTC_PYTHON (default python3: the machine's own Python with torch and
# Triton), DEVICE (cuda; cpu for a plumbing check with SHRINK=1), SHRINK=1 (drtc compile
# --shrink: small constants, the reference runs with the same ones), JOBS (default 8),
# TASK_TIMEOUT (per task process), COMPILE_ARGS (more `drtc compile`
# arguments, e.g. "--layout nchw"), ARGS (more conv_breakdown.py run arguments, e.g.
# "--iters 30", "--dry-run", "--limit 2"), DRTC_HOME (default $TMPDIR/drtc-conv-breakdown).
set -u
if [ $# -lt 2 ]; then
  sed -n '2,34p' "$0"
  exit 2
fi
DRTC=$1
TASKS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
export DRTC_PYTHON=${DRTC_PYTHON:-python3}
export DRTC_HOME=${DRTC_HOME:-${TMPDIR:-/tmp}/drtc-conv-breakdown}
OUT=${OUT:-bench/out}
NAME=${NAME:-conv_breakdown_h200}
DEVICE=${DEVICE:-cuda}
JOBS=${JOBS:-8}
COMPILE_JOBS=${COMPILE_JOBS:-$JOBS}
COMPILE_TIMEOUT=${COMPILE_TIMEOUT:-120}
TASK_TIMEOUT=${TASK_TIMEOUT:-180}
STOP_AFTER=${STOP_AFTER:-360}
FILTER=${FILTER:-Conv}
M="$OUT/${NAME}_modules"
[ -d "$TASKS" ] || { echo "no task directory $TASKS"; exit 2; }
[ -x "$DRTC" ] || { echo "no drtc binary at $DRTC"; exit 2; }
mkdir -p "$M" "$OUT/${NAME}_logs"
DRTC=$(cd "$(dirname "$DRTC")" && pwd)/$(basename "$DRTC")
SHRINK_ARG=""
[ "${SHRINK:-0}" = 1 ] && SHRINK_ARG="--shrink"

compile_one() {
  local task=$1 name
  name=$(basename "$task" .py)
  [ -f "$M/$name.py" ] && { echo "  $name: module kept"; return 0; }
  local t0=$SECONDS
  # shellcheck disable=SC2086
  if timeout "$COMPILE_TIMEOUT" "$DRTC" compile "$task" --device "$DEVICE" $SHRINK_ARG \
      -o "$M/$name.tmp.py" --report "$M/$name.report.json" ${COMPILE_ARGS:-} \
      >"$M/$name.log" 2>&1; then
    mv "$M/$name.tmp.py" "$M/$name.py"
    echo "  $name: compiled ($((SECONDS - t0))s)"
  else
    echo "exit $? (timeout $COMPILE_TIMEOUT s gives 124)" >>"$M/$name.log"
    rm -f "$M/$name.tmp.py"
    echo "  $name: no module ($(tail -n 2 "$M/$name.log" | head -n 1 | cut -c1-160))"
  fi
}
export -f compile_one
export M DRTC DEVICE SHRINK_ARG COMPILE_TIMEOUT COMPILE_ARGS

echo "== 1. drtc compile ($COMPILE_JOBS at once) of $TASKS/*$FILTER*.py -> $M"
t0=$SECONDS
find "$TASKS" -maxdepth 1 -name "*${FILTER}*.py" | sort -V \
  | xargs -P "$COMPILE_JOBS" -I{} bash -c 'compile_one "$1"' _ {}
echo "== 1. done in $((SECONDS - t0))s: $(find "$M" -name '*.py' ! -name '*.tmp.py' | wc -l) modules"

echo "== 2. breakdown ($JOBS task processes, measuring one at a time)"
# shellcheck disable=SC2086
"$DRTC_PYTHON" "$HERE/conv_breakdown.py" run --modules "$M" --tasks "$TASKS" \
  --json "$OUT/$NAME.jsonl" --markdown "$OUT/$NAME.md" --logs "$OUT/${NAME}_logs" \
  --filter "$FILTER" --device "$DEVICE" --jobs "$JOBS" --task-timeout "$TASK_TIMEOUT" \
  --stop-after "$((STOP_AFTER > SECONDS ? STOP_AFTER - SECONDS : 1))" --resume ${ARGS:-}
rc=$?
if [ $rc -eq 3 ]; then
  echo "== tasks left: run the same command again to resume"
elif [ $rc -eq 0 ]; then
  echo "== done: $OUT/$NAME.jsonl, $OUT/$NAME.md"
fi
exit $rc
