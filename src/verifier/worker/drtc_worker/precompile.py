"""Compiles a candidate's Triton kernels concurrently before its first trial.

Left alone, each kernel's first Triton compile (Python code generation, MLIR and LLVM
passes, ptxas) runs inside the first trial, one kernel after another (an autotuned kernel:
one config after another). Here the forward is run once as a dry run in which every Triton
launch is recorded instead of compiled or launched (the host code around it still runs:
allocations, views, library calls; an autotuned kernel records one launch per config it
would benchmark, without benchmarking); then every recorded launch is compiled with
`warmup=True` (compile, no launch) on a thread pool. ptxas runs as a process of its own and
Triton's compiler releases the interpreter for much of its native work, so the compiles
overlap; the first trial then finds every kernel compiled (the same arguments'
specialization: the dry run used inputs of the compiled shapes, dtypes and alignment).

Two places run it:

- `precompile(pair)` in the checker, for drtc's own modules (trusted: they run in this
  process anyway). CUDA-graph capture is bypassed during the dry run (a graph captured from
  launches that did not happen would replay nothing) and the module's state is reloaded
  afterwards (a PyTorch op in the forward, such as a training-mode batch norm, may have
  updated a buffer).
- `compile_ahead(cand, inputs, seconds)` inside an untrusted answer's sandboxed process
  (`runner.py`'s `precompile` request, `compile_then_reload`). Nothing the dry run leaves behind may reach the
  trials: the answer's host code saw outputs of launches that never ran (uninitialized
  memory), so it may have cached garbage, captured empty CUDA graphs or broken the device
  context. The runner therefore discards the instance that ran it and loads the answer
  again from its source; the compiled kernels survive in the process's own Triton cache on
  disk, which the new instance's first launches read. The dry run's host code is bounded by
  a timer (a loop over garbage values ends there); a device context it broke makes the
  checker replace the whole process (`IsolatedCandidate.precompile`). The answer's verdict
  rests on the trials alone, as without this step.

It is an optimization and nothing else: any failure in it is ignored (the trials run and
report as before). `DRTC_PARALLEL_JIT=off` turns it off (for measuring what it saves)."""

import gc
import os
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from .candidate import Candidate
from .common import DEVICE
from .deadline import OutOfTime, within

# seconds an untrusted answer's dry run may spend in its host code
DRY_RUN_SECONDS = 10.0
# an untrusted answer's dry run, reload included, cost about 1.4 s per answer and saved
# about 0.9 s of its trials on drtc's own level-2 modules (2-4 kernels each, four answers
# at once; bench/results/reward_breakdown_h100_jit_79ff468.md): it runs only where more
# compiles can overlap (autotuned kernels: one per config). The bound is an estimate of
# the break-even (about 0.3-0.4 s saved per compile overlapped), not a measured one
SANDBOX_MIN_COMPILES = 6


def enabled():
    """Whether there is anything to gain here: a GPU, kernels that compile (not the
    interpreter), and not turned off."""
    return os.environ.get("DRTC_PARALLEL_JIT", "on") != "off" and DEVICE == "cuda" \
        and os.environ.get("TRITON_INTERPRET") != "1"


def _kernels(mod):
    """(JIT functions, autotuners) among a module's globals: kernels, and the autotune and
    heuristics wrappers around them, whose kernel is reached through `.fn`."""
    try:
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.jit import JITFunction, KernelInterface
    except ImportError:
        return [], []
    kernels, tuners = [], []
    for v in list(vars(mod).values()):
        if not isinstance(v, KernelInterface):
            continue
        for _ in range(4):  # autotune(heuristics(jit(f))) at most
            if isinstance(v, Autotuner) and not any(v is t for t in tuners):
                tuners.append(v)
            if isinstance(v, JITFunction) or not isinstance(v, KernelInterface):
                break
            v = getattr(v, "fn", None)
        if isinstance(v, JITFunction) and not any(v is k for k in kernels):
            kernels.append(v)
    return kernels, tuners


def _config_kwargs(config):
    """A Triton autotune config's launch keywords (its meta-parameters and options)."""
    if hasattr(config, "all_kwargs"):
        return dict(config.all_kwargs())
    kw = dict(config.kwargs)
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        if getattr(config, k, None) is not None:
            kw[k] = getattr(config, k)
    return kw


def _record(kernels, tuners, run, recorded):
    """Runs `run()` with every launch of `kernels` recorded into `recorded` (kernel, args,
    grid, keywords) instead of compiled or launched, and every autotuner's launch recorded
    once per config it would benchmark. Leaves the kernels and autotuners as they were; an
    exception from `run` propagates (the launches recorded so far stay recorded)."""

    def recorder(kernel):
        def run_(*args, grid, warmup, **kwargs):
            recorded.append((kernel, args, grid, kwargs))
        return run_

    def tuner_recorder(tuner):
        def run_(*args, **kwargs):
            tuner.nargs = dict(zip(tuner.arg_names, args))
            try:
                configs = tuner.prune_configs(kwargs)
            except Exception:
                configs = tuner.configs
            for config in configs:
                tuner.fn.run(*args, **dict(kwargs, **_config_kwargs(config)))
        return run_

    for k in kernels:
        k.run = recorder(k)  # the instance attribute shadows JITFunction.run
    for t in tuners:
        t.run = tuner_recorder(t)
    try:
        run()
    finally:
        for obj in kernels + tuners:
            try:
                del obj.run
            except AttributeError:
                pass


def _compile_all(recorded):
    """Compiles every recorded launch (no launch) on a thread pool."""
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


def precompile(pair):
    """The number of kernel launches compiled ahead and the seconds it took, or None when
    there is nothing to do (interpreter, fewer than two launches, off). An untrusted
    answer's dry run runs in its own process (`compile_ahead`)."""
    if not enabled():
        return None
    if not pair.trusted:
        return pair.cand.precompile(pair.make_inputs(pair.base_seed + 77), DRY_RUN_SECONDS)
    cand = pair.cand
    mod = getattr(cand, "mod", None)
    kernels, tuners = _kernels(mod) if mod is not None else ([], [])
    if len(kernels) < 2:
        return None
    started = time.perf_counter()
    graphed = vars(mod).get("_drtc_graphed")
    if graphed is not None:
        mod._drtc_graphed = mod._drtc_dispatch
    recorded = []
    try:
        inputs = pair.make_inputs(pair.base_seed + 77)
        with torch.no_grad():
            _record(kernels, tuners, lambda: cand.run(inputs), recorded)
    except Exception:
        pass  # the launches recorded so far are still worth compiling
    finally:
        if graphed is not None:
            mod._drtc_graphed = graphed
    if pair.kind == "kernelbench" and getattr(pair, "ref_model", None) is not None:
        cand.load_state(dict(pair.ref_model.state_dict()))
    if len(recorded) < 2:
        return None
    _compile_all(recorded)
    return len(recorded), time.perf_counter() - started


def _compiles(kernels, tuners):
    """The compiles a module's first call may need: a kernel each, an autotuned kernel one
    per config."""
    extra = 0
    for t in tuners:
        try:
            extra += max(0, len(t.configs) - 1)
        except TypeError:
            pass
    return len(kernels) + extra


def compile_ahead(cand, inputs, seconds):
    """In an untrusted answer's process: the dry run of `cand` on `inputs` (its host code
    bounded by `seconds`) and the concurrent compile of what it recorded. Returns the number
    of launches compiled, or None when it did not run (fewer than SANDBOX_MIN_COMPILES
    kernels and autotune configs: too little to overlap). After a run the caller must discard `cand` (see the module's docstring)."""
    mod = getattr(cand, "mod", None)
    kernels, tuners = _kernels(mod) if mod is not None else ([], [])
    if _compiles(kernels, tuners) < SANDBOX_MIN_COMPILES:
        return None

    recorded = []

    def dry_run():
        with torch.no_grad():
            _record(kernels, tuners, lambda: cand.run(inputs), recorded)

    try:
        within(max(0.1, float(seconds)), dry_run)
    except (Exception, OutOfTime):
        pass  # the launches recorded so far are still worth compiling
    if recorded:
        _compile_all(recorded)
    return len(recorded)


def device_usable():
    """Whether the device context still works (a device-side assert or a fault in the dry
    run's host code leaves it broken for every later call)."""
    if DEVICE != "cuda":
        return True
    try:
        torch.cuda.synchronize()
        torch.empty(1, device="cuda").add_(1)
        torch.cuda.synchronize()
        return True
    except BaseException:
        return False


def compile_then_reload(cand, loaded, inputs, seconds):
    """The `precompile` request: the answer's kernels compiled ahead from a dry run
    (`compile_ahead`), then the instance that ran it discarded and the answer
    loaded again from its source (the compiled kernels stay in this process's Triton
    cache), so nothing the dry run left in the answer's state reaches a trial. Replies with
    the launches compiled, or `restart` when the device context no longer works."""
    launches = compile_ahead(cand, inputs, seconds)
    if launches is None:
        return cand, {"launches": 0}
    cand.close()
    del cand
    gc.collect()
    if not device_usable():
        return None, {"launches": launches, "restart": True}
    if DEVICE == "cuda":
        torch.cuda.empty_cache()
    return Candidate(*loaded), {"launches": launches}
