"""The checker's side of an isolated candidate: one sandboxed process per untrusted answer
(`runner.py`), started ahead of need as a spare (torch imported, device initialized,
nothing of any answer loaded), spoken to in `wire` frames, and killed with everything it
started when the answer is done, when it misses a deadline, or when this checker dies.

An `IsolatedCandidate` offers what `candidate.Candidate` offers in process, so the trials
run the same way for both; everything it returns is a claim the checker verifies (values
compared against the reference computed here, in a process the candidate cannot reach)."""

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time

from . import sandbox, wire
from .common import DEVICE, Failure, to_device

RUNNER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runner.py")
STARTUP_SECONDS = 180.0
# the longest one step of a candidate's process may take where no request bounds it (scripts)
STEP_SECONDS = 300.0
# what a process that failed its start may say it failed by (else `worker_died`)
START_CHECKS = ("out_of_memory", "gpu_fault")
STDERR_TAIL_LINES = 30
# how long a keeper may take to end its candidate's processes before its group is killed
KEEPER_GRACE_SECONDS = 2.0
_UID_BASE = 1_900_000_000


def _memory_limit():
    """The address-space limit of a CPU candidate: the machine's memory (CUDA processes
    reserve more virtual memory than exists, so GPU candidates get none)."""
    if DEVICE == "cuda":
        return 0
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Runner:
    """One started candidate process (not yet ready until `wait_ready`)."""

    def __init__(self, n, hidden, pid_namespace):
        self.stderr_tail = collections.deque(maxlen=STDERR_TAIL_LINES)
        # tensors travel through shared memory, one arena per direction (`wire.Arena`);
        # the candidate's arena is its own: nothing of another answer is ever in it. Under
        # an address-space limit (CPU) each arena takes at most 1/16 of it: the mappings
        # count against the candidate's limit
        memory = _memory_limit()
        size = min(wire.ARENA_BYTES, memory // 16) if memory else wire.ARENA_BYTES
        self.arenas = (wire.Arena.create("drtc-to-candidate", size),
                       wire.Arena.create("drtc-to-checker", size))
        config = {"hide": hidden, "uid": _UID_BASE + (os.getpid() * 997 + n) % 100_000_000,
                  "memory": memory, "cpu_seconds": 24 * 3600,
                  "pid_namespace": pid_namespace,
                  "arenas": [a.fd if a is not None else None for a in self.arenas]}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-u", RUNNER, json.dumps(config)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=sandbox.candidate_env(os.environ), close_fds=True, start_new_session=True,
            pass_fds=[a.fd for a in self.arenas if a is not None])
        self.out = self.proc.stdin.fileno()
        self.inp = self.proc.stdout.fileno()
        wire.widen_pipe(self.out)
        wire.widen_pipe(self.inp)
        threading.Thread(target=self._drain, daemon=True).start()
        self.ready = None
        self.dead = False

    def _drain(self):
        for line in self.proc.stderr:
            self.stderr_tail.append(line.decode(errors="replace").rstrip())

    def wait_ready(self, deadline):
        """The process's ready message, waited for until STARTUP_SECONDS or `deadline`
        (the request's, a `Deadline`)."""
        if self.ready is None:
            msg = self.recv(deadline.step(STARTUP_SECONDS), "its process's start")
            if isinstance(msg, dict) and msg.get("event") == "start_failed":
                # sent before any answer reached the process: its own word on why
                f = msg.get("failure")
                check = f[0] if isinstance(f, list) and f and f[0] in START_CHECKS \
                    else "worker_died"
                self.kill()
                raise Failure(check, f"the candidate's process could not start: {f!r}"[:500])
            if not isinstance(msg, dict) or msg.get("event") != "ready":
                self.kill()
                raise Failure("worker_died", f"the candidate process did not start: {msg!r}"[:500])
            self.ready = msg
        return self.ready

    def send(self, msg):
        try:
            wire.send(self.out, msg, self.arenas[0])
        except (OSError, wire.WireError) as e:
            raise self._died(f"could not be sent a request ({e})")

    def recv(self, deadline, what):
        try:
            return wire.recv(self.inp, deadline=deadline, arena=self.arenas[1])
        except wire.Deadline:
            self.kill()
            raise Failure("timeout", f"the candidate did not finish ({what}) before the "
                                     "deadline; its process and everything it started were "
                                     "killed")
        except (OSError, wire.WireError) as e:
            raise self._died(str(e))

    def _died(self, why):
        try:
            status = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        self.kill()
        time.sleep(0.05)  # let the drain thread read what the dying process wrote
        if status is None:
            how = f"stopped answering ({why})"
        elif status < 0 or status > 128:
            # the keeper exits with 128 + the signal that killed the candidate's process
            sig = -status if status < 0 else status - 128
            how = f"was killed by signal {sig} ({signal.Signals(sig).name})" \
                if sig in signal.Signals._value2member_map_ else f"was killed by signal {sig}"
        else:
            how = f"exited with status {status}"
        tail = "\n".join(list(self.stderr_tail)[-8:])
        return Failure("worker_died", f"the candidate's process {how}"
                       + (f"; stderr:\n{tail}" if tail else ""))

    def request(self, msg, deadline, what):
        self.send(msg)
        reply = self.recv(deadline, what)
        if not isinstance(reply, dict):
            self.kill()
            raise Failure("crash", f"the candidate's process answered {type(reply).__name__}")
        return reply

    def terminate(self):
        """Asks the keeper to end everything: it kills the PID namespace (or, as subreaper,
        every descendant) and exits. Does not wait."""
        if self.dead:
            return
        self.dead = True
        try:
            os.kill(self.proc.pid, signal.SIGTERM)
        except OSError:
            pass

    def reap(self, deadline):
        """Waits for the keeper until `deadline` (time.monotonic()), then kills its process
        group, and closes the pipes."""
        try:
            self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass
        for a in self.arenas:
            if a is not None:
                a.close()
        self.arenas = (None, None)

    def kill(self):
        """The keeper first (it kills the whole PID namespace or, as subreaper, every
        descendant), then the process group."""
        if self.dead:
            return
        self.terminate()
        self.reap(time.monotonic() + KEEPER_GRACE_SECONDS)


class Deadline:
    """When the request being answered is due by this checker's clock: `seconds` after it
    was read (drtc's deadline for it, less the margin drtc keeps to kill a checker that does
    not answer), later by each wait for drtc while giving way (drtc moves its own by the
    same waits). Without a request's bound (scripts) each step gets STEP_SECONDS. Every wait
    on a candidate's process ends by it, its start included, so a hung answer gets the
    checker's timeout verdict, never drtc's kill of the checker. One per checker, started
    again by each request (`start`)."""

    def __init__(self):
        self.at = None

    def start(self, seconds):
        """A new request, due in `seconds` (None: no bound)."""
        self.at = None if seconds is None else time.monotonic() + float(seconds)

    def extend(self, seconds):
        if self.at is not None:
            self.at += seconds

    def step(self, seconds=STEP_SECONDS):
        """The deadline of a step that may take `seconds`: the earlier of that and the
        request's."""
        own = time.monotonic() + seconds
        return own if self.at is None else min(own, self.at)


class Spares:
    """Pre-started candidate processes. Started from the checker's main thread only (the
    keeper's parent-death signal follows the thread that started it)."""

    def __init__(self, count=1):
        self.count = count
        self.started = 0
        self.waiting = []
        self.live = []  # every process started and not yet killed
        self.hidden = [p for p in (os.environ.get("DRTC_HOME"), os.getcwd(),
                                   os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
                       if p]
        self.hidden += [p for p in os.environ.get("DRTC_RUNNER_HIDE", "").split(os.pathsep) if p]
        self.pid_namespace = None  # asked before the first start
        # the request being answered (the checker's loop sets it per request)
        self.deadline = Deadline()

    def _start(self):
        self.started += 1
        self.live = [r for r in self.live if not r.dead]
        if self.pid_namespace is None:
            self.pid_namespace = sandbox.device_starts_in_pid_namespace(DEVICE)
        runner = Runner(self.started, self.hidden, self.pid_namespace)
        self.live.append(runner)
        return runner

    def fill(self):
        while len(self.waiting) < self.count:
            self.waiting.append(self._start())

    def warm(self):
        """Starts the spares and waits until each is ready; returns how many are."""
        self.fill()
        for r in self.waiting:
            r.wait_ready(self.deadline)
        return len(self.waiting)

    def take(self):
        """A ready process for the next answer. A spare that died starting (started
        earlier, maybe while the GPU's memory was full) is replaced once by a fresh start
        before anything is judged by it; a start that timed out is not tried again."""
        runner = self.waiting.pop(0) if self.waiting else self._start()
        self.fill()
        try:
            runner.wait_ready(self.deadline)
            if runner.proc.poll() is not None:
                raise Failure("worker_died", "the spare exited while it waited")
        except Failure as e:
            if e.check == "timeout":
                raise
            runner.kill()
            runner = self._start()
            runner.wait_ready(self.deadline)
        return runner

    def terminate(self):
        """Asks every keeper started here to end its candidate's processes; no waiting (the
        checker's exit when drtc dies: the keepers finish on their own)."""
        for r in list(self.live):
            r.terminate()

    def close(self):
        """Kills every candidate process started here, spares and those in use: all keepers
        asked at once, then waited for under one deadline."""
        live = [r for r in self.live if not r.dead]
        for r in live:
            r.terminate()
        deadline = time.monotonic() + KEEPER_GRACE_SECONDS
        for r in live:
            r.reap(deadline)
        self.live = []
        self.waiting = []


def _failure(reply):
    f = reply.get("failure")
    if f is None:
        return None
    if not (isinstance(f, list) and len(f) >= 2):
        return ("crash", f"the candidate's process reported {f!r}"[:300], False)
    return (str(f[0]), str(f[1]), bool(f[2]) if len(f) > 2 else False)


class IsolatedCandidate:
    """A candidate loaded in its own sandboxed process."""

    def __init__(self, spares, path, kind, init_args, seed, ref_state):
        self.kind = kind
        self.spares = spares
        with open(path, encoding="utf-8", errors="replace") as f:
            source = f.read()
        self.load_request = {"op": "load", "source": source, "kind": kind,
                             "init_args": list(init_args), "seed": seed, "state": ref_state}
        self._load()

    def _load(self):
        """A spare process takes the answer: loaded and built, or a Failure."""
        self.runner = self.spares.take()
        self.sandbox = self.runner.ready.get("sandbox")
        # how tensors cross, from what this side set up (the candidate's word not needed)
        sizes = [a.size for a in self.runner.arenas if a is not None]
        self.channel = (f"shared memory, {min(sizes) >> 20} MiB each way"
                        if len(sizes) == 2 else "pipe")
        reply = self.runner.request(self.load_request, self._deadline(), "import")
        f = _failure(reply)
        if f is not None:
            self.close()
            raise Failure(f[0], f[1])

    def precompile(self, inputs, dry_run_s):
        """Has the answer's process compile its kernels ahead from a dry run on `inputs`
        (`precompile.compile_ahead`; the process loads the answer again afterwards). Returns
        (launches it says it compiled, seconds by this side's clock), or None when nothing
        was done. When the dry run left the process unusable, or the process failed the
        request, a fresh process loaded with the answer takes its place: the trials judge
        that one, as they would have without this step."""
        if self.runner is None:
            return None
        t0 = time.perf_counter()
        try:
            reply = self.runner.request({"op": "precompile", "inputs": inputs,
                                         "dry_run_s": dry_run_s}, self._deadline(),
                                        "compiling its kernels ahead")
            usable = _failure(reply) is None and not reply.get("restart")
        except Failure:
            usable = False
        if not usable:
            self.close()
            self._load()
            return None
        n = reply.get("launches")
        n = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0
        return (n, time.perf_counter() - t0) if n else None

    def _deadline(self):
        # the request being answered bounds each step (`Spares.deadline`)
        return self.spares.deadline.step()

    def call(self, inputs, seed, trial_kind, opts, poison_sizes, ref_out=None):
        strict, library_ops = opts
        if self.runner is None:
            return {"failure": ("worker_died", "the candidate's process is gone", False)}
        reply = self.runner.request({"op": "call", "inputs": inputs, "seed": seed,
                                     "trial_kind": trial_kind, "strict": strict,
                                     "library_ops": list(library_ops),
                                     "poison_sizes": list(poison_sizes)},
                                    self._deadline(), "call")
        facts = {"failure": _failure(reply), "violations": {}, "side": reply.get("side")}
        if facts["failure"] is not None:
            if facts["failure"][2]:
                self.close()
            return facts
        outputs = reply.get("outputs")
        if not isinstance(outputs, list):
            facts["failure"] = ("crash", "the candidate's process sent no outputs", False)
            return facts
        facts["outputs"] = to_device(outputs)
        late = reply.get("late")
        facts["late"] = to_device(late) if isinstance(late, list) else None
        v = reply.get("violations")
        facts["violations"] = {str(k): int(n) for k, n in v.items()
                               if isinstance(n, int)} if isinstance(v, dict) else {}
        facts["graph_last"] = reply.get("graph_last")
        facts["alias"] = [str(m) for m in reply.get("alias") or []]
        facts["inputs_changed"] = [i for i in reply.get("inputs_changed") or []
                                   if isinstance(i, int)]
        state = reply.get("state")
        if isinstance(state, list) and len(state) == 2 and all(
                s is None or isinstance(s, dict) for s in state):
            facts["state"] = (to_device(state[0]), to_device(state[1]))
        else:
            facts["state"] = (None, None)
        return facts

    def load_state(self, state):
        if self.runner is None:
            raise Failure("worker_died", "the candidate's process is gone")
        reply = self.runner.request({"op": "load_state", "state": state}, self._deadline(),
                                    "load_state_dict")
        f = _failure(reply)
        if f is not None:
            raise Failure(f[0], f[1])

    def stage(self, sets):
        """Sends the timing's input buffers to the candidate's process (each a list of
        inputs), where `time_staged` uses them."""
        if self.runner is None:
            raise Failure("worker_died", "the candidate's process is gone")
        reply = self.runner.request({"op": "stage", "sets": sets}, self._deadline(),
                                    "staging the timing inputs")
        f = _failure(reply)
        if f is not None:
            raise Failure(f[0], f[1])

    def time_staged(self, warmup, scales, flush_bytes):
        """Times one call per scale in the candidate's process, rotating over the staged
        buffers (each call on its buffer's values times the scale: see runner.py). Returns
        the per-call event and wall times it reports, this side's own clock over the loop
        (which the candidate's process cannot shorten) and the fingerprint it sent of each
        call's outputs (`fingerprint.py`, checked by the caller); the outputs stay there
        until `timed_outputs`."""
        if self.runner is None:
            raise Failure("worker_died", "the candidate's process is gone")
        t0 = time.perf_counter()
        self.runner.send({"op": "time", "warmup_calls": warmup, "scales": scales,
                          "flush_bytes": flush_bytes})
        done = self.runner.recv(self._deadline(), "timed calls")
        observed_ms = (time.perf_counter() - t0) * 1e3
        f = _failure(done) if isinstance(done, dict) else ("crash", "no answer", False)
        if f is not None:
            raise Failure(f[0], f"while timing: {f[1]}")
        reply = self.runner.recv(self._deadline(), "timed calls' results")
        f = _failure(reply) if isinstance(reply, dict) else ("crash", "malformed", False)
        if f is not None:
            raise Failure(f[0], f"while timing: {f[1]}")
        events = [float(x) for x in reply.get("events_ms") or []]
        walls = [float(x) for x in reply.get("walls_ms") or []]
        fingerprints = done.get("fingerprints")
        if len(events) != len(scales) or len(walls) != len(scales) \
                or not isinstance(fingerprints, list) or len(fingerprints) != len(scales):
            raise Failure("crash", "the candidate's process sent a malformed timing reply")
        return events, walls, observed_ms, fingerprints

    def timed_outputs(self, count):
        """The last outputs of each of the `count` staged buffers' timed calls."""
        if self.runner is None:
            raise Failure("worker_died", "the candidate's process is gone")
        reply = self.runner.request({"op": "timed_outputs"}, self._deadline(),
                                    "the timed calls' outputs")
        f = _failure(reply)
        if f is not None:
            raise Failure(f[0], f"while timing: {f[1]}")
        outputs = reply.get("outputs")
        if not isinstance(outputs, list) or len(outputs) != count \
                or not all(isinstance(o, list) for o in outputs):
            raise Failure("crash", "the candidate's process sent malformed timed outputs")
        return [to_device(o) for o in outputs]

    def graph_stats(self):
        if self.runner is None:
            return None
        reply = self.runner.request({"op": "graph_stats"}, self._deadline(), "graph stats")
        stats = reply.get("stats")
        return stats if isinstance(stats, dict) else None

    def close(self):
        if self.runner is not None:
            self.runner.kill()
            self.runner = None
