"""The timing session (`drtc_worker/timing.py`: `Session.measure` then `Session.report`)
on a machine without a GPU: CUDA events, synchronize and device allocation are stood in
for (every event reports `EVENT_MS`), a drtc module is timed in this process, an untrusted
one through a stand-in for its sandboxed process (`stage`, `time_staged`,
`timed_outputs`), whose timed outputs are right or wrong, or right only on the calls
checked in full (the others' fingerprints give it away).

    python check_timing_session.py WORKER_DIR

Prints one JSON object per case: rounds of the interleaved loop, calls per contender,
whether the timed outputs passed, and the failures."""

import json
import sys
import time
import types
import weakref

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402
import drtc_worker.timing as timing  # noqa: E402
from drtc_worker.fingerprint import fingerprint, mismatch  # noqa: E402

EVENT_MS = 2.0  # steady: every median settles at the minimum number of calls


class Event:
    def __init__(self, enable_timing=True):
        pass

    def record(self):
        pass

    def elapsed_time(self, other):
        return EVENT_MS


def empty(*args, **kwargs):
    kwargs.pop("device", None)
    return torch.empty(*args, **kwargs)


shim = types.SimpleNamespace(**{n: getattr(torch, n) for n in dir(torch) if not n.startswith("__")})
shim.empty = empty
shim.cuda = types.SimpleNamespace(Event=Event, synchronize=lambda *a, **k: None,
                                  OutOfMemoryError=torch.cuda.OutOfMemoryError)
timing.torch = shim
timing.DEVICE = "cuda"
timing.device_peaks = lambda: None


def forward(xs):
    return [torch.relu(xs[0]) + 1]


class Sandboxed:
    """The untrusted candidate's process: its timed calls' last outputs per buffer are
    the right values for the scale of that call, or off by one when `wrong`; with
    `adaptive`, every other call computed something else (its fingerprint says so), as
    an answer that knows which calls are checked in full would."""

    def __init__(self, wrong, adaptive):
        self.wrong = wrong
        self.adaptive = adaptive

    def stage(self, sets):
        self.sets = sets

    def time_staged(self, warmup, scales, flush_bytes):
        self.scales = scales
        n, count = len(scales), len(self.sets)
        fps = []
        for i, c in enumerate(scales):
            out = forward([self.sets[i % count][0] * c])
            if self.adaptive and i < n - count:
                out = [torch.zeros_like(out[0])]
            fps.append(fingerprint(out))
        return [EVENT_MS] * n, [EVENT_MS] * n, EVENT_MS * n, fps

    def timed_outputs(self, count):
        n = len(self.scales)
        outs = []
        for k in range(count):
            i = max(j for j in range(n) if j % count == k)
            out = forward([self.sets[k][0] * self.scales[i]])[0]
            outs.append([out + 1 if self.wrong else out])
        return outs


class Pair:
    base_seed = 0
    draws_random = False
    kind = "seed"  # the float64 truth runs `ref_mod.fused_operator`
    ref_mod = types.SimpleNamespace(fused_operator=lambda *xs: forward(list(xs)))

    def __init__(self, trusted, wrong=False, adaptive=False):
        self.trusted = trusted
        self.cand = None if trusted else Sandboxed(wrong, adaptive)

    def make_inputs(self, seed):
        torch.manual_seed(seed)
        return [torch.randn(64, 64)]

    def run_reference(self, xs):
        return forward(xs)

    def run_candidate(self, xs):
        return forward(xs)

    def graphs(self):
        return None


for case, pair in (("trusted", Pair(True)), ("sandboxed", Pair(False)),
                   ("sandboxed, wrong timed outputs", Pair(False, wrong=True)),
                   ("sandboxed, adaptive", Pair(False, adaptive=True))):
    session = timing.Session(pair, {})
    session.measure({})
    report = session.report({})
    session.close()
    print(json.dumps({
        "case": case,
        "rounds": report["rounds"],
        "reference_calls": report["reference"]["samples"],
        "candidate_calls": report["candidate"]["samples"],
        "candidate_median_ms": report["candidate"]["median_ms"],
        "timed_outputs_ok": report["timed_outputs_ok"],
        "failures": report["timed_outputs_failures"],
        "fingerprints_checked": report.get("fingerprints_checked"),
    }))

# the wrong timed outputs again, with the float64 truth that would judge them out of
# memory: the report fails as out of memory (the suite retries it alone), no verdict
real_run_copy = timing.truth._run_copy


def short_of_memory(*args):
    raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB")


timing.truth._run_copy = short_of_memory
session = timing.Session(Pair(False, wrong=True), {})
session.measure({})
try:
    session.report({})
    raised = None
except BaseException as e:  # noqa: BLE001 - the case's answer
    raised = f"{type(e).__name__}: {e}"
session.close()
timing.truth._run_copy = real_run_copy
print(json.dumps({"case": "sandboxed, wrong, truth out of memory", "raised": raised}))

# torch.compile modes stood in for (one off by one), their outputs parked in host memory
# between the loops and the check: no mode's output outlives its call in the loops
alive = []


def compile_stand_in(fn, mode=None):
    def compiled(*xs):
        live = sum(1 for r in alive if r() is not None)
        stats["most_alive"] = max(stats["most_alive"], live)
        out = [o + (1.0 if mode == "max-autotune" else 0.0) for o in fn(*xs)]
        alive.extend(weakref.ref(o) for o in out)
        return out
    return compiled


stats = {"most_alive": 0}
shim.compile = compile_stand_in
timing.HOST_KEPT_BYTES = 0
pair = Pair(True)
pair.reference_callable = lambda: (lambda *xs: forward(list(xs)))
modes = ["default", "max-autotune", "reduce-overhead"]
session = timing.Session(pair, {"compile_modes": modes})
session.measure({})
parked = sorted(n for n, v in session.measured[0].items() if isinstance(v, timing._Parked))
report = session.report({"compile_modes": modes})
session.close()
print(json.dumps({
    "case": "modes parked",
    "parked": parked,
    "most_alive_at_a_call": stats["most_alive"],
    "outputs_ok": {m: report["compiled_modes"][m].get("outputs_ok") for m in modes},
    "samples": {m: report["compiled_modes"][m]["stats"]["samples"] for m in modes},
}))

# a compile budget (`compile_budget_s`): max-autotune's first call still compiling after
# it (a Python loop here, as inductor's autotuning is) is reported over budget and not
# timed; the other modes compile and are timed, and the interrupted one is reset
resets = []
shim._dynamo = types.SimpleNamespace(reset=lambda: resets.append(True))


def slow_compile_stand_in(fn, mode=None):
    calls = []

    def compiled(*xs):
        if mode == "max-autotune" and not calls:
            end = time.perf_counter() + 5.0
            while time.perf_counter() < end:
                pass
        calls.append(1)
        return fn(*xs)
    return compiled


shim.compile = slow_compile_stand_in
req = {"compile_modes": ["default", "max-autotune"], "compile_budget_s": 0.5}
t0 = time.perf_counter()
session = timing.Session(pair, req)
compile_s = time.perf_counter() - t0
resets_at_compile = len(resets)
session.measure(req)
report = session.report(req)
session.close()
modes = report["compiled_modes"]
print(json.dumps({
    "case": "compile budget",
    "compile_s": compile_s,
    "over_budget": {m: modes[m].get("over_budget", False) for m in modes},
    "errors": {m: modes[m]["error"] for m in modes},
    "timed": sorted(m for m in modes if "stats" in modes[m]),
    "resets": resets_at_compile,
}))

# the fingerprints' bounds: values within the fp32 rule elementwise pass, values that are
# not (a twentieth of them zeroed, or all off by 1%) fail
torch.manual_seed(1)
r = torch.randn(1000, 300) * 3
u, v = torch.rand_like(r) * 2 - 1, torch.rand_like(r) * 2 - 1
close = r + 1e-4 * v + 1e-4 * r.abs() * u
zeroed = r.clone()
zeroed[::20] = 0
print(json.dumps({
    "case": "fingerprint bounds",
    "within_rule": mismatch(fingerprint([close]), fingerprint([r])),
    # tiny values: allclose's atol lets every element be 0.9e-4 off
    "tiny_within_atol": mismatch(fingerprint([r * 1e-7 + 0.9e-4]), fingerprint([r * 1e-7])),
    "zeroed": mismatch(fingerprint([zeroed]), fingerprint([r])),
    "scaled": mismatch(fingerprint([r * 1.02]), fingerprint([r])),
    "shape": mismatch(fingerprint([r[:10]]), fingerprint([r])),
    "missing": mismatch([], fingerprint([r])),
    # half-precision values whose sum passes float16's largest value on one side only:
    # reduced in fp32, both sums are finite and within the bounds
    "half_near_overflow": mismatch(
        fingerprint([torch.full((65,), 1000.0, dtype=torch.float16)]),
        fingerprint([torch.full((65,), 1008.0, dtype=torch.float16)])),
}))
