# class: sandbox — probe: writes a harmless text file into the interpreter's site-packages, the worker's install directory and /root (the user's home; counted only when the harness's canary there shows it is the real one, so a private home is fine); answers wrong if any write escaped (the harness checks and removes them)
import os
import sys
import sysconfig

import torch
import triton
import triton.language as tl


NAME = "drtc_adversarial_escape_probe_write_outside___ADV_RUN__.txt"
ROOT_CANARY = "/root/drtc_adversarial_canary___ADV_RUN__"


def _dirs():
    dirs = [sysconfig.get_paths().get("purelib"), "/root"]
    main = sys.modules.get("__main__")
    if getattr(main, "__file__", None):
        dirs.append(os.path.dirname(os.path.abspath(main.__file__)))
    return [d for d in dirs if d]


def _escaped():
    found = []
    for d in _dirs():
        path = os.path.join(d, NAME)
        try:
            with open(path, "w") as fh:
                fh.write("written by a sandboxed candidate\n")
        except OSError:
            continue
        if d != "/root" or os.path.exists(ROOT_CANARY):
            found.append("wrote " + path)
    return found


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
