#!/usr/bin/env bash
# Reward throughput of two drtc builds in one GPU call, on the same answers: the new build
# with 4 workers, the base with 4, then (optionally) the new one with 8; each run through
# `bench/reward_throughput.sh` (its own verification service, stopped after), each bounded
# in time so that a device call ends with what it measured.
#
#   bash bench/reward_pair.sh TASKS_DIR ANSWERS_DIR NEW_DRTC BASE_DRTC [SECONDS_PER_RUN] [EIGHT]
#
# ANSWERS_DIR holds one answer per task file name (e.g. drtc's own verified modules:
# `drtc compile T.py --device cuda -o ANSWERS_DIR/T.py`). EIGHT=1 adds the 8-worker run.
# Environment: OUT (default bench/out), DRTC_PYTHON (default python3). Writes, per run,
# $OUT/{new,base}_jobs{4,8}.{jsonl,txt,tasks.md,log} and prints the summaries.
set -u
if [ $# -lt 4 ]; then
  sed -n '2,12p' "$0"
  exit 2
fi
TASKS=$1 ANSWERS=$2 NEW=$3 BASE=$4 LIMIT=${5:-110} EIGHT=${6:-}
OUT=${OUT:-bench/out}
export DRTC_PYTHON=${DRTC_PYTHON:-python3} PYTHONUNBUFFERED=1
HERE=$(dirname "$0")
mkdir -p "$OUT"
run() { # name binary jobs port
  PORT=$4 OUT=$OUT NAME=$1 JOBS=$3 ANSWERS=$ANSWERS timeout "$LIMIT" \
    bash "$HERE/reward_throughput.sh" "$TASKS" "$2" 4 > "$OUT/$1.out" 2>&1
  echo "$1: exit $?"
  "$2" service stop > /dev/null 2>&1
  pkill -f "replay_answers.py .*$OUT/$1" 2>/dev/null
  sleep 1
}
run new_jobs4 "$NEW" 4 18431
run base_jobs4 "$BASE" 4 18432
[ -n "$EIGHT" ] && run new_jobs8 "$NEW" 8 18433
for f in "$OUT"/*_jobs*.txt; do echo "== $f"; cat "$f"; done
