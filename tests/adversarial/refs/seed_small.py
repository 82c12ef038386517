# Seed-format reference whose outputs are small in magnitude (|out| < 0.03): absolute
# tolerances dominate, so reduced-precision arithmetic fits inside allclose(1e-4).
import torch


def get_inputs():
    x = torch.randn(4, 37, dtype=torch.float32)
    y = torch.randn(4, 37, dtype=torch.float32)
    return [x, y]


def fused_operator(x, y):
    tensor_0 = torch.sigmoid(x) * 0.01
    tensor_1 = tensor_0 + y * 0.002
    return [tensor_1]
