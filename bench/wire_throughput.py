"""Throughput of the isolated candidate's channel (`drtc_worker/wire.py`), pipe against
shared-memory arena: a child process echoes every message back; the parent sends one
float32 tensor of each size and times the round trip (both directions, receive copies
included). CPU tensors only: what the channel itself costs, not the device copies.

    python3 bench/wire_throughput.py [--mb 64 256 1024] [--repeat 3]
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src", "verifier", "worker"))

from drtc_worker import wire  # noqa: E402

CHILD = """
import os, sys
sys.path.insert(0, sys.argv[1])
from drtc_worker import wire
fds = [int(x) for x in sys.argv[2].split(",")] if sys.argv[2] else []
a_in, a_out = (wire.Arena.attach(fds[0]), wire.Arena.attach(fds[1])) if fds else (None, None)
while True:
    try:
        msg = wire.recv(0, arena=a_in)
    except wire.WireError:
        break
    wire.send(1, msg, a_out)
"""


def run(use_arena, sizes_mb, repeat):
    import torch
    arenas = (wire.Arena.create("bench-in", (max(sizes_mb) + 1) << 20),
              wire.Arena.create("bench-out", (max(sizes_mb) + 1) << 20)) if use_arena else (None, None)
    fds = [a.fd for a in arenas if a is not None]
    p = subprocess.Popen([sys.executable, "-c", CHILD, os.path.join(HERE, "..", "src", "verifier", "worker"),
                          ",".join(map(str, fds))], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         pass_fds=fds)
    out, inp = p.stdin.fileno(), p.stdout.fileno()
    wire.widen_pipe(out)
    wire.widen_pipe(inp)
    rows = []
    for mb in sizes_mb:
        t = torch.rand((mb << 20) // 4)
        best = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            wire.send(out, {"x": t}, arenas[0])
            back = wire.recv(inp, arena=arenas[1])["x"]
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        assert torch.equal(back, t)
        rows.append((mb, best))
    p.stdin.close()
    p.wait()
    for a in arenas:
        if a is not None:
            a.close()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    pipe = run(False, args.mb, args.repeat)
    arena = run(True, args.mb, args.repeat)
    print("| tensor MB | pipe round trip s | pipe GB/s (both ways) | arena round trip s | arena GB/s (both ways) |")
    print("|---|---|---|---|---|")
    for (mb, tp), (_, ta) in zip(pipe, arena):
        gb = 2 * mb / 1024
        print(f"| {mb} | {tp:.3f} | {gb / tp:.2f} | {ta:.3f} | {gb / ta:.2f} |")


if __name__ == "__main__":
    main()
