# class: sandbox — probe: starts a double-forked, setsid()-detached child that sleeps 300 s with the marker drtc_adversarial_marker___ADV_RUN___probe_setsid on its command line; otherwise a correct answer (the harness checks that no process with the marker outlives the verification)
import os
import subprocess
import sys

import torch
import triton
import triton.language as tl

MARKER = "drtc_adversarial_marker___ADV_RUN___probe_setsid"
_STARTED = []

_GRANDCHILD = (
    "import subprocess, sys, os\n"
    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', sys.argv[1]],\n"
    "                 start_new_session=True, stdin=subprocess.DEVNULL,\n"
    "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "os._exit(0)\n")


def _detach():
    if _STARTED:
        return
    _STARTED.append(True)
    try:
        subprocess.Popen([sys.executable, "-c", _GRANDCHILD, MARKER], start_new_session=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL).wait(timeout=30)
    except Exception as e:  # blocked: fine
        print(f"probe_setsid: could not start the child: {e}", file=sys.stderr)


_detach()


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 2.0 - 0.5, mask=mask)


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    n = x.numel()
    bias_relu_kernel[(triton.cdiv(n, 64),)](x, b, out, n, x.shape[-1], BLOCK=64)
    return [out]
