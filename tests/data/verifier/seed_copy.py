# Seed-format reference whose answer equals its input: x * 1.
import torch


def get_inputs():
    return [torch.randn([4, 16], dtype=torch.float32)]


def fused_operator(x):
    tensor_0 = torch.mul(x, 1.0)
    return [tensor_0]
