"""Calls one drtc-generated module with inputs it was not compiled for and compares it to
the reference program it embeds (`_DRTC_SOURCE`, run as plain PyTorch). Used by
bench/other_shapes.sh; prints one JSON line.

usage: other_shapes.py TASK DEVICE MODULE REPORT  (DEVICE: cpu or cuda; REPORT: the
                                                  `drtc compile --report` of MODULE)
       other_shapes.py --summary RESULTS.jsonl    (the figures, as a Markdown table)

Two calls per module:
  batch      every tensor input whose dim 0 equals the first tensor input's dim 0 gets
             dim 0 + 1 (if the reference refuses that, only the first input does); values
             are resampled from the original inputs' values, so their domain is kept
  noncontig  the compiled shapes, as non-contiguous views (rank >= 2: transposed storage;
             rank 1: every other element of a longer tensor)
Outcomes: pass (equal to the reference by semantics.md's rule: relative norm error < 1e-3,
exact for integers and booleans), both_raise (the reference itself refuses the inputs and
the module raises too), wrong (a different result: what the guards exist to prevent),
raised (the module raised where the reference did not).
"""
import importlib.util
import json
import os
import sys
import types
import warnings

REL_NORM_TOL = 1e-3


def load(path):
    spec = importlib.util.spec_from_file_location("drtc_other_shapes_module", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def same(ref, out):
    """None when `out` matches `ref`, else why not."""
    import torch

    ref = list(ref) if isinstance(ref, (list, tuple)) else [ref]
    out = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(ref) != len(out):
        return f"{len(out)} outputs, reference {len(ref)}"
    for i, (r, o) in enumerate(zip(ref, out)):
        if not isinstance(r, torch.Tensor) or not isinstance(o, torch.Tensor):
            if r != o:
                return f"output {i}: {o!r} vs {r!r}"
            continue
        if tuple(r.shape) != tuple(o.shape) or r.dtype != o.dtype:
            return f"output {i}: {o.dtype} {list(o.shape)} vs reference {r.dtype} {list(r.shape)}"
        if not r.is_floating_point():
            if not torch.equal(r, o):
                return f"output {i}: integers differ"
            continue
        r, o = r.double(), o.double()
        fin = torch.isfinite(r)
        if not bool(((torch.isnan(r) & torch.isnan(o)) | (r == o))[~fin].all()):
            return f"output {i}: differs where the reference is not finite"
        if bool((~torch.isfinite(o) & fin).any()):
            return f"output {i}: NaN/Inf where the reference is finite"
        rf = torch.where(fin, r, torch.zeros_like(r))
        of = torch.where(fin, o, torch.zeros_like(o))
        err = float(torch.linalg.vector_norm(rf - of)) / (1e-6 + float(torch.linalg.vector_norm(rf)))
        if not err < REL_NORM_TOL:
            return f"output {i}: relative norm error {err:.3e}"
    return None


def resample(t, shape, gen):
    import torch

    flat = t.reshape(-1)
    if flat.numel() == 0:
        return torch.zeros(shape, dtype=t.dtype, device=t.device)
    idx = torch.randint(0, flat.numel(), shape, generator=gen).to(t.device)
    return flat[idx]


def noncontiguous(t):
    import torch

    if not isinstance(t, torch.Tensor) or t.dim() == 0:
        return t
    if t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1:
        return t.transpose(-1, -2).contiguous().transpose(-1, -2)
    wide = torch.empty(t.shape[:-1] + (2 * t.shape[-1],), dtype=t.dtype, device=t.device)
    wide[..., ::2] = t
    return wide[..., ::2]


def main(task, device, path, report):
    row = {"task": task, "verified": False}
    try:
        rep = json.load(open(report))
        row["verified"] = rep.get("verification", {}).get("verified") is True
        if not row["verified"]:
            row["reason"] = "; ".join(rep.get("verification", {}).get("reasons", []))[:300]
    except (OSError, ValueError):
        # the compile log sits next to the report: its first line says why
        try:
            first = open(report[: -len(".json")] + ".log").readline().strip()
        except OSError:
            first = ""
        row["reason"] = f"drtc compile wrote no report: {first}"
    if row["verified"]:
        try:
            row["calls"] = calls(path, device)
        except Exception as e:
            row["reason"] = f"the checks themselves failed: {type(e).__name__}: {str(e)[:200]}"
            row["verified"] = False
    print(json.dumps(row), flush=True)


def calls(path, device):
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    import torch

    mod = load(path)
    ref = types.ModuleType("drtc_other_shapes_reference")
    exec(compile(mod._DRTC_SOURCE, "<reference>", "exec"), ref.__dict__)
    if hasattr(ref, "Model"):
        init = list(ref.get_init_inputs()) if hasattr(ref, "get_init_inputs") else []
        torch.manual_seed(0)
        model = mod.ModelNew(*init).to(device)
        reference = ref.Model(*init).to(device)
        reference.load_state_dict(model.state_dict())
        run, run_ref = model, reference
    else:
        run, run_ref = mod.triton_fused_operator, ref.fused_operator
    torch.manual_seed(1)
    base = [x.to(device) if isinstance(x, torch.Tensor) else x for x in ref.get_inputs()]
    gen = torch.Generator().manual_seed(2)

    def call(inputs):
        fact = {"inputs": [f"{x.dtype}{list(x.shape)}" if isinstance(x, torch.Tensor)
                           else repr(x) for x in inputs]}
        before = dict(mod._DRTC_GUARD_STATS)
        expected = out = None
        try:
            with torch.no_grad():
                expected = run_ref(*inputs)
        except Exception as e:
            fact["ref_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with torch.no_grad():
                    out = run(*inputs)
            except Exception as e:
                fact["error"] = f"{type(e).__name__}: {str(e)[:200]}"
        fact["warnings"] = [str(w.message)[:300] for w in caught
                            if str(w.message).startswith("drtc:")]
        after = mod._DRTC_GUARD_STATS
        if after["compiles"] + after["disk_hits"] + after["memory_hits"] > \
                before["compiles"] + before["disk_hits"] + before["memory_hits"] \
                and after["reference"] == before["reference"]:
            fact["how"] = "recompiled"
        elif after["reference"] > before["reference"]:
            fact["how"] = "reference"
        else:
            fact["how"] = "kernels"
        if expected is None:
            fact["outcome"] = "both_raise" if out is None else "ran_where_reference_raised"
        elif out is None:
            fact["outcome"] = "raised"
        else:
            why = same(expected, out)
            fact["outcome"] = "pass" if why is None else "wrong"
            if why:
                fact["detail"] = why
        return fact

    tensors = [x for x in base if isinstance(x, torch.Tensor) and x.dim() > 0]
    result = {}
    if tensors:
        d0 = tensors[0].shape[0]

        def grown(only_first):
            out, first = [], True
            for x in base:
                if isinstance(x, torch.Tensor) and x.dim() > 0 and x.shape[0] == d0 \
                        and (first or not only_first):
                    out.append(resample(x, (d0 + 1,) + tuple(x.shape[1:]), gen))
                    first = False
                else:
                    out.append(x)
            return out

        fact = call(grown(False))
        if fact["outcome"] == "both_raise":
            fact = call(grown(True))
        result["batch"] = fact
        result["noncontig"] = call([noncontiguous(x) for x in base])
    return result


def summary(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    compiled = [r for r in rows if r.get("verified")]
    print(f"tasks: {len(rows)}; compiled and verified at the compiled shapes: {len(compiled)}")
    for r in rows:
        if not r.get("verified"):
            print(f"- {r['task']}: not counted: {r.get('reason', '')}"[:300])
    print()
    print("| call | pass | of which recompiled | of which reference | both raise | raised | wrong |")
    print("|---|---|---|---|---|---|---|")
    for case in ("batch", "noncontig"):
        facts = [r["calls"][case] for r in compiled if case in r.get("calls", {})]
        count = lambda k, v: sum(1 for f in facts if f.get(k) == v)  # noqa: E731
        passed = [f for f in facts if f["outcome"] == "pass"]
        print(f"| {case} | {len(passed)}/{len(facts)} | "
              f"{sum(1 for f in passed if f['how'] == 'recompiled')} | "
              f"{sum(1 for f in passed if f['how'] == 'reference')} | "
              f"{count('outcome', 'both_raise')} | {count('outcome', 'raised')} | "
              f"{count('outcome', 'wrong')} |")
    both = [r for r in compiled if all(r.get("calls", {}).get(c, {}).get("outcome") == "pass"
                                       for c in ("batch", "noncontig"))]
    print()
    print(f"modules passing both other-shape calls: {len(both)}/{len(compiled)}")
    for r in compiled:
        for case, f in r.get("calls", {}).items():
            if f["outcome"] not in ("pass",):
                print(f"- {r['task']} {case}: {f['outcome']} "
                      f"{f.get('error') or f.get('detail') or f.get('ref_error') or ''}"[:300])


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2])
    else:
        main(*sys.argv[1:5])
