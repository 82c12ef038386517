#!/usr/bin/env bash
# drtc suite (and, with LLM_URL, drtc eval) on one GPU machine, locally and through Ray, in
# one run: the same tasks first with local workers, then with --ray local (a Ray cluster of
# this machine started for the run: one verification actor per GPU). Checks that both runs
# give every task the same status and writes a table of the wall times and tasks/s.
#
#   bash bench/ray_gpu.sh TASKS_DIR [DRTC_BINARY]
#
#   TASKS_DIR    KernelBench programs (e.g. a copy of ../shared/kernelbench/level1)
#   DRTC_BINARY  default target/release/drtc
#
# Environment: DRTC_PYTHON (default python3: the machine's Python with torch, Triton and
# ray==2.60.0, as data/runtime/requirements.txt pins), LIMIT (tasks, default 12: one call
# fits a 10-minute limit), JOBS (suite --jobs, default 1: one worker per GPU, as Ray's one
# actor per GPU), OUT (default bench/out), DRTC_HOME (default $TMPDIR/drtc-ray-gpu; each
# run gets its own fresh drtc home and Triton cache below it, so both start cold),
# LLM_URL + LLM_MODEL (also time `drtc eval --samples 4 --mode whole` both ways on the
# same tasks against that server), COMMIT (the drtc build the table names; default git
# HEAD), DEVICE (default cuda; cpu checks the script on a machine without a GPU). The table goes to $OUT/ray_gpu_<commit>.md.
set -u
if [ $# -lt 1 ]; then
  sed -n '2,19p' "$0"
  exit 2
fi
TASKS=$1
DRTC=${2:-target/release/drtc}
export DRTC_PYTHON=${DRTC_PYTHON:-$(command -v python3)}
export DRTC_HOME=${DRTC_HOME:-${TMPDIR:-/tmp}/drtc-ray-gpu}
LIMIT=${LIMIT:-12}
JOBS=${JOBS:-1}
DEVICE=${DEVICE:-cuda}
OUT=${OUT:-bench/out}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$OUT" "$DRTC_HOME"
if ! "$DRTC_PYTHON" -c 'import ray' 2>/dev/null; then
  echo "error: $DRTC_PYTHON cannot import ray (pip install ray==2.60.0)" >&2
  exit 3
fi
work=$(mktemp -d)
ls "$TASKS"/*.py | sort -V | head -n "$LIMIT" | xargs -I{} cp {} "$work/"

timed() { # NAME CMD...: runs CMD, prints its wall seconds
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  echo "exit $?" >> "$OUT/$name.err"
  python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$t0" "$(date +%s.%N)"
}
rate() { # N SECONDS: N per second
  python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"
}
statuses() { # the task and status of every row, sorted
  python3 - "$1" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print("\n".join(sorted("%s %s" % (r["task"], r["status"]) for r in rows)))
PY
}

suite=(suite "$work" --device "$DEVICE" --jobs "$JOBS" --timeout 300 --task-timeout 300)
rm -f "$OUT"/ray_gpu_suite_{local,ray}.jsonl
cold() { # NAME CMD...: CMD with a fresh drtc home and Triton cache of its own
  local name=$1; shift
  rm -rf "$DRTC_HOME/$name"
  mkdir -p "$DRTC_HOME/$name/triton"
  DRTC_HOME="$DRTC_HOME/$name" TRITON_CACHE_DIR="$DRTC_HOME/$name/triton" "$@"
}
t_local=$(timed ray_gpu_suite_local cold local "$DRTC" "${suite[@]}" --json "$OUT/ray_gpu_suite_local.jsonl")
t_ray=$(timed ray_gpu_suite_ray cold ray "$DRTC" "${suite[@]}" --ray local --json "$OUT/ray_gpu_suite_ray.jsonl")
n=$(wc -l < "$OUT/ray_gpu_suite_local.jsonl")
a=$(statuses "$OUT/ray_gpu_suite_local.jsonl") && b=$(statuses "$OUT/ray_gpu_suite_ray.jsonl") \
  && [ -n "$a" ] && [ "$a" = "$b" ] && same=yes || same=NO
table="$OUT/ray_gpu_${COMMIT}.md"
{
  echo "# drtc locally vs through Ray on one GPU machine"
  echo
  echo "$(date -u +%Y-%m-%d), commit $COMMIT, $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true) x $(nvidia-smi -L 2>/dev/null | wc -l) GPUs, $(nproc) cores, --device $DEVICE; $LIMIT tasks of $TASKS"
  echo
  echo "    drtc ${suite[*]} --json FILE        # and again with --ray local"
  echo
  echo "| command | run | tasks | wall s | tasks/s | same statuses |"
  echo "|---|---|---|---|---|---|"
  echo "| suite | local | $n | $t_local | $(rate "$n" "$t_local") | |"
  echo "| suite | Ray (local cluster) | $(wc -l < "$OUT/ray_gpu_suite_ray.jsonl") | $t_ray | $(rate "$n" "$t_ray") | $same |"
} > "$table"
if [ -n "${LLM_URL:-}" ]; then
  ev=(eval "$work" --llm-url "$LLM_URL" --llm-model "${LLM_MODEL:-model}" --samples 4 --mode whole --device "$DEVICE")
  e_local=$(timed ray_gpu_eval_local cold eval_local "$DRTC" "${ev[@]}" -o "$OUT/ray_gpu_eval_local.jsonl")
  e_ray=$(timed ray_gpu_eval_ray cold eval_ray "$DRTC" "${ev[@]}" --ray local -o "$OUT/ray_gpu_eval_ray.jsonl")
  m=$(wc -l < "$OUT/ray_gpu_eval_local.jsonl")
  echo "| eval | local | $m | $e_local | $(rate "$m" "$e_local") | |" >> "$table"
  echo "| eval | Ray (local cluster) | $(wc -l < "$OUT/ray_gpu_eval_ray.jsonl") | $e_ray | $(rate "$m" "$e_ray") | |" >> "$table"
fi
{
  echo
  echo "Ray's summary (suite; its wall time and rate exclude the cluster's start, \"ready in\"):"
  echo
  grep -E '^(ray:|  actor)' "$OUT/ray_gpu_suite_ray.err" | sed 's/^/    /'
} >> "$table"
cat "$table"
rm -rf "$work"
