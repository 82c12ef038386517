"""The worker's comparisons in bounded pieces give exactly what whole-tensor comparisons
give: metrics and failures with pieces of 7 elements equal those with one piece (the
relative norm error up to rounding), over
floats with NaN/Inf in the reference, NaN/Inf in the output, integers, booleans, complex,
non-contiguous, empty and 0-dim tensors. Run by tests/verifier_suite.rs."""

import sys

import torch

sys.path.insert(0, sys.argv[1])  # src/verifier/worker
from drtc_worker import comparison  # noqa: E402


def cases():
    g = torch.Generator().manual_seed(0)
    r = torch.randn(37, 11, generator=g)
    close = r + 1e-5 * torch.randn(37, 11, generator=g)
    far = r + 1e-2 * torch.randn(37, 11, generator=g)
    rn = r.clone()
    rn[3, 4] = float("inf")
    rn[5, 5] = float("nan")
    on = close.clone()
    on[3, 4] = float("inf")
    on[5, 5] = float("nan")
    off = on.clone()
    off[5, 5] = 1.0
    holes = close.clone()
    holes[0, :5] = float("nan")
    holes[20, 1] = float("inf")
    ints = torch.randint(0, 5, (50,), generator=g)
    ints2 = ints.clone()
    ints2[3] += 1
    ints2[40] += 1
    c = torch.randn(9, 5, dtype=torch.complex64, generator=g)
    yield r, close
    yield r, far
    yield rn, on
    yield rn, off
    yield r, holes
    yield r, close.t().contiguous().t()
    yield ints, ints
    yield ints, ints2
    yield ints > 2, ints2 > 2
    yield c, c + 1e-4
    yield torch.empty(0, 3), torch.empty(0, 3)
    yield torch.tensor(2.0), torch.tensor(2.001)


def main():
    n = 0
    for ref, out in cases():
        comparison.CHUNK_ELEMENTS = 1 << 24
        whole = comparison.compare_one(ref, out)
        same_whole = comparison.tensors_identical(ref, out)
        comparison.CHUNK_ELEMENTS = 7
        pieces = comparison.compare_one(ref, out)
        same_pieces = comparison.tensors_identical(ref, out)
        # the norms are combined piece by piece (math.hypot): equal up to rounding
        a, b = dict(whole[0]), dict(pieces[0])
        for key in ("rel_err", "rel_err_floored"):
            ea, eb = a.pop(key, None), b.pop(key, None)
            assert (ea is None) == (eb is None) and (ea is None or abs(ea - eb) <= 1e-12 * ea), \
                (key, whole, pieces)
        assert a == b and whole[1] == pieces[1], (whole, pieces)
        assert same_whole == same_pieces, (same_whole, same_pieces)
        n += 1
    # the figures themselves
    comparison.CHUNK_ELEMENTS = 7
    m, f = comparison.compare_one(*list(cases())[4])
    assert m["nan"] == 5 and m["inf"] == 1 and f[0][0] == "nan_inf", (m, f)
    m, f = comparison.compare_one(*list(cases())[7])
    assert f == [("values", "2 of 50 elements differ (exact match required for integers "
                            "and booleans)")], f
    print(f"{n} comparisons agree in pieces and whole")


main()
