# Correct KernelBench candidate: library linear and batch_norm (training mode, running
# statistics updated), ReLU in a Triton kernel.
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)

    def forward(self, x):
        y = self.bn(self.linear(x)).contiguous()
        out = torch.empty_like(y)
        relu_kernel[(triton.cdiv(y.numel(), 64),)](y, out, y.numel(), BLOCK=64)
        return out
