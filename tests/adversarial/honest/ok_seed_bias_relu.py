# class: honest — correct Triton answer for refs/seed_bias_relu.py (must be accepted)
import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    y = tl.maximum(x + b, 0.0) * 2.0 - 0.5
    tl.store(out_ptr + offs, y, mask=mask)


def triton_fused_operator(x, b):
    # allocated in the default dtype (float32 unless something changed it)
    out = torch.empty(x.shape, device=x.device)
    n = x.numel()
    bias_relu_kernel[(triton.cdiv(n, 64),)](x, b, out, n, x.shape[-1], BLOCK=64)
    return [out]
