"""The reference-accuracy rule: the value rules judged against a float64 ground truth.

A value rule (the relative norm, the fp32 rule's allclose 1e-4) compares the candidate with
the reference as PyTorch runs it. Where PyTorch's own path is further from the exact result
than the rule's tolerance, two correct executions fail the rule against each other: cuDNN
runs fp32 convolutions in TF32 by default, so a last-bit difference upstream of a
convolution (a fused BatchNorm, a bias added in the epilogue) changes which inputs round
where, and depth amplifies it; sums of huge terms cancel to small results whose fp32
rounding is the size of the tolerance. When a value rule fails, the reference is run once
more in float64 (its parameters and inputs converted; float64 has no TF32 path) as the
truth, and an output the rule rejected is accepted only if

- the truth is meaningful: the program draws no random numbers (float64 draws differ),
  the truth has the reference's outputs and shapes, and the reference run once more in
  fp32 with TF32 off (cuDNN and matmuls) agrees with it by the relative-norm rule
  (TRUTH_SANITY) or by allclose(atol=rtol=1e-4) (statistics that are rounding noise around
  zero), so the float64 run computed the same program and the problem is not so
  ill-conditioned that fp32 itself cannot answer it;
- the candidate is as accurate as the reference itself: it passes allclose(atol=rtol=1e-4)
  against the truth (an untrusted answer also within UNTRUSTED_FP32_REL_NORM of it by the
  floored relative norm), or its relative-norm error and its max-abs error against the
  truth are each at most ACCURACY_FACTOR times the reference's own.

Module state after the call (BatchNorm running statistics) is judged the same way against
the float64 module's state. Every output the rule accepted carries its figures
(`reference_accuracy`), and the report says how many were accepted this way. Failures of
other checks (shape, NaN/Inf, non-finite positions, exact integers) are never rescued."""

import contextlib
import copy
import time

import torch

from .common import DEVICE, exc_line
from .memory import is_oom
from .comparison import UNTRUSTED_FP32_REL_NORM, error_figures

ACCURACY_FACTOR = 2.0
TRUTH_SANITY = 1e-3


def rng_state():
    """The generators a program's random draws advance (CPU, and CUDA on CUDA)."""
    states = [torch.get_rng_state()]
    if DEVICE == "cuda":
        states.append(torch.cuda.get_rng_state())
    return states


def rng_advanced(before, after):
    return any(not torch.equal(a, b) for a, b in zip(before, after))


def buffer_snapshot(pair):
    """The reference module's buffers before a call (running statistics move in forward);
    None for seed programs."""
    if pair.kind != "kernelbench":
        return None
    return {n: b.detach().clone() for n, b in pair.ref_model.named_buffers()}


def _to(x, dtype):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.to(dtype)
    return x


@contextlib.contextmanager
def _no_tf32():
    matmul = torch.get_float32_matmul_precision()
    cudnn = torch.backends.cudnn.allow_tf32
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.set_float32_matmul_precision(matmul)
        torch.backends.cudnn.allow_tf32 = cudnn


def _run_copy(pair, seed, buffers, flatten, dtype):
    """The reference on trial `seed`'s inputs, converted to `dtype`, TF32 off: a copy of
    its module with the buffers it had before the trial's call. Returns the outputs and the
    module's state after the call (None for seed programs). `seed` may also be a pair
    (seed, inputs): those inputs instead of the seed's own."""
    seed, given = seed if isinstance(seed, tuple) else (seed, None)
    inputs = [_to(x, dtype) for x in (given if given is not None else pair.make_inputs(seed))]
    with torch.no_grad(), _no_tf32():
        torch.manual_seed(seed + 1)
        if pair.kind != "kernelbench":
            return flatten(pair.ref_mod.fused_operator(*inputs)), None
        model = copy.deepcopy(pair.ref_model).to(dtype)
        if buffers:
            for name, b in model.named_buffers():
                if name in buffers:
                    b.copy_(buffers[name])
        out = flatten(model(*inputs))
        state = model.state_dict()
        del model
    return out, state


class Truth:
    """The float64 run of one call, computed on first use, and the fp32 run without TF32
    that checks it. `why_not` says why there is none (a program that draws random
    numbers)."""

    def __init__(self, pair, seed, buffers, flatten, draws_random):
        self.args = (pair, seed, buffers, flatten)
        self.why_not = ("no float64 truth to judge accuracy: the program draws random "
                        "numbers") if draws_random else None
        self.runs = None
        self.seconds = 0.0  # spent computing the runs
        # it could not be computed for want of memory: the failures it would have judged
        # are out of memory (retried alone), not a verdict on the values
        self.out_of_memory = False

    def get(self):
        """((outputs, state) in float64, (outputs, state) in fp32 without TF32)."""
        if self.runs is None:
            started = time.perf_counter()
            try:
                self.runs = (_run_copy(*self.args, torch.float64),
                             _run_copy(*self.args, torch.float32))
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    raise
                self.why_not = f"the float64 truth could not be computed ({exc_line(e)})"
                self.out_of_memory = is_oom(e)
                raise
            finally:
                self.seconds += time.perf_counter() - started
        return self.runs


def judge(ref, cand, truth, ieee, untrusted=False):
    """Returns (figures, accepted, note) for one tensor the value rule rejected."""
    ok = lambda t: isinstance(t, torch.Tensor) and tuple(t.shape) == tuple(ref.shape)
    if not (ok(truth) and ok(ieee)):
        return None, False, "the float64 truth has another output structure"
    ieee_rel, _, ieee_close = error_figures(ieee, truth)
    ref_rel, ref_max, _ = error_figures(ref, truth)
    cand_rel, cand_max, cand_close = error_figures(cand, truth)
    fig = {"reference_rel_err": ref_rel, "reference_max_abs_err": ref_max,
           "candidate_rel_err": cand_rel, "candidate_max_abs_err": cand_max,
           "candidate_allclose_1e-4": cand_close, "ieee_rel_err": ieee_rel,
           "factor": ACCURACY_FACTOR}
    if not (ieee_rel < TRUTH_SANITY or ieee_close):
        fig["accepted"] = False
        return fig, False, (f"the reference in fp32 without TF32 is {ieee_rel:.2e} from its "
                            "float64 run (relative norm; allclose 1e-4 fails too): fp32 "
                            "cannot answer this problem to the rule, so no truth judges it")
    if cand_close and untrusted:
        floored, _, _ = error_figures(cand, truth, floored=True)
        fig["candidate_rel_err_floored"] = floored
        cand_close = floored < UNTRUSTED_FP32_REL_NORM
    accepted = cand_close or (cand_rel <= ACCURACY_FACTOR * ref_rel
                              and cand_max <= ACCURACY_FACTOR * ref_max)
    fig["accepted"] = bool(accepted)
    if accepted:
        return fig, True, None
    return fig, False, (f"against float64 the candidate's error is {cand_rel:.2e} (max "
                        f"{cand_max:.3g}), the reference's {ref_rel:.2e} (max {ref_max:.3g}): "
                        f"more than {ACCURACY_FACTOR:g}x the reference's own")


def _rescuable(m):
    return m.get("fp32_or_wider") is not None and not m.get("nonfinite_mismatch")


def apply(outputs, fails, ref_out, cand_out, truth, untrusted=False):
    """Judges the value failures of one call's outputs against the truth; returns the
    failures left. `fails` holds (check, output index, message); an `untrusted` answer
    passes allclose against the truth only within UNTRUSTED_FP32_REL_NORM."""
    if not fails or any(c != "values" or i is None for c, i, _ in fails):
        return fails
    failing = sorted({i for _, i, _ in fails})
    if not all(_rescuable(outputs[i]) for i in failing):
        return fails
    if truth.why_not is None:
        try:
            (t_out, _), (i_out, _) = truth.get()
        except BaseException:
            pass
    if truth.why_not is not None:
        check = "out_of_memory" if truth.out_of_memory else None
        return [(check or c, i, f"{msg}; {truth.why_not}") for c, i, msg in fails]
    accepted = set()
    notes = {}
    for i in failing:
        at = lambda xs: xs[i] if i < len(xs) else None
        fig, ok, note = judge(ref_out[i], cand_out[i], at(t_out), at(i_out), untrusted)
        if fig is not None:
            outputs[i]["reference_accuracy"] = fig
        if ok:
            accepted.add(i)
        else:
            notes[i] = note
    return [(c, i, f"{msg}; {notes[i]}" if i in notes else msg)
            for c, i, msg in fails if i not in accepted]


def apply_state(report, fails, ref_state, cand_state, truth):
    """The same for module state: `fails` holds (name, message); `report` the entries of
    `compare_state`, which get the figures. Returns the messages left."""
    if not fails:
        return []
    if all(name is None for name, _ in fails):
        return [msg for _, msg in fails]
    if truth.why_not is None:
        try:
            (_, t_state), (_, i_state) = truth.get()
        except BaseException:
            pass
    if truth.why_not is not None or t_state is None:
        return [f"{msg}; {truth.why_not or 'no module state to judge'}" for _, msg in fails]
    entries = {e["name"]: e for e in report}
    left = []
    for name, msg in fails:
        if name is None:
            left.append(msg)
            continue
        r, o = ref_state.get(name), cand_state.get(name)
        t, i = t_state.get(name), i_state.get(name)
        floating = isinstance(r, torch.Tensor) and r.is_floating_point()
        if not (floating and isinstance(o, torch.Tensor) and o.shape == r.shape):
            left.append(msg)
            continue
        fig, ok, note = judge(r, o, t, i)
        if name in entries and fig is not None:
            entries[name]["reference_accuracy"] = fig
            entries[name]["ok"] = ok
        if not ok:
            left.append(f"{msg}; {note}")
    return left
