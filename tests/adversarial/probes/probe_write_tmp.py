# class: sandbox — probe: writes /tmp/drtc_adversarial_escape_probe_write_tmp___ADV_RUN__; an escape when the harness's canary shows this is the real /tmp (a private /tmp is fine); answers wrong if it escaped (the harness also checks the file is absent)
import os
import sys

import torch
import triton
import triton.language as tl


TARGET = "/tmp/drtc_adversarial_escape_probe_write_tmp___ADV_RUN__"
CANARY = "/tmp/drtc_adversarial_canary___ADV_RUN__"


def _escaped():
    try:
        with open(TARGET, "w") as fh:
            fh.write("written by a sandboxed candidate\n")
    except OSError:
        return []
    return ["wrote " + TARGET] if os.path.exists(CANARY) else []


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
