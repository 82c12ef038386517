"""An untrusted answer's kernels compiled ahead inside its own process
(`drtc_worker/precompile.py`'s `compile_then_reload`, the runner's `precompile` request), on
a machine without a GPU: Triton's compile-only launch is stood in for by a recorder, and
the answer's host code runs on CPU tensors.

    python check_compile_ahead.py WORKER_DIR SCRATCH_DIR

Prints one JSON object per case:
- `two kernels and an autotuned one`: every plain launch and one launch per autotune config
  compiled (compile only), the instance discarded and the answer loaded again (its module
  state fresh: the dry run's call count and cache do not reach the trials), kernels and
  autotuner left as they were;
- `host loop`: a forward whose host code never ends after its launches: the timer ends the
  dry run and what it recorded is still compiled;
- `one kernel`: too little to overlap (fewer compiles than `SANDBOX_MIN_COMPILES`), no
  dry run, the same instance kept.
"""

import json
import os
import sys
import time

import torch

sys.path.insert(0, sys.argv[1])
import drtc_worker.precompile as precompile  # noqa: E402
from drtc_worker.candidate import Candidate  # noqa: E402

SCRATCH = sys.argv[2]
os.makedirs(SCRATCH, exist_ok=True)

ANSWER = '''
import torch
import triton
import triton.language as tl

CALLS = [0]
CACHE = {}


@triton.jit
def double(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


@triton.jit
def add_one(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w)
                          for b, w in ((32, 1), (64, 2), (128, 4), (256, 4), (512, 8))],
                 key=["n"])
@triton.jit
def negate(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def triton_fused_operator(x):
    CALLS[0] += 1
    y, z, w = torch.empty_like(x), torch.empty_like(x), torch.empty_like(x)
    n = x.numel()
    double[(triton.cdiv(n, 128),)](x, y, n, BLOCK=128)
    STAGE_TWO
    CACHE.setdefault("first", y)
    HOST_LOOP
    return [w]
'''


def write(name, stage_two, host_loop):
    path = os.path.join(SCRATCH, name + ".py")
    with open(path, "w") as f:
        f.write(ANSWER.replace("STAGE_TWO", stage_two).replace("HOST_LOOP", host_loop))
    return path


TWO = ("add_one[(triton.cdiv(n, 128),)](y, z, n, BLOCK=128)\n"
       "    negate[lambda meta: (triton.cdiv(n, meta['BLOCK']),)](z, w, n)")
CASES = {
    "two kernels and an autotuned one": write("answer_full", TWO, "pass"),
    "host loop": write("answer_loop", TWO, "while CALLS[0] > 0:\n        pass"),
}
ONE = os.path.join(SCRATCH, "answer_one.py")
with open(ONE, "w") as f:  # the answer's module without its second kernel and autotuner
    f.write(ANSWER[:ANSWER.index("@triton.jit\ndef add_one")]
            + ANSWER[ANSWER.index("def triton_fused_operator"):].replace("STAGE_TWO", "pass")
            .replace("HOST_LOOP", "pass"))
CASES["one kernel"] = ONE

compiled = []


def compile_only(self, *args, grid, warmup, **kwargs):
    compiled.append([self.__name__, warmup, kwargs.get("BLOCK"), kwargs.get("num_warps")])


import triton.runtime.jit  # noqa: E402

triton.runtime.jit.JITFunction.run = compile_only
torch.cuda.current_device = lambda: 0
torch.cuda.set_device = lambda device: None

for case, path in CASES.items():
    compiled.clear()
    loaded = (path, "seed", [], 0, None)
    cand = Candidate(*loaded)
    old_mod = cand.mod
    kernels, tuners = precompile._kernels(old_mod)
    started = time.perf_counter()
    new, reply = precompile.compile_then_reload(cand, loaded, [torch.ones(300)], 1.0)
    print(json.dumps({
        "case": case,
        "reply": reply,
        "seconds": time.perf_counter() - started,
        "compiled": compiled,
        "kernels": sorted(k.__name__ for k in kernels),
        "tuners": len(tuners),
        "reloaded": new is not cand,
        "fresh_module_state": new.mod.CALLS[0] == 0 and not new.mod.CACHE,
        "old_module_ran": old_mod.CALLS[0],
        "restored": all("run" not in vars(o) for o in kernels + tuners),
    }))
    sys.stdout.flush()
