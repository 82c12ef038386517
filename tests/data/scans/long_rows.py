import torch
import torch.nn as nn


class Model(nn.Module):
    """Running sums over rows short enough for one tile and rows scanned block by block."""

    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.cumsum(x, dim=1), torch.cumsum(y, dim=1)


def get_inputs():
    return [torch.randn(8, 2048), torch.randn(2, 40000)]


def get_init_inputs():
    return []
