# Seed-format reference: relu(x + b) * 3 on a small, odd-sized tensor.
import torch


def get_inputs():
    x = torch.randn([5, 37], dtype=torch.float32)
    b = torch.randn([37], dtype=torch.float32)
    return [x, b]


def fused_operator(x, b):
    tensor_0 = torch.add(x, b)
    tensor_1 = torch.relu(tensor_0)
    tensor_2 = torch.mul(tensor_1, 3.0)
    return [tensor_2]
