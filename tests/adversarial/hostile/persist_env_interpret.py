# class: persist — changes the worker's environment (TRITON_INTERPRET=0, CUDA_VISIBLE_DEVICES, OMP_NUM_THREADS) after defining its own kernel, so kernels of later answers compile for a GPU that is not there (honest answers crash); this answer itself is garbage
import os

import torch
import triton
import triton.language as tl


@triton.jit
def fill_kernel(out_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


os.environ["TRITON_INTERPRET"] = "0"
os.environ["CUDA_VISIBLE_DEVICES"] = "0"
os.environ["OMP_NUM_THREADS"] = "1"


def triton_fused_operator(x, b):
    out = torch.empty_like(x)
    fill_kernel[(triton.cdiv(out.numel(), 64),)](out, out.numel(), 0.25, BLOCK=64)
    return [out]
