# drtc synth validation worker: runs seed-format programs in PyTorch, one process for a
# whole batch. Reads JSON lines {"index", "pytorch", "shapes"} on stdin and writes one JSON
# line {"index", "ok", "reason"} per program on stdout. Each program runs on the inputs
# of seeds 0 .. trials - 1.
import json
import sys
import traceback

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_grad_enabled(False)


def check(src, shapes):
    scope = {}
    exec(compile(src, "<synth>", "exec"), scope)
    for seed in range(trials):
        reason = run_once(scope, shapes, seed)
        if reason is not None:
            return reason if trials == 1 else "%s (inputs of seed %d)" % (reason, seed)
    return None


def run_once(scope, shapes, seed):
    torch.manual_seed(seed)
    inputs = [t.to(device) for t in scope["get_inputs"]()]
    outs = scope["fused_operator"](*inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    if not isinstance(outs, list) or len(outs) != len(shapes):
        return "wrong number of outputs"
    for i, (o, s) in enumerate(zip(outs, shapes)):
        if not isinstance(o, torch.Tensor):
            return "output %d is not a tensor" % i
        if list(o.shape) != list(s):
            return "shape mismatch: output %d is %s, the IR says %s" % (i, list(o.shape), s)
        if o.is_floating_point():
            if torch.isnan(o).any():
                return "nan"
            if torch.isinf(o).any():
                return "inf"
    return None


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    job = json.loads(line)
    try:
        reason = check(job["pytorch"], job["shapes"])
    except Exception as e:  # noqa: BLE001 - every failure is a rejection reason
        msg = str(e).strip().splitlines()
        reason = "error: %s: %s" % (type(e).__name__, msg[0][:200] if msg else "")
    print(json.dumps({"index": job["index"], "ok": reason is None, "reason": reason}), flush=True)
