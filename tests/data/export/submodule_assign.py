# A submodule assigns its own tensor attribute in forward: torch.export does not record
# assignments below the top-level module, so drtc must refuse the program (not drop it).
import torch
import torch.nn as nn


class Cell(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.state = torch.zeros(2, n)

    def forward(self, x):
        self.state = self.state + x
        return self.state * 2


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.cell = Cell(n)

    def forward(self, x):
        return self.cell(x) + 1


def get_inputs():
    return [torch.randn(2, 3)]


def get_init_inputs():
    return [3]
