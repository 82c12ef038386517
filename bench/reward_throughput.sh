#!/usr/bin/env bash
# Reward throughput: how many model answers drtc verifies (and, on a GPU, times) per
# second, the path a verl reward and `drtc eval` take (each answer untrusted: its own
# sandboxed process, strict checks, fresh inputs on every trial). The answers are the
# modules drtc itself generates for the tasks (`drtc compile --no-verify`), served by a
# local replay server standing in for the model (`bench/replay_answers.py`), so the
# figure is verification and timing alone. Strict mode's static scan is off (`--no-strict`):
# drtc's own modules keep their input guards in try/except, which it refuses; every
# dynamic check still runs.
#
#   bash bench/reward_throughput.sh TASKS_DIR [DRTC_BINARY] [SAMPLES]
#
# Environment: DEVICE (default cuda), DRTC_PYTHON (default python3), OUT (default
# bench/out), NAME (default reward_<tasks dir name>), PORT (default 18431), JOBS (answers
# verified at once, `drtc eval --jobs`; default 1), VERIFY_ANSWERS (set to 1 to
# write the answers with a verified compile: unverified modules may fail, as level-2 57's
# channels-last one does under the fp32 rule), ANSWERS (a folder of answers written
# before, one per task file name: used as they are, nothing compiled), EXTRA (more
# arguments to both `drtc compile` and `drtc eval`, e.g. --shrink on a CPU). Writes $OUT/$NAME.jsonl (drtc eval's rows), $OUT/$NAME.md,
# $OUT/$NAME.txt (answers, wall time, answers per second, where each answer's check went:
# `bench/reward_summary.py`, which also reads a run cut off before its end) and
# $OUT/$NAME.tasks.md (the same per task).
set -u
if [ $# -lt 1 ]; then
  sed -n '2,22p' "$0"
  exit 2
fi
TASKS=$1
DRTC=${2:-target/release/drtc}
SAMPLES=${3:-4}
DEVICE=${DEVICE:-cuda}
export DRTC_PYTHON=${DRTC_PYTHON:-python3}
OUT=${OUT:-bench/out}
NAME=${NAME:-reward_$(basename "$TASKS")}
PORT=${PORT:-18431}
mkdir -p "$OUT/$NAME.answers"
for f in "$TASKS"/*.py; do
  if [ -n "${ANSWERS:-}" ]; then
    cp "$ANSWERS/$(basename "$f")" "$OUT/$NAME.answers/" 2>/dev/null || echo "no answer for $(basename "$f")" >> "$OUT/$NAME.log"
    continue
  fi
  # shellcheck disable=SC2086
  "$DRTC" compile "$f" --device "$DEVICE" $([ -n "${VERIFY_ANSWERS:-}" ] || echo --no-verify) ${EXTRA:-} -o "$OUT/$NAME.answers/$(basename "$f")" \
    > /dev/null 2>> "$OUT/$NAME.log" || echo "no answer for $(basename "$f")" >> "$OUT/$NAME.log"
done
python3 "$(dirname "$0")/replay_answers.py" "$OUT/$NAME.answers" "$TASKS" "$PORT" >> "$OUT/$NAME.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1
# the workers start before the clock (a reward process keeps its pool between batches):
# one answer per worker through the verification service, which the timed run then finds
# warm (each worker with its spare sandboxed process ready)
# shellcheck disable=SC2086
"$DRTC" eval "$TASKS" --llm-url "http://127.0.0.1:$PORT/v1" --llm-model replay --limit 1 \
  --samples "${JOBS:-1}" --mode whole --no-strict --device "$DEVICE" --jobs "${JOBS:-1}" -o "$OUT/$NAME.warmup.jsonl" ${EXTRA:-} \
  > /dev/null 2>> "$OUT/$NAME.log"
tasks=$(ls "$TASKS"/*.py | wc -l)
start=$(date +%s.%N)
# shellcheck disable=SC2086
"$DRTC" eval "$TASKS" --llm-url "http://127.0.0.1:$PORT/v1" --llm-model replay \
  --samples "$SAMPLES" --mode whole --no-strict --device "$DEVICE" --jobs "${JOBS:-1}" -o "$OUT/$NAME.jsonl" \
  --markdown "$OUT/$NAME.md" ${EXTRA:-} 2>> "$OUT/$NAME.log"
rc=$?
end=$(date +%s.%N)
wall=$(python3 -c "print(float('$end') - float('$start'))")
python3 "$(dirname "$0")/reward_summary.py" "$OUT/$NAME.jsonl" --wall "$wall" --tasks "$tasks" \
  --samples "$SAMPLES" --rc "$rc" --markdown "$OUT/$NAME.tasks.md" | tee "$OUT/$NAME.txt"
