# Broken: computes into the input buffer in place and returns a copy.
import torch
import triton
import triton.language as tl


@triton.jit
def relu_add_kernel(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    y = tl.maximum(x + b, 0.0) * 3.0
    tl.store(out_ptr + offs, y, mask=mask)


def launch(x, b, out, n=None):
    n = x.numel() if n is None else n
    relu_add_kernel[(triton.cdiv(n, 128),)](x, b, out, n, x.shape[-1], BLOCK=128)
    return out


def triton_fused_operator(x, b):
    launch(x, b, x)
    return [x.clone()]
