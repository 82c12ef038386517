"""Spare candidate processes that fail their start (`drtc_worker/isolated.py`): a spare
that died before it was ready is replaced once by a fresh start before an answer takes it,
and a process that says why it could not start (`start_failed`, sent by `runner.py` before
any answer reached it: the GPU's memory full at its start) is failed by that typed check,
which the pool retries alone, instead of `worker_died`.

    python check_spare_start.py WORKER_DIR

Prints one JSON object per case."""

import json
import os
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
from drtc_worker import isolated, wire  # noqa: E402
from drtc_worker.common import Failure  # noqa: E402

# a spare that died before its answer came (before or after it said ready): the answer
# gets a fresh process
for when in ("before ready", "after ready"):
    spares = isolated.Spares(count=1)
    if when == "after ready":
        spares.warm()
    else:
        spares.fill()
    dead = spares.waiting[0]
    dead.proc.kill()
    dead.proc.wait()
    taken = spares.take()
    print(json.dumps({
        "case": f"spare died {when}",
        "replaced": taken is not dead,
        "ready": taken.ready.get("event") == "ready",
        "alive": taken.proc.poll() is None,
    }))
    spares.close()


def failed_start(message):
    """A Runner whose process sends `message` and exits, as runner.py does when its start
    fails; the check `wait_ready` raises."""
    r = object.__new__(isolated.Runner)
    read, write = os.pipe()
    wire.send(write, message, None)
    os.close(write)
    r.inp = read
    r.arenas = [None, None]
    r.proc = subprocess.Popen([sys.executable, "-c", "pass"])
    r.proc.wait()
    r.stderr_tail = []
    r.ready = None
    r.dead = False
    r.kill = lambda: None
    try:
        r.wait_ready(isolated.Deadline())
    except Failure as e:
        return e.check, e.message
    return None, None


oom = failed_start({"event": "start_failed",
                    "failure": ["out_of_memory", "CUDA error: out of memory"]})
forged = failed_start({"event": "start_failed", "failure": ["verified", "all good"]})
print(json.dumps({"case": "start failed", "oom_check": oom[0], "oom_message": oom[1],
                  "other_check": forged[0]}))
