"""Verification: at least five trials on fresh inputs from different seeds, on the same
candidate instance, some of them refilling the same input buffers in place (and, for
modules with CUDA graphs, one more with the module's parameters and buffers moved to new
storage, the old one NaN; the trials must have replayed a graph on new values in the
same buffers and run on new buffers after a capture); inputs
unmodified; outputs not aliasing inputs or the reference's outputs; reference outputs kept
alive and the allocator poisoned before the candidate runs; module state after the call;
work left on side streams; optional strict mode.

Memory stays bounded: one trial's tensors at a time (each trial runs in its own call and
keeps only its inputs for the next, refilled, trial), the reference's copy of the inputs
is dropped once it has run, and comparisons work on bounded pieces. The reference's own
peak and the verification's peak are measured (`memory.py`)."""

import math
import os
import time
import traceback

import torch

from . import memory, strict_source, truth
from .common import DEVICE, Failure, exc_line, flatten, sync
from .comparison import (DEFAULT_RULE, VALUE_RULES, RulePrecision, clone_all, compare_outputs,
                         compare_state, rule_failures)
from .guards import STRICT_LIBRARY_DEFAULT, poison_note, poison_sizes
from .pair import Pair
from .precompile import precompile

MIN_TRIALS = 5


def _bytes(tensors):
    seen = set()
    total = 0
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.device.type == "cuda":
            st = t.untyped_storage()
            if st.data_ptr() not in seen:
                seen.add(st.data_ptr())
                total += st.nbytes()
    return total


class Peaks:
    """Peak GPU memory of the whole verification, and of the reference alone: its
    parameters, its inputs, and what it allocates while it runs."""

    def __init__(self):
        self.verify = 0
        self.reference = 0
        memory.reset_peak()

    def reference_run(self, pair, inputs):
        if DEVICE != "cuda":
            return pair.run_reference(inputs)
        self.verify = max(self.verify, memory.peak_bytes())
        before = torch.cuda.memory_allocated()
        memory.reset_peak()
        out = pair.run_reference(inputs)
        sync()
        own = _bytes(inputs)
        if pair.ref_model is not None:
            own += _bytes(list(pair.ref_model.state_dict().values()))
        self.reference = max(self.reference, memory.peak_bytes() - before + own)
        return out

    def report(self):
        if DEVICE != "cuda":
            return memory.report(None, None)
        self.verify = max(self.verify, memory.peak_bytes())
        return memory.report(self.reference, self.verify)


class Stop(Exception):
    """Ends verification: the candidate crashed, faulted or tampered."""


def _trial(pair, t, seed, kind, buffers, opts, result, tamper, peaks):
    """Runs trial `t`; returns its inputs (the next refill trial reuses the buffers)."""
    if kind == "fresh":
        inputs = pair.make_inputs(seed)
    else:  # "refill", "moved": new values in the same input buffers
        inputs = buffers
        for b, v in zip(inputs, pair.drawn_inputs(seed)):
            if isinstance(b, torch.Tensor):
                b.copy_(v)
    trial = {"index": t, "seed": seed, "inputs": kind, "passed": True}
    result["trials"].append(trial)
    started = time.perf_counter()
    try:
        return _trial_body(pair, t, seed, kind, opts, result, tamper, peaks, trial, inputs)
    finally:
        trial["seconds"] = time.perf_counter() - started


def _trial_body(pair, t, seed, kind, opts, result, tamper, peaks, trial, inputs):
    """The trial itself (`_trial` times it)."""
    strict, library_ops, rule = opts

    def fail(check, msg, output=None):
        trial["passed"] = False
        result["failures"].append({"check": check, "trial": t, "output": output,
                                   "inputs": kind, "message": msg})

    ref_inputs = clone_all(inputs)
    try:
        with torch.no_grad():
            # a program that draws random numbers in forward (`torch.randn` for an
            # initial state) draws the same ones in reference and candidate
            torch.manual_seed(seed + 1)
            pre_buffers = truth.buffer_snapshot(pair)
            rng_before = truth.rng_state()
            ref_out = flatten(peaks.reference_run(pair, ref_inputs))
        sync()
        if truth.rng_advanced(rng_before, truth.rng_state()):
            pair.draws_random = True
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        check, msg, fatal = memory.classify(e, "the reference")
        if check == "crash":
            check = "reference"
        result["fatal"] = result.get("fatal", False) or fatal
        fail(check, msg)
        result["traceback"] = traceback.format_exc()[-4000:]
        raise Stop()
    del ref_inputs  # the reference's copy of the inputs is not needed any more
    ref_state, _ = pair.states()
    ref_state = {k: v.clone() for k, v in ref_state.items()} if ref_state else None

    # the candidate runs (in this process when trusted, else in its own sandboxed one)
    # under the guards: poisoned allocations sized by the reference's outputs, side-stream
    # delays, strict mode, and for "moved" its state moved to new storage first
    facts = pair.cand.call(inputs, seed, kind, (strict, library_ops), poison_sizes(ref_out),
                           ref_out if pair.trusted else None)
    if facts["failure"] is not None:
        check, msg, fatal = facts["failure"]
        result["fatal"] = result.get("fatal", False) or (fatal and pair.trusted)
        fail(check, msg)
        raise Stop()
    trial["graph"] = facts.get("graph_last")
    if pair.trusted and not tamper.intact():
        result["fatal"] = True
        fail("tampering", "candidate replaced functions the checker relies on: "
                          + ", ".join(tamper.changed()))
        raise Stop()
    ordered = facts["outputs"]
    side = facts.get("side")
    violations = facts.get("violations") or {}

    outputs, fails = compare_outputs(ref_out, ordered)
    fails += rule_failures(outputs, rule, not pair.trusted)
    late_values = facts.get("late")
    if fails and DEVICE == "cuda" and late_values is not None:
        late_out, late = compare_outputs(ref_out, late_values)
        late += rule_failures(late_out, rule, not pair.trusted)
        if not late:
            fail("side_stream", "outputs are right only after a device-wide "
                                "synchronize: work left running on a side stream that "
                                f"the current stream does not wait for ({side} stream "
                                "switch(es))")
            fails = []
    exact = truth.Truth(pair, seed, pre_buffers, flatten, getattr(pair, "draws_random", False))
    if fails:
        fails = truth.apply(outputs, fails, ref_out, ordered, exact, not pair.trusted)
    del ordered
    trial["outputs"] = outputs
    for check, i, msg in fails:
        fail(check, f"output {i}: {msg}" if i is not None else msg, i)
    for msg in facts.get("alias") or []:
        fail("alias", msg)
    changed = facts.get("inputs_changed")
    if changed:
        fail("inputs_modified", "candidate modified input(s) "
             + ", ".join(str(i) for i in changed) + " in place")
    if ref_state is not None:
        _, cand_state = pair.states(facts.get("state") or (None, None))
        state_report, state_fails = compare_state(ref_state, cand_state)
        state_fails = truth.apply_state(state_report, state_fails, ref_state, cand_state,
                                        exact)
        trial["state"] = state_report
        for msg in state_fails:
            fail("out_of_memory" if exact.out_of_memory else "state", msg)
    if violations:
        names = ", ".join(f"{k} x{v}" for k, v in sorted(violations.items()))
        fail("strict", f"strict mode: forbidden PyTorch calls: {names}")
    # The reference outputs stayed alive until the candidate had run: freed memory then
    # could not hand their values to a candidate that reads uninitialized memory. Now
    # this trial's tensors (outputs, copies, snapshot, moved-out state) go when this call
    # returns.
    if exact.seconds:
        trial["truth_seconds"] = exact.seconds
    del facts, exact, pre_buffers
    return inputs


def _graphs_active(stats):
    """Whether the candidate has CUDA graphs and captured some on this device (a module
    compiled for CUDA called with CPU tensors never does), from its graph cache's stats."""
    return stats is not None and stats.get("fallback") is None and bool(stats.get("captures"))


def graph_report(pair, result):
    """`cuda_graphs` of the report (modules with graphs only), and the check that the
    trials exercised them: a replay on new values in the same buffers, and a call on new
    buffers after a capture (which must capture again, or replay a graph of exactly those
    buffers)."""
    stats = pair.cand.graph_stats()
    if stats is None:
        return
    trials = result["trials"]
    used = stats.get("replays", 0) > 0
    if not used and DEVICE != "cuda":
        why = f"verified on {DEVICE}: CUDA graphs run only on CUDA devices"
    elif stats.get("fallback") is not None:
        why = stats["fallback"]
    elif not used and stats.get("eager_reason"):
        why = stats["eager_reason"]
    elif not used:
        why = "no call replayed a graph"
    else:
        why = None
    result["cuda_graphs"] = {
        "used": used, "reason": why, "module_reason": stats.get("reason"),
        "captures": stats.get("captures", 0), "replays": stats.get("replays", 0),
        "eager": stats.get("eager", 0), "evictions": stats.get("evictions", 0),
        "trials": [t.get("graph") for t in trials]}
    if not _graphs_active(stats) or stats.get("eager_reason") or result["failures"]:
        return
    first = next((t["index"] for t in trials if t.get("graph") == "capture"), None)
    replayed = any(t["inputs"] == "refill" and t.get("graph") == "replay" for t in trials)
    moved = first is not None and any(
        t["index"] > first and t["inputs"] in ("fresh", "moved")
        and t.get("graph") in ("capture", "replay") for t in trials)
    missing = []
    if not replayed:
        missing.append("no trial replayed a graph on new values in the same buffers")
    if not moved:
        missing.append("no trial ran on new buffers after a capture")
    if missing:
        result["failures"].append({"check": "cuda_graphs", "trial": None, "output": None,
                                   "inputs": None, "message": "the module's CUDA graphs were "
                                   "not exercised: " + "; ".join(missing)
                                   + f" (trials: {result['cuda_graphs']['trials']})"})


def settle_then_give_way(req, deadline):
    """Between trials: this process's GPU work finished, then a timing pass that waits for
    the GPU (another worker's) runs first (`protocol.give_way`); the request's `deadline`
    moves by the wait, as drtc's does."""
    if not req.get("yield_gpu"):
        return
    from . import protocol  # the worker's own (imported first there); not for scripts

    sync()
    deadline.extend(protocol.give_way(req))


def run_trials(pair, req, result, tamper, peaks):
    trials = max(MIN_TRIALS, int(req.get("trials", MIN_TRIALS)))
    # an explicit empty list means no library op is allowed (a region without conv/matmul)
    library_ops = req.get("library_ops")
    if library_ops is None:
        library_ops = STRICT_LIBRARY_DEFAULT
    opts = (bool(req.get("strict", False)), library_ops, req.get("rule"))
    if pair.trusted and not tamper.intact():
        result["fatal"] = True
        result["failures"].append({"check": "tampering", "trial": None, "output": None,
                                   "inputs": None, "message": "candidate replaced functions "
                                   "the checker relies on: " + ", ".join(tamper.changed())})
        return
    if opts[0]:
        _read_strict(req, result)
    buffers = None
    kinds = ["fresh" if t % 2 == 0 else "refill" for t in range(trials)]
    # an untrusted candidate cannot know its inputs in advance: the trial seeds are drawn
    # for this request (and reported per trial)
    # (drtc's own callers may name it, where a rerun must see the same figures)
    given = req.get("seed_salt")
    salt = 0 if pair.trusted else (int(given) % (1 << 32) if given is not None
                                   else int.from_bytes(os.urandom(4), "little"))
    result["seed_salt"] = salt
    for t, kind in enumerate(kinds):
        seed = pair.base_seed + 1000 + 7919 * t + salt
        kind = "fresh" if buffers is None else kind
        settle_then_give_way(req, pair.deadline)
        try:
            buffers = _trial(pair, t, seed, kind, buffers, opts, result, tamper, peaks)
        except Stop:
            return
        if t + 1 == len(kinds) and "moved" not in kinds and pair.kind == "kernelbench" \
                and _graphs_active(pair.cand.graph_stats()):
            # CUDA graphs: once more with the module's state moved to new storage, so a
            # replay keyed on the old parameter and buffer pointers would read NaN
            kinds.append("moved")
    if not pair.trusted and pair.kind == "kernelbench" \
            and all(f["check"] == "strict_source" for f in result["failures"]):
        settle_then_give_way(req, pair.deadline)
        started = time.perf_counter()
        done = len(result["trials"])
        _redrawn_trial(pair, done, pair.base_seed + 999_983 + salt, opts, result, tamper, peaks)
        # the new state drawn, the reference probed and both states sent to the candidate,
        # outside the trial itself (which `trials_s` counts)
        inner = sum(t.get("seconds", 0.0) for t in result["trials"][done:])
        result.setdefault("phases", {})["redrawn_s"] = time.perf_counter() - started - inner


def _read_strict(req, result):
    """Strict mode's reading of the candidate's source (`strict_source.py`): what it finds
    fails the answer, and the trials still run, so the report says what the candidate did
    as well."""
    try:
        with open(req["candidate"], encoding="utf-8") as f:
            found = strict_source.findings(f.read())
    except (OSError, UnicodeDecodeError) as e:
        found = [f"the source could not be read ({exc_line(e)})"]
    if found:
        result["failures"].append({"check": "strict_source", "trial": None, "output": None,
                                   "inputs": None, "message": "strict mode refuses the "
                                   "source: " + "; ".join(found)})


REDRAW_FLOOR = 0.05


def redrawn_state(model, seed):
    """A new value for every floating parameter (buffers kept): normal draws scaled by the
    parameter's own root mean square, at least REDRAW_FLOOR, so hard-coded weights stop
    matching and a branch scaled by a tiny learned factor starts to matter. Drawn where
    each parameter lives, in float32 (at least), with a generator per device seeded with
    `seed`: on the host, a GEMM's 67 M weights took about 3 s per answer
    (bench/results/reward_breakdown_h100_jobs4_a32db04.md)."""
    generators = {}
    state = dict(model.state_dict())
    for name, p in model.named_parameters():
        if not p.is_floating_point():
            continue
        g = generators.get(p.device)
        if g is None:
            g = generators[p.device] = torch.Generator(device=p.device).manual_seed(seed)
        rms = float(p.detach().double().pow(2).mean().sqrt()) if p.numel() else 0.0
        scale = max(rms if math.isfinite(rms) else 0.0, REDRAW_FLOOR)
        wide = torch.float64 if p.dtype == torch.float64 else torch.float32
        draw = torch.randn(p.shape, generator=g, dtype=wide, device=p.device).mul_(scale)
        state[name] = draw.to(dtype=p.dtype)
    return state


def _attribute_snapshot(model):
    """Every submodule's plain tensor attributes (not in `state_dict`): the objects and a
    copy of their values, so a call that reassigns or updates them can be undone."""
    snap = []
    for _, m in model.named_modules():
        saved = {k: (v, v.detach().clone()) for k, v in vars(m).items()
                 if isinstance(v, torch.Tensor)}
        snap.append((m, saved))
    return snap


def _restore_attributes(snap):
    """Puts back what `_attribute_snapshot` saw: the same objects with the same values, and
    no tensor attribute the call added."""
    with torch.no_grad():
        for m, saved in snap:
            for k in [k for k, v in vars(m).items()
                      if isinstance(v, torch.Tensor) and k not in saved]:
                del m.__dict__[k]
            for k, (obj, value) in saved.items():
                m.__dict__[k] = obj
                if obj.shape == value.shape and obj.dtype == value.dtype:
                    obj.copy_(value)


def _redrawn_trial(pair, t, seed, opts, result, tamper, peaks):
    """One more trial with re-drawn parameters, the same new state loaded into reference
    and candidate; the original state is restored after it. Skipped (and said so) when the
    reference's outputs are not finite under the new parameters."""
    original = {k: v.detach().clone() for k, v in pair.ref_model.state_dict().items()}
    attributes = _attribute_snapshot(pair.ref_model)
    state = redrawn_state(pair.ref_model, seed)
    try:
        with torch.no_grad():
            pair.ref_model.load_state_dict(state, strict=True)
            torch.manual_seed(seed)
            probe = flatten(pair.run_reference(pair.make_inputs(seed)))
        # the probe's call moved the plain tensor attributes (an RNN's `self.hidden`)
        _restore_attributes(attributes)
        if not all(bool(torch.isfinite(o).all()) for o in probe
                   if isinstance(o, torch.Tensor) and (o.is_floating_point() or o.is_complex())):
            result["redrawn_parameters"] = "skipped: the reference is not finite with them"
            return
        del probe
        # the reference's buffers (running statistics) moved in the probe: start again
        mixed = dict(original)
        for name, _ in pair.ref_model.named_parameters():
            mixed[name] = state[name]
        pair.ref_model.load_state_dict(mixed, strict=True)
        pair.cand.load_state(dict(pair.ref_model.state_dict()))
        _trial(pair, t, seed, "fresh", None, opts, result, tamper, peaks)
        result["trials"][-1]["inputs"] = "redrawn"
        result["redrawn_parameters"] = "checked"
    except Stop:
        result["redrawn_parameters"] = "failed"
        for f in result["failures"]:
            if f.get("trial") == t:
                f["message"] = "with re-drawn parameters: " + f["message"]
    except Failure as f:
        result["failures"].append({"check": "state_dict", "trial": t, "output": None,
                                   "inputs": "redrawn", "message": "re-drawn parameters "
                                   f"could not be loaded: {f.message}"})
    finally:
        with torch.no_grad():
            pair.ref_model.load_state_dict(original, strict=True)
        if pair.cand is not None and not result["failures"]:
            try:
                pair.cand.load_state(original)
            except Failure:
                pass


def isolation_report(pair):
    """Where the candidate ran: in this process (drtc's own module) or in its own sandboxed
    process, with what that sandbox holds."""
    if pair.trusted:
        return {"process": "checker", "reason": "trusted: drtc's own generated module"}
    return {"process": "own", "sandbox": pair.cand.sandbox, "channel": pair.cand.channel}


def verify_pair(req, tamper, spares):
    """Builds the pair and runs the trials; returns (report, pair or None)."""
    result = {"verified": False, "failures": [], "trials": [], "device": DEVICE,
              "poison": poison_note(), "strict": bool(req.get("strict", False))}
    pair = None
    peaks = None
    started = time.perf_counter()
    try:
        pair = Pair(req, spares)
        result["phases"] = {"load_s": time.perf_counter() - started}
        try:
            jit = precompile(pair)
        except Failure:
            raise  # an answer that no fresh process could load again
        except Exception:
            jit = None  # an optimization only: the trials compile what it did not
        if jit is not None:
            # the candidate's kernels compiled concurrently before the first trial
            result["phases"]["jit_s"] = jit[1]
            result["precompiled_launches"] = jit[0]
        result["kind"] = pair.kind
        result["isolation"] = isolation_report(pair)
        peaks = Peaks()
        # the fp32 policy's rule unless the request names another
        rule = req.get("rule") or DEFAULT_RULE
        if rule not in VALUE_RULES:
            raise Failure("other", f"unknown value rule {rule!r} (known: {', '.join(VALUE_RULES)})")
        result["rule"] = rule
        with RulePrecision(rule):
            # the trials read the rule from the request: the resolved one, never null
            run_trials(pair, dict(req, rule=rule), result, tamper, peaks)
        graph_report(pair, result)
    except Failure as f:
        result["failures"].append({"check": f.check, "trial": None, "output": None,
                                   "inputs": None, "message": f.message})
        if f.check == "out_of_memory":
            result["fatal"] = True
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        check, msg, fatal = memory.classify(e, "verification")
        if fatal:
            result["fatal"] = True
        result["failures"].append({"check": check, "trial": None, "output": None,
                                   "inputs": None, "message": msg if check != "crash"
                                   else exc_line(e)})
        result["traceback"] = traceback.format_exc()[-4000:]
    if peaks is not None:
        try:
            result["memory"] = peaks.report()
        except BaseException:
            pass  # a broken context; the failure above says why
    result["verified"] = not result["failures"] and len(result["trials"]) >= MIN_TRIALS
    phases = result.setdefault("phases", {})
    phases["trials_s"] = sum(t.get("seconds", 0.0) for t in result["trials"])
    phases["truth_s"] = sum(t.get("truth_seconds", 0.0) for t in result["trials"])
    phases["first_trial_s"] = result["trials"][0].get("seconds", 0.0) if result["trials"] else 0.0
    phases["total_s"] = time.perf_counter() - started
    return result, pair
