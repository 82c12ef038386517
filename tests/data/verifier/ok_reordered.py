# Correct candidate with reordered but equivalent math: max(3x + 3b, 0) instead of
# relu(x + b) * 3 (differs from the reference in the last bits only).
import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    y = tl.maximum(x * 3.0 + b * 3.0, 0.0)
    tl.store(out_ptr + offs, y, mask=mask)


def triton_fused_operator(x, b):
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    kernel[(triton.cdiv(n, 64),)](x, b, out, n, x.shape[-1], BLOCK=64)
    return [out]
