# Broken: replaces torch.manual_seed with a wrapper that looks like torch._dynamo's own
# (functools.wraps of the original, as its one-time patch is) but seeds something else, so
# the checker's inputs would follow the candidate's choice.
import functools

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


_seed = torch.manual_seed


@functools.wraps(_seed)
def _forged(seed):
    return _seed(0)


torch.manual_seed = _forged


def triton_fused_operator(x, b):
    return [launch(x, b, torch.empty_like(x))]
