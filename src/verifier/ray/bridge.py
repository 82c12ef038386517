"""drtc's Ray bridge: the one process through which drtc reaches a Ray cluster.

drtc starts it (embedded in its binary, like the worker) and speaks JSON lines to it: a
`start` request names the cluster (`local`: a cluster of this process's own, shut down
with it; `auto`: the cluster RAY_ADDRESS or a running local head names, else a local
one; an address) and the actors; then `call` requests carry the same JSON the local pool
sends its workers, with the contents of the files they name, to one actor each, and the
answers come back by id as they finish. One verification actor per GPU (`num_gpus=1`),
or CPU actors under Triton's interpreter (`verifier_actor.py`).

Faults: an actor that dies (RayActorError: OOM kill, node loss, preemption) or hangs (a
request in flight for PING_EVERY_S, and then the actor does not answer a ping, on its own
thread, within PING_TIMEOUT_S) is killed, replaced, and its request retried once on the
replacement; a second failure is answered as a death with both reasons. The
worker's own deadline and death inside a live actor are answered as the local pool
answers them (`timed_out`, `died`), never retried: they are the candidate's.

When drtc exits (stdin closes), the bridge kills the actors it started (unless they are
shared: named, detached, in the `drtc` namespace, for every reward worker of a job) and
disconnects; a local cluster stops with it.
"""

import json
import os
import queue
import socket
import sys
import threading
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# A private copy of stdout for the protocol; everything else (Ray's logs) goes to stderr.
_fd = os.dup(1)
os.dup2(2, 1)
sys.stdout = sys.stderr
PROTO = os.fdopen(_fd, "w", buffering=1)
_send_lock = threading.Lock()

# How long a cluster's address may take to accept a connection.
PROBE_S = 10.0
# After drtc's death, how long connecting and placing the actors may still take before
# the bridge gives up on ending them cleanly and exits.
ABANDON_S = 60.0
# An actor with a request in flight is pinged this often; one that does not answer a ping
# within PING_TIMEOUT_S is hung (a stopped or wedged process, a lost node) and replaced. A
# live actor always answers: pings run on a thread of their own, beside the requests, and
# the worker's deadline is the actor's to enforce.
PING_EVERY_S = 10.0
PING_TIMEOUT_S = 10.0
# Requests a threaded actor takes at once (one runs on its worker; the others wait their
# turn inside it, from other clients of a shared actor).
ACTOR_CONCURRENCY = 64


def send(obj):
    with _send_lock:
        PROTO.write(json.dumps(obj, default=str) + "\n")
        PROTO.flush()


def read_worker_files(root):
    files = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            if n.endswith(".py"):
                path = os.path.join(dirpath, n)
                with open(path) as f:
                    files[os.path.relpath(path, root)] = f.read()
    return files


def reachable(address):
    """Raises ConnectionError unless HOST:PORT (or ray://HOST:PORT) accepts a TCP
    connection within PROBE_S: Ray itself keeps retrying an address nobody answers at."""
    hostport = address.split("://", 1)[-1].strip("/")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return  # not HOST:PORT: Ray says what is wrong with it
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_S):
            pass
    except OSError as e:
        raise ConnectionError(f"nothing answers at {address}: {e}") from e


def running_cluster(ray):
    """The address of the Ray cluster `auto` would join on this machine, or None."""
    try:
        from ray._private.services import get_ray_address_from_environment

        found = get_ray_address_from_environment("auto", None)
    except Exception:  # noqa: BLE001 - none found (or an older Ray): start a local one
        return None
    return None if found in (None, "", "auto") else found


def connect(ray, start):
    """Connects to (or starts) the cluster; returns what kind of cluster it is."""
    target = start["target"]
    common = dict(namespace=start.get("namespace"), log_to_driver=False,
                  logging_level="ERROR")
    if target == "auto" and not os.environ.get("RAY_ADDRESS"):
        found = running_cluster(ray)
        try:
            if found is None:
                raise ConnectionError("no running cluster")
            reachable(found)
            ray.init(address=found, **common)
            return f"running cluster at {found}"
        except (ConnectionError, RuntimeError, ValueError):
            target = "local"
    if target == "auto":
        reachable(os.environ["RAY_ADDRESS"])
        ray.init(address=os.environ["RAY_ADDRESS"], **common)
        return "cluster at RAY_ADDRESS"
    if target == "local":
        ray.init(num_cpus=start["cpus"], num_gpus=start.get("gpus"),
                 include_dashboard=False, object_store_memory=100 * 1024 * 1024, **common)
        return "local cluster"
    reachable(target)
    ray.init(address=target, **common)
    return f"cluster at {target}"


class Actors:
    """The actors by index, their replacements and per-actor counts."""

    def __init__(self, ray, start, worker_files):
        import verifier_actor

        ray.cloudpickle.register_pickle_by_value(verifier_actor)
        self.ray = ray
        self.device = start["device"]
        self.shared = bool(start.get("shared"))
        self.namespace = start.get("namespace")
        # shared actors are named by the worker program's content too, so a client of
        # another drtc version starts its own instead of reusing these
        self.tag = os.path.basename(os.path.normpath(start["worker_dir"])).split("-")[-1][:8]
        self.args = (worker_files, self.device, start.get("threads"),
                     float(start["startup_timeout_s"]))
        self.remote = ray.remote(concurrency_groups={"control": 1})(
            verifier_actor.VerifierActor)
        resources = ray.cluster_resources()
        if self.device == "cuda":
            have = int(resources.get("GPU", 0))
            if have == 0:
                raise RuntimeError("the Ray cluster has no GPU (use --device cpu)")
            n = min(start.get("actors") or have, have)
        else:
            n = start.get("actors") or max(1, int(resources.get("CPU", 1)))
        self.handles = [None] * n
        self.generation = [0] * n
        self.requests = [0] * n
        self.busy_s = [0.0] * n
        # whether the actor at an index has answered since it was placed: until it has, it
        # may still be waiting for its resources, and a silent ping says nothing
        self.answered = [False] * n
        for i in range(n):
            self.handles[i] = self._make(i)

    def _make(self, i):
        opts = dict(num_cpus=1, max_restarts=0, max_concurrency=ACTOR_CONCURRENCY)
        if self.device == "cuda":
            opts["num_gpus"] = 1
        if self.shared:
            opts.update(name=f"drtc-verifier-{self.device}-{self.tag}-{i}",
                        namespace=self.namespace,
                        lifetime="detached", get_if_exists=True)
        for attempt in range(20):
            try:
                return self.remote.options(**opts).remote(*self.args)
            except ValueError:  # a dead actor's name not yet released
                if attempt == 19:
                    raise
                time.sleep(0.5)
        raise AssertionError("unreachable")

    def replace(self, i):
        try:
            self.ray.kill(self.handles[i], no_restart=True)
        except Exception:  # already gone
            pass
        if self.shared:
            time.sleep(0.5)  # let the name go before taking it again
        self.generation[i] += 1
        self.answered[i] = False
        self.handles[i] = self._make(i)

    def placement(self):
        """(index, node, pid) of every actor, once each is up."""
        refs = [h.pid.remote() for h in self.handles]
        pids = self.ray.get(refs, timeout=600)
        self.answered = [True] * len(pids)
        return [{"actor": i, "pid": p} for i, p in enumerate(pids)]

    def stop(self):
        if self.shared:
            return
        for h in self.handles:
            try:
                self.ray.get(h.stop.remote(), timeout=5)
            except Exception:
                pass
            try:
                self.ray.kill(h, no_restart=True)
            except Exception:
                pass


class Pending:
    """One request in flight: an actor method (`call`: a worker request; `run`: a
    command) and its arguments, the deadline's last argument."""

    def __init__(self, rid, actor, method, args, timeout):
        self.rid = rid
        self.actor = actor
        self.method = method
        self.args = args
        self.timeout = timeout
        self.next_ping = 0.0
        self.ping_ref = None
        self.ping_sent = 0.0
        self.attempt = 0
        self.first_failure = None
        self.started = time.monotonic()
        self.ref = None


def ship(payload):
    """The contents of the files the payload names (the actor may be on another node)."""
    files = {}
    for key in ("reference", "candidate"):
        path = payload.get(key)
        if isinstance(path, str):
            with open(path) as f:
                files[key] = f.read()
    return files


def watch_parent(serving):
    """Ends this process when drtc died while it connects to a cluster and places the
    actors, and those calls (which cannot be interrupted) do not end within
    ABANDON_S; once `serving` is set, the request loop notices drtc's end itself and stops
    the actors and a local cluster cleanly."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            if serving.is_set():
                return
            time.sleep(0.5)
        if not serving.wait(timeout=ABANDON_S):
            os._exit(75)

    threading.Thread(target=watch, daemon=True).start()


def main():
    inbox = queue.Queue()

    def read_stdin():
        for line in sys.stdin:
            line = line.strip()
            if line:
                inbox.put(json.loads(line))
        inbox.put(None)  # drtc is gone

    start = json.loads(sys.stdin.readline())
    serving = threading.Event()
    watch_parent(serving)
    try:
        import ray
    except Exception as e:
        send({"event": "fatal", "kind": "missing_packages",
              "missing": [{"package": "ray", "error": f"{type(e).__name__}: {e}"}]})
        return 3
    began = time.monotonic()
    try:
        kind = connect(ray, start)
        actors = Actors(ray, start, read_worker_files(start["worker_dir"]))
        placed = actors.placement()
    except Exception as e:
        send({"event": "fatal", "kind": "connect", "message": f"{type(e).__name__}: {e}"})
        return 4
    startup_s = time.monotonic() - began
    ctx = ray.get_runtime_context()
    send({"event": "ready", "cluster": kind, "address": getattr(ctx, "gcs_address", None),
          "resources": ray.cluster_resources(), "nodes": len(ray.nodes()),
          "actors": placed, "device": actors.device,
          "startup_s": startup_s})
    serving.set()
    threading.Thread(target=read_stdin, daemon=True).start()
    startup = float(start["startup_timeout_s"])
    pending = {}  # ObjectRef -> Pending
    failures = {}  # reason -> count
    retried = 0
    parent = os.getppid()
    job_started = time.monotonic()
    client = uuid.uuid4().hex  # this bridge, to a shared actor

    def submit(p):
        p.started = time.monotonic()
        p.next_ping, p.ping_ref = p.started + PING_EVERY_S, None
        args = [dict(a) if isinstance(a, dict) else a for a in p.args]
        p.ref = getattr(actors.handles[p.actor], p.method).remote(*args)
        pending[p.ref] = p

    def failed(p, reason):
        """An actor died or hung under `p`: replace it; retry once, then answer."""
        nonlocal retried
        failures[reason.split(":")[0]] = failures.get(reason.split(":")[0], 0) + 1
        actors.replace(p.actor)
        if p.attempt == 0:
            retried += 1
            p.attempt, p.first_failure = 1, reason
            submit(p)
        else:
            send({"id": p.rid, "died": f"was lost with its Ray actor twice ({p.first_failure}; "
                                       f"then, on a replacement actor, {reason})",
                  "stderr": "", "ray": True})

    while True:
        stop = False
        while True:
            try:
                msg = inbox.get(timeout=0.02 if pending else 0.2)
            except queue.Empty:
                break
            if msg is None:
                stop = True
                break
            op = msg.get("op")
            if op == "call":
                try:
                    files = ship(msg["payload"])
                except OSError as e:
                    send({"id": msg["id"], "reply": {"error": f"cannot read {e.filename}: "
                                                              f"{e.strerror}"}, "stderr": ""})
                    continue
                timeout = float(msg["timeout_s"])
                submit(Pending(msg["id"], msg["actor"], "call",
                               (msg["payload"], files, timeout, client), timeout))
            elif op == "run":
                timeout = float(msg["timeout_s"])
                submit(Pending(msg["id"], msg["actor"], "run",
                               (msg["argv"], msg.get("env") or {}, timeout), timeout))
            elif op == "info":
                submit(Pending(msg["id"], msg["actor"], "ready_info", (), 0.0))
            elif op == "stats":
                wall = time.monotonic() - job_started
                send({"id": msg["id"], "stats": {
                    "cluster": kind, "device": actors.device, "wall_s": wall,
                    "startup_s": startup_s,
                    "retried": retried, "failures": failures,
                    "actors": [{"actor": i, "requests": actors.requests[i],
                                "busy_s": actors.busy_s[i],
                                "replaced": actors.generation[i]}
                               for i in range(len(actors.handles))]}})
            elif op == "exit":
                stop = True
                break
        if stop or os.getppid() != parent:
            break
        if not pending:
            continue
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.05)
        for ref in ready:
            p = pending.pop(ref)
            try:
                out = ray.get(ref)
            except ray.exceptions.RayActorError as e:
                failed(p, f"actor died: {str(e).splitlines()[0][:300]}")
                continue
            except Exception as e:  # the actor's own code raised: answered, not retried
                send({"id": p.rid, "died": f"was lost: its Ray actor raised {type(e).__name__}: "
                                           f"{str(e).splitlines()[0][:300]}", "stderr": ""})
                continue
            actors.answered[p.actor] = True
            if p.method != "ready_info":  # a warm-up is no request
                actors.requests[p.actor] += 1
                actors.busy_s[p.actor] += time.monotonic() - p.started
            send(dict(out, id=p.rid))
        now = time.monotonic()
        for ref, p in list(pending.items()):
            if p.ping_ref is None:
                if now >= p.next_ping:
                    h = actors.handles[p.actor]
                    p.ping_ref = h.ping.options(concurrency_group="control").remote()
                    p.ping_sent = now
                continue
            answered, _ = ray.wait([p.ping_ref], timeout=0)
            if answered:
                # a dead actor's ping raises; its request's own ref says so next
                p.ping_ref, p.next_ping = None, now + PING_EVERY_S
                actors.answered[p.actor] = True
            elif now - p.ping_sent > (PING_TIMEOUT_S if actors.answered[p.actor]
                                      else startup):
                del pending[ref]
                failed(p, f"actor hung: no answer to a ping within {PING_TIMEOUT_S:.0f} s")
    actors.stop()
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
