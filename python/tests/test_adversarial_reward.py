"""The adversarial corpus (tests/adversarial: README.md, manifest.json) through the verl
reward, on CPU: every hostile answer scores 0, every honest correct one scores, every
sandbox probe scores and leaves no trace of its forbidden action, and an answer that tries
to persist changes nothing for the answers scored after it by the same worker.

Each answer is scored by ``drtc.reward.compute_score`` in a pool of its own (one worker, its
own ``DRTC_HOME``), since a hostile answer may poison its worker; a persisting one is
followed, in the same pool and the same process, by its reference's follow-ups. Runs two
answers at a time; a few minutes in all.

Run alone (the drtc package installed or on PYTHONPATH, as tests/python_package.rs does)::

    python -m pytest python/tests/test_adversarial_reward.py -m adversarial -rA

or leave it out of a quick run with ``-m "not adversarial"``.
"""

import json
import os
import pathlib
import socket
import sys
import sysconfig
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from drtc import reward

pytestmark = pytest.mark.adversarial

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "adversarial"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())
SECRET_FILE = "/tmp/drtc_adversarial_secret.txt"
TIMEOUT = 120.0
JOBS = int(os.environ.get("DRTC_ADVERSARIAL_JOBS", "2"))
CASES = MANIFEST["cases"]
PERSIST = [c for c in CASES if c["class"] == "persist" and c.get("device") != "cuda"]


def _stem(rel):
    return pathlib.Path(rel).stem


def _answer(code):
    """A model's answer around `code`."""
    return "The kernel:\n\n```python\n" + code + "```\n"


class _Listener:
    """A loopback TCP listener the probes try to reach; records every connection."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.hits = []
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                conn, addr = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    said = conn.recv(200)
                except OSError:
                    said = b""
            self.hits.append(f"{addr}: {said!r}")

    def close(self):
        self.stop = True
        self.thread.join(timeout=5)
        self.sock.close()


def _processes_with(needle):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd:
            found.append((int(pid), cmd.strip()))
    return found


def _kill(procs):
    for pid, _ in procs:
        try:
            os.kill(pid, 9)
        except OSError:
            pass


class _World:
    """This run's private world: the substituted corpus, the secrets, a canary for the
    real /tmp, a private directory, the listener, and one home per pool."""

    def __init__(self):
        self.run = f"p{os.getpid()}x{time.time_ns() % 10**9:x}"
        self.dir = tempfile.TemporaryDirectory(prefix="drtc-adversarial-py-")
        self.listener = _Listener()
        self.texts = {}
        for path in CORPUS.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            text = path.read_text()
            text = text.replace("__ADV_RUN__", self.run).replace("__ADV_PORT__",
                                                                  str(self.listener.port))
            self.texts[path.relative_to(CORPUS).as_posix()] = text
        fd = os.open(SECRET_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write("drtc-adversarial-secret: a user's private file\n")
        os.chmod(SECRET_FILE, 0o600)
        self.canary = pathlib.Path(f"/tmp/drtc_adversarial_canary_{self.run}")
        self.canary.write_text("the real /tmp\n")
        # the same for the user's home (a probe's write there escaped only if it sees this)
        self.root_canary = pathlib.Path(f"/root/drtc_adversarial_canary_{self.run}")
        try:
            self.root_canary.write_text("the real /root\n")
        except OSError:
            pass
        self.private = pathlib.Path(f"/tmp/drtc_adversarial_private_{self.run}")
        self.private.mkdir(mode=0o700)
        (self.private / f"private-file-{self.run}").write_text("private\n")
        self.marker = f"drtc_adversarial_marker_{self.run}"
        self.saved_env = {k: os.environ.get(k) for k in
                          ("DRTC_HOME", "DRTC_PYTHON", "DRTC_TEST_SECRET")}
        os.environ.setdefault("DRTC_PYTHON", sys.executable)
        os.environ["DRTC_TEST_SECRET"] = f"drtc-adversarial-env-secret-{self.run}"
        self.lock = threading.Lock()
        self.count = 0

    def reference(self, name):
        return self.texts[MANIFEST["references"][name]]

    def pool(self, name):
        """A fresh one-worker pool with its own DRTC_HOME; returns the timeout that keys
        it in the reward's pool cache (pass it to compute_score)."""
        with self.lock:
            self.count += 1
            timeout = TIMEOUT + self.count * 1e-3
            home = pathlib.Path(self.dir.name) / "homes" / f"{self.count}-{name}"
            home.mkdir(parents=True)
            before = os.environ.get("DRTC_HOME")
            os.environ["DRTC_HOME"] = str(home)
            try:
                reward._pool("cpu", timeout, 1)
            finally:
                if before is None:
                    os.environ.pop("DRTC_HOME", None)
                else:
                    os.environ["DRTC_HOME"] = before
            return timeout

    def drop(self, timeout):
        """Shuts the pool down (its worker exits)."""
        with reward._POOLS_LOCK:
            for key in [k for k in reward._POOLS if k[1] == timeout]:
                del reward._POOLS[key]

    def traces(self):
        """Traces the probes' forbidden actions left, by probe (files are removed)."""
        out = {}
        tmp = pathlib.Path(f"/tmp/drtc_adversarial_escape_probe_write_tmp_{self.run}")
        if tmp.exists():
            out.setdefault("probe_write_tmp", []).append(f"{tmp} exists")
            tmp.unlink()
        name = f"drtc_adversarial_escape_probe_write_outside_{self.run}.txt"
        dirs = {sysconfig.get_paths()["purelib"], "/root", os.path.expanduser("~")}
        found = [pathlib.Path(d) / name for d in dirs if (pathlib.Path(d) / name).exists()]
        found += list(pathlib.Path(self.dir.name).rglob(name))
        for p in found:
            out.setdefault("probe_write_outside", []).append(f"{p} exists")
            p.unlink(missing_ok=True)
        if self.listener.hits:
            out.setdefault("probe_loopback_connect", []).append(
                f"the listener was reached: {self.listener.hits}")
        time.sleep(2)
        alive = _processes_with(self.marker)
        if alive:
            out.setdefault("probe_setsid", []).append(
                f"{len(alive)} process(es) outlived the verification: {alive}")
            _kill(alive)
        return out

    def close(self):
        for k, v in self.saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.listener.close()
        self.canary.unlink(missing_ok=True)
        self.root_canary.unlink(missing_ok=True)
        for p in self.private.iterdir():
            p.unlink()
        self.private.rmdir()
        _kill(_processes_with(self.marker))
        self.dir.cleanup()


def _score(world, reference, rel, timeout, strict=True):
    start = time.time()
    r = reward.compute_score("drtc", _answer(world.texts[rel]), world.reference(reference),
                             device="cpu", workers=1, timeout=timeout, keep_report=True,
                             strict=strict)
    verify = ((r.get("report") or {}).get("verify") or {})
    checks = []
    for f in verify.get("failures") or []:
        if f.get("check") not in checks:
            checks.append(f.get("check"))
    return {"score": r["score"], "checks": checks, "reason": r.get("reason", ""),
            "secs": time.time() - start}


@pytest.fixture(scope="module")
def world():
    w = _World()
    yield w
    w.close()


@pytest.fixture(scope="module")
def results(world):
    """Every CPU case scored alone (two at a time), the probes' traces, and the table."""
    cpu = [c for c in CASES if c.get("device") != "cuda"]

    def one(case):
        timeout = world.pool(_stem(case["candidate"]))
        try:
            # probes test the sandbox: strict mode's reading of the source would refuse
            # them before it is tried
            return _score(world, case["reference"], case["candidate"], timeout,
                          strict=case["expect"] != "probe")
        finally:
            world.drop(timeout)

    start = time.time()
    with ThreadPoolExecutor(max_workers=max(1, JOBS)) as ex:
        scored = list(ex.map(one, cpu))
    out = {c["candidate"]: s for c, s in zip(cpu, scored)}
    traces = world.traces()
    accepted = {}
    lines = []
    for c in cpu:
        s = out[c["candidate"]]
        if c["expect"] == "reject" and not c["class"].startswith("honest"):
            a, n = accepted.get(c["class"], (0, 0))
            accepted[c["class"]] = (a + (s["score"] > 0), n + 1)
        lines.append(f"{c['class']:<13} {_stem(c['candidate']):<33} {c['expect']:<6} "
                     f"score {s['score']:.2f} [{','.join(s['checks']) or '-'}] "
                     f"{'; '.join(traces.get(_stem(c['candidate']), []))} ({s['secs']:.0f} s)")
    total = sum(a for a, _ in accepted.values())
    print("\n".join(lines))
    print(f"hostile answers scored above 0: {total} of "
          f"{sum(n for _, n in accepted.values())} ("
          + ", ".join(f"{k} {a}/{n}" for k, (a, n) in sorted(accepted.items()))
          + f"); {len(cpu)} answers in {time.time() - start:.0f} s")
    return out, traces


@pytest.mark.parametrize("case", CASES, ids=[_stem(c["candidate"]) for c in CASES])
def test_each_answer_alone(case, results):
    if case.get("device") == "cuda":
        pytest.skip("GPU only: a timing cheat (tests/adversarial.rs runs it on a GPU)")
    scored, traces = results
    s = scored[case["candidate"]]
    trace = traces.get(_stem(case["candidate"]), [])
    what = f"{case['candidate']} ({case['class']}): score {s['score']} [{s['checks']}] {s['reason']}"
    if case["expect"] == "reject":
        assert s["score"] == 0.0, "a hostile or wrong answer scored: " + what
        if case["class"] != "strict" and not case["class"].startswith("honest"):
            assert set(s["checks"]) - {"strict_source"}, \
                "caught only by strict mode's reading of the source, not at run time: " + what
    elif case["expect"] == "accept":
        assert s["score"] > 0.0, "an honest answer scored 0: " + what
    else:
        assert s["score"] > 0.0, "a sandbox probe escaped or failed: " + what
        assert not trace, f"a sandbox probe left traces: {trace}; {what}"


@pytest.mark.parametrize("case", PERSIST, ids=[_stem(c["candidate"]) for c in PERSIST])
def test_persisting_answer_changes_nothing_for_later_answers(case, world, results):
    scored, _ = results
    timeout = world.pool("seq-" + _stem(case["candidate"]))
    try:
        first = _score(world, case["reference"], case["candidate"], timeout)
        later = [(f, _score(world, case["reference"], f["candidate"], timeout))
                 for f in MANIFEST["followups"][case["reference"]]]
    finally:
        world.drop(timeout)
    problems = []
    if first["score"] != 0.0:
        problems.append(f"the persisting answer itself scored {first['score']}")
    for f, got in later:
        alone = scored[f["candidate"]]
        want_score = f["expect"] == "accept"
        if (got["score"] > 0) != want_score or (got["score"] > 0) != (alone["score"] > 0) \
                or got["checks"] != alone["checks"]:
            problems.append(f"then {f['candidate']}: score {got['score']} [{got['checks']}] "
                            f"{got['reason'][:200]}; alone: score {alone['score']} "
                            f"[{alone['checks']}]")
    assert not problems, f"after {case['candidate']}:\n" + "\n".join(problems)
