# class: persist — torch.set_default_dtype(torch.float64) at import and never restored: later answers that allocate in the default dtype return float64 outputs (an honest answer fails); this answer itself is garbage
import torch
import triton
import triton.language as tl

torch.set_default_dtype(torch.float64)


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    fill_kernel[(triton.cdiv(out.numel(), 64),)](out, out.numel(), 0.25, BLOCK=64)
    return [out]
