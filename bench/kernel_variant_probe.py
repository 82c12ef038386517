"""Times textual variants of the kernels in a drtc-generated module, kernel by kernel.

Usage (the GPU machine's Python):

    drtc compile model.py -o gen.py --device cuda --search=off --no-verify
    python bench/kernel_variant_probe.py gen.py VARIANTS.json [--calls 20]

(`--device cuda` matters: a module compiled for the CPU computes the reference program on
the GPU's inputs, which this probe reports as a failed variant.)

VARIANTS.json is a list of `{"name": ..., "replace": [[old, new], ...]}`: each variant is
the module's source with every `old` replaced by `new` (each `old` must occur, or the
variant is reported as not applicable). Each variant is written to its own file, imported,
built as the verifier builds it (same seed, the reference's state dict), called on the
same inputs, and:
- its outputs are compared with the unmodified module's (max abs difference), so a
  variant that changes the result shows it;
- the CUDA-event median of the forward over `--calls` calls (no L2 flush) and, from
  `torch.profiler`, each kernel's device time per call are printed.
A probe to decide what to build, not a benchmark of record: the winners go into the
templates and are measured by `drtc suite`.
"""

import argparse
import collections
import json
import os
import statistics
import tempfile
import warnings

from graphs_check import load  # the module loader the bench scripts share (bench/ on the path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module")
    p.add_argument("variants")
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--torch-precision", choices=["highest", "high"], default=None)
    args = p.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile

    if args.torch_precision:
        torch.set_float32_matmul_precision(args.torch_precision)
    # a module that falls back to the reference program (compiled for another device or
    # other inputs) times PyTorch, not its kernels: that is a failed variant, not a result
    warnings.filterwarnings("error", message="drtc: computing the reference")
    base_src = open(args.module).read()
    variants = [{"name": "as generated", "replace": []}] + json.load(open(args.variants))
    tmp = tempfile.mkdtemp(prefix="drtc_variants_")
    base_out = None
    inputs = None
    for i, v in enumerate(variants):
        src = base_src
        missing = [old for old, _ in v["replace"] if old not in src]
        if missing:
            print(f"{v['name']}: not applicable ({missing[0][:60]!r} not found)")
            continue
        for old, new in v["replace"]:
            src = src.replace(old, new)
        path = os.path.join(tmp, f"variant_{i}.py")
        with open(path, "w") as f:
            f.write(src)
        try:
            mod = load(path, f"drtc_variant_{i}")
            torch.manual_seed(0)
            init = list(mod.get_init_inputs()) if hasattr(mod, "get_init_inputs") else []
            torch.manual_seed(0)
            ref = mod.Model(*init).cuda()
            torch.manual_seed(0)
            cand = mod.ModelNew(*init).cuda()
            cand.load_state_dict(ref.state_dict(), strict=True)
            del ref
            if inputs is None:
                torch.manual_seed(424242)
                inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
            with torch.no_grad():
                out = cand(*inputs)
                out = out if isinstance(out, (tuple, list)) else (out,)
                if base_out is None:
                    base_out = [o.clone() for o in out]
                    diff = 0.0
                else:
                    diff = max(float((a - b).abs().max()) for a, b in zip(out, base_out))
                del out
                for _ in range(3):
                    cand(*inputs)
                torch.cuda.synchronize()
                ev = []
                for _ in range(args.calls):
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    cand(*inputs)
                    e.record()
                    torch.cuda.synchronize()
                    ev.append(s.elapsed_time(e))
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(args.calls):
                        cand(*inputs)
                    torch.cuda.synchronize()
            kernels = collections.defaultdict(float)
            for evt in prof.events():
                if evt.device_type == torch.autograd.DeviceType.CUDA and evt.name.startswith("drtc_"):
                    kernels[evt.name] += evt.device_time / 1e3 / args.calls
            if not kernels:
                raise RuntimeError("no drtc kernel ran in the timed calls")
            ks = ", ".join(f"{k} {t:.4f}" for k, t in sorted(kernels.items()))
            print(f"{v['name']}: forward {statistics.median(ev):.4f} ms; max diff {diff:.3g}; {ks}",
                  flush=True)
            del cand
        except Exception as e:  # a variant that does not compile is a result, not a crash
            print(f"{v['name']}: failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
