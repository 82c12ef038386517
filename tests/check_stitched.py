"""Checks stitched programs against their references on the CPU (no Triton needed: the
kernel modules are the subproblems' own PyTorch code).

usage: check_stitched.py CASES.json -> one JSON line per case: {"name", "ok", "exact", "detail"}
A case is {"name", "module"} (a KernelBench module: `Model` and `ModelNew` in one file) or
{"name", "reference", "module"} (a seed reference with `fused_operator`, and a module with
`triton_fused_operator`). Agreement: semantics.md's rule; `exact` says whether every output
is bit-for-bit equal.
"""
import importlib.util
import json
import sys

import torch


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compare(ref, out):
    if isinstance(ref, torch.Tensor):
        ref, out = [ref], [out]
    ref, out = list(ref), list(out)
    if len(ref) != len(out):
        return f"{len(out)} outputs, expected {len(ref)}", False
    exact = True
    for i, (r, o) in enumerate(zip(ref, out)):
        if r.shape != o.shape or r.dtype != o.dtype:
            return f"output {i}: {o.dtype}{list(o.shape)}, expected {r.dtype}{list(r.shape)}", False
        exact = exact and torch.equal(r, o)
        if r.dtype.is_floating_point:
            err = float((r.double() - o.double()).norm() / (1e-6 + r.double().norm()))
            if not err < 1e-3:
                return f"output {i}: relative error {err:.3g}", False
        elif not torch.equal(r, o):
            return f"output {i}: values differ", False
    return None, exact


def run(case):
    if "reference" in case:
        ref = load(case["reference"], "ref_" + case["name"])
        cand = load(case["module"], "cand_" + case["name"])
        torch.manual_seed(1)
        inputs = ref.get_inputs()
        with torch.no_grad():
            torch.manual_seed(2)
            expect = ref.fused_operator(*[t.clone() for t in inputs])
            torch.manual_seed(2)
            got = cand.triton_fused_operator(*[t.clone() for t in inputs])
        return compare(expect, got)
    mod = load(case["module"], "mod_" + case["name"])
    torch.manual_seed(1)
    init = mod.get_init_inputs()
    ref = mod.Model(*init)
    cand = mod.ModelNew(*init)
    cand.load_state_dict(ref.state_dict())
    inputs = mod.get_inputs()
    with torch.no_grad():
        torch.manual_seed(2)
        expect = ref(*[t.clone() for t in inputs])
        torch.manual_seed(2)
        got = cand(*[t.clone() for t in inputs])
    return compare(expect, got)


def main():
    for case in json.load(open(sys.argv[1])):
        try:
            detail, exact = run(case)
        except Exception as e:  # reported, not raised: one bad case must not hide others
            detail, exact = f"{type(e).__name__}: {e}", False
        print(json.dumps({"name": case["name"], "ok": detail is None, "exact": exact, "detail": detail}), flush=True)


if __name__ == "__main__":
    main()
