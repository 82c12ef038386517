#!/usr/bin/env bash
# What CUDA graphs save (issue 10, launch overhead), on a GPU machine: the suite protocol of
# bench/gpu_suite.sh (drtc against eager and torch.compile, interleaved, CUDA events, L2
# flushed) twice on the same tasks, once with `--cuda-graphs off` and once with
# `--cuda-graphs on`, then a table of the two side by side with the `auto` cost rule
# checked against the measurement (bench/graphs_table.py).
#
#   bash bench/graphs_gpu.sh TASKS_DIR [DRTC_BINARY]
#
#   TASKS_DIR    a directory of KernelBench programs (e.g. a copy of ../shared/kernelbench/level2)
#   DRTC_BINARY  default target/release/drtc
#
# Files, in $OUT (default bench/out), NAME (default <tasks dir name>_h200):
#   ${NAME}_graphs_off_fp32_vs_compile.{jsonl,md,log}   the run with --cuda-graphs off
#   ${NAME}_graphs_on_fp32_vs_compile.{jsonl,md,log}    the run with --cuda-graphs on
#   ${NAME}_graphs.md                                   the comparison (when both are complete)
#   ${NAME}_graphs_check.jsonl                          bench/graphs_check.py on CHECK_TASKS
#                                                       (default: the first CHECK_COUNT=6 files)
# (eight files: what a device call brings back). Each call stops starting
# tasks after STOP_AFTER seconds (see bench/gpu_suite.sh); exit status 3 means tasks are
# left: run the same command again and it resumes. PROTOCOLS (default fp32) as in
# gpu_suite.sh; JOBS, STOP_AFTER, TASK_TIMEOUT, TIMEOUT, DRTC_PYTHON, DRTC_HOME and EXTRA
# are passed through.
set -u
if [ $# -lt 1 ]; then
  sed -n '2,24p' "$0"
  exit 2
fi
TASKS=$1
DRTC=${2:-target/release/drtc}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-bench/out}
NAME=${NAME:-$(basename "$TASKS")_h200}
export PROTOCOLS=${PROTOCOLS:-fp32}
export OUT
"$DRTC" suite --help | grep -q -- '--cuda-graphs' || {
  echo "$DRTC has no --cuda-graphs option (build this branch)"; exit 2; }
# first, once: the replay cases and the per-call cost on a few tasks (bench/graphs_check.py)
CHECK="$OUT/${NAME}_graphs_check.jsonl"
if [ ! -s "$CHECK" ]; then
  mkdir -p "$OUT"
  # shellcheck disable=SC2012
  picked=${CHECK_TASKS:-$(ls "$TASKS"/*.py | head -n "${CHECK_COUNT:-6}")}
  rm -f "$CHECK.tmp"
  echo "== CUDA graphs: replay cases and per-call cost on: $(echo $picked | tr ' ' '\n' | xargs -n1 basename | tr '\n' ' ')"
  # shellcheck disable=SC2086
  ${DRTC_PYTHON:-python3} "$HERE/graphs_check.py" "$DRTC" $picked --out "$CHECK.tmp" \
    && mv "$CHECK.tmp" "$CHECK"
fi
for mode in off on; do
  echo "== CUDA graphs $mode"
  NAME="${NAME}_graphs_$mode" EXTRA="--cuda-graphs $mode ${EXTRA:-}" \
    bash "$HERE/gpu_suite.sh" "$TASKS" "$DRTC"
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 3 ] && echo "== CUDA graphs $mode: tasks left; run the same command again to resume"
    exit $rc
  fi
done
for proto in $PROTOCOLS; do
  python3 "$HERE/graphs_table.py" \
    "$OUT/${NAME}_graphs_off_${proto}_vs_compile.jsonl" \
    "$OUT/${NAME}_graphs_on_${proto}_vs_compile.jsonl" \
    --markdown "$OUT/${NAME}_graphs$( [ "$proto" = fp32 ] || echo "_$proto").md"
done
echo "== CUDA graphs: both runs done; comparison in $OUT/${NAME}_graphs.md"
