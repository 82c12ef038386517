# forward assigns the tensor attribute a tensor of another shape: torch.export would copy
# (broadcast) it into the old tensor, silently keeping the old shape, so drtc refuses the
# program rather than change what it computes.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.total = torch.zeros(2, 3)

    def forward(self, x):
        self.total = self.total.sum(0, keepdim=True) + x[:1]
        return self.total.sum(0)


def get_inputs():
    return [torch.randn(2, 3)]


def get_init_inputs():
    return []
