"""Profiles a drtc-generated KernelBench module and its reference, kernel by kernel.

Usage (drtc's Python, or the GPU machine's own):

    drtc compile model.py -o gen.py --device cuda --no-verify
    python bench/profile_pair.py gen.py [--calls 20] [--top 15] [--device cuda]

The generated module holds the reference program (`Model`, `get_inputs`,
`get_init_inputs`) and `ModelNew`. Both are built as the verifier builds them (same seed,
`ModelNew.load_state_dict(Model.state_dict())`, training mode) and called as the timer
calls them (`torch.no_grad()`, the same inputs). For each side it prints: the CUDA-event
median of `--calls` calls after warm-up (no L2 flush: this is a breakdown, not the
benchmark), the host time per call, and from `torch.profiler` the kernels per call with
their count and device time, heaviest first; then the ATen ops each side dispatches
(count per call), so a difference in the work done (another `train` flag, an extra copy,
a different library path) shows by name. Also whether the parameters of recurrent layers
are one contiguous cuDNN buffer on each side. With `--device cpu` (Triton's
interpreter) only host times and ATen ops are shown. `--compile` adds a third side,
torch.compile (default mode) of the reference, timed and profiled the same way (its ATen
ops are not listed: Inductor's kernels bypass the dispatcher).
"""

import argparse
import collections
import importlib.util
import os
import statistics
import sys
import time


def load(path):
    spec = importlib.util.spec_from_file_location("drtc_profile_pair_mod", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def flat_weights(torch, model):
    """For each recurrent layer: whether its parameters share one storage (cuDNN's flat
    weight buffer)."""
    out = {}
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.RNNBase):
            ptrs = {p.untyped_storage().data_ptr() for p in m.parameters()}
            out[name or "<root>"] = len(ptrs) == 1
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("module", help="the module drtc wrote (`drtc compile ... -o`)")
    p.add_argument("--device", default=None, help="cuda (default when present) or cpu")
    p.add_argument("--calls", type=int, default=20, help="timed and profiled calls per side")
    p.add_argument("--top", type=int, default=15, help="kernels listed per side")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true",
                   help="also profile torch.compile (default mode) of the reference")
    p.add_argument("--torch-precision", choices=["highest", "high"], default=None,
                   help="torch.set_float32_matmul_precision for the reference and "
                        "torch.compile (default: PyTorch's own)")
    args = p.parse_args()
    import torch

    if args.torch_precision:
        torch.set_float32_matmul_precision(args.torch_precision)

    dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if dev == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    from torch.profiler import ProfilerActivity, profile
    from torch.utils._python_dispatch import TorchDispatchMode

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.counts = collections.Counter()

        def __torch_dispatch__(self, func, types, a=(), kw=None):
            self.counts[str(func)] += 1
            return func(*a, **(kw or {}))

    mod = load(args.module)
    torch.manual_seed(args.seed)
    init = list(mod.get_init_inputs()) if hasattr(mod, "get_init_inputs") else []
    torch.manual_seed(args.seed)
    ref = mod.Model(*init).to(dev)
    torch.manual_seed(args.seed)
    cand = mod.ModelNew(*init).to(dev)
    cand.load_state_dict(ref.state_dict(), strict=True)
    torch.manual_seed(args.seed + 424242)
    inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    print(f"module {args.module} on {dev}; training mode: reference {ref.training}, "
          f"candidate {cand.training}; float32 matmul precision "
          f"{torch.get_float32_matmul_precision()}")
    for side, model in (("reference", ref), ("candidate", cand)):
        fw = flat_weights(torch, model)
        if fw:
            print(f"  {side}: recurrent layers with one flat weight buffer: {fw}")
    sides = [("reference", ref), ("candidate", cand)]
    if args.compile:
        sides.append(("torch.compile", torch.compile(ref)))
    with torch.no_grad():
        for side, model in sides:
            for _ in range(5):
                model(*inputs)
            sync()
            ev, host = [], []
            for _ in range(args.calls):
                h0 = time.perf_counter()
                if dev == "cuda":
                    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    s.record()
                    model(*inputs)
                    e.record()
                    sync()
                    ev.append(s.elapsed_time(e))
                else:
                    model(*inputs)
                host.append((time.perf_counter() - h0) * 1e3)
            line = f"{side}: host {statistics.median(host):.3f} ms/call"
            if ev:
                line += f", CUDA events median {statistics.median(ev):.4f} ms"
            print(line)
            if side != "torch.compile":
                ops = Ops()
                with ops:
                    model(*inputs)
                sync()
                print("  ATen ops per call: " + ", ".join(
                    f"{k} x{v}" for k, v in sorted(ops.counts.items(), key=lambda kv: -kv[1])))
            if dev != "cuda":
                continue
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(args.calls):
                    model(*inputs)
                sync()
            kernels = collections.defaultdict(lambda: [0, 0.0])
            for evt in prof.events():
                if evt.device_type == torch.autograd.DeviceType.CUDA:
                    k = kernels[evt.name]
                    k[0] += 1
                    k[1] += evt.device_time
            total = sum(v[1] for v in kernels.values()) / args.calls
            n = sum(v[0] for v in kernels.values()) / args.calls
            print(f"  kernels per call: {n:.0f}, device time {total / 1e3:.4f} ms")
            for name, (count, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[: args.top]:
                print(f"    {us / args.calls / 1e3:9.4f} ms  x{count / args.calls:<7.1f} {name[:110]}")


if __name__ == "__main__":
    main()
