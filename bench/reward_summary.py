"""What a reward-throughput run measured (`bench/reward_throughput.sh`), from drtc eval's
rows: answers, verified, timed; answers per second (over the eval's wall time when given,
else derived from the tasks' own walls, which is right only when tasks ran one at a time);
the medians of each answer's `check_s` (where its check went); with `--markdown`, a table
per task. Works on a run cut off before its end (the rows written so far).

    python3 bench/reward_summary.py ROWS.jsonl [--wall SECONDS] [--tasks N] [--samples K]
        [--rc CODE] [--markdown OUT.md]
"""

import argparse
import json
import statistics

KEYS = ("wall_s", "verify_s", "load_s", "trials_s", "truth_s", "redrawn_s", "jit_s",
        "first_trial_s", "prepare_s", "worker_queue_s", "verify_queue_s", "timing_queue_s", "timing_s",
        "timing_report_s")


def checks_of(row):
    return [c["check_s"] for c in row.get("candidates", []) if c.get("check_s")]


def medians(checks):
    return {k: statistics.median(c.get(k, 0.0) for c in checks) for k in KEYS}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows")
    ap.add_argument("--wall", type=float, help="the eval's wall time, seconds")
    ap.add_argument("--tasks", type=int, help="tasks in the run (the rows may be fewer)")
    ap.add_argument("--samples", type=int)
    ap.add_argument("--rc", default="?", help="drtc eval's exit status")
    ap.add_argument("--markdown", help="also write a table per task here")
    a = ap.parse_args()
    try:
        with open(a.rows) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        print(f"drtc eval exit {a.rc}; no rows: {a.rows} was not written")
        return
    samples = [s for r in rows for s in r.get("samples", [])]
    verified = sum(1 for s in samples if s.get("verified"))
    timed = sum(1 for s in samples if s.get("time_ms") is not None)
    if a.wall is not None:
        wall, how = a.wall, "whole process, warm service"
    else:
        wall = sum(r.get("wall_ms", 0.0) for r in rows) / 1e3
        how = "derived: the sum of the tasks' walls, right only when tasks ran one at a time"
    rate = len(samples) / wall if wall > 0 else 0.0
    print(f"drtc eval exit {a.rc}; {len(rows)} of {a.tasks or len(rows)} tasks x "
          f"{a.samples or '?'} samples: {len(samples)} answers ({verified} verified, {timed} "
          f"timed) in {wall:.1f} s ({how}): {rate:.2f} answers/s")
    retried = [c for r in rows for c in r.get("candidates", []) if c.get("retried_alone")]
    if retried:
        after = sum(1 for c in retried if c.get("status") == "verified")
        print(f"retried alone after running out of memory beside other workers: "
              f"{len(retried)} answers ({after} verified on the retry)")
    checks = [c for r in rows for c in checks_of(r)]
    if not checks:
        return
    m = medians(checks)
    waits = statistics.median(c["wall_s"] - c["verify_s"] for c in checks)
    print(f"per answer, median of {len(checks)}: request {m['wall_s']:.2f} s = waiting for a "
          f"worker {m['worker_queue_s']:.2f} s and a shared pass {m['verify_queue_s']:.2f} s "
          f"+ verification "
          f"{m['verify_s']:.2f} s (load {m['load_s']:.2f}, trials {m['trials_s']:.2f} of which "
          f"the first {m['first_trial_s']:.2f}, float64 "
          f"truth {m['truth_s']:.2f}, re-drawn parameters' setup {m['redrawn_s']:.2f}, kernels "
          f"compiled ahead {m['jit_s']:.2f}) + timing and waits {waits:.2f} s (of which the "
          f"timing session's setup {m['prepare_s']:.2f}, "
          f"waiting for the GPU's exclusive pass {m['timing_queue_s']:.2f}, the timed loops "
          f"{m['timing_s']:.2f}, their report {m['timing_report_s']:.2f})")
    if a.markdown:
        lines = ["| task | verified | task wall s | request s | worker queue s | "
                 "shared-pass queue s | "
                 "verification s | trials s | first trial s | timing setup s | "
                 "timing queue s | timed loops s | timing report s |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            cs = checks_of(r)
            if not cs:
                continue
            t = medians(cs)
            v = sum(1 for s in r.get("samples", []) if s.get("verified"))
            lines.append(f"| {r['task'].split('/')[-1].removesuffix('.py')} | "
                         f"{v}/{len(r.get('samples', []))} | {r.get('wall_ms', 0.0) / 1e3:.1f} | "
                         f"{t['wall_s']:.2f} | {t['worker_queue_s']:.2f} | "
                         f"{t['verify_queue_s']:.2f} | "
                         f"{t['verify_s']:.2f} | {t['trials_s']:.2f} | "
                         f"{t['first_trial_s']:.2f} | {t['prepare_s']:.2f} | "
                         f"{t['timing_queue_s']:.2f} | {t['timing_s']:.2f} | "
                         f"{t['timing_report_s']:.2f} |")
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
