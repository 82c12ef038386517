"""Calls a generated module with inputs its kernels were not compiled for, and the reference
with the same inputs; prints one JSON line of facts per call (the test asserts on them).

usage: check_guards.py MODULE REFERENCE CALLS.json
MODULE is a generated module (KernelBench `ModelNew`, or seed `triton_fused_operator`);
REFERENCE the program it was compiled from (`Model`, or `fused_operator`). A call is
{"label", "inputs": [INPUT...], "patch": {key: value}} where an INPUT is
{"number": 0.5} or {"shape": [..], "dtype": "float32", "view": null|"transpose"|"slice"|"expand"}
(a view builds a non-contiguous tensor of that shape), and "patch" changes entries of the
module's _DRTC_GUARD before the call (to take away the drtc it records).
Each line: {"label", "allclose", "error", "ref_error", "warnings", "stats", "contiguous"}.
"""
import importlib.util
import json
import os
import sys
import warnings

os.environ.setdefault("TRITON_INTERPRET", "1")
import torch  # noqa: E402


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def make(spec, gen):
    if "number" in spec:
        return spec["number"]
    shape = list(spec["shape"])
    dtype = getattr(torch, spec.get("dtype", "float32"))
    view = spec.get("view")
    if view == "transpose" and len(shape) >= 2:
        base = torch.randn(shape[:-2] + [shape[-1], shape[-2]], generator=gen)
        t = base.to(dtype).transpose(-1, -2)
    elif view == "slice" and shape:
        base = torch.randn(shape[:-1] + [2 * shape[-1]], generator=gen)
        t = base.to(dtype)[..., ::2]
    elif view == "expand" and shape:
        base = torch.randn([1] + shape[1:], generator=gen)
        t = base.to(dtype).expand(shape)
    else:
        t = torch.randn(shape, generator=gen).to(dtype)
    return t


def outputs(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def close(a, b):
    a, b = outputs(a), outputs(b)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        tol = 1e-2 if x.dtype in (torch.float16, torch.bfloat16) else 1e-4
        if not torch.allclose(x.double(), y.double(), atol=tol, rtol=tol, equal_nan=True):
            return False
    return True


def main():
    mod = load(sys.argv[1], "drtc_guarded")
    ref = load(sys.argv[2], "drtc_guard_reference")
    calls = json.load(open(sys.argv[3]))
    kernelbench = hasattr(ref, "Model")
    if kernelbench:
        init = list(ref.get_init_inputs()) if hasattr(ref, "get_init_inputs") else []
        torch.manual_seed(0)
        model = mod.ModelNew(*init)
        reference = ref.Model(*init)
        reference.load_state_dict(model.state_dict())
        run, run_ref = model, reference
    else:
        run, run_ref = mod.triton_fused_operator, ref.fused_operator
    gen = torch.Generator().manual_seed(1)
    for call in calls:
        mod._DRTC_GUARD.update(call.get("patch", {}))
        inputs = [make(s, gen) for s in call["inputs"]]
        fact = {"label": call["label"], "error": None, "ref_error": None,
                "contiguous": [x.is_contiguous() for x in inputs
                               if isinstance(x, torch.Tensor)]}
        out = expected = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with torch.no_grad():
                    out = run(*inputs)
            except Exception as e:
                fact["error"] = f"{type(e).__name__}: {e}"
        fact["warnings"] = [str(w.message) for w in caught
                            if str(w.message).startswith("drtc:")]
        try:
            with torch.no_grad():
                expected = run_ref(*inputs)
        except Exception as e:
            fact["ref_error"] = f"{type(e).__name__}: {e}"
        fact["allclose"] = out is not None and expected is not None and close(out, expected)
        fact["stats"] = dict(mod._DRTC_GUARD_STATS)
        print(json.dumps(fact), flush=True)


if __name__ == "__main__":
    main()
