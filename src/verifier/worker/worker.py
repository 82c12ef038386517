"""drtc runtime worker: checks and times candidate kernels against their PyTorch reference.

drtc embeds this file and the `drtc_worker` package beside it in its binary, writes them
to its cache directory and starts this file as a subprocess, one per GPU (or several per
GPU, or several on CPU). It speaks JSON lines (`drtc_worker/protocol.py`). The rules are
those of design/semantics.md: `trials.py` verifies, `comparison.py` holds the value rules,
`guards.py` the instrumentation around the candidate, `timing.py` the CUDA-event timing,
`memory.py` peak memory and out-of-memory handling.

Requests (`op`): `verify`; `bench` (verify, then time); `prepare` (verify, then build the
timing session, torch.compile included, and hold it) followed by `time` (the held
session's timed loops only: the caller's exclusive phase) and `timed_report` (the timed
outputs checked, the figures; the session dropped), or by `release`; `warm` (start the spare candidate processes and wait
until they are ready); `ping`; `exit`. A request with `yield_gpu` (drtc holds a shared pass
on the GPU for it) stops before each trial and before the timing session is built, its GPU
work finished, says `{"event": "gpu_yield"}` and goes on at drtc's `{"resume": true}`, sent
once no other worker's timing waits for the GPU (`protocol.give_way`).

A candidate runs in this process only when the request says `trusted` (drtc's own
generated modules); every other one runs in a sandboxed process of its own
(`drtc_worker/isolated.py`, `runner.py`), which never holds the reference, the comparison
or this reply channel, and serves no later answer.

When the GPU faults or memory runs out, the worker answers with `fatal: true` and exits,
and the parent starts a fresh one.

Runs on torch 2.11/Triton 3.6 and torch 2.15/Triton 3.9.
"""

import os
import sys
import time

_STARTED = time.perf_counter()


def _early_device():
    """Starts the CUDA driver and retains the device's primary context (the one torch
    uses) while torch imports: ctypes releases the GIL for the driver's calls, so this
    overlaps the imports, and torch.cuda.init finds both done. Any failure leaves the
    work to torch, which reports it."""
    try:
        import ctypes

        lib = ctypes.CDLL("libcuda.so.1")
        if lib.cuInit(0) != 0:
            return
        dev = ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(dev), 0) != 0:
            return
        lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctypes.c_void_p()), dev)
    except Exception:  # noqa: BLE001 - torch's own start reports what went wrong
        pass


_EARLY = None
if os.environ.get("DRTC_DEVICE") == "cuda" and os.environ.get("DRTC_WORKER_EARLY_DEVICE") != "off":
    import threading

    _EARLY = threading.Thread(target=_early_device, name="drtc-early-device", daemon=True)
    _EARLY.start()

# The package sits beside this file; isolated mode (-I) and PYTHONSAFEPATH leave the
# script's directory off the path, so put it there.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from drtc_worker import protocol  # noqa: E402
from drtc_worker.protocol import PROTOCOL_VERSION, send  # noqa: E402

protocol.check_packages()

import numpy  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402

from drtc_worker import memory  # noqa: E402
from drtc_worker.common import DEVICE, Failure, cuda_broken, exc_line, is_gpu_fault  # noqa: E402
from drtc_worker.guards import Tamper  # noqa: E402
from drtc_worker.isolated import Spares  # noqa: E402
from drtc_worker.timing import Session, time_pair  # noqa: E402
from drtc_worker.trials import settle_then_give_way, verify_pair  # noqa: E402

_IMPORTED = time.perf_counter()

_threads = os.environ.get("DRTC_WORKER_THREADS")
if _threads:
    torch.set_num_threads(max(1, int(_threads)))


def _timing_failed(result, e):
    if isinstance(e, Failure):
        result["timing_error"] = e.message
        return
    if isinstance(e, KeyboardInterrupt):
        raise e
    if memory.is_oom(e):
        result["fatal"] = True
        result["timing_error"] = f"out of memory while timing: {exc_line(e)}"
        return
    if is_gpu_fault(e) or cuda_broken():
        result["fatal"] = True
    result["timing_error"] = exc_line(e)


class Worker:
    """The request loop's state: the tamper baseline and at most one prepared session."""

    def __init__(self):
        self.tamper = Tamper()
        # candidate processes kept started ahead (none where drtc sends one request)
        self.spares = Spares(count=int(os.environ.get("DRTC_RUNNER_SPARES", "1")))
        self.held = None  # (pair, session) from `prepare` to `timed_report`

    def drop_held(self):
        if self.held is not None:
            pair, session = self.held
            self.held = None
            session.close()
            pair.close()

    def handle(self, req):
        op = req.get("op")
        # drtc's deadline for this request, less its margin: every wait on a candidate's
        # process ends by it
        self.spares.deadline.start(req.get("timeout_s"))
        if op == "ping":
            return {"ok": True}
        if op == "warm":
            # start the spare candidate processes and wait until they are ready
            return {"ok": True, "ready": self.spares.warm()}
        if op in ("verify", "bench", "prepare"):
            self.drop_held()
            result, pair = verify_pair(req, self.tamper, self.spares)
            try:
                if op != "verify" and result["verified"] and not result.get("fatal"):
                    try:
                        if op == "bench":
                            result["timing"] = time_pair(pair, req)
                        else:
                            settle_then_give_way(req, self.spares.deadline)
                            built = time.perf_counter()
                            self.held = (pair, Session(pair, req))
                            result["phases"]["prepare_s"] = time.perf_counter() - built
                            pair = None
                            result["prepared"] = True
                    except BaseException as e:
                        _timing_failed(result, e)
            finally:
                if pair is not None:
                    pair.close()
            return result
        if op == "time":
            # the exclusive phase: the timed loops only; `timed_report` follows
            if self.held is None:
                return {"timing_error": "nothing prepared to time"}
            result = {}
            try:
                self.held[1].measure(req)
                result["measured"] = True
            except BaseException as e:
                _timing_failed(result, e)
                self.drop_held()
            return result
        if op == "timed_report":
            # a shared phase: the timed outputs checked, the figures
            if self.held is None:
                return {"timing_error": "nothing timed to report"}
            result = {}
            try:
                result["timing"] = self.held[1].report(req)
            except BaseException as e:
                _timing_failed(result, e)
            finally:
                self.drop_held()
            return result
        if op == "release":
            self.drop_held()
            return {"ok": True}
        return {"error": f"unknown op {op!r}"}


def _watch_parent(worker):
    """Ends this checker within 0.1 s of drtc's death (SIGKILL included: drtc runs no
    handler then, but this process is reparented), after asking every keeper to end its
    candidate's processes."""
    import threading
    import time

    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.1)
        # the keepers end their candidates' processes on their own (and would on this
        # process's death too: their parent-death signal)
        worker.spares.terminate()
        os._exit(75)

    threading.Thread(target=watch, daemon=True).start()


def main():
    import json

    info = {"event": "ready", "protocol": PROTOCOL_VERSION, "python": sys.version.split()[0],
            "torch": torch.__version__, "triton": triton.__version__,
            "numpy": numpy.__version__, "device": DEVICE,
            "interpret": os.environ.get("TRITON_INTERPRET") == "1",
            "cuda_available": torch.cuda.is_available(), "pid": os.getpid(),
            "matmul_precision": torch.get_float32_matmul_precision()}
    if DEVICE == "cuda":
        if not torch.cuda.is_available():
            send({"event": "fatal", "kind": "no_cuda",
                  "message": "torch.cuda.is_available() is False in the worker"})
            return 4
        if _EARLY is not None:
            _EARLY.join()
        torch.cuda.init()
        info["gpu"] = torch.cuda.get_device_name(0)
    device_up = time.perf_counter()
    worker = Worker()
    # where the start went after the interpreter itself was up: imports (numpy, torch,
    # Triton and the package), the device's context, the checker's own state (the tamper
    # baseline)
    info["start"] = {"imports_s": round(_IMPORTED - _STARTED, 4),
                     "device_s": round(device_up - _IMPORTED, 4),
                     "checker_s": round(time.perf_counter() - device_up, 4)}
    _watch_parent(worker)
    send(info)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        req = json.loads(line)
        if req.get("op") == "exit":
            break
        try:
            resp = worker.handle(req)
        except BaseException as e:  # the worker must answer; the parent restarts it
            resp = {"error": exc_line(e), "fatal": True}
        resp["id"] = req.get("id")
        try:
            send(resp)
        except ValueError:  # a NaN slipped into the metrics
            send({"id": req.get("id"), "error": "unserializable response", "fatal": True})
        if resp.get("fatal"):
            protocol.PROTO.flush()
            os._exit(70)
        memory.release()  # between candidates: Python cycles, then cached GPU blocks
    return 0


if __name__ == "__main__":
    sys.exit(main())
