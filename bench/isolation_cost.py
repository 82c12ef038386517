"""What isolating untrusted candidates costs: verification latency of the same honest
candidate run in the checker's process (`trusted`, as drtc's own modules are) and in a
sandboxed process of its own (every other answer), with the spare processes warm. Each
request verifies a fresh copy of the candidate (a comment added inside its kernels), as a
reward's answers are all new: both sides compile its kernels.

Drives drtc's runtime worker directly (src/verifier/worker/worker.py, JSON lines), one
request at a time, trusted and isolated interleaved; before each isolated request it asks
the worker to have its spare ready (`warm`), so the figure is the per-answer cost with
spares warm, not the start of a process. Prints a table and, with --json, writes the rows.

    python bench/isolation_cost.py --device cpu --n 10
    python bench/isolation_cost.py --device cuda --n 20 --json out.json
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "verifier")


def salted(source, salt):
    """The source with a comment inside every `@triton.jit` function's body, so that each
    copy's kernels have their own compile-cache keys."""
    out, jit = [], False
    for line in source.splitlines():
        out.append(line)
        if line.strip().startswith("@triton.jit"):
            jit = True
        elif jit and line.lstrip().startswith("def ") and line.rstrip().endswith(":"):
            indent = len(line) - len(line.lstrip()) + 4
            out.append(" " * indent + f"# answer {salt}")
            jit = False
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--n", type=int, default=10, help="requests of each kind")
    ap.add_argument("--reference", default=os.path.join(DATA, "seed_relu_add.py"))
    ap.add_argument("--candidate", default=os.path.join(DATA, "ok_relu_add.py"))
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    env = dict(os.environ, DRTC_DEVICE=args.device, PYTHONUNBUFFERED="1")
    if args.device == "cpu":
        env.update(TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    else:
        env.pop("TRITON_INTERPRET", None)
    worker = subprocess.Popen([sys.executable, "-u",
                               os.path.join(ROOT, "src", "verifier", "worker", "worker.py")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    ready = json.loads(worker.stdout.readline())
    n_id = [0]

    def call(req):
        n_id[0] += 1
        req["id"] = n_id[0]
        worker.stdin.write(json.dumps(req) + "\n")
        worker.stdin.flush()
        while True:
            line = worker.stdout.readline()
            if not line:
                raise SystemExit(f"the worker died (status {worker.wait()}) on {req}")
            msg = json.loads(line)
            if msg.get("id") == n_id[0]:
                return msg

    base = {"op": "verify", "reference": args.reference, "candidate": args.candidate,
            "trials": 5, "timeout_s": 600}
    rows = []
    call(dict(base, trusted=True))  # warm-up: imports, Triton's first compile
    call({"op": "warm"})
    call(dict(base, trusted=False))
    with open(args.candidate) as f:
        source = f.read()
    tmp = tempfile.mkdtemp(prefix="drtc_isolation_cost_")
    for i in range(args.n):
        for trusted in (True, False):
            # every answer is new source, as a reward's answers are: its kernels compile
            # on both sides (a repeated source would hit the trusted side's Triton cache)
            path = os.path.join(tmp, f"cand_{i}_{int(trusted)}.py")
            with open(path, "w") as f:
                f.write(salted(source, f"{i}_{int(trusted)}"))
            call({"op": "warm"})
            t0 = time.perf_counter()
            r = call(dict(base, trusted=trusted, candidate=path))
            dt = time.perf_counter() - t0
            if not r.get("verified"):
                raise SystemExit(f"not verified: {r.get('failures')}")
            rows.append({"i": i, "trusted": trusted, "seconds": dt})
    shutil.rmtree(tmp, ignore_errors=True)
    worker.stdin.write(json.dumps({"op": "exit"}) + "\n")
    worker.stdin.close()
    worker.wait(timeout=30)
    med = {t: statistics.median(r["seconds"] for r in rows if r["trusted"] == t)
           for t in (True, False)}
    print(f"device {args.device} ({ready.get('gpu') or 'cpu'}), torch {ready['torch']}, "
          f"triton {ready['triton']}; {args.n} requests each; candidate "
          f"{os.path.basename(args.candidate)}")
    print("| where the candidate ran | median s | min s | max s |")
    print("|---|---|---|---|")
    for t, name in ((True, "checker's process (trusted)"), (False, "own sandboxed process")):
        xs = [r["seconds"] for r in rows if r["trusted"] == t]
        print(f"| {name} | {statistics.median(xs):.3f} | {min(xs):.3f} | {max(xs):.3f} |")
    print(f"median extra latency per answer from isolation: {med[False] - med[True]:.3f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "ready": ready, "rows": rows,
                       "extra_median_s": med[False] - med[True]}, f, indent=1)


if __name__ == "__main__":
    main()
