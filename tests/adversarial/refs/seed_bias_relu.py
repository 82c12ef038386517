# Seed-format reference: relu(x + b) * 2 - 0.5 on a 4x37 tensor (explicit float32 inputs).
import torch


def get_inputs():
    x = torch.randn(4, 37, dtype=torch.float32)
    b = torch.randn(37, dtype=torch.float32)
    return [x, b]


def fused_operator(x, b):
    tensor_0 = torch.add(x, b)
    tensor_1 = torch.relu(tensor_0)
    tensor_2 = tensor_1 * 2.0 - 0.5
    return [tensor_2]
