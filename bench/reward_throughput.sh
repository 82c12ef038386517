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
# arguments to both `drtc compile` and `drtc eval`, e.g. --shrink on a CPU). Writes $OUT/$NAME.jsonl (drtc eval's rows), $OUT/$NAME.md and
# $OUT/$NAME.txt (answers, wall time, answers per second).
set -u
if [ $# -lt 1 ]; then
  sed -n '2,21p' "$0"
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
# one answer through the verification service, which the timed run then finds warm
# shellcheck disable=SC2086
"$DRTC" eval "$TASKS" --llm-url "http://127.0.0.1:$PORT/v1" --llm-model replay --limit 1 \
  --samples 1 --mode whole --no-strict --device "$DEVICE" --jobs "${JOBS:-1}" -o "$OUT/$NAME.warmup.jsonl" ${EXTRA:-} \
  > /dev/null 2>> "$OUT/$NAME.log"
tasks=$(ls "$TASKS"/*.py | wc -l)
start=$(date +%s.%N)
# shellcheck disable=SC2086
"$DRTC" eval "$TASKS" --llm-url "http://127.0.0.1:$PORT/v1" --llm-model replay \
  --samples "$SAMPLES" --mode whole --no-strict --device "$DEVICE" --jobs "${JOBS:-1}" -o "$OUT/$NAME.jsonl" \
  --markdown "$OUT/$NAME.md" ${EXTRA:-} 2>> "$OUT/$NAME.log"
rc=$?
end=$(date +%s.%N)
python3 - "$start" "$end" "$tasks" "$SAMPLES" "$OUT/$NAME.jsonl" "$rc" <<'PY' | tee "$OUT/$NAME.txt"
import json, sys
start, end, tasks, samples, path, rc = sys.argv[1:]
wall = float(end) - float(start)
rows = [json.loads(l) for l in open(path)]
samples_ = [s for r in rows for s in r.get("samples", [])]
answers = len(samples_)
verified = sum(1 for s in samples_ if s.get("verified"))
timed = sum(1 for s in samples_ if s.get("time_ms") is not None)
print(f"drtc eval exit {rc}; {len(rows)} of {tasks} tasks x {samples} samples: {answers} answers "
      f"({verified} verified, {timed} timed) in {wall:.1f} s (whole process, warm service): "
      f"{answers / wall:.2f} answers/s")
# where each answer's check went (the candidates' check_s, drtc eval's report)
checks = [c["check_s"] for r in rows for c in r.get("candidates", []) if c.get("check_s")]
if checks:
    import statistics
    med = {k: statistics.median(c[k] for c in checks) for k in checks[0]}
    print(f"per answer, median of {len(checks)}: request {med['wall_s']:.2f} s = verification "
          f"{med['verify_s']:.2f} s (load {med['load_s']:.2f}, trials {med['trials_s']:.2f}, "
          f"float64 truth {med['truth_s']:.2f}, re-drawn parameters' setup "
          f"{med.get('redrawn_s', 0.0):.2f}, kernels compiled ahead {med.get('jit_s', 0.0):.2f}) "
          f"+ timing and waits "
          f"{statistics.median(c['wall_s'] - c['verify_s'] for c in checks):.2f} s (of which "
          f"waiting for the GPU's exclusive pass {med.get('timing_queue_s', 0.0):.2f}, the "
          f"timed loops {med.get('timing_s', 0.0):.2f}, their report "
          f"{med.get('timing_report_s', 0.0):.2f})")
PY
