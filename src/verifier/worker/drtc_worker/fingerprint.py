"""Fingerprints of an untrusted candidate's timed calls. Its process computes one per timed
call, after the call's timed window and before it says the loop is done (so the work a
fingerprint needs falls inside the checker's own clock over the loop), and the checker
recomputes a few of them, for calls it picks only after the loop, from the reference's
outputs on the same inputs. An answer that computes the checked last calls right and the
others fast and wrong is caught: a fingerprint cannot be made right without the outputs.

Per output: its element count and three fp32 reductions (sum, sum of absolute values,
Euclidean norm). Values that pass the fp32 rule elementwise (allclose, atol = rtol = 1e-4)
pass `mismatch`'s bounds with room to spare: they allow 1% of the reference's absolute sum
(norm) plus the rule's atol per element (per square root of the count for the norm). A
fingerprint outside them is judged again against the float64 truth's, as the value rules
judge outputs (the caller's `timing.py`)."""

import math

import torch

SLACK = 0.01
ATOL = 1e-4


def fingerprint(outputs):
    """`outputs` (a flat list): per output [count, sum, sum of |x|, norm] as floats."""
    fps = []
    with torch.no_grad():
        for o in outputs:
            if isinstance(o, torch.Tensor):
                x = o.detach()
                if x.is_complex():
                    x = torch.view_as_real(x)
                if not x.is_floating_point():
                    x = x.to(torch.float32)
                if x.numel() == 0:
                    fps.append([0.0, 0.0, 0.0, 0.0])
                    continue
                # reduced in fp32 at least: a half-precision sum can overflow where the
                # values do not (one side finite, the other inf, for honest values)
                acc = x.dtype if x.dtype == torch.float64 else torch.float32
                v = torch.stack([x.sum(dtype=acc), torch.linalg.vector_norm(x, 1, dtype=acc),
                                 torch.linalg.vector_norm(x, 2, dtype=acc)]).to(torch.float64)
                fps.append([float(x.numel())] + [float(t) for t in v.tolist()])
            elif isinstance(o, (int, float, bool)):
                f = float(o)
                fps.append([1.0, f, abs(f), abs(f)])
            else:
                fps.append([-1.0, 0.0, 0.0, 0.0])  # no value to fingerprint
    return fps


def _same_nonfinite(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == b


def mismatch(cand, ref):
    """Why the candidate's fingerprint of one call is not the reference's (None: it is)."""
    if not isinstance(cand, list) or len(cand) != len(ref):
        return f"{len(ref)} outputs expected, the fingerprint has " \
               f"{len(cand) if isinstance(cand, list) else 'none'}"
    for j, (c, r) in enumerate(zip(cand, ref)):
        if not isinstance(c, list) or len(c) != 4:
            return f"output {j}: malformed fingerprint"
        try:
            n, s, a, q = (float(v) for v in c)
        except (TypeError, ValueError):
            return f"output {j}: malformed fingerprint"
        rn, rs, ra, rq = r
        if n != rn:
            return f"output {j}: {n:g} elements, the reference has {rn:g}"
        # |c - r| <= atol + rtol |r| elementwise bounds the sums' difference by
        # atol n + rtol sum|r| and the norms' by atol sqrt(n) + rtol |r|
        for what, x, y, bound in (("sum", s, rs, SLACK * ra + ATOL * rn),
                                  ("sum of |x|", a, ra, SLACK * ra + ATOL * rn),
                                  ("norm", q, rq, SLACK * rq + ATOL * math.sqrt(rn))):
            if not (math.isfinite(x) and math.isfinite(y)):
                if not _same_nonfinite(x, y):
                    return f"output {j}: {what} {x!r}, the reference's {y!r}"
                continue
            if abs(x - y) > bound:
                return f"output {j}: {what} {x:.6g}, the reference's {y:.6g}"
    return None
