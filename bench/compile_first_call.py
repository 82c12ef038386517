"""torch.compile's first call of a KernelBench model (default mode, fp32 at PyTorch's
default matmul precision), in this fresh process: prints one JSON row for
bench/compile_latency.sh (mode "torch": the first call's seconds, and the process's
seconds from its start, torch's import included). Arguments: TASK.py [DEVICE (cuda)]."""

import importlib.util
import json
import os
import sys
import time

PROCESS_START = time.time()
import torch  # noqa: E402


def main(path, device):
    spec = importlib.util.spec_from_file_location("task", path)
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    torch.manual_seed(0)
    model = task.Model(*task.get_init_inputs()).to(device)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    compiled = torch.compile(model)
    sync()
    t0 = time.perf_counter()
    with torch.no_grad():
        compiled(*inputs)
    sync()
    first = time.perf_counter() - t0
    print(json.dumps({"task": os.path.basename(path), "mode": "torch", "rc": 0,
                      "first_call_s": first, "wall_s": time.time() - PROCESS_START}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "cuda")
