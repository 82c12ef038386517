# drtc synth validation worker: runs seed-format programs in PyTorch; one process serves a
# whole run. Says {"event": "ready"} once torch is imported, then reads JSON lines
# {"index", "pytorch", "shapes", "dtypes", "meta"} on stdin and writes one JSON line
# {"index", "ok", "reason"} per program on stdout, in order.
#
# A program runs on the inputs of seeds 0 .. trials - 1 on the device; with "meta" it runs
# once on PyTorch's meta device instead: every call, argument, shape and dtype is checked at
# full size without memory or arithmetic (finiteness is then proved by drtc's interval
# analysis, not here).
import json
import sys

import torch

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 1
torch.set_grad_enabled(False)
print(json.dumps({"event": "ready", "torch": torch.__version__}), flush=True)


def check(src, shapes, dtypes, meta):
    scope = {}
    exec(compile(src, "<synth>", "exec"), scope)
    if meta:
        return run_once(scope, shapes, dtypes, 0, "meta")
    for seed in range(trials):
        reason = run_once(scope, shapes, dtypes, seed, device)
        if reason is not None:
            return reason if trials == 1 else "%s (inputs of seed %d)" % (reason, seed)
    return None


def run_once(scope, shapes, dtypes, seed, where):
    torch.manual_seed(seed)
    if where == "meta":
        with torch.device("meta"):
            inputs = scope["get_inputs"]()
            outs = scope["fused_operator"](*inputs)
    else:
        inputs = [t.to(where) for t in scope["get_inputs"]()]
        outs = scope["fused_operator"](*inputs)
        if where == "cuda":
            torch.cuda.synchronize()
    if not isinstance(outs, list) or len(outs) != len(shapes):
        return "wrong number of outputs"
    for i, (o, s) in enumerate(zip(outs, shapes)):
        if not isinstance(o, torch.Tensor):
            return "output %d is not a tensor" % i
        if list(o.shape) != list(s):
            return "shape mismatch: output %d is %s, the IR says %s" % (i, list(o.shape), s)
        if dtypes is not None and str(o.dtype).replace("torch.", "") != dtypes[i]:
            return "dtype mismatch: output %d is %s, the IR says %s" % (i, o.dtype, dtypes[i])
        if where != "meta" and o.is_floating_point():
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
        reason = check(job["pytorch"], job["shapes"], job.get("dtypes"), job.get("meta", False))
    except Exception as e:  # noqa: BLE001 - every failure is a rejection reason
        msg = str(e).strip().splitlines()
        reason = "error: %s: %s" % (type(e).__name__, msg[0][:200] if msg else "")
    print(json.dumps({"index": job["index"], "ok": reason is None, "reason": reason}), flush=True)
