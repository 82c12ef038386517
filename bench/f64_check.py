"""Compares a drtc-generated KernelBench module and its reference against the same model
run in float64, element by element.

Usage (CPU, Triton's interpreter; run with drtc's Python, ~/.cache/drtc/venv/bin/python):

    drtc compile model.py -o gen.py --no-verify --device cpu [--set batch_size=4]
    python bench/f64_check.py gen.py [--seed 0] [--input-seed 1000] [--device cpu]

The generated module holds the reference program (`Model`, `get_inputs`,
`get_init_inputs`, with drtc's `--set` overrides) and `ModelNew`. Both are built as the
verifier builds them (same seed, `ModelNew.load_state_dict(Model.state_dict())`, training
mode, no grad). The float64 "truth" is `Model` cast to float64 with float64 inputs.

For every output it prints: each side's relative norm error and max abs error against the
truth, whether `allclose(cand, ref, atol=rtol=1e-4)` (KernelBench's rule) holds, and for
the elements where it fails, the reference's magnitude, the truth, and each side's own
error against the truth. When the reference is as far from the truth as the candidate at
those elements, the failure is float32 rounding noise of the computation (the same for any
float32 implementation), not a candidate bug.
"""

import argparse
import importlib.util
import os
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("drtc_f64_check_mod", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def flat(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def rel_norm(a, truth):
    d = (a.double() - truth).norm()
    n = truth.norm()
    return float(d / n) if n > 0 else float(d)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module", help="the module drtc wrote (`drtc compile ... -o`)")
    p.add_argument("--seed", type=int, default=0, help="seed of get_init_inputs and Model()")
    p.add_argument("--input-seed", type=int, default=1000, help="seed of get_inputs()")
    p.add_argument("--device", default="cpu", help="cpu (Triton interpreter) or cuda")
    p.add_argument("--worst", type=int, default=8, help="failing elements to list")
    args = p.parse_args()
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    import torch

    mod = load(args.module)
    dev = torch.device(args.device)
    torch.manual_seed(args.seed)
    init = list(mod.get_init_inputs()) if hasattr(mod, "get_init_inputs") else []
    torch.manual_seed(args.seed)
    ref = mod.Model(*init).to(dev)
    torch.manual_seed(args.seed)
    cand = mod.ModelNew(*init).to(dev)
    cand.load_state_dict(ref.state_dict(), strict=True)
    torch.manual_seed(args.seed)
    f64 = mod.Model(*init).to(dev)
    f64.load_state_dict(ref.state_dict(), strict=True)
    f64 = f64.double()
    torch.manual_seed(args.input_seed)
    inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    inputs64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in inputs]
    with torch.no_grad():
        torch.manual_seed(args.input_seed + 1)
        r = flat(ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))
        torch.manual_seed(args.input_seed + 1)
        c = flat(cand(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]))
        torch.manual_seed(args.input_seed + 1)
        t = flat(f64(*inputs64))
    for i, (ri, ci, ti) in enumerate(zip(r, c, t)):
        ti = ti.double()
        print(f"output {i}: shape {tuple(ri.shape)}, |truth| max {ti.abs().max().item():.4g}, "
              f"median {ti.abs().median().item():.4g}")
        for name, x in (("reference", ri), ("candidate", ci)):
            err = (x.double() - ti).abs()
            print(f"  {name:9s} vs float64: relative norm {rel_norm(x, ti):.3e}, max abs "
                  f"{err.max().item():.4g}, allclose(1e-4) vs float64: "
                  f"{bool(torch.allclose(x.double(), ti, atol=1e-4, rtol=1e-4))}")
        cd, rd = ci.double(), ri.double()
        bad = ~torch.isclose(cd, rd, atol=1e-4, rtol=1e-4)
        n = int(bad.sum())
        print(f"  allclose(candidate, reference, atol=rtol=1e-4): {n == 0} "
              f"({n} of {ri.numel()} elements fail; cand-ref relative norm "
              f"{rel_norm(ci, rd):.3e})")
        if n == 0:
            continue
        # the rule KernelBench's would be against float64 with the reference's own error as
        # slack: |cand - f64| <= atol + rtol * |f64| + |ref - f64|, element by element
        slack = (cd - ti).abs() <= 1e-4 + 1e-4 * ti.abs() + (rd - ti).abs()
        print(f"  |candidate - float64| <= 1e-4 + 1e-4 * |float64| + |reference - float64| "
              f"everywhere: {bool(slack.all())} ({int((~slack).sum())} elements fail)")
        rerr = (rd - ti).abs()[bad]
        cerr = (cd - ti).abs()[bad]
        print(f"  at the failing elements: |reference| median {rd.abs()[bad].median().item():.4g}"
              f", |reference - float64| median {rerr.median().item():.4g} max "
              f"{rerr.max().item():.4g}; |candidate - float64| median "
              f"{cerr.median().item():.4g} max {cerr.max().item():.4g}")
        print(f"  failing elements where the reference is nearer the truth than the "
              f"candidate: {int((rerr < cerr).sum())} of {n}")
        excess = (cd - rd).abs() - (1e-4 + 1e-4 * rd.abs())
        order = torch.argsort(excess.flatten(), descending=True)[: args.worst]
        print("  worst: index, reference, candidate, float64, |ref-f64|, |cand-f64|")
        for k in order.tolist():
            idx = tuple(int(v) for v in torch.unravel_index(torch.tensor(k), ri.shape))
            print(f"    {idx} {rd.flatten()[k].item():.6g} {cd.flatten()[k].item():.6g} "
                  f"{ti.flatten()[k].item():.6g} {abs(rd.flatten()[k] - ti.flatten()[k]).item():.3g} "
                  f"{abs(cd.flatten()[k] - ti.flatten()[k]).item():.3g}")


if __name__ == "__main__":
    main()
