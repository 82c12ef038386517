"""CUDA-event timing (semantics.md): warm-up (at least 10 calls and 25 ms), then rounds
of interleaved calls of every contender (the reference, the candidate and, when asked,
`torch.compile` of the reference in each requested mode) on the same inputs in this one process, each call timed
with CUDA events after a 256 MB L2 flush, until every contender's median is settled (its
95% interval within 1% of it, after at least 20 calls and 25 ms) or every contender has at
least 50 calls and 100 ms; medians reported. An untrusted candidate, timed in its own
process after the loop, gets as many calls as the reference needed (at least 20). The outputs of the last timed calls are checked too, the
candidate's and torch.compile's (by the same rules, so a table can say whether
torch.compile itself meets the rule drtc is held to), and for an untrusted candidate the
fingerprints of a few other timed calls, picked after the loop (`fingerprint.py`). The device's measured limits
(`peaks.py`) ride along for speed-of-light figures.

A timing `Session` is built first (inputs made, `torch.compile` compiled and warmed up),
so that the timing itself can run later as a short exclusive phase. `torch_precision`
(`torch.set_float32_matmul_precision`) applies to the reference and to torch.compile
while they run, never to the candidate, which runs with the process default."""

import bisect
import contextlib
import copy
import math
import random
import statistics
import time

import torch

from .common import DEVICE, Failure, cuda_broken, exc_line, flatten, is_gpu_fault
from . import memory, truth
from .comparison import DEFAULT_RULE, compare_outputs, rule_failures
from .deadline import OutOfTime, within
from .fingerprint import fingerprint, mismatch
from .peaks import device_peaks

L2_FLUSH_BYTES = 256 * 1024 * 1024
# torch.compile outputs larger than this wait in host memory for their check (`_mode_outputs`)
HOST_KEPT_BYTES = 1 << 30
# a candidate this much faster than torch.compile (or eager PyTorch, when torch.compile is
# not timed) is flagged: real kernels rarely are; cheats that skip work are
IMPLAUSIBLE_VS_COMPILED = 10.0
IMPLAUSIBLE_VS_EAGER = 20.0
# an isolated candidate's loop may take this much longer on the checker's clock than the
# times its process reports (plus the checker's own per-call flush and synchronize cost)
# before the difference is flagged
OBSERVED_SLACK = 3.0
OBSERVED_SLACK_MS = 50.0
# an untrusted candidate's timed calls, besides the last of each buffer (checked in full),
# whose outputs' fingerprints are checked against the reference's: picked after the loop
FINGERPRINT_CHECKS = 4
MATMUL_PRECISIONS = ("highest", "high", "medium")
COMPILE_MODES = ("default", "max-autotune", "max-autotune-no-cudagraphs", "reduce-overhead")


def compile_modes(req):
    """The torch.compile modes a request asks to time (`compile_baseline`: the default)."""
    modes = req.get("compile_modes")
    if modes is None:
        modes = ["default"] if req.get("compile_baseline") else []
    for m in modes:
        if m not in COMPILE_MODES:
            raise Failure("device", f"unknown torch.compile mode {m!r}")
    return list(dict.fromkeys(modes))


def contender_name(mode):
    """`compiled` for the default mode (the name every report has used), else
    `compiled:MODE`."""
    return "compiled" if mode == "default" else f"compiled:{mode}"


@contextlib.contextmanager
def matmul_precision(p):
    """`torch.set_float32_matmul_precision(p)` for the duration (None: leave it)."""
    if p is None:
        yield
        return
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision(p)
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(old)


# a contender's median counts as settled once its distribution-free 95% interval (order
# statistics n/2 -/+ 0.98 sqrt(n)) spans at most this fraction of the median, after at
# least SETTLED_MIN_CALLS timed calls and SETTLED_MIN_MS of them: the loop then stops
# before the fixed rule (TIMED_CALLS calls and TIMED_MS), which stays the bound for noisy
# contenders
SETTLED_SPREAD = 0.01
SETTLED_MIN_CALLS = 20
SETTLED_MIN_MS = 25.0
TIMED_CALLS = 50
TIMED_MS = 100.0


def median_interval(ms, ordered=None):
    """The distribution-free 95% interval of the median of `ms` (at least 2 samples):
    sorted samples at ranks n/2 -/+ 0.98 sqrt(n). `ordered`: the same samples sorted,
    when the caller keeps them so."""
    s = ordered if ordered is not None else sorted(ms)
    n = len(s)
    h = 0.98 * math.sqrt(n)
    return s[max(0, math.floor(n / 2 - h))], s[min(n - 1, math.ceil(n / 2 + h))]


def settled(ms, ordered=None):
    """Whether a contender's timed calls `ms` pin its median (see SETTLED_SPREAD);
    `ordered` as for `median_interval`."""
    if len(ms) < SETTLED_MIN_CALLS or sum(ms) < SETTLED_MIN_MS:
        return False
    s = ordered if ordered is not None else sorted(ms)
    lo, hi = median_interval(ms, s)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return med > 0 and hi - lo <= SETTLED_SPREAD * med


def enough_calls(times, min_calls=TIMED_CALLS, min_ms=TIMED_MS, ordered=None):
    """Whether the interleaved loop may stop: every contender settled, or every one past
    the fixed rule (`min_calls` calls and `min_ms` of them). `ordered`: each contender's
    samples kept sorted by the loop (`bisect.insort`), so that a check each round does not
    sort thousands of samples of a short kernel again."""
    ordered = ordered or {}
    return all(settled(v, ordered.get(k)) for k, v in times.items()) or \
        all(len(v) >= min_calls and sum(v) >= min_ms for v in times.values())


def summarize(ms):
    s = sorted(ms)
    n = len(s)
    return {"median_ms": statistics.median(s), "mean_ms": statistics.fmean(s),
            "min_ms": s[0], "max_ms": s[-1], "p10_ms": s[int(0.1 * (n - 1))],
            "p90_ms": s[int(0.9 * (n - 1))],
            "stdev_ms": statistics.stdev(s) if n > 1 else 0.0, "samples": n}


class Contender:
    def __init__(self, name, fn, precision):
        self.name = name
        self.fn = fn
        self.precision = precision


class Session:
    """Everything timing needs, prepared: inputs, contenders, torch.compile compiled."""

    def __init__(self, pair, req):
        if DEVICE != "cuda":
            raise Failure("device", "timing needs CUDA: the Triton interpreter has no "
                                    "meaningful speed")
        self.pair = pair
        self.default_precision = torch.get_float32_matmul_precision()
        self.rule = req.get("rule") or DEFAULT_RULE
        tp = req.get("torch_precision")
        if tp is not None and tp not in MATMUL_PRECISIONS:
            raise Failure("device", f"unknown torch precision {tp!r}")
        self.torch_precision = tp
        self.inputs = pair.make_inputs(pair.base_seed + 424242)
        # A module with CUDA graphs is timed as a user runs it: its first call (a warm-up
        # here) captures, the timed calls replay and copy the outputs. Graphs captured while
        # verification's instruments were active are dropped first.
        self.graphs = pair.graphs()
        if self.graphs is not None:
            self.graphs.reset()
        self.graph_stats = dict(self.graphs.stats) if self.graphs is not None else None
        # an untrusted candidate is timed in its own process (`_isolated_loop`); every
        # contender's time is then the larger of its event and wall-clock times
        self.isolated = not pair.trusted
        # an untrusted candidate's two input buffers cross to its process now, in the
        # shared phase, so that the exclusive one holds the timed loops only
        self.sets = None
        if self.isolated:
            self.sets = [self.inputs, pair.make_inputs(pair.base_seed + 424243)]
            pair.cand.stage(self.sets)
        self.measured = None
        self.contenders = [Contender("reference", pair.run_reference, tp)]
        if not self.isolated:
            self.contenders.append(Contender("candidate", pair.run_candidate, None))
        # per torch.compile mode: its first call's time (compilation) or why it failed
        self.modes = {}
        budget = req.get("compile_budget_s")
        for mode in compile_modes(req):
            self._compile(tp, mode, budget)

    def _compile(self, tp, mode, budget):
        """torch.compile of the reference in `mode`, its first call (the compile) bounded by
        `budget` seconds when given: a mode still compiling then is reported, not timed,
        and the other modes go on."""
        t0 = time.perf_counter()
        try:
            with matmul_precision(tp), torch.no_grad():
                compiled = torch.compile(_own_copy(self.pair.reference_callable()), mode=mode)
                if mode == "reduce-overhead":
                    fn = _marked_steps(compiled)
                else:
                    def fn(xs):
                        return compiled(*xs)

                def first_call():
                    fn(self.inputs)  # compiles
                    torch.cuda.synchronize()

                within(budget, first_call)
        except OutOfTime:
            torch._dynamo.reset()  # what the interrupted compile left behind
            if cuda_broken():
                raise Failure("device", f"torch.compile ({mode}) interrupted at its budget "
                              "left the device unusable")
            self.modes[mode] = {"error": f"over budget: torch.compile ({mode}) was still "
                                f"compiling after {float(budget):g} s (--compile-budget)",
                                "compile_ms": None, "over_budget": True}
            return
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt) or is_gpu_fault(e) or cuda_broken():
                raise
            self.modes[mode] = {"error": f"torch.compile failed: {exc_line(e)}",
                                "compile_ms": None}
            return
        self.modes[mode] = {"error": None, "compile_ms": (time.perf_counter() - t0) * 1e3}
        self.contenders.append(Contender(contender_name(mode), fn, tp))

    def _drop_mode(self, c, e):
        """Takes contender `c`, a torch.compile mode that failed when called after its
        compile, out of the timing, its mode reported with the error."""
        self.contenders = [d for d in self.contenders if d is not c]
        for mode, m in self.modes.items():
            if contender_name(mode) == c.name:
                m["error"] = f"torch.compile ({mode}) failed when called: {exc_line(e)}"

    def _check(self, ref_out, out, inputs=None, candidate=False):
        """The value rules for outputs of the timed runs against the reference's; a failure
        is judged against the float64 truth as verification does (`truth.py`). Returns the
        metrics, the failures left, and the failures before the truth was asked. For the
        `candidate`'s outputs, a truth that ran out of memory fails the timing as out of
        memory (retried alone), as the fingerprints' does, and is no verdict on the values:
        level-1 76's timed outputs failed so beside other tasks on an 80 GB GPU."""
        outputs, fails = compare_outputs(ref_out, out)
        if self.default_precision == "highest":
            # the fp32 rule compares against a full-fp32 reference only
            fails += rule_failures(outputs, self.rule, not self.pair.trusted)
        strict = list(fails)
        if fails:
            seed = self.pair.base_seed + 424242
            if inputs is not None:
                seed = (seed, inputs)
            exact = truth.Truth(self.pair, seed, None, flatten,
                                getattr(self.pair, "draws_random", False))
            fails = truth.apply(outputs, fails, ref_out, out, exact, not self.pair.trusted)
            if candidate and exact.out_of_memory:
                raise torch.cuda.OutOfMemoryError(exact.why_not)
        return outputs, fails, strict

    def run(self, req):
        """The timed loops, then the report (both phases at once)."""
        self.measure(req)
        return self.report(req)

    def measure(self, req):
        """The exclusive phase: warm-up and the interleaved timed loops (an untrusted
        candidate's in its own process), nothing else; `report` does the rest."""
        inputs = self.inputs
        contenders = self.contenders
        flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device="cuda")
        min_warmup = int(req.get("warmup_calls", 10))
        min_calls = int(req.get("timed_calls", TIMED_CALLS))
        last = {}
        # torch.compile's outputs are not kept from call to call: a task whose output is as
        # large as its input held one per mode at once and ran out of memory on an 80 GB
        # GPU with every mode (level-1 21, 22, 25, 26: 6 GiB each); each mode's output is
        # taken once after the loops instead (`_mode_outputs`)
        kept = {"reference", "candidate"}
        with torch.no_grad():
            for c in list(contenders):
                try:
                    with matmul_precision(c.precision):
                        t0 = time.perf_counter()
                        n = 0
                        while n < min_warmup or time.perf_counter() - t0 < 0.025:
                            out = c.fn(inputs)
                            if c.name in kept:
                                last[c.name] = out
                            del out
                            torch.cuda.synchronize()
                            n += 1
                except BaseException as e:
                    # a torch.compile mode that compiled but fails when called again (a
                    # `reduce-overhead` module reading state its last replay overwrote:
                    # level-3 33's hidden state) is reported failed; the others are timed
                    if c.name in kept or isinstance(e, KeyboardInterrupt) or \
                            is_gpu_fault(e) or cuda_broken():
                        raise
                    self._drop_mode(c, e)
            contenders = self.contenders
            times = {c.name: [] for c in contenders}
            ordered = {c.name: [] for c in contenders}
            walls = {c.name: [] for c in contenders}
            cycles = {c.name: [] for c in contenders}
            rounds = 0
            t_start = time.perf_counter()
            while True:
                k = rounds % len(contenders)
                for c in contenders[k:] + contenders[:k]:
                    c0 = time.perf_counter()
                    flush.zero_()
                    torch.cuda.synchronize()
                    # the precision switch is a host flag, set outside the timed window
                    with matmul_precision(c.precision):
                        start = torch.cuda.Event(enable_timing=True)
                        end = torch.cuda.Event(enable_timing=True)
                        w0 = time.perf_counter()
                        start.record()
                        out = c.fn(inputs)
                        end.record()
                        torch.cuda.synchronize()  # all streams
                        walls[c.name].append((time.perf_counter() - w0) * 1e3)
                        if c.name in kept:
                            last[c.name] = out
                        del out
                    cycles[c.name].append((time.perf_counter() - c0) * 1e3)
                    ev = start.elapsed_time(end)
                    times[c.name].append(max(ev, walls[c.name][-1]) if self.isolated else ev)
                    bisect.insort(ordered[c.name], times[c.name][-1])
                rounds += 1
                enough = enough_calls(times, min_calls, ordered=ordered)
                if enough or rounds >= 5000 or time.perf_counter() - t_start > 120:
                    break
        del flush
        last.update(self._mode_outputs(kept))
        # measured once per worker (cached): while nothing else runs on the GPU
        peaks = device_peaks()
        # an untrusted candidate gets as many timed calls as the reference needed
        loop = self._isolated_loop(min_warmup, min(min_calls, max(
            SETTLED_MIN_CALLS, len(times["reference"]))),
            flatten(last["reference"])) if self.isolated else None
        self.measured = (last, times, walls, cycles, rounds, peaks, loop)

    def _mode_outputs(self, kept):
        """Each torch.compile mode's output on the timed inputs, from one more call after
        the loops (the modes are PyTorch's own and deterministic: their outputs are checked
        against drtc's value rule for the table, not for cheating); one larger than
        `HOST_KEPT_BYTES` waits in host memory for the check, so that the modes' outputs are
        not all on the GPU at once."""
        outs = {}
        with torch.no_grad():
            for c in self.contenders:
                if c.name in kept:
                    continue
                with matmul_precision(c.precision):
                    out = flatten(c.fn(self.inputs))
                    torch.cuda.synchronize()
                size = sum(t.numel() * t.element_size() for t in out
                           if isinstance(t, torch.Tensor))
                outs[c.name] = _Parked(out) if size > HOST_KEPT_BYTES else out
                del out
        return outs

    def report(self, req):
        """After `measure`, in a shared phase: the timed outputs checked (an untrusted
        candidate's fetched from its process), the figures and flags."""
        if self.measured is None:
            raise Failure("other", "timing report asked before the timed loops ran")
        pair = self.pair
        last, times, walls, cycles, rounds, peaks, loop = self.measured
        with torch.no_grad():
            # The checked outputs are the ones of the timed runs too, against the reference
            # at the precision verification used (PyTorch's default in this process).
            ref_out = flatten(last["reference"])
            if self.torch_precision not in (None, self.default_precision):
                ref_out = flatten(pair.run_reference(self.inputs))
        report = {name: summarize(v) for name, v in times.items()}
        for name in report:
            report[name]["wall_median_ms"] = statistics.median(walls[name])
        flags = []
        if self.isolated:
            overhead = max(0.0, statistics.median(cycles["reference"])
                           - report["reference"]["median_ms"])
            self._isolated_report(report, flags, overhead, loop)
        for name, key in (("candidate", "timed_outputs"), ("compiled", "compiled_outputs")):
            if name not in last:
                continue
            outputs, fails, strict = self._check(ref_out, _unparked(last[name]),
                                                 candidate=name == "candidate")
            report[f"{key}_ok"] = not fails
            report[key] = outputs
            report[f"{key}_failures"] = [m for _, _, m in fails]
            report[f"{key}_ok_without_truth"] = not strict
        modes = {}
        for mode, m in self.modes.items():
            entry = dict(m)
            name = contender_name(mode)
            if name == "compiled" and name in last:
                entry["stats"] = report[name]
                entry["outputs_ok"] = report["compiled_outputs_ok"]
                entry["outputs_ok_without_truth"] = report["compiled_outputs_ok_without_truth"]
                entry["failures"] = report["compiled_outputs_failures"]
            elif name in last:
                entry["stats"] = report.pop(name)
                out = _unparked(last.pop(name))
                _, fails, strict = self._check(ref_out, out)
                del out
                entry["outputs_ok"] = not fails
                entry["outputs_ok_without_truth"] = not strict
                entry["failures"] = [msg for _, _, msg in fails]
            modes[mode] = entry
        report["compiled_modes"] = modes
        timed = [m["stats"]["median_ms"] for m in modes.values() if "stats" in m]
        best = min(timed) if timed else None
        cand = report["candidate"]["median_ms"]
        if cand > 0 and best is not None and best / cand > IMPLAUSIBLE_VS_COMPILED:
            flags.append(f"implausible: {best / cand:.1f}x faster than torch.compile "
                         f"(more than {IMPLAUSIBLE_VS_COMPILED:g}x)")
        elif cand > 0 and best is None and \
                report["reference"]["median_ms"] / cand > IMPLAUSIBLE_VS_EAGER:
            flags.append(f"implausible: {report['reference']['median_ms'] / cand:.1f}x faster "
                         f"than eager PyTorch (more than {IMPLAUSIBLE_VS_EAGER:g}x)")
        report["flags"] = flags
        report["isolated"] = self.isolated
        report["rounds"] = rounds
        report["l2_flush_bytes"] = L2_FLUSH_BYTES
        report["torch_precision"] = self.torch_precision or self.default_precision
        report["candidate_precision"] = self.default_precision
        default = self.modes.get("default", {})
        report["compiled_error"] = default.get("error")
        report["compile_warmup_ms"] = default.get("compile_ms")
        report["device_peaks"] = peaks
        if self.graphs is not None:
            now, before = self.graphs.stats, self.graph_stats
            report["cuda_graphs"] = {
                k: now.get(k, 0) - before.get(k, 0)
                for k in ("captures", "replays", "eager", "evictions")}
            report["cuda_graphs"]["used"] = report["cuda_graphs"]["replays"] > 0
            report["cuda_graphs"]["fallback"] = now.get("fallback")
            report["cuda_graphs"]["eager_reason"] = now.get("eager_reason")
        return report


    def _isolated_loop(self, warmup, calls, ref_out):
        """Times an untrusted candidate in its own process on the two input buffers staged
        there (`stage`, in the shared phase): new values before every timed call (their
        staged values times a per-call scale), the larger of event and wall time per call,
        this side's clock over the whole loop as a bound on what the candidate's process
        claims (which also pays a fingerprint of every call's outputs: what that costs on
        the reference's outputs, `ref_out`, is measured here first). Returns (scales,
        events, walls, observed ms, warm-up calls, fingerprints, ms per fingerprint)."""
        costs = []
        for _ in range(3):
            t0 = time.perf_counter()
            fingerprint(ref_out)  # its values come back to the host: synchronized
            costs.append((time.perf_counter() - t0) * 1e3)
        n = max(calls, 2 * len(self.sets))
        scales = [1.0 - (i + 1) / (4.0 * n) for i in range(n)]
        events, walls, observed, fps = self.pair.cand.time_staged(warmup, scales,
                                                                  L2_FLUSH_BYTES)
        return scales, events, walls, observed, warmup, fps, statistics.median(costs)

    def _isolated_report(self, report, flags, overhead, loop):
        """The untrusted candidate's figures from `_isolated_loop`, and the last outputs of
        each buffer (fetched from its process now) checked against the reference on the
        values this side computes for them."""
        pair = self.pair
        sets = self.sets
        scales, events, walls, observed, warmup, fps, fingerprint_ms = loop
        n = len(scales)
        samples = [max(e, w) for e, w in zip(events, walls)]
        report["candidate"] = summarize(samples)
        report["candidate"]["wall_median_ms"] = statistics.median(walls)
        report["candidate"]["event_median_ms"] = statistics.median(events)
        report["candidate"]["observed_loop_ms"] = observed
        claimed = sum(samples) + warmup * report["candidate"]["median_ms"]
        expected = claimed + n * (overhead + fingerprint_ms)
        if observed > OBSERVED_SLACK * expected + OBSERVED_SLACK_MS:
            flags.append(f"timing: the candidate's process reported {claimed:.2f} ms of calls "
                         f"but its loop took {observed:.2f} ms on the checker's clock")
        outs = pair.cand.timed_outputs(len(sets))
        ok, failures, metrics, strict_ok = True, [], [], True
        last = set()
        for k, base in enumerate(sets):
            i = max(j for j in range(n) if j % len(sets) == k)
            last.add(i)
            inputs = _scaled(base, scales[i])
            ref_out = self._reference_on(inputs)
            outputs, fails, strict = self._check(ref_out, flatten(outs[k]), inputs,
                                                 candidate=True)
            ok = ok and not fails
            strict_ok = strict_ok and not strict
            failures += [f"buffer {k}: {m}" for _, _, m in fails]
            metrics = outputs
        # calls picked now, after the loop, unknown to the candidate: their outputs'
        # fingerprints against the reference's on the same inputs (a reference that draws
        # random numbers cannot be reproduced call by call: none then)
        others = [i for i in range(n) if i not in last]
        picks = [] if getattr(pair, "draws_random", False) else sorted(
            random.SystemRandom().sample(others, min(FINGERPRINT_CHECKS, len(others))))
        for i in picks:
            inputs = _scaled(sets[i % len(sets)], scales[i])
            why = mismatch(fps[i], fingerprint(self._reference_on(inputs)))
            if why is not None:
                why = self._fingerprint_against_truth(fps[i], inputs, why)
            if why is not None:
                ok = strict_ok = False
                failures.append(f"timed call {i}: its outputs' fingerprint is not the "
                                f"reference's on the same inputs ({why})")
        report["fingerprints_checked"] = picks
        report["fingerprint_ms"] = fingerprint_ms
        report["timed_outputs_ok"] = ok
        report["timed_outputs"] = metrics
        report["timed_outputs_failures"] = failures
        report["timed_outputs_ok_without_truth"] = strict_ok

    def _fingerprint_against_truth(self, fp, inputs, why):
        """A fingerprint outside the reference's bounds, judged against the float64
        truth's on the same inputs (a candidate more accurate than the fp32 reference may
        be that far from it): None when within the truth's bounds, else why not."""
        exact = truth.Truth(self.pair, (self.pair.base_seed + 424242, inputs), None, flatten,
                            getattr(self.pair, "draws_random", False))
        try:
            (outputs, _), _ = exact.get()
        except BaseException as e:
            # out of memory: the timing fails as such (retried alone), no verdict here
            if isinstance(e, KeyboardInterrupt) or is_gpu_fault(e) or cuda_broken() \
                    or memory.is_oom(e):
                raise
            return f"{why}; the float64 truth could not be computed ({exc_line(e)})"
        again = mismatch(fp, fingerprint(outputs))
        return None if again is None else f"{why}; against the float64 truth: {again}"

    def _reference_on(self, inputs):
        """The reference's outputs on `inputs`, drawn under the timed calls' seed."""
        with torch.no_grad():
            torch.manual_seed(self.pair.base_seed + 424242 + 1)
            return flatten(self.pair.run_reference(inputs))

    def close(self):
        """Drops the inputs and contenders; after torch.compile, clears dynamo's caches so
        compiled graphs of finished tasks do not pile up in a long-lived worker."""
        compiled = bool(self.modes)
        self.contenders = []
        self.inputs = None
        if compiled:
            try:
                torch._dynamo.reset()
            except BaseException:
                pass


class _Parked:
    """Outputs waiting in host memory, with the device each came from."""

    def __init__(self, values):
        self.values = [(t.to("cpu", copy=True), t.device) if isinstance(t, torch.Tensor)
                       else (t, None) for t in values]


def _unparked(out):
    """A contender's outputs as a list, parked ones back on their devices."""
    if isinstance(out, _Parked):
        return [t.to(d) if d is not None else t for t, d in out.values]
    return flatten(out)


def _scaled(base, c):
    """A staged buffer's values as a timed call saw them: floating tensors times `c`."""
    return [x * c if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in base]


def _own_copy(target):
    """What one torch.compile mode compiles: its own copy of a reference module, so that
    state the module assigns in `forward` (a recurrent cell's hidden state) is each mode's
    own, not a tensor another mode's CUDA-graph replay overwrites; the module itself when
    it cannot be copied, and a function as it is."""
    if not isinstance(target, torch.nn.Module):
        return target
    try:
        return copy.deepcopy(target)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt) or memory.is_oom(e):
            raise
        return target


def _marked_steps(compiled):
    """A `reduce-overhead` module called as its documentation asks when outputs are kept
    across calls: each call starts a new CUDA-graph step."""
    mark = getattr(torch.compiler, "cudagraph_mark_step_begin", None)

    def fn(xs):
        if mark is not None:
            mark()
        return compiled(*xs)
    return fn


def time_pair(pair, req):
    session = Session(pair, req)
    try:
        return session.run(req)
    finally:
        session.close()
