"""What CUDA graphs save, task by task: two `drtc suite` result files of the same tasks, one
made with `--cuda-graphs off` and one with `--cuda-graphs on`, side by side, with the cost
rule of `--cuda-graphs auto` (backends/src/graphs.rs: launches x 4 us against the output copies a
replay adds) checked against what was measured.

usage: python3 bench/graphs_table.py OFF.jsonl ON.jsonl [--markdown OUT.md]

Columns: drtc median without and with graphs (ms), the saving (us, off - on), whether the
verified module replayed graphs in the timed calls, the eager launches the rule counts, the
rule's two sides (us saved by fewer launches, us added by the output copies), what `auto`
would choose, and whether the measurement agrees (graphs faster <=> the rule says on).
"""
import argparse
import json
import math


def rows(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a killed run
            if "task" in r:
                out[r["task"]] = r
    return out


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("off")
    ap.add_argument("on")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    off, on = rows(a.off), rows(a.on)
    lines = ["| task | off ms | on ms | saved us | on/off | replayed | launches | rule saved us "
             "| rule added us | auto | agrees |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios, agree, judged, faster = [], 0, 0, 0
    for task in sorted(set(off) | set(on), key=lambda t: (int(t.split("_")[0]) if t.split("_")[0].isdigit() else 1 << 30, t)):
        o, n = off.get(task, {}), on.get(task, {})
        t_off = o.get("drtc_ms") if o.get("status") == "verified" else None
        t_on = n.get("drtc_ms") if n.get("status") == "verified" else None
        g = n.get("graphs") or {}
        timed = g.get("timed") or {}
        replayed = timed.get("used")
        saved_rule, added_rule = g.get("saved_us"), g.get("added_us")
        auto = None if saved_rule is None else saved_rule > added_rule
        saved = None if t_off is None or t_on is None else (t_off - t_on) * 1e3
        ok = None
        if saved is not None and auto is not None and replayed:
            judged += 1
            ok = (saved > 0) == auto
            agree += ok
            ratios.append(t_on / t_off)
            faster += saved > 0
        status = "" if n.get("status") in (None, "verified") else f" ({n.get('status')})"
        lines.append(f"| {task}{status} | {fmt(t_off, '.4f')} | {fmt(t_on, '.4f')} | "
                     f"{fmt(saved, '.1f')} | {fmt(None if saved is None else t_on / t_off, '.3f')} | "
                     f"{'-' if replayed is None else ('yes' if replayed else 'no: ' + str((g.get('verified') or {}).get('reason') or timed.get('fallback') or ''))} | "
                     f"{g.get('launches', '-')} | {fmt(saved_rule, '.1f')} | {fmt(added_rule, '.1f')} | "
                     f"{'-' if auto is None else ('on' if auto else 'off')} | "
                     f"{'-' if ok is None else ('yes' if ok else 'NO')} |")
    summary = [f"{len(set(off) | set(on))} tasks; {judged} verified in both runs with graphs "
               f"replayed; graphs faster on {faster} of them"]
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        summary.append(f"geometric mean on/off time ratio {geo:.3f} (below 1: graphs faster)")
        summary.append(f"the cost rule agrees with the measurement on {agree} of {judged}")
    text = "\n".join(lines) + "\n\n" + "\n".join(f"- {s}" for s in summary) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"CUDA graphs off vs on: `{a.off}` vs `{a.on}`\n\n{text}")


if __name__ == "__main__":
    main()
