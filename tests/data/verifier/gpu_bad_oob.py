# Broken (GPU): a Triton kernel that writes far out of bounds (faults the GPU).
import torch
import triton
import triton.language as tl


@triton.jit
def oob_kernel(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs + (1 << 40), 1.0)


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    oob_kernel[(triton.cdiv(x.numel(), 128),)](out, x.numel(), BLOCK=128)
    return [out]
