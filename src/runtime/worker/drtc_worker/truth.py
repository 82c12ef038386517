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
  the truth has the reference's outputs and shapes, and the reference agrees with it to a
  relative norm below TRUTH_SANITY;
- the candidate is as accurate as the reference itself: it passes allclose(atol=rtol=1e-4)
  against the truth, or its relative-norm error and its max-abs error against the truth
  are each at most ACCURACY_FACTOR times the reference's own.

Every output the rule accepted carries its four figures (`reference_accuracy`), and the
report says how many were accepted this way. Failures of other checks (shape, NaN/Inf,
non-finite positions, exact integers, state) are never rescued."""

import copy

import torch

from .common import DEVICE, exc_line
from .comparison import error_figures

ACCURACY_FACTOR = 2.0
TRUTH_SANITY = 1e-2


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


def _to64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.double()
    return x


def float64_outputs(pair, seed, buffers, flatten):
    """The reference run in float64 on trial `seed`'s inputs, its module state as it was
    before the trial's call."""
    inputs = [_to64(x) for x in pair.make_inputs(seed)]
    with torch.no_grad():
        torch.manual_seed(seed + 1)
        if pair.kind == "kernelbench":
            model = copy.deepcopy(pair.ref_model).double()
            if buffers:
                for name, b in model.named_buffers():
                    if name in buffers:
                        b.copy_(buffers[name])
            out = flatten(model(*inputs))
            del model
        else:
            out = flatten(pair.ref_mod.fused_operator(*inputs))
    return out


def _rescuable(m):
    return m.get("fp32_or_wider") is not None and not m.get("nonfinite_mismatch")


def apply(outputs, fails, ref_out, cand_out, truth_fn, draws_random):
    """Judges the value failures of one call against the float64 truth; returns the
    failures left. `fails` holds (check, output index, message); `truth_fn()` computes the
    truth (called only when some failure may be rescued)."""
    if not fails or any(c != "values" or i is None for c, i, _ in fails):
        return fails
    failing = sorted({i for _, i, _ in fails})
    if not all(_rescuable(outputs[i]) for i in failing):
        return fails
    if draws_random:
        return [(c, i, f"{msg}; no float64 truth to judge accuracy: the program draws "
                 "random numbers") for c, i, msg in fails]
    try:
        truth = truth_fn()
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        return [(c, i, f"{msg}; the float64 truth could not be computed ({exc_line(e)})")
                for c, i, msg in fails]
    accepted = set()
    notes = {}
    for i in failing:
        t = truth[i] if i < len(truth) else None
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != tuple(ref_out[i].shape):
            notes[i] = "the float64 truth has another output structure"
            continue
        ref_rel, ref_max, _ = error_figures(ref_out[i], t)
        cand_rel, cand_max, cand_close = error_figures(cand_out[i], t)
        fig = {"reference_rel_err": ref_rel, "reference_max_abs_err": ref_max,
               "candidate_rel_err": cand_rel, "candidate_max_abs_err": cand_max,
               "candidate_allclose_1e-4": cand_close, "factor": ACCURACY_FACTOR}
        sane = ref_rel < TRUTH_SANITY
        as_good = cand_close or (cand_rel <= ACCURACY_FACTOR * ref_rel
                                 and cand_max <= ACCURACY_FACTOR * ref_max)
        fig["accepted"] = bool(sane and as_good)
        outputs[i]["reference_accuracy"] = fig
        if fig["accepted"]:
            accepted.add(i)
        elif not sane:
            notes[i] = (f"the reference itself is {ref_rel:.2e} from float64 (relative "
                        f"norm): no meaningful truth")
        else:
            notes[i] = (f"against float64 the candidate's error is {cand_rel:.2e} (max "
                        f"{cand_max:.3g}), the reference's {ref_rel:.2e} (max {ref_max:.3g}): "
                        f"more than {ACCURACY_FACTOR:g}x the reference's own")
    del truth
    return [(c, i, f"{msg}; {notes[i]}" if i in notes else msg)
            for c, i, msg in fails if i not in accepted]
