# class: honest — correct fp32 Triton answer for refs/seed_small.py (must be accepted)
import torch
import triton
import triton.language as tl


@triton.jit
def small_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    s = 1.0 / (1.0 + tl.exp(-x))
    tl.store(out_ptr + offs, s * 0.01 + y * 0.002, mask=mask)


def triton_fused_operator(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    small_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    return [out]
