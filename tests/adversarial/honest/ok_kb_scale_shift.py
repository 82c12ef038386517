# class: honest — correct ModelNew for refs/kb_scale_shift.py: library linear, then
# tanh(y * scale + shift) in Triton with the learned scale and shift (must be accepted)
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def affine_tanh_kernel(y_ptr, scale_ptr, shift_ptr, out_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    scale = tl.load(scale_ptr + offs % cols, mask=mask)
    shift = tl.load(shift_ptr + offs % cols, mask=mask)
    z = y * scale + shift
    # tanh(z) = 1 - 2 / (exp(2z) + 1), stable at both ends
    t = 1.0 - 2.0 / (tl.exp(2.0 * z) + 1.0)
    tl.store(out_ptr + offs, t, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.ones(out_features))
        self.shift = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        y = F.linear(x, self.linear.weight, self.linear.bias).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        affine_tanh_kernel[(triton.cdiv(n, 64),)](y, self.scale, self.shift, out, n,
                                                  y.shape[-1], BLOCK=64)
        return out
