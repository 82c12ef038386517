# class: timing — GPU only: launches its kernel on a side stream and returns without making the current stream wait, so a timer on the current stream measures nothing and a consumer may read unfinished outputs
import torch
import triton
import triton.language as tl

_SIDE = []


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % cols, mask=mask)
    for _ in range(2000):  # long enough to still be running when the caller reads
        x = x * 1.0
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0) * 2.0 - 0.5, mask=mask)


def triton_fused_operator(x, b):
    if not _SIDE:
        _SIDE.append(torch.cuda.Stream())
    out = torch.empty_like(x)
    n = x.numel()
    with torch.cuda.stream(_SIDE[0]):
        bias_relu_kernel[(triton.cdiv(n, 64),)](x, b, out, n, x.shape[-1], BLOCK=64)
    return [out]
