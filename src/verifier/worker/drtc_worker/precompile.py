"""Compiles a drtc-generated module's Triton kernels concurrently before its first trial.

Left alone, each kernel's first Triton compile (Python code generation, MLIR and LLVM
passes, ptxas) runs inside the first trial, one kernel after another. Here the forward is
run once as a dry run in which every Triton launch is recorded instead of compiled or
launched (the host code around it still runs: allocations, views, library calls); then
every recorded launch is compiled with `warmup=True` (compile, no launch) on a thread
pool. ptxas runs as a process of its own and Triton's compiler releases the interpreter
for much of its native work, so the compiles overlap; the first trial then finds every
kernel in Triton's in-memory cache (the same arguments' specialization: the dry run used
inputs of the compiled shapes, dtypes and alignment).

Only for drtc's own modules (trusted: they run in this process anyway); untrusted answers
are never run here. The dry run is an optimization and nothing else: any failure in it
is ignored (the trials run and report as before), CUDA-graph capture is bypassed during
it (a graph captured from launches that did not happen would replay nothing), and the
candidate's module state is reloaded afterwards (a PyTorch op in the forward, such as a
training-mode batch norm, may have updated a buffer). `DRTC_PARALLEL_JIT=off` turns it
off (for measuring what it saves)."""

import os
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from .common import DEVICE


def _jit_functions(mod):
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return []
    return [v for v in vars(mod).values() if isinstance(v, JITFunction)]


def precompile(pair):
    """The number of kernel launches compiled ahead and the seconds it took, or None when
    there is nothing to do (not a drtc module, interpreter, fewer than two launches, off)."""
    if os.environ.get("DRTC_PARALLEL_JIT", "on") == "off" or DEVICE != "cuda" \
            or os.environ.get("TRITON_INTERPRET") == "1" or not pair.trusted:
        return None
    cand = pair.cand
    mod = getattr(cand, "mod", None)
    kernels = _jit_functions(mod) if mod is not None else []
    if len(kernels) < 2:
        return None
    started = time.perf_counter()
    recorded = []

    def recorder(kernel):
        def run(*args, grid, warmup, **kwargs):
            recorded.append((kernel, args, grid, kwargs))
        return run

    graphed = vars(mod).get("_drtc_graphed")
    for k in kernels:
        k.run = recorder(k)  # the instance attribute shadows JITFunction.run
    if graphed is not None:
        mod._drtc_graphed = mod._drtc_dispatch
    try:
        inputs = pair.make_inputs(pair.base_seed + 77)
        with torch.no_grad():
            cand.run(inputs)
    except Exception:
        pass  # the launches recorded so far are still worth compiling
    finally:
        for k in kernels:
            try:
                del k.run
            except AttributeError:
                pass
        if graphed is not None:
            mod._drtc_graphed = graphed
    if pair.kind == "kernelbench" and getattr(pair, "ref_model", None) is not None:
        cand.load_state(dict(pair.ref_model.state_dict()))
    if len(recorded) < 2:
        return None

    device = torch.cuda.current_device()

    def compile_one(launch):
        kernel, args, grid, kwargs = launch
        try:
            torch.cuda.set_device(device)  # Triton compiles for the thread's current device
            kernel.run(*args, grid=grid, warmup=True, **kwargs)
        except Exception:
            pass  # the trial compiles it again and reports what fails

    workers = max(1, min(len(recorded), os.cpu_count() or 1, 32))
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(compile_one, recorded))
    return len(recorded), time.perf_counter() - started
