# Correct values computed with PyTorch pointwise ops only: passes, but fails --strict.
import torch


def triton_fused_operator(x, b):
    return [torch.relu(x + b) * 3.0]
