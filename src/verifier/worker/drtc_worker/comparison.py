"""The value rules of semantics.md: output count, type, device, shape, dtype; NaN/Inf
where the reference is finite; the relative-norm rule for floats (KernelBench's allclose
figures reported, not gating); exact equality for integers and booleans; aliasing; inputs
unmodified; module state after the call.

Tensors are compared in flat pieces of CHUNK_ELEMENTS, so the temporaries (float64 copies,
masks) stay bounded whatever the size of the outputs."""

import math

import torch

from .common import finite

REL_NORM_TOL = 1e-3
# Under the fp32 rule an untrusted answer must also be this close to the reference by the
# relative norm (its denominator at least the rule's atol per element): allclose's absolute
# tolerance hides fp16/bf16 arithmetic on outputs of magnitude 1e-2 (2e-4 to 2e-3 relative,
# honest fp32 about 1e-7; the tol_* answers of tests/adversarial).
UNTRUSTED_FP32_REL_NORM = 1e-4
FP32_ATOL = 1e-4
# Elements compared at a time: float64 pieces of 128 MiB, temporaries about 1 GiB.
CHUNK_ELEMENTS = 1 << 24


def _pieces(*tensors):
    """Matching flat pieces of same-shaped tensors (a view when contiguous, else one copy
    the size of the tensor)."""
    flats = [t.reshape(-1) for t in tensors]
    n = flats[0].numel()
    for s in range(0, n, CHUNK_ELEMENTS):
        yield [f[s:s + CHUNK_ELEMENTS] for f in flats]


def storage_range(t):
    if not isinstance(t, torch.Tensor) or t.numel() == 0:
        return None
    try:
        st = t.untyped_storage()
        start = st.data_ptr()
        return (start, start + st.nbytes(), t.device)
    except Exception:
        return None


def overlaps(a, b):
    return a is not None and b is not None and a[2] == b[2] and a[0] < b[1] and b[0] < a[1]


def check_aliasing(cand_out, inputs, ref_out):
    problems = []
    in_ranges = [storage_range(x) for x in inputs]
    ref_ranges = [storage_range(r) for r in ref_out]
    for i, o in enumerate(cand_out):
        r = storage_range(o)
        if r is None:
            continue
        for j, ir in enumerate(in_ranges):
            if overlaps(r, ir):
                problems.append(f"output {i} shares memory with input {j}")
        for j, rr in enumerate(ref_ranges):
            if overlaps(r, rr):
                problems.append(f"output {i} shares memory with reference output {j}")
    return problems


def _as_real(t):
    return torch.view_as_real(t) if t.is_complex() else t


def tensors_identical(a, b):
    """Bitwise-equal values (NaN equal to NaN), same shape and dtype."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    floating = a.is_floating_point() or a.is_complex()
    for x, y in _pieces(_as_real(a), _as_real(b)):
        if floating:
            same = (x == y) | (torch.isnan(x) & torch.isnan(y))
            if not bool(same.all()):
                return False
        elif not bool(torch.equal(x, y)):
            return False
    return True


def inputs_equal(inputs, snapshot):
    changed = []
    for i, (x, s) in enumerate(zip(inputs, snapshot)):
        if isinstance(x, torch.Tensor):
            if not tensors_identical(x, s):
                changed.append(i)
    return changed


def clone_all(xs):
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


def _compare_scalar(ref, out, m, fails):
    if type(ref) is not type(out) and not (isinstance(ref, (int, float))
                                           and isinstance(out, (int, float))):
        fails.append(("type", f"expected {type(ref).__name__}, got {type(out).__name__}"))
    elif isinstance(ref, float):
        err = abs(ref - out) / (1e-6 + abs(ref))
        m["rel_err"] = finite(err)
        if not err < REL_NORM_TOL:
            fails.append(("values", f"scalar {out!r} vs reference {ref!r}"))
    elif ref != out:
        fails.append(("values", f"{out!r} vs reference {ref!r}"))
    return m, fails


def _compare_exact(ref, out, m, fails):
    differ = 0
    for r, o in _pieces(ref, out):
        if not bool(torch.equal(o, r)):
            differ += int((o != r).sum())
    m["exact"] = differ == 0
    if differ:
        fails.append(("values", f"{differ} of {ref.numel()} elements differ (exact match "
                                "required for integers and booleans)"))
    return m, fails


def floored_rel(diff_norm, ref_norm, numel):
    """The relative norm with its denominator at least FP32_ATOL per element."""
    return diff_norm / max(1e-6 + ref_norm, FP32_ATOL * math.sqrt(max(numel, 1)))


def error_figures(x, truth, floored=False):
    """Relative-norm error, max abs error and allclose(atol=rtol=1e-4) of `x` against
    `truth` (a float64 result of the same shape), in bounded pieces; with `floored` the
    relative norm's denominator is at least FP32_ATOL per element."""
    diff_norm = ref_norm = max_abs = 0.0
    close = True
    for a, t in _pieces(_as_real(x), _as_real(truth)):
        a = a.double()
        t = t.double()
        d = a - t
        diff_norm = math.hypot(diff_norm, float(torch.linalg.vector_norm(d)))
        ref_norm = math.hypot(ref_norm, float(torch.linalg.vector_norm(t)))
        if d.numel():
            max_abs = max(max_abs, float(d.abs().max()))
        close = close and bool(torch.allclose(a, t, atol=1e-4, rtol=1e-4))
    if floored:
        return floored_rel(diff_norm, ref_norm, x.numel()), max_abs, close
    return diff_norm / (1e-6 + ref_norm), max_abs, close


def compare_one(ref, out, norm_floor=0.0):
    """Compares one output; returns (metrics, failures) where failures are (check, msg).
    `norm_floor` (per element) bounds the relative norm's denominator from below:
    `max(norm(ref), norm_floor * sqrt(n))`."""
    m = {}
    fails = []
    if isinstance(ref, torch.Tensor) != isinstance(out, torch.Tensor):
        fails.append(("type", f"expected {type(ref).__name__}, got {type(out).__name__}"))
        return m, fails
    if not isinstance(ref, torch.Tensor):
        return _compare_scalar(ref, out, m, fails)
    if out.device.type != ref.device.type:
        fails.append(("device", f"on {out.device}, reference on {ref.device}"))
        return m, fails
    if tuple(out.shape) != tuple(ref.shape):
        fails.append(("shape", f"shape {list(out.shape)}, reference {list(ref.shape)}"))
        return m, fails
    if out.dtype != ref.dtype:
        fails.append(("dtype", f"dtype {out.dtype}, reference {ref.dtype}"))
        return m, fails
    if not (ref.is_floating_point() or ref.is_complex()):
        return _compare_exact(ref, out, m, fails)
    # the fp32 rule's 1e-4 is a statement about fp32 (and wider) outputs only
    m["fp32_or_wider"] = ref.dtype in (torch.float32, torch.float64, torch.complex64,
                                       torch.complex128)
    nan_count = inf_count = 0
    nonfinite_mismatch = False
    diff_norm = ref_norm = max_abs = 0.0
    close_2 = close_4 = True
    for r, o in _pieces(_as_real(ref), _as_real(out)):
        r = r.double()
        o = o.double()
        ref_finite = torch.isfinite(r)
        nan_count += int((torch.isnan(o) & ref_finite).sum())
        inf_count += int((torch.isinf(o) & ref_finite).sum())
        if nan_count or inf_count:
            continue  # the output fails on NaN/Inf; only count them from here on
        # Non-finite reference positions must be matched exactly.
        nonfin = ~ref_finite
        if bool(nonfin.any()):
            same = (torch.isnan(r) & torch.isnan(o)) | (r == o)
            if not bool(same[nonfin].all()):
                nonfinite_mismatch = True
        rf = r.masked_fill(nonfin, 0.0)
        of = o.masked_fill(nonfin, 0.0)
        diff = rf - of
        diff_norm = math.hypot(diff_norm, float(torch.linalg.vector_norm(diff)))
        ref_norm = math.hypot(ref_norm, float(torch.linalg.vector_norm(rf)))
        if diff.numel():
            max_abs = max(max_abs, float(diff.abs().max()))
        close_2 = close_2 and bool(torch.allclose(of, rf, atol=1e-2, rtol=1e-2))
        close_4 = close_4 and bool(torch.allclose(of, rf, atol=1e-4, rtol=1e-4))
    m["nan"] = nan_count
    m["inf"] = inf_count
    if nan_count or inf_count:
        what = []
        if nan_count:
            what.append(f"{nan_count} NaN")
        if inf_count:
            what.append(f"{inf_count} Inf")
        hint = (" (allocations are poisoned with NaN, so unwritten elements show as NaN)"
                if nan_count else "")
        fails.append(("nan_inf", f"{' and '.join(what)} of {ref.numel()} elements where the "
                                 f"reference is finite{hint}"))
        return m, fails
    m["nonfinite_mismatch"] = nonfinite_mismatch
    if nonfinite_mismatch:
        fails.append(("values", "differs where the reference is NaN or Inf"))
    err = diff_norm / max(1e-6 + ref_norm, norm_floor * math.sqrt(ref.numel()))
    m["rel_err"] = finite(err)
    m["rel_err_floored"] = finite(floored_rel(diff_norm, ref_norm, ref.numel()))
    m["max_abs_err"] = finite(max_abs)
    m["allclose_1e-2"] = close_2
    m["allclose_1e-4"] = close_4
    if not err < REL_NORM_TOL:
        fails.append(("values", f"relative norm error {err:.3e} >= {REL_NORM_TOL:g} "
                                f"(max abs error {m['max_abs_err']})"))
    return m, fails


def compare_outputs(ref_out, cand_out):
    outputs = []
    fails = []
    if len(ref_out) != len(cand_out):
        fails.append(("count", None, f"{len(cand_out)} outputs, reference has {len(ref_out)}"))
        return outputs, fails
    for i, (r, o) in enumerate(zip(ref_out, cand_out)):
        m, f = compare_one(r, o)
        m["index"] = i
        outputs.append(m)
        fails.extend((c, i, msg) for c, msg in f)
    return outputs, fails


# State tensors include statistics that are exactly zero in exact arithmetic (the running
# mean of a BatchNorm after a zero-mean layer): their relative norm would compare two
# roundings. The denominator is at least the norm of the fp32 rule's atol per element.
STATE_NORM_FLOOR = 1e-4


def compare_state(ref_state, cand_state):
    """Module parameters and buffers after the call (e.g. BatchNorm running statistics),
    by the relative-norm rule with its denominator at least STATE_NORM_FLOOR per element.
    Returns the entries and the failures as (name, message): the name only where a value
    rule failed on floats (which the float64 truth may judge), else None."""
    report = []
    fails = []
    for name, r in ref_state.items():
        o = cand_state.get(name)
        if o is None:
            fails.append((None, f"`{name}` missing from ModelNew's state"))
            continue
        m, f = compare_one(r, o, norm_floor=STATE_NORM_FLOOR)
        entry = {"name": name, "rel_err": m.get("rel_err"), "ok": not f}
        report.append(entry)
        rescuable = all(c == "values" for c, _ in f) and not m.get("nonfinite_mismatch") \
            and "fp32_or_wider" in m
        for _, msg in f:
            fails.append((name if rescuable else None, f"`{name}` after the call: {msg}"))
    return report, fails


VALUE_RULES = ("rel_norm", "allclose_1e-4")
# the rule of a request that names none: the fp32 policy's
DEFAULT_RULE = "allclose_1e-4"


def rule_failures(outputs, rule, untrusted=False):
    """The fp32 policy's rule (KernelBench's current one): on top of the relative norm,
    every fp32 (or wider) output must pass allclose(atol=rtol=1e-4); half-precision outputs
    keep the relative-norm rule, since 1e-4 is below their own rounding. An `untrusted`
    answer's fp32 outputs must also be within UNTRUSTED_FP32_REL_NORM by the floored
    relative norm."""
    if rule != "allclose_1e-4":
        return []
    fails = []
    for m in outputs:
        if not m.get("fp32_or_wider", True):
            continue
        if m.get("allclose_1e-4") is False:
            fails.append(("values", m["index"], "allclose(atol=rtol=1e-4) fails (the fp32 "
                          f"rule; relative norm {m.get('rel_err', float('nan')):.3e}, max abs "
                          f"error {m.get('max_abs_err')})"))
        elif untrusted and m.get("rel_err_floored") is not None \
                and not m["rel_err_floored"] < UNTRUSTED_FP32_REL_NORM:
            fails.append(("values", m["index"], "relative norm error "
                          f"{m['rel_err_floored']:.3e} >= {UNTRUSTED_FP32_REL_NORM:g} (the fp32 "
                          "rule for an untrusted answer: allclose(1e-4) passes, but the error "
                          "is that of reduced-precision arithmetic)"))
    return fails


class RulePrecision:
    """Under the fp32 rule the reference is full-fp32 PyTorch: fp32 matmuls run with
    `torch.set_float32_matmul_precision("highest")` while verifying (restored after)."""

    def __init__(self, rule):
        self.rule = rule
        self.prev = None

    def __enter__(self):
        if self.rule == "allclose_1e-4":
            self.prev = torch.get_float32_matmul_precision()
            torch.set_float32_matmul_precision("highest")

    def __exit__(self, *exc):
        if self.prev is not None:
            torch.set_float32_matmul_precision(self.prev)
