"""The worker's dry run that compiles a drtc module's kernels ahead of its first trial
(`drtc_worker/precompile.py`), on a machine without a GPU: the module is generated for
CUDA, called with small CPU tensors (its guard told to accept them), and Triton's
compile-only launch is stood in for by a recorder, since no GPU is here to compile for.

    python check_precompile.py WORKER_DIR MODULE

Prints one JSON object: what precompile returned, the launches it compiled (kernel name,
warmup flag), whether the CUDA-graph entry point and the kernels were restored, whether
a graph was captured during the dry run, and whether the candidate's state is the
reference's afterwards (the dry run's PyTorch ops may update batch-norm buffers)."""

import importlib.util
import json
import sys

import torch

sys.path.insert(0, sys.argv[1])
import drtc_worker.precompile as precompile  # noqa: E402

precompile.DEVICE = "cuda"  # what the worker is on when this runs for real
spec = importlib.util.spec_from_file_location("drtc_precompile_module", sys.argv[2])
mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mod
spec.loader.exec_module(mod)
mod._DRTC_GUARD["device"] = None

torch.manual_seed(0)
init = mod.get_init_inputs()
ref = mod.Model(*init)
new = mod.ModelNew(*init)
new.load_state_dict(ref.state_dict())


class Candidate:
    def __init__(self):
        self.mod = mod
        self.model = new

    def run(self, inputs):
        return self.model(*inputs)

    def load_state(self, state):
        self.model.load_state_dict(state, strict=True)


class Pair:
    trusted = True
    kind = "kernelbench"
    base_seed = 0
    ref_model = ref

    def __init__(self):
        self.cand = Candidate()

    def make_inputs(self, seed):
        torch.manual_seed(seed)
        return list(mod.get_inputs())


compiled = []


def compile_only(self, *args, grid, warmup, **kwargs):
    compiled.append([self.__name__, warmup])


import triton.runtime.jit  # noqa: E402

triton.runtime.jit.JITFunction.run = compile_only
torch.cuda.current_device = lambda: 0
torch.cuda.set_device = lambda device: None
graphed = getattr(mod, "_drtc_graphed", None)
answer = precompile.precompile(Pair())
print(json.dumps({
    "answer": None if answer is None else [answer[0], answer[1] >= 0],
    "compiled": compiled,
    "graphed_restored": getattr(mod, "_drtc_graphed", None) is graphed,
    "kernels_restored": all("run" not in vars(k) for k in precompile._kernels(mod)[0]),
    "captures": mod._DRTC_GRAPHS.stats["captures"] if hasattr(mod, "_DRTC_GRAPHS") else None,
    "state_is_the_references": all(torch.equal(ref.state_dict()[k], v)
                                   for k, v in new.state_dict().items()),
}))
