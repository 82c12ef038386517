"""Counts non-finite outputs of synthesized programs on input seeds that validation never saw.

usage: python bench/synth_finite.py PROGRAMS.jsonl [--seeds 1000..1005] [--device cpu]
                                   [--draw-on-device]

Each line of PROGRAMS.jsonl is a `drtc synth` record (field `pytorch`, seed format). Every
program runs once per seed (torch.manual_seed(seed) before get_inputs()); a run counts as
non-finite when any floating output holds NaN or Inf, and as an error when it raises.
Prints one summary line per figure; the exit status is 0 even when runs are non-finite
(this is a measurement, not a test).

--draw-on-device draws the inputs on the device (`with torch.device(...)` around
get_inputs()) instead of on the CPU and copying them: other values than validation's for the
same seed, and the only practical way to run programs of the default FLOP range (tensors of
up to 2^30 elements) on a GPU.
"""
import argparse
import json
import sys
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("programs")
    ap.add_argument("--seeds", default="1000..1005", help="MIN..MAX (exclusive) input seeds")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--draw-on-device", action="store_true")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split(".."))
    seeds = list(range(lo, hi))
    torch.set_grad_enabled(False)
    lines = [l for l in open(a.programs) if l.strip()]
    runs = bad = errors = 0
    bad_programs = []
    t0 = time.time()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        scope = {}
        exec(compile(rec["pytorch"], "<synth %d>" % i, "exec"), scope)
        hit = []
        for s in seeds:
            runs += 1
            ins = outs = None  # the last run's tensors go before this run's are drawn
            torch.manual_seed(s)
            try:
                if a.draw_on_device:
                    with torch.device(a.device):
                        ins = scope["get_inputs"]()
                else:
                    ins = [t.to(a.device) for t in scope["get_inputs"]()]
                outs = scope["fused_operator"](*ins)
                if a.device.startswith("cuda"):
                    torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 - every failure is counted
                errors += 1
                hit.append("seed %d: error %s: %s" % (s, type(e).__name__, str(e)[:120]))
                continue
            for j, o in enumerate(outs):
                if isinstance(o, torch.Tensor) and o.is_floating_point() and not torch.isfinite(o).all():
                    bad += 1
                    hit.append("seed %d: output %d non-finite" % (s, j))
                    break
        if hit:
            bad_programs.append((i, rec.get("ops"), hit))
        if (i + 1) % 100 == 0:
            print("... %d programs, %d runs, %d non-finite, %d errors (%.0fs)"
                  % (i + 1, runs, bad, errors, time.time() - t0), file=sys.stderr, flush=True)
    for i, ops, hit in bad_programs:
        print("program %d %s: %s" % (i, ops, "; ".join(hit[:3])))
    print("programs: %d, seeds per program: %d (%s), runs: %d" % (len(lines), len(seeds), a.seeds, runs))
    print("non-finite runs: %d; erroring runs: %d; programs affected: %d" % (bad, errors, len(bad_programs)))
    print("device: %s (%s), inputs drawn on %s, %.1fs" % (
        a.device, torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu",
        a.device if a.draw_on_device else "cpu", time.time() - t0))


if __name__ == "__main__":
    main()
