#!/usr/bin/env bash
# KernelBench level 3 (whole models) on a GPU machine: drtc against eager PyTorch and
# torch.compile (default mode), fp32 protocol (drtc --precision fp32, torch
# --torch-precision highest), through bench/gpu_suite.sh (resumable: run the same command
# again until its last line says "all protocols done").
#
#   bash bench/level3_gpu.sh TASKS_DIR [DRTC_BINARY]
#
#   TASKS_DIR    a copy of ../shared/kernelbench/level3
#   DRTC_BINARY  default target/release/drtc
#
# Programs the native parser refuses (loops over nn.ModuleList, if, nn.Sequential, LSTM...)
# go through the export frontend (`--frontend auto`, the default): torch.export runs in
# DRTC_PYTHON (the machine's own torch; exports use the meta device, so they allocate no
# weights) and is cached under DRTC_HOME/export, so a resumed call does not export again.
# Whole models take longer than level-2 tasks (export, five verification trials of a full
# model, torch.compile's warm-up of a ResNet/DenseNet): the defaults give each task 360 s
# and start no task after 180 s, so one call (at most 540 s) fits a 10-minute command limit.
#
# Environment: as bench/gpu_suite.sh (OUT, NAME default level3_h200, JOBS default 4,
# STOP_AFTER, TASK_TIMEOUT, TIMEOUT, DRTC_PYTHON, DRTC_HOME, EXTRA; JOBS default 2 with
# BASELINE=all-modes), PROTOCOLS default fp32
# ("fp32 tf32" for both). Results: $OUT/${NAME}_fp32_vs_compile.{jsonl,md}; the table again
# with `drtc suite-report FILE.jsonl --markdown FILE.md`.
set -u
if [ $# -lt 1 ]; then
  sed -n '2,24p' "$0"
  exit 2
fi
HERE=$(cd "$(dirname "$0")" && pwd)
export NAME=${NAME:-level3_h200}
export PROTOCOLS=${PROTOCOLS:-fp32}
# every torch.compile mode (BASELINE=all-modes) warms four compiles per model: four such
# models at once ran out of a 320 s task limit (level3_losers_h200_d2e381e_default_vs_modes.md)
if [ "${BASELINE:-compile}" = all-modes ]; then
  export JOBS=${JOBS:-2}
else
  export JOBS=${JOBS:-4}
fi
export TASK_TIMEOUT=${TASK_TIMEOUT:-360}
export STOP_AFTER=${STOP_AFTER:-180}
export TIMEOUT=${TIMEOUT:-340}
exec bash "$HERE/gpu_suite.sh" "$@"
