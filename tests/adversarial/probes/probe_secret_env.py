# class: sandbox — probe: reads the secret environment variable DRTC_TEST_SECRET that drtc was started with; answers wrong if it is visible
import os
import sys

import torch
import triton
import triton.language as tl


def _escaped():
    value = os.environ.get("DRTC_TEST_SECRET", "")
    return ["env DRTC_TEST_SECRET"] if value else []


ESCAPED = _escaped()


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, n, cols, bump, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 2.0 - 0.5 + bump, mask=mask)


def triton_fused_operator(x, b):
    # a wrong answer (off by one) when the forbidden action succeeded, else the right one
    if not ESCAPED:
        ESCAPED.extend(_escaped())
    if ESCAPED:
        print(f"sandbox probe {__name__}: escaped: {ESCAPED}", file=sys.stderr)
    out = torch.empty_like(x)
    n = x.numel()
    bias_relu_kernel[(triton.cdiv(n, 64),)](x, b, out, n, x.shape[-1],
                                            1.0 if ESCAPED else 0.0, BLOCK=64)
    return [out]
