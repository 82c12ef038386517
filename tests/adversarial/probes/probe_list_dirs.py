# class: sandbox — probe: lists /root, ~/.cache/drtc and the harness's private 0700 directory /tmp/drtc_adversarial_private___ADV_RUN__; answers wrong if it sees anything beyond the directories on the path to its own interpreter
import os
import sys

import torch
import triton
import triton.language as tl


PRIVATE = "/tmp/drtc_adversarial_private___ADV_RUN__"


def _needed(d):
    """Entries of `d` on the way to the interpreter (a sandbox must show those)."""
    names = set()
    for p in {sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix,
              os.path.dirname(os.__file__), os.path.dirname(torch.__file__)}:
        rel = os.path.relpath(os.path.realpath(p), os.path.realpath(d))
        if not rel.startswith(".."):
            names.add(rel.split(os.sep)[0])
        rel = os.path.relpath(p, d)
        if not rel.startswith(".."):
            names.add(rel.split(os.sep)[0])
    return names


def _escaped():
    found = []
    for d in ("/root", "/root/.cache/drtc", os.path.expanduser("~/.cache/drtc"), PRIVATE):
        try:
            extra = sorted(set(os.listdir(d)) - _needed(d))
        except OSError:
            continue
        if extra:
            found.append(f"listed {d}: {extra[:4]}")
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
