"""Drives drtc's Python worker directly, the way drtc's pool does (one JSON request per
line, a deadline per request, kill and restart on a hang, a death or a fatal answer), so
the verifier's GPU cases can run on a machine that has Python and a GPU but no drtc
binary. Each argument is `OP:REFERENCE:CANDIDATE:TIMEOUT_S` with OP `verify` or `bench`;
relative paths are under tests/data/verifier.

    python3 bench/gpu_worker_drive.py verify:seed_relu_add.py:gpu_bad_oob.py:60 \
        bench:/path/to/63_Gemm_ReLU_Divide.py:level2_63_gemm_relu_divide_new.py:500
"""
import json
import os
import select
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.environ.get("DRTC_WORKER", os.path.join(ROOT, "src/verifier/worker/worker.py"))
DATA = os.environ.get("DRTC_DATA", os.path.join(ROOT, "tests/data/verifier"))


class Worker:
    def __init__(self):
        env = dict(os.environ, DRTC_DEVICE="cuda", PYTHONUNBUFFERED="1")
        env.setdefault("CUDA_VISIBLE_DEVICES", "0")
        env.pop("TRITON_INTERPRET", None)
        self.p = subprocess.Popen([sys.executable, "-u", WORKER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=open("/tmp/worker_stderr.txt", "a"),
                                  env=env, start_new_session=True, text=True)
        self.ready = self.read(300)

    def read(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return "TIMEOUT"
        line = self.p.stdout.readline()
        if not line:
            self.p.wait()
            return f"DIED rc={self.p.returncode}"
        return json.loads(line)

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()

    def ask(self, req, timeout):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        r = self.read(timeout)
        if isinstance(r, str) or r.get("fatal"):
            self.kill()
        return r


def main():
    w = None
    for spec in sys.argv[1:]:
        op, ref, cand, timeout = spec.split(":")
        if w is None or w.p.poll() is not None:
            w = Worker()
            info = w.ready if isinstance(w.ready, str) else {
                k: w.ready.get(k) for k in ("torch", "triton", "gpu")}
            print("worker ready:", info, flush=True)
        ref = ref if ref.startswith("/") else os.path.join(DATA, ref)
        req = {"op": op, "reference": ref, "candidate": os.path.join(DATA, cand), "trials": 5,
               "seed": 0, "compile_baseline": op == "bench"}
        t0 = time.time()
        r = w.ask(req, float(timeout))
        dt = time.time() - t0
        if isinstance(r, str):
            print(f"{cand}: {r} ({dt:.1f}s)", flush=True)
            continue
        fails = []
        for f in r.get("failures", []):
            if f["check"] not in [x[0] for x in fails]:
                fails.append((f["check"], f["message"][:160]))
        print(f"{cand}: verified={r.get('verified')} fatal={r.get('fatal', False)} ({dt:.1f}s) "
              f"{fails}", flush=True)
        t = r.get("timing")
        if t:
            for k in ("reference", "candidate", "compiled"):
                if k in t:
                    s = t[k]
                    print(f"   {k:<10} median {s['median_ms']:.4f} ms p10 {s['p10_ms']:.4f} "
                          f"p90 {s['p90_ms']:.4f} n={s['samples']} wall {s['wall_median_ms']:.4f}")
            line = f"   speedup {t['reference']['median_ms'] / t['candidate']['median_ms']:.4f}x"
            if "compiled" in t:
                line += f"  vs compile {t['compiled']['median_ms'] / t['candidate']['median_ms']:.4f}x"
            print(line + f"  timed_outputs_ok={t['timed_outputs_ok']}")
        if "timing_error" in r:
            print("   timing_error:", r["timing_error"])
    if w:
        w.kill()


if __name__ == "__main__":
    main()
