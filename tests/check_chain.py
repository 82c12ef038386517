"""Runs decomposed programs subproblem by subproblem on the CPU and compares each with its
original program, bit for bit.

usage: check_chain.py CASES.json -> one JSON line per case: {"name", "ok", "detail"}
A case is {"name", "reference", "inputs", "outputs", "subproblems"}: `reference` a seed
program's source (`get_inputs`, `fused_operator`), `inputs` the names its inputs are read by
(in parameter order), `outputs` the names of its outputs, and `subproblems` a list of
{"pytorch", "reads", "writes"} (what `drtc decompose` writes): each subproblem's
`fused_operator` is called with the values named by `reads`, and its results are named by
`writes`. The outputs of the chain must equal the reference's, bit for bit (NaN included).
"""
import json
import sys
import types

import torch

BITS = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def load(source, name):
    module = types.ModuleType(name)
    exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return module


def clone(t):
    return t.clone() if isinstance(t, torch.Tensor) else t


def as_list(x):
    return [x] if isinstance(x, torch.Tensor) else list(x)


def same_bits(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point and a.element_size() in BITS:
        bits = BITS[a.element_size()]
        return torch.equal(a.contiguous().view(bits), b.contiguous().view(bits))
    return torch.equal(a, b)


def run(case):
    ref = load(case["reference"], "reference")
    torch.manual_seed(1)
    inputs = ref.get_inputs()
    with torch.no_grad():
        expect = as_list(ref.fused_operator(*[clone(t) for t in inputs]))
        env = dict(zip(case["inputs"], [clone(t) for t in inputs]))
        for i, sub in enumerate(case["subproblems"]):
            module = load(sub["pytorch"], f"subproblem_{i}")
            outs = as_list(module.fused_operator(*[env[r] for r in sub["reads"]]))
            if len(outs) != len(sub["writes"]):
                return f"subproblem {i}: {len(outs)} results, {len(sub['writes'])} writes"
            env.update(zip(sub["writes"], outs))
        got = [env[o] for o in case["outputs"]]
    if len(got) != len(expect):
        return f"{len(got)} outputs, expected {len(expect)}"
    for i, (r, o) in enumerate(zip(expect, got)):
        if not same_bits(r, o):
            return (f"output {i}: {o.dtype}{list(o.shape)} differs from the original's "
                    f"{r.dtype}{list(r.shape)}")
    return None


def main():
    for case in json.load(open(sys.argv[1])):
        try:
            detail = run(case)
        except Exception as e:  # reported, not raised: one bad case must not hide others
            detail = f"{type(e).__name__}: {e}"
        print(json.dumps({"name": case["name"], "ok": detail is None, "detail": detail}),
              flush=True)


if __name__ == "__main__":
    main()
