# Hand-written candidate for KernelBench level 2, task 63 (Gemm_ReLU_Divide): the GEMM
# stays a library call (cuBLAS, full fp32 like the reference), and bias add, ReLU and the
# division are fused into one Triton kernel instead of the reference's three passes.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def bias_relu_div_kernel(y_ptr, bias_ptr, out_ptr, n, cols, inv_divisor,
                         BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask)
    b = tl.load(bias_ptr + offs % cols, mask=mask)
    out = tl.maximum(y + b, 0.0) * inv_divisor
    tl.store(out_ptr + offs, out, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        y = torch.matmul(x, self.linear.weight.t())
        out = torch.empty_like(y)
        n = y.numel()
        bias_relu_div_kernel[(triton.cdiv(n, 1024),)](
            y, self.linear.bias, out, n, y.shape[-1], 1.0 / self.divisor, BLOCK=1024)
        return out
