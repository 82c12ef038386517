import torch
import torch.nn as nn


class Model(nn.Module):
    """An MLP whose forward branches on a Python flag (the native parser reads straight-line
    code only; torch.export takes the branch)."""

    def __init__(self, residual=True):
        super().__init__()
        self.residual = residual
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        if self.residual:
            y = y + x
        return y


def get_inputs():
    return [torch.randn(4, 16)]


def get_init_inputs():
    return []
