"""A verification actor on a Ray cluster: drtc's worker program (shipped by the bridge as
file contents: clusters do not share paths) run as this actor's own subprocess, spoken to
in the same JSON lines as drtc's local pool speaks, so a verdict on the cluster is the
verdict a local worker gives. The actor owns its device (a GPU Ray assigned it, or the
CPU under Triton's interpreter), keeps its worker warm between calls, starts a fresh one
after a fatal answer, a death or a timeout, and kills the worker's whole process group
when the deadline passes, as the local pool does.
"""

import collections
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# Lines of the worker's stderr kept for failure reports (the local pool keeps as many).
STDERR_TAIL_LINES = 40
# How long a client's prepared timing session is kept for it (between its `prepare` and its
# `time`); a client that does not come back by then loses it to the next request.
HOLD_S = 120.0


def describe_status(code):
    """`Popen.returncode` in the words of drtc's local pool."""
    if code is not None and code < 0:
        sig = -code
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "signal"
        return f"was killed by signal {sig} ({name})"
    return f"exited with status {code if code is not None else -1}"


def _tail(text):
    return "\n".join((text or "").splitlines()[-STDERR_TAIL_LINES:])


def install(worker_files):
    """The worker program's directory on this node, one per content (`drtc-ray-worker-<hash>`
    in the temporary directory), shared by the node's actors and kept for the next; written
    privately and renamed into place, so no actor runs a half-written copy."""
    digest = hashlib.sha256()
    for name in sorted(worker_files):
        digest.update(name.encode() + b"\0" + worker_files[name].encode() + b"\0")
    root = os.path.join(tempfile.gettempdir(), f"drtc-ray-worker-{digest.hexdigest()[:16]}")
    if os.path.isfile(os.path.join(root, ".complete")):
        return root
    tmp = tempfile.mkdtemp(prefix=".drtc-ray-worker-")
    for name, text in worker_files.items():
        path = os.path.join(tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    open(os.path.join(tmp, ".complete"), "w").close()
    try:
        os.rename(tmp, root)
    except OSError:  # another actor put the same files there first, or a damaged copy
        if not os.path.isfile(os.path.join(root, ".complete")):
            return tmp
        shutil.rmtree(tmp, ignore_errors=True)
    return root


class _Process:
    """One running worker: its pipes, a reader thread per stream, its stderr tail."""

    def __init__(self, script, env):
        self.proc = subprocess.Popen(
            [sys.executable, "-u", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, start_new_session=True, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.tail = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.next_id = 0
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self):
        for line in self.proc.stderr:
            self.tail.append(line.rstrip("\n"))

    def stderr(self):
        return "\n".join(self.tail)

    def read(self, deadline):
        """The next JSON line, `"timeout"` or `"eof"`."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return "timeout"
            if line is None:
                return "eof"
            try:
                return json.loads(line)
            except ValueError:
                continue  # not ours: the protocol fd only carries JSON

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.kill()
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def died(self):
        """Waits a moment for the exit status, then kills what is left."""
        try:
            code = self.proc.wait(timeout=2)
            status = describe_status(code)
        except subprocess.TimeoutExpired:
            status = "stopped answering"
        self.kill()
        time.sleep(0.05)  # let the stderr reader drain what the dying process wrote
        return status


class VerifierActor:
    """What one actor holds: the worker program's files and at most one running worker.

    The actor is threaded (several clients may share it: the reward's named actors), but
    its worker serves one request at a time, and after a client's `prepare` only that
    client's next request (its `time` or `release`) runs until the session is released:
    no other request comes between a candidate's preparation and its timing."""

    def __init__(self, worker_files, device, threads, startup_timeout):
        self.dir = install(worker_files)
        self.device = device
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.worker = None
        self.info = None
        self.calls = 0
        self.turn = threading.Condition()
        self.running = False
        self.owner = None  # the client whose prepared session the worker holds
        self.owner_until = 0.0

    def ping(self):
        """Answers while a request runs: the actor is alive, not hung."""
        return True

    def _enter(self, client):
        with self.turn:
            while True:
                if self.owner is not None and time.monotonic() > self.owner_until:
                    self.owner = None  # its client never came back for the timing
                if not self.running and self.owner in (None, client):
                    self.running = True
                    return
                self.turn.wait(timeout=1.0)

    def _leave(self, client, op, result):
        with self.turn:
            self.running = False
            reply = result.get("reply") if isinstance(result, dict) else None
            if op == "prepare" and isinstance(reply, dict) and reply.get("prepared") is True:
                self.owner, self.owner_until = client, time.monotonic() + HOLD_S
            elif self.owner == client:
                self.owner = None
            self.turn.notify_all()

    def pid(self):
        return os.getpid()

    def _env(self):
        env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
        if self.device == "cpu":
            env.update(TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="", DRTC_DEVICE="cpu")
        else:
            env.pop("TRITON_INTERPRET", None)
            env["DRTC_DEVICE"] = "cuda"  # CUDA_VISIBLE_DEVICES: the GPU Ray assigned
        if self.threads:
            env.update(DRTC_WORKER_THREADS=str(self.threads), OMP_NUM_THREADS=str(self.threads))
        return env

    def _start(self):
        """A running worker, or a dict saying why none could start."""
        if self.worker is not None and self.worker.proc.poll() is None:
            return None
        self.worker = None
        w = _Process(os.path.join(self.dir, "worker.py"), self._env())
        v = w.read(time.monotonic() + self.startup_timeout)
        if isinstance(v, dict) and v.get("event") == "ready":
            self.worker, self.info = w, v
            return None
        if isinstance(v, dict) and v.get("kind") == "missing_packages":
            w.kill()
            return {"missing_packages": [m.get("package") for m in v.get("missing", [])],
                    "python": sys.executable}
        if v == "timeout":
            message = f"no answer within {self.startup_timeout:.0f} s; stderr:\n{w.stderr()}"
            w.kill()
        elif v == "eof":
            status = w.died()
            message = f"it {status}; stderr:\n{w.stderr()}"
        else:
            message = v.get("message") or json.dumps(v)
            w.kill()
        return {"start_error": message}

    def ready_info(self):
        """Starts the worker (if not running) and returns its `ready` message."""
        self._enter(None)
        result = {}
        try:
            failed = self._start()
            result = failed if failed is not None else {"info": self.info}
            return result
        finally:
            self._leave(None, "info", result)

    def call(self, payload, files, timeout, client=None):
        """One request of `client`: the worker's reply, or `timed_out`/`died` with its
        stderr tail. `files` maps the payload's path fields to their contents, written
        here under the same file names."""
        self._enter(client)
        result = {}
        try:
            result = self._call(payload, files, timeout)
            return result
        finally:
            self._leave(client, payload.get("op"), result)

    def _call(self, payload, files, timeout):
        failed = self._start()
        if failed is not None:
            return failed
        self.calls += 1
        scratch = os.path.join(self.dir, "files", f"{os.getpid()}-{self.calls}")
        for key, text in (files or {}).items():
            name = os.path.basename(payload[key])
            os.makedirs(os.path.join(scratch, key), exist_ok=True)
            path = os.path.join(scratch, key, name)
            with open(path, "w") as f:
                f.write(text)
            payload[key] = path
        try:
            return self._exchange(payload, timeout)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _exchange(self, payload, timeout):
        w = self.worker
        w.next_id += 1
        payload["id"] = w.next_id
        try:
            w.proc.stdin.write(json.dumps(payload) + "\n")
            w.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return self._died(w)
        deadline = time.monotonic() + timeout
        while True:
            v = w.read(deadline)
            if v == "timeout":
                w.kill()
                self.worker = None
                return {"timed_out": True, "stderr": w.stderr()}
            if v == "eof":
                return self._died(w)
            if v.get("id") != payload["id"]:
                continue  # a stale or unsolicited line
            if v.get("fatal") is True:
                # the worker exits by itself after a fatal answer; make sure of it
                w.kill()
                self.worker = None
            return {"reply": v, "stderr": w.stderr()}

    def _died(self, w):
        status = w.died()
        self.worker = None
        return {"died": status, "stderr": w.stderr()}

    def run(self, argv, env, timeout):
        """Runs a command on this actor's node (a shard of `drtc synth`): its exit status,
        its stdout and the end of its stderr; killed with its process group at the
        deadline."""
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=dict(os.environ, **env),
                             start_new_session=True, text=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            return {"timed_out": True, "stderr": _tail(err)}
        return {"status": p.returncode, "stdout": out, "stderr": _tail(err)}

    def stop(self):
        if self.worker is not None:
            self.worker.kill()
            self.worker = None
        return True
