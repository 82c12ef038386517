import torch
import torch.nn as nn


class Model(nn.Module):
    """A 1x1 grouped convolution whose groups have more output channels than one tile
    (2 groups of 3 input and 130 output channels, no bias), then ReLU."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 1, groups=groups, bias=False)

    def forward(self, x):
        return torch.relu(self.conv(x))


batch_size = 1
in_channels, out_channels, groups = 6, 260, 2
height, width = 3, 5


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, groups]
