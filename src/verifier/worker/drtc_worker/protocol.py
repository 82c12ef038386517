"""The worker's protocol: JSON lines, one request per line on stdin, one response per line
on a private copy of the original stdout. Anything the reference or the candidate prints
(from Python or from C) goes to stderr, so a chatty candidate cannot corrupt the protocol.

Importing this module switches fd 1 to stderr; it must happen before torch is imported.
"""

import json
import os
import sys
import time

PROTOCOL_VERSION = 2


def _open_protocol():
    """Keeps a private handle on the original stdout and points fd 1 at stderr."""
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1)


PROTO = _open_protocol()


def send(obj):
    PROTO.write(json.dumps(obj, allow_nan=False, default=str) + "\n")
    PROTO.flush()


def give_way(req):
    """Between two trials, when drtc asked for it (`yield_gpu`, the request's shared pass on
    the GPU): says so and waits until drtc answers, which it does at once unless another
    worker's timing waits for the GPU, and then once that timing has run. The caller has
    finished its GPU work (synchronized) first. Returns the seconds it waited (drtc's
    deadline for the request moved by as much)."""
    if not req.get("yield_gpu"):
        return 0.0
    asked = time.monotonic()
    send({"id": req.get("id"), "event": "gpu_yield"})
    line = sys.stdin.readline()
    if not line:  # drtc is gone
        os._exit(75)
    if json.loads(line).get("resume") is not True:
        raise RuntimeError(f"expected drtc's resume after giving way, got {line.strip()!r}")
    return time.monotonic() - asked


def check_packages():
    """Says `fatal: missing_packages` and exits when numpy, torch or triton do not import."""
    missing = []
    for pkg in ("numpy", "torch", "triton"):
        try:
            __import__(pkg)
        except Exception as e:  # ImportError, or a broken install raising anything
            missing.append({"package": pkg, "error": f"{type(e).__name__}: {e}"})
    if missing:
        send({"event": "fatal", "kind": "missing_packages", "missing": missing,
              "python": sys.executable})
        sys.exit(3)
