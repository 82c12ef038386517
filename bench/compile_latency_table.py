"""The table of bench/compile_latency.sh's rows: per mode, tasks, verified, median / p90 /
max wall seconds, and the median of each verification phase (where its time went)."""

import json
import statistics
import sys

MODES = ["cold", "warm", "again", "repeat", "torch"]
LABEL = {
    "cold": "drtc, cold (fresh home and Triton cache, no service)",
    "warm": "drtc, warm (service running, another program compiled before)",
    "again": "drtc, again with --no-cache (service and Triton cache warm)",
    "repeat": "drtc, repeated (verified-module cache)",
    "torch": "torch.compile first call (fresh process and Inductor cache)",
}


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def secs(x):
    return f"{x:.3f}" if x < 1 else f"{x:.2f}"


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    print("| mode | tasks | verified | median s | p90 s | max s | median phases (s) |")
    print("|---|---|---|---|---|---|---|")
    for mode in MODES:
        rs = [r for r in rows if r["mode"] == mode]
        if not rs:
            continue
        key = "first_call_s" if mode == "torch" else "wall_s"
        walls = [r[key] for r in rs]
        ok = sum(1 for r in rs if r.get("verified") or (mode == "torch" and r["rc"] == 0))
        phases = {}
        hits = sum(1 for r in rs if r.get("cache_hit"))
        for r in rs:
            if r.get("cache_hit"):
                continue  # the cached report's phases are the first compile's
            for k, v in (r.get("phases") or {}).items():
                phases.setdefault(k, []).append(v)
        ph = ", ".join(f"{k[:-2] if k.endswith('_s') else k} {statistics.median(v):.2f}"
                       for k, v in sorted(phases.items()))
        if hits:
            ph = f"{hits} answered by the verified-module cache" + (f"; {ph}" if ph else "")
        if mode == "torch":
            ph = "process incl. import: median %.1f" % statistics.median(r["wall_s"] for r in rs)
        print(f"| {LABEL[mode]} | {len(rs)} | {ok} | {secs(statistics.median(walls))} | "
              f"{secs(pct(walls, 0.9))} | {secs(max(walls))} | {ph} |")
    print()
    print("| task | " + " | ".join(m for m in MODES) + " |")
    print("|---|" + "---|" * len(MODES))
    for task in sorted({r["task"] for r in rows if r["mode"] in MODES},
                       key=lambda t: int(t.split("_")[0])):
        cells = []
        for m in MODES:
            r = next((r for r in rows if r["task"] == task and r["mode"] == m), None)
            if r is None:
                cells.append("")
            elif m == "torch":
                cells.append(secs(r["first_call_s"]))
            else:
                mark = "" if r.get("verified") else " (not verified, rc %d)" % r["rc"]
                cells.append(f"{secs(r['wall_s'])}{mark}")
        print(f"| {task} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
