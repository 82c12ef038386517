#!/usr/bin/env bash
# Synthesis throughput locally and through Ray: `drtc synth` with the same options once on
# this machine (JOBS threads) and once with --ray local (a Ray cluster of JOBS CPUs started
# for the run, one CPU actor per CPU, each running one chunk at a time with one thread).
# Both runs must write the same programs (checked); the table gives programs/s of each,
# the per-actor rate (programs over the actors' busy seconds) and the rate that rate
# predicts per added node of C CPUs (C actors).
#
#   bash bench/synth_ray.sh [DRTC_BINARY]
#
# Environment: COUNT (programs, default 256), CHUNK (default 64: one shard per chunk),
# OPS (default 3), FLOPS (default drtc's 2^34..2^35), JOBS (default nproc), OUT (the
# markdown table, default bench/results/synth_ray_<commit>.md), WORK (scratch, default
# $TMPDIR/drtc-synth-ray). DRTC_PYTHON/DRTC_HOME as for drtc itself.
set -euo pipefail
DRTC=${1:-target/debug/drtc}
COUNT=${COUNT:-256}
CHUNK=${CHUNK:-64}
OPS=${OPS:-3}
FLOPS=${FLOPS:-2^34..2^35}
JOBS=${JOBS:-$(nproc)}
COMMIT=$(git rev-parse --short HEAD)
OUT=${OUT:-bench/results/synth_ray_${COMMIT}.md}
WORK=${WORK:-${TMPDIR:-/tmp}/drtc-synth-ray}
mkdir -p "$WORK"
common=(synth --ops "$OPS" --count "$COUNT" --chunk "$CHUNK" --flops "$FLOPS" --jobs "$JOBS" --quiet)

rate() { grep -o '([0-9.]* programs/s)' "$1" | tail -1 | tr -d '()' | cut -d' ' -f1; }
secs() { grep -o 'in [0-9.]*s (' "$1" | tail -1 | tr -dc '0-9.'; }

"$DRTC" "${common[@]}" -o "$WORK/local.jsonl" 2> "$WORK/local.log"
"$DRTC" "${common[@]}" --ray local -o "$WORK/ray.jsonl" 2> "$WORK/ray.log"
if cmp -s "$WORK/local.jsonl" "$WORK/ray.jsonl"; then same=yes; else same=NO; fi
kept=$(wc -l < "$WORK/ray.jsonl")
busy=$(grep -o 'busy [0-9]*%' "$WORK/ray.log" | tr -dc '0-9\n' | paste -sd+ | bc)
ray_wall=$(grep -o 'requests in [0-9.]* s' "$WORK/ray.log" | tr -dc '0-9.')
ready=$(grep -o 'ready in [0-9.]* s' "$WORK/ray.log" | tr -dc '0-9.')
# programs per actor-second: the actors' busy time is busy% x the job's wall time
per_actor=$(echo "scale=3; $kept / ($busy / 100 * $ray_wall)" | bc)
per_node=$(echo "scale=2; $per_actor * $JOBS" | bc)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
{
  echo "# drtc synth: local vs Ray CPU actors"
  echo
  echo "$(date -u +%Y-%m-%d), commit $COMMIT, $(nproc) cores ($cpu), $(free -g | awk '/Mem:/{print $2}') GiB,"
  echo "$(basename "$DRTC") from \`$DRTC\`; the machine's cores were shared with other work."
  echo
  echo "Command (both runs; the second adds \`--ray local\`):"
  echo
  echo "    drtc ${common[*]} -o FILE"
  echo
  echo "| run | programs | seconds | programs/s |"
  echo "|---|---|---|---|"
  echo "| local ($JOBS threads, one validation worker) | $(wc -l < "$WORK/local.jsonl") | $(secs "$WORK/local.log") | $(rate "$WORK/local.log") |"
  echo "| Ray, local cluster ($JOBS CPU actors; cluster start ${ready} s included) | $kept | $(secs "$WORK/ray.log") | $(rate "$WORK/ray.log") |"
  echo
  echo "Same programs in both files: $same. Per actor: $per_actor programs/s of busy time"
  echo "(each shard starts its own drtc and validation worker); a node of C CPUs adds about"
  echo "C x $per_actor programs/s (here C = $JOBS: $per_node/s) while the driver only writes."
  echo
  echo "Ray's summary of the run:"
  echo
  grep -E '^(ray:|  actor)' "$WORK/ray.log" | sed 's/^/    /'
} > "$OUT"
cat "$OUT"
