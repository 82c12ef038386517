#!/usr/bin/env bash
# Issue 10 on a GPU machine: the level-2 convolution tasks (file names with "Conv") with
# `drtc suite --device cuda --baseline compile`, once per layout, through bench/gpu_suite.sh
# (protocol `default`: drtc at its default precision, eager and torch.compile at PyTorch's
# own defaults: cuDNN convolutions in TF32 for everyone), then one table comparing the
# layouts per task.
#
#   bash bench/conv_gpu.sh DRTC_BINARY TASKS_DIR
#
#   DRTC_BINARY  a release build of drtc from the development machine
#   TASKS_DIR    a copy of ../shared/kernelbench/level2
#
# Writes under OUT (default bench/out), NAME (default conv_h200):
#   ${NAME}_<layout>_default_vs_compile.{jsonl,md,log}  one suite run per layout
#   ${NAME}_layouts.md                                  drtc per layout vs eager/torch.compile
# (7 files for the two default layouts.) LAYOUTS (default "nchw channels-last"; "auto" is
# the third choice) picks the runs. One call stops starting tasks after STOP_AFTER seconds
# (see gpu_suite.sh): exit status 3 means "run the same command again", it resumes.
# Environment: as gpu_suite.sh (DRTC_PYTHON default python3, JOBS, STOP_AFTER,
# TASK_TIMEOUT, TIMEOUT, DRTC_HOME, EXTRA).
set -u
if [ $# -lt 2 ]; then
  sed -n '2,20p' "$0"
  exit 2
fi
DRTC=$1
TASKS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-bench/out}
BASE=${NAME:-conv_h200}
LAYOUTS=${LAYOUTS:-nchw channels-last}
for layout in $LAYOUTS; do
  echo "== layout $layout"
  NAME="${BASE}_${layout}" PROTOCOLS=default EXTRA="--filter Conv --layout $layout ${EXTRA:-}" \
    bash "$HERE/gpu_suite.sh" "$TASKS" "$DRTC"
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 3 ] && echo "== layout $layout: tasks left; run the same command again to resume"
    exit $rc
  fi
done
# per task: drtc's median in each layout, eager and torch.compile (from the first layout's
# run: they do not depend on drtc's layout), and which layout each run ended in
python3 - "$OUT" "$BASE" $LAYOUTS <<'PY'
import json, math, sys
out, base, layouts = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = {}
for l in layouts:
    rows = {}
    with open(f"{out}/{base}_{l}_default_vs_compile.jsonl") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                rows[r["task"]] = r
    runs[l] = rows
tasks = sorted({t for r in runs.values() for t in r}, key=lambda t: (int(t.split("_")[0]), t))
def ms(r, k):
    v = r.get(k) if r else None
    return f"{v:.3f}" if isinstance(v, (int, float)) else "-"
head = ["task", "eager", "torch.compile"] + [f"drtc {l}" for l in layouts] + [f"vs compile ({l})" for l in layouts]
lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
geo = {l: [] for l in layouts}
wins = {l: 0 for l in layouts}
for t in tasks:
    first = runs[layouts[0]].get(t)
    cells = [t, ms(first, "eager_ms"), ms(first, "torch_compile_ms")]
    speed = []
    for l in layouts:
        r = runs[l].get(t) or {}
        note = ""
        if any(x.get("rung") == "layout" for x in r.get("retries") or []):
            note = " (fell back to nchw)"
        if r.get("status") != "verified":
            note = f" ({r.get('status', 'missing')})"
        cells.append(ms(r, "drtc_ms") + note)
        s = r.get("speedup_vs_compile") if r.get("status") == "verified" else None
        geo[l].append(math.log(s) if s else 0.0)  # failures count as 1.0
        wins[l] += 1 if s and s > 1 else 0
        speed.append(f"{s:.2f}x" if s else "-")
    lines.append("| " + " | ".join(cells + speed) + " |")
lines.append("")
for l in layouts:
    n = len(geo[l]) or 1
    lines.append(f"- {l}: faster than torch.compile on {wins[l]}/{len(tasks)}, geomean "
                 f"{math.exp(sum(geo[l]) / n):.3f}x over torch.compile (failures as 1.0)")
text = "\n".join(lines) + "\n"
open(f"{out}/{base}_layouts.md", "w").write(text)
print(text)
PY
echo "== done: $OUT/${BASE}_layouts.md"
