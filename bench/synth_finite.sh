#!/usr/bin/env bash
# Non-finite outputs of synthesized programs on input seeds validation never saw.
# usage: bench/synth_finite.sh [COUNT] [OPS] [OUT_DIR]   (defaults: 1000 5 /tmp/drtc-synth-finite)
# Synthesizes COUNT programs of OPS ops (FLOPs 1e5..2e7, default validation: CPU, input
# seeds 0..4), then runs each on input seeds 1000..1004 and prints how many runs had NaN/Inf.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
ops=${2:-5}
out=${3:-/tmp/drtc-synth-finite}
mkdir -p "$out"
drtc=${DRTC:-target/debug/drtc}
python=${DRTC_PYTHON:-$HOME/.cache/drtc/venv/bin/python}
"$drtc" synth --ops "$ops" --count "$count" --seed 16 --flops 100000..20000000 \
  --quiet -o "$out/programs.jsonl" || echo "drtc synth exited $? (fewer programs than asked; measuring those written)"
"$python" bench/synth_finite.py "$out/programs.jsonl" --seeds 1000..1005
