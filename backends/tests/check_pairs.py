"""Runs reference seed programs and drtc-generated modules on the same random inputs under
Triton's CPU interpreter and compares them with the seed's rule
(norm(ref - out) / (1e-6 + norm(ref)) < 1e-3; integers and bools exactly).

usage: check_pairs.py PAIRS.json [cuda]  ->  one JSON line per pair: {"name", "ok", "detail"}
With `cuda`, inputs are moved to the GPU and the kernels are compiled by Triton for real.
"""
import importlib.util
import json
import os
import sys

DEVICE = sys.argv[2] if len(sys.argv) > 2 else "cpu"
if DEVICE == "cpu":
    os.environ.setdefault("TRITON_INTERPRET", "1")
import torch  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compare(ref, out):
    if len(ref) != len(out):
        return f"{len(out)} outputs, expected {len(ref)}"
    for i, (r, o) in enumerate(zip(ref, out)):
        if r.shape != o.shape or r.dtype != o.dtype:
            return f"output {i}: {o.dtype}{list(o.shape)}, expected {r.dtype}{list(r.shape)}"
        if r.dtype.is_floating_point:
            if not torch.isfinite(o).all() and torch.isfinite(r).all():
                return f"output {i}: non-finite values"
            err = float((r.double() - o.double()).norm() / (1e-6 + r.double().norm()))
            if not err < 1e-3:
                return f"output {i}: relative error {err:.3g}"
        elif not torch.equal(r, o):
            return f"output {i}: values differ"
    return None


def main():
    pairs = json.load(open(sys.argv[1]))
    for p in pairs:
        detail = None
        try:
            ref = load(p["reference"], "ref_" + p["name"])
            cand = load(p["candidate"], "cand_" + p["name"])
            for seed in (1, 2):
                torch.manual_seed(seed)
                inputs = [t.to(DEVICE) for t in ref.get_inputs()]
                with torch.no_grad():
                    expect = ref.fused_operator(*[t.clone() for t in inputs])
                    got = cand.triton_fused_operator(*[t.clone() for t in inputs])
                if DEVICE == "cuda":
                    torch.cuda.synchronize()
                detail = compare([t.cpu() for t in expect], [t.cpu() for t in got])
                if detail:
                    break
        except Exception as e:  # reported, not raised: one bad pair must not hide others
            detail = f"{type(e).__name__}: {e}"
        print(json.dumps({"name": p["name"], "ok": detail is None, "detail": detail}), flush=True)


if __name__ == "__main__":
    main()
