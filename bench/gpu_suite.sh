#!/usr/bin/env bash
# The suite protocols on a GPU machine: drtc against eager PyTorch and torch.compile
# (default mode, or the modes BASELINE names), timed interleaved in one worker on the same
# inputs; rows carry each task's speed of light on the device's measured limits.
#
#   bash bench/gpu_suite.sh TASKS_DIR [DRTC_BINARY]
#
#   TASKS_DIR    a directory of KernelBench programs (e.g. a copy of ../shared/kernelbench/level2)
#   DRTC_BINARY  default target/release/drtc (build it here with `cargo build --release`)
#
# Protocols (PROTOCOLS, default "fp32 tf32"), each into $OUT/${NAME}_<protocol>_vs_compile.{jsonl,md}:
#   fp32  drtc --precision fp32 (FP32_PRECISION overrides the value), torch --torch-precision highest
#   tf32  drtc --precision tf32, torch --torch-precision high (TF32 for everyone)
#   default  drtc at its default (fp32), eager and torch.compile at PyTorch's own defaults
#
# Each task's row is written as soon as it finishes. JOBS tasks (default 4) compile, verify
# and warm up torch.compile at once in their own workers; timing phases run one at a time,
# when nothing else runs on the GPU. A call stops starting tasks after STOP_AFTER seconds
# (default 360; in-flight tasks finish within TASK_TIMEOUT, default 150), so one call fits
# a 10-minute command limit: run the same command again and it resumes where it stopped
# (--resume); the last line says whether everything is done.
#
# Environment: DRTC_PYTHON (default python3: the machine's own Python with torch and
# Triton), BASELINE (`drtc suite --baseline`, default compile; e.g. all-modes: files then
# end in _vs_modes), OUT (default bench/out), NAME (default <tasks dir name>_h200), JOBS,
# STOP_AFTER, TASK_TIMEOUT, TIMEOUT (per worker request, default 300), DRTC_HOME (default
# $TMPDIR/drtc-gpu-suite), COMPILE_BUDGET (seconds each torch.compile mode's compile may
# take: `--compile-budget`), EXTRA (more `drtc suite` arguments, e.g. "--simplify").
set -u
if [ $# -lt 1 ]; then
  sed -n '2,30p' "$0"
  exit 2
fi
TASKS=$1
DRTC=${2:-target/release/drtc}
export DRTC_PYTHON=${DRTC_PYTHON:-python3}
export DRTC_HOME=${DRTC_HOME:-${TMPDIR:-/tmp}/drtc-gpu-suite}
OUT=${OUT:-bench/out}
NAME=${NAME:-$(basename "$TASKS")_h200}
JOBS=${JOBS:-4}
STOP_AFTER=${STOP_AFTER:-360}
TASK_TIMEOUT=${TASK_TIMEOUT:-150}
TIMEOUT=${TIMEOUT:-300}
FP32_PRECISION=${FP32_PRECISION:-fp32}
PROTOCOLS=${PROTOCOLS:-fp32 tf32}
BASELINE=${BASELINE:-compile}
VS=compile
[ "$BASELINE" = compile ] || VS=modes
mkdir -p "$OUT"
[ -d "$TASKS" ] || { echo "no task directory $TASKS"; exit 2; }
[ -x "$DRTC" ] || { echo "no drtc binary at $DRTC"; exit 2; }
"$DRTC" devices

for proto in $PROTOCOLS; do
  case $proto in
    fp32) args="--precision $FP32_PRECISION --torch-precision highest" ;;
    tf32) args="--precision tf32 --torch-precision high" ;;
    default) args="--precision fp32" ;;
    *) echo "unknown protocol $proto (fp32, tf32 or default)"; exit 2 ;;
  esac
  base="$OUT/${NAME}_${proto}_vs_${VS}"
  echo "== protocol $proto: drtc suite $TASKS --device cuda --baseline $BASELINE $args"
  # shellcheck disable=SC2086
  "$DRTC" suite "$TASKS" --device cuda --baseline "$BASELINE" $args --jobs "$JOBS" \
    --timeout "$TIMEOUT" --task-timeout "$TASK_TIMEOUT" --stop-after "$STOP_AFTER" \
    --json "$base.jsonl" --markdown "$base.md" --resume \
    ${COMPILE_BUDGET:+--compile-budget $COMPILE_BUDGET} ${EXTRA:-} 2> >(tee -a "$base.log" >&2)
  rc=$?
  if [ $rc -eq 4 ]; then
    echo "== protocol $proto: stopped after ${STOP_AFTER}s with tasks left; run the same command again to resume"
    exit 4
  elif [ $rc -ne 0 ]; then
    echo "== protocol $proto: drtc suite failed (exit $rc); see $base.log"
    [ $rc -eq 2 ] && echo "   (exit 2 is a usage error: a drtc without --precision $FP32_PRECISION? set FP32_PRECISION)"
    exit $rc
  fi
  echo "== protocol $proto: done ($base.jsonl, $base.md)"
done
echo "== all protocols done: $PROTOCOLS"
