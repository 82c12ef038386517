"""Reference signatures of PyTorch programs, computed by PyTorch itself on the meta device.

drtc's Rust frontend lowers KernelBench and seed-format programs without Python; this
helper gives the ground truth its `--signature` output is compared with. It reads one
request per stdin line (JSON: {"path": str, "line": int | null}) and writes one JSON object
per line: {"ok": signature} or {"error": message}. A signature is
{"inputs": [{"shape", "dtype"}], "params": {name: {"shape", "dtype"}}, "outputs": [...]}.

Everything runs on the meta device (no memory, no compute): models are built under
`torch.device("meta")`, `get_inputs()` is called there too, and forward runs under
`torch.no_grad()` in training mode (KernelBench's default), watched by a dispatch mode that
lists the random ops forward runs (`"random"`: dropout with p > 0, rand, bernoulli ...), an
independent check of drtc's "random at run time" errors. Python numbers among the inputs
are reported as 0-dim tensors of PyTorch's default dtype for their kind (float32, int64,
bool), the convention drtc uses for scalar forward arguments.
"""

import json
import sys
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

RANDOM_OPS = ("rand", "bernoulli", "normal", "multinomial", "poisson", "exponential", "uniform_")


class RecordRandom(TorchDispatchMode):
    """Records the random aten ops called while active."""

    def __init__(self):
        super().__init__()
        self.random = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.name()
        if "dropout" in name:
            if len(args) > 1 and isinstance(args[1], float) and args[1] > 0 and (len(args) < 3 or args[2] is not False):
                self.random.add(name)
        elif any(k in name for k in RANDOM_OPS):
            self.random.add(name)
        return func(*args, **(kwargs or {}))


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def describe(value):
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": dtype_name(value.dtype)}
    if isinstance(value, bool):
        return {"shape": [], "dtype": "bool"}
    if isinstance(value, int):
        return {"shape": [], "dtype": "int64"}
    if isinstance(value, float):
        return {"shape": [], "dtype": "float32"}
    raise TypeError(f"not a tensor or a python number: {type(value).__name__}")


def outputs_of(result):
    if isinstance(result, (list, tuple)):
        return [describe(r) for r in result]
    return [describe(result)]


def program_text(path, line):
    if line is None and not path.endswith(".jsonl"):
        with open(path) as f:
            return f.read()
    with open(path) as f:
        lines = [l for l in f.read().split("\n")]
    index = (line or 1) - 1
    return json.loads(lines[index])["pytorch"]


def signature(path, line):
    source = program_text(path, line)
    namespace = {"__name__": "__drtc_reference__"}
    exec(compile(source, path, "exec"), namespace)
    recorder = RecordRandom()
    with torch.device("meta"), torch.no_grad():
        inputs = namespace["get_inputs"]()
        if "fused_operator" in namespace and "Model" not in namespace:
            params = {}
            with recorder:
                result = namespace["fused_operator"](*inputs)
        else:
            init = namespace["get_init_inputs"]() if "get_init_inputs" in namespace else []
            model = namespace["Model"](*init)
            model.train()
            params = {k: describe(v) for k, v in model.state_dict().items()}
            with recorder:
                result = model(*inputs)
    return {
        "inputs": [describe(x) for x in inputs],
        "params": params,
        "outputs": outputs_of(result),
        "random": sorted(recorder.random),
    }


def main():
    for request in sys.stdin:
        request = request.strip()
        if not request:
            continue
        req = json.loads(request)
        try:
            reply = {"ok": signature(req["path"], req.get("line"))}
        except Exception as e:  # report, keep serving the batch
            reply = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=3)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
