#!/usr/bin/env bash
# The other-shape figure of issue 16: how many generated modules give the reference's
# result when called with inputs they were not compiled for. Each task is compiled (and
# verified) with `drtc compile --shrink`; then bench/other_shapes.py calls its module with
# another batch size and with non-contiguous views, and compares it to the reference.
#
# usage: bench/other_shapes.sh [--device cpu|cuda] [--filter REGEX] [--no-shrink] [--out DIR] DIR...
#   DIR...      task folders, e.g. ../shared/kernelbench/level1 ../shared/kernelbench/level2
#   --filter    only tasks whose file name matches REGEX (grep -E)
#   --out       where modules, reports and results.jsonl go (default /tmp/drtc_other_shapes)
# env: DRTC (the drtc binary; default target/release/drtc, else target/debug/drtc, else
#      drtc on PATH), DRTC_PYTHON (the Python with torch and triton; default drtc's venv),
#      TASK_TIMEOUT (seconds per command, default 900).
# Recompiles go through the same drtc (DRTC_BIN) into a cache under --out.
set -euo pipefail
device=cpu filter=. shrink=--shrink out=/tmp/drtc_other_shapes dirs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --no-shrink) shrink=; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[ ${#dirs[@]} -gt 0 ] || { echo "give at least one task folder (see --help)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
drtc=${DRTC:-}
if [ -z "$drtc" ]; then
  for c in "$here/../target/release/drtc" "$here/../target/debug/drtc" "$(command -v drtc || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then drtc=$c; break; fi
  done
fi
[ -n "$drtc" ] || { echo "no drtc binary: build it or set DRTC" >&2; exit 2; }
drtc=$(cd "$(dirname "$drtc")" && pwd)/$(basename "$drtc")
python=${DRTC_PYTHON:-${DRTC_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/drtc}/venv/bin/python}
export DRTC_BIN=$drtc DRTC_GUARD_CACHE=$out/guard-cache
mkdir -p "$out"
results=$out/results.jsonl
: > "$results"
timeout=${TASK_TIMEOUT:-900}
for dir in "${dirs[@]}"; do
  level=$(basename "$dir")
  for f in $(ls "$dir"/*.py | sort -V); do
    name=$(basename "$f" .py)
    echo "$name" | grep -Eq -- "$filter" || continue
    task=$level/$name
    module=$out/${level}_$name.py report=$out/${level}_$name.json
    rm -f "$module" "$report"
    timeout "$timeout" "$drtc" compile "$f" $shrink --device "$device" -o "$module" \
      --report "$report" > "$out/${level}_$name.log" 2>&1 || true
    timeout "$timeout" "$python" "$here/other_shapes.py" "$task" "$device" "$module" "$report" \
      >> "$results" 2>> "$out/${level}_$name.log" \
      || echo "{\"task\": \"$task\", \"verified\": false, \"reason\": \"the checks timed out or crashed (see $out/${level}_$name.log)\"}" >> "$results"
    tail -n 1 "$results" | cut -c1-160
  done
done
echo
"$python" "$here/other_shapes.py" --summary "$results" | tee "$out/summary.md"
