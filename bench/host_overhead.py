"""Host time per call of a generated KernelBench module's entry point, step by step.

Usage (drtc's Python; CPU tensors are enough, the steps read only tensor metadata):

    drtc compile model.py -o gen.py --device cuda --no-verify
    python bench/host_overhead.py gen.py [--calls 2000]

Times, in microseconds per call, the three host steps `ModelNew.forward` takes before its
first launch: building the argument list (the forward's lines up to its `outs = ...` call,
which look up the module's parameters and buffers), the guard's fast check
(`_drtc_matches`) and, in a module with CUDA graphs, the graph key (`_drtc_graph_key`).
On CUDA tensors the graph path runs `_drtc_dense_index` (the guard in one `map` per
property) and the dense key; on CPU tensors `_drtc_dense_index` does all its comparisons and
then answers None at the device check, so its time is the GPU path's, and `_drtc_matches`
there is that plus the per-argument loop the GPU path skips.
"""

import argparse
import inspect
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_pair import load  # noqa: E402  (the generated module, loaded as profiled)


def argument_builder(mod):
    """A function of (self, *activations) running the forward up to its kernel call and
    returning the argument list that call receives."""
    src = inspect.getsource(mod.ModelNew.forward).splitlines()
    head, body = src[0], []
    for line in src[1:]:
        if "outs = " in line:
            call = line.split("outs = ", 1)[1]
            body.append(line.split("outs = ")[0] + "return " + call[call.index("(") + 1:-1])
            break
        body.append(line)
    else:
        raise SystemExit("no `outs = ...` line in ModelNew.forward")
    ns = dict(vars(mod))
    exec("\n".join([head.strip().replace("def forward", "def build")] +
                   [b[4:] for b in body]), ns)
    return ns["build"]


def per_call_us(fn, calls):
    fn()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("module")
    p.add_argument("--calls", type=int, default=2000)
    a = p.parse_args()
    mod = load(a.module)
    model = mod.ModelNew(*mod.get_init_inputs())
    inputs = mod.get_inputs()
    build = argument_builder(mod)
    args = build(model, *inputs)
    print(f"{a.module}: {len(args)} arguments")
    print(f"  argument list   {per_call_us(lambda: build(model, *inputs), a.calls):8.1f} us")
    dense = getattr(mod, "_drtc_dense_index", None)  # absent in modules before b18820b
    if dense is not None:
        print(f"  _drtc_dense_index {per_call_us(lambda: dense(args), a.calls):6.1f} us")
    print(f"  _drtc_matches   {per_call_us(lambda: mod._drtc_matches(args), a.calls):8.1f} us")
    if hasattr(mod, "_drtc_graph_key"):
        key = mod._drtc_graph_key
        print(f"  _drtc_graph_key {per_call_us(lambda: key(args, 0, 0), a.calls):8.1f} us")
        if dense is not None:
            print(f"  _drtc_graph_key, dense "
                  f"{per_call_us(lambda: key(args, 0, 0, True), a.calls):5.1f} us")


if __name__ == "__main__":
    main()
