# Off by a relative 3e-4: passes the relative-norm rule (1e-3), fails allclose(1e-4).
import torch


def triton_fused_operator(x, b):
    return [torch.relu(x + b) * 3.0 * (1.0 + 3e-4)]
