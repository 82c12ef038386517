"""drtc's isolated candidate process: runs one untrusted answer, sandboxed, for a checker
(`worker.py`) that never runs candidate code itself.

Started by the checker as a spare before any answer is known: it enters its namespaces
(`drtc_worker/sandbox.py`; the process that started stays outside as the keeper), imports
torch and Triton, initializes the device, confines itself (filesystem, rlimits, an
unprivileged user) and says `ready` with what its sandbox holds. Then it serves one answer:
`load` (the candidate's source, built as `ModelNew` with the reference's state, or its
`triton_fused_operator`), `precompile` (its kernels compiled ahead from a dry run, then
the answer loaded again: `drtc_worker/precompile.py`), `stage`, `time` and
`timed_outputs` (timing.py's protocol), `call` (one guarded call on the inputs it is sent; it answers
with the outputs and facts, all of which the checker treats as claims), `load_state`,
`graph_stats`, `exit`. Frames are `drtc_worker/wire.py`'s; anything printed goes to
stderr.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from drtc_worker import sandbox  # noqa: E402

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
REPORT = sandbox.Report()
# before torch: the fork must not copy threads
MADE = sandbox.enter_namespaces(REPORT, bool(CONFIG.get("pid_namespace", True)))

# the protocol: requests on fd 0, replies on a private copy of fd 1; fd 1 becomes stderr
PROTO_IN = 0
PROTO_OUT = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from drtc_worker import wire  # noqa: E402
from drtc_worker.candidate import Candidate  # noqa: E402
from drtc_worker.common import DEVICE, Failure, exc_line, flatten, to_device  # noqa: E402
from drtc_worker.fingerprint import fingerprint  # noqa: E402
from drtc_worker.memory import classify  # noqa: E402
from drtc_worker.precompile import compile_then_reload  # noqa: E402

# the checker's shared memory for tensors, one arena per direction (`wire.Arena`)
ARENA_IN, ARENA_OUT = (wire.Arena.attach(fd) if isinstance(fd, int) else None
                       for fd in (CONFIG.get("arenas") or [None, None]))


def send(msg):
    """One reply to the checker (its tensors through the arena where they fit)."""
    wire.send(PROTO_OUT, msg, ARENA_OUT)


_threads = os.environ.get("DRTC_WORKER_THREADS")
if _threads:
    torch.set_num_threads(max(1, int(_threads)))


@triton.jit
def _warm_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def warm_device():
    """Builds Triton's driver module and warms its compiler in this process's private cache
    before any answer arrives: a spare that skipped it cost each answer about 1.5 s more on
    an H200 (bench/results/isolation_cost_cuda.md). Also loads the libraries answers call
    (cuBLAS for a matmul, cuDNN for a convolution), whose first use would otherwise fall in
    the answer's first trial. Returns what was done."""
    if DEVICE != "cuda":
        return "not needed: kernels run under the interpreter"
    try:
        x = torch.ones(256, device="cuda")
        y = torch.empty_like(x)
        _warm_kernel[(1,)](x, y, 256, BLOCK=256)
        torch.cuda.synchronize()
    except BaseException as e:
        return f"failed ({exc_line(e)}): the first answer pays it"
    done = "Triton driver built, one kernel compiled and run"
    try:
        with torch.no_grad():
            m = torch.ones(64, 64, device="cuda")
            torch.mm(m, m)
            torch.nn.functional.conv2d(torch.ones(1, 4, 8, 8, device="cuda"),
                                       torch.ones(4, 4, 3, 3, device="cuda"))
            torch.cuda.synchronize()
        return done + "; cuBLAS and cuDNN loaded"
    except BaseException as e:
        return done + f"; cuBLAS/cuDNN warm-up failed ({exc_line(e)})"


def scaled_into(dst, src, c):
    """`dst` <- `src` * c for floating tensors (a positive scalar keeps zeros, signs,
    order and equalities, so structured inputs stay structured), `src` for the rest."""
    for d, x in zip(dst, src):
        if isinstance(d, torch.Tensor):
            d.copy_(x)
            if d.is_floating_point():
                d.mul_(c)


def time_calls(cand, staged, req):
    """The candidate's timed calls (timing.py's protocol: L2 flush, device-wide sync, CUDA
    events and wall clock per call), rotating over the staged input buffers, with new
    values before every timed call (the staged values times the call's scale, outside the
    timed window), so no call sees values an earlier one saw. Fingerprints each call's
    outputs after its timed window (`fingerprint.py`). Says `done` with the fingerprints as
    soon as the loop ends (the checker's own clock stops there), then sends each call's
    times; returns
    the last outputs of every buffer, which the `timed_outputs` request fetches later (the
    checker's exclusive phase holds the loop only)."""
    base, work = staged
    flush = torch.empty(int(req["flush_bytes"]) // 4, dtype=torch.float32, device=DEVICE)
    scales = [float(c) for c in req["scales"]]
    last = [None] * len(work)
    events, walls, fingerprints = [], [], []
    with torch.no_grad():
        for i in range(int(req["warmup_calls"])):
            cand.run(work[i % len(work)])
        torch.cuda.synchronize()
        for i, c in enumerate(scales):
            k = i % len(work)
            scaled_into(work[k], base[k], c)
            flush.zero_()
            torch.cuda.synchronize()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            w0 = time.perf_counter()
            start.record()
            out = cand.run(work[k])
            end.record()
            torch.cuda.synchronize()
            walls.append((time.perf_counter() - w0) * 1e3)
            events.append(start.elapsed_time(end))
            # outside the timed window, inside the checker's clock over the loop
            fingerprints.append(fingerprint(flatten(out)))
            if i >= len(scales) - len(work):
                last[k] = out
    send({"done": True, "fingerprints": fingerprints})
    outputs = [list(o) if isinstance(o, (list, tuple)) else [o] for o in last]
    return {"events_ms": events, "walls_ms": walls}, outputs


def serve(work):
    cand = None
    loaded = None
    timed = None  # the last timed calls' outputs, until `timed_outputs`
    staged = None
    n = 0
    while True:
        try:
            req = wire.recv(PROTO_IN, arena=ARENA_IN)
        except wire.WireError:
            return 0
        op = req.get("op") if isinstance(req, dict) else None
        fatal = False
        try:
            if op == "exit":
                return 0
            if op == "load":
                n += 1
                path = os.path.join(work, f"candidate_{n}.py")
                with open(path, "w", encoding="utf-8") as f:
                    f.write(req["source"])
                state = to_device(req.get("state")) if req.get("state") is not None else None
                init = to_device(req.get("init_args") or [])
                loaded = (path, req["kind"], init, int(req.get("seed", 0)), state)
                cand = Candidate(*loaded)
                reply = {"ok": True}
            elif op == "precompile":
                cand, reply = compile_then_reload(cand, loaded, to_device(req["inputs"]),
                                                  float(req.get("dry_run_s") or 10.0))
            elif op == "call":
                facts = cand.call(to_device(req["inputs"]), int(req["seed"]),
                                  req["trial_kind"], (bool(req["strict"]), req["library_ops"]),
                                  req["poison_sizes"])
                f = facts.pop("failure")
                if f is not None:
                    fatal = f[2]
                    reply = {"failure": list(f)}
                else:
                    facts["state"] = list(facts["state"])
                    reply = facts
            elif op == "load_state":
                cand.load_state(to_device(req["state"]))
                reply = {"ok": True}
            elif op == "stage":
                base = [to_device(x) for x in req["sets"]]
                staged = (base, [[x.clone() if isinstance(x, torch.Tensor) else x for x in b]
                                 for b in base])
                reply = {"ok": True}
            elif op == "time":
                timed = None
                reply, timed = time_calls(cand, staged, req)
            elif op == "timed_outputs":
                reply = {"outputs": timed}
                timed = None
            elif op == "graph_stats":
                reply = {"stats": cand.graph_stats() if cand is not None else None}
            else:
                reply = {"failure": ["other", f"unknown op {op!r}"]}
        except Failure as e:
            reply = {"failure": [e.check, e.message]}
        except BaseException as e:
            check, msg, fatal = classify(e, "candidate")
            reply = {"failure": [check, msg, fatal]}
        try:
            send(reply)
        except BaseException as e:
            send({"failure": ["crash", f"unsendable reply: {exc_line(e)}"]})
        if fatal:
            return 70


def main():
    config = CONFIG
    if DEVICE == "cuda":
        try:
            torch.cuda.init()
            torch.empty(1, device="cuda")
        except BaseException as e:
            # no answer here yet: the device is full or broken; typed for the checker (out
            # of memory there is retried, not the answer's fault)
            check, msg, _ = classify(e, "the candidate's process, starting,")
            send({"event": "start_failed", "failure": [check, msg]})
            return 1
    work = sandbox.confine(REPORT, MADE, config.get("hide") or [], int(config.get("uid", 65534)),
                           int(config.get("memory") or 0), int(config.get("cpu_seconds", 86400)))
    warmed = warm_device()
    send({"event": "ready", "sandbox": REPORT.as_list(), "pid": os.getpid(),
          "device": DEVICE, "warm": warmed})
    return serve(work)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)
